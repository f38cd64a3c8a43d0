/** Escrow, disputes: either party freezes the escrow; an operator resolves it; payments reads a seller's record. */
import type { ServiceSchemaOf } from '../../packages/runtime';
import type { Context } from 'moleculer';
import { DISPUTE_LOOKBACK_DAYS } from '../../packages/market-rules';
import type { CallMeta } from '../../packages/tool-catalogue/meta';
import type { DisputeHistory } from '../../packages/contracts/escrow';
import { iso, toView, type PurchaseRow } from './purchases';
import { lifecycleTool } from './lifecycle-tool';
import type { EscrowThis } from './types';

const DAY_MS = 86_400_000;

export const disputesMixin: Partial<ServiceSchemaOf<EscrowThis>> = {
  actions: {
    dispute: lifecycleTool<{ purchaseId: string; reason: string }>(
      'dispute_purchase',
      'dispute',
      'party',
      ({ reason }) => ({ dispute_reason: reason.trim() }),
      ({ reason }) => ({ dispute_reason: reason.trim() }),
    ),

    /** Payments (cash-out eligibility): a seller's dispute record. */
    disputeHistory: {
      params: { sellerId: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ sellerId: string }>): Promise<DisputeHistory> {
        const since = new Date(this.now().getTime() - DISPUTE_LOOKBACK_DAYS * DAY_MS).toISOString();
        const r = await this.db.query<{ open: string; lost: string; total: string }>(
          `SELECT count(*) FILTER (WHERE status = 'disputed') AS open,
                  count(*) FILTER (WHERE dispute_outcome = 'refund' AND dispute_resolved_at >= $2) AS lost,
                  count(*) FILTER (WHERE disputed_at >= $2) AS total
             FROM escrow.purchases WHERE seller_id = $1 AND disputed_at IS NOT NULL`,
          [ctx.params.sellerId, since],
        );
        return {
          openAsSeller: Number(r.rows[0].open),
          lostLast90Days: Number(r.rows[0].lost),
          disputesLast90Days: Number(r.rows[0].total),
        };
      },
    },

    /** Operator: disputes with both sides' messages and the delivery. */
    listDisputes: {
      params: { status: { type: 'enum', values: ['open', 'resolved', 'all'], optional: true }, limit: { type: 'number', integer: true, min: 1, max: 200, optional: true } },
      async handler(this: EscrowThis, ctx: Context<{ status?: 'open' | 'resolved' | 'all'; limit?: number }>) {
        const status = ctx.params.status ?? 'open';
        const r = await this.db.query<PurchaseRow>(
          `SELECT * FROM escrow.purchases
            WHERE disputed_at IS NOT NULL
              AND ($1 = 'all' OR ($1 = 'open' AND status = 'disputed') OR ($1 = 'resolved' AND dispute_resolved_at IS NOT NULL))
            ORDER BY disputed_at ASC LIMIT $2`,
          [status, ctx.params.limit ?? 100],
        );
        const disputes = [];
        for (const row of r.rows) {
          disputes.push({
            purchase: toView(row),
            disputedBy: row.disputed_by,
            reason: row.dispute_reason,
            outcome: row.dispute_outcome,
            note: row.dispute_note,
            resolvedAt: iso(row.dispute_resolved_at),
            resolvedBy: row.dispute_resolved_by,
            delivery: row.delivery_json ? { delivery: JSON.parse(row.delivery_json), sha256: row.delivery_sha256, deliveredAt: iso(row.delivered_at) } : null,
            messages: await this.messagesOf(row.id, 0),
          });
        }
        return { disputes };
      },
    },

    /** Operator: resolve a dispute as a refund to the buyer or a release to the seller. */
    resolveDispute: {
      params: {
        purchaseId: 'string',
        outcome: { type: 'enum', values: ['refund', 'release'] },
        note: { type: 'string', optional: true, max: 4000 },
      },
      async handler(this: EscrowThis, ctx: Context<{ purchaseId: string; outcome: 'refund' | 'release'; note?: string }, CallMeta>) {
        const { purchaseId, outcome } = ctx.params;
        const operator = ctx.meta.operator ?? 'operator';
        const row = await this.engine.fire(purchaseId, outcome === 'refund' ? 'resolve_refund' : 'resolve_release', 'operator', {
          dispute_note: ctx.params.note ?? null,
          dispute_resolved_by: operator,
        }, 'resolveDispute');
        return { purchase: toView(row) };
      },
    },

  },
};
