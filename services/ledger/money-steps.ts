/**
 * The ledger's money steps, one function each, every one a single database transaction under a
 * caller-supplied idempotency key (replaying the key returns the first result and moves nothing):
 *
 *   creditGasPurchase  card_issuance → agent
 *   (holds.ts: holdGas, settleHold, voidHold — a purchase's escrow hold)
 *   creditReferral     referral_bonuses → referrer (weekly cap)
 *   debitCashout       agent → payouts_pending (carries the quoted fee)
 *   finishCashout      payouts_pending → payouts_paid + platform_fees, or back to the agent
 */
import type { Db } from '../../packages/db';
import { InvalidArgumentsError, InvalidStateError, NotFoundError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import { cashoutSplit, REFERRAL_BONUS_GAS, REFERRAL_WEEKLY_CAP } from '../../packages/market-rules';
import type { CashoutDebitParams, CreditGasPurchaseParams } from '../../packages/contracts/ledger';
import { agentAccount, agentBalance, claimKey, ensureAgentAccount, stepwiseOnConflict, withdrawableIn, type CashoutRow } from './postings';
import { postingsSql, postLegs } from './legs';

const DAY_MS = 86_400_000;

/** A gas credit in one statement: claim the key, credit the agent (a first credit opens the account), post. */
const CREDIT_SQL = `WITH step AS (
       SELECT $1::text AS id, $2::text AS key, $3::text AS fingerprint, $4::text AS session_id, $5::timestamptz AS created_at,
              $6::text AS agent_id, $7::bigint AS gas),
     ${postingsSql({ step: 'step', type: 'gas_purchase', refs: ['session_id'], claim: true, accounts: 'create' })}
     SELECT balance FROM moved`;

export async function creditGasPurchase(db: Db, at: Date, p: CreditGasPurchaseParams) {
  const { key, agentId, gas, sessionId, packId } = p;
  // The common case in one statement, in its own transaction: claim the key, credit the agent
  // (creating the account on a first purchase) and post both legs. A key claimed before fails the
  // statement whole (nothing moved) and the stepwise path answers the replay.
  const id = newId('txn');
  const fingerprint = JSON.stringify({ agentId, gas, sessionId, packId });
  const fast = await db.query<{ balance: string }>(CREDIT_SQL, [id, key, fingerprint, sessionId, at, agentId, gas]).catch(stepwiseOnConflict);
  if (fast?.rows[0]) return { transactionId: id, gasBalance: Number(fast.rows[0].balance), replayed: false };
  return db.transaction(async (tx) => {
    const claim = await claimKey(tx, { key, type: 'gas_purchase', fingerprint, sessionId, at });
    if (claim.replayed) return { transactionId: claim.row.id, gasBalance: await agentBalance(tx, agentId), replayed: true };
    const balances = await postLegs(tx, 'gas_purchase', claim.id, { agent_id: agentId, gas }, { sessionId }, at);
    return { transactionId: claim.id, gasBalance: balances.get(agentId)!, replayed: false };
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
    await postLegs(tx, 'referral_bonus', claim.id, { referrer_id: referrerId, bonus_gas: REFERRAL_BONUS_GAS }, {}, at);
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
    const balances = await postLegs(tx, 'cashout', claim.id, { agent_id: agentId, amount_gas: amountGas }, { cashoutId }, at);
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
    const balances = await postLegs(tx, outcome === 'paid' ? 'cashout_paid' : 'cashout_returned', claim.id, { agent_id: c.agent_id, amount_gas: amountGas, fee_gas: feeGas }, { cashoutId }, at);
    await tx.query(`UPDATE ledger.cashouts SET status = $2, final_transaction_id = $3, resolved_at = $4 WHERE cashout_id = $1`, [
      cashoutId,
      outcome,
      claim.id,
      at,
    ]);
    return { ...base, gasBalance: balances.get(c.agent_id) ?? (await agentBalance(tx, c.agent_id)), replayed: false };
  });
}
