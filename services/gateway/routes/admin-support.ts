/** Operator: bug and experience reports (mounted under the admin auth of admin.ts). */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerAdminSupportRoutes(_app: Express, _deps: GatewayDeps): void {
  // Built by the support issue.
}
