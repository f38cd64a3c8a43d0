/**
 * Issue #24 as an operator of several gateway replicas sees it: two gateway processes, the workers in
 * their own processes, real NATS and PostgreSQL. Limits hold across replicas; a valid key is never
 * locked out by others' failures (issue #23); idle connections outlive a load balancer's 60 s.
 */
import fs from 'node:fs';
import http from 'node:http';
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
} from '../kit';
import { base62 } from '../../packages/ids';

const METRICS_TOKEN = 'metrics-token-for-operability-0123456789';

describeDistributed('operability across two gateway replicas (separate processes, NATS, PostgreSQL)', () => {
  let tdb: TestDatabase;
  const procs: ServiceProcess[] = [];
  let gateways: ApiClient[];
  let workers: ServiceProcess;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-ops-'));
    const env = {
      TRANSPORTER: TEST_NATS_URL!,
      DATABASE_URL: tdb.url,
      NAMESPACE: `t${base62(8)}`,
      DATA_DIR: dataDir,
      NODE_ENV: 'test',
      RATE_LIMIT_PER_MINUTE: '30',
      METRICS_TOKEN,
      SWEEP_INTERVAL_MS: '0',
    };
    const [port1, port2] = [await freePort(), await freePort()];
    // The workers first (they migrate their schemas), then the two gateways one after the other.
    workers = await spawnServices(['agents', 'ledger', 'listings'], { ...env, NODE_ID: 'workers-1' });
    procs.push(workers);
    procs.push(await spawnServices(['gateway'], { ...env, PORT: String(port1), NODE_ID: 'gw-1' }));
    procs.push(await spawnServices(['gateway'], { ...env, PORT: String(port2), NODE_ID: 'gw-2' }));
    gateways = [new ApiClient(`http://127.0.0.1:${port1}`), new ApiClient(`http://127.0.0.1:${port2}`)];
    for (const gw of gateways) await waitForGateway(gw, ['agents', 'ledger', 'listings']);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await tdb?.drop();
  }, 60_000);

  it('RATE_LIMIT_PER_MINUTE=30 on both: one agent gets exactly 30 successes in the minute across the two', async () => {
    const { apiKey } = await gateways[0].register('Busy Agent');
    // Batches of 10 in parallel, alternating replicas, so the 60 calls fit well inside the minute.
    const started = Date.now();
    const responses: Awaited<ReturnType<ApiClient['call']>>[] = [];
    for (let batch = 0; batch < 6; batch++) {
      responses.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => gateways[i % 2].call('wallet', {}, apiKey)))));
    }
    expect(Date.now() - started).toBeLessThan(60_000);
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.body.error!.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
  }, 60_000);

  it('11 random keys from one address through both replicas, then a valid key from that address → 200 on both', async () => {
    const { apiKey } = await gateways[1].register('Innocent Neighbour');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await gateways[i % 2].call('wallet', {}, `rk_live_${base62(32)}`)).status);
    // The failed-key throttle is shared: the 11th failure is refused, whichever replica it reached.
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    for (const gw of gateways) {
      const r = await gw.call('wallet', {}, apiKey);
      expect(r.status).toBe(200);
    }
  }, 60_000);

  it('keeps idle connections 65 s (above a load balancer\'s 60 s), headers timeout above that', async () => {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(`${gateways[0].baseUrl}/healthz`, { agent: new http.Agent({ keepAlive: true }) }, resolve);
      req.on('error', reject);
    });
    res.resume();
    expect(res.headers['keep-alive']).toBe('timeout=65');
  });

  it('every /metrics (a gateway, a worker) shows the standard process/Node.js metrics, DB pool and JetStream backlog', async () => {
    const scrape = async (url: string) => {
      const r = await fetch(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(r.status).toBe(200);
      return r.text();
    };
    // A sample line of `name`, whose labels include `label` (other labels may come with it).
    const sample = (name: string, label = '') => new RegExp(`^${name}(\\{[^}\\n]*${label}[^}\\n]*\\})? [0-9.e+-]+$`, 'm');
    const common = [
      // prom-client's default collectors (packages/broker/metrics.ts).
      sample('process_cpu_seconds_total'),
      sample('process_resident_memory_bytes'),
      sample('nodejs_eventloop_lag_p99_seconds'),
      sample('nodejs_heap_size_used_bytes'),
      sample('nodejs_active_handles', 'type="\\w+"'),
      sample('market_db_pool_in_use', 'database="t_\\w+"'),
      sample('market_db_pool_waiting', 'database="t_\\w+"'),
    ];
    // The event-loop figures need a delay sampled since the last scrape: allow the process a moment.
    const gw = await eventually(async () => {
      const text = await scrape(`${gateways[0].baseUrl}/metrics`);
      return common.every((re) => re.test(text)) ? text : null;
    }, 30_000, 500);
    expect(gw).toMatch(/market_http_requests_total/); // the same registry as the call metrics
    const worker = await eventually(async () => {
      const text = await scrape(`http://127.0.0.1:${workers.port}/metrics`);
      return common.every((re) => re.test(text)) ? text : null;
    }, 30_000, 500);
    // The ledger consumes escrow's durable events: its groups' backlog is there.
    expect(worker).toMatch(sample('market_durable_consumer_pending', 'group="ledger",topic="escrow\\.purchase\\.completed"'));
    expect(worker).toMatch(sample('market_durable_consumer_ack_pending', 'group="ledger",topic="escrow\\.purchase\\.completed"'));
    expect(worker).not.toMatch(/hostname|os_/);
  }, 90_000);
});
