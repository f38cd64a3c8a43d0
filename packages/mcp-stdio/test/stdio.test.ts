/** The stdio package: the real bin spawned with node, driven by the MCP SDK client, against the real app. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestApp, type TestApp } from '../../../test/kit';
import { TOOLS, toolsOfModules } from '../../tool-catalogue';
import { callErr, callOk, connect, runJourneys } from '../../../services/gateway/test/mcp-helpers';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { newListing } from '../../../services/escrow/test/helpers';

const BIN = path.resolve(__dirname, '../bin/agent-market-mcp.js');

function stdioTransport(env: Record<string, string>, args: string[] = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d.toString()));
  return { transport, stderr: () => stderr };
}

/** Runs the bin to completion with an empty stdin. Async: the app under test lives in this process. */
function runBin(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d.toString()));
    child.stderr.on('data', (d) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
    child.stdin.end();
  });
}

describe('agent-market-mcp (stdio)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('--help explains the configuration; bad options and an unreachable service fail with a clear message', async () => {
    const help = await runBin(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/MARKET_BASE_URL/);
    expect(help.stdout).toMatch(/MARKET_API_KEY/);
    // Issue #23: npx runs the scoped package; the unscoped name would install someone else's.
    // Issue 37: until it is published, from the tarball a deployment serves (the registry form is marked as such).
    expect(help.stdout).toContain('"args": ["-y","--package=https://market.example/downloads/agent-market-mcp-0.1.0.tgz","agent-market-mcp"]');
    expect(help.stdout).toMatch(/npx -y @agent-market\/mcp .*once @agent-market\/mcp is published/);
    expect(help.stdout).not.toMatch(/"-y", "agent-market-mcp"|npx (-y )?agent-market-mcp/);

    const bad = await runBin(['--modules', 'nonsense']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--modules takes a comma list/);

    const down = await runBin([], { MARKET_BASE_URL: 'http://127.0.0.1:9' });
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(/cannot reach the Agent Market service at http:\/\/127\.0\.0\.1:9/);
    expect(down.stderr).toMatch(/MARKET_BASE_URL/);

    // The client closing stdin ends the process (no lingering server).
    const closed = await runBin(['--base-url', app.baseUrl]);
    expect({ status: closed.status, signal: closed.signal }).toEqual({ status: 0, signal: null });
    expect(closed.stderr).toMatch(/serving \d+ tools/);
  });

  test('the tool list comes from the service discovery; register without a key adopts the new key for the session', async () => {
    const { transport, stderr } = stdioTransport({ MARKET_BASE_URL: app.baseUrl });
    const client = await connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const purchase = tools.find((t) => t.name === 'purchase_service')!;
    expect(purchase.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(purchase.inputSchema.properties).toHaveProperty('idempotencyKey');

    const unauth = await callErr(client, 'whoami');
    expect(unauth.error.code).toBe('unauthorized');
    expect(unauth.error.hint).toMatch(/register/i);

    const reg: any = await client.callTool({ name: 'register', arguments: { provider: 'cursor', displayName: 'Stdio Agent' } });
    expect(reg.structuredContent.apiKey).toMatch(/^rk_live_/);
    expect(reg.content[1].text).toMatch(/MARKET_API_KEY/);
    const me = await callOk(client, 'whoami');
    expect(me.agent).toMatchObject({ displayName: 'Stdio Agent' });

    const bad = await callErr(client, 'register', { provider: 'nope' });
    expect(bad.error.code).toBe('invalid_arguments');
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('market://docs/llms.txt');
    const llms = await client.readResource({ uri: 'market://docs/llms.txt' });
    expect((llms.contents[0] as any).text).toMatch(/register/i);

    // One server factory: the stdio door offers what /mcp offers (instructions, prompts, resources).
    const remote = await connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`)));
    expect(client.getInstructions()).toBe(remote.getInstructions());
    expect((await client.listPrompts()).prompts).toEqual((await remote.listPrompts()).prompts);
    expect(resources).toEqual((await remote.listResources()).resources);
    const viaStdio = await client.getPrompt({ name: 'buy_a_service_safely', arguments: { need: 'jest tests' } });
    const viaHttp = await remote.getPrompt({ name: 'buy_a_service_safely', arguments: { need: 'jest tests' } });
    expect(viaStdio.messages).toEqual(viaHttp.messages);
    await remote.close();
    await client.close();
    expect(stderr()).toMatch(/no API key configured/);
  });

  test('a configured key (env or --api-key) is used; a wrong key is reported on stderr and in tool errors; --modules subsets', async () => {
    const { apiKey } = await app.api.register('Configured Agent');
    const viaEnv = stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: apiKey });
    const c1 = await connect(viaEnv.transport);
    expect((await callOk(c1, 'whoami')).agent.displayName).toBe('Configured Agent');
    await c1.close();
    expect(viaEnv.stderr()).toMatch(/authenticated as Configured Agent/);

    const viaArgs = stdioTransport({}, ['--base-url', app.baseUrl, '--api-key', apiKey, '--modules', 'buy,shared']);
    const c2 = await connect(viaArgs.transport);
    const { tools } = await c2.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(toolsOfModules(['buy', 'shared']).map((t) => t.name).sort());
    // A buyer keeps whoami and wallet (polling the balance after a checkout) though the spec files them under sell.
    expect((await callOk(c2, 'whoami')).agent.displayName).toBe('Configured Agent');
    expect(await callOk(c2, 'wallet')).toHaveProperty('gasBalance');
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['ask_help', 'purchase_service']));
    await expect(c2.callTool({ name: 'list_service', arguments: {} })).rejects.toThrow(/"sell" module/);
    await c2.close();

    // A seller's selection: its own tools, ack_purchase (filed under buy by the spec), whoami, wallet, ask_help.
    const sellArgs = stdioTransport({}, ['--base-url', app.baseUrl, '--api-key', apiKey, '--modules', 'sell,shared']);
    const c4 = await connect(sellArgs.transport);
    const sellTools = (await c4.listTools()).tools;
    expect(sellTools.map((t) => t.name).sort()).toEqual(toolsOfModules(['sell', 'shared']).map((t) => t.name).sort());
    expect(sellTools.map((t) => t.name)).toEqual(expect.arrayContaining(['ack_purchase', 'list_service', 'whoami', 'wallet', 'ask_help']));
    expect(sellTools.find((t) => t.name === 'ack_purchase')!._meta).toMatchObject({ 'agent-market/module': 'buy', 'agent-market/offeredIn': ['buy', 'sell'] });
    await expect(c4.callTool({ name: 'purchase_service', arguments: {} })).rejects.toThrow(/"buy" module/);
    await c4.close();

    const wrong = stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: `rk_live_${'Z'.repeat(40)}` });
    const c3 = await connect(wrong.transport);
    const env = await callErr(c3, 'wallet');
    expect(env.error.code).toBe('unauthorized');
    await c3.close();
    expect(wrong.stderr()).toMatch(/API key was refused/);
  });

  test('buyer and seller journeys end to end through two agent-market-mcp processes', async () => {
    const s = await app.api.register('Seller over stdio');
    const b = await app.api.register('Buyer over stdio');
    const seller = await connect(stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: s.apiKey }).transport);
    const buyer = await connect(stdioTransport({}, ['--base-url', app.baseUrl, '--api-key', b.apiKey]).transport);
    await runJourneys(app, seller, buyer, 'stdio');
    await seller.close();
    await buyer.close();
  });

  test('purchase_service as an MCP task through the stdio server: another stdio process answers tasks/get and tasks/result', async () => {
    const s = await app.api.register('Task seller over stdio');
    const b = await app.api.register('Task buyer over stdio');
    const other = await app.api.register('Someone else over stdio');
    await creditGas(app, b.agent.id, 500);
    const listing = await newListing(app, { id: s.agent.id, apiKey: s.apiKey });

    const first = await connect(stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: b.apiKey }).transport);
    expect(first.getServerCapabilities()?.tasks).toEqual({ list: {}, requests: { tools: { call: {} } } });
    expect((await first.listTools()).tools.find((t) => t.name === 'purchase_service')!.execution).toEqual({ taskSupport: 'optional' });
    const created = await first.request(
      { method: 'tools/call', params: { name: 'purchase_service', arguments: { listingId: listing.id, idempotencyKey: 'stdio-task' }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(created.task).toMatchObject({ taskId: expect.stringMatching(/^pur_/), status: 'working' });
    const taskId = created.task.taskId;
    await first.close();

    // A new process (nothing in memory) with the same key: the task is the purchase.
    const again = await connect(stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: b.apiKey }).transport);
    expect((await again.experimental.tasks.getTask(taskId)).status).toBe('working');
    const waiting = again.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await app.api.ok('deliver_work', { purchaseId: taskId, delivery: { summary: 'Delivered to a stdio buyer' } }, s.apiKey);
    const result: any = await waiting;
    expect(result.structuredContent.delivery.delivery.summary).toBe('Delivered to a stdio buyer');
    expect((await again.experimental.tasks.getTask(taskId)).status).toBe('completed');
    await callOk(again, 'confirm_delivery', { purchaseId: taskId });
    await again.close();

    const stranger = await connect(stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: other.apiKey }).transport);
    await expect(stranger.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
    await stranger.close();
    await expectLedgerClean(app);
  });

  test('buy_gas: a client with URL-mode elicitation is asked to open the checkout; a client without gets the plain result', async () => {
    const { apiKey } = await app.api.register('Elicitation Agent');
    const asked: any[] = [];
    const capable = new Client({ name: 'url-elicitation-client', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    capable.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept' };
    });
    await capable.connect(stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: apiKey }).transport);
    const withElicitation = await callOk(capable, 'buy_gas', { packId: 'starter', idempotencyKey: 'elicit-1' });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: 'url', url: withElicitation.checkoutUrl, elicitationId: withElicitation.sessionId });
    expect(asked[0].message).toMatch(/500 gas for 5 USD/);
    expect(withElicitation.elicitation).toEqual({ action: 'accept' });
    // Other tools never elicit.
    await callOk(capable, 'get_checkout');
    expect(asked).toHaveLength(1);
    await capable.close();

    const plain = await connect(stdioTransport({ MARKET_BASE_URL: app.baseUrl, MARKET_API_KEY: apiKey }).transport);
    const withoutElicitation = await callOk(plain, 'buy_gas', { packId: 'starter', idempotencyKey: 'elicit-2' });
    expect(withoutElicitation.checkoutUrl).toMatch(/^http/);
    expect(withoutElicitation).not.toHaveProperty('elicitation');
    await plain.close();

    // The stateless /mcp never saw initialize on the server that answers tools/call: the plain result.
    const remote = new Client({ name: 'url-elicitation-client', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    remote.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept' };
    });
    await remote.connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
    const viaHttp = await callOk(remote, 'buy_gas', { packId: 'starter', idempotencyKey: 'elicit-3' });
    expect(viaHttp).not.toHaveProperty('elicitation');
    expect(asked).toHaveLength(1);
    await remote.close();
  });
});
