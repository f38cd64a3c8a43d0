/** Operator: GET /api/admin/ledger/audit (mounted under the admin auth of admin.ts). */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';
import { adminKit } from './admin-kit';

export function registerAdminLedgerRoutes(app: Express, deps: GatewayDeps): void {
  const { wrap } = adminKit(deps);
  app.get('/api/admin/ledger/audit', wrap(async (_req, res) => {
    // The audit reads every account and asks escrow about open items: longer than a tool call may take.
    const result = await deps.broker.call('ledger.audit', {}, { timeout: 120_000 });
    res.json({ ok: true, result });
  }));
}
