/**
 * A purchase's escrow hold, one function per step, each under a caller-supplied idempotency key
 * (replaying the key returns the first result and moves nothing). Common cases are one statement in
 * its own transaction; a replay, a race or a first account takes the stepwise transaction:
 *
 *   holdGas     agent → escrow_holds (pending; carries price, fee and seller net)
 *   settleHold  escrow_holds → seller (sale_earn) + platform_fees, exactly the held split (+ the evaluator's leg)
 *   voidHold    escrow_holds → buyer (escrow_refund) (+ the evaluator's leg)
 * The legs of every step are declared once (legs.ts, MONEY_LEGS) and posted by every path through postingsSql:
 * a step's own statement is its batch of one.
 */
import type { Db, Queryable } from '../../packages/db';
import { BACKGROUND_IN_FLIGHT, Batcher, CALLER_WAITS_IN_FLIGHT } from '../../packages/db/batcher';
import { InvalidArgumentsError, InvalidStateError, NotFoundError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import { saleSplit } from '../../packages/market-rules';
import type { HoldParams, HoldResult, SettleResult } from '../../packages/contracts/ledger';
import { agentBalance, claimKey, stepwiseOnConflict, type HoldRow } from './postings';
import { postingsSql, postLegs, stepRowsSql, type StepFields } from './legs';

/** The split a hold carries: the one quoted at purchase, or (when the caller sends none) fixed now; an evaluator's fee is a leg of its own. */
function splitOf(p: HoldParams, feePercent: number): { platformFeeGas: number; sellerNetGas: number; evaluatorFeeGas: number; evaluatorId: string | null } {
  const evaluatorFeeGas = p.evaluatorFeeGas ?? 0;
  const evaluatorId = p.evaluatorId ?? null;
  if (!Number.isSafeInteger(evaluatorFeeGas) || evaluatorFeeGas < 0 || (evaluatorFeeGas > 0) !== (evaluatorId !== null) || evaluatorFeeGas >= p.amountGas) {
    throw new InvalidArgumentsError('An evaluator comes with a positive fee below amountGas, and a fee with its evaluator.', {
      hint: 'Send evaluatorId and evaluatorFeeGas together (amountGas = price + evaluatorFeeGas), or neither.',
      details: { amountGas: p.amountGas, evaluatorFeeGas, evaluatorId },
    });
  }
  if (evaluatorId !== null && (evaluatorId === p.buyerId || evaluatorId === p.sellerId)) {
    throw new InvalidArgumentsError('The evaluator must be neither the buyer nor the seller.', { hint: 'Name a third agent as evaluator.', details: { evaluatorId } });
  }
  const priceGas = p.amountGas - evaluatorFeeGas;
  if (p.platformFeeGas === undefined && p.sellerNetGas === undefined) {
    const { platformFeeGas, sellerNetGas } = saleSplit(priceGas, feePercent);
    return { platformFeeGas, sellerNetGas, evaluatorFeeGas, evaluatorId };
  }
  const platformFeeGas = p.platformFeeGas ?? priceGas - p.sellerNetGas!;
  const sellerNetGas = p.sellerNetGas ?? priceGas - platformFeeGas;
  if (platformFeeGas < 0 || sellerNetGas < 0 || platformFeeGas + sellerNetGas !== priceGas) {
    throw new InvalidArgumentsError('platformFeeGas + sellerNetGas (+ evaluatorFeeGas) must equal amountGas.', {
      hint: 'Send the split quoted at purchase (saleSplit of the price).',
      details: { amountGas: p.amountGas, platformFeeGas, sellerNetGas, evaluatorFeeGas },
    });
  }
  return { platformFeeGas, sellerNetGas, evaluatorFeeGas, evaluatorId };
}

export async function holdGas(db: Db, at: Date, p: HoldParams, feePercent: number): Promise<HoldResult> {
  const { key, purchaseId, buyerId, sellerId, amountGas } = p;
  if (buyerId === sellerId) {
    throw new InvalidArgumentsError('A buyer cannot hold gas for a purchase from itself.', { hint: 'Buy listings of other agents.' });
  }
  const split = splitOf(p, feePercent);
  const alreadyHeld = () =>
    new InvalidStateError(`Purchase ${purchaseId} already has a hold.`, {
      hint: `Retry with the key of the first hold (purchase:${purchaseId}:hold) to read it.`,
    });
  // The common case is one statement in its own transaction (no BEGIN/COMMIT round trips): holdPendings of
  // this one hold. A key claimed before or a second hold of the purchase fails it whole, and nothing moved;
  // those cases, and a refused debit (which may still be a replay), take the stepwise path in one transaction.
  const fast = await holdPendings(db, at, [p], feePercent).catch(stepwiseOnConflict);
  if (fast?.[0]) return fast[0];
  const fingerprint = holdFingerprint(p);
  return db.transaction(async (tx) => {
    // Claim the key first: a replay answers with the first hold, anything else under it is refused.
    const claim = await claimKey(tx, { key, type: 'escrow_hold', fingerprint, purchaseId, at });
    if (claim.replayed) {
      const hold = await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1', [purchaseId]);
      return { holdId: claim.row.id, purchaseId, status: hold.rows[0]?.status ?? 'pending', amountGas, replayed: true };
    }
    const existing = await tx.query('SELECT 1 FROM ledger.holds WHERE purchase_id = $1', [purchaseId]);
    if (existing.rowCount) throw alreadyHeld();
    await postLegs(tx, 'escrow_hold', claim.id, { buyer_id: buyerId, amount_gas: amountGas }, { purchaseId }, at);
    await tx
      .query(
        `INSERT INTO ledger.holds (purchase_id, buyer_id, seller_id, amount_gas, platform_fee_gas, seller_net_gas, evaluator_id, evaluator_fee_gas, status, hold_transaction_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $9, $10, 'pending', $7, $8)`,
        [purchaseId, buyerId, sellerId, amountGas, split.platformFeeGas, split.sellerNetGas, claim.id, at, split.evaluatorId, split.evaluatorFeeGas],
      )
      .catch((err: { code?: string }) => {
        // A second hold for one purchase raced in under another key: this one rolls back, nothing moved.
        if (err?.code === '23505') throw alreadyHeld();
        throw err;
      });
    return { holdId: claim.id, purchaseId, status: 'pending', amountGas, replayed: false };
  });
}

const holdFingerprint = (p: HoldParams) => JSON.stringify({ purchaseId: p.purchaseId, buyerId: p.buyerId, sellerId: p.sellerId, amountGas: p.amountGas });

/**
 * Holds in ONE statement: for each, debit the buyer (balance >= amount), claim the key, post the legs and
 * record the pending hold with its split. The buyers must be distinct (the caller's batch keeps them so).
 * A refused debit answers null for that purchase (holdGas alone answers it: insufficient gas, or a replay);
 * a key claimed before or a second hold of a purchase fails the whole statement and nothing moved.
 */
const holdsSql = (one: boolean) => `WITH v AS (${stepRowsSql('escrow_hold', '$1', {
  n: 'int',
  key: 'text',
  fingerprint: 'text',
  seller_id: 'text',
  platform_fee_gas: 'bigint',
  seller_net_gas: 'bigint',
  evaluator_id: 'text',
  evaluator_fee_gas: 'bigint',
}, one)}),
     ${postingsSql({ step: 'v', type: 'escrow_hold', refs: ['purchase_id'], claim: true, accounts: 'create' })},
     held AS (
       INSERT INTO ledger.holds (purchase_id, buyer_id, seller_id, amount_gas, platform_fee_gas, seller_net_gas, evaluator_id, evaluator_fee_gas, status, hold_transaction_id, created_at)
       SELECT v.purchase_id, v.buyer_id, v.seller_id, v.amount_gas, v.platform_fee_gas, v.seller_net_gas, v.evaluator_id, v.evaluator_fee_gas, 'pending', v.id, v.created_at
         FROM v JOIN ok ON ok.id = v.id)
     SELECT v.n FROM v JOIN ok ON ok.id = v.id`;
/** A lone hold's statement reads one JSON object (the planner knows it is one row), a batch's an array. */
const HOLDS_SQL = { one: holdsSql(true), many: holdsSql(false) };

/** Several purchases' holds in one statement (the hold action's group commit, issue #22; a lone hold is a batch of one). */
export async function holdPendings(db: Db, at: Date, holds: ReadonlyArray<HoldParams>, feePercent: number): Promise<Array<HoldResult | null>> {
  const items = holds.map((p, n) => {
    const split = splitOf(p, feePercent);
    return {
      n,
      id: newId('txn'),
      key: p.key,
      fingerprint: holdFingerprint(p),
      purchase_id: p.purchaseId,
      created_at: at.toISOString(),
      buyer_id: p.buyerId,
      seller_id: p.sellerId,
      amount_gas: p.amountGas,
      platform_fee_gas: split.platformFeeGas,
      seller_net_gas: split.sellerNetGas,
      evaluator_id: split.evaluatorId,
      evaluator_fee_gas: split.evaluatorFeeGas,
    };
  });
  const r = await db.query<{ n: number }>(items.length === 1 ? HOLDS_SQL.one : HOLDS_SQL.many, [JSON.stringify(items.length === 1 ? items[0] : items)]);
  const held = new Set(r.rows.map((row) => Number(row.n)));
  return items.map(({ n, id, purchase_id: purchaseId, amount_gas: amountGas }) =>
    held.has(n) ? { holdId: id, purchaseId, status: 'pending' as const, amountGas, replayed: false } : null,
  );
}

/** Whether holdGas would take `p` to its statement (not refuse it first). */
function isPlainHold(p: HoldParams, feePercent: number): boolean {
  if (p.buyerId === p.sellerId) return false;
  try {
    splitOf(p, feePercent);
    return true;
  } catch {
    return false;
  }
}

/**
 * The hold action's group commit: a lone hold is holdGas; holds arriving while one runs go out together
 * (holdPendings; a buyer or purchase is in one batch in flight at a time), and any that statement does not make — or all of them,
 * if it fails — are made alone, so each answer is exactly holdGas's.
 */
export function holdWriter(db: Db, now: () => Date, feePercent: () => number): Batcher<HoldParams, HoldResult> {
  const alone = (p: HoldParams) => holdGas(db, now(), p, feePercent());
  return new Batcher<HoldParams, HoldResult>(
    async (batch, stats) => {
      let results: Array<HoldResult | null> = batch.map(() => null);
      // A hold holdGas refuses before any statement (a buyer holding for itself, a split that does not add up) goes alone.
      if (batch.length > 1 && batch.every(({ item }) => isPlainHold(item, feePercent()))) {
        results = await holdPendings(db, now(), batch.map((b) => b.item), feePercent()).catch(() => {
          stats.retriedAlone++;
          return results;
        });
      }
      await Promise.all(batch.map(({ item, settle }, i) => (results[i] ? settle.resolve(results[i]!) : alone(item).then(settle.resolve, settle.reject))));
    },
    { maxInFlight: CALLER_WAITS_IN_FLIGHT, maxBatch: 50, keys: (p) => [p.buyerId, p.purchaseId] },
  );
}

/** The row a hold's resolution posts from (MONEY_LEGS escrow_settle / escrow_void): its parties and amounts, and whether the evaluator is paid. */
export function holdFields(hold: HoldRow, evaluatorPaid: boolean): StepFields {
  return {
    buyer_id: hold.buyer_id,
    seller_id: hold.seller_id,
    evaluator_id: hold.evaluator_id,
    amount_gas: Number(hold.amount_gas),
    seller_net_gas: Number(hold.seller_net_gas),
    platform_fee_gas: Number(hold.platform_fee_gas),
    evaluator_fee_gas: Number(hold.evaluator_fee_gas ?? 0),
    evaluator_paid: evaluatorPaid && hold.evaluator_id !== null,
  };
}

/** A hold's resolution: posted (settle) or voided (refund), exactly once. */
type Outcome = 'posted' | 'voided';
const TYPE_OF = { posted: 'escrow_settle', voided: 'escrow_void' } as const;

/**
 * Resolving pending holds in ONE statement: each turns posted or voided (only if still pending), its key is
 * claimed, and its legs are posted — the seller's net, the fee and the evaluator's leg, or the refund — with
 * the credited agents' accounts opened on a first credit. One item is the step's own statement; many are the
 * consumer's group commit (issue #22). The agents credited must be distinct across the items (each credit's
 * balance_after is its own): an agent credited twice, or a key claimed before, fails the whole statement and
 * nothing moved. An item answers null when its hold was not pending here (the stepwise path answers it).
 */
const resolveSql = (outcome: Outcome, one: boolean) => `WITH v AS (SELECT * FROM ${one ? 'jsonb_to_record' : 'jsonb_to_recordset'}($1::jsonb) AS v(n int, id text, key text, fingerprint text, purchase_id text, evaluator_paid boolean)),
     h AS (
       UPDATE ledger.holds SET status = '${outcome}', final_transaction_id = v.id, resolved_at = $2
         FROM v WHERE ledger.holds.purchase_id = v.purchase_id AND ledger.holds.status = 'pending'
       RETURNING v.n, v.id, v.key, v.fingerprint, $2::timestamptz AS created_at, ledger.holds.purchase_id,
                 ledger.holds.buyer_id, ledger.holds.seller_id, ledger.holds.evaluator_id, ledger.holds.amount_gas, ledger.holds.seller_net_gas,
                 ledger.holds.platform_fee_gas, ledger.holds.evaluator_fee_gas, v.evaluator_paid AND ledger.holds.evaluator_id IS NOT NULL AS evaluator_paid),
     ${postingsSql({ step: 'h', type: TYPE_OF[outcome], refs: ['purchase_id'], claim: true, accounts: 'create' })}
     SELECT h.n, h.buyer_id, h.seller_id, h.amount_gas, h.seller_net_gas, h.platform_fee_gas, h.evaluator_fee_gas, m.balance AS buyer_balance
       FROM h JOIN ok ON ok.id = h.id LEFT JOIN moved m ON m.tx = h.id AND m.id = 'agent:' || h.buyer_id`;
/** Per outcome, a lone resolution's statement (one JSON object: the planner knows it is one row) and a batch's. */
const RESOLVE_SQL = {
  posted: { one: resolveSql('posted', true), many: resolveSql('posted', false) },
  voided: { one: resolveSql('voided', true), many: resolveSql('voided', false) },
};

interface ResolvedRow {
  n: number;
  buyer_id: string;
  seller_id: string;
  amount_gas: string;
  seller_net_gas: string;
  platform_fee_gas: string;
  evaluator_fee_gas: string;
  buyer_balance: string | null;
}

async function resolvePendingHolds(db: Db, at: Date, outcome: Outcome, items: ReadonlyArray<{ key: string; purchaseId: string; evaluatorPaid?: boolean }>) {
  const rows = items.map(({ key, purchaseId, evaluatorPaid }, n) => ({
    n,
    id: newId('txn'),
    key,
    purchase_id: purchaseId,
    fingerprint: JSON.stringify({ purchaseId }),
    evaluator_paid: evaluatorPaid === true,
  }));
  const one = rows.length === 1;
  const r = await db.query<ResolvedRow>(RESOLVE_SQL[outcome][one ? 'one' : 'many'], [JSON.stringify(one ? rows[0] : rows), at]);
  const byN = new Map(r.rows.map((row) => [Number(row.n), row]));
  return rows.map(({ n, id }) => {
    const row = byN.get(n);
    return row ? { id, row } : null;
  });
}

const settleResult = (transactionId: string, purchaseId: string, row: Pick<ResolvedRow, 'seller_id' | 'amount_gas' | 'seller_net_gas' | 'platform_fee_gas' | 'evaluator_fee_gas'>, replayed: boolean): SettleResult => ({
  transactionId,
  purchaseId,
  status: 'posted',
  sellerId: row.seller_id,
  // The price: the evaluator's fee, if any, is held on top of it.
  priceGas: Number(row.amount_gas) - Number(row.evaluator_fee_gas ?? 0),
  sellerNetGas: Number(row.seller_net_gas),
  platformFeeGas: Number(row.platform_fee_gas),
  replayed,
});

/** Several purchases' settles in ONE statement (the consumer's group commit): each exactly as settleHold's own statement writes it. */
export async function settlePendingHolds(db: Db, at: Date, settles: ReadonlyArray<{ key: string; purchaseId: string; evaluatorPaid?: boolean }>): Promise<Array<SettleResult | null>> {
  const resolved = await resolvePendingHolds(db, at, 'posted', settles);
  return resolved.map((r, i) => (r ? settleResult(r.id, settles[i].purchaseId, r.row, false) : null));
}

/** A settle the completed-purchase consumer asks for: its key, its purchase, and (from the event) its seller. */
export interface SettleRequest {
  key: string;
  purchaseId: string;
  sellerId: string;
  /** A hold with an evaluator: its fee goes to the evaluator (a verdict) or back to the buyer. */
  evaluatorPaid?: boolean;
  /** From the event too, so that a batch credits each agent once: the evaluator's fee goes to one of them. */
  evaluatorId?: string | null;
  buyerId?: string;
}

/** The agents a settle credits, as the request names them (a batch holds each once; the hold decides what is posted). */
const creditedBy = (r: SettleRequest): string[] => [r.sellerId, ...(r.evaluatorId ? [r.evaluatorPaid ? r.evaluatorId : r.buyerId] : [])].filter((a): a is string => !!a);

/**
 * The consumer's group commit of settles: a lone settle is settleHold; settles of distinct purchases crediting
 * distinct agents arriving while one runs go out together (settlePendingHolds), and any that statement does not
 * settle — or all of them, if it fails — are settled alone, so each answer is exactly settleHold's.
 */
export function settleWriter(db: Db, now: () => Date): Batcher<SettleRequest, SettleResult> {
  const alone = (r: SettleRequest) => settleHold(db, now(), r.key, r.purchaseId, r.evaluatorPaid ?? false);
  return new Batcher<SettleRequest, SettleResult>(
    async (batch, stats) => {
      let results: Array<SettleResult | null> = batch.map(() => null);
      if (batch.length > 1) {
        results = await settlePendingHolds(db, now(), batch.map((b) => b.item)).catch(() => {
          stats.retriedAlone++;
          return results;
        });
      }
      await Promise.all(batch.map(({ item, settle }, i) => (results[i] ? settle.resolve(results[i]!) : alone(item).then(settle.resolve, settle.reject))));
    },
    { maxInFlight: BACKGROUND_IN_FLIGHT, maxBatch: 50, keys: (r) => [...creditedBy(r), r.purchaseId] },
  );
}

/**
 * Posts a hold with the amounts it carries (nothing is recomputed at settle time). The common case, with or
 * without an evaluator, is one statement in its own transaction; a replay, a hold not pending, a key claimed
 * before or a first sale racing another take the stepwise transaction.
 */
export async function settleHold(db: Db, at: Date, key: string, purchaseId: string, evaluatorPaid = false): Promise<SettleResult> {
  const fast = await settlePendingHolds(db, at, [{ key, purchaseId, evaluatorPaid }]).catch(stepwiseOnConflict);
  return fast?.[0] ?? db.transaction((tx) => resolveStepwise(tx, at, key, purchaseId, 'posted', evaluatorPaid, (id, hold, replayed) => settleResult(id, purchaseId, hold, replayed)));
}

export async function voidHold(db: Db, at: Date, key: string, purchaseId: string, evaluatorPaid = false) {
  // The common case in one statement, in its own transaction (like settle): the pending hold turns voided,
  // the key is claimed, the buyer gets the held gas back (and the evaluator its fee after a verdict).
  const fast = await resolvePendingHolds(db, at, 'voided', [{ key, purchaseId, evaluatorPaid }]).catch(stepwiseOnConflict);
  const resolved = fast?.[0];
  const result = (id: string, buyerId: string, amountGas: string) => ({ transactionId: id, purchaseId, status: 'voided' as const, buyerId, amountGas: Number(amountGas) });
  if (resolved) return { ...result(resolved.id, resolved.row.buyer_id, resolved.row.amount_gas), gasBalance: Number(resolved.row.buyer_balance), replayed: false };
  return db.transaction((tx) =>
    resolveStepwise(tx, at, key, purchaseId, 'voided', evaluatorPaid, async (id, hold, replayed, balances) => ({
      ...result(id, hold.buyer_id, hold.amount_gas),
      gasBalance: balances?.get(hold.buyer_id) ?? (await agentBalance(tx, hold.buyer_id)),
      replayed,
    })),
  );
}

/**
 * The stepwise resolution, in one transaction: claim the key (a replay answers the first result), lock the
 * hold, refuse one already resolved, post the legs (postLegs) and mark the hold resolved.
 */
async function resolveStepwise<R>(
  tx: Queryable,
  at: Date,
  key: string,
  purchaseId: string,
  outcome: Outcome,
  evaluatorPaid: boolean,
  answer: (transactionId: string, hold: HoldRow, replayed: boolean, balances?: Map<string, number>) => R | Promise<R>,
): Promise<R> {
  const type = TYPE_OF[outcome];
  const claim = await claimKey(tx, { key, type, fingerprint: JSON.stringify({ purchaseId }), purchaseId, at });
  const hold = (await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1 FOR UPDATE', [purchaseId])).rows[0];
  if (!hold) {
    throw new NotFoundError(`No escrow hold for purchase ${purchaseId}.`, {
      hint: outcome === 'posted' ? 'Hold the gas (ledger.hold) before settling.' : 'Only a held purchase can be refunded.',
    });
  }
  if (claim.replayed) return answer(claim.row.id, hold, true);
  if (hold.status !== 'pending') {
    throw new InvalidStateError(`The hold of purchase ${purchaseId} is already ${hold.status}.`, {
      hint: 'A hold is posted or voided exactly once.',
      details: { holdStatus: hold.status },
    });
  }
  const balances = await postLegs(tx, type, claim.id, holdFields(hold, evaluatorPaid), { purchaseId }, at);
  await tx.query(
    `UPDATE ledger.holds SET status = $4, final_transaction_id = $2, resolved_at = $3 WHERE purchase_id = $1 AND status = 'pending'`,
    [purchaseId, claim.id, at, outcome],
  );
  return answer(claim.id, hold, false, balances);
}
