/**
 * A process without the gateway answers probes on its PORT: /healthz, /readyz (database, bus and
 * durable events) and /metrics — and nothing else.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, describeDistributed, spawnServices, TEST_NATS_URL, type ServiceProcess, type TestDatabase } from '../../packages/testkit';
import { base62 } from '../../packages/ids';

describeDistributed('worker health server', () => {
  let tdb: TestDatabase;
  let proc: ServiceProcess;
  let base: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-health-'));
    proc = await spawnServices(['ledger'], {
      TRANSPORTER: TEST_NATS_URL!,
      DATABASE_URL: tdb.url,
      NAMESPACE: `t${base62(8)}`,
      DATA_DIR: dataDir,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      METRICS_TOKEN: 'metrics-secret',
    });
    base = `http://127.0.0.1:${proc.port}`;
  }, 60_000);

  afterAll(async () => {
    await proc?.stop();
    await tdb?.drop();
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
