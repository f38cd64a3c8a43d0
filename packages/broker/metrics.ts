/**
 * A process's /metrics, in the Prometheus text exposition format (0.0.4), served the same by every door:
 * the gateway's GET /metrics (METRICS_TOKEN), a worker's own PORT (src/health-server.ts) and the METRICS_PORT
 * listener started here. Two sources, one text:
 *   - the broker's Moleculer metric registry: the market's own metrics (market_*) and Moleculer's call
 *     metrics (moleculer_*), written out here rather than by Moleculer's Prometheus reporter, whose text has
 *     a histogram's buckets in object-key order (le="1", "5", "10" before "0.005") and no _sum or _count
 *     when quantiles are off (they are: packages/broker/index.ts); here buckets are in ascending `le`
 *     order, +Inf last, then _sum and _count, and Moleculer's own `_rate` lines (a rate Prometheus computes
 *     itself with rate()) are left out;
 *   - prom-client's default collectors: the standard process_* and nodejs_* metrics (CPU, memory, file
 *     descriptors, event-loop lag, heap spaces, GC durations, active handles and resources), in a registry
 *     of their own, once per process, started by its first scrape.
 * No default labels (no nodeID or namespace): Prometheus labels each target itself.
 */
import http from 'node:http';
import { gzip } from 'node:zlib';
import { collectDefaultMetrics, Registry, type Counter } from 'prom-client';
import type { MetricRegistry, ServiceBroker } from 'moleculer';
import { RuntimeMetrics } from './runtime-metrics';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

// --- prom-client's process and Node.js metrics ------------------------------------------------------

let processRegistry: Registry | null = null;

/**
 * The process_* and nodejs_* metrics, collected from the process's first scrape on: a process nobody scrapes
 * samples nothing (issue #22; the event-loop sampler costs 0.6 ms of CPU per second even at 100 ms). CPU time
 * (seeded below), memory and start time cover the whole process; GC durations and event-loop delay are
 * observed from the first scrape (a counter that starts late is what rate() expects).
 * Event-loop delay is sampled every 100 ms, not prom-client's default 10 ms (5.6 ms/s measured idle); a
 * blocked loop still shows, to within 100 ms.
 */
export function processMetrics(): Registry {
  if (!processRegistry) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
    // prom-client's CPU counters count from the moment they are made; started late, they are given the CPU
    // time spent before, so process_cpu_seconds_total is the process's total as every exporter reports it.
    const before = process.cpuUsage();
    const seed: [string, number][] = [
      ['process_cpu_user_seconds_total', before.user / 1e6],
      ['process_cpu_system_seconds_total', before.system / 1e6],
      ['process_cpu_seconds_total', (before.user + before.system) / 1e6],
    ];
    for (const [name, seconds] of seed) (registry.getSingleMetric(name) as Counter | undefined)?.inc(seconds);
    processRegistry = registry;
  }
  return processRegistry;
}

// --- The Moleculer registry in the text format -------------------------------------------------------

interface MetricItem {
  labels?: Record<string, unknown>;
  value?: number | string | null;
  count?: number;
  sum?: number;
  buckets?: Record<string, number>;
}

function sampleValue(v: unknown): string {
  if (v === null || v === undefined) return 'NaN';
  const n = Number(v);
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

const escapeLabel = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const metricName = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, '_');
const labelName = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, '_');

function labelsText(labels: Record<string, unknown> | undefined, extra?: Record<string, string>): string {
  const pairs = Object.entries({ ...labels, ...extra })
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${labelName(k)}="${escapeLabel(String(v))}"`);
  return pairs.length ? `{${pairs.join(',')}}` : '';
}

/** The items of a listed metric (Moleculer 0.14 types them as an array, 0.15 as a Map; both give an array at run time). */
function itemsOf(values: unknown): MetricItem[] {
  if (Array.isArray(values)) return values as MetricItem[];
  if (values instanceof Map) return [...values.values()] as MetricItem[];
  return [];
}

/** Every metric of a Moleculer registry as Prometheus text: counters, gauges, info (a gauge of 1) and histograms. */
export function formatMoleculerRegistry(registry: MetricRegistry): string {
  const out: string[] = [];
  for (const metric of registry.list()) {
    if (metric.name.startsWith('os.datetime')) continue;
    const items = itemsOf(metric.values);
    if (!items.length) continue;
    const name = metricName(metric.name);
    const help = metric.description || metric.name + (metric.unit ? ` (${metric.unit})` : '');
    const type = metric.type === 'info' ? 'gauge' : metric.type;
    if (!['counter', 'gauge', 'histogram'].includes(type)) continue;
    out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
    for (const item of items) {
      if (metric.type === 'info') out.push(`${name}${labelsText(item.labels, { value: String(item.value ?? '') })} 1`);
      else if (type !== 'histogram') out.push(`${name}${labelsText(item.labels)} ${sampleValue(item.value)}`);
      else {
        // Moleculer's bucket counts are cumulative already (each observation counts in every bucket ≥ it).
        const buckets = Object.entries(item.buckets ?? {}).sort(([a], [b]) => Number(a) - Number(b));
        for (const [le, n] of buckets) out.push(`${name}_bucket${labelsText(item.labels, { le: sampleValue(le) })} ${sampleValue(n)}`);
        out.push(`${name}_bucket${labelsText(item.labels, { le: '+Inf' })} ${sampleValue(item.count ?? 0)}`);
        out.push(`${name}_sum${labelsText(item.labels)} ${sampleValue(item.sum ?? 0)}`);
        out.push(`${name}_count${labelsText(item.labels)} ${sampleValue(item.count ?? 0)}`);
      }
    }
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

// --- One process's /metrics ----------------------------------------------------------------------------

const runtimeOf = new WeakMap<ServiceBroker, RuntimeMetrics>();

/** The broker's metrics (runtime gauges refreshed first) and the process's, as one text ('' when metrics are off). */
export async function metricsText(broker: ServiceBroker): Promise<string> {
  if (!broker.isMetricsEnabled()) return '';
  await runtimeOf.get(broker)?.refresh();
  // prom-client writes NaN as "Nan" (an event-loop figure with no sample since the last scrape); Prometheus
  // reads any case, stricter parsers only the spelling of the format's documentation.
  const processText = (await processMetrics().metrics()).replace(/ Nan$/gm, ' NaN');
  return formatMoleculerRegistry(broker.metrics) + processText;
}

/** GET /metrics (gzip when asked) on its own port, the METRICS_PORT listener; anything else 404. */
function startListener(broker: ServiceBroker, port: number, host: string): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404).end();
      return;
    }
    metricsText(broker).then(
      (text) => {
        if (!String(req.headers['accept-encoding'] ?? '').includes('gzip')) {
          res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' }).end(text);
          return;
        }
        gzip(text, (err, body) => {
          if (err) res.writeHead(500).end();
          else res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'content-encoding': 'gzip', 'cache-control': 'no-store' }).end(body);
        });
      },
      (err: unknown) => {
        broker.logger.error({ err }, 'metrics: could not render /metrics');
        res.writeHead(500).end();
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * With the broker's metrics on: the runtime gauges (DB pools, JetStream backlog: ./runtime-metrics.ts), the
 * process metrics, and the METRICS_PORT listener when `listen` is given; stopped with the broker.
 */
export function MetricsMiddleware(opts: { listen?: { port: number; host: string } | null } = {}) {
  let server: http.Server | null = null;
  return {
    name: 'Metrics',
    created(broker: ServiceBroker) {
      if (!broker.isMetricsEnabled()) return;
      runtimeOf.set(broker, new RuntimeMetrics(broker));
    },
    async started(broker: ServiceBroker) {
      if (!broker.isMetricsEnabled() || !opts.listen) return;
      server = await startListener(broker, opts.listen.port, opts.listen.host);
      const address = server.address();
      broker.logger.info(`Prometheus metrics on http://${opts.listen.host}:${typeof address === 'object' && address ? address.port : opts.listen.port}/metrics`);
    },
    async stopped() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}
