/**
 * The one Agent Market MCP server factory, used by both doors: the service's remote /mcp
 * (services/gateway/mcp/server.ts gives it the definitions from the tool catalogue, the knowledge
 * base and the market rules, and a backend that dispatches in-process) and this package's stdio
 * server (lib/proxy.js gives it the same definitions read from the service's /mcp, and a backend
 * that calls the HTTPS tool router). Transport-agnostic: connect it to any SDK transport.
 * Plain CommonJS, no build step.
 */
'use strict';

const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} = require('@modelcontextprotocol/sdk/types.js');
const { TASK_TOOLS, createPurchaseTasks } = require('./tasks.js');

/**
 * A JSON-RPC error for the SDK to send. Not McpError: its message carries an "MCP error <code>:"
 * prefix, which the client's own McpError would then repeat.
 */
function protocolError(code, message, data) {
  return Object.assign(new Error(message), { code, data });
}

function asObject(value) {
  return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
}

/** An envelope ({ok, result} or {ok: false, error, requestId}) as an MCP tool result. */
function toolResult(body, extraText) {
  if (body.ok) {
    const result = body.result;
    const content = [{ type: 'text', text: JSON.stringify(result === undefined ? null : result, null, 2) }];
    if (extraText) content.push({ type: 'text', text: extraText });
    const structured = asObject(result);
    return structured ? { content, structuredContent: structured } : { content };
  }
  // No structuredContent on errors: it would have to match the tool's outputSchema (the SDK client
  // validates it even with isError). The envelope is the text content.
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body, null, 2) }] };
}

/** The _meta key of a prompt that lists values for its arguments: {argumentName: [values]}. */
const COMPLETIONS_META = 'agent-market/completions';

/** Tools whose result carries a URL a human must open to approve (the gas checkout). */
const APPROVAL_TOOLS = new Set(['buy_gas', 'buy_credits']);

/**
 * A client that supports URL-mode elicitation gets the human approval step as one: it shows the
 * checkout URL to its user and asks before opening it. The tool result is the same either way, plus
 * `elicitation: {action}` (accept, decline or cancel) when the client was asked. Needs a server that
 * knows the client's capabilities: stdio, and any stateful transport. The stateless /mcp builds a
 * fresh server per request (it never sees initialize), so there the result alone carries the URL.
 */
async function askHumanToApprove(server, name, body, extra) {
  const result = asObject(body.result);
  if (!APPROVAL_TOOLS.has(name) || !result || typeof result.checkoutUrl !== 'string') return;
  if (!server.getClientCapabilities()?.elicitation?.url) return;
  try {
    const answer = await server.elicitInput(
      {
        mode: 'url',
        elicitationId: String(result.sessionId || result.checkoutUrl),
        url: result.checkoutUrl,
        message:
          `Approve a gas purchase: ${result.gas} gas for ${result.usd} USD (pack ${result.packId}). ` +
          'Open the checkout page and approve or decline the payment there; your agent never sees card data.',
      },
      { relatedRequestId: extra.requestId },
    );
    result.elicitation = { action: answer.action };
  } catch (err) {
    // The client could not show it (or timed out): the checkoutUrl in the result still works.
    result.elicitation = { action: 'error', message: String((err && err.message) || err).slice(0, 200) };
  }
}

/**
 * @param {object} defs      what the server offers
 * @param {{name: string, title: string, version: string, websiteUrl?: string}} defs.info
 * @param {string} defs.instructions
 * @param {Array<object>} defs.tools             MCP tool definitions (name, title, description, inputSchema, annotations)
 * @param {Array<object>} defs.resources         MCP resource descriptors
 * @param {Array<object>} defs.resourceTemplates MCP resource templates
 * @param {Array<object>} defs.prompts           MCP prompt descriptors (name, title, description, arguments)
 * @param {object} backend   how it answers
 * @param {(name: string, args: object, extra: object, seq: number) => Promise<object>} backend.callTool  → envelope
 * @param {(name: string) => string | null} [backend.unknownToolMessage]  why a tool not offered here cannot be called
 * @param {(name: string, body: object) => string | null} [backend.noteFor]  extra text after a successful result
 * @param {(uri: string) => Promise<string | null>} backend.readResource   → markdown, or null when unknown
 * @param {(name: string, args: object) => Promise<string>} backend.getPrompt  → the prompt's text
 * @param {{waitMs?: number, readIntervalMs?: number}} [backend.tasks]  how tasks/result waits (lib/tasks.js)
 */
function createMarketServer(defs, backend) {
  const offered = new Set(defs.tools.map((t) => t.name));
  // purchase_service may run as a task (lib/tasks.js) when this server offers it.
  const taskTools = new Set(defs.tools.map((t) => t.name).filter((n) => TASK_TOOLS.has(n)));
  const tools = defs.tools.map((t) => (taskTools.has(t.name) ? { ...t, execution: { ...(t.execution || {}), taskSupport: 'optional' } } : t));
  const capabilities = { tools: {}, resources: {}, prompts: {}, logging: {}, completions: {} };
  // tasks: task-augmented tools/call and tasks/list; no tasks.cancel (a purchase is not cancelled that way).
  if (taskTools.size) capabilities.tasks = { list: {}, requests: { tools: { call: {} } } };
  const server = new Server(defs.info, {
    // logging: setLevel is accepted (the SDK keeps the level); the server logs nothing to clients today.
    // completions: argument values of prompts and resource templates.
    capabilities,
    instructions: defs.instructions,
  });
  let callSeq = 0;
  const tasks = createPurchaseTasks({ ...(backend.tasks || {}), callTool: (name, args, extra) => backend.callTool(name, args, extra, callSeq++) });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = String(request.params.name);
    if (!offered.has(name)) {
      const why = backend.unknownToolMessage ? backend.unknownToolMessage(name) : null;
      throw protocolError(ErrorCode.InvalidParams, why || `Unknown tool: ${name.slice(0, 64)}. tools/list shows the tools.`);
    }
    if (request.params.task) {
      // The spec's answer for a tool whose execution.taskSupport is absent ("forbidden").
      if (!taskTools.has(name)) throw protocolError(ErrorCode.MethodNotFound, `Tool ${name.slice(0, 64)} does not run as a task (only ${[...taskTools].join(', ') || 'none'} here): call it without "task".`);
      return tasks.create(name, { ...(request.params.arguments || {}) }, extra);
    }
    // One HTTP request may carry a JSON-RPC batch: each call gets its own sequence number.
    const body = await backend.callTool(name, { ...(request.params.arguments || {}) }, extra, callSeq++);
    if (body.ok) await askHumanToApprove(server, name, body, extra);
    return toolResult(body, body.ok && backend.noteFor ? backend.noteFor(name, body) : null);
  });

  if (taskTools.size) {
    server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => tasks.get(request.params.taskId, extra));
    server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => tasks.result(request.params.taskId, extra));
    server.setRequestHandler(ListTasksRequestSchema, async (request, extra) => tasks.list(request.params && request.params.cursor, extra));
    server.setRequestHandler(CancelTaskRequestSchema, async (request, extra) => tasks.cancel(request.params.taskId, extra));
  }

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: defs.resources }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: defs.resourceTemplates }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = String(request.params.uri);
    const text = await backend.readResource(uri);
    if (text === null || text === undefined) throw protocolError(ErrorCode.InvalidParams, `Resource not found: ${uri.slice(0, 200)}`, { uri });
    return { contents: [{ uri, mimeType: 'text/markdown', text }] };
  });

  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    let values = [];
    if (ref.type === 'ref/prompt') {
      // A prompt lists its arguments' values in _meta (so the stdio door, which copies the prompt list, has them too).
      const prompt = defs.prompts.find((p) => p.name === ref.name);
      values = (prompt && prompt._meta && prompt._meta[COMPLETIONS_META] && prompt._meta[COMPLETIONS_META][argument.name]) || [];
    } else if (ref.type === 'ref/resource') {
      // market://tools/{name} → the names of the market://tools/… resources, and so on.
      const template = defs.resourceTemplates.find((t) => t.uriTemplate === ref.uri);
      const m = template && /^(.*)\{([A-Za-z0-9_]+)\}$/.exec(template.uriTemplate);
      if (m && m[2] === argument.name) values = defs.resources.filter((r) => r.uri.startsWith(m[1])).map((r) => r.uri.slice(m[1].length));
    }
    const prefix = String(argument.value || '').toLowerCase();
    const matching = values.filter((v) => v.toLowerCase().startsWith(prefix));
    return { completion: { values: matching.slice(0, 100), total: matching.length, hasMore: matching.length > 100 } };
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: defs.prompts }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const prompt = defs.prompts.find((p) => p.name === request.params.name);
    if (!prompt) throw protocolError(ErrorCode.InvalidParams, `Unknown prompt: ${String(request.params.name).slice(0, 64)}. prompts/list shows the prompts.`);
    const args = request.params.arguments || {};
    const missing = (prompt.arguments || []).filter((a) => a.required && !args[a.name]).map((a) => a.name);
    if (missing.length) throw protocolError(ErrorCode.InvalidParams, `Prompt ${prompt.name} needs: ${missing.join(', ')}.`);
    return {
      description: prompt.description,
      messages: [{ role: 'user', content: { type: 'text', text: await backend.getPrompt(prompt.name, args) } }],
    };
  });

  return server;
}

module.exports = { createMarketServer, protocolError, toolResult, ErrorCode };
