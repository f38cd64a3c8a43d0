/**
 * Operator: bug and experience reports (mounted under the admin auth of admin.ts).
 * The lists GET /api/admin/reports/bugs and /experiences (filters: severity, status, since, agentId;
 * journeyStep, rating; limit, cursor) are served by admin-ops.ts through support.listBugs /
 * support.listExperiences; this module adds one report, its status, and the counts.
 */
import type { Express } from 'express';
import type { GatewayDeps } from '../deps';
import { adminKit } from './admin-kit';
import { operatorActions, type OperatorInput } from './admin-actions';
import { SUPPORT } from '../../../packages/contracts/support';

export function registerAdminSupportRoutes(app: Express, deps: GatewayDeps): void {
  const { call, wrap } = adminKit(deps);
  const ops = operatorActions(deps);

  app.get('/api/admin/reports/summary', wrap(async (req, res) => {
    res.json({ ok: true, result: await call(req, SUPPORT.summary) });
  }));

  app.get('/api/admin/reports/bugs/:bugId', wrap(async (req, res) => {
    res.json({ ok: true, result: await call(req, SUPPORT.getBug, { bugId: String(req.params.bugId) }) });
  }));

  app.post('/api/admin/reports/bugs/:bugId/status', wrap(async (req, res) => {
    const input = req.body && typeof req.body === 'object' ? (req.body as OperatorInput) : {};
    res.json({ ok: true, result: await ops.setBugStatus(req, String(req.params.bugId), input) });
  }));
}
