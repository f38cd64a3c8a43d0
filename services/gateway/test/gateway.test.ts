/** The skeleton end to end over HTTP: registration, keys, the router's envelope and discovery. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../packages/config';
import { createMarketplace, gatewayPort } from '../../../src/app';
import { ApiClient, startTestApp, type TestApp } from '../../../test/kit';
import { TOOLS } from '../../../packages/tool-catalogue';

describe('gateway and agents (embedded)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.stop();
  });

  async function post(body: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${app.baseUrl}/api/agent`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  }

  it('registers an agent, shows the key once, and whoami returns it', async () => {
    const { apiKey, agent } = await app.api.register('Tester', { label: 'ci', provider: 'cursor' });
    expect(apiKey).toMatch(/^rk_live_[0-9A-Za-z]{32,}$/);
    expect(agent).toMatchObject({ provider: 'cursor', displayName: 'Tester', label: 'ci', referredBy: null, gasBalance: 0 });
    expect(agent.id).toMatch(/^agt_/);

    const me = await app.api.ok('whoami', {}, apiKey);
    expect(me.agent).toMatchObject({ id: agent.id, provider: 'cursor', displayName: 'Tester', label: 'ci', gasBalance: 0 });
    expect(me.agent.reputation).toMatchObject({ salesCount: 0, unknown: true });
    expect(JSON.stringify(me)).not.toContain(apiKey);
  });

  it('stores only a hash of the key', async () => {
    const { apiKey, agent } = await app.api.register('Hashed');
    const gw = app.broker.getLocalService('agents') as any;
    const row = (await gw.db.query('SELECT * FROM agents.agents WHERE id = $1', [agent.id])).rows[0];
    expect(JSON.stringify(row)).not.toContain(apiKey);
    expect(row.api_key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers a wrong or missing key with 401 and a requestId equal to x-request-id', async () => {
    const wrong = await app.api.call('wallet', {}, 'rk_live_' + 'x'.repeat(40));
    expect(wrong.status).toBe(401);
    expect(wrong.body.ok).toBe(false);
    expect(wrong.body.error!.code).toBe('unauthorized');
    expect(wrong.body.error!.hint).toMatch(/register/i);
    expect(wrong.body.requestId).toBe(wrong.headers.get('x-request-id'));

    const missing = await app.api.call('wallet', {});
    expect(missing.status).toBe(401);
    expect(missing.body.error!.hint).toMatch(/register/);
  });

  it('keeps a sane incoming x-request-id and replaces an unsafe one', async () => {
    const kept = await post('{"tool":"whoami"}', { 'x-request-id': 'client-abc-12345' });
    expect(kept.headers.get('x-request-id')).toBe('client-abc-12345');
    expect(kept.body.requestId).toBe('client-abc-12345');
    const replaced = await post('{"tool":"whoami"}', { 'x-request-id': 'bad id <script>' });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('rejects an unknown tool with 400 unknown_tool listing the valid names', async () => {
    const r = await app.api.call('teleport', {});
    expect(r.status).toBe(400);
    expect(r.body.error!.code).toBe('unknown_tool');
    expect(r.body.error!.details.validTools).toHaveLength(TOOLS.length);
  });

  it('answers malformed JSON, a missing tool and non-object arguments with invalid_arguments, never a stack trace', async () => {
    const malformed = await post('{"tool": "whoami",');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_arguments');
    expect(JSON.stringify(malformed.body)).not.toMatch(/at .*\.(js|ts):\d+/);
    expect(malformed.body.requestId).toBe(malformed.headers.get('x-request-id'));

    const noTool = await post('{"arguments":{}}');
    expect(noTool.status).toBe(400);
    expect(noTool.body.error.code).toBe('invalid_arguments');

    const badArgs = await post('{"tool":"search_services","arguments":[1,2]}');
    expect(badArgs.status).toBe(400);
    expect(badArgs.body.error.code).toBe('invalid_arguments');
  });

  it('limits the JSON body size', async () => {
    const r = await post(JSON.stringify({ tool: 'register', arguments: { displayName: 'x'.repeat(300_000) } }));
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('invalid_arguments');
  });

  it('validates registration: provider enum, displayName 1–64 chars, referredBy must exist', async () => {
    const bad = await fetch(`${app.baseUrl}/api/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'notepad', displayName: '' }),
    });
    const body = (await bad.json()) as any;
    expect(bad.status).toBe(400);
    expect(body.error.code).toBe('invalid_arguments');
    expect(body.error.details.errors.map((e: any) => e.field).sort()).toEqual(['displayName', 'provider']);

    const long = await app.api.call('register', { provider: 'other', displayName: 'x'.repeat(65) });
    expect(long.status).toBe(400);
    const blank = await app.api.call('register', { provider: 'other', displayName: '   ' });
    expect(blank.status).toBe(400);

    const unknownRef = await app.api.call('register', { provider: 'other', displayName: 'Ref', referredBy: 'agt_nobody' });
    expect(unknownRef.status).toBe(400);
    expect(unknownRef.body.error!.details).toMatchObject({ field: 'referredBy' });

    const referrer = await app.api.register('Referrer');
    const referred = await app.api.ok('register', { provider: 'aider', displayName: '  Referred  ', referredBy: referrer.agent.id });
    expect(referred.agent).toMatchObject({ displayName: 'Referred', referredBy: referrer.agent.id });
  });

  it('lists every catalogue tool with module, auth and argument schema on GET /api/agent', async () => {
    const r = await app.api.get('/api/agent');
    expect(r.status).toBe(200);
    expect(r.body.tools).toHaveLength(TOOLS.length);
    const purchase = r.body.tools.find((t: any) => t.name === 'purchase_service');
    expect(purchase).toMatchObject({ module: 'buy', auth: true });
    expect(purchase.inputSchema.required).toEqual(['listingId']);
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it('serves /healthz and /readyz', async () => {
    expect((await app.api.get('/healthz')).status).toBe(200);
    const ready = await app.api.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.services.agents).toBe(true);
  });

  it('answers unknown routes with the envelope', async () => {
    const r = await app.api.get('/nowhere');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });
});

describe('embedded persistence', () => {
  it('keeps agents across a restart on the same PGlite data dir', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-'));
    const config = loadConfig({ NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'error', SEED_ON_EMPTY: 'false', SWEEP_INTERVAL_MS: '0' });
    try {
      let broker = createMarketplace(config);
      await broker.start();
      let api = new ApiClient(`http://127.0.0.1:${gatewayPort(broker)}`);
      const { apiKey, agent } = await api.register('Durable');
      await broker.stop();

      broker = createMarketplace(config);
      await broker.start();
      api = new ApiClient(`http://127.0.0.1:${gatewayPort(broker)}`);
      const me = await api.ok('whoami', {}, apiKey);
      expect(me.agent.id).toBe(agent.id);
      await broker.stop();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000); // two cold starts migrating every schema on an on-disk PGlite: slow on a loaded machine
});
