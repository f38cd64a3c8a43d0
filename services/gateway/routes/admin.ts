/**
 * /api/admin/* for the operator. Authorised by ADMIN_TOKEN (constant-time comparison).
 * No ADMIN_TOKEN → the admin API is off (404), except that in development the server mints a
 * local operator token in DATA_DIR/operator-token (mode 0600, new at every start) which the
 * local CLIs (npm run admin, npm run audit:ledger) read; it is accepted from loopback only.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { MarketError } from '../../../packages/errors';
import { bearerToken, clientIp, jsonBody, sendError } from '../http';
import type { GatewayDeps } from '../deps';
import { registerAdminLedgerRoutes } from './admin-ledger';
import { registerAdminOpsRoutes } from './admin-ops';
import { registerAdminSupportRoutes } from './admin-support';

function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

function isLoopback(req: Request): boolean {
  const ip = req.socket.remoteAddress ?? '';
  return ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1';
}

export function adminAuth(deps: GatewayDeps) {
  return (req: Request, res: Response, next: NextFunction) => {
    const { adminToken } = deps.config;
    const token = bearerToken(req) ?? req.get('x-admin-token') ?? null;
    const operatorOk = !!deps.operatorToken && !!token && isLoopback(req) && safeEqual(token, deps.operatorToken);
    if (!adminToken && !operatorOk) {
      sendError(res, req, new MarketError('not_found', 'The admin API is off.', { hint: 'Set ADMIN_TOKEN on the server to turn it on.' }));
      return;
    }
    // The token is always compared: a right token passes whatever others sent from this address;
    // only wrong ones count, and past the limit they answer 429 instead of 401.
    const refuse = (err: MarketError) => {
      const failed = deps.authThrottle?.fail('admin', clientIp(req), req.requestId) ?? Promise.resolve();
      failed.then(() => sendError(res, req, err), (throttled) => sendError(res, req, throttled));
    };
    if (!token) {
      refuse(new MarketError('unauthorized', 'The admin API needs the operator token.', { hint: 'Send "Authorization: Bearer $ADMIN_TOKEN".' }));
      return;
    }
    if (!operatorOk && !(adminToken && safeEqual(token, adminToken))) {
      refuse(new MarketError('unauthorized', 'Wrong admin token.', { hint: 'Send the ADMIN_TOKEN the server was started with.' }));
      return;
    }
    req.operator = operatorOk ? 'local-operator' : 'admin-token';
    next();
  };
}

export function registerAdminRoutes(app: Express, deps: GatewayDeps): void {
  app.use('/api/admin', adminAuth(deps), jsonBody);

  app.get('/api/admin/ping', (req, res) => {
    res.json({ ok: true, result: { operator: req.operator } });
  });
  registerAdminLedgerRoutes(app, deps);
  registerAdminOpsRoutes(app, deps);
  registerAdminSupportRoutes(app, deps);
}
