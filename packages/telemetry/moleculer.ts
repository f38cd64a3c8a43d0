/**
 * Moleculer middleware: every action and event handler runs in its request's context (so log lines
 * carry requestId — Moleculer's ctx.requestID, which the gateway sets to its request id), and, with
 * tracing on, each call is a CLIENT span on the caller and a SERVER span on the callee, the W3C
 * traceparent travelling in ctx.meta.
 *
 * Why not Moleculer's own tracing module: its spans are not OpenTelemetry spans, so they would not
 * share a trace with the http/express/pg instrumentations' spans without a bridge exporter that
 * re-parents them; and its context does not follow async continuations, so SQL and durable-event spans
 * could not find their parent. A small middleware creating OTel spans keeps one tracer and one context.
 */
import type { CallingOptions, Context as MoleculerContext, Logger, ServiceBroker } from 'moleculer';
import { currentRequestId, withRequestContext } from './context';
import { extractTraceContext, injectTraceContext, SpanKind, tracingEnabled, withSpan } from './tracing';

export function TelemetryMiddleware() {
  let logger: Logger | null = null;
  return {
    name: 'Telemetry',

    created(broker: ServiceBroker) {
      logger = broker.getLogger('calls');
    },

    /** Caller side (broker.call and ctx.call alike): the request id goes on, and a CLIENT span whose context travels in meta. */
    call(next: (actionName: string, params: unknown, opts?: CallingOptions) => Promise<unknown>) {
      return (actionName: string, params: unknown, opts: CallingOptions = {}) => {
        const requestId = currentRequestId();
        if (requestId && !opts.requestID && !opts.parentCtx) opts = { ...opts, requestID: requestId };
        if (!tracingEnabled()) return next(actionName, params, opts);
        return withSpan(`call ${actionName}`, { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'moleculer', 'rpc.method': actionName } }, () => {
          const meta: Record<string, unknown> = { ...(opts.meta ?? {}) };
          delete meta.traceparent;
          delete meta.tracestate;
          injectTraceContext(meta);
          return next(actionName, params, { ...opts, meta });
        });
      };
    },

    /** Callee side: the handler runs in the caller's request, under a SERVER span that continues the caller's trace. */
    localAction(handler: (ctx: MoleculerContext) => Promise<unknown>, action: { name: string }) {
      return (ctx: MoleculerContext) => {
        const run = () =>
          withRequestContext({ requestId: ctx.requestID ?? undefined }, async () => {
            const started = Date.now();
            const result = await handler(ctx);
            // One debug line per action, in the caller's request (requestId, traceId): LOG_LEVEL=debug follows a request through every service.
            logger?.debug({ action: action.name, caller: ctx.caller ?? null, ms: Date.now() - started }, `${action.name} handled`);
            return result;
          });
        if (!tracingEnabled()) return run();
        const parent = extractTraceContext(ctx.meta as Record<string, unknown>);
        return withSpan(action.name, { kind: SpanKind.SERVER, parent, attributes: { 'rpc.system': 'moleculer', 'rpc.method': action.name, 'moleculer.caller': ctx.caller ?? '', 'request.id': ctx.requestID ?? '' } }, run);
      };
    },

    /** Moleculer events (not durable): handled in the emitter's request. */
    localEvent(handler: (ctx: MoleculerContext) => Promise<unknown>) {
      return (ctx: MoleculerContext) => withRequestContext({ requestId: ctx.requestID ?? undefined }, () => handler(ctx));
    },
  };
}

