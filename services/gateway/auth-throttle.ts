/**
 * Failed authentications per client and minute (wrong admin token, unknown API key). Past the limit
 * the client gets 429 rate_limited with Retry-After until the window ends, before its token is even
 * compared, so guessing costs a minute per handful of tries. Every failure is logged at warn (the
 * client address and request id, never the token). In-process: each gateway replica counts its own.
 */
import type { LoggerInstance } from 'moleculer';
import { MarketError } from '../../packages/errors';

export type AuthKind = 'admin' | 'apiKey' | 'metrics';

const WINDOW_MS = 60_000;

export class AuthFailureThrottle {
  private readonly windows = new Map<string, { windowStart: number; failures: number; seen?: Set<string> }>();

  constructor(
    private readonly limitPerMinute: number,
    private readonly logger?: LoggerInstance,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws rate_limited when this client already failed `limit` times in the current minute. */
  check(kind: AuthKind, client: string): void {
    const w = this.windows.get(`${kind}:${client}`);
    const now = this.now();
    if (!w || now - w.windowStart >= WINDOW_MS || w.failures < this.limitPerMinute) return;
    const retryAfter = Math.max(1, Math.ceil((w.windowStart + WINDOW_MS - now) / 1000));
    const what = { admin: 'admin token', apiKey: 'API key', metrics: 'metrics token' }[kind];
    throw new MarketError('rate_limited', `Too many failed ${what} attempts from this client: at most ${this.limitPerMinute} per minute.`, {
      hint: `Wait ${retryAfter} s (Retry-After) and check the ${what} you send.`,
      retryAfterSeconds: retryAfter,
    });
  }

  /**
   * Records one failure (and logs it). With `distinct` (a digest of the credential), the same wrong
   * credential counts once per window: a stale key an agent keeps sending to the key-less tools is not
   * an attack, while guessing needs a new credential per try.
   */
  fail(kind: AuthKind, client: string, requestId: string, distinct?: string): void {
    const key = `${kind}:${client}`;
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || now - w.windowStart >= WINDOW_MS) {
      if (this.windows.size > 50_000) this.windows.clear();
      w = { windowStart: now, failures: 0 };
      this.windows.set(key, w);
    }
    if (distinct !== undefined) {
      w.seen ??= new Set();
      if (w.seen.has(distinct)) return;
      if (w.seen.size < 1000) w.seen.add(distinct);
    }
    w.failures++;
    this.logger?.warn({ authFailure: kind, client, requestId, failuresThisMinute: w.failures }, `failed ${{ admin: 'admin', apiKey: 'API key', metrics: 'metrics' }[kind]} authentication from ${client}`);
  }
}
