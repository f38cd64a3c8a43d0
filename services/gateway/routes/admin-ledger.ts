/**
 * Operator: GET /api/admin/ledger/audit (mounted under the admin auth of admin.ts).
 * `?reconcile=1` adds the reconciliation with payments and escrow (packages/ledger-audit/reconcile.ts);
 * `&graceSeconds=N` (default 300) is how long an item may wait for its counterpart before it is a violation.
 */
import type { Express, Request } from 'express';
import type { GatewayDeps } from '../deps';
import { adminKit } from './admin-kit';
import { auditMoney, DEFAULT_GRACE_MS, type AuditOptions } from '../../../packages/ledger-audit';
import { InvalidArgumentsError } from '../../../packages/errors';

const MAX_GRACE_SECONDS = 7 * 86_400;

function auditOptionsOf(req: Request): AuditOptions {
  const reconcile = req.query.reconcile;
  if (reconcile !== undefined && !['1', 'true', '0', 'false'].includes(String(reconcile))) {
    throw new InvalidArgumentsError('reconcile must be 1 or 0.', { hint: 'Use ?reconcile=1 to reconcile the ledger with payments and escrow.', details: { field: 'reconcile' } });
  }
  const raw = req.query.graceSeconds;
  const graceSeconds = raw === undefined ? DEFAULT_GRACE_MS / 1000 : Number(raw);
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
    throw new InvalidArgumentsError(`graceSeconds must be an integer between 0 and ${MAX_GRACE_SECONDS}.`, {
      hint: `Use ?graceSeconds=300 (the default): an item younger than this whose counterpart has not followed yet is in flight.`,
      details: { field: 'graceSeconds' },
    });
  }
  return { reconcile: reconcile === '1' || reconcile === 'true', graceMs: graceSeconds * 1000 };
}

export function registerAdminLedgerRoutes(app: Express, deps: GatewayDeps): void {
  const { wrap } = adminKit(deps);
  app.get('/api/admin/ledger/audit', wrap(async (req, res) => {
    const options = auditOptionsOf(req);
    // The audit reads every account and cross-checks escrow's open items: longer than a tool call may take.
    const result = await auditMoney((action, params = {}) => deps.broker.call(action, params, { timeout: 120_000 }), options);
    res.json({ ok: true, result });
  }));
}
