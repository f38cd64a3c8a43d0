/** Public GET endpoints (no key): listings, stats, liquidity, info, llms.txt, openapi.json. */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerPublicRoutes(_app: Express, _deps: GatewayDeps): void {
  // Filled in by the listings, escrow and discovery issues.
}
