/**
 * Escrow, reads for others: the audit cross-check with the ledger (escrow is one layer above it,
 * so escrow asks the ledger, never the reverse), its side of the reconciling audit (purchase and
 * referral records, joined by packages/ledger-audit) and the public liquidity figures. Reads never write.
 */
import type { ServiceSchemaOf } from '../../packages/runtime';
import type { Context } from 'moleculer';
import { DEMAND_FOCUS_CATEGORIES } from '../../packages/market-rules';
import { callAgents, AGENTS } from '../../packages/contracts/agents';
import { callLedger, LEDGER, type HoldView } from '../../packages/contracts/ledger';
import type { AuditCheck } from '../../packages/contracts/ledger';
import type { OpenPurchase, PurchaseRecord, ReferralRecord } from '../../packages/contracts/escrow';
import type { RecordQuery } from '../../packages/contracts/ledger';
import { isoOrNull, recordPage, RECORD_QUERY_PARAMS } from '../../packages/ledger-audit/records';
import { FUNDED_STATUSES, HELD_STATUSES, OPEN_STATUSES } from '../../packages/contracts/purchase-machine';
import type { EscrowThis } from './types';
import type { PurchaseRow } from './purchases';

const DAY_MS = 86_400_000;

interface ReferralCheckRow {
  buyer_id: string;
  referrer_id: string;
  purchase_id: string;
  checked_at: Date | string;
}
/** A purchase closed a moment ago may still have its event on the way to the ledger: re-check once after this. */
const AUDIT_RECHECK_MS = 1500;
const CHUNK = 500;

function unavailableReason(err: unknown, action: string): string {
  const type = (err as { type?: string })?.type;
  if (type === 'SERVICE_NOT_FOUND' || type === 'SERVICE_NOT_AVAILABLE' || type === 'REQUEST_TIMEOUT' || type === 'REQUEST_REJECTED') {
    return 'the ledger service is not available';
  }
  return `${action} failed: ${(err as Error)?.message ?? err}`;
}

async function openIdsAmong(self: EscrowThis, ids: string[]): Promise<Set<string>> {
  const open = new Set<string>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const r = await self.db.query<{ id: string }>('SELECT id FROM escrow.purchases WHERE id = ANY($1::text[]) AND status = ANY($2::text[])', [
      ids.slice(i, i + CHUNK),
      OPEN_STATUSES,
    ]);
    for (const x of r.rows) open.add(x.id);
  }
  return open;
}

async function heldPurchases(self: EscrowThis): Promise<OpenPurchase[]> {
  // What the hold holds: the price and the evaluator's fee (issue #35).
  const r = await self.db.query<{ id: string; buyer_id: string; price_gas: number; status: OpenPurchase['status'] }>(
    'SELECT id, buyer_id, price_gas + evaluator_fee_gas AS price_gas, status FROM escrow.purchases WHERE status = ANY($1::text[]) ORDER BY id',
    [HELD_STATUSES],
  );
  return r.rows.map((x) => ({ purchaseId: x.id, buyerId: x.buyer_id, amountGas: Number(x.price_gas), status: x.status }));
}

/** Every pending hold in the ledger belongs to a purchase escrow still reports open. */
async function holdsBelongToOpenPurchases(self: EscrowThis, ctx: Context): Promise<AuditCheck> {
  const name = 'pending_holds_belong_to_open_purchases';
  const pendingIds = async () => (await callLedger(ctx, LEDGER.openHolds, {})).map((h) => h.purchaseId);
  try {
    const ids = await pendingIds();
    if (ids.length === 0) return { name, ok: true, message: 'no pending holds' };
    const orphansOf = async (candidates: string[]) => {
      const open = await openIdsAmong(self, candidates);
      return candidates.filter((id) => !open.has(id));
    };
    let orphans = await orphansOf(ids);
    if (orphans.length) {
      await new Promise((r) => setTimeout(r, AUDIT_RECHECK_MS));
      const still = new Set(await pendingIds());
      orphans = await orphansOf(orphans.filter((id) => still.has(id)));
    }
    return orphans.length === 0
      ? { name, ok: true, message: `all ${ids.length} pending holds belong to open purchases` }
      : { name, ok: false, message: `${orphans.length} pending holds belong to no open purchase`, details: { purchaseIds: orphans.slice(0, 20) } };
  } catch (err) {
    return { name, ok: true, skipped: true, message: `skipped: ${unavailableReason(err, LEDGER.openHolds)}` };
  }
}

/** Every funded open purchase has a pending hold of its price and of its quoted split. */
async function openPurchasesHaveHolds(self: EscrowThis, ctx: Context): Promise<AuditCheck> {
  const name = 'open_purchases_have_pending_holds';
  const purchases = await heldPurchases(self);
  if (purchases.length === 0) return { name, ok: true, message: 'no funded open purchases' };
  const holds = new Map<string, HoldView>();
  try {
    for (let i = 0; i < purchases.length; i += CHUNK) {
      const chunk = purchases.slice(i, i + CHUNK).map((p) => p.purchaseId);
      for (const h of await callLedger(ctx, LEDGER.holdsOf, { purchaseIds: chunk })) holds.set(h.purchaseId, h);
    }
  } catch (err) {
    return { name, ok: true, skipped: true, message: `skipped: ${unavailableReason(err, LEDGER.holdsOf)}` };
  }
  const problems = purchases
    .map((p) => {
      const h = holds.get(p.purchaseId);
      if (!h) return { purchaseId: p.purchaseId, problem: 'no hold' };
      if (h.status !== 'pending') return { purchaseId: p.purchaseId, problem: `hold is ${h.status}` };
      if (Number(h.amountGas) !== Number(p.amountGas)) return { purchaseId: p.purchaseId, problem: `hold ${h.amountGas} ≠ price ${p.amountGas}` };
      return null;
    })
    .filter((x): x is { purchaseId: string; problem: string } => x !== null);
  return problems.length === 0
    ? { name, ok: true, message: `all ${purchases.length} funded open purchases have a pending hold of their price` }
    : { name, ok: false, message: `${problems.length} funded open purchases lack a matching pending hold`, details: { purchases: problems.slice(0, 20) } };
}

export const reportsMixin: Partial<ServiceSchemaOf<EscrowThis>> = {
  actions: {
    /** Which of these purchases are still open (their holds should still exist). */
    openPurchaseIds: {
      params: { purchaseIds: { type: 'array', items: 'string', max: 100000 } },
      async handler(this: EscrowThis, ctx: Context<{ purchaseIds: string[] }>) {
        if (ctx.params.purchaseIds.length === 0) return [];
        return [...(await openIdsAmong(this, ctx.params.purchaseIds))];
      },
    },

    /** Every funded open purchase, to compare with ledger.openHolds. */
    openPurchases: {
      async handler(this: EscrowThis) {
        return heldPurchases(this);
      },
    },

    /** The audit's cross-checks between escrow's open purchases and the ledger's pending holds. */
    auditHolds: {
      async handler(this: EscrowThis, ctx: Context): Promise<AuditCheck[]> {
        return [await holdsBelongToOpenPurchases(this, ctx), await openPurchasesHaveHolds(this, ctx)];
      },
    },

    /** The reconciling audit's page of purchases (parties, price, quoted split, status); `ids` are purchase ids. Reads only. */
    purchaseRecords: {
      params: RECORD_QUERY_PARAMS,
      async handler(this: EscrowThis, ctx: Context<RecordQuery>) {
        return recordPage<PurchaseRow, PurchaseRecord>(
          this.db,
          {
            select: `SELECT id, buyer_id, seller_id, price_gas, platform_fee_gas, seller_net_gas, evaluator_fee_gas, status, completed_at, refunded_at, updated_at
                       FROM escrow.purchases WHERE true`,
            key: 'id',
            order: 'id',
            pageFilter: 'status = ANY($2::text[])',
          },
          ctx.params,
          (p) => ({
            purchaseId: p.id,
            buyerId: p.buyer_id,
            sellerId: p.seller_id,
            priceGas: Number(p.price_gas),
            platformFeeGas: Number(p.platform_fee_gas),
            sellerNetGas: Number(p.seller_net_gas),
            evaluatorFeeGas: Number(p.evaluator_fee_gas ?? 0),
            status: p.status,
            completedAt: isoOrNull(p.completed_at),
            refundedAt: isoOrNull(p.refunded_at),
            updatedAt: isoOrNull(p.updated_at)!,
          }),
          this.now(),
        );
      },
    },

    /** The reconciling audit's page of qualified referrals (a referrer other than the buyer); `ids` are referred agents' ids. Reads only. */
    referralRecords: {
      params: RECORD_QUERY_PARAMS,
      async handler(this: EscrowThis, ctx: Context<RecordQuery>) {
        return recordPage<ReferralCheckRow, ReferralRecord>(
          this.db,
          {
            select: 'SELECT buyer_id, referrer_id, purchase_id, checked_at FROM escrow.referral_checks WHERE referrer_id IS NOT NULL AND referrer_id <> buyer_id',
            key: 'buyer_id',
            order: 'buyer_id',
          },
          ctx.params,
          (c) => ({ referredId: c.buyer_id, referrerId: c.referrer_id, purchaseId: c.purchase_id, checkedAt: isoOrNull(c.checked_at)! }),
          this.now(),
        );
      },
    },

    /** GET /api/public/liquidity. */
    liquidity: {
      async handler(this: EscrowThis) {
        const now = this.now();
        const since = new Date(now.getTime() - 7 * DAY_MS).toISOString();
        const [p, byCat, reg] = await Promise.all([
          this.db.query<{ purchases: string; completed: string; volume: string | null }>(
            `SELECT count(*) AS purchases,
                    count(*) FILTER (WHERE status = 'completed') AS completed,
                    sum(price_gas) AS volume
               FROM escrow.purchases WHERE created_at >= $1 AND status = ANY($2::text[])`,
            [since, FUNDED_STATUSES],
          ),
          this.db.query<{ category: string | null; n: string }>(
            `SELECT category, count(*) AS n FROM escrow.purchases
              WHERE created_at >= $1 AND status = ANY($2::text[]) GROUP BY category`,
            [since, FUNDED_STATUSES],
          ),
          callAgents(this.broker, AGENTS.count, { since }),
        ]);
        const purchases7d = Number(p.rows[0].purchases);
        const registrations = Number(reg.total);
        const byCategory7d: Record<string, number> = {};
        for (const r of byCat.rows) byCategory7d[r.category ?? 'general'] = (byCategory7d[r.category ?? 'general'] ?? 0) + Number(r.n);
        return {
          purchases7d,
          completed7d: Number(p.rows[0].completed),
          gasVolume7d: Number(p.rows[0].volume ?? 0),
          registrations,
          registrations7d: Number(reg.since),
          density: registrations > 0 ? Math.round((purchases7d / registrations) * 10000) / 10000 : 0,
          densityDefinition: 'purchases7d / registrations (funded purchases in the last 7 days per registered agent; 0 when none)',
          byCategory7d,
          demandFocusCategories: [...DEMAND_FOCUS_CATEGORIES],
          windowDays: 7,
          asOf: now.toISOString(),
        };
      },
    },

  },
};
