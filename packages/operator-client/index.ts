/**
 * How the operator CLIs (npm run admin, npm run audit:ledger) reach a running marketplace:
 * MARKET_BASE_URL (default http://localhost:$PORT) and ADMIN_TOKEN, or — on a development
 * machine where ADMIN_TOKEN is unset — the local operator token the server wrote to DATA_DIR.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface OperatorTarget {
  baseUrl: string;
  token: string | null;
}

export function operatorTarget(env: NodeJS.ProcessEnv = process.env): OperatorTarget {
  const baseUrl = (env.MARKET_BASE_URL || `http://localhost:${env.PORT || 3000}`).replace(/\/+$/, '');
  let token = env.ADMIN_TOKEN || null;
  if (!token) {
    const file = path.join(env.DATA_DIR || path.resolve(process.cwd(), 'data'), 'operator-token');
    try {
      token = fs.readFileSync(file, 'utf8').trim() || null;
    } catch {
      token = null;
    }
  }
  return { baseUrl, token };
}

export class OperatorError extends Error {}

/** Calls /api/admin/<path>; throws OperatorError with a readable message on every failure. */
export async function adminRequest<T>(
  target: OperatorTarget,
  method: 'GET' | 'POST',
  pathname: string,
  body?: unknown,
): Promise<T> {
  if (!target.token) {
    throw new OperatorError('No operator token: set ADMIN_TOKEN to the value the server was started with (or run the server locally without ADMIN_TOKEN, which writes data/operator-token).');
  }
  let res: Response;
  try {
    res = await fetch(`${target.baseUrl}/api/admin${pathname}`, {
      method,
      headers: { authorization: `Bearer ${target.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    throw new OperatorError(`Cannot reach the marketplace at ${target.baseUrl}: is it running? (set MARKET_BASE_URL or PORT)`);
  }
  const json = (await res.json().catch(() => null)) as { ok?: boolean; result?: unknown; error?: { code: string; message: string; hint?: string } } | null;
  if (!res.ok || !json?.ok) {
    const e = json?.error;
    throw new OperatorError(e ? `${res.status} ${e.code}: ${e.message}${e.hint ? `\n  hint: ${e.hint}` : ''}` : `HTTP ${res.status}`);
  }
  return json!.result as T;
}
