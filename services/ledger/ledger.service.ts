/**
 * ledger: the double-entry gas ledger (DESIGN §3), the bottom layer — it calls no other service.
 * Every movement is one transaction whose postings sum to zero, keyed by a caller-supplied
 * idempotency key (holds.ts, money-steps.ts); escrow holds are two-phase transfers that carry the split
 * quoted at purchase and are posted or voided exactly once. Consumes escrow's durable events.
 *
 *   legs.ts         every money step's legs (MONEY_LEGS) and the one primitive that posts them (postingsSql)
 *   postings.ts     accounts, keys, balances
 *   holds.ts        a purchase's hold: hold, settle, void
 *   money-steps.ts  gas credits, referral bonuses, cash-outs
 *   wallet.ts       entries and wallet figures (reads)
 *   audit.ts        the ledger's own invariants
 *   audit-records.ts  its side of the reconciling audit (read-only pages)
 *   contracts.ts    action names and parameter/result types for callers
 */
import type { Context, Service } from 'moleculer';
import { dbMixin } from '../../packages/db/mixin';
import type { SingleWriterCache } from '../../packages/db/single-writer-cache';
import type { Db } from '../../packages/db';
import type { OutboxEvent } from '../../packages/outbox';
import type { RuntimeService, ServiceSchemaOf } from '../../packages/runtime';
import { ESCROW_TOPICS, type PurchaseCompleted, type PurchaseRefunded, type ReferralQualified } from '../../packages/contracts/escrow';
import { ledgerAudit } from './audit';
import { cashoutRecords, gasCreditRecords, holdRecords, referralRecords } from './audit-records';
import { RECORD_QUERY_PARAMS } from '../../packages/ledger-audit/records';
import type { CashoutDebitParams, CreditGasPurchaseParams, HoldParams, HoldResult, RecordQuery, ResolveParams, SettleResult } from '../../packages/contracts/ledger';
import { migrations } from './migrations';
import { holdWriter, settleHold, settleWriter, voidHold, type SettleRequest } from './holds';
import type { Batcher } from '../../packages/db/batcher';
import { creditGasPurchase, creditReferral, debitCashout, finishCashout } from './money-steps';
import { agentBalance, holdView, withdrawableIn, type HoldRow } from './postings';
import { DEFAULT_PAGE, entriesPage, walletFigures } from './wallet';
import { ledgerMetricsMixin } from './metrics';

export { PLATFORM, agentAccount, type EntryType } from './postings';
export type { WalletEntry } from './wallet';
export type { AuditCheck, AuditReport } from './audit';

const KEY = { type: 'string', min: 3, max: 200 } as const;
const ID = { type: 'string', min: 3, max: 100 } as const;
const GAS = { type: 'number', integer: true, positive: true, convert: false } as const;
const FEE = { type: 'number', integer: true, min: 0, convert: false, optional: true } as const;
const PAGE = {
  limit: { type: 'number', integer: true, min: 1, max: 100, optional: true },
  cursor: { type: 'string', optional: true, max: 200 },
} as const;

interface LedgerMethods {
  now(): Date;
  consume(event: OutboxEvent, run: () => Promise<unknown>): Promise<void>;
}
type LedgerThis = Service & RuntimeService & LedgerMethods & { db: Db; singleWriter: SingleWriterCache<number> | null; settles?: Batcher<SettleRequest, SettleResult>; holds?: Batcher<HoldParams, HoldResult> };

/** A read-only page of the reconciling audit's records (RECORD_QUERY_PARAMS), read at the ledger's clock. */
function recordAction<R>(read: (db: Db, q: RecordQuery, at: Date) => Promise<R>) {
  return {
    params: RECORD_QUERY_PARAMS,
    handler(this: LedgerThis, ctx: Context<RecordQuery>): Promise<R> {
      return read(this.db, ctx.params, this.now());
    },
  };
}

const LedgerService: ServiceSchemaOf<LedgerThis> = {
  name: 'ledger',
  // Embedded PGlite: balances are kept exactly (whoami polls them); over PostgreSQL every balance is read.
  mixins: [dbMixin('ledger', migrations, { singleWriterCache: true }), ledgerMetricsMixin],

  actions: {
    balance: {
      params: { agentId: ID },
      async handler(this: LedgerThis, ctx: Context<{ agentId: string }>) {
        const { agentId } = ctx.params;
        const load = () => agentBalance(this.db, agentId);
        return { gasBalance: await (this.singleWriter ? this.singleWriter.get(agentId, load) : load()) };
      },
    },

    /** Paged ledger entries of an agent, newest first. */
    entries: {
      params: { agentId: ID, ...PAGE },
      async handler(this: LedgerThis, ctx: Context<{ agentId: string; limit?: number; cursor?: string }>) {
        return entriesPage(this.db, ctx.params.agentId, ctx.params.limit ?? DEFAULT_PAGE, ctx.params.cursor);
      },
    },

    /** The ledger's part of the wallet tool (payments.wallet adds cash-outs). A read: it changes nothing. */
    walletFigures: {
      params: { agentId: ID, ...PAGE },
      async handler(this: LedgerThis, ctx: Context<{ agentId: string; limit?: number; cursor?: string }>) {
        return walletFigures(this.db, ctx.params.agentId, ctx.params.limit ?? DEFAULT_PAGE, ctx.params.cursor);
      },
    },

    creditGasPurchase: {
      params: { key: KEY, agentId: ID, gas: GAS, sessionId: ID, packId: { type: 'string', min: 1, max: 32 } },
      async handler(this: LedgerThis, ctx: Context<CreditGasPurchaseParams>) {
        return creditGasPurchase(this.db, this.now(), ctx.params);
      },
    },

    /** Pending transfer buyer → escrow_holds for a purchase, carrying the split quoted at purchase. */
    hold: {
      params: { key: KEY, purchaseId: ID, buyerId: ID, sellerId: ID, amountGas: GAS, platformFeeGas: FEE, sellerNetGas: FEE, evaluatorId: { ...ID, optional: true }, evaluatorFeeGas: FEE },
      async handler(this: LedgerThis, ctx: Context<HoldParams>) {
        // Made together with the other holds arriving now (holds.ts, holdWriter), each as holdGas would.
        this.holds ??= holdWriter(this.db, () => this.now(), () => this.config.platformFeePercent);
        return this.holds.submit(ctx.params);
      },
    },

    /** Posts a hold: the seller gets the held seller net (sale_earn), the platform the held fee. */
    settle: {
      params: { key: KEY, purchaseId: ID, evaluatorPaid: { type: 'boolean', optional: true } },
      async handler(this: LedgerThis, ctx: Context<ResolveParams>) {
        return settleHold(this.db, this.now(), ctx.params.key, ctx.params.purchaseId, ctx.params.evaluatorPaid ?? false);
      },
    },

    /** Voids a hold: the buyer gets the held gas back (escrow_refund). */
    void: {
      params: { key: KEY, purchaseId: ID, evaluatorPaid: { type: 'boolean', optional: true } },
      async handler(this: LedgerThis, ctx: Context<ResolveParams>) {
        return voidHold(this.db, this.now(), ctx.params.key, ctx.params.purchaseId, ctx.params.evaluatorPaid ?? false);
      },
    },

    referralBonus: {
      params: { key: KEY, referrerId: ID, referredId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; referrerId: string; referredId: string }>) {
        return creditReferral(this.db, this.now(), ctx.params.key, ctx.params.referrerId, ctx.params.referredId);
      },
    },

    /** Cash-out: agent → payouts_pending, at most the withdrawable amount; stores the quoted fee. */
    cashoutDebit: {
      params: { key: KEY, cashoutId: ID, agentId: ID, amountGas: GAS, feeGas: FEE },
      async handler(this: LedgerThis, ctx: Context<CashoutDebitParams>) {
        return debitCashout(this.db, this.now(), ctx.params);
      },
    },

    /** The payout was sent: payouts_pending → payouts_paid (net) + platform_fees (the stored fee). */
    cashoutPaid: {
      params: { key: KEY, cashoutId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; cashoutId: string }>) {
        return finishCashout(this.db, this.now(), ctx.params.key, ctx.params.cashoutId, 'paid');
      },
    },

    /** The payout was rejected: payouts_pending → the agent, in full. */
    cashoutReturn: {
      params: { key: KEY, cashoutId: ID },
      async handler(this: LedgerThis, ctx: Context<{ key: string; cashoutId: string }>) {
        return finishCashout(this.db, this.now(), ctx.params.key, ctx.params.cashoutId, 'returned');
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
        return r.rows.map(holdView);
      },
    },

    /** The holds of these purchases (escrow's audit cross-check). */
    holdsOf: {
      params: { purchaseIds: { type: 'array', items: 'string', max: 1000 } },
      async handler(this: LedgerThis, ctx: Context<{ purchaseIds: string[] }>) {
        if (ctx.params.purchaseIds.length === 0) return [];
        const r = await this.db.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = ANY($1::text[])', [ctx.params.purchaseIds]);
        return r.rows.map(holdView);
      },
    },

    /** Internal: one hold (escrow and tests). */
    getHold: {
      params: { purchaseId: ID },
      async handler(this: LedgerThis, ctx: Context<{ purchaseId: string }>) {
        const r = await this.db.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1', [ctx.params.purchaseId]);
        return r.rows[0] ? holdView(r.rows[0]) : null;
      },
    },

    /** The ledger's own invariants; packages/ledger-audit adds escrow's cross-check. */
    audit: {
      async handler(this: LedgerThis) {
        return ledgerAudit(this.db);
      },
    },

    // The reconciling audit's pages (packages/ledger-audit joins them with payments and escrow). Reads only.

    /** gas_purchase credits as posted (agent, gas, session); `ids` are session ids. */
    gasCreditRecords: recordAction(gasCreditRecords),

    /** Holds with their parties, price and split; `ids` are purchase ids, `statuses` filter pages. */
    holdRecords: recordAction(holdRecords),

    /** Cash-out debits (amount, fee, agent, pending/paid/returned); `ids` are cash-out ids. */
    cashoutRecords: recordAction(cashoutRecords),

    /** Referral outcomes (credited or refused); `ids` are referred agents' ids. */
    referralRecords: recordAction(referralRecords),
  },

  channels: {
    [ESCROW_TOPICS.completed]: {
      group: 'ledger',
      async handler(this: LedgerThis, event: OutboxEvent<PurchaseCompleted>) {
        const { purchaseId, sellerId, buyerId, evaluatorId, evaluatorPaid } = event.data;
        // Settled together with the other settles arriving now (holds.ts, settleWriter), each as settleHold would.
        this.settles ??= settleWriter(this.db, () => this.now());
        await this.consume(event, () =>
          this.settles!.submit({ key: `purchase:${purchaseId}:settle`, purchaseId, sellerId, buyerId, evaluatorId, evaluatorPaid: evaluatorPaid === true }),
        );
      },
    },
    [ESCROW_TOPICS.refunded]: {
      group: 'ledger',
      async handler(this: LedgerThis, event: OutboxEvent<PurchaseRefunded>) {
        const { purchaseId, evaluatorPaid } = event.data;
        await this.consume(event, () => voidHold(this.db, this.now(), `purchase:${purchaseId}:void`, purchaseId, evaluatorPaid === true));
      },
    },
    [ESCROW_TOPICS.referralQualified]: {
      group: 'ledger',
      async handler(this: LedgerThis, event: OutboxEvent<ReferralQualified>) {
        const { referrerId, referredId } = event.data;
        await this.consume(event, () => creditReferral(this.db, this.now(), `referral:${referredId}`, referrerId, referredId));
      },
    },
  },

  methods: {
    now(this: LedgerThis): Date {
      return this.clock.now();
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
  },
};

export default LedgerService;
