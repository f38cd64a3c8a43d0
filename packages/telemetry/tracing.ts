/**
 * OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
 * is set. On: the SDK's TracerProvider (@opentelemetry/sdk-trace 3) with a batch processor exporting OTLP over HTTP — protobuf by
 * default, JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json — and the http, express and pg
 * instrumentations. The SDK is required only when on, so a process without tracing loads none of it.
 *
 * `startTracing()` must run before express and pg are first required (their instrumentations patch
 * them at require time): src/main.ts imports './tracing' first.
 *
 * Spans the instrumentations do not make are made here and in ./moleculer.ts: a Moleculer call on both
 * sides (W3C traceparent in ctx.meta), a durable event's publish and consume (traceparent in its
 * headers), a tool call, a webhook attempt.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

const TRACER = 'agent-market';
let provider: { shutdown(): Promise<void>; forceFlush(): Promise<void> } | null = null;

export function tracingEnabled(): boolean {
  return provider !== null;
}

/** The process's name in traces: OTEL_SERVICE_NAME, else `market-<services>` (SERVICES), else agent-market. */
export function traceServiceName(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OTEL_SERVICE_NAME) return env.OTEL_SERVICE_NAME;
  const services = (env.SERVICES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return services.length ? `market-${services.join('+')}` : 'agent-market';
}

/** Starts tracing when the environment asks for it; returns whether it is on. Idempotent. */
export function startTracing(env: NodeJS.ProcessEnv = process.env): boolean {
  if (provider) return true;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return false;
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { CompositePropagator, W3CTraceContextPropagator, W3CBaggagePropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation, ExpressLayerType } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  // The traces URL as the specification builds it (the exporters would read process.env themselves; this
  // honours the env passed in). Headers and timeout still come from the standard variables.
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${env.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`;
  const exporter =
    protocol === 'http/json'
      ? new (require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url })
      : new (require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({ url });
  /* eslint-enable @typescript-eslint/no-require-imports */
  const p = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': traceServiceName(env), 'service.namespace': env.NAMESPACE ?? 'agent-market' }),
    // The SDK's 3.x processor reads no environment: OTEL_BSP_* are read here, as the 2.x one did.
    spanProcessors: [new BatchSpanProcessor({ exporter, ...batchOptionsFromEnv(env) })],
  });
  // What 2.x's NodeTracerProvider.register() did: the async-local-storage context manager, the W3C
  // traceparent and baggage propagators, and the provider as the global one.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(p);
  const quiet = new Set(['/healthz', '/readyz', '/metrics']);
  registerInstrumentations({
    tracerProvider: p,
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes are not requests anyone follows.
        ignoreIncomingRequestHook: (req) => quiet.has((req.url ?? '').split('?')[0]),
      }),
      // Route and handler spans, not one per middleware (request id, access log, parsers).
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  provider = p;
  return true;
}

/** Sends what is buffered and stops (at process stop); the globals go back to the API's no-ops. */
export async function shutdownTracing(): Promise<void> {
  const p = provider;
  provider = null;
  if (!p) return;
  await p.shutdown().catch(() => undefined);
  trace.disable();
  propagation.disable();
  context.disable();
}

/** The batch processor's OTEL_BSP_* settings (spec names and defaults; unset or invalid → the SDK's default). */
export function batchOptionsFromEnv(env: NodeJS.ProcessEnv): {
  scheduledDelayMillis?: number;
  exportTimeoutMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
} {
  const num = (name: string) => {
    const v = Number(env[name]);
    return env[name] && Number.isFinite(v) && v >= 0 ? v : undefined;
  };
  const out = {
    scheduledDelayMillis: num('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: num('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: num('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: num('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

export async function flushTracing(): Promise<void> {
  await provider?.forceFlush().catch(() => undefined);
}

function tracer() {
  return trace.getTracer(TRACER);
}

/** The trace id of the active span, for log lines; undefined when tracing is off or no span is active. */
export function activeTraceId(): string | undefined {
  if (!provider) return undefined;
  const span = trace.getActiveSpan();
  const id = span?.spanContext().traceId;
  return id && id !== '00000000000000000000000000000000' ? id : undefined;
}

/** `traceparent` (and `tracestate`) of the active context, written into a carrier (Moleculer meta, event headers). */
export function injectTraceContext(carrier: Record<string, unknown>, ctx: Context = context.active()): void {
  if (!provider) return;
  propagation.inject(ctx, carrier);
}

/** The context a carrier's `traceparent` names (the root context when there is none). */
export function extractTraceContext(carrier: Record<string, unknown> | undefined): Context {
  if (!provider || !carrier) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier, {
    get: (c, key) => {
      const v = (c as Record<string, unknown>)[key];
      return typeof v === 'string' ? v : undefined;
    },
    keys: (c) => Object.keys(c as object),
  });
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Parent context; default: the active one. */
  parent?: Context;
}

/**
 * Runs fn inside a new span (its child spans and log lines see it), ending it when fn settles and
 * marking it failed when fn throws. Tracing off: just fn().
 */
export function withSpan<T>(name: string, opts: SpanOptions, fn: (span: Span | null) => T | Promise<T>): Promise<T> {
  if (!provider) return Promise.resolve().then(() => fn(null));
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

export { SpanKind };
