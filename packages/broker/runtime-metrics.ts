/**
 * The market's own runtime gauges in the broker's Moleculer metric registry, so every /metrics (the gateway's,
 * a worker's on its PORT, the METRICS_PORT listener: ./metrics.ts) shows them beside the call metrics:
 *   market_db_pool_in_use{database}, _idle, _waiting, _max   the process's PostgreSQL pools
 *   market_durable_consumer_pending{group,topic}, _ack_pending   JetStream backlog of each consumer group
 * Refreshed before each scrape (an idle process nobody scrapes does no metrics work, issue #22). The process's
 * CPU, memory, event-loop lag, GC and handles are prom-client's standard process_* and nodejs_* metrics
 * (./metrics.ts), not gauges of ours.
 */
import type { ServiceBroker } from 'moleculer';
import { poolStats } from '../db';
import { durableEventsOf } from './durable';

const M = {
  poolInUse: 'market.db.pool_in_use',
  poolIdle: 'market.db.pool_idle',
  poolWaiting: 'market.db.pool_waiting',
  poolMax: 'market.db.pool_max',
  pending: 'market.durable.consumer_pending',
  ackPending: 'market.durable.consumer_ack_pending',
} as const;

export class RuntimeMetrics {
  private refreshing: Promise<void> | null = null;

  constructor(private readonly broker: ServiceBroker) {
    const reg = broker.metrics;
    reg.register({ type: 'gauge', name: M.poolInUse, labelNames: ['database'], description: 'PostgreSQL connections checked out of the pool' });
    reg.register({ type: 'gauge', name: M.poolIdle, labelNames: ['database'], description: 'PostgreSQL connections idle in the pool' });
    reg.register({ type: 'gauge', name: M.poolWaiting, labelNames: ['database'], description: 'Queries waiting for a pooled PostgreSQL connection' });
    reg.register({ type: 'gauge', name: M.poolMax, labelNames: ['database'], description: 'Pool size limit (DATABASE_POOL_MAX)' });
    reg.register({ type: 'gauge', name: M.pending, labelNames: ['group', 'topic'], description: 'Durable events not yet delivered to the consumer group (JetStream num_pending)' });
    reg.register({ type: 'gauge', name: M.ackPending, labelNames: ['group', 'topic'], description: 'Durable events delivered and not yet acknowledged (JetStream num_ack_pending)' });
  }

  /** Updates every gauge; concurrent callers share one refresh. */
  refresh(): Promise<void> {
    if (!this.refreshing) {
      this.refreshing = this.collect().finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async collect(): Promise<void> {
    const reg = this.broker.metrics;
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
