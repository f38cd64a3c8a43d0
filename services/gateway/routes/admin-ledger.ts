/** Operator: GET /api/admin/ledger/audit (mounted under the admin auth of admin.ts). */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';
import { sendError } from '../http';

export function registerAdminLedgerRoutes(app: Express, deps: GatewayDeps): void {
  app.get('/api/admin/ledger/audit', async (req, res) => {
    try {
      const result = await deps.broker.call('ledger.audit', {}, { timeout: 120_000 });
      res.json({ ok: true, result });
    } catch (err) {
      sendError(res, req, err);
    }
  });
}
