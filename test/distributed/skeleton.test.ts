/**
 * The skeleton journey with every service in its own OS process over real NATS and real PostgreSQL:
 * gateway and agents apart, a second gateway replica, and an agents restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ApiClient,
  createTestDatabase,
  describeDistributed,
  eventually,
  freePort,
  spawnServices,
  TEST_NATS_URL,
  type ServiceProcess,
  type TestDatabase,
  waitForGateway,
} from '../../packages/testkit';
import { TOOLS } from '../../packages/tool-catalogue';
import { base62 } from '../../packages/ids';

describeDistributed('distributed skeleton (separate processes, NATS, PostgreSQL)', () => {
  let tdb: TestDatabase;
  let env: Record<string, string>;
  const procs: ServiceProcess[] = [];
  let api: ApiClient;
  let api2: ApiClient;
  let agentsProc: ServiceProcess;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-dist-'));
    env = { TRANSPORTER: TEST_NATS_URL!, DATABASE_URL: tdb.url, NAMESPACE: `t${base62(8)}`, DATA_DIR: dataDir, NODE_ENV: 'test' };
    const [port1, port2] = [await freePort(), await freePort()];
    const started = await Promise.all([
      spawnServices(['gateway'], { ...env, PORT: String(port1), NODE_ID: 'gw-1' }),
      spawnServices(['gateway'], { ...env, PORT: String(port2), NODE_ID: 'gw-2' }),
      spawnServices(['agents'], { ...env, NODE_ID: 'agents-1' }),
      spawnServices(['ledger', 'listings', 'payments', 'escrow', 'support'], { ...env, NODE_ID: 'rest-1' }),
    ]);
    procs.push(...started);
    agentsProc = started[2];
    api = new ApiClient(`http://127.0.0.1:${port1}`);
    api2 = new ApiClient(`http://127.0.0.1:${port2}`);
    const all = ['agents', 'ledger', 'listings', 'payments', 'escrow', 'support'];
    await waitForGateway(api, all);
    await waitForGateway(api2, all);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await tdb?.drop();
  }, 60_000);

  it('registers through one gateway replica and authenticates through the other', async () => {
    const { apiKey, agent } = await api.register('Distributed');
    const me = await api2.ok('whoami', {}, apiKey);
    expect(me.agent).toMatchObject({ id: agent.id, displayName: 'Distributed', gasBalance: 0 });
  });

  it('answers a wrong key with 401 and the request id in body and header', async () => {
    const r = await api.call('wallet', {}, 'rk_live_' + 'y'.repeat(40));
    expect(r.status).toBe(401);
    expect(r.body.requestId).toBe(r.headers.get('x-request-id'));
  });

  it('lists every catalogue tool from a gateway that runs no other service', async () => {
    expect((await api.get('/api/agent')).body.tools).toHaveLength(TOOLS.length);
  });

  it('stays ready while agents is down: search answers, whoami is a clean 503 with a hint; recovers when agents is back', async () => {
    const { apiKey } = await api.register('Survivor');
    const code = await agentsProc.stop();
    expect(code).toBe(0);
    // The gateway can still serve (search, pages, other tools): it stays in the load balancer.
    for (const gw of [api, api2]) {
      await eventually(async () => (await gw.get('/readyz')).body?.services?.agents === false, 30_000, 200);
      const ready = await gw.get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.services.agents).toBe(false);
      expect((await gw.call('search_services', {})).status).toBe(200);
      const down = await gw.call('whoami', {}, apiKey);
      expect(down.status).toBe(503);
      expect(down.body.error).toMatchObject({ code: 'service_unavailable' });
      expect(down.body.error!.hint).toMatch(/Retry in a few seconds/);
      expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    }

    const again = await spawnServices(['agents'], { ...env, NODE_ID: 'agents-2' });
    procs.push(again);
    await waitForGateway(api, ['agents']);
    const me = await eventually(async () => {
      const r = await api.call('whoami', {}, apiKey);
      return r.status === 200 ? r.body.result : null;
    }, 30_000, 200);
    expect(me.agent.displayName).toBe('Survivor');
  }, 90_000);
});
