/**
 * What every /api/admin route module shares: calling a service as the operator, turning a thrown
 * error into the envelope, and running a mutating operator action through the audit log
 * (gateway.audit_log: who, what, when, before/after — also when it fails).
 */
import type { Request, Response } from 'express';
import type { GatewayDeps } from '../deps';
import { sendError } from '../http';

declare module 'express-serve-static-core' {
  interface Request {
    /** Who is acting: set by adminAuth (/api/admin) and the console's session check. */
    operator?: string;
  }
}

export function operatorOf(req: Request): string {
  return req.operator ?? 'unknown';
}

export interface AuditedAction {
  action: string;
  target: string;
  params: Record<string, unknown>;
  before?: () => Promise<unknown>;
  run: () => Promise<unknown>;
}

export function adminKit(deps: GatewayDeps) {
  const call = <T = unknown>(req: Request, action: string, params: Record<string, unknown> = {}) =>
    deps.broker.call(action, params, { meta: { internal: true, operator: operatorOf(req), requestId: req.requestId } }) as Promise<T>;

  /**
   * Runs an operator action and records it (also when it fails) in the audit log; answers its
   * result or throws its error. The API and the console (web/admin) both act through this.
   */
  async function runAudited(req: Request, what: AuditedAction): Promise<unknown> {
    let before: unknown = null;
    if (what.before) before = await what.before().catch(() => null);
    let after: unknown = null;
    let error: unknown = null;
    try {
      after = await what.run();
    } catch (err) {
      error = err;
    }
    try {
      await deps.db.query(
        `INSERT INTO gateway.audit_log (operator, action, target, params, before, after, ok, error, request_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          operatorOf(req),
          what.action,
          what.target,
          JSON.stringify(what.params),
          before === null || before === undefined ? null : JSON.stringify(before),
          after === null || after === undefined ? null : JSON.stringify(after),
          !error,
          error ? String((error as Error).message ?? error).slice(0, 1000) : null,
          req.requestId,
        ],
      );
    } catch (err) {
      // The action already happened (or failed); a missing audit row must be visible in the logs.
      deps.broker.logger.error(`audit log write failed for ${what.action} ${what.target}`, (err as Error).message);
    }
    if (error) throw error;
    return after;
  }

  /** runAudited, answered as the API's envelope. */
  async function audited(req: Request, res: Response, what: AuditedAction): Promise<void> {
    let after: unknown;
    try {
      after = await runAudited(req, what);
    } catch (err) {
      sendError(res, req, err);
      return;
    }
    res.json({ ok: true, result: after });
  }

  const wrap = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      sendError(res, req, err);
    }
  };

  return { call, runAudited, audited, wrap };
}
