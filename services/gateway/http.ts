/** Express plumbing shared by the gateway's routes: request ids, the envelope, the JSON parser. */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'moleculer';
import { MarketError, toEnvelope, type MappedError } from '../../packages/errors';
import { base62 } from '../../packages/ids';
import { redactPath } from './redact';
import { withRequestContext } from '../../packages/telemetry/context';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;
export const JSON_BODY_LIMIT = '256kb';

/**
 * Keeps a sane incoming x-request-id, otherwise mints one; echoes it on every response, with nosniff.
 * The rest of the request runs in its context: every log line carries the id, and every Moleculer call
 * passes it on as ctx.requestID (packages/telemetry).
 */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.get('x-request-id');
  req.requestId = incoming && SANE_REQUEST_ID.test(incoming) ? incoming : `req_${base62(20)}`;
  res.setHeader('x-request-id', req.requestId);
  res.setHeader('x-content-type-options', 'nosniff');
  withRequestContext({ requestId: req.requestId }, next);
}

/**
 * A body parser whose next() runs in the request's context again. The body arrives in the socket's events,
 * which run outside it: without this, handlers after the parser would lose the request id. (Re-entering once
 * per request replaces binding every listener of req and res, which cost ~5 % of the gateway's CPU.)
 */
export function inRequestContext(parser: (req: Request, res: Response, next: NextFunction) => void) {
  return (req: Request, res: Response, next: NextFunction): void =>
    parser(req, res, (err?: unknown) => withRequestContext({ requestId: req.requestId }, () => next(err)));
}

/** The broker's logger, set on app.locals by buildApp (tests build several apps in one process). */
function loggerOf(req: Request): Logger | undefined {
  return req.app?.locals?.logger as Logger | undefined;
}

/**
 * Every 5xx is logged at error with its cause and stack (pino's `err` serializer); a 4xx that only
 * the database noticed is logged at warn. Never the request body or a key.
 */
export function logMappedError(
  logger: Logger | undefined,
  mapped: MappedError,
  err: unknown,
  where: { requestId: string; tool?: string | null; agentId?: string | null; method?: string; path?: string },
): void {
  if (!logger) return;
  const e = err as { cause?: unknown } | undefined;
  if (mapped.status >= 500 && mapped.body.error.code !== 'service_unavailable' && mapped.body.error.code !== 'not_implemented') {
    logger.error({ ...where, status: mapped.status, err, cause: e?.cause }, `${mapped.status} ${where.tool ?? where.path ?? ''}: ${(err as Error)?.message ?? String(err)}`);
  } else if (mapped.status >= 500) {
    logger.warn({ ...where, status: mapped.status, code: mapped.body.error.code }, `${mapped.status} ${mapped.body.error.code}: ${(err as Error)?.message ?? String(err)}`);
  } else if (mapped.unexpected) {
    logger.warn({ ...where, status: mapped.status, err }, `input refused by the database: ${(err as Error)?.message ?? String(err)}`);
  }
}

export const jsonBody = inRequestContext(express.json({ limit: JSON_BODY_LIMIT, type: ['application/json', 'application/*+json'] }));

export function sendError(res: Response, req: Request, err: unknown): void {
  const mapped = toEnvelope(err, req.requestId);
  logMappedError(loggerOf(req), mapped, err, { requestId: req.requestId, method: req.method, path: redactPath(req.path) });
  const { status, body, retryAfterSeconds } = mapped;
  if (retryAfterSeconds) res.setHeader('retry-after', String(retryAfterSeconds));
  res.status(status).json(body);
}

/**
 * A JSON answer to a POST without Express's extras: no ETag (a sha1 of every body, and POST answers are
 * never conditional) — the tool router's hot path.
 */
export function sendJson(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
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

/** What body-parser's errors carry (http-errors). */
interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  code?: string;
}

/** Last handler: body-parser failures become invalid_arguments, anything else internal — never a stack trace. */
export function errorHandler(error: unknown, req: Request, res: Response, _next: NextFunction): void {
  const err = error as BodyParserError | null | undefined;
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
    sendError(res, req, new MarketError('invalid_arguments', 'Unsupported body encoding.', { hint: 'Send UTF-8 JSON, uncompressed or as gzip, deflate or br.' }));
    return;
  }
  // Any other client error of the body parser (a corrupt gzip/deflate/br body, an aborted upload, a
  // length mismatch) is the client's: 400, not 500.
  if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500 && err.expose !== false) {
    sendError(res, req, new MarketError('invalid_arguments', 'The request body could not be read.', {
      hint: 'Send the JSON body uncompressed (or correctly compressed with the Content-Encoding you declare) and with a matching Content-Length.',
      details: { reason: String(err.type ?? err.code ?? 'bad body').slice(0, 64) },
    }));
    return;
  }
  sendError(res, req, error);
}

export function notFound(req: Request, res: Response): void {
  sendError(res, req, new MarketError('not_found', `No route ${req.method} ${redactPath(req.path)}.`, {
    hint: 'Tools are called with POST /api/agent; GET /api/agent lists them; GET /api/public/info describes the service.',
  }));
}
