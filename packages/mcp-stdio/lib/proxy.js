/**
 * agent-market-mcp: a local stdio MCP server that proxies every tool to the Agent Market HTTPS
 * tool router (POST /api/agent). The tool list, schemas and annotations are fetched from the
 * service's discovery document (GET /api/agent) at start, so this package never drifts from it.
 * Plain CommonJS, no build step: `node bin/agent-market-mcp.js` runs it.
 */
'use strict';

const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} = require('@modelcontextprotocol/sdk/types.js');

const VERSION = require('../package.json').version;
const MODULES = ['buy', 'sell', 'shared'];
const DEFAULT_BASE_URL = 'http://localhost:3000';

const HELP = `agent-market-mcp ${VERSION}: Agent Market tools for your IDE agent, over MCP stdio.

Usage:
  agent-market-mcp [--base-url URL] [--api-key KEY] [--modules buy,sell,shared]

Options (each also read from the environment):
  --base-url URL      Agent Market service address            MARKET_BASE_URL  (default ${DEFAULT_BASE_URL})
  --api-key KEY       your API key (rk_live_…)                MARKET_API_KEY   (optional: register and
                                                                                search_services work without it)
  --modules LIST      only these tool groups: buy, sell, shared MARKET_MODULES (default: all)
  --timeout MS        per-call HTTP timeout                   MARKET_TIMEOUT_MS (default 30000)
  -h, --help          this help
  -v, --version       the version

No key yet? Start without one and call the register tool: the key it returns is used for the rest
of the session; put it in MARKET_API_KEY to keep it.

Example MCP client config (Claude Code, Cursor, Windsurf, Cline… use the same shape):
  {"mcpServers": {"agent-market": {"command": "npx", "args": ["-y", "agent-market-mcp"],
    "env": {"MARKET_BASE_URL": "https://market.example", "MARKET_API_KEY": "rk_live_…"}}}}
`;

/** Reads options from argv (wins) and the environment. Throws on a bad value. */
function parseArgs(argv, env) {
  const opts = {
    baseUrl: env.MARKET_BASE_URL || DEFAULT_BASE_URL,
    apiKey: env.MARKET_API_KEY || null,
    modules: env.MARKET_MODULES || null,
    timeoutMs: env.MARKET_TIMEOUT_MS ? Number(env.MARKET_TIMEOUT_MS) : 30000,
    help: false,
    version: false,
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case '-h':
      case '--help':
        opts.help = true;
        break;
      case '-v':
      case '--version':
        opts.version = true;
        break;
      case '--base-url':
        opts.baseUrl = next();
        break;
      case '--api-key':
        opts.apiKey = next();
        break;
      case '--modules':
        opts.modules = next();
        break;
      case '--timeout':
        opts.timeoutMs = Number(next());
        break;
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  let url;
  try {
    url = new URL(opts.baseUrl);
  } catch {
    throw new Error(`the base URL "${opts.baseUrl}" is not a URL (set MARKET_BASE_URL or --base-url, e.g. https://market.example)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the base URL must be http(s), got ${url.protocol}`);
  opts.baseUrl = url.toString().replace(/\/+$/, '');
  if (opts.modules) {
    const wanted = String(opts.modules).split(',').map((m) => m.trim().toLowerCase()).filter(Boolean);
    const bad = wanted.filter((m) => !MODULES.includes(m));
    if (!wanted.length || bad.length) throw new Error(`--modules takes a comma list of ${MODULES.join(', ')}; got "${opts.modules}"`);
    opts.modules = wanted;
  } else {
    opts.modules = MODULES.slice();
  }
  if (!Number.isInteger(opts.timeoutMs) || opts.timeoutMs < 100) throw new Error('--timeout must be an integer number of milliseconds >= 100');
  if (opts.apiKey === '') opts.apiKey = null;
  return opts;
}

/** A JSON-RPC error for the SDK to send (McpError would prefix its message with "MCP error <code>:" twice). */
function protocolError(code, message) {
  return Object.assign(new Error(message), { code });
}

function describeNetworkError(err) {
  const cause = err && err.cause ? err.cause : err;
  if (err && err.name === 'AbortError') return 'timed out';
  return (cause && (cause.code || cause.message)) || String(err);
}

/** The HTTP side: one small client for the service's public API. */
class MarketHttp {
  constructor(baseUrl, apiKey, timeoutMs) {
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
  }

  async request(path, init = {}) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      return await fetch(`${this.baseUrl}${path}`, { ...init, signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  }

  /** GET /api/agent, retried briefly so an IDE starting next to `npm start` does not give up at once. */
  async discovery(attempts = 3) {
    let lastError;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500 * 2 ** (i - 1)));
      let res;
      try {
        res = await this.request('/api/agent', { headers: { accept: 'application/json' } });
      } catch (err) {
        lastError = new Error(
          `cannot reach the Agent Market service at ${this.baseUrl} (${describeNetworkError(err)}). ` +
            'Check MARKET_BASE_URL (or --base-url) and that the service is running.',
        );
        continue;
      }
      const body = await res.json().catch(() => null);
      if (res.ok && body && Array.isArray(body.tools)) return body;
      lastError = new Error(
        `${this.baseUrl} does not look like an Agent Market service: GET /api/agent answered ${res.status}` +
          `${body ? '' : ' without a JSON discovery document'}. Check MARKET_BASE_URL (or --base-url).`,
      );
      if (res.status < 500) break;
    }
    throw lastError;
  }

  /** POST /api/agent. Never throws: network failures come back as an error envelope. */
  async callTool(tool, args, idempotencyKey) {
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let res;
    try {
      res = await this.request('/api/agent', { method: 'POST', headers, body: JSON.stringify({ tool, arguments: args }) });
    } catch (err) {
      return {
        ok: false,
        error: {
          code: 'service_unavailable',
          message: `Cannot reach the Agent Market service at ${this.baseUrl} (${describeNetworkError(err)}).`,
          hint: idempotencyKey
            ? 'Retry the same call with the same idempotencyKey in a few seconds; nothing runs twice.'
            : 'Check that the service is running and MARKET_BASE_URL is right, then retry.',
        },
        requestId: null,
      };
    }
    const text = await res.text();
    try {
      const body = JSON.parse(text);
      if (body && typeof body === 'object' && typeof body.ok === 'boolean') return body;
    } catch {
      /* fall through */
    }
    return {
      ok: false,
      error: {
        code: res.status >= 500 ? 'service_unavailable' : 'internal',
        message: `Unexpected answer from ${this.baseUrl}/api/agent: HTTP ${res.status}.`,
        hint: 'Check MARKET_BASE_URL points at an Agent Market service, then retry.',
      },
      requestId: res.headers.get('x-request-id'),
    };
  }

  async text(path) {
    const res = await this.request(path);
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
    return res.text();
  }
}

const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description: 'Optional: the same key within 24 hours returns the first result and does nothing twice (sent as the Idempotency-Key header).',
};

/** MCP tool definitions from the discovery document. */
function toolsFromDiscovery(discovery, modules) {
  return discovery.tools
    .filter((t) => modules.includes(t.module))
    .map((t) => {
      const inputSchema = JSON.parse(JSON.stringify(t.inputSchema || { type: 'object', properties: {} }));
      // Idempotency keys are scoped to the calling agent: tools used without a key (register) get none.
      if (t.mutating && t.auth) inputSchema.properties = { ...(inputSchema.properties || {}), idempotencyKey: IDEMPOTENCY_KEY_SCHEMA };
      return {
        name: t.name,
        title: t.title,
        description: `${t.description}${t.auth ? '' : ' (No API key needed.)'}`,
        inputSchema,
        annotations: { title: t.title, ...(t.annotations || {}) },
      };
    });
}

function resultOf(toolName, body, http, log) {
  if (body.ok) {
    const content = [{ type: 'text', text: JSON.stringify(body.result === undefined ? null : body.result, null, 2) }];
    if (toolName === 'register' && body.result && body.result.apiKey) {
      let note = 'Store this apiKey now: it is shown only once. ';
      if (!http.apiKey) {
        http.apiKey = body.result.apiKey;
        note += 'This session now uses it; set MARKET_API_KEY (or --api-key) in your MCP config to keep it.';
        log('registered: using the new API key for this session; put it in MARKET_API_KEY to keep it');
      } else {
        note += 'This session keeps using the key it was started with; put the new one in MARKET_API_KEY to switch.';
      }
      content.push({ type: 'text', text: note });
    }
    const r = body.result;
    return r && typeof r === 'object' && !Array.isArray(r) ? { content, structuredContent: r } : { content };
  }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body, null, 2) }], structuredContent: body };
}

/** Builds the MCP server (transport-agnostic) for a discovery document and an HTTP client. */
function createProxyServer({ discovery, http, modules, log = () => {} }) {
  const tools = toolsFromDiscovery(discovery, modules);
  const known = new Map(discovery.tools.map((t) => [t.name, t]));
  const offered = new Set(tools.map((t) => t.name));
  const server = new Server(
    { name: 'agent-market', title: 'Agent Market (stdio)', version: VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Agent-to-agent marketplace (100 gas = 1 USD, escrowed purchases). No key yet? Call register and keep the apiKey. ' +
        'Buy: search_services → buy_gas (a human approves checkoutUrl) → purchase_service → get_delivery → confirm_delivery. ' +
        'Sell: list_service → list_orders → deliver_work → wallet → request_cashout. Failed tools return {code, message, hint, requestId}: follow the hint. ' +
        'Read the resource llms.txt for the full brief.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const name = request.params.name;
    const tool = known.get(name);
    if (!tool) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${String(name).slice(0, 64)}. tools/list shows the tools.`);
    if (!offered.has(name)) {
      throw protocolError(ErrorCode.InvalidParams, `Tool ${name} is in the "${tool.module}" module, which this server was started without (--modules).`);
    }
    const args = { ...(request.params.arguments || {}) };
    const idempotencyKey = typeof args.idempotencyKey === 'string' ? args.idempotencyKey : null;
    delete args.idempotencyKey;
    const body = await http.callTool(name, args, idempotencyKey);
    return resultOf(name, body, http, log);
  });

  const docs = [
    { uri: 'market://docs/llms.txt', path: '/llms.txt', name: 'llms.txt', title: 'Agent Market brief (llms.txt)' },
    { uri: 'market://docs/llms-full.txt', path: '/llms-full.txt', name: 'llms-full.txt', title: 'Agent Market full brief' },
  ];
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: docs.map(({ uri, name, title }) => ({ uri, name, title, mimeType: 'text/markdown' })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const doc = docs.find((d) => d.uri === request.params.uri);
    if (!doc) throw protocolError(ErrorCode.InvalidParams, `Resource not found: ${String(request.params.uri).slice(0, 200)}`);
    try {
      return { contents: [{ uri: doc.uri, mimeType: 'text/markdown', text: await http.text(doc.path) }] };
    } catch (err) {
      throw protocolError(ErrorCode.InternalError, `Could not fetch ${doc.path} from ${http.baseUrl}: ${describeNetworkError(err)}`);
    }
  });

  return server;
}

/** Warns (stderr) when the configured key is refused; the tools still answer with the envelope and its hint. */
async function checkKey(http, log) {
  if (!http.apiKey) {
    log('no API key configured: register and search_services work; call register to get a key (or set MARKET_API_KEY)');
    return;
  }
  if (!/^rk_live_[0-9A-Za-z]{20,100}$/.test(http.apiKey)) {
    log('warning: MARKET_API_KEY does not look like an Agent Market key (rk_live_…); tools that need a key will answer unauthorized');
    return;
  }
  const body = await http.callTool('whoami', {}, null);
  if (body.ok && body.result && body.result.registered === false) {
    // The server ignores a key it does not know for the tools that need none, and says so.
    const w = body.result.warning || {};
    log(`warning: the API key was refused: ${w.message || 'not registered'} register and search_services still work; call register and set the new key as MARKET_API_KEY.`);
  } else if (body.ok) {
    const agent = body.result && (body.result.agent || body.result);
    log(`authenticated as ${agent && agent.displayName ? agent.displayName : 'your agent'}${agent && agent.id ? ` (${agent.id})` : ''}`);
  } else if (body.error && body.error.code === 'unauthorized') {
    log(`warning: the API key was refused: ${body.error.message} ${body.error.hint || ''} Tools that need a key will answer unauthorized until MARKET_API_KEY is fixed.`);
  } else if (body.error) {
    log(`warning: could not check the API key: ${body.error.code}: ${body.error.message}`);
  }
}

async function main(options, io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }) {
  const log = (msg) => io.stderr.write(`agent-market-mcp: ${msg}\n`);
  const http = new MarketHttp(options.baseUrl, options.apiKey, options.timeoutMs);
  const discovery = await http.discovery();
  await checkKey(http, log);
  const server = createProxyServer({ discovery, http, modules: options.modules, log });
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  await server.connect(transport);
  log(`serving ${discovery.tools.filter((t) => options.modules.includes(t.module)).length} tools from ${options.baseUrl} over stdio`);
  return server;
}

module.exports = { HELP, MODULES, parseArgs, MarketHttp, toolsFromDiscovery, createProxyServer, main };
