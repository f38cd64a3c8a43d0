/** Remote MCP at /mcp: a real SDK client over Streamable HTTP against the real app (PGlite in memory). */
import { startTestApp, type TestApp } from '../../../test/kit';
import { TOOLS, toolsOfModules } from '../../../packages/tool-catalogue';
import { callErr, callOk, connect, httpTransport, runJourneys } from './mcp-helpers';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

async function rawPost(app: TestApp, body: unknown, headers: Record<string, string> = {}, path = '/mcp') {
  const res = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, json, text };
}

describe('remote MCP endpoint /mcp', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ALLOWED_HOSTS: 'market.example', ALLOWED_ORIGINS: 'https://app.example' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('initialize describes the server; tools/list is the whole catalogue with titles, schemas and honest annotations', async () => {
    const client = await connect(httpTransport(app.baseUrl));
    expect(client.getServerVersion()).toMatchObject({ name: 'agent-market', version: '0.1.0' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    expect(client.getInstructions()).toContain('register');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('search_services')).toMatchObject({ title: 'Search services', annotations: { readOnlyHint: true, destructiveHint: false } });
    expect(byName.get('purchase_service')).toMatchObject({ annotations: { readOnlyHint: false, destructiveHint: true } });
    expect(byName.get('purchase_service')!.inputSchema).toMatchObject({ type: 'object', required: ['listingId'] });
    expect(byName.get('purchase_service')!.inputSchema.properties).toHaveProperty('idempotencyKey');
    expect(byName.get('whoami')!.inputSchema.properties).not.toHaveProperty('idempotencyKey');
    expect(byName.get('register')!.inputSchema.properties).not.toHaveProperty('idempotencyKey');
    expect(byName.get('confirm_delivery')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(byName.get('delete_webhook')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    await client.close();
  });

  test('completion/complete offers prompt argument values and resource template names; logging/setLevel is accepted', async () => {
    const client = await connect(httpTransport(app.baseUrl));
    expect(client.getServerCapabilities()).toMatchObject({ completions: {}, logging: {} });
    const categories = await client.complete({ ref: { type: 'ref/prompt', name: 'sell_a_skill' }, argument: { name: 'category', value: 'co' } });
    expect(categories.completion.values).toEqual(['codegen']);
    const tools = await client.complete({ ref: { type: 'ref/resource', uri: 'market://tools/{name}' }, argument: { name: 'name', value: 'buy_' } });
    expect(tools.completion.values).toEqual(['buy_gas', 'buy_credits']);
    const unknown = await client.complete({ ref: { type: 'ref/prompt', name: 'no_such_prompt' }, argument: { name: 'x', value: '' } });
    expect(unknown.completion.values).toEqual([]);
    expect(await client.setLoggingLevel('info')).toEqual({});
    await client.close();
  });

  test('?modules=buy,shared keeps the tool list small; a tool outside the subset is a protocol error', async () => {
    const client = await connect(httpTransport(app.baseUrl, { query: 'modules=buy,shared' }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(toolsOfModules(['buy', 'shared']).map((t) => t.name).sort());
    expect(tools.find((t) => t.name === 'list_service')).toBeUndefined();
    await expect(client.callTool({ name: 'list_service', arguments: {} })).rejects.toThrow(/sell/);
    // Every selection keeps whoami, wallet and ask_help; each still reports its spec module.
    const whoami = tools.find((t) => t.name === 'whoami');
    expect(whoami?._meta).toMatchObject({ 'agent-market/module': 'sell', 'agent-market/offeredIn': ['buy', 'sell', 'shared'] });
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['wallet', 'ask_help']));
    await client.close();

    const seller = await connect(httpTransport(app.baseUrl, { query: 'modules=sell,shared' }));
    const sellTools = (await seller.listTools()).tools.map((t) => t.name);
    expect(sellTools.sort()).toEqual(toolsOfModules(['sell', 'shared']).map((t) => t.name).sort());
    expect(sellTools).toEqual(expect.arrayContaining(['ack_purchase', 'whoami', 'wallet', 'ask_help', 'list_service']));
    expect(sellTools).not.toContain('purchase_service');
    await seller.close();

    const bad = await rawPost(app, INIT, {}, '/mcp?modules=buy,nonsense');
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/modules/);
  });

  test('register works without a key and returns the key once; the key then works as bearer and as ?api_key=', async () => {
    const anon = await connect(httpTransport(app.baseUrl));
    const reg: any = await anon.callTool({ name: 'register', arguments: { provider: 'claude_code', displayName: 'MCP Tester' } });
    expect(reg.isError).toBeFalsy();
    expect(reg.structuredContent.apiKey).toMatch(/^rk_live_/);
    expect(reg.content.map((c: any) => c.text).join('\n')).toMatch(/shown only once/);
    const apiKey = reg.structuredContent.apiKey as string;

    // Without a key, authenticated tools answer a tool error with the envelope and a hint.
    const env = await callErr(anon, 'whoami');
    expect(env).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(env.error.hint).toMatch(/register/i);
    expect(env.requestId).toEqual(expect.any(String));
    await anon.close();

    for (const via of ['bearer', 'query'] as const) {
      const client = await connect(httpTransport(app.baseUrl, { apiKey, via }));
      const me = await callOk(client, 'whoami');
      expect(me.agent ?? me).toMatchObject({ displayName: 'MCP Tester' });
      await client.close();
    }
  });

  test('a wrong key, bad arguments and unknown tools: tool errors carry the envelope, protocol errors are JSON-RPC errors', async () => {
    const wrong = await connect(httpTransport(app.baseUrl, { apiKey: 'rk_live_' + 'x'.repeat(40) }));
    const env = await callErr(wrong, 'wallet');
    expect(env.error.code).toBe('unauthorized');
    expect(env.error.hint).toBeTruthy();
    await wrong.close();

    const anon = await connect(httpTransport(app.baseUrl));
    const bad = await callErr(anon, 'register', { provider: 'not-a-provider' });
    expect(bad.error.code).toBe('invalid_arguments');
    expect(bad.error.hint).toBeTruthy();
    expect(bad.error.details.errors.length).toBeGreaterThan(0);
    await expect(anon.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await anon.close();

    const parse = await rawPost(app, '{not json');
    expect(parse.status).toBe(400);
    expect(parse.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  test('stateless: no session id is issued and any request works on its own (so any replica can answer it)', async () => {
    const init = await rawPost(app, INIT);
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    // No initialize on this "replica", no session header: a tools/call still works.
    const { apiKey } = await app.api.register('Stateless');
    const call = await rawPost(
      app,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { authorization: `Bearer ${apiKey}`, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(call.status).toBe(200);
    expect(call.json.result.structuredContent.agent.displayName).toBe('Stateless');
    expect(call.headers.get('x-request-id')).toBeTruthy();
  });

  test('DNS rebinding: a foreign Host or Origin is refused before anything runs; ours are accepted', async () => {
    const evil = await rawPost(app, INIT, { host: 'evil.example.com', origin: 'http://evil.example.com' });
    expect(evil.status).toBe(403);
    const evilOrigin = await rawPost(app, INIT, { origin: 'http://evil.example.com' });
    expect(evilOrigin.status).toBe(403);
    const host = new URL(app.baseUrl).host;
    for (const headers of <Record<string, string>[]>[{ origin: `http://${host}` }, { host: 'market.example' }, { origin: 'https://app.example' }, { host: `localhost:${new URL(app.baseUrl).port}` }]) {
      const ok = await rawPost(app, INIT, headers);
      expect({ headers, status: ok.status }).toEqual({ headers, status: 200 });
      expect(ok.json.result.serverInfo.name).toBe('agent-market');
    }
  });

  test('CORS for browser clients: preflight allowed for our origins, mcp-session-id exposed; GET is 405 (stateless)', async () => {
    const pre = await fetch(`${app.baseUrl}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, mcp-protocol-version' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(pre.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/i);
    const post = await rawPost(app, INIT, { origin: 'https://app.example' });
    expect(post.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/i);
    const get = await fetch(`${app.baseUrl}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
  });

  test('resources: the llms.txt brief and per-tool docs; prompts: buy safely and sell through the quality gate', async () => {
    const client = await connect(httpTransport(app.baseUrl));
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(['market://docs/llms.txt', 'market://docs/llms-full.txt', 'market://tools/purchase_service']));
    const doc = await client.readResource({ uri: 'market://tools/purchase_service' });
    expect((doc.contents[0] as any).text).toContain('listingId');
    await expect(client.readResource({ uri: 'market://nope' })).rejects.toThrow(/not found/i);

    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['buy_a_service_safely', 'sell_a_skill']);
    const buy = await client.getPrompt({ name: 'buy_a_service_safely', arguments: { need: 'unit tests' } });
    expect((buy.messages[0].content as any).text).toMatch(/search_services[\s\S]*purchase_service[\s\S]*confirm_delivery/);
    const sell = await client.getPrompt({ name: 'sell_a_skill', arguments: { skill: 'Jest tests' } });
    expect((sell.messages[0].content as any).text).toMatch(/55/);
    await client.close();
  });

  test('journeys: a seller (bearer header) and a buyer (?api_key=) who both registered over MCP trade end to end', async () => {
    const anon = await connect(httpTransport(app.baseUrl));
    const s = await callOk(anon, 'register', { provider: 'claude_code', displayName: 'Seller over MCP' });
    const b = await callOk(anon, 'register', { provider: 'cursor', displayName: 'Buyer over MCP' });
    await anon.close();
    const seller = await connect(httpTransport(app.baseUrl, { apiKey: s.apiKey, via: 'bearer', query: 'modules=sell,buy,shared' }));
    const buyer = await connect(httpTransport(app.baseUrl, { apiKey: b.apiKey, via: 'query' }));
    await runJourneys(app, seller, buyer, 'http');
    await seller.close();
    await buyer.close();
  });
});
