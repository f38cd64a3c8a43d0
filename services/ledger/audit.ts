/**
 * The ledger's own invariants (DESIGN §3), read from its tables only: the ledger calls nobody.
 * The cross-check with escrow's open purchases is escrow's (escrow.auditHolds, one layer up);
 * packages/ledger-audit runs both and merges the report.
 */
import type { Queryable } from '../../packages/db';
import { PLATFORM } from './postings';
import type { AuditCheck, AuditReport } from '../../packages/contracts/ledger';
export type { AuditCheck, AuditReport };

export async function ledgerAudit(db: Queryable): Promise<AuditReport> {
  const checks: AuditCheck[] = [];
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
    // Agent accounts store their balance: it must equal their postings and their last balance_after.
    // Platform accounts' balances are their postings by definition; their stored column is pinned at 0.
    `SELECT a.id, a.balance, COALESCE(p.total, 0) AS postings, l.balance_after AS last_after
       FROM ledger.accounts a
       LEFT JOIN (SELECT account_id, sum(amount) AS total, max(id) AS last_id FROM ledger.postings GROUP BY account_id) p ON p.account_id = a.id
       LEFT JOIN ledger.postings l ON l.id = p.last_id
      WHERE (a.kind = 'agent' AND (a.balance <> COALESCE(p.total, 0) OR (l.id IS NOT NULL AND l.balance_after IS DISTINCT FROM a.balance)))
         OR (a.kind = 'platform' AND a.balance <> 0)`,
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
    `SELECT (SELECT balance FROM ledger.account_balances WHERE id = $1) AS balance,
            (SELECT COALESCE(sum(amount_gas), 0) FROM ledger.holds WHERE status = 'pending') AS pending`,
    [PLATFORM.escrowHolds],
  );
  const payouts = await db.query<{ balance: string; pending: string }>(
    `SELECT (SELECT balance FROM ledger.account_balances WHERE id = $1) AS balance,
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

  const fixed = await db.query<{ purchase_id: string }>(
    `SELECT purchase_id FROM ledger.holds WHERE platform_fee_gas + seller_net_gas + evaluator_fee_gas <> amount_gas
        OR (evaluator_id IS NULL) <> (evaluator_fee_gas = 0) LIMIT 20`,
  );
  checks.push({
    name: 'holds_carry_their_split',
    ok: fixed.rowCount === 0,
    message: fixed.rowCount === 0 ? 'every hold carries a fee, seller net and evaluator fee that add up to its amount' : 'holds whose split does not add up',
    ...(fixed.rowCount ? { details: { purchaseIds: fixed.rows.map((r) => r.purchase_id) } } : {}),
  });

  return { ok: checks.every((c) => c.ok), checkedAt: new Date().toISOString(), checks };
}
