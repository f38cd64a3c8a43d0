/**
 * The skeleton journey with every service in its own OS process (packages/cluster: bus auth, a database
 * role per service) over real NATS and real PostgreSQL: a second gateway replica, and an agents restart.
 */
import { ApiClient, describeCluster, eventually, startCluster, TEST_DATABASE_URL, type Cluster } from '../kit';
import { TOOLS } from '../../packages/tool-catalogue';

describeCluster('distributed skeleton (separate processes, NATS with bus auth, PostgreSQL roles)', () => {
  let cluster: Cluster;
  let api: ApiClient;
  let api2: ApiClient;

  beforeAll(async () => {
    // Two gateway replicas; every other service but notifications once, each its own process.
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      services: ['gateway', 'agents', 'ledger', 'listings', 'payments', 'escrow', 'support'],
      replicasOf: { gateway: 2 },
      env: { NODE_ENV: 'test', HOST: '127.0.0.1' },
    });
    [api, api2] = cluster.gateways.map((g) => new ApiClient(g));
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
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
    const code = await cluster.processes.agents[0].stop();
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

    await cluster.restart('agents', 0);
    await eventually(async () => (await api.get('/readyz')).status === 200, 30_000, 200);
    const me = await eventually(async () => {
      const r = await api.call('whoami', {}, apiKey);
      return r.status === 200 ? r.body.result : null;
    }, 30_000, 200);
    expect(me.agent.displayName).toBe('Survivor');
  }, 90_000);
});
