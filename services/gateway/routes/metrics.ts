/**
 * GET /metrics on the gateway port: Prometheus text, only with "Authorization: Bearer $METRICS_TOKEN".
 * Without METRICS_TOKEN it is off here (404); METRICS_PORT serves the same registry on loopback.
 * Wrong tokens are throttled like admin tokens (10 per client and minute, then 429; a right token always passes).
 */
import { timingSafeEqual } from 'node:crypto';
import type { Express } from 'express';
import { MarketError } from '../../../packages/errors';
import { bearerToken, clientIp, sendError } from '../http';
import type { GatewayDeps } from '../deps';
import { METRICS_CONTENT_TYPE } from '../../../packages/broker/metrics';

function sameSecret(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export function registerMetricsRoute(app: Express, deps: GatewayDeps): void {
  app.get('/metrics', async (req, res) => {
    const { metricsToken } = deps.config;
    if (!metricsToken || !deps.metrics?.isEnabled) {
      sendError(res, req, new MarketError('not_found', 'Metrics are off on this port.', {
        hint: 'Set METRICS_TOKEN to serve /metrics here (Bearer token), or METRICS_PORT for a loopback-only listener.',
      }));
      return;
    }
    const client = clientIp(req);
    try {
      const token = bearerToken(req);
      if (!token || !sameSecret(token, metricsToken)) {
        await deps.authThrottle?.fail('metrics', client, req.requestId);
        throw new MarketError('unauthorized', 'GET /metrics needs the metrics token.', { hint: 'Send "Authorization: Bearer $METRICS_TOKEN".' });
      }
      await deps.metrics.refreshBusiness();
      res.set('content-type', METRICS_CONTENT_TYPE).set('cache-control', 'no-store').send(await deps.metrics.render());
    } catch (err) {
      sendError(res, req, err);
    }
  });
}
