/**
 * The request a piece of work belongs to, wherever it runs: an HTTP request in the gateway, a
 * Moleculer action in any service, a durable event's handler. Kept in an AsyncLocalStorage so every
 * log line written meanwhile carries `requestId` (and `traceId` when tracing is on) without each
 * service passing it around — see `logMixin`, which the broker's pino logger calls per line.
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { EventEmitter } from 'node:events';
import { activeTraceId } from './tracing';

export interface RequestContext {
  requestId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

export function withRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** Runs fn outside any request (a background pass must not be attributed to whichever request woke it). */
export function withoutRequestContext<T>(fn: () => T): T {
  return storage.exit(fn);
}

/**
 * Listeners added to `emitter` run in the context they were added in. A request's body arrives in
 * 'data' events emitted from the socket's own context; without this, everything after the body
 * parser would run outside the request.
 */
type Listener = (...args: unknown[]) => void;
type ListenerMethod = (this: EventEmitter, event: string | symbol, listener: Listener) => EventEmitter;

export function bindEmitter(emitter: EventEmitter): void {
  // listener → its bound copy, so removeListener(listener) still finds what was added.
  const bound = new Map<Listener, Listener>();
  // The emitter's listener methods are replaced in place (Object.assign: their declared `this`-returning signatures cannot be assigned to).
  for (const method of ['on', 'once', 'addListener', 'prependListener', 'prependOnceListener'] as const) {
    const original: ListenerMethod = emitter[method];
    Object.assign(emitter, {
      [method]: function add(this: EventEmitter, event: string | symbol, listener: Listener) {
        let b = bound.get(listener);
        if (!b) {
          b = AsyncResource.bind(listener);
          bound.set(listener, b);
        }
        return original.call(this, event, b);
      },
    });
  }
  for (const method of ['off', 'removeListener'] as const) {
    const original: ListenerMethod = emitter[method];
    Object.assign(emitter, {
      [method]: function remove(this: EventEmitter, event: string | symbol, listener: Listener) {
        return original.call(this, event, bound.get(listener) ?? listener);
      },
    });
  }
}

/** pino `mixin`: fields added to every log line written inside a request or event. */
export function logMixin(): Record<string, string> {
  const out: Record<string, string> = {};
  const requestId = storage.getStore()?.requestId;
  if (requestId) out.requestId = requestId;
  const traceId = activeTraceId();
  if (traceId) out.traceId = traceId;
  return out;
}
