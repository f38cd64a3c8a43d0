/**
 * The ledger's accounts, idempotency keys and balances (run inside one database transaction). Every money
 * step (holds.ts, money-steps.ts) is built from these and posts its legs through legs.ts.
 */
import type { Queryable } from '../../packages/db';
import { InsufficientGasError, InvalidArgumentsError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import { smallestPackCovering } from '../../packages/market-rules';
import type { EntryType, HoldView } from '../../packages/contracts/ledger';
export type { EntryType };

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

export interface Refs {
  purchaseId?: string | null;
  sessionId?: string | null;
  cashoutId?: string | null;
}

export interface TransactionRow {
  id: string;
  key: string;
  type: string;
  fingerprint: string;
  purchase_id: string | null;
  session_id: string | null;
  cashout_id: string | null;
  created_at: Date;
}

export interface HoldRow {
  purchase_id: string;
  buyer_id: string;
  seller_id: string;
  amount_gas: string;
  /** The split quoted at purchase: settle posts exactly these (never recomputed). */
  platform_fee_gas: string;
  seller_net_gas: string;
  /** The evaluator named at purchase and its fee, part of amount_gas (issue #35); null / 0 without one. */
  evaluator_id: string | null;
  evaluator_fee_gas: string;
  status: 'pending' | 'posted' | 'voided';
  hold_transaction_id: string;
  final_transaction_id: string | null;
}

/** A hold as other services see it (ledger.holdsOf, getHold, openHolds; the reconciling audit adds its times). */
export function holdView(h: HoldRow): HoldView {
  return {
    purchaseId: h.purchase_id,
    buyerId: h.buyer_id,
    sellerId: h.seller_id,
    amountGas: Number(h.amount_gas),
    platformFeeGas: Number(h.platform_fee_gas),
    sellerNetGas: Number(h.seller_net_gas),
    status: h.status,
    ...(h.evaluator_id ? { evaluatorId: h.evaluator_id, evaluatorFeeGas: Number(h.evaluator_fee_gas) } : {}),
  };
}

export interface CashoutRow {
  cashout_id: string;
  agent_id: string;
  amount_gas: string;
  /** The cash-out fee quoted when it was requested: paid posts exactly this. */
  fee_gas: string;
  status: 'pending' | 'paid' | 'returned';
  debit_transaction_id: string;
  final_transaction_id: string | null;
}

// ---------------------------------------------------------------------------------------------
// Posting primitives (run inside one database transaction)
// ---------------------------------------------------------------------------------------------

/**
 * Claims an idempotency key by inserting the transaction row. On PostgreSQL a concurrent claim of
 * the same key waits for the first to commit (then finds it) or roll back (then claims it).
 */
export async function claimKey(
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

export async function ensureAgentAccount(tx: Queryable, agentId: string): Promise<void> {
  // No conflict target: two first movements of one agent racing may trip the id or the agent_id
  // unique index first, and either means "the account exists".
  await tx.query(
    `INSERT INTO ledger.accounts (id, kind, agent_id) VALUES ($1, 'agent', $2) ON CONFLICT DO NOTHING`,
    [agentAccount(agentId), agentId],
  );
}

export async function agentBalance(q: Queryable, agentId: string): Promise<number> {
  const r = await q.query<{ balance: string }>('SELECT balance FROM ledger.accounts WHERE id = $1', [agentAccount(agentId)]);
  return r.rows[0] ? Number(r.rows[0].balance) : 0;
}

/** The error of a refused debit, with the balance seen now and the smallest pack that covers the shortfall. */
export async function insufficientGas(q: Queryable, agentId: string, requiredGas: number): Promise<InsufficientGasError> {
  const balanceGas = await agentBalance(q, agentId);
  const shortfallGas = requiredGas - balanceGas;
  const pack = smallestPackCovering(shortfallGas);
  return new InsufficientGasError(`Not enough gas: this needs ${requiredGas} gas and the balance is ${balanceGas}.`, {
    hint: `Buy gas with buy_gas {"packId": "${pack.id}"} (${pack.gas} gas), have a human approve the checkoutUrl, poll wallet, then retry.`,
    details: { balanceGas, requiredGas, shortfallGas, suggestedPackId: pack.id },
  });
}

export async function withdrawableIn(q: Queryable, agentId: string): Promise<{ withdrawableGas: number; lifetimeEarnedGas: number; cashedOutGas: number; gasBalance: number }> {
  const r = await q.query<{ earned: string; cashed: string; returned: string }>(
    // Earned gas (withdrawable): sale earnings and evaluator fees, both paid for work done on the marketplace.
    `SELECT COALESCE(sum(amount) FILTER (WHERE entry_type IN ('sale_earn', 'evaluator_fee')), 0) AS earned,
            COALESCE(-sum(amount) FILTER (WHERE entry_type = 'cashout'), 0) AS cashed,
            COALESCE(sum(amount) FILTER (WHERE entry_type = 'cashout_returned'), 0) AS returned
       FROM ledger.postings WHERE account_id = $1 AND entry_type IN ('sale_earn', 'evaluator_fee', 'cashout', 'cashout_returned')`,
    [agentAccount(agentId)],
  );
  const lifetimeEarnedGas = Number(r.rows[0]?.earned ?? 0);
  const cashedOutGas = Number(r.rows[0]?.cashed ?? 0) - Number(r.rows[0]?.returned ?? 0);
  const gasBalance = await agentBalance(q, agentId);
  const withdrawableGas = Math.max(0, Math.min(gasBalance, lifetimeEarnedGas - cashedOutGas));
  return { withdrawableGas, lifetimeEarnedGas, cashedOutGas, gasBalance };
}

/**
 * A one-statement fast path that failed whole on a unique key (a key claimed before, a racing first
 * account) or a missing row it references moved nothing: null, and the stepwise path answers.
 */
export function stepwiseOnConflict(err: { code?: string }): null {
  if (err?.code === '23505' || err?.code === '23503') return null;
  throw err;
}
