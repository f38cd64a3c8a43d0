/**
 * ledger: the double-entry gas ledger (DESIGN §3). Every movement is one transaction whose
 * postings sum to zero, keyed by a caller-supplied idempotency key that is unique in the database:
 * replaying a key returns the first result and moves nothing. Escrow holds are two-phase transfers
 * (pending → posted or voided, exactly once). Agent balances can never go negative (CHECK plus
 * conditional debits). Consumes escrow's durable events (settle, void, referral bonus).
 */
import type { Context, ServiceSchema } from 'moleculer';
import { dbMixin } from '../../packages/db/mixin';
import type { Db, Queryable } from '../../packages/db';
import { toolParams } from '../../packages/tool-catalogue';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import { InsufficientGasError, InvalidArgumentsError, InvalidStateError, NotFoundError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import { runtimeOf } from '../../packages/runtime';
import type { OutboxEvent } from '../../packages/outbox';
import {
  cashoutSplit,
  REFERRAL_BONUS_GAS,
  REFERRAL_WEEKLY_CAP,
  saleSplit,
  smallestPackCovering,
} from '../../packages/market-rules';
import { migrations } from './migrations';
import { ledgerMetricsMixin } from './metrics';

export type EntryType =
  | 'gas_purchase'
  | 'escrow_hold'
  | 'escrow_refund'
  | 'sale_earn'
  | 'platform_fee'
  | 'referral_bonus'
  | 'cashout'
  | 'cashout_paid'
  | 'cashout_returned'
  | 'escrow_release';

/** Platform accounts. card_issuance and referral_bonuses are sources: they go negative as gas is issued. */
export const PLATFORM = {
  cardIssuance: 'platform:card_issuance',
  platformFees: 'platform:platform_fees',
  escrowHolds: 'platform:escrow_holds',
  referralBonuses: 'platform:referral_bonuses',
  payoutsPending: 'platform:payouts_pending',
  payoutsPaid: 'platform:payouts_paid',
} as const;

export function agentAccount(agentId: string): string {
  return `agent:${agentId}`;
}

interface Leg {
  accountId: string;
  /** Set for agent accounts (created lazily). */
  agentId?: string;
  amount: number;
  entryType: EntryType;
}

interface Refs {
  purchaseId?: string | null;
  sessionId?: string | null;
  cashoutId?: string | null;
}

interface TransactionRow {
  id: string;
  key: string;
  type: string;
  fingerprint: string;
  purchase_id: string | null;
  session_id: string | null;
  cashout_id: string | null;
  created_at: Date;
}

interface HoldRow {
  purchase_id: string;
  buyer_id: string;
  seller_id: string;
  amount_gas: string;
  status: 'pending' | 'posted' | 'voided';
  hold_transaction_id: string;
  final_transaction_id: string | null;
}

interface CashoutRow {
  cashout_id: string;
  agent_id: string;
  amount_gas: string;
  status: 'pending' | 'paid' | 'returned';
  debit_transaction_id: string;
  final_transaction_id: string | null;
}

export interface WalletEntry {
  id: string;
  type: EntryType;
  amountGas: number;
  balanceAfterGas: number;
  purchaseId?: string;
  sessionId?: string;
  cashoutId?: string;
  createdAt: string;
}

export interface AuditCheck {
  name: string;
  ok: boolean;
  skipped?: boolean;
  message: string;
  details?: Record<string, unknown>;
}

export interface AuditReport {
  ok: boolean;
  checkedAt: string;
  checks: AuditCheck[];
}

const KEY = { type: 'string', min: 3, max: 200 } as const;
const ID = { type: 'string', min: 3, max: 100 } as const;
const GAS = { type: 'number', integer: true, positive: true, convert: false } as const;
const DEFAULT_PAGE = 20;

// ---------------------------------------------------------------------------------------------
// Posting primitives (run inside one database transaction)
// ---------------------------------------------------------------------------------------------

/**
 * Claims an idempotency key by inserting the transaction row. On PostgreSQL a concurrent claim of
 * the same key waits for the first to commit (then finds it) or roll back (then claims it).
 */
async function claimKey(
  tx: Queryable,
  spec: { key: string; type: string; fingerprint: string; at: Date } & Refs,
): Promise<{ id: string; replayed: false } | { replayed: true; row: TransactionRow }> {
  const id = newId('txn');
  const inserted = await tx.query<{ id: string }>(
    `INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, session_id, cashout_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key) DO NOTHING RETURNING id`,
    [id, spec.key, spec.type, spec.fingerprint, spec.purchaseId ?? null, spec.sessionId ?? null, spec.cashoutId ?? null, spec.at],
  );
  if (inserted.rows[0]) return { id, replayed: false };
  const existing = await tx.query<TransactionRow>('SELECT * FROM ledger.transactions WHERE key = $1', [spec.key]);
  const row = existing.rows[0];
  if (!row) throw new Error(`idempotency key ${spec.key} vanished`);
  if (row.type !== spec.type || row.fingerprint !== spec.fingerprint) {
    throw new InvalidArgumentsError(`Idempotency key "${spec.key}" was already used for a different ledger transaction.`, {
      hint: 'Derive the key from the business fact (purchase:<id>:hold, checkout:<sessionId>, …) and reuse it only to retry the same call.',
      details: { key: spec.key, existingType: row.type },
    });
  }
  return { replayed: true, row };
}

async function ensureAgentAccount(tx: Queryable, agentId: string): Promise<void> {
  // No conflict target: two first movements of one agent racing may trip the id or the agent_id
  // unique index first, and either means "the account exists".
  await tx.query(
    `INSERT INTO ledger.accounts (id, kind, agent_id) VALUES ($1, 'agent', $2) ON CONFLICT DO NOTHING`,
    [agentAccount(agentId), agentId],
  );
}

async function agentBalance(q: Queryable, agentId: string): Promise<number> {
  const r = await q.query<{ balance: string }>('SELECT balance FROM ledger.accounts WHERE id = $1', [agentAccount(agentId)]);
  return r.rows[0] ? Number(r.rows[0].balance) : 0;
}

/**
 * Applies the legs of one transaction. Accounts are touched in a fixed order (by id) so concurrent
 * transactions never deadlock; an agent debit is conditional (balance >= amount) on top of the CHECK.
 * Returns each agent's balance after the transaction.
 */
async function applyLegs(tx: Queryable, transactionId: string, legs: Leg[], refs: Refs, at: Date): Promise<Map<string, number>> {
  const nonZero = legs.filter((l) => l.amount !== 0);
  const sum = nonZero.reduce((s, l) => s + l.amount, 0);
  if (sum !== 0) throw new Error(`ledger transaction ${transactionId} does not balance (${sum})`);
  for (const l of nonZero) {
    if (!Number.isSafeInteger(l.amount)) throw new Error(`non-integer gas amount ${l.amount}`);
  }
  const ordered = [...nonZero].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
  for (const l of ordered) if (l.agentId) await ensureAgentAccount(tx, l.agentId);
  const balances = new Map<string, number>();
  for (const l of ordered) {
    let r;
    if (l.agentId && l.amount < 0) {
      r = await tx.query<{ balance: string }>(
        'UPDATE ledger.accounts SET balance = balance + $2 WHERE id = $1 AND balance >= $3 RETURNING balance',
        [l.accountId, l.amount, -l.amount],
      );
      if (!r.rows[0]) {
        const balanceGas = await agentBalance(tx, l.agentId);
        const requiredGas = -l.amount;
        const shortfallGas = requiredGas - balanceGas;
        const pack = smallestPackCovering(shortfallGas);
        throw new InsufficientGasError(`Not enough gas: this needs ${requiredGas} gas and the balance is ${balanceGas}.`, {
          hint: `Buy gas with buy_gas {"packId": "${pack.id}"} (${pack.gas} gas), have a human approve the checkoutUrl, poll wallet, then retry.`,
          details: { balanceGas, requiredGas, shortfallGas, suggestedPackId: pack.id },
        });
      }
    } else {
      r = await tx.query<{ balance: string }>('UPDATE ledger.accounts SET balance = balance + $2 WHERE id = $1 RETURNING balance', [
        l.accountId,
        l.amount,
      ]);
      if (!r.rows[0]) throw new Error(`ledger account ${l.accountId} does not exist`);
    }
    const after = Number(r.rows[0].balance);
    if (l.agentId) balances.set(l.agentId, after);
    await tx.query(
      `INSERT INTO ledger.postings (transaction_id, account_id, amount, entry_type, balance_after, purchase_id, session_id, cashout_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [transactionId, l.accountId, l.amount, l.entryType, after, refs.purchaseId ?? null, refs.sessionId ?? null, refs.cashoutId ?? null, at],
    );
  }
  return balances;
}

async function withdrawableIn(q: Queryable, agentId: string): Promise<{ withdrawableGas: number; lifetimeEarnedGas: number; cashedOutGas: number; gasBalance: number }> {
  const r = await q.query<{ earned: string; cashed: string; returned: string }>(
    `SELECT COALESCE(sum(amount) FILTER (WHERE entry_type = 'sale_earn'), 0) AS earned,
            COALESCE(-sum(amount) FILTER (WHERE entry_type = 'cashout'), 0) AS cashed,
            COALESCE(sum(amount) FILTER (WHERE entry_type = 'cashout_returned'), 0) AS returned
       FROM ledger.postings WHERE account_id = $1 AND entry_type IN ('sale_earn', 'cashout', 'cashout_returned')`,
    [agentAccount(agentId)],
  );
  const lifetimeEarnedGas = Number(r.rows[0]?.earned ?? 0);
  const cashedOutGas = Number(r.rows[0]?.cashed ?? 0) - Number(r.rows[0]?.returned ?? 0);
  const gasBalance = await agentBalance(q, agentId);
  const withdrawableGas = Math.max(0, Math.min(gasBalance, lifetimeEarnedGas - cashedOutGas));
  return { withdrawableGas, lifetimeEarnedGas, cashedOutGas, gasBalance };
}

function parseCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const m = /^pst_(\d{1,18})$/.exec(cursor);
  if (!m) {
    throw new InvalidArgumentsError('cursor is not one this ledger returned.', {
      hint: 'Pass nextCursor from the previous wallet page unchanged, or leave cursor out for the newest entries.',
      details: { field: 'cursor' },
    });
  }
  return Number(m[1]);
}

interface PostingRow {
  id: string;
  amount: string;
  entry_type: EntryType;
  balance_after: string;
  purchase_id: string | null;
  session_id: string | null;
  cashout_id: string | null;
  created_at: Date;
}

function toEntry(p: PostingRow): WalletEntry {
  const e: WalletEntry = {
    id: `pst_${p.id}`,
    type: p.entry_type,
    amountGas: Number(p.amount),
    balanceAfterGas: Number(p.balance_after),
    createdAt: new Date(p.created_at).toISOString(),
  };
  if (p.purchase_id) e.purchaseId = p.purchase_id;
  if (p.session_id) e.sessionId = p.session_id;
  if (p.cashout_id) e.cashoutId = p.cashout_id;
  return e;
}

/** An audit cross-check that ran into a stale event is re-checked after this pause. */
const AUDIT_RECHECK_MS = 1500;

function unavailableReason(err: unknown, action: string): string {
  const type = (err as { type?: string })?.type;
  if (type === 'SERVICE_NOT_FOUND' || type === 'SERVICE_NOT_AVAILABLE' || type === 'REQUEST_TIMEOUT' || type === 'REQUEST_REJECTED') {
    return 'the escrow service is not available';
  }
  return `${action} failed: ${(err as Error)?.message ?? err}`;
}

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

const LedgerService: ServiceSchema = {
  name: 'ledger',
  mixins: [dbMixin('ledger', migrations), ledgerMetricsMixin],

  actions: {
    balance: {
      params: { agentId: ID },
      async handler(this: LedgerThis, ctx: Context<{ agentId: string }>) {
        return { gasBalance: await agentBalance(this.db, ctx.params.agentId) };
      },
    },

    /** Paged ledger entries of an agent, newest first. */
    entries: {
      params: {
        agentId: ID,
        limit: { type: 'number', integer: true, min: 1, max: 100, optional: true },
        cursor: { type: 'string', optional: true, max: 200 },
      },
      async handler(this: LedgerThis, ctx: Context<{ agentId: string; limit?: number; cursor?: string }>) {
        return this.entriesPage(ctx.params.agentId, ctx.params.limit ?? DEFAULT_PAGE, ctx.params.cursor);
      },
    },

    /** The wallet tool (DESIGN §5). Open checkouts are reconciled first, so a lost webhook never loses gas. */
    wallet: {
      params: toolParams('wallet'),
      async handler(this: LedgerThis, ctx: Context<{ limit?: number; cursor?: string }, CallMeta>) {
        const { id: agentId } = requireAgent(ctx);
        const after = parseCursor(ctx.params.cursor);
        await ctx.call('payments.reconcileAgent', { agentId }).catch((err: Error) => this.logger.warn(`reconcile for wallet failed: ${err.message}`));
        const [page, w, held, pending] = await Promise.all([
          this.entriesPage(agentId, ctx.params.limit ?? DEFAULT_PAGE, after === null ? undefined : ctx.params.cursor),
          withdrawableIn(this.db, agentId),
          this.db.query<{ held: string }>(`SELECT COALESCE(sum(amount_gas), 0) AS held FROM ledger.holds WHERE buyer_id = $1 AND status = 'pending'`, [agentId]),
          this.db.query<{ amount_gas: string }>(`SELECT amount_gas FROM ledger.holds WHERE seller_id = $1 AND status = 'pending'`, [agentId]),
        ]);
        const cashouts = await ctx
          .call<unknown[], { agentId: string }>('payments.listCashouts', { agentId })
          .then((r) => (Array.isArray(r) ? r : (r as any)?.cashouts ?? []))
          .catch(() => []);
        return {
          gasBalance: w.gasBalance,
          heldGas: Number(held.rows[0]?.held ?? 0),
          pendingEarningsGas: pending.rows.reduce((s, r) => s + saleSplit(Number(r.amount_gas)).sellerNetGas, 0),
          withdrawableGas: w.withdrawableGas,
          lifetimeEarnedGas: w.lifetimeEarnedGas,
          entries: page.entries,
          nextCursor: page.nextCursor,
          cashouts,
        };
      },
    },

    creditGasPurchase: {
      params: { key: KEY, agentId: ID, gas: GAS, sessionId: ID, packId: { type: 'string', min: 1, max: 32 } },
      async handler(this: LedgerThis, ctx: Context<{ key: string; agentId: string; gas: number; sessionId: string; packId: string }>) {
        const { key, agentId, gas, sessionId, packId } = ctx.params;
        const at = this.now();
        return this.db.transaction(async (tx) => {
          const claim = await claimKey(tx, {
            key,
            type: 'gas_purchase',
            fingerprint: JSON.stringify({ agentId, gas, sessionId, packId }),
            sessionId,
            at,
          });
          if (claim.replayed) return { transactionId: claim.row.id, gasBalance: await agentBalance(tx, agentId), replayed: true };
          const balances = await applyLegs(
            tx,
            claim.id,
            [
              { accountId: PLATFORM.cardIssuance, amount: -gas, entryType: 'gas_purchase' },
              { accountId: agentAccount(agentId), agentId, amount: gas, entryType: 'gas_purchase' },
            ],
            { sessionId },
            at,
          );
          return { transactionId: claim.id, gasBalance: balances.get(agentId)!, replayed: false };
        });
      },
    },

    /** Pending transfer buyer → escrow_holds for a purchase. */
    hold: {
      params: { key: KEY, purchaseId: ID, buyerId: ID, sellerId: ID, amountGas: GAS },
      async handler(this: LedgerThis, ctx: Context<{ key: string; purchaseId: string; buyerId: string; sellerId: string; amountGas: number }>) {
        const { key, purchaseId, buyerId, sellerId, amountGas } = ctx.params;
        if (buyerId === sellerId) {
          throw new InvalidArgumentsError('A buyer cannot hold gas for a purchase from itself.', { hint: 'Buy listings of other agents.' });
        }
        const at = this.now();
        return this.db.transaction(async (tx) => {
          const claim = await claimKey(tx, {
            key,
            type: 'escrow_hold',
            fingerprint: JSON.stringify({ purchaseId, buyerId, sellerId, amountGas }),
            purchaseId,
            at,
          });
          if (claim.replayed) {
            const hold = await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1', [purchaseId]);
            return { holdId: claim.row.id, purchaseId, status: hold.rows[0]?.status ?? 'pending', amountGas, replayed: true };
          }
          const existing = await tx.query('SELECT 1 FROM ledger.holds WHERE purchase_id = $1', [purchaseId]);
          if (existing.rowCount) {
            throw new InvalidStateError(`Purchase ${purchaseId} already has a hold.`, {
              hint: `Retry with the key of the first hold (purchase:${purchaseId}:hold) to read it.`,
            });
          }
          await applyLegs(
            tx,
            claim.id,
            [
              { accountId: agentAccount(buyerId), agentId: buyerId, amount: -amountGas, entryType: 'escrow_hold' },
              { accountId: PLATFORM.escrowHolds, amount: amountGas, entryType: 'escrow_hold' },
            ],
            { purchaseId },
            at,
          );
          await tx
            .query(
              `INSERT INTO ledger.holds (purchase_id, buyer_id, seller_id, amount_gas, status, hold_transaction_id, created_at)
               VALUES ($1, $2, $3, $4, 'pending', $5, $6)`,
              [purchaseId, buyerId, sellerId, amountGas, claim.id, at],
            )
            .catch((err: { code?: string }) => {
              // Two holds for one purchase under different keys raced: the loser rolls back, nothing moved.
              if (err?.code === '23505') throw new InvalidStateError(`Purchase ${purchaseId} already has a hold.`, { hint: `Use the key purchase:${purchaseId}:hold.` });
              throw err;
            });
          return { holdId: claim.id, purchaseId, status: 'pending', amountGas, replayed: false };
        });
      },
    },

    /** Posts a hold: the seller gets the price minus the fee (sale_earn), the platform the fee. */
    settle: {
      params: { key: KEY, purchaseId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; purchaseId: string }>) {
        return this.settlePurchase(ctx.params.key, ctx.params.purchaseId);
      },
    },

    /** Voids a hold: the buyer gets the held gas back (escrow_refund). */
    void: {
      params: { key: KEY, purchaseId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; purchaseId: string }>) {
        return this.voidPurchase(ctx.params.key, ctx.params.purchaseId);
      },
    },

    referralBonus: {
      params: { key: KEY, referrerId: ID, referredId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; referrerId: string; referredId: string }>) {
        return this.creditReferral(ctx.params.key, ctx.params.referrerId, ctx.params.referredId);
      },
    },

    /** Cash-out: agent → payouts_pending, at most the withdrawable amount (DESIGN §3). */
    cashoutDebit: {
      params: { key: KEY, cashoutId: ID, agentId: ID, amountGas: GAS },
      async handler(this: LedgerThis, ctx: Context<{ key: string; cashoutId: string; agentId: string; amountGas: number }>) {
        const { key, cashoutId, agentId, amountGas } = ctx.params;
        const at = this.now();
        return this.db.transaction(async (tx) => {
          const claim = await claimKey(tx, { key, type: 'cashout', fingerprint: JSON.stringify({ cashoutId, agentId, amountGas }), cashoutId, at });
          if (claim.replayed) {
            const w = await withdrawableIn(tx, agentId);
            return { transactionId: claim.row.id, cashoutId, amountGas, gasBalance: w.gasBalance, withdrawableGas: w.withdrawableGas, replayed: true };
          }
          await ensureAgentAccount(tx, agentId);
          // Serialises cash-outs of one agent, so two concurrent requests cannot both pass the check.
          await tx.query('SELECT balance FROM ledger.accounts WHERE id = $1 FOR UPDATE', [agentAccount(agentId)]);
          const exists = await tx.query('SELECT 1 FROM ledger.cashouts WHERE cashout_id = $1', [cashoutId]);
          if (exists.rowCount) throw new InvalidStateError(`Cash-out ${cashoutId} was already debited under another key.`);
          const w = await withdrawableIn(tx, agentId);
          if (amountGas > w.withdrawableGas) {
            throw new InvalidStateError(`Only ${w.withdrawableGas} gas is withdrawable; ${amountGas} was requested.`, {
              hint: 'Withdrawable gas is min(gasBalance, lifetime sale_earn − cashed out). Request at most withdrawableGas (see wallet).',
              details: { withdrawableGas: w.withdrawableGas, requestedGas: amountGas, lifetimeEarnedGas: w.lifetimeEarnedGas, cashedOutGas: w.cashedOutGas },
            });
          }
          const balances = await applyLegs(
            tx,
            claim.id,
            [
              { accountId: agentAccount(agentId), agentId, amount: -amountGas, entryType: 'cashout' },
              { accountId: PLATFORM.payoutsPending, amount: amountGas, entryType: 'cashout' },
            ],
            { cashoutId },
            at,
          );
          await tx.query(
            `INSERT INTO ledger.cashouts (cashout_id, agent_id, amount_gas, status, debit_transaction_id, created_at) VALUES ($1, $2, $3, 'pending', $4, $5)`,
            [cashoutId, agentId, amountGas, claim.id, at],
          );
          const gasBalance = balances.get(agentId)!;
          return { transactionId: claim.id, cashoutId, amountGas, gasBalance, withdrawableGas: w.withdrawableGas - amountGas, replayed: false };
        });
      },
    },

    /** The payout was sent: payouts_pending → payouts_paid (net) + platform_fees (2% cash-out fee). */
    cashoutPaid: {
      params: { key: KEY, cashoutId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; cashoutId: string }>) {
        return this.finishCashout(ctx.params.key, ctx.params.cashoutId, 'paid');
      },
    },

    /** The payout was rejected: payouts_pending → the agent, in full. */
    cashoutReturn: {
      params: { key: KEY, cashoutId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; cashoutId: string }>) {
        return this.finishCashout(ctx.params.key, ctx.params.cashoutId, 'returned');
      },
    },

    withdrawable: {
      params: { agentId: ID },
      async handler(this: LedgerThis, ctx: Context<{ agentId: string }>) {
        const { withdrawableGas, lifetimeEarnedGas, cashedOutGas, gasBalance } = await withdrawableIn(this.db, ctx.params.agentId);
        return { withdrawableGas, lifetimeEarnedGas, cashedOutGas, gasBalance };
      },
    },

    openHolds: {
      async handler(this: LedgerThis) {
        const r = await this.db.query<HoldRow>(`SELECT * FROM ledger.holds WHERE status = 'pending' ORDER BY created_at`);
        return r.rows.map((h) => ({ purchaseId: h.purchase_id, buyerId: h.buyer_id, sellerId: h.seller_id, amountGas: Number(h.amount_gas) }));
      },
    },

    /** Internal: one hold (escrow and tests). */
    getHold: {
      params: { purchaseId: ID },
      async handler(this: LedgerThis, ctx: Context<{ purchaseId: string }>) {
        const r = await this.db.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1', [ctx.params.purchaseId]);
        const h = r.rows[0];
        if (!h) return null;
        return { purchaseId: h.purchase_id, buyerId: h.buyer_id, sellerId: h.seller_id, amountGas: Number(h.amount_gas), status: h.status };
      },
    },

    audit: {
      async handler(this: LedgerThis, ctx: Context) {
        return this.runAudit(ctx);
      },
    },
  },

  channels: {
    'escrow.purchase.completed': {
      group: 'ledger',
      async handler(this: LedgerThis, event: OutboxEvent<{ purchaseId: string }>) {
        await this.consume(event, () => this.settlePurchase(`purchase:${event.data.purchaseId}:settle`, event.data.purchaseId));
      },
    },
    'escrow.purchase.refunded': {
      group: 'ledger',
      async handler(this: LedgerThis, event: OutboxEvent<{ purchaseId: string }>) {
        await this.consume(event, () => this.voidPurchase(`purchase:${event.data.purchaseId}:void`, event.data.purchaseId));
      },
    },
    'escrow.referral.qualified': {
      group: 'ledger',
      async handler(this: LedgerThis, event: OutboxEvent<{ referrerId: string; referredId: string }>) {
        await this.consume(event, () =>
          this.creditReferral(`referral:${event.data.referredId}`, event.data.referrerId, event.data.referredId),
        );
      },
    },
  },

  methods: {
    now(this: LedgerThis): Date {
      return runtimeOf(this.broker).clock.now();
    },

    /**
     * Runs a consumer; the transaction key makes redelivery a no-op. A hold already resolved the
     * other way is a business conflict that redelivery cannot fix: logged loudly and acknowledged.
     */
    async consume(this: LedgerThis, event: OutboxEvent, run: () => Promise<unknown>): Promise<void> {
      try {
        await run();
      } catch (err) {
        if ((err as { type?: string })?.type === 'invalid_state') {
          this.logger.error(`ledger: ${event.topic} ${event.eventId} conflicts with the ledger state: ${(err as Error).message}`);
          return;
        }
        throw err;
      }
    },

    async entriesPage(this: LedgerThis, agentId: string, limit: number, cursor?: string) {
      const after = parseCursor(cursor);
      const r = await this.db.query<PostingRow>(
        `SELECT id, amount, entry_type, balance_after, purchase_id, session_id, cashout_id, created_at
           FROM ledger.postings WHERE account_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
          ORDER BY id DESC LIMIT $3`,
        [agentAccount(agentId), after, limit + 1],
      );
      const rows = r.rows.slice(0, limit);
      return { entries: rows.map(toEntry), nextCursor: r.rows.length > limit ? `pst_${rows[rows.length - 1].id}` : null };
    },

    async settlePurchase(this: LedgerThis, key: string, purchaseId: string) {
      const at = this.now();
      return this.db.transaction(async (tx) => {
        const claim = await claimKey(tx, { key, type: 'escrow_settle', fingerprint: JSON.stringify({ purchaseId }), purchaseId, at });
        const hold = (await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1 FOR UPDATE', [purchaseId])).rows[0];
        if (!hold) {
          throw new NotFoundError(`No escrow hold for purchase ${purchaseId}.`, { hint: 'Hold the gas (ledger.hold) before settling.' });
        }
        const split = saleSplit(Number(hold.amount_gas));
        const result = {
          transactionId: claim.replayed ? claim.row.id : claim.id,
          purchaseId,
          status: 'posted' as const,
          sellerId: hold.seller_id,
          priceGas: split.priceGas,
          sellerNetGas: split.sellerNetGas,
          platformFeeGas: split.platformFeeGas,
        };
        if (claim.replayed) return { ...result, replayed: true };
        if (hold.status !== 'pending') {
          throw new InvalidStateError(`The hold of purchase ${purchaseId} is already ${hold.status}.`, {
            hint: 'A hold is posted or voided exactly once.',
            details: { holdStatus: hold.status },
          });
        }
        await applyLegs(
          tx,
          claim.id,
          [
            { accountId: PLATFORM.escrowHolds, amount: -split.priceGas, entryType: 'escrow_release' },
            { accountId: agentAccount(hold.seller_id), agentId: hold.seller_id, amount: split.sellerNetGas, entryType: 'sale_earn' },
            { accountId: PLATFORM.platformFees, amount: split.platformFeeGas, entryType: 'platform_fee' },
          ],
          { purchaseId },
          at,
        );
        await tx.query(
          `UPDATE ledger.holds SET status = 'posted', final_transaction_id = $2, resolved_at = $3 WHERE purchase_id = $1 AND status = 'pending'`,
          [purchaseId, claim.id, at],
        );
        return { ...result, replayed: false };
      });
    },

    async voidPurchase(this: LedgerThis, key: string, purchaseId: string) {
      const at = this.now();
      return this.db.transaction(async (tx) => {
        const claim = await claimKey(tx, { key, type: 'escrow_void', fingerprint: JSON.stringify({ purchaseId }), purchaseId, at });
        const hold = (await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1 FOR UPDATE', [purchaseId])).rows[0];
        if (!hold) {
          throw new NotFoundError(`No escrow hold for purchase ${purchaseId}.`, { hint: 'Only a held purchase can be refunded.' });
        }
        const amountGas = Number(hold.amount_gas);
        const result = { transactionId: claim.replayed ? claim.row.id : claim.id, purchaseId, status: 'voided' as const, buyerId: hold.buyer_id, amountGas };
        if (claim.replayed) return { ...result, gasBalance: await agentBalance(tx, hold.buyer_id), replayed: true };
        if (hold.status !== 'pending') {
          throw new InvalidStateError(`The hold of purchase ${purchaseId} is already ${hold.status}.`, {
            hint: 'A hold is posted or voided exactly once.',
            details: { holdStatus: hold.status },
          });
        }
        const balances = await applyLegs(
          tx,
          claim.id,
          [
            { accountId: PLATFORM.escrowHolds, amount: -amountGas, entryType: 'escrow_refund' },
            { accountId: agentAccount(hold.buyer_id), agentId: hold.buyer_id, amount: amountGas, entryType: 'escrow_refund' },
          ],
          { purchaseId },
          at,
        );
        await tx.query(
          `UPDATE ledger.holds SET status = 'voided', final_transaction_id = $2, resolved_at = $3 WHERE purchase_id = $1 AND status = 'pending'`,
          [purchaseId, claim.id, at],
        );
        return { ...result, gasBalance: balances.get(hold.buyer_id)!, replayed: false };
      });
    },

    async creditReferral(this: LedgerThis, key: string, referrerId: string, referredId: string) {
      const at = this.now();
      return this.db.transaction(async (tx) => {
        const outcome = async () =>
          (await tx.query<{ credited: boolean; reason: string | null; referrer_id: string }>(
            'SELECT credited, reason, referrer_id FROM ledger.referral_outcomes WHERE referred_id = $1',
            [referredId],
          )).rows[0];
        const before = await outcome();
        if (before) return { credited: before.credited, ...(before.reason ? { reason: before.reason } : {}), replayed: true };
        if (referrerId === referredId) {
          await tx.query(
            `INSERT INTO ledger.referral_outcomes (referred_id, referrer_id, credited, reason, created_at) VALUES ($1, $2, false, 'self_referral', $3)`,
            [referredId, referrerId, at],
          );
          return { credited: false, reason: 'self_referral', replayed: false };
        }
        await ensureAgentAccount(tx, referrerId);
        // Serialises the referrer's bonuses so the weekly cap holds under concurrency.
        await tx.query('SELECT balance FROM ledger.accounts WHERE id = $1 FOR UPDATE', [agentAccount(referrerId)]);
        const after = await outcome();
        if (after) return { credited: after.credited, ...(after.reason ? { reason: after.reason } : {}), replayed: true };
        const weekAgo = new Date(at.getTime() - 7 * 86_400_000);
        const count = await tx.query<{ n: string }>(
          'SELECT count(*) AS n FROM ledger.referral_outcomes WHERE referrer_id = $1 AND credited AND created_at > $2',
          [referrerId, weekAgo],
        );
        if (Number(count.rows[0].n) >= REFERRAL_WEEKLY_CAP) {
          await tx.query(
            `INSERT INTO ledger.referral_outcomes (referred_id, referrer_id, credited, reason, created_at) VALUES ($1, $2, false, 'weekly_cap', $3)`,
            [referredId, referrerId, at],
          );
          return { credited: false, reason: 'weekly_cap', replayed: false };
        }
        const claim = await claimKey(tx, { key, type: 'referral_bonus', fingerprint: JSON.stringify({ referrerId, referredId }), at });
        if (claim.replayed) return { credited: true, replayed: true };
        await applyLegs(
          tx,
          claim.id,
          [
            { accountId: PLATFORM.referralBonuses, amount: -REFERRAL_BONUS_GAS, entryType: 'referral_bonus' },
            { accountId: agentAccount(referrerId), agentId: referrerId, amount: REFERRAL_BONUS_GAS, entryType: 'referral_bonus' },
          ],
          {},
          at,
        );
        await tx.query(
          `INSERT INTO ledger.referral_outcomes (referred_id, referrer_id, credited, transaction_id, created_at) VALUES ($1, $2, true, $3, $4)`,
          [referredId, referrerId, claim.id, at],
        );
        return { credited: true, amountGas: REFERRAL_BONUS_GAS, transactionId: claim.id, replayed: false };
      });
    },

    async finishCashout(this: LedgerThis, key: string, cashoutId: string, outcome: 'paid' | 'returned') {
      const at = this.now();
      return this.db.transaction(async (tx) => {
        const claim = await claimKey(tx, {
          key,
          type: outcome === 'paid' ? 'cashout_paid' : 'cashout_returned',
          fingerprint: JSON.stringify({ cashoutId }),
          cashoutId,
          at,
        });
        const c = (await tx.query<CashoutRow>('SELECT * FROM ledger.cashouts WHERE cashout_id = $1 FOR UPDATE', [cashoutId])).rows[0];
        if (!c) throw new NotFoundError(`No ledger debit for cash-out ${cashoutId}.`, { hint: 'Debit it first with ledger.cashoutDebit.' });
        const split = cashoutSplit(Number(c.amount_gas));
        const base = {
          transactionId: claim.replayed ? claim.row.id : claim.id,
          cashoutId,
          agentId: c.agent_id,
          amountGas: split.amountGas,
          feeGas: outcome === 'paid' ? split.feeGas : 0,
          netGas: outcome === 'paid' ? split.netGas : 0,
          status: outcome,
        };
        if (claim.replayed) return { ...base, gasBalance: await agentBalance(tx, c.agent_id), replayed: true };
        if (c.status !== 'pending') {
          throw new InvalidStateError(`Cash-out ${cashoutId} is already ${c.status}.`, { hint: 'A cash-out is paid or returned exactly once.' });
        }
        const legs: Leg[] =
          outcome === 'paid'
            ? [
                { accountId: PLATFORM.payoutsPending, amount: -split.amountGas, entryType: 'cashout_paid' },
                { accountId: PLATFORM.payoutsPaid, amount: split.netGas, entryType: 'cashout_paid' },
                { accountId: PLATFORM.platformFees, amount: split.feeGas, entryType: 'platform_fee' },
              ]
            : [
                { accountId: PLATFORM.payoutsPending, amount: -split.amountGas, entryType: 'cashout_returned' },
                { accountId: agentAccount(c.agent_id), agentId: c.agent_id, amount: split.amountGas, entryType: 'cashout_returned' },
              ];
        const balances = await applyLegs(tx, claim.id, legs, { cashoutId }, at);
        await tx.query(`UPDATE ledger.cashouts SET status = $2, final_transaction_id = $3, resolved_at = $4 WHERE cashout_id = $1`, [
          cashoutId,
          outcome,
          claim.id,
          at,
        ]);
        return { ...base, gasBalance: balances.get(c.agent_id) ?? (await agentBalance(tx, c.agent_id)), replayed: false };
      });
    },

    /**
     * Every pending hold belongs to an open purchase. A purchase just completed or refunded may have
     * its event still in flight, so an apparent orphan is re-checked once after a short pause.
     */
    async auditHoldsAgainstEscrow(this: LedgerThis, ctx: Context): Promise<AuditCheck> {
      const name = 'pending_holds_belong_to_open_purchases';
      const pendingIds = async () =>
        (await this.db.query<{ purchase_id: string }>(`SELECT purchase_id FROM ledger.holds WHERE status = 'pending'`)).rows.map((r) => r.purchase_id);
      const orphansOf = async (ids: string[]) => {
        const open = new Set<string>();
        for (let i = 0; i < ids.length; i += 500) {
          const r = await ctx.call<unknown, { purchaseIds: string[] }>('escrow.openPurchaseIds', { purchaseIds: ids.slice(i, i + 500) });
          for (const id of (Array.isArray(r) ? r : ((r as any)?.purchaseIds ?? [])) as string[]) open.add(id);
        }
        return ids.filter((id) => !open.has(id));
      };
      const ids = await pendingIds();
      if (ids.length === 0) return { name, ok: true, message: 'no pending holds' };
      try {
        let orphans = await orphansOf(ids);
        if (orphans.length) {
          await new Promise((r) => setTimeout(r, AUDIT_RECHECK_MS));
          const still = new Set(await pendingIds());
          orphans = await orphansOf(orphans.filter((id) => still.has(id)));
        }
        return orphans.length === 0
          ? { name, ok: true, message: `all ${ids.length} pending holds belong to open purchases` }
          : { name, ok: false, message: `${orphans.length} pending holds belong to no open purchase`, details: { purchaseIds: orphans.slice(0, 20) } };
      } catch (err) {
        return { name, ok: true, skipped: true, message: `skipped: ${unavailableReason(err, 'escrow.openPurchaseIds')} (${ids.length} pending holds not cross-checked)` };
      }
    },

    /** Every funded open purchase in escrow has a pending hold of its price (escrow funds only after the hold). */
    async auditEscrowAgainstHolds(this: LedgerThis, ctx: Context): Promise<AuditCheck> {
      const name = 'open_purchases_have_pending_holds';
      let purchases: Array<{ purchaseId: string; amountGas: number }>;
      try {
        purchases = await ctx.call('escrow.openPurchases');
        if (!Array.isArray(purchases)) throw new Error('escrow.openPurchases returned no list');
      } catch (err) {
        return { name, ok: true, skipped: true, message: `skipped: ${unavailableReason(err, 'escrow.openPurchases')}` };
      }
      if (purchases.length === 0) return { name, ok: true, message: 'no funded open purchases' };
      const holds = new Map<string, HoldRow>();
      for (let i = 0; i < purchases.length; i += 500) {
        const chunk = purchases.slice(i, i + 500).map((p) => p.purchaseId);
        const r = await this.db.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = ANY($1::text[])', [chunk]);
        for (const h of r.rows) holds.set(h.purchase_id, h);
      }
      const problems = purchases
        .map((p) => {
          const h = holds.get(p.purchaseId);
          if (!h) return { purchaseId: p.purchaseId, problem: 'no hold' };
          if (h.status !== 'pending') return { purchaseId: p.purchaseId, problem: `hold is ${h.status}` };
          if (Number(h.amount_gas) !== Number(p.amountGas)) return { purchaseId: p.purchaseId, problem: `hold ${h.amount_gas} ≠ price ${p.amountGas}` };
          return null;
        })
        .filter((x): x is { purchaseId: string; problem: string } => x !== null);
      return problems.length === 0
        ? { name, ok: true, message: `all ${purchases.length} funded open purchases have a pending hold of their price` }
        : { name, ok: false, message: `${problems.length} funded open purchases lack a matching pending hold`, details: { purchases: problems.slice(0, 20) } };
    },

    async runAudit(this: LedgerThis, ctx: Context): Promise<AuditReport> {
      const checks: AuditCheck[] = [];
      const db = this.db;
      const sample = <T>(rows: T[]) => rows.slice(0, 20);

      const unbalanced = await db.query<{ transaction_id: string; total: string }>(
        `SELECT transaction_id, sum(amount) AS total FROM ledger.postings GROUP BY transaction_id HAVING sum(amount) <> 0`,
      );
      const txCount = await db.query<{ n: string }>('SELECT count(*) AS n FROM ledger.transactions');
      checks.push({
        name: 'transactions_sum_to_zero',
        ok: unbalanced.rowCount === 0,
        message: unbalanced.rowCount === 0
          ? `all ${txCount.rows[0].n} transactions sum to zero`
          : `${unbalanced.rowCount} transactions do not sum to zero`,
        ...(unbalanced.rowCount ? { details: { transactions: sample(unbalanced.rows) } } : {}),
      });

      const negative = await db.query<{ id: string; balance: string }>(`SELECT id, balance FROM ledger.accounts WHERE kind = 'agent' AND balance < 0`);
      checks.push({
        name: 'no_negative_agent_balance',
        ok: negative.rowCount === 0,
        message: negative.rowCount === 0 ? 'no agent account is negative' : `${negative.rowCount} agent accounts are negative`,
        ...(negative.rowCount ? { details: { accounts: sample(negative.rows) } } : {}),
      });

      const mismatched = await db.query<{ id: string; balance: string; postings: string; last_after: string | null }>(
        `SELECT a.id, a.balance, COALESCE(p.total, 0) AS postings, l.balance_after AS last_after
           FROM ledger.accounts a
           LEFT JOIN (SELECT account_id, sum(amount) AS total, max(id) AS last_id FROM ledger.postings GROUP BY account_id) p ON p.account_id = a.id
           LEFT JOIN ledger.postings l ON l.id = p.last_id
          WHERE a.balance <> COALESCE(p.total, 0) OR (l.id IS NOT NULL AND l.balance_after <> a.balance)`,
      );
      const accounts = await db.query<{ n: string }>('SELECT count(*) AS n FROM ledger.accounts');
      checks.push({
        name: 'balances_equal_postings',
        ok: mismatched.rowCount === 0,
        message: mismatched.rowCount === 0
          ? `all ${accounts.rows[0].n} account balances equal the sum of their postings`
          : `${mismatched.rowCount} account balances differ from their postings`,
        ...(mismatched.rowCount ? { details: { accounts: sample(mismatched.rows) } } : {}),
      });

      const escrow = await db.query<{ balance: string; pending: string }>(
        `SELECT (SELECT balance FROM ledger.accounts WHERE id = $1) AS balance,
                (SELECT COALESCE(sum(amount_gas), 0) FROM ledger.holds WHERE status = 'pending') AS pending`,
        [PLATFORM.escrowHolds],
      );
      const payouts = await db.query<{ balance: string; pending: string }>(
        `SELECT (SELECT balance FROM ledger.accounts WHERE id = $1) AS balance,
                (SELECT COALESCE(sum(amount_gas), 0) FROM ledger.cashouts WHERE status = 'pending') AS pending`,
        [PLATFORM.payoutsPending],
      );
      const escrowOk = Number(escrow.rows[0].balance) === Number(escrow.rows[0].pending);
      const payoutsOk = Number(payouts.rows[0].balance) === Number(payouts.rows[0].pending);
      checks.push({
        name: 'holding_accounts_match_open_items',
        ok: escrowOk && payoutsOk,
        message:
          escrowOk && payoutsOk
            ? `escrow_holds (${escrow.rows[0].balance}) equals pending holds; payouts_pending (${payouts.rows[0].balance}) equals pending cash-outs`
            : 'a holding account differs from its open items',
        ...(escrowOk && payoutsOk ? {} : { details: { escrow: escrow.rows[0], payouts: payouts.rows[0] } }),
      });

      checks.push(await this.auditHoldsAgainstEscrow(ctx));
      checks.push(await this.auditEscrowAgainstHolds(ctx));

      return { ok: checks.every((c) => c.ok), checkedAt: new Date().toISOString(), checks };
    },
  },
};

type LedgerThis = ThisType<any> & {
  db: Db;
  broker: any;
  logger: any;
  now(): Date;
  consume(event: OutboxEvent, run: () => Promise<unknown>): Promise<void>;
  entriesPage(agentId: string, limit: number, cursor?: string): Promise<{ entries: WalletEntry[]; nextCursor: string | null }>;
  settlePurchase(key: string, purchaseId: string): Promise<any>;
  voidPurchase(key: string, purchaseId: string): Promise<any>;
  creditReferral(key: string, referrerId: string, referredId: string): Promise<any>;
  finishCashout(key: string, cashoutId: string, outcome: 'paid' | 'returned'): Promise<any>;
  runAudit(ctx: Context): Promise<AuditReport>;
  auditHoldsAgainstEscrow(ctx: Context): Promise<AuditCheck>;
  auditEscrowAgainstHolds(ctx: Context): Promise<AuditCheck>;
};

export default LedgerService;
