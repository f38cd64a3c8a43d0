/** Express plumbing shared by the gateway's routes: request ids, the envelope, the JSON parser. */
import express, { type NextFunction, type Request, type Response } from 'express';
import { MarketError, toEnvelope } from '../../packages/errors';
import { base62 } from '../../packages/ids';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;
export const JSON_BODY_LIMIT = '256kb';

/** Keeps a sane incoming x-request-id, otherwise mints one; echoes it on every response. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.get('x-request-id');
  req.requestId = incoming && SANE_REQUEST_ID.test(incoming) ? incoming : `req_${base62(20)}`;
  res.setHeader('x-request-id', req.requestId);
  next();
}

export const jsonBody = express.json({ limit: JSON_BODY_LIMIT, type: ['application/json', 'application/*+json'] });

export function sendError(res: Response, req: Request, err: unknown): void {
  const { status, body, retryAfterSeconds } = toEnvelope(err, req.requestId);
  if (retryAfterSeconds) res.setHeader('retry-after', String(retryAfterSeconds));
  res.status(status).json(body);
}

export function bearerToken(req: Request): string | null {
  const header = req.get('authorization');
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : header.trim() || null;
}

export function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** Last handler: body-parser failures become invalid_arguments, anything else internal — never a stack trace. */
export function errorHandler(err: any, req: Request, res: Response, _next: NextFunction): void {
  if (!req.requestId) requestId(req, res, () => undefined);
  if (err?.type === 'entity.parse.failed') {
    sendError(res, req, new MarketError('invalid_arguments', 'The request body is not valid JSON.', {
      hint: 'Send a JSON object like {"tool": "whoami", "arguments": {}} with Content-Type: application/json.',
    }));
    return;
  }
  if (err?.type === 'entity.too.large') {
    const { body } = toEnvelope(
      new MarketError('invalid_arguments', `The request body is larger than ${JSON_BODY_LIMIT}.`, { hint: 'Send less data per call.' }),
      req.requestId,
    );
    res.status(413).json(body);
    return;
  }
  if (err?.type === 'encoding.unsupported' || err?.type === 'charset.unsupported') {
    sendError(res, req, new MarketError('invalid_arguments', 'Unsupported body encoding.', { hint: 'Send UTF-8 JSON.' }));
    return;
  }
  sendError(res, req, err);
}

export function notFound(req: Request, res: Response): void {
  sendError(res, req, new MarketError('not_found', `No route ${req.method} ${req.path}.`, {
    hint: 'Tools are called with POST /api/agent; GET /api/agent lists them; GET /api/public/info describes the service.',
  }));
}
