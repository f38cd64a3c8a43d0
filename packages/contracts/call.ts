/**
 * Calls typed by a contract's action map: the action's name picks its params and its result, so a
 * caller cannot send another action's params or read another action's answer (Moleculer's
 * `broker.call<R, P>(name)` takes whatever types the caller writes). Each contract exports one
 * helper built here (callLedger, callEscrow, …); a call goes through the broker or through the
 * calling action's ctx (which carries its meta, tracing and call level).
 */
import type { CallingOptions } from 'moleculer';

/** An action's params and result, as its contract declares them. */
export interface Action<P, R> {
  params: P;
  result: R;
}

/** What makes a call: the broker, or an action's ctx. */
export interface Caller {
  call<R, P>(actionName: string, params: P, opts?: CallingOptions): Promise<R>;
}

/** The typed call helper of a contract whose actions are M (action name → Action). */
export function callerOf<M extends { [A in keyof M]: Action<unknown, unknown> }>() {
  return function call<A extends keyof M & string>(via: Caller, action: A, params: M[A]['params'], opts?: CallingOptions): Promise<M[A]['result']> {
    return via.call<M[A]['result'], M[A]['params']>(action, params, opts);
  };
}

/** The params of an action that takes none. */
export type NoParams = Record<string, never>;
