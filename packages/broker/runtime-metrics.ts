/**
 * Runtime health in the broker's Moleculer metric registry, so every /metrics (the gateway's, a worker's
 * on its PORT, the METRICS_PORT listener) shows it beside the call metrics — one registry, one output:
 *   market_runtime_event_loop_lag_seconds{stat}   p50, p99, max and mean since the last refresh (sampled from the first scrape on)
 *   market_runtime_heap_used_bytes, _heap_total_bytes, _rss_bytes, _external_bytes
 *   market_runtime_gc_runs_total{kind}, market_runtime_gc_seconds_total{kind}
 *   market_runtime_active_handles{type}         process.getActiveResourcesInfo() by type
 *   market_db_pool_in_use{database}, _idle, _waiting, _max   the process's PostgreSQL pools
 *   market_durable_consumer_pending{group,topic}, _ack_pending   JetStream backlog of each consumer group
 * Refreshed every 10 s and before each scrape that can wait for it. Only figures of this process: nothing
 * about the host (Moleculer's process/OS metrics stay off).
 */
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { ServiceBroker } from 'moleculer';
import { poolStats } from '../db';
import { durableEventsOf } from './durable';

const M = {
  lag: 'market.runtime.event_loop_lag_seconds',
  heapUsed: 'market.runtime.heap_used_bytes',
  heapTotal: 'market.runtime.heap_total_bytes',
  rss: 'market.runtime.rss_bytes',
  external: 'market.runtime.external_bytes',
  gcRuns: 'market.runtime.gc_runs_total',
  gcSeconds: 'market.runtime.gc_seconds_total',
  handles: 'market.runtime.active_handles',
  poolInUse: 'market.db.pool_in_use',
  poolIdle: 'market.db.pool_idle',
  poolWaiting: 'market.db.pool_waiting',
  poolMax: 'market.db.pool_max',
  pending: 'market.durable.consumer_pending',
  ackPending: 'market.durable.consumer_ack_pending',
} as const;

const REFRESH_MS = 10_000;
const GC_KINDS: Record<number, string> = { 1: 'scavenge', 2: 'mark_sweep_compact', 4: 'incremental', 8: 'weak_callbacks', 15: 'all' };

/** Whether a Prometheus reporter with its own listener (METRICS_PORT) serves this broker's metrics. */
function servesWithoutRefresh(broker: ServiceBroker): boolean {
  const reporter = (broker.options.metrics as { reporter?: unknown } | undefined)?.reporter;
  return Array.isArray(reporter) && reporter.some((r) => (r as { type?: unknown } | null)?.type === 'Prometheus');
}

export class RuntimeMetrics {
  private readonly lag: ReturnType<typeof monitorEventLoopDelay>;
  private gc: PerformanceObserver | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private handleTypes = new Set<string>();
  private lagOn = false;

  constructor(private readonly broker: ServiceBroker) {
    const reg = broker.metrics;
    reg.register({ type: 'gauge', name: M.lag, labelNames: ['stat'], description: 'Event-loop delay since the last refresh, seconds (p50, p99, max, mean)' });
    reg.register({ type: 'gauge', name: M.heapUsed, description: 'V8 heap used, bytes' });
    reg.register({ type: 'gauge', name: M.heapTotal, description: 'V8 heap allocated, bytes' });
    reg.register({ type: 'gauge', name: M.rss, description: 'Resident set size of this process, bytes' });
    reg.register({ type: 'gauge', name: M.external, description: 'Memory of C++ objects bound to JS (buffers), bytes' });
    reg.register({ type: 'counter', name: M.gcRuns, labelNames: ['kind'], description: 'Garbage collections by kind' });
    reg.register({ type: 'counter', name: M.gcSeconds, labelNames: ['kind'], description: 'Time spent in garbage collection by kind, seconds' });
    reg.register({ type: 'gauge', name: M.handles, labelNames: ['type'], description: 'Active handles and requests keeping the event loop alive, by type' });
    reg.register({ type: 'gauge', name: M.poolInUse, labelNames: ['database'], description: 'PostgreSQL connections checked out of the pool' });
    reg.register({ type: 'gauge', name: M.poolIdle, labelNames: ['database'], description: 'PostgreSQL connections idle in the pool' });
    reg.register({ type: 'gauge', name: M.poolWaiting, labelNames: ['database'], description: 'Queries waiting for a pooled PostgreSQL connection' });
    reg.register({ type: 'gauge', name: M.poolMax, labelNames: ['database'], description: 'Pool size limit (DATABASE_POOL_MAX)' });
    reg.register({ type: 'gauge', name: M.pending, labelNames: ['group', 'topic'], description: 'Durable events not yet delivered to the consumer group (JetStream num_pending)' });
    reg.register({ type: 'gauge', name: M.ackPending, labelNames: ['group', 'topic'], description: 'Durable events delivered and not yet acknowledged (JetStream num_ack_pending)' });
    // Sampled every 100 ms (issue #22): at 10 ms the sampling timer alone cost ~4 ms of CPU per second in
    // every idle process; lag that matters (a blocked loop) is still seen, to within 100 ms.
    this.lag = monitorEventLoopDelay({ resolution: 100 });
  }

  start(): void {
    // Every kind's series from the start, at 0: a process that has not collected yet (Node 24 collects a small
    // heap later than 20 did) still exposes the counters, and rate() has a first point.
    for (const kind of new Set(Object.values(GC_KINDS))) {
      this.broker.metrics.increment(M.gcRuns, { kind }, 0);
      this.broker.metrics.increment(M.gcSeconds, { kind }, 0);
    }
    this.gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const kind = GC_KINDS[(entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'other';
        this.broker.metrics.increment(M.gcRuns, { kind });
        this.broker.metrics.increment(M.gcSeconds, { kind }, entry.duration / 1000);
      }
    });
    this.gc.observe({ entryTypes: ['gc'] });
    // Scrapes of our /metrics routes refresh first (refreshRuntimeMetrics); only Moleculer's own Prometheus
    // listener (METRICS_PORT) serves without asking, so only then are the figures refreshed on a timer — an
    // idle process with nobody scraping does no metrics work (issue #22).
    if (servesWithoutRefresh(this.broker)) {
      this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
      this.timer.unref();
      void this.refresh();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.gc?.disconnect();
    this.lag.disable();
    this.lagOn = false;
  }

  /**
   * Updates every gauge; concurrent callers share one refresh. Event-loop lag is sampled (a 10 Hz timer) from
   * the first refresh on: an idle process nobody scrapes does not sample it; lag reads "since the last scrape".
   */
  refresh(): Promise<void> {
    if (!this.lagOn) {
      this.lag.enable();
      this.lagOn = true;
    }
    if (!this.refreshing) {
      this.refreshing = this.collect().finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async collect(): Promise<void> {
    const reg = this.broker.metrics;
    if (this.lag.count > 0) {
      reg.set(M.lag, this.lag.percentile(50) / 1e9, { stat: 'p50' });
      reg.set(M.lag, this.lag.percentile(99) / 1e9, { stat: 'p99' });
      reg.set(M.lag, this.lag.max / 1e9, { stat: 'max' });
      reg.set(M.lag, this.lag.mean / 1e9, { stat: 'mean' });
      this.lag.reset();
    }
    const mem = process.memoryUsage();
    reg.set(M.heapUsed, mem.heapUsed);
    reg.set(M.heapTotal, mem.heapTotal);
    reg.set(M.rss, mem.rss);
    reg.set(M.external, mem.external);
    const byType = new Map<string, number>();
    for (const type of process.getActiveResourcesInfo()) byType.set(type, (byType.get(type) ?? 0) + 1);
    // A type seen before and gone now reads 0, not its last count.
    for (const type of this.handleTypes) if (!byType.has(type)) byType.set(type, 0);
    for (const [type, n] of byType) {
      if (this.handleTypes.size < 50) this.handleTypes.add(type);
      if (this.handleTypes.has(type)) reg.set(M.handles, n, { type });
    }
    for (const p of poolStats()) {
      reg.set(M.poolInUse, p.inUse, { database: p.database });
      reg.set(M.poolIdle, p.idle, { database: p.database });
      reg.set(M.poolWaiting, p.waiting, { database: p.database });
      reg.set(M.poolMax, p.max, { database: p.database });
    }
    const durable = durableEventsOf(this.broker);
    if (durable?.backlog) {
      const backlog = await Promise.race([durable.backlog(), new Promise<[]>((r) => setTimeout(() => r([]), 2_000).unref())]);
      for (const b of backlog) {
        reg.set(M.pending, b.pending, { group: b.group, topic: b.topic });
        reg.set(M.ackPending, b.ackPending, { group: b.group, topic: b.topic });
      }
    }
  }
}

/** Starts runtime metrics with the broker (when its metrics are on) and stops them with it. */
export function RuntimeMetricsMiddleware() {
  let metrics: RuntimeMetrics | null = null;
  return {
    name: 'RuntimeMetrics',
    created(broker: ServiceBroker) {
      if (!broker.isMetricsEnabled()) return;
      metrics = new RuntimeMetrics(broker);
      Object.assign(broker, { runtimeMetrics: metrics });
    },
    started() {
      metrics?.start();
    },
    stopped() {
      metrics?.stop();
    },
  };
}

/** Refreshes the runtime figures before a scrape (no-op when metrics are off). */
export async function refreshRuntimeMetrics(broker: ServiceBroker): Promise<void> {
  await (broker as unknown as { runtimeMetrics?: RuntimeMetrics }).runtimeMetrics?.refresh();
}
