/**
 * Remote MCP endpoint (Streamable HTTP) at /mcp, built from the tool catalogue.
 *
 * Stateless: every POST gets a fresh server + transport, so any gateway replica can answer any
 * request (no session affinity). The API key comes from "Authorization: Bearer" or ?api_key=; the
 * resolved caller reaches the tool handlers through the SDK's authInfo, and every tool call goes
 * through the one ToolDispatcher. Host/Origin are checked against DNS rebinding before anything runs.
 */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { ToolModule } from '../../../packages/tool-catalogue';
import type { Config } from '../../../packages/config';
import { bearerToken, clientIp, inRequestContext, JSON_BODY_LIMIT } from '../http';
import type { GatewayDeps } from '../deps';
import { ALL_MODULES, createMcpServer, type McpCaller } from '../mcp/server';

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
const ALLOW_HEADERS = 'Content-Type, Authorization, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, X-Request-Id';
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, X-Request-Id, Retry-After';

function rpcError(res: Response, status: number, code: number, message: string, data?: unknown): void {
  if (res.headersSent) return;
  res.status(status).json({ jsonrpc: '2.0', error: { code, message, ...(data !== undefined ? { data } : {}) }, id: null });
}

/** Hosts and origins /mcp answers: localhost, PUBLIC_BASE_URL's host, plus ALLOWED_HOSTS / ALLOWED_ORIGINS. */
export function mcpOriginPolicy(config: Config) {
  const hosts = new Set(LOCAL_HOSTS);
  try {
    hosts.add(new URL(config.publicBaseUrl).hostname.toLowerCase());
  } catch {
    /* an invalid PUBLIC_BASE_URL adds nothing */
  }
  for (const h of config.allowedHosts) hosts.add(h);
  const anyOrigin = config.allowedOrigins.includes('*');
  const origins = new Set(config.allowedOrigins.map((o) => o.toLowerCase()));

  const hostAllowed = (hostHeader: string | undefined): boolean => {
    if (!hostHeader) return false;
    try {
      return hosts.has(new URL(`http://${hostHeader}`).hostname.toLowerCase());
    } catch {
      return false;
    }
  };
  /** A browser Origin is accepted when listed, or when its host is one of ours (any port/scheme). */
  const originAllowed = (origin: string | undefined): boolean => {
    if (!origin) return true; // not a browser, or a same-origin navigation: Host already checked
    if (anyOrigin || origins.has(origin.toLowerCase())) return true;
    try {
      const u = new URL(origin);
      return (u.protocol === 'http:' || u.protocol === 'https:') && hosts.has(u.hostname.toLowerCase());
    } catch {
      return false;
    }
  };
  return { hostAllowed, originAllowed };
}

/** ?modules=buy,shared → that subset; absent → every module; anything else → null (invalid). */
export function parseModules(raw: unknown): ToolModule[] | null {
  if (raw === undefined || raw === '') return [...ALL_MODULES];
  if (typeof raw !== 'string') return null;
  const wanted = raw.split(',').map((m) => m.trim().toLowerCase()).filter(Boolean);
  if (!wanted.length || wanted.some((m) => !(ALL_MODULES as readonly string[]).includes(m))) return null;
  return ALL_MODULES.filter((m) => wanted.includes(m));
}

export function registerMcpRoutes(app: Express, deps: GatewayDeps): void {
  const { dispatcher, config } = deps;
  const policy = mcpOriginPolicy(config);
  const parseJson = inRequestContext(express.json({ limit: JSON_BODY_LIMIT, type: () => true }));

  const guard = (req: Request, res: Response, next: NextFunction) => {
    if (!policy.hostAllowed(req.get('host'))) {
      rpcError(res, 403, -32000, `Host "${(req.get('host') ?? '').slice(0, 100)}" is not allowed (DNS rebinding protection). Operators: add it to ALLOWED_HOSTS.`);
      return;
    }
    const origin = req.get('origin');
    if (!policy.originAllowed(origin)) {
      rpcError(res, 403, -32000, `Origin "${(origin ?? '').slice(0, 100)}" is not allowed. Operators: add it to ALLOWED_ORIGINS.`);
      return;
    }
    if (origin) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    next();
  };

  app.options('/mcp', guard, (_req, res) => {
    res.setHeader('Access-Control-Allow-Methods', 'POST, GET, DELETE, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  });

  app.post(
    '/mcp',
    guard,
    (req, res, next) => {
      parseJson(req, res, (err?: unknown) => {
        if (!err) return next();
        if ((err as { type?: string }).type === 'entity.too.large') return rpcError(res, 413, -32600, `The request body is larger than ${JSON_BODY_LIMIT}.`);
        return rpcError(res, 400, -32700, 'Parse error: the body is not valid JSON.');
      });
    },
    async (req, res) => {
      const modules = parseModules(req.query.modules);
      if (!modules) {
        rpcError(res, 400, -32602, `Invalid ?modules=: use a comma list of ${ALL_MODULES.join(', ')} (e.g. ?modules=buy,shared).`);
        return;
      }
      const headerKey = bearerToken(req);
      const queryKey = typeof req.query.api_key === 'string' && req.query.api_key ? req.query.api_key : null;
      const apiKey = headerKey ?? queryKey;
      const caller: McpCaller = { apiKey, agentId: null, requestId: req.requestId, clientIp: clientIp(req) };
      try {
        // Resolve once so handlers see who is calling; the dispatcher re-checks (cached) on every tool call.
        caller.agentId = (await dispatcher.authenticate(apiKey))?.id ?? null;
      } catch {
        caller.agentId = null; // agents unreachable: tool calls answer service_unavailable themselves
      }
      const auth: AuthInfo = {
        token: apiKey ?? '',
        clientId: caller.agentId ?? 'anonymous',
        scopes: [],
        extra: { ...caller },
      };
      (req as Request & { auth?: AuthInfo }).auth = auth;

      const server = createMcpServer({
        dispatcher,
        baseUrl: config.publicBaseUrl,
        modules,
        terms: config, // its platformFeePercent and autoReleaseDays
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      } catch (err) {
        deps.broker.logger.error({ err, requestId: req.requestId, path: '/mcp' }, `mcp request failed (requestId ${req.requestId})`);
        rpcError(res, 500, -32603, `Internal error (requestId ${req.requestId}).`);
      }
    },
  );

  // Stateless: there is no server-initiated stream to resume and no session to delete.
  const notAllowed = (_req: Request, res: Response) => {
    res.setHeader('Allow', 'POST, OPTIONS');
    rpcError(res, 405, -32000, 'Method not allowed: this endpoint is stateless; send JSON-RPC requests with POST.');
  };
  app.get('/mcp', guard, notAllowed);
  app.delete('/mcp', guard, notAllowed);
}
