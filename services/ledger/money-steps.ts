/**
 * The ledger's money steps, one function each, every one a single database transaction under a
 * caller-supplied idempotency key (replaying the key returns the first result and moves nothing):
 *
 *   creditGasPurchase  card_issuance → agent
 *   holdGas            agent → escrow_holds (pending; carries price, fee and seller net)
 *   settleHold         escrow_holds → seller (sale_earn) + platform_fees, exactly the held split
 *   voidHold           escrow_holds → buyer (escrow_refund)
 *   creditReferral     referral_bonuses → referrer (weekly cap)
 *   debitCashout       agent → payouts_pending (carries the quoted fee)
 *   finishCashout      payouts_pending → payouts_paid + platform_fees, or back to the agent
 */
import type { Db, Queryable } from '../../packages/db';
import { InvalidArgumentsError, InvalidStateError, NotFoundError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import { cashoutSplit, REFERRAL_BONUS_GAS, REFERRAL_WEEKLY_CAP, saleSplit } from '../../packages/market-rules';
import type { CashoutDebitParams, CreditGasPurchaseParams, HoldParams, HoldResult, SettleResult } from './contracts';
import {
  agentAccount,
  agentBalance,
  applyLegs,
  claimKey,
  ensureAgentAccount,
  PLATFORM,
  POSTING_COLUMNS,
  withdrawableIn,
  type CashoutRow,
  type HoldRow,
  type Leg,
} from './postings';

const DAY_MS = 86_400_000;

/**
 * A one-statement fast path that failed whole on a unique key (a key claimed before, a racing first
 * account) or a missing row it references moved nothing: null, and the stepwise path answers.
 */
function stepwiseOnConflict(err: { code?: string }): null {
  if (err?.code === '23505' || err?.code === '23503') return null;
  throw err;
}

export async function creditGasPurchase(db: Db, at: Date, p: CreditGasPurchaseParams) {
  const { key, agentId, gas, sessionId, packId } = p;
  // The common case in one statement, in its own transaction: claim the key, credit the agent
  // (creating the account on a first purchase) and post both legs. A key claimed before fails the
  // statement whole (nothing moved) and the stepwise path answers the replay.
  const id = newId('txn');
  const fast = await db
    .query<{ balance: string }>(
      `WITH claim AS (
         INSERT INTO ledger.transactions (id, key, type, fingerprint, session_id, created_at)
         VALUES ($1, $2, 'gas_purchase', $3, $4, $5) RETURNING id),
       moved AS (
         INSERT INTO ledger.accounts (id, kind, agent_id, balance)
         SELECT $6, 'agent', $7, $8::bigint FROM claim
         ON CONFLICT (id) DO UPDATE SET balance = ledger.accounts.balance + EXCLUDED.balance
         RETURNING balance),
       posted AS (
         INSERT INTO ledger.postings (${POSTING_COLUMNS})
         SELECT $1, $9, -$8::bigint, 'gas_purchase', NULL, NULL, $4, NULL, $5::timestamptz FROM claim
         UNION ALL
         SELECT $1, $6, $8::bigint, 'gas_purchase', moved.balance, NULL, $4, NULL, $5::timestamptz FROM moved)
       SELECT balance FROM moved`,
      [id, key, JSON.stringify({ agentId, gas, sessionId, packId }), sessionId, at, agentAccount(agentId), agentId, gas, PLATFORM.cardIssuance],
    )
    .catch(stepwiseOnConflict);
  if (fast?.rows[0]) return { transactionId: id, gasBalance: Number(fast.rows[0].balance), replayed: false };
  return db.transaction(async (tx) => {
    const claim = await claimKey(tx, { key, type: 'gas_purchase', fingerprint: JSON.stringify({ agentId, gas, sessionId, packId }), sessionId, at });
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
}

/** The split a hold carries: the one quoted at purchase, or (when the caller sends none) fixed now. */
function splitOf(p: HoldParams, feePercent: number): { platformFeeGas: number; sellerNetGas: number } {
  if (p.platformFeeGas === undefined && p.sellerNetGas === undefined) return saleSplit(p.amountGas, feePercent);
  const platformFeeGas = p.platformFeeGas ?? p.amountGas - p.sellerNetGas!;
  const sellerNetGas = p.sellerNetGas ?? p.amountGas - platformFeeGas;
  if (platformFeeGas < 0 || sellerNetGas < 0 || platformFeeGas + sellerNetGas !== p.amountGas) {
    throw new InvalidArgumentsError('platformFeeGas + sellerNetGas must equal amountGas.', {
      hint: 'Send the split quoted at purchase (saleSplit of the price).',
      details: { amountGas: p.amountGas, platformFeeGas, sellerNetGas },
    });
  }
  return { platformFeeGas, sellerNetGas };
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
         INSERT INTO ledger.holds (purchase_id, buyer_id, seller_id, amount_gas, platform_fee_gas, seller_net_gas, status, hold_transaction_id, created_at)
         SELECT $4, $9, $10, $6::bigint, $11, $12, 'pending', $1, $5::timestamptz FROM moved, claim)
       SELECT (SELECT balance FROM moved) AS balance`,
      [id, key, fingerprint, purchaseId, at, amountGas, agentAccount(buyerId), PLATFORM.escrowHolds, buyerId, sellerId, split.platformFeeGas, split.sellerNetGas],
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
        `INSERT INTO ledger.holds (purchase_id, buyer_id, seller_id, amount_gas, platform_fee_gas, seller_net_gas, status, hold_transaction_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8)`,
        [purchaseId, buyerId, sellerId, amountGas, split.platformFeeGas, split.sellerNetGas, claim.id, at],
      )
      .catch((err: { code?: string }) => {
        // A second hold for one purchase raced in under another key: this one rolls back, nothing moved.
        if (err?.code === '23505') throw alreadyHeld();
        throw err;
      });
    return { holdId: claim.id, purchaseId, status: 'pending', amountGas, replayed: false };
  });
}

/** Posts a hold with the amounts it carries: nothing is recomputed at settle time. */
export async function settleHold(db: Db, at: Date, key: string, purchaseId: string): Promise<SettleResult> {
  const fast = await settlePendingHold(db, at, key, purchaseId).catch(stepwiseOnConflict);
  return fast ?? db.transaction((tx) => settleHoldStepwise(tx, at, key, purchaseId));
}

/**
 * The common case in one statement, in its own transaction: the pending hold turns posted, the key is
 * claimed, the seller is credited the held net (their account is created on a first sale) and the
 * release and fee are posted. It changes nothing (and answers null) when the hold is not pending, and
 * fails whole on a key claimed before or a first sale racing another; those take the stepwise path.
 */
async function settlePendingHold(db: Db, at: Date, key: string, purchaseId: string): Promise<SettleResult | null> {
  const id = newId('txn');
  const r = await db.query<{ claimed: string | null; seller_id: string | null; amount_gas: string; seller_net_gas: string; platform_fee_gas: string }>(
    `WITH h AS (
       UPDATE ledger.holds SET status = 'posted', final_transaction_id = $1, resolved_at = $4
        WHERE purchase_id = $3 AND status = 'pending'
        RETURNING seller_id, amount_gas, seller_net_gas, platform_fee_gas),
     claim AS (
       INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, created_at)
       SELECT $1, $2, 'escrow_settle', $5, $3, $4 FROM h RETURNING id),
     moved AS (
       INSERT INTO ledger.accounts (id, kind, agent_id, balance)
       SELECT 'agent:' || h.seller_id, 'agent', h.seller_id, h.seller_net_gas FROM h, claim WHERE h.seller_net_gas > 0
       ON CONFLICT (id) DO UPDATE SET balance = ledger.accounts.balance + EXCLUDED.balance
       RETURNING balance),
     posted AS (
       INSERT INTO ledger.postings (${POSTING_COLUMNS})
       SELECT $1, $6, -h.amount_gas, 'escrow_release', NULL, $3, NULL, NULL, $4::timestamptz FROM h, claim
       UNION ALL
       SELECT $1, 'agent:' || h.seller_id, h.seller_net_gas, 'sale_earn', moved.balance, $3, NULL, NULL, $4::timestamptz FROM h, moved
       UNION ALL
       SELECT $1, $7, h.platform_fee_gas, 'platform_fee', NULL, $3, NULL, NULL, $4::timestamptz FROM h, claim WHERE h.platform_fee_gas > 0)
     SELECT (SELECT id FROM claim) AS claimed, h.seller_id, h.amount_gas, h.seller_net_gas, h.platform_fee_gas
       FROM (SELECT 1) one LEFT JOIN h ON true`,
    [id, key, purchaseId, at, JSON.stringify({ purchaseId }), PLATFORM.escrowHolds, PLATFORM.platformFees],
  );
  const row = r.rows[0];
  if (row.claimed === null) return null;
  return {
    transactionId: id,
    purchaseId,
    status: 'posted',
    sellerId: row.seller_id!,
    priceGas: Number(row.amount_gas),
    sellerNetGas: Number(row.seller_net_gas),
    platformFeeGas: Number(row.platform_fee_gas),
    replayed: false,
  };
}

async function settleHoldStepwise(tx: Queryable, at: Date, key: string, purchaseId: string): Promise<SettleResult> {
  const claim = await claimKey(tx, { key, type: 'escrow_settle', fingerprint: JSON.stringify({ purchaseId }), purchaseId, at });
  const hold = (await tx.query<HoldRow>('SELECT * FROM ledger.holds WHERE purchase_id = $1 FOR UPDATE', [purchaseId])).rows[0];
  if (!hold) throw new NotFoundError(`No escrow hold for purchase ${purchaseId}.`, { hint: 'Hold the gas (ledger.hold) before settling.' });
  const priceGas = Number(hold.amount_gas);
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
  await applyLegs(
    tx,
    claim.id,
    [
      { accountId: PLATFORM.escrowHolds, amount: -priceGas, entryType: 'escrow_release' },
      { accountId: agentAccount(hold.seller_id), agentId: hold.seller_id, amount: sellerNetGas, entryType: 'sale_earn' },
      { accountId: PLATFORM.platformFees, amount: platformFeeGas, entryType: 'platform_fee' },
    ],
    { purchaseId },
    at,
  );
  await tx.query(
    `UPDATE ledger.holds SET status = 'posted', final_transaction_id = $2, resolved_at = $3 WHERE purchase_id = $1 AND status = 'pending'`,
    [purchaseId, claim.id, at],
  );
  return { ...result, replayed: false };
}

export async function voidHold(db: Db, at: Date, key: string, purchaseId: string) {
  // The common case in one statement, in its own transaction (like settle): the pending hold turns
  // voided, the key is claimed, the buyer gets the held gas back. A replay (the key fails the
  // statement) or a hold not pending changes nothing here and takes the stepwise path.
  const id = newId('txn');
  const fast = await db
    .query<{ claimed: string | null; buyer_id: string | null; amount_gas: string; balance: string | null }>(
      `WITH h AS (
         UPDATE ledger.holds SET status = 'voided', final_transaction_id = $1, resolved_at = $4
          WHERE purchase_id = $3 AND status = 'pending'
          RETURNING buyer_id, amount_gas),
       claim AS (
         INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, created_at)
         SELECT $1, $2, 'escrow_void', $5, $3, $4 FROM h RETURNING id),
       moved AS (
         INSERT INTO ledger.accounts (id, kind, agent_id, balance)
         SELECT 'agent:' || h.buyer_id, 'agent', h.buyer_id, h.amount_gas FROM h, claim
         ON CONFLICT (id) DO UPDATE SET balance = ledger.accounts.balance + EXCLUDED.balance
         RETURNING balance),
       posted AS (
         INSERT INTO ledger.postings (${POSTING_COLUMNS})
         SELECT $1, $6, -h.amount_gas, 'escrow_refund', NULL, $3, NULL, NULL, $4::timestamptz FROM h, claim
         UNION ALL
         SELECT $1, 'agent:' || h.buyer_id, h.amount_gas, 'escrow_refund', moved.balance, $3, NULL, NULL, $4::timestamptz FROM h, moved)
       SELECT (SELECT id FROM claim) AS claimed, h.buyer_id, h.amount_gas, (SELECT balance FROM moved) AS balance
         FROM (SELECT 1) one LEFT JOIN h ON true`,
      [id, key, purchaseId, at, JSON.stringify({ purchaseId }), PLATFORM.escrowHolds],
    )
    .catch(stepwiseOnConflict);
  const row = fast?.rows[0];
  if (row && row.claimed !== null) {
    const amountGas = Number(row.amount_gas);
    return { transactionId: id, purchaseId, status: 'voided' as const, buyerId: row.buyer_id!, amountGas, gasBalance: Number(row.balance), replayed: false };
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
}

export async function creditReferral(db: Db, at: Date, key: string, referrerId: string, referredId: string) {
  return db.transaction(async (tx) => {
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
    const weekAgo = new Date(at.getTime() - 7 * DAY_MS);
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
}

/** Cash-out: agent → payouts_pending, at most the withdrawable amount (DESIGN §3); the quoted fee is stored with it. */
export async function debitCashout(db: Db, at: Date, p: CashoutDebitParams) {
  const { key, cashoutId, agentId, amountGas } = p;
  const feeGas = p.feeGas ?? cashoutSplit(amountGas).feeGas;
  if (feeGas < 0 || feeGas > amountGas) {
    throw new InvalidArgumentsError('feeGas must be between 0 and amountGas.', { details: { amountGas, feeGas } });
  }
  return db.transaction(async (tx) => {
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
      `INSERT INTO ledger.cashouts (cashout_id, agent_id, amount_gas, fee_gas, status, debit_transaction_id, created_at) VALUES ($1, $2, $3, $4, 'pending', $5, $6)`,
      [cashoutId, agentId, amountGas, feeGas, claim.id, at],
    );
    const gasBalance = balances.get(agentId)!;
    return { transactionId: claim.id, cashoutId, amountGas, gasBalance, withdrawableGas: w.withdrawableGas - amountGas, replayed: false };
  });
}

/** Paid: payouts_pending → payouts_paid (net) + platform_fees (the fee stored at debit). Returned: back to the agent in full. */
export async function finishCashout(db: Db, at: Date, key: string, cashoutId: string, outcome: 'paid' | 'returned') {
  return db.transaction(async (tx) => {
    const claim = await claimKey(tx, {
      key,
      type: outcome === 'paid' ? 'cashout_paid' : 'cashout_returned',
      fingerprint: JSON.stringify({ cashoutId }),
      cashoutId,
      at,
    });
    const c = (await tx.query<CashoutRow>('SELECT * FROM ledger.cashouts WHERE cashout_id = $1 FOR UPDATE', [cashoutId])).rows[0];
    if (!c) throw new NotFoundError(`No ledger debit for cash-out ${cashoutId}.`, { hint: 'Debit it first with ledger.cashoutDebit.' });
    const amountGas = Number(c.amount_gas);
    const feeGas = Number(c.fee_gas);
    const netGas = amountGas - feeGas;
    const base = {
      transactionId: claim.replayed ? claim.row.id : claim.id,
      cashoutId,
      agentId: c.agent_id,
      amountGas,
      feeGas: outcome === 'paid' ? feeGas : 0,
      netGas: outcome === 'paid' ? netGas : 0,
      status: outcome,
    };
    if (claim.replayed) return { ...base, gasBalance: await agentBalance(tx, c.agent_id), replayed: true };
    if (c.status !== 'pending') {
      throw new InvalidStateError(`Cash-out ${cashoutId} is already ${c.status}.`, { hint: 'A cash-out is paid or returned exactly once.' });
    }
    const legs: Leg[] =
      outcome === 'paid'
        ? [
            { accountId: PLATFORM.payoutsPending, amount: -amountGas, entryType: 'cashout_paid' },
            { accountId: PLATFORM.payoutsPaid, amount: netGas, entryType: 'cashout_paid' },
            { accountId: PLATFORM.platformFees, amount: feeGas, entryType: 'platform_fee' },
          ]
        : [
            { accountId: PLATFORM.payoutsPending, amount: -amountGas, entryType: 'cashout_returned' },
            { accountId: agentAccount(c.agent_id), agentId: c.agent_id, amount: amountGas, entryType: 'cashout_returned' },
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
}
