/**
 * GET /api/public/liquidity (no key): purchases in the last 7 days and density = purchases7d / registered
 * agents (0 when none). Computed by escrow.liquidity; registrations come from agents.count. Fields at the
 * top level like every public GET (public-schemas.ts), with the older "result" copy.
 */
import type { Express } from 'express';
import type { GatewayDeps } from '../deps';
import { sendError } from '../http';
import { publicBody } from './public-schemas';
import { callEscrow, ESCROW } from '../../../packages/contracts/escrow';

export function registerLiquidityRoutes(app: Express, deps: GatewayDeps): void {
  app.get('/api/public/liquidity', async (req, res) => {
    try {
      const liquidity = await callEscrow(deps.broker, ESCROW.liquidity, {}, { meta: { requestId: req.requestId } });
      res.setHeader('cache-control', 'public, max-age=30');
      res.json(publicBody(liquidity));
    } catch (err) {
      sendError(res, req, err);
    }
  });
}
