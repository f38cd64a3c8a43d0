/**
 * The HTTP face of a process that does not run the gateway (workers: ledger, escrow, …), on PORT:
 *   GET /healthz  alive (the event loop answers) — for liveness probes;
 *   GET /readyz   its database, the bus and the durable-event connection all up; otherwise 503
 *                 naming the failing part — for readiness probes and compose healthchecks. `degraded`
 *                 (still 200) names what works only in part: events not published or not consumed now
 *                 (no stream leader, pulls failing), or an outbox row older than OUTBOX_ALERT_SECONDS;
 *   GET /metrics  the broker's Prometheus metrics (Bearer METRICS_TOKEN when set).
 * Nothing else is served.
 */
import http from 'node:http';
import type { Service, ServiceBroker } from 'moleculer';
import type { Db } from '../packages/db';
import type { DbService } from '../packages/db/mixin';
import type { OutboxRelay } from '../packages/outbox';
import type { Config } from '../packages/config';
import { durableEventsOf } from '../packages/broker';
import { METRICS_CONTENT_TYPE, metricsText } from '../packages/broker/metrics';
import { busConnected, withTimeout } from '../packages/broker/readiness';

export interface Check {
  ok: boolean;
  detail?: string;
}

export interface Readiness {
  ok: boolean;
  status: 'ready' | 'not_ready';
  /** Names of the failing parts: database, bus, durable_events, stopping. */
  failing: string[];
  checks: Record<string, Check>;
  /** Ready, but settling slowly or not at all: why (durable events, outbox age). Absent when nothing is. */
  degraded?: string[];
}

/** Events the process cannot publish or consume now, and outboxes whose oldest row is older than the alert. */
async function degradedParts(broker: ServiceBroker, config: Config): Promise<string[]> {
  const out = [...(durableEventsOf(broker)?.status().degraded ?? []).map((d) => `durable_events: ${d}`)];
  const relays = broker.services.flatMap((s) => {
    const relay = (s as Service & { relay?: OutboxRelay }).relay;
    return relay && typeof relay.oldestUnpublishedSeconds === 'function' ? [relay] : [];
  });
  for (const relay of relays) {
    try {
      const age = await withTimeout(relay.oldestUnpublishedSeconds(), 2_000, 'outbox age');
      if (age > config.outboxAlertSeconds) out.push(`outbox: ${relay.schema}'s oldest unpublished event is ${Math.round(age)} s old (alert at ${config.outboxAlertSeconds} s)`);
    } catch {
      // the database check reports a database that does not answer
    }
  }
  return out;
}

async function databaseCheck(broker: ServiceBroker): Promise<Check> {
  const dbs = broker.services
    .map((s) => (s as Service & Partial<DbService>).db)
    .filter((db): db is Db => !!db && typeof db.query === 'function');
  if (dbs.length === 0) return { ok: true, detail: 'no database in this process' };
  try {
    // One query per service: they share a pool (or PGlite), so this is cheap.
    await Promise.all(dbs.map((db) => withTimeout(db.query('SELECT 1'), 2_000, 'database')));
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: (err as Error)?.message ?? String(err) };
  }
}

export async function readiness(broker: ServiceBroker, config: Config, stopping: boolean): Promise<Readiness> {
  const checks: Record<string, Check> = {};
  checks.database = await databaseCheck(broker);
  checks.bus = !config.transporter ? { ok: true, detail: 'in-process bus' } : busConnected(broker) ? { ok: true } : { ok: false, detail: `not connected to ${config.transporter}` };
  const durable = durableEventsOf(broker)?.status() ?? { connected: false, detail: 'durable events not started' };
  checks.durable_events = durable.connected ? { ok: true } : { ok: false, detail: durable.detail };
  if (stopping) checks.stopping = { ok: false, detail: 'shutting down' };
  const failing = Object.entries(checks).filter(([, c]) => !c.ok).map(([name]) => name);
  const degraded = await degradedParts(broker, config);
  return { ok: failing.length === 0, status: failing.length === 0 ? 'ready' : 'not_ready', failing, checks, ...(degraded.length ? { degraded } : {}) };
}

export function startHealthServer(broker: ServiceBroker, config: Config, opts: { stopping: () => boolean }): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { ok: false, error: 'method not allowed' });
    if (url === '/healthz') return json(200, { ok: true, status: 'live', nodeID: broker.nodeID });
    if (url === '/readyz') {
      void readiness(broker, config, opts.stopping()).then(
        (r) => json(r.ok ? 200 : 503, { ...r, nodeID: broker.nodeID, services: config.services }),
        (err) => json(503, { ok: false, status: 'not_ready', failing: ['readyz'], error: String(err) }),
      );
      return;
    }
    if (url === '/metrics') {
      if (config.metricsToken && req.headers.authorization !== `Bearer ${config.metricsToken}`) {
        return json(401, { ok: false, error: 'metrics need Authorization: Bearer <METRICS_TOKEN>' });
      }
      void metricsText(broker).then(
        (text) => {
          res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' });
          res.end(text);
        },
        (err: unknown) => json(500, { ok: false, error: `metrics: ${String(err)}` }),
      );
      return;
    }
    json(404, { ok: false, error: 'not found: this process serves only /healthz, /readyz and /metrics' });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve(server));
  });
}
