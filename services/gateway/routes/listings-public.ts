/**
 * Public listing endpoints (no key):
 *   GET /api/listings?q=&category=&minPriceGas=&maxPriceGas=&sellerId=&sort=&limit=&cursor=
 *     → the same search as search_services (same validation, rate limit and envelope), as
 *       {ok: true, listings, nextCursor} (+ the older "result" copy; public-schemas.ts)
 *   GET /api/public/stats → {ok: true, total, byCategory} (active listings; + "result")
 */
import type { Express, Request } from 'express';
import { sendError } from '../http';
import { dispatchHttpCall } from './http-call';
import type { GatewayDeps } from '../deps';
import { publicBody } from './public-schemas';
import { callListings, LISTINGS } from '../../../packages/contracts/listings';

const SEARCH_PARAMS = ['q', 'category', 'minPriceGas', 'maxPriceGas', 'sellerId', 'sort', 'limit', 'cursor'] as const;
const NUMERIC = new Set(['minPriceGas', 'maxPriceGas', 'limit']);

/** Query strings → tool arguments: numeric strings become numbers; anything else is left for the validator to refuse. */
function searchArgs(req: Request): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of SEARCH_PARAMS) {
    const raw = req.query[name];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value !== 'string' || value === '') continue;
    args[name] = NUMERIC.has(name) && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  }
  return args;
}

export function registerListingsPublicRoutes(app: Express, deps: GatewayDeps): void {
  app.get('/api/listings', async (req, res) => {
    const outcome = await dispatchHttpCall(deps.dispatcher, req, res, { tool: 'search_services', args: searchArgs(req) });
    const body = outcome.body.ok ? publicBody(outcome.body.result as object) : outcome.body;
    res.set(outcome.headers).status(outcome.status).json(body);
  });

  app.get('/api/public/stats', async (req, res) => {
    try {
      const stats = await callListings(deps.broker, LISTINGS.stats, {}, { meta: { requestId: req.requestId } });
      res.set('cache-control', 'public, max-age=10').json(publicBody(stats));
    } catch (err) {
      sendError(res, req, err);
    }
  });
}
