/**
 * The one broker factory every entry point uses (npm start, per-service processes, tests, CLIs).
 * No TRANSPORTER: all services in one process on the in-process bus.
 * TRANSPORTER=nats://…: services talk over NATS; durable channels use JetStream.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { Errors, ServiceBroker, type BrokerOptions, type CallingOptions, type Context, type LogLevels, type Middleware } from 'moleculer';
import type { Config } from '../config';
import { systemClock, withRuntime, type AnyServiceSchema, type Clock } from '../runtime';
import { DurableEventsMiddleware, JetStreamDurableTransport, LocalDurableTransport, type DurableTransport } from './durable';
import { FailoverMiddleware } from './failover';
import { LAYERS, mayCall, ownerOfNode, serviceOfAction, type ServiceName as CallTableService } from '../call-table';
import { AuthNatsTransporter, BusPermissionError } from './nats-transporter';
import { STREAM_ADMIN_SERVICE } from '../call-table/nats-auth';
import { MetricsMiddleware } from './metrics';
import { actionEndpoints } from './registry';
import { logMixin } from '../telemetry/context';
import { terminalLogDestination, terminalLogLevels } from '../telemetry/terminal-log';
import { TelemetryMiddleware } from '../telemetry/moleculer';

export { durableEventsOf, type DurableTransport } from './durable';
export { BusPermissionError } from './nats-transporter';

export interface CreateBrokerOptions {
  config: Config;
  clock?: Clock;
  /** Service schemas to load into this process. */
  services: AnyServiceSchema[];
  /** Overrides for tests (logger level etc.). */
  brokerOptions?: Partial<BrokerOptions>;
}

/**
 * Our middlewares are plain objects of hooks. Moleculer 0.15's Middleware type says a `call` hook returns a
 * Promise (it returns the wrapped call function, as Moleculer's own middlewares do), so they do not fit it.
 */
function asMiddleware(hooks: { name: string }): Middleware {
  return hooks as unknown as Middleware;
}

export function durableTransport(config: Config): DurableTransport {
  if (!config.transporter) return new LocalDurableTransport();
  return new JetStreamDurableTransport({
    url: config.transporter,
    namespace: config.namespace,
    user: config.natsUser,
    pass: config.natsPassword,
    // Per replica and channel: a hung replica holds at most this many messages of its group.
    maxInFlight: 10,
    // What a dead or hung replica held goes back to its group after this long.
    ackWaitMs: 5_000,
    // Keep retrying a failing money message for a long time before parking it.
    maxRetries: 100,
    replicas: config.jetstreamReplicas,
    // Only the stream admin's bus user may update streams (without bus auth, anyone).
    raiseReplicas: !config.natsUser || config.natsUser === STREAM_ADMIN_SERVICE,
  });
}

/** The first subject token of this process's node ID: its bus user (a service name), else its services. */
function nodeIdOwner(config: Config): string {
  return config.natsUser ?? (config.services.join('+') || 'client');
}

/**
 * "<service>.<host>-<pid>-<rand>": the service is its own subject token, so bus permissions can say
 * RES.<service>.> (responses only to that service's nodes); the rest has no dots.
 * Unique per process start: a container restarted inside its pod keeps hostname and pid 1, and
 * reusing the old id would make the others treat the new process as the old one.
 */
export function nodeIdFor(config: Config, base?: string): string {
  const owner = nodeIdOwner(config);
  if (base) return base.startsWith(`${owner}.`) ? base : `${owner}.${base.replace(/\./g, '_')}`;
  const host = (config.nodeId ?? os.hostname()).replace(/\./g, '_');
  return `${owner}.${host}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** TRANSPORTER as Moleculer takes it: with NATS_USER, the transporter that logs in and keeps to the call table. */
function transporterFor(config: Config): BrokerOptions['transporter'] {
  if (!config.transporter) return undefined;
  if (!config.natsUser || !config.natsPassword) return { type: 'NATS', options: { url: config.transporter } };
  return new AuthNatsTransporter({ url: config.transporter, user: config.natsUser, pass: config.natsPassword, namespace: config.namespace });
}

/**
 * A call the call table does not allow this process's bus user is refused here at once (the bus would
 * refuse it too; this spares the failover retries of a call that can never be allowed).
 */
function checkCallTable(broker: ServiceBroker, config: Config): void {
  const user = busUser(config);
  if (!user) return;
  const call = broker.call.bind(broker);
  broker.call = function (this: ServiceBroker, action: string, params?: unknown, opts?: CallingOptions) {
    const precheck = (broker.transit?.tx as { precheck?: boolean } | undefined)?.precheck !== false;
    const callee = typeof action === 'string' ? serviceOfAction(action) : null;
    if (precheck && callee && !mayCall(user, action) && !actionEndpoints(broker, action)?.hasLocal()) {
      const err = new BusPermissionError(user, `MOL-${config.namespace}.REQ.${callee}.*.${action}.${user}`, action, 'call-table');
      broker.logger.error(err.message);
      return Promise.reject(err);
    }
    return call(action, params, opts);
  } as ServiceBroker['call'];
}

/** The process's bus user when it is one of the call table's services (the cluster's bus auth), else null. */
function busUser(config: Config): CallTableService | null {
  return config.natsUser && (LAYERS as readonly string[]).includes(config.natsUser) ? (config.natsUser as CallTableService) : null;
}

function refuseCaller(action: string, caller: string, why: string): Promise<never> {
  return Promise.reject(new Errors.MoleculerError(`Bus permission denied: ${action} ${why} (called from ${caller})`, 403, 'BUS_PERMISSION_DENIED', { action, caller, source: 'callee' }));
}

/**
 * The callee's own check of who calls it. Moleculer's internal actions ($node.list, $node.health, …)
 * answer only their own process. With bus auth, every other action answers a remote node only when the
 * call table's row of that node's service names it — so money steps (ledger writes, payments' credits)
 * and identity (agents.authenticate) refuse any caller outside their row, even if the bus's permissions
 * were wider than the table. The node's service is bound to its bus user by the transporter.
 */
function CalleeGuardMiddleware(config: Config) {
  const withAuth = busUser(config) !== null;
  return {
    name: 'CalleeGuard',
    localAction(handler: (ctx: Context) => unknown, action: { name: string }) {
      const internal = action.name.startsWith('$node.');
      if (!internal && !withAuth) return handler;
      return function (this: unknown, ctx: Context) {
        const broker = ctx.broker as ServiceBroker;
        if (ctx.nodeID && ctx.nodeID !== broker.nodeID) {
          if (internal) return refuseCaller(action.name, ctx.nodeID, 'answers only its own process');
          const caller = ownerOfNode(ctx.nodeID);
          if (!(LAYERS as readonly string[]).includes(caller) || !mayCall(caller as CallTableService, action.name)) {
            return refuseCaller(action.name, ctx.nodeID, `is not in the call table's row of "${caller}"`);
          }
        }
        return handler(ctx);
      };
    },
  };
}

/** A Moleculer service as a node announces it (INFO). */
interface AnnouncedService {
  name?: unknown;
}

/**
 * No node can claim another service: a node whose id says "notifications.…" (its service, bound to its
 * bus user) and announces one of the call table's other services (say `agents`, to be sent
 * agents.authenticate) is ignored and logged; its announcement never reaches the registry.
 */
function refuseForeignClaims(broker: ServiceBroker): void {
  const registry = broker.registry;
  const processNodeInfo = registry.processNodeInfo.bind(registry);
  const logged = new Set<string>();
  registry.processNodeInfo = (payload: { sender?: string; services?: AnnouncedService[] }) => {
    const nodeID = String(payload.sender);
    const owners = ownerOfNode(nodeID).split('+');
    const claimed = (payload.services ?? [])
      .map((s) => String(s.name))
      .filter((name) => (LAYERS as readonly string[]).includes(name) && !owners.includes(name));
    if (claimed.length === 0) return processNodeInfo(payload);
    if (!logged.has(nodeID) && logged.size < 1_000) {
      logged.add(nodeID);
      broker.logger.warn(`bus: ignored node ${nodeID}: it announces ${claimed.join(', ')}, which its id does not own`);
    }
    return null;
  };
}

/** `broker.getCpuUsage` without sampling the host: this process's CPU % since the previous heartbeat. */
function processCpuUsage(): () => Promise<{ avg: number; usages: number[] }> {
  let last = { at: process.hrtime.bigint(), cpu: process.cpuUsage() };
  return () => {
    const now = { at: process.hrtime.bigint(), cpu: process.cpuUsage() };
    const wallUs = Number(now.at - last.at) / 1000;
    const usedUs = now.cpu.user - last.cpu.user + (now.cpu.system - last.cpu.system);
    last = now;
    const avg = wallUs > 0 ? Math.min(100, Math.round((100 * usedUs) / wallUs)) : 0;
    return Promise.resolve({ avg, usages: [avg] });
  };
}

export function createBroker(opts: CreateBrokerOptions): ServiceBroker {
  const { config } = opts;
  // Extra middlewares (e.g. the call-graph recorder of the architecture test) run after the channels one.
  const { middlewares: extraMiddlewares = [], nodeID, ...brokerOptions } = opts.brokerOptions ?? {};
  const broker = new ServiceBroker({
    namespace: config.namespace,
    nodeID: nodeIdFor(config, nodeID ?? undefined),
    transporter: transporterFor(config),
    // Moleculer balances calls itself: a request goes to REQ.<nodeID> of the replica it picked, and node IDs
    // start with their service ("<service>.…"), so the bus's permissions still say which service may call which
    // (packages/call-table/nats-auth.ts). A replica whose heartbeats stop (killed, SIGSTOPped) is dropped after
    // heartbeatTimeout: its pending calls are rejected (and retried on its twin when safe), new ones avoid it.
    // (NATS queue groups, disableBalancer, kept handing requests to a frozen replica until NATS dropped it.)
    disableBalancer: false,
    serializer: 'JSON',
    // A call that takes longer is failing; mutating actions take idempotency keys so a retry is safe.
    requestTimeout: config.requestTimeoutMs,
    // Moleculer's retry cannot tell safe calls from unsafe ones; FailoverMiddleware does that.
    retryPolicy: { enabled: false },
    // In-flight calls finish before the broker stops (SIGTERM).
    tracking: { enabled: true, shutdownTimeout: 10_000 },
    // Off only for a rolling upgrade from a 0.14 deployment (protocol v4): this node then accepts v4 packets.
    transit: { disableVersionCheck: !config.busVersionCheck },
    // A killed replica is declared gone after heartbeatTimeout: the calls it held are rejected and
    // retried on its twin (when safe), and it stops receiving new ones.
    heartbeatInterval: config.heartbeatIntervalS,
    heartbeatTimeout: config.heartbeatTimeoutS,
    logger: {
      type: 'Pino',
      options: {
        level: config.logFormat === 'pretty' ? terminalLogLevels(config.logLevel) : config.logLevel,
        pino: {
          options: {
            redact: ['apiKey', '*.apiKey', 'authorization', '*.authorization'],
            // Every line written inside a request or event carries its requestId (and traceId when tracing is on).
            mixin: logMixin,
          },
          // LOG_FORMAT=pretty (a terminal): readable lines, the start-up chatter quiet (packages/telemetry/terminal-log.ts).
          ...(config.logFormat === 'pretty' ? { destination: terminalLogDestination(config.logLevel) } : {}),
        },
      },
    },
    logLevel: config.logLevel as LogLevels,
    // Metrics when asked for (METRICS_TOKEN: the gateway's /metrics; METRICS_PORT: a listener bound to
    // METRICS_HOST, loopback by default) and in every distributed process, whose /metrics is served on its
    // own PORT (src/health-server.ts). The registry only: ./metrics.ts writes the text (with prom-client's
    // process_* and nodejs_*), so no Moleculer reporter; Moleculer's process/OS metrics stay off.
    metrics:
      config.metricsToken || config.metricsPort || config.transporter
        ? {
            enabled: true,
            collectProcessMetrics: false,
            // Histograms keep their buckets (Prometheus computes quantiles from them); the sliding-window
            // quantiles Moleculer would also compute on every call cost more than the call's own work.
            defaultQuantiles: null as unknown as number[],
            reporter: [],
          }
        : { enabled: false },
    middlewares: [
      asMiddleware(DurableEventsMiddleware(durableTransport(config))),
      asMiddleware(FailoverMiddleware({ retries: 4, delayMs: 100, maxDelayMs: 1_000 })),
      // DB pools, JetStream backlog, process_*/nodejs_*, the METRICS_PORT listener (when metrics are on).
      asMiddleware(MetricsMiddleware({ listen: config.metricsPort ? { port: config.metricsPort, host: config.metricsHost } : null })),
      ...(config.transporter ? [asMiddleware(CalleeGuardMiddleware(config))] : []),
      ...extraMiddlewares,
      // Last = outermost (Moleculer wraps in order): the others run inside the request's context and span.
      asMiddleware(TelemetryMiddleware()),
    ],
    validator: true,
    // Request ids from the system's random source: a forged answer would need the id of a pending call.
    uidGenerator: () => randomUUID(),
    ...brokerOptions,
  });
  if (config.transporter) {
    checkCallTable(broker, config);
    refuseForeignClaims(broker);
  }
  // Moleculer measures the host's CPU before every heartbeat (os.cpus() three times, 200 ms of timers) for a
  // CPU-based balancing strategy we do not use; this process's own share, from one cheap counter, instead.
  broker.getCpuUsage = processCpuUsage();
  // Each service is handed its config and clock when it is created (this.config, this.clock).
  const runtime = { config, clock: opts.clock ?? systemClock };
  for (const schema of opts.services) broker.createService(withRuntime(schema, runtime));
  return broker;
}
