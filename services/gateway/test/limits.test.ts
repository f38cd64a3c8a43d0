/**
 * The counters gateway replicas share (limits.ts), on real PostgreSQL: two "replicas" (two limiters,
 * two connection pools) over one database enforce one limit between them; with the store unreachable
 * (connection refused, or a server that accepts and never answers) each falls back to its own counter
 * in at most STORE_TIMEOUT_MS and says so once in the log.
 */
import net from 'node:net';
import { migrate, openDb, type Db } from '../../../packages/db';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../../test/kit';
import { SharedLimits, STORE_TIMEOUT_MS } from '../limits';
import { AuthFailureThrottle } from '../auth-throttle';
import { migrations } from '../migrations';
import { ConsoleSessions, SIGNIN_MAX_FAILURES, SIGNIN_WINDOW_MS } from '../web/admin/session';

function warnings() {
  const lines: any[] = [];
  const logger = { warn: (obj: unknown) => lines.push(obj) } as any;
  return { lines, logger };
}

describeWithPostgres('shared limits (PostgreSQL)', () => {
  let tdb: TestDatabase;
  let replicaA: Db;
  let replicaB: Db;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    // Two pools, as two gateway processes would have.
    replicaA = openDb({ databaseUrl: `${tdb.url}?application_name=gw_a`, dataDir: 'memory://' }, 'gateway');
    replicaB = openDb({ databaseUrl: `${tdb.url}?application_name=gw_b`, dataDir: 'memory://' }, 'gateway');
    await migrate(replicaA, migrations);
  });
  afterAll(async () => {
    await replicaA?.close();
    await replicaB?.close();
    await tdb?.drop();
  });

  it('two replicas with a limit of 30: exactly 30 of 60 alternating calls pass, the rest say when to retry', async () => {
    const a = new SharedLimits({ db: replicaA, storeTimeoutMs: 30_000 }).counter('calls', 30, 60);
    const b = new SharedLimits({ db: replicaB, storeTimeoutMs: 30_000 }).counter('calls', 30, 60);
    const verdicts = [];
    for (let i = 0; i < 60; i++) verdicts.push(await (i % 2 ? b : a).consume('agent:agt_shared'));
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(30);
    expect(verdicts.slice(0, 30).every((v) => v.allowed)).toBe(true);
    expect(verdicts[29].remaining).toBe(0);
    for (const v of verdicts.slice(30)) {
      expect(v.allowed).toBe(false);
      expect(v.retryAfterSeconds).toBeGreaterThan(0);
      expect(v.retryAfterSeconds).toBeLessThanOrEqual(60);
    }
    // Another agent has its own count.
    expect((await b.consume('agent:agt_other')).allowed).toBe(true);
  });

  it('concurrent calls through both replicas never let more than the limit through', async () => {
    // (A store slower than the timeout makes each replica count alone — the fail-open path tested below; here the
    // store must answer, however loaded the runner.)
    const a = new SharedLimits({ db: replicaA, storeTimeoutMs: 30_000 }).counter('race', 10, 60);
    const b = new SharedLimits({ db: replicaB, storeTimeoutMs: 30_000 }).counter('race', 10, 60);
    const verdicts = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? b : a).consume('agent:agt_race')));
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(10);
  });

  it('failed authentications are counted across replicas; a valid credential is never asked about', async () => {
    const a = new AuthFailureThrottle(10, undefined, new SharedLimits({ db: replicaA, storeTimeoutMs: 30_000 }));
    const b = new AuthFailureThrottle(10, undefined, new SharedLimits({ db: replicaB, storeTimeoutMs: 30_000 }));
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) {
      outcomes.push(await (i % 2 ? b : a).fail('apiKey', '198.51.100.7', `req_${i}`).then(() => 'counted', (e) => e.type));
    }
    expect(outcomes).toEqual([...Array(10).fill('counted'), 'rate_limited', 'rate_limited']);
    // The same stale key sent again and again counts once per window (key-less tools).
    const c = new AuthFailureThrottle(2, undefined, new SharedLimits({ db: replicaA, storeTimeoutMs: 30_000 }));
    for (let i = 0; i < 5; i++) await c.fail('apiKey', '198.51.100.8', `req_s${i}`, 'digest-of-one-stale-key');
    await expect(c.fail('apiKey', '198.51.100.8', 'req_new', 'digest-of-a-new-key')).resolves.toBeUndefined();
    await expect(c.fail('apiKey', '198.51.100.8', 'req_new2', 'digest-of-another-key')).rejects.toMatchObject({ type: 'rate_limited' });
  });

  it("the operator console's sign-in lock-out is one count across replicas: 5 wrong tokens in all, then 429", async () => {
    const config = { adminToken: `adm_${'r'.repeat(40)}` } as any;
    const broker = { logger: undefined } as any;
    const a = new ConsoleSessions({ config, operatorToken: null, db: replicaA, broker });
    const b = new ConsoleSessions({ config, operatorToken: null, db: replicaB, broker });
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) waits.push(await (i % 2 ? b : a).failed('203.0.113.9'));
    expect(waits.slice(0, SIGNIN_MAX_FAILURES)).toEqual(Array(SIGNIN_MAX_FAILURES).fill(0));
    for (const w of waits.slice(SIGNIN_MAX_FAILURES)) {
      expect(w).toBeGreaterThan(0);
      expect(w).toBeLessThanOrEqual(SIGNIN_WINDOW_MS / 1000);
    }
    // Another address has its own count.
    expect(await b.failed('203.0.113.10')).toBe(0);
  });
});

describe('shared limits with the store unreachable: per-replica counting, never "no limit", never "refuse all"', () => {
  it('connection refused: the replica counts on its own, logs it once', async () => {
    const db = openDb({ databaseUrl: 'postgres://postgres@127.0.0.1:1/nowhere', dataDir: 'memory://' }, 'gateway');
    const { lines, logger } = warnings();
    const counter = new SharedLimits({ db, logger }).counter('calls', 3, 60);
    const verdicts = [];
    for (let i = 0; i < 5; i++) verdicts.push(await counter.consume('agent:agt_x'));
    expect(verdicts.map((v) => v.allowed)).toEqual([true, true, true, false, false]);
    expect(lines.filter((l) => l.limitsStore === 'unreachable')).toHaveLength(1);
    await db.close();
  });

  it('a store that accepts and never answers: one call waits the store timeout, the next skip the store and count locally', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    const db = openDb({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/silent`, dataDir: 'memory://' }, 'gateway');
    const counter = new SharedLimits({ db }).counter('calls', 2, 60);
    const started = Date.now();
    const verdicts = [];
    for (let i = 0; i < 3; i++) verdicts.push(await counter.consume('agent:agt_y'));
    expect(verdicts.map((v) => v.allowed)).toEqual([true, true, false]);
    // Only the first call waited for the store (generous margin for a loaded machine).
    expect(Date.now() - started).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 50);
    expect(Date.now() - started).toBeLessThan(2 * STORE_TIMEOUT_MS);
    for (const s of sockets) s.destroy();
    silent.close();
    void db.close().catch(() => undefined);
  }, 20_000);
});
