/**
 * GET /api/public/liquidity (no key): purchases in the last 7 days and density = purchases7d / registered
 * agents (0 when none). Computed by escrow.liquidity; registrations come from agents.count.
 */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';
import { sendError } from '../http';

export function registerLiquidityRoutes(app: Express, deps: GatewayDeps): void {
  app.get('/api/public/liquidity', async (req, res) => {
    try {
      const result = await deps.broker.call('escrow.liquidity', {}, { meta: { requestId: req.requestId } });
      res.setHeader('cache-control', 'public, max-age=30');
      res.json({ ok: true, result });
    } catch (err) {
      sendError(res, req, err);
    }
  });
}
