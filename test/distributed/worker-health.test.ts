/**
 * A process without the gateway answers probes on its PORT: /healthz, /readyz (database, bus and
 * durable events) and /metrics — and nothing else.
 */
import { describeCluster, startCluster, TEST_DATABASE_URL, type Cluster } from '../kit';

describeCluster('worker health server', () => {
  let cluster: Cluster;
  let base: string;

  beforeAll(async () => {
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      services: ['ledger'],
      env: { NODE_ENV: 'test', HOST: '127.0.0.1', METRICS_TOKEN: 'metrics-secret' },
    });
    base = `http://127.0.0.1:${cluster.processes.ledger[0].port}`;
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);

  it('is alive and ready, naming each part it checked', async () => {
    const live = await fetch(`${base}/healthz`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    const body = (await ready.json()) as any;
    expect(ready.status).toBe(200);
    expect(body).toMatchObject({ ok: true, status: 'ready', failing: [], services: ['ledger'] });
    expect(Object.keys(body.checks).sort()).toEqual(['bus', 'database', 'durable_events']);
  });

  it('serves Prometheus metrics behind METRICS_TOKEN, and nothing else', async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const m = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer metrics-secret' } });
    expect(m.status).toBe(200);
    expect(await m.text()).toMatch(/moleculer_/);
    expect((await fetch(`${base}/api/agent`)).status).toBe(404);
  });
});
