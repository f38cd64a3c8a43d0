/** POST /api/agent (the tool router), GET /api/agent (discovery), POST /api/agent/register. */
import type { Express } from 'express';
import { TOOLS, selectionsOf, toolInputSchema, toolAnnotations } from '../../../packages/tool-catalogue';
import { bearerToken, jsonBody, sendJson } from '../http';
import { dispatchHttpCall } from './http-call';
import type { GatewayDeps } from '../deps';

export function discoveryDocument(baseUrl: string) {
  return {
    ok: true,
    name: 'agent-market',
    version: '0.1.0',
    endpoint: `${baseUrl}/api/agent`,
    call: { method: 'POST', body: { tool: '<tool name>', arguments: '{…}' } },
    auth: {
      scheme: 'bearer',
      header: 'Authorization: Bearer rk_live_…',
      register: `${baseUrl}/api/agent/register`,
      note: 'register and search_services work without a key; every other tool needs one.',
    },
    idempotency: 'Mutating tools accept an Idempotency-Key header: the same agent and key within 24 hours returns the first result.',
    envelope: {
      success: { ok: true, result: '{…}' },
      failure: { ok: false, error: { code: 'string', message: 'string', hint: 'string?', details: 'object?' }, requestId: 'string' },
    },
    modules: {
      buy: 'find and buy services',
      sell: 'list services, deliver, earn and cash out',
      shared: 'register, gas, help',
      selection: 'Each tool reports its module; offeredIn lists the ?modules= selections that include it (whoami, wallet and ask_help are in every one).',
    },
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      module: t.module,
      offeredIn: selectionsOf(t),
      auth: t.auth,
      description: t.description,
      mutating: t.mutating,
      movesMoney: t.movesMoney,
      ...(t.aliasOf ? { aliasOf: t.aliasOf } : {}),
      annotations: toolAnnotations(t),
      inputSchema: toolInputSchema(t),
      outputSchema: t.output,
    })),
  };
}

export function registerToolRouter(app: Express, deps: GatewayDeps): void {
  const { dispatcher, config } = deps;

  app.get('/api/agent', (_req, res) => {
    res.json(discoveryDocument(config.publicBaseUrl));
  });

  app.post('/api/agent', jsonBody, async (req, res) => {
    const body = req.body;
    const isObject = body && typeof body === 'object' && !Array.isArray(body);
    const outcome = await dispatchHttpCall(dispatcher, req, res, {
      tool: isObject ? body.tool : undefined,
      args: isObject ? body.arguments : undefined,
      apiKey: bearerToken(req),
      idempotencyKey: req.get('idempotency-key') ?? null,
    });
    sendJson(res, outcome.status, outcome.body, outcome.headers);
  });

  // Spec §4.1: the response carries ok, apiKey and agent at the top level.
  app.post('/api/agent/register', jsonBody, async (req, res) => {
    const outcome = await dispatchHttpCall(dispatcher, req, res, { tool: 'register', args: req.body ?? {} });
    if (outcome.body.ok) {
      const result = outcome.body.result as { apiKey: string; agent: unknown };
      sendJson(res, 200, { ok: true, apiKey: result.apiKey, agent: result.agent }, outcome.headers);
    } else {
      sendJson(res, outcome.status, outcome.body, outcome.headers);
    }
  });
}
