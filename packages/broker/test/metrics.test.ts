/**
 * /metrics as Prometheus reads it: the gateway's (METRICS_TOKEN) and the METRICS_PORT listener's text parsed by
 * a Prometheus exposition parser (prom2javascript, which also rejects a histogram whose +Inf bucket is not its
 * _count). The standard process_* and nodejs_* metrics (prom-client) beside the market's own and Moleculer's;
 * every histogram's buckets in ascending `le` order with +Inf last, as written in the text. (A worker's /metrics
 * on its own PORT: test/distributed/operability.test.ts.)
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { getMetricsFromStream, type PromHistogramData, type PromMetrics } from 'prom2javascript';
import { describeWithPostgres, freePort, startTestApp, type TestApp } from '../../../test/kit';

const METRICS_TOKEN = 'metrics-token-for-the-exposition-test';

/**
 * The text parsed. prom2javascript's value grammar knows decimals and +Inf only; the format also allows NaN and
 * -Inf (Prometheus reads values with Go's ParseFloat): such samples are set aside, and only the event-loop
 * statistics prom-client leaves NaN when no delay was sampled since the last scrape may be NaN.
 */
async function parseExposition(text: string): Promise<PromMetrics> {
  const lines = text.split('\n');
  const special = lines.filter((l) => !l.startsWith('#') && / (NaN|-Inf)$/.test(l));
  const allowed = /^nodejs_eventloop_lag_(mean|stddev)_seconds NaN$/;
  expect(special.filter((l) => !allowed.test(l))).toEqual([]);
  return getMetricsFromStream(Readable.from([lines.filter((l) => !special.includes(l)).join('\n')]));
}

/** Each histogram series' `le` values in the order the text has them, keyed by family and the other labels. */
function bucketOrder(text: string): Map<string, string[]> {
  const series = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)_bucket\{(.*)\} \S+$/.exec(line);
    if (!m) continue;
    const le = /(?:^|,)le="([^"]*)"/.exec(m[2])?.[1];
    if (le === undefined) throw new Error(`a bucket without le: ${line}`);
    const key = `${m[1]}{${m[2].replace(/(^|,)le="[^"]*"/, '')}}`;
    series.set(key, [...(series.get(key) ?? []), le]);
  }
  return series;
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describeWithPostgres('/metrics in the Prometheus text format', () => {
  let app: TestApp;
  let metricsPort: number;

  beforeAll(async () => {
    metricsPort = await freePort();
    app = await startTestApp({ postgres: true, env: { METRICS_TOKEN, METRICS_PORT: String(metricsPort) } });
    // Requests in several latency buckets and statuses, so the histograms have series.
    const { apiKey } = await app.api.register('Metrics Exposition');
    await app.api.call('whoami', {}, apiKey);
    await app.api.call('search_services', { q: 'anything' }, apiKey);
    await app.api.call('wallet', {}, `rk_live_${'z'.repeat(32)}`);
  });
  afterAll(async () => {
    await app?.stop();
  });

  const scrapeGateway = async () => {
    const r = await app.api.get('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return r.text;
  };

  it('parses, with the standard process and Node.js metrics beside the market\'s own and Moleculer\'s', async () => {
    // The app runs in this process: its CPU counter is the process's whole CPU time, not the time since the first scrape.
    const cpu = process.cpuUsage();
    const text = await scrapeGateway();
    const metrics = await parseExposition(text);
    const typeOf = (name: string) => metrics[name]?.type;
    expect({
      process_cpu_seconds_total: typeOf('process_cpu_seconds_total'),
      process_resident_memory_bytes: typeOf('process_resident_memory_bytes'),
      process_start_time_seconds: typeOf('process_start_time_seconds'),
      nodejs_eventloop_lag_seconds: typeOf('nodejs_eventloop_lag_seconds'),
      nodejs_eventloop_lag_p99_seconds: typeOf('nodejs_eventloop_lag_p99_seconds'),
      nodejs_heap_size_used_bytes: typeOf('nodejs_heap_size_used_bytes'),
      nodejs_gc_duration_seconds: typeOf('nodejs_gc_duration_seconds'),
      nodejs_active_handles_total: typeOf('nodejs_active_handles_total'),
      market_http_requests_total: typeOf('market_http_requests_total'),
      market_http_request_duration_seconds: typeOf('market_http_request_duration_seconds'),
      market_gas_credited_total: typeOf('market_gas_credited_total'),
      market_db_pool_in_use: typeOf('market_db_pool_in_use'),
      moleculer_request_time: typeOf('moleculer_request_time'),
    }).toEqual({
      process_cpu_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      process_start_time_seconds: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
      nodejs_eventloop_lag_p99_seconds: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
      nodejs_gc_duration_seconds: 'histogram',
      nodejs_active_handles_total: 'gauge',
      market_http_requests_total: 'counter',
      market_http_request_duration_seconds: 'histogram',
      market_gas_credited_total: 'gauge',
      market_db_pool_in_use: 'gauge',
      moleculer_request_time: 'histogram',
    });
    const value = (name: string) => (metrics[name].data as { value: number }[])[0].value;
    expect(value('process_cpu_seconds_total')).toBeGreaterThanOrEqual((cpu.user + cpu.system) / 1e6);
    expect(value('nodejs_heap_size_used_bytes')).toBeGreaterThan(1_000_000);
    expect(value('process_start_time_seconds')).toBeLessThanOrEqual(Date.now() / 1000);
    const requests = metrics.market_http_requests_total.data as { labels: Record<string, string>; value: number }[];
    expect(requests).toEqual(expect.arrayContaining([
      { labels: { tool: 'register', status: '200' }, value: 1 },
      { labels: { tool: 'whoami', status: '200' }, value: 1 },
      { labels: { tool: 'wallet', status: '401' }, value: 1 },
    ]));
    expect((metrics.market_db_pool_in_use.data as { labels: Record<string, string> }[]).map((d) => d.labels.database)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^t_/)]),
    );
    // Every sample belongs to a declared family (no stray `_rate` lines), declared once; no host and no node labels.
    expect(Object.entries(metrics).filter(([, m]) => m.type === 'unknown').map(([n]) => n)).toEqual([]);
    const declared = text.split('\n').filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2]);
    expect(declared.length).toBe(new Set(declared).size);
    expect(text).not.toMatch(/hostname|nodeID=|\bos_/);
    // The hand-written runtime gauges these replace are gone.
    expect(text).not.toMatch(/^market_runtime_/m);
  });

  it('every histogram: buckets ascending by le as written, +Inf last, cumulative, +Inf equal to _count, with _sum', async () => {
    const text = await scrapeGateway();
    const metrics = await parseExposition(text);
    const histograms = Object.entries(metrics).filter(([, m]) => m.type === 'histogram');
    expect(histograms.map(([n]) => n)).toEqual(expect.arrayContaining(['market_http_request_duration_seconds', 'moleculer_request_time', 'nodejs_gc_duration_seconds']));
    for (const [name, m] of histograms) {
      for (const h of m.data as PromHistogramData[]) {
        expect({ name, labels: h.labels, sum: typeof h.sum }).toEqual({ name, labels: h.labels, sum: 'number' });
        const counts = Object.entries(h.buckets).sort(([a], [b]) => (a === '+Inf' ? 1 : b === '+Inf' ? -1 : Number(a) - Number(b))).map(([, n]) => n);
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
        expect(h.buckets['+Inf']).toBe(h.count);
      }
    }
    const orders = bucketOrder(text);
    // The latency buckets include 1, 2.5, 5 and 10: in object-key order (Moleculer's reporter) 1, 5 and 10 came first.
    const latency = [...orders].filter(([k]) => k.startsWith('market_http_request_duration_seconds{'));
    expect(latency.length).toBeGreaterThan(0);
    expect(latency[0][1]).toEqual(['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
    for (const [series, les] of orders) {
      expect({ series, last: les.at(-1) }).toEqual({ series, last: '+Inf' });
      const bounds = les.slice(0, -1).map(Number);
      expect({ series, bounds }).toEqual({ series, bounds: [...bounds].sort((a, b) => a - b) });
      expect(new Set(les).size).toBe(les.length);
    }
  });

  it('the METRICS_PORT listener (no token) serves the same families, gzip when asked; any other path 404', async () => {
    const gateway = await parseExposition(await scrapeGateway());
    const plain = await get(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const listener = await parseExposition(plain.body.toString('utf8'));
    expect(Object.keys(listener).sort()).toEqual(Object.keys(gateway).sort());

    const zipped = await get(`http://127.0.0.1:${metricsPort}/metrics`, { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const unzipped = await parseExposition(gunzipSync(zipped.body).toString('utf8'));
    expect(unzipped.process_cpu_seconds_total.type).toBe('counter');

    expect((await get(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
  });
});
