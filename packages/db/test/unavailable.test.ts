/**
 * The pool's bounds on waiting, against a real PostgreSQL (and a TCP proxy in front of it that can freeze or
 * refuse): every way the database cannot answer becomes DatabaseUnavailableError — 503 service_unavailable with
 * Retry-After — within its timeout, and the pool serves again once the server does.
 */
import net from 'node:net';
import { openDb, type Db, type DbTimeouts } from '..';
import { DatabaseUnavailableError, toEnvelope } from '../../errors';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../../test/kit';
import { FaultProxy } from '../../../test/kit/fault-proxy';

const FAST: Partial<DbTimeouts> = { connectMs: 500, statementMs: 400, queryMs: 800, idleInTransactionMs: 5_000, keepAliveInitialDelayMs: 1_000 };

/** Each case gets its own pool (pools are shared per URL). */
function open(url: string, name: string, timeouts: Partial<DbTimeouts> = FAST, poolMax = 4): Db {
  const u = new URL(url);
  u.searchParams.set('application_name', `unavail_${name}`);
  return openDb({ databaseUrl: u.toString(), dataDir: 'memory://', poolMax, timeouts }, 'unavail');
}

async function expect503(p: Promise<unknown>, reason: RegExp): Promise<void> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(DatabaseUnavailableError);
  expect((err as DatabaseUnavailableError).reason).toMatch(reason);
  const mapped = toEnvelope(err, 'req_x');
  expect(mapped.status).toBe(503);
  expect(mapped.retryAfterSeconds).toBeGreaterThan(0);
}

describe('a database that is not there', () => {
  it('connection refused → 503', async () => {
    const db = open('postgres://postgres@127.0.0.1:1/nowhere', 'refused');
    await expect503(db.query('SELECT 1'), /ECONNREFUSED/);
    await expect503(db.transaction(async (tx) => tx.query('SELECT 1')), /ECONNREFUSED/);
    await db.close();
  });

  it('a server that accepts and never answers → 503 after the connect timeout, not a hang', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const db = open(`postgres://postgres@127.0.0.1:${(silent.address() as net.AddressInfo).port}/silent`, 'silent');
    const started = Date.now();
    await expect503(db.query('SELECT 1'), /timeout/);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const s of sockets) s.destroy();
    silent.close();
    await db.close().catch(() => undefined);
  });
});

describeWithPostgres('a real PostgreSQL that fails under the pool', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => tdb?.drop());

  it('sets statement_timeout, idle_in_transaction_session_timeout and keeps the defaults under the request timeout', async () => {
    const db = open(tdb.url, 'settings');
    const r = await db.query<{ st: string; idle: string }>(
      "SELECT current_setting('statement_timeout') AS st, current_setting('idle_in_transaction_session_timeout') AS idle",
    );
    expect(r.rows[0]).toEqual({ st: '400ms', idle: '5s' });
    await db.close();
  });

  it('statement timeout (57014) → 503; the connection serves the next query', async () => {
    const db = open(tdb.url, 'statement');
    await expect503(db.query('SELECT pg_sleep(2)'), /57014/);
    expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows[0].n).toBe(1);
    await db.close();
  });

  it('its session terminated (57P01, as by restart -m fast) → 503, in a query and in a transaction', async () => {
    const db = open(tdb.url, 'terminated', { ...FAST, statementMs: 10_000, queryMs: 10_000 });
    const killer = open(tdb.url, 'killer');
    const pidOf = async () =>
      (await killer.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = 'unavail_terminated' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()")).rows[0]?.pid;
    const sleeping = db.query('SELECT pg_sleep(5)');
    let pid: number | undefined;
    for (let i = 0; i < 50 && !pid; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pid = await pidOf();
    }
    await killer.query('SELECT pg_terminate_backend($1)', [pid]);
    await expect503(sleeping, /57P01|connection lost/);
    await expect503(
      db.transaction(async (tx) => {
        const own = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        await killer.query('SELECT pg_terminate_backend($1)', [own]);
        await tx.query('SELECT pg_sleep(0.2)');
      }, { retries: 0 }),
      /57P01|connection lost/,
    );
    // The pool opens new connections for what follows.
    expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows[0].n).toBe(1);
    await killer.close();
    await db.close();
  });

  it('a full pool → 503 after the connect timeout (pool exhaustion), not an endless wait', async () => {
    const db = open(tdb.url, 'exhausted', { ...FAST, statementMs: 5_000, queryMs: 5_000 }, 1);
    let release!: () => void;
    const holding = db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      await new Promise<void>((r) => (release = r));
    });
    await new Promise((r) => setTimeout(r, 100));
    await expect503(db.query('SELECT 1'), /connection timeout or pool exhausted/);
    release();
    await holding;
    await db.close();
  });

  it('a frozen server (nothing forwarded, sockets open) → 503 after the query timeout; thawed, it serves again', async () => {
    const base = new URL(tdb.url);
    const proxy = new FaultProxy({ host: base.hostname, port: Number(base.port || 5432) });
    await proxy.start();
    const db = open(proxy.urlFor(tdb.url), 'frozen');
    try {
      expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows[0].n).toBe(1);
      proxy.freeze();
      const started = Date.now();
      await expect503(db.query('SELECT 2'), /query timeout/);
      await expect503(db.transaction(async (tx) => tx.query('SELECT 3')), /timeout/);
      expect(Date.now() - started).toBeLessThan(4_000);
      proxy.thaw();
      expect((await db.query<{ n: number }>('SELECT 4 AS n')).rows[0].n).toBe(4);
      // Cut, then refused: both 503; back up, it serves.
      proxy.dropAll();
      await proxy.down();
      await expect503(db.query('SELECT 5'), /ECONNREFUSED|connection lost/);
      await proxy.up();
      expect((await db.query<{ n: number }>('SELECT 6 AS n')).rows[0].n).toBe(6);
    } finally {
      await db.close().catch(() => undefined);
      await proxy.stop();
    }
  }, 20_000);
});
