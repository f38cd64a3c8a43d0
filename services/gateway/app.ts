/**
 * The gateway's express app. Route modules are registered in a fixed order: the Stripe webhook
 * needs the raw body, so every JSON parser is mounted per route, never globally.
 */
import express, { type Express } from 'express';
import { errorHandler, notFound, requestId } from './http';
import { accessLog } from './access-log';
import { registerMetricsRoute } from './routes/metrics';
import { registerHealth } from './routes/health';
import { registerToolRouter } from './routes/tool-router';
import { registerPaymentsRoutes } from './routes/payments';
import { registerListingsPublicRoutes } from './routes/listings-public';
import { registerLiquidityRoutes } from './routes/liquidity';
import { registerDiscoveryRoutes } from './routes/discovery';
import { registerDownloadRoutes } from './routes/downloads';
import { registerAdminRoutes } from './routes/admin';
import { registerMcpRoutes } from './routes/mcp';
import { registerOwnerRoutes } from './routes/owner';
import { registerPublicPages, htmlNotFound } from './web/public-routes';
import { registerAdminConsole } from './web/admin/console-routes';
import type { GatewayDeps } from './deps';

export function buildApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // X-Forwarded-For counts only behind a proxy the operator names (TRUST_PROXY); off, req.ip is the peer.
  app.set('trust proxy', deps.config.trustProxy);
  app.locals.logger = deps.broker.logger;
  app.use(requestId);
  app.use(accessLog(deps.broker.logger, deps.metrics?.observeHttp));

  // The tool router first: nearly every request is POST /api/agent, and Express tries routes in order.
  registerToolRouter(app, deps);
  registerHealth(app, deps);
  registerMetricsRoute(app, deps);
  registerPaymentsRoutes(app, deps);
  registerOwnerRoutes(app, deps);
  registerListingsPublicRoutes(app, deps);
  registerLiquidityRoutes(app, deps);
  registerDiscoveryRoutes(app, deps);
  registerDownloadRoutes(app, deps);
  registerAdminRoutes(app, deps);
  registerMcpRoutes(app, deps);
  registerPublicPages(app, deps);
  registerAdminConsole(app, deps);

  app.use(htmlNotFound);
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
