/**
 * Failover for calls between replicas. When a replica dies, the calls it held are rejected as
 * soon as its heartbeat is missed (a few seconds, see createBroker), and calls that found no live
 * endpoint fail at once. This middleware retries such calls on the surviving replicas — but only
 * when repeating them is harmless:
 *   - the call never reached a handler (no endpoint available / found): always;
 *   - it may have run (rejected because its node died, or timed out): only for reads and keyed
 *     calls (an idempotency key in meta, or a `key` parameter — the ledger's and escrow's money
 *     steps), or an action that declares `retrySafe: true`.
 * Moleculer's own retryPolicy cannot tell these apart (its check sees only the error).
 */
import type { CallingOptions, ServiceBroker } from 'moleculer';
import { TOOLS } from '../tool-catalogue';
import { actionEndpoints } from './registry';

/** Errors raised before any handler ran. */
const NOT_DELIVERED = new Set(['SERVICE_NOT_AVAILABLE', 'SERVICE_NOT_FOUND']);
/** Errors after which the handler may or may not have run. */
const MAYBE_RAN = new Set(['REQUEST_REJECTED', 'REQUEST_TIMEOUT']);

/** Actions behind read-only tools, plus internal reads named as such. */
const READ_ACTIONS = new Set(TOOLS.filter((t) => !t.mutating && t.action).map((t) => t.action as string));
const READ_NAME = /^(get|list|search|find|count|stats|summary|balance|wallet|whoami|authenticate|liquidity|audit|health)/i;

export interface FailoverOptions {
  /** Attempts after the first one. */
  retries: number;
  /** First delay between attempts; doubles each time, capped at maxDelayMs. */
  delayMs: number;
  maxDelayMs: number;
}

export function isSafeToRepeat(broker: ServiceBroker, actionName: string, params: unknown, opts: CallingOptions | undefined): boolean {
  if (READ_ACTIONS.has(actionName)) return true;
  const rawName = actionName.slice(actionName.indexOf('.') + 1);
  if (READ_NAME.test(rawName)) return true;
  const key = (params as { key?: unknown } | null | undefined)?.key;
  if (typeof key === 'string' && key) return true;
  const meta: { idempotencyKey?: unknown } | undefined = opts?.meta ?? opts?.parentCtx?.meta;
  if (typeof meta?.idempotencyKey === 'string' && meta.idempotencyKey) return true;
  const endpoint = actionEndpoints(broker, actionName)?.endpoints?.[0];
  return endpoint?.action?.retrySafe === true;
}

export function shouldRetry(broker: ServiceBroker, err: unknown, actionName: string, params: unknown, opts: CallingOptions | undefined): boolean {
  const type = (err as { type?: unknown } | null | undefined)?.type;
  if (typeof type !== 'string') return false;
  if (NOT_DELIVERED.has(type)) return true;
  if (MAYBE_RAN.has(type)) return isSafeToRepeat(broker, actionName, params, opts);
  return false;
}

export function FailoverMiddleware(options: FailoverOptions) {
  let broker: ServiceBroker;
  return {
    name: 'Failover',
    created(b: ServiceBroker) {
      broker = b;
    },
    call(next: (actionName: string, params?: unknown, opts?: CallingOptions) => Promise<unknown>) {
      return async function failoverCall(actionName: string, params?: unknown, opts: CallingOptions = {}) {
        if (opts?.retries === 0) return next(actionName, params, opts);
        const retries = typeof opts?.retries === 'number' ? opts.retries : options.retries;
        for (let attempt = 0; ; attempt++) {
          try {
            return await next(actionName, params, opts);
          } catch (err) {
            if (attempt >= retries || !shouldRetry(broker, err, actionName, params, opts)) throw err;
            const delay = Math.min(options.delayMs * 2 ** attempt, options.maxDelayMs);
            broker.logger.warn(`failover: ${actionName} ${(err as { type?: string }).type} (attempt ${attempt + 1}), retrying in ${delay} ms`);
            await new Promise((r) => setTimeout(r, delay));
          }
        }
      };
    },
  };
}
