/**
 * agent-market-mcp: a local stdio MCP server, a thin proxy to an Agent Market service. It is the
 * same server as the service's /mcp (lib/market-server.js, the one factory): its instructions, tools,
 * prompts and resources are read from the service's /mcp at start, prompts and resources are
 * rendered there, and tool calls go to the HTTPS tool router (POST /api/agent) with this session's
 * key. Plain CommonJS, no build step: `node bin/agent-market-mcp.js` runs it.
 */
'use strict';

const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { createMarketServer, protocolError, ErrorCode } = require('./market-server.js');
const { stdioInstall } = require('./install.js');

const VERSION = require('../package.json').version;
const MODULES = ['buy', 'sell', 'shared'];
const DEFAULT_BASE_URL = 'http://localhost:3000';

const EXAMPLE = stdioInstall('https://market.example');

const HELP = `agent-market-mcp ${VERSION}: Agent Market tools for your IDE agent, over MCP stdio.

Usage (the package is @agent-market/mcp; its command is agent-market-mcp). Every Agent Market service
serves this package at <its address>/downloads/${EXAMPLE.tarballUrl.split('/').pop()}:
  ${EXAMPLE.commandLine} [options]
  agent-market-mcp [--base-url URL] [--api-key KEY] [--modules buy,sell,shared]
  ${EXAMPLE.registry.commandLine} [options]   (${EXAMPLE.registry.status})

Options (each also read from the environment):
  --base-url URL      Agent Market service address            MARKET_BASE_URL  (default ${DEFAULT_BASE_URL})
  --api-key KEY       your API key (rk_live_…)                MARKET_API_KEY   (optional: register and
                                                                                search_services work without it)
  --modules LIST      only these tool groups: buy, sell, shared MARKET_MODULES (default: all;
                                                              whoami, wallet and ask_help come with any)
  --timeout MS        per-call HTTP timeout                   MARKET_TIMEOUT_MS (default 30000)
  -h, --help          this help
  -v, --version       the version

No key yet? Start without one and call the register tool: the key it returns is used for the rest
of the session; put it in MARKET_API_KEY to keep it.

Example MCP client config (Claude Code, Cursor, Windsurf, Cline… use the same shape):
  {"mcpServers": {"agent-market": {"command": "npx",
    "args": ${JSON.stringify(EXAMPLE.args)},
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

/** Only for a service without /mcp (older versions); otherwise the service's own instructions are used. */
const FALLBACK_INSTRUCTIONS =
  'Agent-to-agent marketplace (escrowed purchases priced in gas). No key yet? Call register and keep the apiKey. ' +
  'Failed tools return {code, message, hint, requestId}: follow the hint. Read the resource llms.txt for the full brief.';

const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description: 'Optional: the same key within 24 hours returns the first result and does nothing twice (sent as the Idempotency-Key header).',
};

/**
 * Does a module selection offer this discovery entry? `offeredIn` (the service's own rule: whoami, wallet
 * and ask_help in every selection, ack_purchase also with sell); an older service sends only `module`.
 */
function offeredBy(tool, modules) {
  return (Array.isArray(tool.offeredIn) ? tool.offeredIn : [tool.module]).some((m) => modules.includes(m));
}

/** MCP tool definitions from the discovery document. */
function toolsFromDiscovery(discovery, modules) {
  return discovery.tools
    .filter((t) => offeredBy(t, modules))
    .map((t) => {
      const inputSchema = JSON.parse(JSON.stringify(t.inputSchema || { type: 'object', properties: {} }));
      // Idempotency keys are scoped to the calling agent: tools used without a key (register) get none.
      if (t.mutating && t.auth) inputSchema.properties = { ...(inputSchema.properties || {}), idempotencyKey: IDEMPOTENCY_KEY_SCHEMA };
      return {
        name: t.name,
        title: t.title,
        description: `${t.description}${t.auth ? '' : ' (No API key needed.)'}`,
        inputSchema,
        ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
        annotations: { title: t.title, ...(t.annotations || {}) },
      };
    });
}

/** After register: the key is shown once; a session without a key adopts it. */
function registerNote(body, http, log) {
  if (!body.result || !body.result.apiKey) return null;
  let note = 'Store this apiKey now: it is shown only once. ';
  if (!http.apiKey) {
    http.apiKey = body.result.apiKey;
    note += 'This session now uses it; set MARKET_API_KEY (or --api-key) in your MCP config to keep it.';
    log('registered: using the new API key for this session; put it in MARKET_API_KEY to keep it');
  } else {
    note += 'This session keeps using the key it was started with; put the new one in MARKET_API_KEY to switch.';
  }
  return note;
}

/**
 * The service's own MCP definitions, read from its /mcp (the same factory serves them there).
 * Returns null when the service has no /mcp (then the tools come from the discovery document).
 */
async function remoteDefinitions(baseUrl, modules, timeoutMs) {
  const url = new URL(`${baseUrl}/mcp`);
  if (modules.length < MODULES.length) url.searchParams.set('modules', modules.join(','));
  const client = new Client({ name: 'agent-market-mcp', version: VERSION });
  try {
    await client.connect(new StreamableHTTPClientTransport(url), { timeout: timeoutMs });
    const opts = { timeout: timeoutMs };
    const [tools, prompts, resources, templates] = await Promise.all([
      client.listTools(undefined, opts),
      client.listPrompts(undefined, opts),
      client.listResources(undefined, opts),
      client.listResourceTemplates(undefined, opts),
    ]);
    return {
      client,
      instructions: client.getInstructions() || '',
      tools: tools.tools,
      prompts: prompts.prompts,
      resources: resources.resources,
      resourceTemplates: templates.resourceTemplates,
    };
  } catch {
    await client.close().catch(() => undefined);
    return null;
  }
}

/** Builds the MCP server (transport-agnostic): the shared factory, answering through the service. */
function createProxyServer({ discovery, http, modules, remote, log = () => {} }) {
  const known = new Map(discovery.tools.map((t) => [t.name, t]));
  const docs = [
    { uri: 'market://docs/llms.txt', path: '/llms.txt', name: 'llms.txt', title: 'Agent Market brief (llms.txt)', mimeType: 'text/markdown' },
    { uri: 'market://docs/llms-full.txt', path: '/llms-full.txt', name: 'llms-full.txt', title: 'Agent Market full brief', mimeType: 'text/markdown' },
  ];
  const defs = remote || {
    instructions: FALLBACK_INSTRUCTIONS,
    tools: toolsFromDiscovery(discovery, modules),
    prompts: [],
    resources: docs.map(({ uri, name, title, mimeType }) => ({ uri, name, title, mimeType })),
    resourceTemplates: [],
  };
  return createMarketServer(
    {
      info: { name: 'agent-market', title: 'Agent Market (stdio)', version: VERSION },
      instructions: defs.instructions,
      tools: defs.tools,
      prompts: defs.prompts,
      resources: defs.resources,
      resourceTemplates: defs.resourceTemplates,
    },
    {
      async callTool(name, args) {
        const idempotencyKey = typeof args.idempotencyKey === 'string' ? args.idempotencyKey : null;
        delete args.idempotencyKey;
        return http.callTool(name, args, idempotencyKey);
      },
      unknownToolMessage(name) {
        const tool = known.get(name);
        return tool ? `Tool ${name} is in the "${tool.module}" module, which this server was started without (--modules ${modules.join(',')}).` : null;
      },
      noteFor: (name, body) => (name === 'register' ? registerNote(body, http, log) : null),
      async readResource(uri) {
        try {
          if (remote) return (await remote.client.readResource({ uri })).contents[0].text;
          const doc = docs.find((d) => d.uri === uri);
          return doc ? await http.text(doc.path) : null;
        } catch (err) {
          if (err && err.code === ErrorCode.InvalidParams) return null;
          throw protocolError(ErrorCode.InternalError, `Could not read ${uri.slice(0, 200)} from ${http.baseUrl}: ${describeNetworkError(err)}`);
        }
      },
      async getPrompt(name, args) {
        const r = await remote.client.getPrompt({ name, arguments: args });
        return r.messages.map((m) => (m.content && m.content.type === 'text' ? m.content.text : '')).join('\n');
      },
    },
  );
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
  const remote = await remoteDefinitions(options.baseUrl, options.modules, options.timeoutMs);
  if (!remote) log(`${options.baseUrl}/mcp did not answer: serving the tools of the discovery document only (no prompts)`);
  const server = createProxyServer({ discovery, http, modules: options.modules, remote, log });
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  await server.connect(transport);
  log(`serving ${discovery.tools.filter((t) => offeredBy(t, options.modules)).length} tools from ${options.baseUrl} over stdio`);
  return server;
}

module.exports = { HELP, MODULES, parseArgs, MarketHttp, toolsFromDiscovery, remoteDefinitions, createProxyServer, createMarketServer, main };
