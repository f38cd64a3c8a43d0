/** ledger.metricsSnapshot (internal, read-only): gas credited by purchases and released to sellers, for /metrics. */
import { metricsSnapshotMixin } from '../../packages/db/mixin';
import type { LedgerMetricsSnapshot } from '../../packages/contracts/ledger';
export type { LedgerMetricsSnapshot };

export const ledgerMetricsMixin = metricsSnapshotMixin<LedgerMetricsSnapshot>(async (db) => {
  const r = await db.query<{ credited: string | null; earned: string | null; fees: string | null }>(
    `SELECT sum(p.amount) FILTER (WHERE p.entry_type = 'gas_purchase' AND a.kind = 'agent') AS credited,
            sum(p.amount) FILTER (WHERE p.entry_type = 'sale_earn' AND a.kind = 'agent') AS earned,
            sum(p.amount) FILTER (WHERE p.entry_type = 'platform_fee' AND a.kind = 'platform') AS fees
       FROM ledger.postings p JOIN ledger.accounts a ON a.id = p.account_id`,
  );
  const held = await db.query<{ held: string | null }>(`SELECT sum(amount_gas) AS held FROM ledger.holds WHERE status = 'pending'`);
  const row = r.rows[0] ?? { credited: null, earned: null, fees: null };
  return {
    gasCreditedTotal: Number(row.credited ?? 0),
    saleEarnedTotal: Number(row.earned ?? 0),
    platformFeesTotal: Number(row.fees ?? 0),
    heldGas: Number(held.rows[0]?.held ?? 0),
  };
});
