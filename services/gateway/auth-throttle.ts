/**
 * Failed authentications per client and minute (wrong admin token, unknown API key, wrong metrics
 * token), counted in the store every gateway replica shares (limits.ts). Only failures are slowed:
 * a credential is always checked first and a valid one always passes, whatever others sent from the
 * same address (behind a proxy without TRUST_PROXY, every client shares one). Past the limit a failed
 * attempt answers 429 rate_limited with Retry-After instead of 401, until the window ends.
 *
 * What this does not do is stop guessing by itself: API keys carry 119+ random bits and ADMIN_TOKEN
 * must be long (see config), so guessing is hopeless anyway; the throttle keeps the noise bounded and
 * tells a misconfigured client to stop. Every failure is logged at warn (client address and request
 * id, never the credential).
 */
import type { Logger } from 'moleculer';
import { MarketError } from '../../packages/errors';
import { SharedLimits, type SharedCounter } from './limits';

export type AuthKind = 'admin' | 'apiKey' | 'metrics';

const WINDOW_SECONDS = 60;
const WHAT: Record<AuthKind, string> = { admin: 'admin token', apiKey: 'API key', metrics: 'metrics token' };

export class AuthFailureThrottle {
  private readonly failures: Record<AuthKind, SharedCounter>;
  /** One point per (client, credential digest) and window: the same stale key counts once. */
  private readonly distinctKeys: SharedCounter;

  constructor(
    private readonly limitPerMinute: number,
    private readonly logger?: Logger,
    limits: SharedLimits = new SharedLimits({ db: null, logger }),
  ) {
    this.failures = {
      admin: limits.counter('authfail:admin', limitPerMinute, WINDOW_SECONDS),
      apiKey: limits.counter('authfail:apikey', limitPerMinute, WINDOW_SECONDS),
      metrics: limits.counter('authfail:metrics', limitPerMinute, WINDOW_SECONDS),
    };
    this.distinctKeys = limits.counter('authfail:seen', 1, WINDOW_SECONDS);
  }

  /**
   * Records one failed attempt (and logs it); throws rate_limited when this client is past the limit
   * in the current window, so the caller answers 429 instead of 401. With `distinct` (a digest of the
   * credential), the same wrong credential counts once per window and is never refused here: a stale
   * key an agent keeps sending to the key-less tools is not an attack, while guessing needs a new
   * credential per try.
   */
  async fail(kind: AuthKind, client: string, requestId: string, distinct?: string): Promise<void> {
    if (distinct !== undefined) {
      const first = await this.distinctKeys.consume(`${kind}:${client}:${distinct}`);
      if (!first.allowed) return;
    }
    const v = await this.failures[kind].consume(client);
    this.logger?.warn(
      { authFailure: kind, client, requestId, failuresThisMinute: v.consumed },
      `failed ${kind === 'apiKey' ? 'API key' : kind} authentication from ${client}`,
    );
    if (v.allowed) return;
    const what = WHAT[kind];
    throw new MarketError('rate_limited', `Too many failed ${what} attempts from this client: at most ${this.limitPerMinute} per minute.`, {
      hint: `Wait ${v.retryAfterSeconds} s (Retry-After) and check the ${what} you send. A valid ${what} is not affected.`,
      retryAfterSeconds: v.retryAfterSeconds,
    });
  }
}
