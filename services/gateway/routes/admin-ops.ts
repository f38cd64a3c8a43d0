/** Operator: payouts, disputes, listings, audit log (mounted under the admin auth of admin.ts). */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerAdminOpsRoutes(_app: Express, _deps: GatewayDeps): void {
  // Built by the cash-out issue.
}
