/** Operator: GET /api/admin/ledger/audit (mounted under the admin auth of admin.ts). */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerAdminLedgerRoutes(_app: Express, _deps: GatewayDeps): void {
  // Built by the ledger issue.
}
