/**
 * Operator: payouts, disputes, listings, reports, audit log (mounted under the admin auth of admin.ts).
 * Every mutating operator action is written to gateway.audit_log — who (req.operator), what, when,
 * before/after — whether it succeeded or not. The actions themselves are in admin-actions.ts (shared
 * with the console at /admin); the work is done by the owning service's actions.
 */
import type { Express, Request } from 'express';
import { InvalidArgumentsError } from '../../../packages/errors';
import type { GatewayDeps } from '../deps';
import { adminKit } from './admin-kit';
import { operatorActions, type OperatorInput } from './admin-actions';
import { SUPPORT } from '../../../packages/contracts/support';

function body(req: Request): OperatorInput {
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

export function registerAdminOpsRoutes(app: Express, deps: GatewayDeps): void {
  const { call, wrap } = adminKit(deps);
  const ops = operatorActions(deps);
  const answer = (fn: (req: Request) => Promise<unknown>) => wrap(async (req, res) => {
    res.json({ ok: true, result: await fn(req) });
  });
  const id = (req: Request) => String(req.params.id);

  // ---- payouts ------------------------------------------------------------------------------------
  app.get('/api/admin/payouts', answer(async (req) => {
    const status = typeof req.query.status === 'string' ? req.query.status : 'pending';
    return { status, payouts: await ops.listPayouts(req, status, limitOf(req)) };
  }));
  app.get('/api/admin/payouts/:id', answer(async (req) => ({ payout: await ops.getPayout(req, id(req)) })));
  app.post('/api/admin/payouts/:id/pay', answer((req) => ops.payPayout(req, id(req), body(req))));
  app.post('/api/admin/payouts/:id/reject', answer((req) => ops.rejectPayout(req, id(req), body(req))));

  // ---- disputes -----------------------------------------------------------------------------------
  app.get('/api/admin/disputes', answer(async (req) => ({
    disputes: await ops.listDisputes(req, typeof req.query.status === 'string' ? req.query.status : undefined),
  })));
  app.post('/api/admin/disputes/:id/resolve', answer((req) => ops.resolveDispute(req, id(req), body(req))));
  // Sandbox only: a purchase's running timer fires now (escrow refuses it with real money).
  app.post('/api/admin/purchases/:id/fire-timer', answer((req) => ops.fireTimer(req, id(req))));

  // ---- listings -----------------------------------------------------------------------------------
  app.post('/api/admin/listings/:id/seed', answer((req) => ops.setSeed(req, id(req), body(req))));
  app.post('/api/admin/listings/:id/takedown', answer((req) => ops.takeDown(req, id(req), body(req))));
  app.post('/api/admin/listings/:id/restore', answer((req) => ops.restore(req, id(req), body(req))));

  // ---- reports (support) --------------------------------------------------------------------------
  const reportFilters = (req: Request) => {
    const params: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string' && k !== 'limit') params[k] = v;
    const limit = limitOf(req);
    if (limit) params.limit = limit;
    return params;
  };
  app.get('/api/admin/reports/bugs', answer((req) => call(req, SUPPORT.listBugs, reportFilters(req))));
  app.get('/api/admin/reports/experiences', answer((req) => call(req, SUPPORT.listExperiences, reportFilters(req))));

  // ---- audit log ----------------------------------------------------------------------------------
  app.get('/api/admin/audit-log', answer(async (req) => ({
    entries: await ops.auditLog(limitOf(req, 1000) ?? 100, typeof req.query.action === 'string' ? req.query.action : null),
  })));
}
