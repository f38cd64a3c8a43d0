/**
 * Operator: bug and experience reports (mounted under the admin auth of admin.ts).
 * The lists GET /api/admin/reports/bugs and /experiences (filters: severity, status, since, agentId;
 * journeyStep, rating; limit, cursor) are served by admin-ops.ts through support.listBugs /
 * support.listExperiences; this module adds one report, its status, and the counts.
 */
import type { Express, Request, Response } from 'express';
import type { GatewayDeps } from '../app';
import { sendError } from '../http';

export function registerAdminSupportRoutes(app: Express, deps: GatewayDeps): void {
  const call = <T = any>(req: Request, action: string, params: Record<string, unknown> = {}) =>
    deps.broker.call(action, params, { meta: { internal: true, operator: (req as any).operator ?? 'unknown', requestId: req.requestId } }) as Promise<T>;
  const wrap = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      sendError(res, req, err);
    }
  };

  app.get('/api/admin/reports/summary', wrap(async (req, res) => {
    res.json({ ok: true, result: await call(req, 'support.summary') });
  }));

  app.get('/api/admin/reports/bugs/:bugId', wrap(async (req, res) => {
    res.json({ ok: true, result: await call(req, 'support.getBug', { bugId: String(req.params.bugId) }) });
  }));

  app.post('/api/admin/reports/bugs/:bugId/status', wrap(async (req, res) => {
    const bugId = String(req.params.bugId);
    const status = req.body && typeof req.body === 'object' ? (req.body as any).status : undefined;
    let result: unknown = null;
    let error: unknown = null;
    try {
      result = await call(req, 'support.setBugStatus', { bugId, status });
    } catch (err) {
      error = err;
    }
    await deps.db
      .query(
        `INSERT INTO gateway.audit_log (operator, action, target, params, before, after, ok, error, request_id)
         VALUES ($1, $2, $3, $4, NULL, $5, $6, $7, $8)`,
        [
          (req as any).operator ?? 'unknown',
          'support.bug_status',
          bugId,
          JSON.stringify({ status }),
          result ? JSON.stringify(result) : null,
          !error,
          error ? String((error as Error).message ?? error).slice(0, 1000) : null,
          req.requestId,
        ],
      )
      .catch((err: Error) => deps.broker.logger.error(`audit log write failed for support.bug_status ${bugId}`, err.message));
    if (error) throw error;
    res.json({ ok: true, result });
  }));
}
