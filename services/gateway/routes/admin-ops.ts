/**
 * Operator: payouts, disputes, listings, reports, audit log (mounted under the admin auth of admin.ts).
 * Every mutating operator action is written to gateway.audit_log — who (req.operator), what, when,
 * before/after — whether it succeeded or not. The work itself is done by the owning service's actions.
 */
import type { Express, Request } from 'express';
import { InvalidArgumentsError } from '../../../packages/errors';
import type { GatewayDeps } from '../app';
import { adminKit } from './admin-kit';

const PAYOUT_STATUSES = ['requested', 'pending', 'paying', 'paid', 'rejecting', 'rejected', 'failed', 'all'];

function body(req: Request): Record<string, any> {
  return req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? req.body : {};
}

function limitOf(req: Request, max = 500): number | undefined {
  const raw = req.query.limit;
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new InvalidArgumentsError(`limit must be an integer between 1 and ${max}.`, { hint: `Use ?limit=50 (at most ${max}).`, details: { field: 'limit' } });
  }
  return n;
}

function requiredText(value: unknown, field: string, hint: string, min = 3): string {
  if (typeof value !== 'string' || value.trim().length < min) {
    throw new InvalidArgumentsError(`${field} is required (at least ${min} characters).`, { hint, details: { field } });
  }
  return value.trim();
}

/** The owning service answers either {<name>: …} or the bare object; the API always answers {<name>: …}. */
function asObject(name: string, value: any): Record<string, unknown> {
  return value && typeof value === 'object' && name in value ? value : { [name]: value };
}

export function registerAdminOpsRoutes(app: Express, deps: GatewayDeps): void {
  const { call, audited, wrap } = adminKit(deps);

  // ---- payouts ------------------------------------------------------------------------------------
  app.get('/api/admin/payouts', wrap(async (req, res) => {
    const status = typeof req.query.status === 'string' ? req.query.status : 'pending';
    if (!PAYOUT_STATUSES.includes(status)) {
      throw new InvalidArgumentsError(`Unknown payout status "${status}".`, { hint: `Use one of: ${PAYOUT_STATUSES.join(', ')}.`, details: { field: 'status' } });
    }
    const payouts = await call(req, 'payments.listPayouts', { status, limit: limitOf(req) });
    res.json({ ok: true, result: { status, payouts } });
  }));

  app.get('/api/admin/payouts/:id', wrap(async (req, res) => {
    res.json({ ok: true, result: { payout: await call(req, 'payments.getPayout', { cashoutId: String(req.params.id) }) } });
  }));

  app.post('/api/admin/payouts/:id/pay', wrap(async (req, res) => {
    const b = body(req);
    const cashoutId = String(req.params.id);
    const btcTxid = requiredText(b.btcTxid ?? b.txid, 'btcTxid', 'Send {"btcTxid": "<64 hex>", "btcAmount": "0.00529"}.', 1);
    const btcAmount = b.btcAmount ?? b.btc;
    if (btcAmount === undefined || btcAmount === null || btcAmount === '') {
      throw new InvalidArgumentsError('btcAmount is required.', { hint: 'Send the BTC amount the transaction paid, e.g. {"btcAmount": "0.00529"}.', details: { field: 'btcAmount' } });
    }
    await audited(req, res, {
      action: 'payouts.pay',
      target: cashoutId,
      params: { btcTxid, btcAmount },
      before: () => call(req, 'payments.getPayout', { cashoutId }),
      run: async () => ({ payout: await call(req, 'payments.markPayoutPaid', { cashoutId, btcTxid, btcAmount: typeof btcAmount === 'number' ? btcAmount : String(btcAmount) }) }),
    });
  }));

  app.post('/api/admin/payouts/:id/reject', wrap(async (req, res) => {
    const cashoutId = String(req.params.id);
    const reason = requiredText(body(req).reason, 'reason', 'Say why, e.g. {"reason": "address belongs to a sanctioned service"}; the agent sees it.');
    await audited(req, res, {
      action: 'payouts.reject',
      target: cashoutId,
      params: { reason },
      before: () => call(req, 'payments.getPayout', { cashoutId }),
      run: async () => ({ payout: await call(req, 'payments.rejectPayout', { cashoutId, reason }) }),
    });
  }));

  // ---- disputes -----------------------------------------------------------------------------------
  app.get('/api/admin/disputes', wrap(async (req, res) => {
    const params: Record<string, unknown> = {};
    if (typeof req.query.status === 'string') params.status = req.query.status;
    const r = await call<any>(req, 'escrow.listDisputes', params);
    res.json({ ok: true, result: { disputes: Array.isArray(r) ? r : (r?.disputes ?? []) } });
  }));

  app.post('/api/admin/disputes/:id/resolve', wrap(async (req, res) => {
    const purchaseId = String(req.params.id);
    const b = body(req);
    const outcome = b.outcome;
    if (outcome !== 'refund' && outcome !== 'release') {
      throw new InvalidArgumentsError('outcome must be "refund" (the buyer gets the gas back) or "release" (the seller is paid).', {
        hint: 'Send {"outcome": "refund"} or {"outcome": "release"}, optionally with "note".',
        details: { field: 'outcome' },
      });
    }
    const note = typeof b.note === 'string' && b.note.trim() ? b.note.trim() : undefined;
    await audited(req, res, {
      action: 'disputes.resolve',
      target: purchaseId,
      params: { outcome, note },
      before: async () => {
        const list = await call<any>(req, 'escrow.listDisputes', {});
        const items: any[] = Array.isArray(list) ? list : (list?.disputes ?? []);
        return items.find((d) => d?.purchase?.id === purchaseId || d?.purchaseId === purchaseId) ?? null;
      },
      run: async () => asObject('purchase', await call(req, 'escrow.resolveDispute', { purchaseId, outcome, ...(note ? { note } : {}) })),
    });
  }));

  // ---- listings -----------------------------------------------------------------------------------
  /** Seed flag of an agent, addressed by the agent id or by one of its listings. */
  app.post('/api/admin/listings/:id/seed', wrap(async (req, res) => {
    const id = String(req.params.id);
    const b = body(req);
    if (b.isSeed !== undefined && typeof b.isSeed !== 'boolean') {
      throw new InvalidArgumentsError('isSeed must be true or false.', { hint: 'Send {"isSeed": true} to mark, {"isSeed": false} to clear.', details: { field: 'isSeed' } });
    }
    const isSeed = b.isSeed ?? true;
    let agentId = id;
    let listingId: string | null = null;
    if (!id.startsWith('agt_')) {
      const listing = await call<{ sellerId: string }>(req, 'listings.getForPurchase', { listingId: id });
      agentId = listing.sellerId;
      listingId = id;
    }
    await audited(req, res, {
      action: isSeed ? 'listings.seed' : 'listings.unseed',
      target: agentId,
      params: { isSeed, listingId },
      before: () => call(req, 'agents.get', { agentId }),
      run: async () => ({ agent: await call(req, 'agents.setSeed', { agentId, isSeed }), listingId }),
    });
  }));

  app.post('/api/admin/listings/:id/takedown', wrap(async (req, res) => {
    const listingId = String(req.params.id);
    const reason = requiredText(body(req).reason, 'reason', 'Say why, e.g. {"reason": "offers stolen API keys"}; the seller sees it.');
    await audited(req, res, {
      action: 'listings.takedown',
      target: listingId,
      params: { reason },
      before: () => call(req, 'listings.get', { listingId }),
      run: async () => asObject('listing', await call(req, 'listings.takeDown', { listingId, reason })),
    });
  }));

  // ---- reports (support) --------------------------------------------------------------------------
  const reportFilters = (req: Request) => {
    const params: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string' && k !== 'limit') params[k] = v;
    const limit = limitOf(req);
    if (limit) params.limit = limit;
    return params;
  };
  app.get('/api/admin/reports/bugs', wrap(async (req, res) => {
    res.json({ ok: true, result: await call(req, 'support.listBugs', reportFilters(req)) });
  }));
  app.get('/api/admin/reports/experiences', wrap(async (req, res) => {
    res.json({ ok: true, result: await call(req, 'support.listExperiences', reportFilters(req)) });
  }));

  // ---- audit log ----------------------------------------------------------------------------------
  app.get('/api/admin/audit-log', wrap(async (req, res) => {
    const limit = limitOf(req, 1000) ?? 100;
    const action = typeof req.query.action === 'string' ? req.query.action : null;
    const r = await deps.db.query<any>(
      `SELECT id, operator, action, target, params, before, after, ok, error, request_id, at FROM gateway.audit_log
        WHERE ($1::text IS NULL OR action = $1) ORDER BY id DESC LIMIT $2`,
      [action, limit],
    );
    const entries = r.rows.map((e) => ({
      id: Number(e.id),
      operator: e.operator,
      action: e.action,
      target: e.target,
      params: e.params,
      before: e.before,
      after: e.after,
      ok: e.ok,
      error: e.error,
      requestId: e.request_id,
      at: new Date(e.at).toISOString(),
    }));
    res.json({ ok: true, result: { entries } });
  }));
}
