/**
 * Listings, completed sales: each `escrow.purchase.completed` event records the sale once and counts it
 * for the seller's reputation. The events a replica handles at once (the durable consumer delivers up to
 * its maxInFlight together) are written as ONE statement — sales, and one count per seller — with the group
 * commit of packages/db/batcher.ts (issue #22): a lone event is written at once, and what arrives while a
 * statement runs goes out in the next. The sale's purchase id is its own dedupe (a purchase completes once),
 * so no inbox row is written: a redelivered event or an already counted sale changes nothing; if the
 * statement fails, every event of it fails and is redelivered.
 */
import type { Db } from '../../packages/db';
import { BACKGROUND_IN_FLIGHT, Batcher } from '../../packages/db/batcher';
import type { OutboxEvent } from '../../packages/outbox';

export interface CompletedSale {
  purchaseId: string;
  sellerId: string;
  completedAt: string | null;
  /** An evaluator accepted the delivery (the sale completed on its verdict, issue #35). */
  evaluated: boolean;
}

/** The sale of one event: distinct purchases per statement (a repeat waits for the next). */
export function saleOf(event: OutboxEvent<{ purchaseId: string; sellerId: string; completedAt?: string; evaluatorId?: string | null; evaluatorPaid?: boolean }>): CompletedSale {
  const d = event.data;
  // A completed purchase pays its evaluator only after a verdict, and a completing verdict is an accept.
  return { purchaseId: d.purchaseId, sellerId: d.sellerId, completedAt: d.completedAt ?? null, evaluated: !!d.evaluatorId && d.evaluatorPaid === true };
}

export function completedSalesWriter(db: Db): Batcher<CompletedSale, void> {
  return new Batcher<CompletedSale, void>(
    async (batch) => {
      // Sellers are counted in id order, so two replicas' statements lock their rows in the same order.
      await db.query(
        `WITH v AS (SELECT * FROM jsonb_to_recordset($1::jsonb)
                      AS v(purchase_id text, seller_id text, completed_at timestamptz, evaluated boolean)),
         sale AS (
           INSERT INTO listings.completed_sales (purchase_id, seller_id, completed_at, evaluated)
           SELECT v.purchase_id, v.seller_id, COALESCE(v.completed_at, now()), COALESCE(v.evaluated, false) FROM v
           ON CONFLICT (purchase_id) DO NOTHING RETURNING seller_id, evaluated)
         INSERT INTO listings.sellers (id, sales_count, evaluated_sales_count)
           SELECT seller_id, count(*), count(*) FILTER (WHERE evaluated) FROM sale GROUP BY seller_id ORDER BY seller_id
         ON CONFLICT (id) DO UPDATE SET sales_count = listings.sellers.sales_count + EXCLUDED.sales_count,
           evaluated_sales_count = listings.sellers.evaluated_sales_count + EXCLUDED.evaluated_sales_count, updated_at = now()`,
        [
          JSON.stringify(
            batch.map(({ item }) => ({ purchase_id: item.purchaseId, seller_id: item.sellerId, completed_at: item.completedAt, evaluated: item.evaluated })),
          ),
        ],
      );
      for (const { settle } of batch) settle.resolve();
    },
    {
      maxInFlight: BACKGROUND_IN_FLIGHT,
      maxBatch: 100,
      keys: (sale) => [sale.purchaseId, sale.sellerId],
    },
  );
}
