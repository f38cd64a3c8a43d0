/** Operator: GET /api/admin/ledger/audit (mounted under the admin auth of admin.ts). */
import type { Express } from 'express';
import type { GatewayDeps } from '../deps';
import { adminKit } from './admin-kit';
import { auditMoney } from '../../../packages/ledger-audit';

export function registerAdminLedgerRoutes(app: Express, deps: GatewayDeps): void {
  const { wrap } = adminKit(deps);
  app.get('/api/admin/ledger/audit', wrap(async (_req, res) => {
    // The audit reads every account and cross-checks escrow's open items: longer than a tool call may take.
    const result = await auditMoney((action) => deps.broker.call(action, {}, { timeout: 120_000 }));
    res.json({ ok: true, result });
  }));
}
