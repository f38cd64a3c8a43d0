/** GET /api/public/liquidity: purchases7d and density (no key). */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerLiquidityRoutes(_app: Express, _deps: GatewayDeps): void {
  // Built by the escrow issue.
}
