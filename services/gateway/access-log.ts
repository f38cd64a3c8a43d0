/**
 * One structured access-log line per HTTP request, written when the response is finished:
 * request id, method, path (never the query string: /mcp accepts ?api_key=; a secret in the path is
 * redacted), tool, agent id, status
 * and duration. Never a key, a header or a body. Routes that dispatch a tool put its name and the
 * caller's agent id in res.locals; /mcp is labelled from its JSON-RPC method.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'moleculer';
import { toolLabel } from './metrics';
import { redactPath } from './redact';

export interface AccessObserver {
  (entry: { tool: string; status: number; durationMs: number }): void;
}

function toolOf(req: Request, res: Response): string | null {
  if (typeof res.locals.tool === 'string') return res.locals.tool;
  if (req.path === '/mcp' && req.method === 'POST') {
    const body = req.body as { method?: unknown; params?: { name?: unknown } } | undefined;
    if (body && typeof body.method === 'string') {
      if (body.method === 'tools/call' && typeof body.params?.name === 'string') return `mcp:${body.params.name.slice(0, 64)}`;
      return `mcp:${body.method.slice(0, 64)}`;
    }
    return 'mcp';
  }
  return null;
}

/** The OAuth client of an MCP request (set by the auth middleware), if any. */
function clientIdOf(req: Request): string | undefined {
  return (req as Request & { auth?: { clientId?: string } }).auth?.clientId;
}

export function accessLog(logger: Logger, observe?: AccessObserver) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100;
      const tool = toolOf(req, res);
      const agentId =
        (typeof res.locals.agentId === 'string' ? res.locals.agentId : null) ??
        (clientIdOf(req) !== 'anonymous' ? clientIdOf(req) ?? null : null);
      logger.info(
        { access: true, requestId: req.requestId, method: req.method, path: redactPath(req.path), tool, agentId, status: res.statusCode, durationMs },
        `${req.method} ${redactPath(req.path)} ${res.statusCode} ${durationMs}ms`,
      );
      const route = typeof req.route?.path === 'string' ? req.route.path : null;
      observe?.({ tool: toolLabel(tool, route, req.method), status: res.statusCode, durationMs });
    });
    next();
  };
}
