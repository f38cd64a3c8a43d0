/**
 * A purchase's escrow hold, one function per step, each under a caller-supplied idempotency key
 * (replaying the key returns the first result and moves nothing). Common cases are one statement in
 * its own transaction; a replay, a race or a first account takes the stepwise transaction:
 *
 *   holdGas     agent → escrow_holds (pending; carries price, fee and seller net)
 *   settleHold  escrow_holds → seller (sale_earn) + platform_fees, exactly the held split (+ the evaluator's leg)
 *   voidHold    escrow_holds → buyer (escrow_refund) (+ the evaluator's leg)
 * The legs of settle and void are declared once (holdLegs) and posted by every path.
 */
import type { Db, Queryable } from '../../packages/db';
import { BACKGROUND_IN_FLIGHT, Batcher, CALLER_WAITS_IN_FLIGHT } from '../../packages/db/batcher';
import { InvalidArgumentsError, InvalidStateError, NotFoundError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import { saleSplit } from '../../packages/market-rules';
import type { HoldParams, HoldResult, SettleResult } from '../../packages/contracts/ledger';
import {
  agentAccount,
  agentAccountSql,
  agentBalance,
  applyLegs,
  claimKey,
  creditAgentSql,
  PLATFORM,
  POSTING_COLUMNS,
  stepwiseOnConflict,
  type HoldRow,
  type EntryType,
  type Leg,
} from './postings';

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
  const fingerprint = JSON.stringify({ purchaseId, buyerId, sellerId, amountGas });
  const alreadyHeld = () =>
    new InvalidStateError(`Purchase ${purchaseId} already has a hold.`, {
      hint: `Retry with the key of the first hold (purchase:${purchaseId}:hold) to read it.`,
    });
  // The common case is one statement in its own transaction (no BEGIN/COMMIT round trips): debit the
  // buyer (balance >= amount), claim the key, post both legs and record the pending hold. It has no
  // ON CONFLICT: a key claimed before or a second hold of the purchase fails the whole statement, and
  // nothing moved. Those cases, and a refused debit (which may still be a replay), take the stepwise
  // path below in one transaction.
  const id = newId('txn');
  const fast = await db
    .query<{ balance: string | null }>(
      `WITH moved AS (
         UPDATE ledger.accounts SET balance = balance - $6::bigint
          WHERE id = $7 AND balance >= $6::bigint RETURNING balance),
       claim AS (
         INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, created_at)
         SELECT $1, $2, 'escrow_hold', $3, $4, $5 FROM moved RETURNING id),
       posted AS (
         INSERT INTO ledger.postings (${POSTING_COLUMNS})
         SELECT $1, $7, -$6::bigint, 'escrow_hold', moved.balance, $4, NULL, NULL, $5::timestamptz FROM moved, claim
         UNION ALL
         SELECT $1, $8, $6::bigint, 'escrow_hold', NULL, $4, NULL, NULL, $5::timestamptz FROM moved, claim),
       held AS (
         INSERT INTO ledger.holds (purchase_id, buyer_id, seller_id, amount_gas, platform_fee_gas, seller_net_gas, evaluator_id, evaluator_fee_gas, status, hold_transaction_id, created_at)
         SELECT $4, $9, $10, $6::bigint, $11, $12, $13, $14, 'pending', $1, $5::timestamptz FROM moved, claim)
       SELECT (SELECT balance FROM moved) AS balance`,
      [id, key, fingerprint, purchaseId, at, amountGas, agentAccount(buyerId), PLATFORM.escrowHolds, buyerId, sellerId, split.platformFeeGas, split.sellerNetGas, split.evaluatorId, split.evaluatorFeeGas],
    )
    .catch(stepwiseOnConflict);
  if (fast && fast.rows[0].balance !== null) return { holdId: id, purchaseId, status: 'pending', amountGas, replayed: false };
  return db.transaction(async (tx) => {
    // Claim the key first: a replay answers with the first hold, anything else under it is refused.
    const claim = await claimKey(tx, { key, type: 'escrow_hold', fingerprint, purchaseId, at });
    if (claim.replayed) {
      const hold = await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1', [purchaseId]);
      return { holdId: claim.row.id, purchaseId, status: hold.rows[0]?.status ?? 'pending', amountGas, replayed: true };
    }
    const existing = await tx.query('SELECT 1 FROM ledger.holds WHERE purchase_id = $1', [purchaseId]);
    if (existing.rowCount) throw alreadyHeld();
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

/**
 * Several purchases' holds in ONE statement (the hold action's group commit, issue #22): for each, debit
 * the buyer (balance >= amount), claim the key, post both legs and record the pending hold — exactly what
 * holdGas's one statement writes for one. The buyers must be distinct (the caller's batch keeps them so).
 * A refused debit answers null for that purchase (holdGas alone answers it: insufficient gas, or a replay);
 * a key claimed before or a second hold of a purchase fails the whole statement and nothing moved.
 */
export async function holdPendings(db: Db, at: Date, holds: ReadonlyArray<HoldParams>, feePercent: number): Promise<Array<HoldResult | null>> {
  const items = holds.map((p, n) => {
    const split = splitOf(p, feePercent);
    return {
      n,
      id: newId('txn'),
      key: p.key,
      fingerprint: JSON.stringify({ purchaseId: p.purchaseId, buyerId: p.buyerId, sellerId: p.sellerId, amountGas: p.amountGas }),
      purchase_id: p.purchaseId,
      account: agentAccount(p.buyerId),
      buyer_id: p.buyerId,
      seller_id: p.sellerId,
      amount: p.amountGas,
      fee: split.platformFeeGas,
      net: split.sellerNetGas,
    };
  });
  const r = await db.query<{ n: number }>(
    `WITH v AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(n int, id text, key text, fingerprint text, purchase_id text, account text,
                                                              buyer_id text, seller_id text, amount bigint, fee bigint, net bigint)),
     moved AS (
       UPDATE ledger.accounts SET balance = ledger.accounts.balance - v.amount
         FROM v WHERE ledger.accounts.id = v.account AND ledger.accounts.balance >= v.amount
       RETURNING v.n, ledger.accounts.balance),
     claim AS (
       INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, created_at)
       SELECT v.id, v.key, 'escrow_hold', v.fingerprint, v.purchase_id, $2 FROM v JOIN moved ON moved.n = v.n RETURNING id),
     posted AS (
       INSERT INTO ledger.postings (${POSTING_COLUMNS})
       SELECT v.id, v.account, -v.amount, 'escrow_hold', moved.balance, v.purchase_id, NULL, NULL, $2::timestamptz
         FROM v JOIN moved ON moved.n = v.n JOIN claim ON claim.id = v.id
       UNION ALL
       SELECT v.id, $3, v.amount, 'escrow_hold', NULL, v.purchase_id, NULL, NULL, $2::timestamptz
         FROM v JOIN moved ON moved.n = v.n JOIN claim ON claim.id = v.id),
     held AS (
       INSERT INTO ledger.holds (purchase_id, buyer_id, seller_id, amount_gas, platform_fee_gas, seller_net_gas, status, hold_transaction_id, created_at)
       SELECT v.purchase_id, v.buyer_id, v.seller_id, v.amount, v.fee, v.net, 'pending', v.id, $2::timestamptz
         FROM v JOIN moved ON moved.n = v.n JOIN claim ON claim.id = v.id)
     SELECT n FROM moved`,
    [JSON.stringify(items), at, PLATFORM.escrowHolds],
  );
  const held = new Set(r.rows.map((row) => Number(row.n)));
  return items.map(({ n, id, purchase_id: purchaseId, amount }) =>
    held.has(n) ? { holdId: id, purchaseId, status: 'pending' as const, amountGas: amount, replayed: false } : null,
  );
}

/** Whether holdGas would take `p` to its statement (not refuse it first). */
function isPlainHold(p: HoldParams, feePercent: number): boolean {
  if (p.buyerId === p.sellerId) return false;
  try {
    // A hold with an evaluator goes alone (holdPendings writes the two-leg split only).
    return splitOf(p, feePercent).evaluatorFeeGas === 0;
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

/** Posts a hold with the amounts it carries: nothing is recomputed at settle time. */
export async function settleHold(db: Db, at: Date, key: string, purchaseId: string, evaluatorPaid = false): Promise<SettleResult> {
  // A hold with an evaluator's leg is not the one statement's (it answers null): the stepwise path posts its legs.
  const fast = await settlePendingHold(db, at, key, purchaseId).catch(stepwiseOnConflict);
  return fast ?? db.transaction((tx) => settleHoldStepwise(tx, at, key, purchaseId, evaluatorPaid));
}

/** A hold's amount column, or the difference of two (the buyer's refund when the evaluator is paid). */
type HoldAmount = 'amount_gas' | 'seller_net_gas' | 'platform_fee_gas' | 'evaluator_fee_gas' | 'amount_gas - evaluator_fee_gas';
/** Who a leg moves gas to or from: a party of the hold (its column naming the agent) or a platform account. */
type LegAccount = 'buyer_id' | 'seller_id' | 'evaluator_id' | 'escrow' | 'fees';

/** A leg of resolving a hold, as data: rendered as SQL by the one-statement paths, evaluated on the row by the stepwise path. */
interface HoldLeg {
  account: LegAccount;
  amount: HoldAmount;
  /** -1: out of the account (the release from escrow_holds). */
  sign: 1 | -1;
  entry: EntryType;
}

/**
 * The legs of resolving a pending hold — decided here once; every path that resolves a hold posts exactly these
 * (stepwise: resolutionLegs + applyLegs; one statement and batched: rendered by resolutionSql / settlePendingHolds):
 *   posted  escrow_holds → seller (sale_earn, the held net) + platform_fees (the held fee) + the evaluator's leg
 *   voided  escrow_holds → buyer (escrow_refund, the price) + the evaluator's leg
 * The evaluator's leg: its fee as evaluator_fee when it gave a verdict (`evaluatorPaid`), else back to the buyer.
 * A leg whose amount is 0 (no evaluator) posts nothing.
 */
export function holdLegs(outcome: 'posted' | 'voided', evaluatorPaid: boolean): HoldLeg[] {
  const evaluatorLeg: HoldLeg = evaluatorPaid
    ? { account: 'evaluator_id', amount: 'evaluator_fee_gas', sign: 1, entry: 'evaluator_fee' }
    : { account: 'buyer_id', amount: 'evaluator_fee_gas', sign: 1, entry: 'escrow_refund' };
  if (outcome === 'posted') {
    return [
      { account: 'escrow', amount: 'amount_gas', sign: -1, entry: 'escrow_release' },
      { account: 'seller_id', amount: 'seller_net_gas', sign: 1, entry: 'sale_earn' },
      { account: 'fees', amount: 'platform_fee_gas', sign: 1, entry: 'platform_fee' },
      evaluatorLeg,
    ];
  }
  return evaluatorPaid
    ? [
        { account: 'escrow', amount: 'amount_gas', sign: -1, entry: 'escrow_refund' },
        { account: 'buyer_id', amount: 'amount_gas - evaluator_fee_gas', sign: 1, entry: 'escrow_refund' },
        evaluatorLeg,
      ]
    : [
        { account: 'escrow', amount: 'amount_gas', sign: -1, entry: 'escrow_refund' },
        { account: 'buyer_id', amount: 'amount_gas', sign: 1, entry: 'escrow_refund' },
      ];
}

const PLATFORM_OF: Record<'escrow' | 'fees', string> = { escrow: PLATFORM.escrowHolds, fees: PLATFORM.platformFees };
const isParty = (a: LegAccount): a is 'buyer_id' | 'seller_id' | 'evaluator_id' => a.endsWith('_id');

/** The legs of resolving `hold` (holdLegs evaluated on its row), for applyLegs. */
export function resolutionLegs(hold: HoldRow, outcome: 'posted' | 'voided', evaluatorPaid: boolean): Leg[] {
  const amountOf = (a: HoldAmount) => (a === 'amount_gas - evaluator_fee_gas' ? Number(hold.amount_gas) - Number(hold.evaluator_fee_gas ?? 0) : Number(hold[a] ?? 0));
  return holdLegs(outcome, evaluatorPaid && hold.evaluator_id !== null).map((l) => {
    const amount = l.sign * amountOf(l.amount);
    if (!isParty(l.account)) return { accountId: PLATFORM_OF[l.account], amount, entryType: l.entry };
    const agentId = hold[l.account]!;
    return { accountId: agentAccount(agentId), agentId, amount, entryType: l.entry };
  });
}

/**
 * The legs of a hold WITHOUT an evaluator (what the one-statement paths serve: `evaluator_fee_gas = 0`), as SQL
 * over the hold row `h`: the one agent credited, and the postings' SELECTs. `moved` is the agent's credit CTE.
 */
function renderLegs(outcome: 'posted' | 'voided', h: string, fromClaim: string, movedJoin: string, refs: { tx: string; purchase: string; at: string; escrow: string; fees: string }) {
  const legs = holdLegs(outcome, false).filter((l) => !l.amount.includes('evaluator_fee_gas'));
  const agents = legs.filter((l) => isParty(l.account));
  if (agents.length !== 1) throw new Error('a one-statement resolution credits exactly one agent');
  const credit = agents[0] as HoldLeg & { account: 'buyer_id' | 'seller_id' };
  const amountSql = (l: HoldLeg) => `${l.sign < 0 ? '-' : ''}${h}.${l.amount}`;
  const selects = legs.map((l) =>
    isParty(l.account)
      ? `SELECT ${refs.tx}, ${agentAccountSql(`${h}.${l.account}`)}, ${amountSql(l)}, '${l.entry}', moved.balance, ${refs.purchase}, NULL, NULL, ${refs.at}::timestamptz FROM ${h} ${movedJoin}`
      : `SELECT ${refs.tx}, ${l.account === 'escrow' ? refs.escrow : refs.fees}, ${amountSql(l)}, '${l.entry}', NULL, ${refs.purchase}, NULL, NULL, ${refs.at}::timestamptz FROM ${h} ${fromClaim} WHERE ${h}.${l.amount} > 0`,
  );
  return { credit, postings: selects.join('\n       UNION ALL\n       ') };
}

/**
 * The first two steps of resolving a purchase's pending hold in one statement: `h` marks it resolved
 * (only if still pending) and returns `returning`; `claim` records the transaction under its key.
 * Parameters: $1 transaction id, $2 key, $3 purchase id, $4 time, $5 fingerprint.
 */
function resolveHoldSql(status: 'posted' | 'voided', type: 'escrow_settle' | 'escrow_void', returning: string): string {
  return `h AS (
       UPDATE ledger.holds SET status = '${status}', final_transaction_id = $1, resolved_at = $4
        WHERE purchase_id = $3 AND status = 'pending' AND evaluator_fee_gas = 0
        RETURNING ${returning}),
     claim AS (
       INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, created_at)
       SELECT $1, $2, '${type}', $5, $3, $4 FROM h RETURNING id)`;
}

/** How a pending hold is resolved in one statement: posted (seller, fee) or voided (back to the buyer). */
interface Resolution {
  status: 'posted' | 'voided';
  type: 'escrow_settle' | 'escrow_void';
}

/**
 * The one statement of a resolution: resolve the hold and claim the key (resolveHoldSql), credit the agent
 * (their account is created on a first credit; nothing to credit when the amount is 0), post the legs of
 * holdLegs — rendered here, not restated — and answer what was resolved.
 * Parameters: $1–$5 as resolveHoldSql, $6 the holding account, $7 the fees account (only when a leg posts a fee: settle).
 */
function resolutionSql(r: Resolution): string {
  const { credit, postings } = renderLegs(r.status, 'h', ', claim', ', moved', { tx: '$1', purchase: '$3', at: '$4', escrow: '$6', fees: '$7' });
  return `WITH ${resolveHoldSql(r.status, r.type, `${credit.account}, amount_gas, seller_net_gas, platform_fee_gas`)},
     moved AS (${creditAgentSql(`h.${credit.account}`, `h.${credit.amount}`, `h, claim WHERE h.${credit.amount} > 0`)}),
     posted AS (
       INSERT INTO ledger.postings (${POSTING_COLUMNS})
       ${postings})
     SELECT (SELECT id FROM claim) AS claimed, h.${credit.account} AS agent_id, h.amount_gas, h.seller_net_gas, h.platform_fee_gas, (SELECT balance FROM moved) AS balance
       FROM (SELECT 1) one LEFT JOIN h ON true`;
}

type ResolutionRow = { claimed: string | null; agent_id: string | null; amount_gas: string; seller_net_gas: string; platform_fee_gas: string; balance: string | null };

const SETTLE: Resolution = { status: 'posted', type: 'escrow_settle' };
const VOID: Resolution = { status: 'voided', type: 'escrow_void' };

/**
 * The common case in one statement, in its own transaction: the pending hold turns posted, the key is
 * claimed, the seller is credited the held net (their account is created on a first sale) and the
 * release and fee are posted. It changes nothing (and answers null) when the hold is not pending, and
 * fails whole on a key claimed before or a first sale racing another; those take the stepwise path.
 */
async function settlePendingHold(db: Db, at: Date, key: string, purchaseId: string): Promise<SettleResult | null> {
  const id = newId('txn');
  const r = await db.query<ResolutionRow>(resolutionSql(SETTLE), [id, key, purchaseId, at, JSON.stringify({ purchaseId }), PLATFORM.escrowHolds, PLATFORM.platformFees]);
  const row = r.rows[0];
  if (row.claimed === null) return null;
  return {
    transactionId: id,
    purchaseId,
    status: 'posted',
    sellerId: row.agent_id!,
    priceGas: Number(row.amount_gas),
    sellerNetGas: Number(row.seller_net_gas),
    platformFeeGas: Number(row.platform_fee_gas),
    replayed: false,
  };
}

/**
 * Several purchases' settles in ONE statement (the consumer's group commit, issue #22): each pending hold
 * turns posted, its key is claimed, its seller is credited the held net and its release and fee are
 * posted — exactly what settlePendingHold writes for one, as one ledger transaction each. The sellers must
 * be distinct (each credit's balance_after is its own): a seller credited twice, or a key claimed before,
 * fails the whole statement and nothing moved — the caller then settles each alone. An answer of null for
 * a purchase: its hold was not pending here (settleHold alone answers it: a replay or invalid_state).
 */
export async function settlePendingHolds(db: Db, at: Date, settles: ReadonlyArray<{ key: string; purchaseId: string }>): Promise<Array<SettleResult | null>> {
  const items = settles.map(({ key, purchaseId }, n) => ({ n, id: newId('txn'), key, purchase_id: purchaseId, fingerprint: JSON.stringify({ purchaseId }) }));
  const r = await db.query<{ n: number; seller_id: string; amount_gas: string; seller_net_gas: string; platform_fee_gas: string }>(
    `WITH v AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(n int, id text, key text, purchase_id text, fingerprint text)),
     h AS (
       UPDATE ledger.holds SET status = 'posted', final_transaction_id = v.id, resolved_at = $2
         FROM v WHERE ledger.holds.purchase_id = v.purchase_id AND ledger.holds.status = 'pending' AND ledger.holds.evaluator_fee_gas = 0
       RETURNING v.n, v.id, v.key, v.fingerprint, ledger.holds.purchase_id, ledger.holds.seller_id,
                 ledger.holds.amount_gas, ledger.holds.seller_net_gas, ledger.holds.platform_fee_gas),
     claim AS (
       INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, created_at)
       SELECT h.id, h.key, 'escrow_settle', h.fingerprint, h.purchase_id, $2 FROM h RETURNING id),
     moved AS (
       INSERT INTO ledger.accounts (id, kind, agent_id, balance)
       SELECT ${agentAccountSql('h.seller_id')}, 'agent', h.seller_id, h.seller_net_gas FROM h JOIN claim ON claim.id = h.id
        WHERE h.seller_net_gas > 0 ORDER BY h.seller_id
       ON CONFLICT (id) DO UPDATE SET balance = ledger.accounts.balance + EXCLUDED.balance
       RETURNING agent_id, balance),
     posted AS (
       INSERT INTO ledger.postings (${POSTING_COLUMNS})
       ${SETTLE_BATCH_POSTINGS})
     SELECT h.n, h.seller_id, h.amount_gas, h.seller_net_gas, h.platform_fee_gas FROM h JOIN claim ON claim.id = h.id`,
    [JSON.stringify(items), at, PLATFORM.escrowHolds, PLATFORM.platformFees],
  );
  const byN = new Map(r.rows.map((row) => [Number(row.n), row]));
  return items.map(({ n, id, purchase_id: purchaseId }) => {
    const row = byN.get(n);
    if (!row) return null;
    return {
      transactionId: id,
      purchaseId,
      status: 'posted',
      sellerId: row.seller_id,
      priceGas: Number(row.amount_gas),
      sellerNetGas: Number(row.seller_net_gas),
      platformFeeGas: Number(row.platform_fee_gas),
      replayed: false,
    };
  });
}

/** The batched settle's postings: holdLegs('posted') rendered over each row `h` (its own transaction id, its seller's credit). */
const SETTLE_BATCH_POSTINGS = renderLegs('posted', 'h', 'JOIN claim ON claim.id = h.id', 'JOIN moved ON moved.agent_id = h.seller_id', {
  tx: 'h.id',
  purchase: 'h.purchase_id',
  at: '$2',
  escrow: '$3',
  fees: '$4',
}).postings;

/** A settle the completed-purchase consumer asks for: its key, its purchase, and (from the event) its seller. */
export interface SettleRequest {
  key: string;
  purchaseId: string;
  sellerId: string;
  /** A hold with an evaluator: its fee goes to the evaluator (a verdict) or back to the buyer. */
  evaluatorPaid?: boolean;
}

/**
 * The consumer's group commit of settles: a lone settle is settleHold; settles of distinct purchases and
 * sellers arriving while one runs go out together (settlePendingHolds), and any that statement does not
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
    { maxInFlight: BACKGROUND_IN_FLIGHT, maxBatch: 50, keys: (r) => [r.sellerId, r.purchaseId] },
  );
}

async function settleHoldStepwise(tx: Queryable, at: Date, key: string, purchaseId: string, evaluatorPaid: boolean): Promise<SettleResult> {
  const claim = await claimKey(tx, { key, type: 'escrow_settle', fingerprint: JSON.stringify({ purchaseId }), purchaseId, at });
  const hold = (await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1 FOR UPDATE', [purchaseId])).rows[0];
  if (!hold) throw new NotFoundError(`No escrow hold for purchase ${purchaseId}.`, { hint: 'Hold the gas (ledger.hold) before settling.' });
  // The price (the evaluator's fee, if any, is held on top of it).
  const priceGas = Number(hold.amount_gas) - Number(hold.evaluator_fee_gas ?? 0);
  const sellerNetGas = Number(hold.seller_net_gas);
  const platformFeeGas = Number(hold.platform_fee_gas);
  const result = {
    transactionId: claim.replayed ? claim.row.id : claim.id,
    purchaseId,
    status: 'posted' as const,
    sellerId: hold.seller_id,
    priceGas,
    sellerNetGas,
    platformFeeGas,
  };
  if (claim.replayed) return { ...result, replayed: true };
  if (hold.status !== 'pending') {
    throw new InvalidStateError(`The hold of purchase ${purchaseId} is already ${hold.status}.`, {
      hint: 'A hold is posted or voided exactly once.',
      details: { holdStatus: hold.status },
    });
  }
  await applyLegs(tx, claim.id, resolutionLegs(hold, 'posted', evaluatorPaid), { purchaseId }, at);
  await tx.query(
    `UPDATE ledger.holds SET status = 'posted', final_transaction_id = $2, resolved_at = $3 WHERE purchase_id = $1 AND status = 'pending'`,
    [purchaseId, claim.id, at],
  );
  return { ...result, replayed: false };
}

export async function voidHold(db: Db, at: Date, key: string, purchaseId: string, evaluatorPaid = false) {
  // The common case in one statement, in its own transaction (like settle): the pending hold turns
  // voided, the key is claimed, the buyer gets the held gas back. A replay (the key fails the
  // statement) or a hold not pending changes nothing here and takes the stepwise path.
  const id = newId('txn');
  const fast = await db
    .query<ResolutionRow>(resolutionSql(VOID), [id, key, purchaseId, at, JSON.stringify({ purchaseId }), PLATFORM.escrowHolds])
    .catch(stepwiseOnConflict);
  const row = fast?.rows[0];
  if (row && row.claimed !== null) {
    const amountGas = Number(row.amount_gas);
    return { transactionId: id, purchaseId, status: 'voided' as const, buyerId: row.agent_id!, amountGas, gasBalance: Number(row.balance), replayed: false };
  }
  return db.transaction(async (tx) => {
    const claim = await claimKey(tx, { key, type: 'escrow_void', fingerprint: JSON.stringify({ purchaseId }), purchaseId, at });
    const hold = (await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1 FOR UPDATE', [purchaseId])).rows[0];
    if (!hold) throw new NotFoundError(`No escrow hold for purchase ${purchaseId}.`, { hint: 'Only a held purchase can be refunded.' });
    const amountGas = Number(hold.amount_gas);
    const result = { transactionId: claim.replayed ? claim.row.id : claim.id, purchaseId, status: 'voided' as const, buyerId: hold.buyer_id, amountGas };
    if (claim.replayed) return { ...result, gasBalance: await agentBalance(tx, hold.buyer_id), replayed: true };
    if (hold.status !== 'pending') {
      throw new InvalidStateError(`The hold of purchase ${purchaseId} is already ${hold.status}.`, {
        hint: 'A hold is posted or voided exactly once.',
        details: { holdStatus: hold.status },
      });
    }
    const balances = await applyLegs(tx, claim.id, resolutionLegs(hold, 'voided', evaluatorPaid), { purchaseId }, at);
    await tx.query(
      `UPDATE ledger.holds SET status = 'voided', final_transaction_id = $2, resolved_at = $3 WHERE purchase_id = $1 AND status = 'pending'`,
      [purchaseId, claim.id, at],
    );
    return { ...result, gasBalance: balances.get(hold.buyer_id)!, replayed: false };
  });
}
