/**
 * The one broker factory every entry point uses (npm start, per-service processes, tests, CLIs).
 * No TRANSPORTER: all services in one process on the in-process bus.
 * TRANSPORTER=nats://…: services talk over NATS; durable channels use JetStream.
 */
import os from 'node:os';
import { ServiceBroker, type BrokerOptions, type ServiceSchema } from 'moleculer';
import ChannelsMiddleware from '@moleculer/channels/src/index';
import type { Config } from '../config';
import { setRuntime, systemClock, type Clock } from '../runtime';
import { LocalDurableAdapter } from './local-channels';

export interface CreateBrokerOptions {
  config: Config;
  clock?: Clock;
  /** Service schemas to load into this process. */
  services: ServiceSchema[];
  /** Overrides for tests (logger level etc.). */
  brokerOptions?: Partial<BrokerOptions>;
}

export function channelsAdapter(config: Config): unknown {
  if (!config.transporter) return new LocalDurableAdapter();
  return {
    type: 'NATS',
    options: {
      nats: {
        url: config.transporter,
        // A consumer group created after messages were published still gets them (consumers are idempotent).
        consumerOptions: { config: { deliver_policy: 'all' } },
      },
      // Keep retrying a failing money message for a long time before parking it.
      maxRetries: 100,
      maxInFlight: 10,
      deadLettering: { enabled: true, queueName: 'DEAD_LETTER' },
    },
  };
}

export function createBroker(opts: CreateBrokerOptions): ServiceBroker {
  const { config } = opts;
  // Extra middlewares (e.g. the call-graph recorder of the architecture test) run after the channels one.
  const { middlewares: extraMiddlewares = [], ...brokerOptions } = opts.brokerOptions ?? {};
  const broker = new ServiceBroker({
    namespace: config.namespace,
    nodeID: config.nodeId ?? `${os.hostname()}-${process.pid}-${config.services.join('+').slice(0, 40)}`,
    transporter: config.transporter ?? undefined,
    serializer: 'JSON',
    // A call that takes longer is failing; mutating actions take idempotency keys so a retry is safe.
    requestTimeout: config.requestTimeoutMs,
    // No automatic retries: money actions are retried by their callers with the same key.
    retryPolicy: { enabled: false },
    // In-flight calls finish before the broker stops (SIGTERM).
    tracking: { enabled: true, shutdownTimeout: 10_000 },
    heartbeatInterval: 5,
    heartbeatTimeout: 15,
    logger: {
      type: 'Pino',
      options: { level: config.logLevel, pino: { options: { redact: ['apiKey', '*.apiKey', 'authorization', '*.authorization'] } } },
    },
    logLevel: config.logLevel as any,
    // Metrics only when asked for (METRICS_TOKEN: gateway /metrics; METRICS_PORT: a listener bound to
    // METRICS_HOST, loopback by default). No process/OS metrics and no node-id label: nothing about the host.
    metrics:
      config.metricsToken || config.metricsPort
        ? {
            enabled: true,
            collectProcessMetrics: false,
            reporter: config.metricsPort
              ? [{ type: 'Prometheus', options: { port: config.metricsPort, host: config.metricsHost, defaultLabels: {} } }]
              : [],
          }
        : { enabled: false },
    middlewares: [ChannelsMiddleware({ adapter: channelsAdapter(config) as any, context: false }), ...extraMiddlewares],
    validator: true,
    ...brokerOptions,
  });
  setRuntime(broker, { config, clock: opts.clock ?? systemClock });
  for (const schema of opts.services) broker.createService(schema);
  return broker;
}
