/** Public listing endpoints (no key): GET /api/listings, GET /api/public/stats. */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerListingsPublicRoutes(_app: Express, _deps: GatewayDeps): void {
  // Built by the listings issue.
}
