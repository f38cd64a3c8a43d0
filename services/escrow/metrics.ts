/**
 * escrow.metricsSnapshot (internal, read-only): the business figures the gateway's /metrics shows —
 * purchases by state, and how far the outbox that carries settlements and refunds to the ledger lags.
 */
import { metricsSnapshotMixin } from '../../packages/db/mixin';
import type { EscrowMetricsSnapshot } from '../../packages/contracts/escrow';
export type { EscrowMetricsSnapshot };

export const escrowMetricsMixin = metricsSnapshotMixin<EscrowMetricsSnapshot>(async (db) => {
  const [byState, outbox] = await Promise.all([
    db.query<{ status: string; n: string }>('SELECT status, count(*) AS n FROM escrow.purchases GROUP BY status'),
    db.query<{ n: string; lag: string | null }>(
      `SELECT count(*) AS n, extract(epoch FROM now() - min(created_at)) AS lag FROM escrow.outbox WHERE published_at IS NULL`,
    ),
  ]);
  const purchasesByState: Record<string, number> = {};
  for (const r of byState.rows) purchasesByState[r.status] = Number(r.n);
  return {
    purchasesByState,
    outboxPending: Number(outbox.rows[0]?.n ?? 0),
    settlementLagSeconds: Math.max(0, Math.round(Number(outbox.rows[0]?.lag ?? 0))),
  };
});
