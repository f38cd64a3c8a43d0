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

  it('is not ready while agents is down, and recovers when it comes back (SIGTERM shuts down cleanly)', async () => {
    const { apiKey } = await api.register('Survivor');
    const code = await agentsProc.stop();
    expect(code).toBe(0);
    await eventually(async () => (await api.get('/readyz')).status === 503, 30_000, 200);
    const down = await api.call('whoami', {}, apiKey);
    // The key may still be cached for a few seconds; either way there is no stack trace and no 500.
    expect([200, 503]).toContain(down.status);

    const again = await spawnServices(['agents'], { ...env, NODE_ID: 'agents-2' });
    procs.push(again);
    await eventually(async () => (await api.get('/readyz')).status === 200, 30_000, 200);
    const me = await eventually(async () => {
      const r = await api.call('whoami', {}, apiKey);
      return r.status === 200 ? r.body.result : null;
    }, 30_000, 200);
    expect(me.agent.displayName).toBe('Survivor');
  }, 90_000);
});
