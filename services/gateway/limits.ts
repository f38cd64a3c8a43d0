/**
 * Counters every gateway replica shares: the per-agent call limit and the failed-authentication
 * throttle. Counted by rate-limiter-flexible in gateway.rate_limits (PostgreSQL, the gateway's own
 * database) so N replicas enforce the configured limit, not N times it. On embedded PGlite there is
 * exactly one process, so the same library's memory limiter counts the same thing without a write per call.
 *
 * The store unreachable (or slower than STORE_TIMEOUT_MS): each replica falls back to its own memory
 * counter (the library's insurance limiter) — fail open to per-replica limits, never to "no limit" and
 * never to "refuse everyone": a database outage must not turn into an outage of every agent, and the
 * fallback still bounds one client per replica. Logged at warn, at most once a minute; after a failure the
 * store is asked again every STORE_RETRY_MS, so a hung database costs one slow call per period, not one per call.
 */
import type { Logger } from 'moleculer';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, RLWrapperTimeouts, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db } from '../../packages/db';

export const LIMITS_TABLE = 'rate_limits';
/** Above this a limiter answer comes from the replica's own counter: a call waits at most this long for it. */
export const STORE_TIMEOUT_MS = 1_000;

export interface LimitVerdict {
  allowed: boolean;
  /** Points used in the current window, this one included. */
  consumed: number;
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  retryAfterSeconds: number;
}

export interface SharedLimitsOptions {
  /** The gateway's database; null = process memory (tests of a single app without storage). */
  db: Db | null;
  logger?: Logger;
  /** How long one store call may take before this replica counts alone (default STORE_TIMEOUT_MS). */
  storeTimeoutMs?: number;
}

/** rate-limiter-flexible's Postgres limiter speaks pg's `query({text, values})`; the gateway's Db takes (text, params). */
function storeClientOf(db: Db) {
  return {
    query: (q: { text: string; values?: unknown[] }) => db.query(q.text, q.values),
  };
}

/** After a store failure, calls skip the store this long (one slow probe per period, not one per call). */
export const STORE_RETRY_MS = 5_000;

/** Whether the store answered lately; shared by every counter of one SharedLimits. */
export class StoreHealth {
  private downUntil = 0;
  private lastWarning = 0;

  constructor(private readonly logger?: Logger) {}

  get down(): boolean {
    return Date.now() < this.downUntil;
  }

  failed(err: unknown): void {
    const now = Date.now();
    this.downUntil = now + STORE_RETRY_MS;
    if (now - this.lastWarning < 60_000) return;
    this.lastWarning = now;
    this.logger?.warn(
      { err, limitsStore: 'unreachable' },
      'rate-limit store unreachable: counting in this replica only until it answers again',
    );
  }
}

export class SharedLimits {
  private readonly health: StoreHealth;

  constructor(private readonly opts: SharedLimitsOptions) {
    this.health = new StoreHealth(opts.logger);
  }

  /** Whether the counters are shared by every replica (PostgreSQL) or kept by this process (PGlite, none). */
  get shared(): boolean {
    return this.opts.db?.kind === 'pg';
  }

  /**
   * A fixed window of `durationSeconds` from the first point, `points` allowed in it, counted under
   * `prefix` (one table row per prefix and key).
   */
  counter(prefix: string, points: number, durationSeconds: number): SharedCounter {
    const memory = () => new RateLimiterMemory({ keyPrefix: prefix, points, duration: durationSeconds });
    const db = this.opts.db;
    if (!db || db.kind !== 'pg') return new SharedCounter(memory(), points);
    const store = new RateLimiterPostgres({
      storeClient: storeClientOf(db),
      storeType: 'pool',
      schemaName: db.schema,
      tableName: LIMITS_TABLE,
      tableCreated: true, // created by the gateway's migrations
      keyPrefix: prefix,
      points,
      duration: durationSeconds,
      // Once refused, the rest of the window is answered from memory: a flood costs no writes.
      inMemoryBlockOnConsumed: points + 1,
    });
    const timed = new RLWrapperTimeouts({ limiter: store, timeoutMs: this.opts.storeTimeoutMs ?? STORE_TIMEOUT_MS });
    return new SharedCounter(timed, points, memory(), this.health);
  }
}

export class SharedCounter {
  constructor(
    private readonly limiter: RateLimiterAbstract,
    readonly points: number,
    /** This replica's own counter, used while the shared store does not answer. */
    private readonly fallback?: RateLimiterAbstract,
    private readonly health?: StoreHealth,
  ) {}

  /** Counts one point for `key`; a refusal is `allowed: false`, never a throw. */
  async consume(key: string, points = 1): Promise<LimitVerdict> {
    try {
      if (this.fallback && this.health?.down) throw new Error('store marked down');
      return verdict(await this.limiter.consume(key, points), true, this.points);
    } catch (err) {
      if (err instanceof RateLimiterRes) return verdict(err, false, this.points);
      if (!this.fallback) throw err;
      if (!this.health?.down) this.health?.failed(err);
      try {
        return verdict(await this.fallback.consume(key, points), true, this.points);
      } catch (refused) {
        if (refused instanceof RateLimiterRes) return verdict(refused, false, this.points);
        throw refused;
      }
    }
  }
}

function verdict(res: RateLimiterRes, allowed: boolean, points: number): LimitVerdict {
  const consumed = res.consumedPoints || (allowed ? 1 : points + 1);
  return {
    allowed,
    consumed,
    remaining: Math.max(0, points - consumed),
    retryAfterSeconds: Math.max(1, Math.ceil((res.msBeforeNext > 0 ? res.msBeforeNext : 1000) / 1000)),
  };
}
