/**
 * Storage: one small SQL interface over PostgreSQL (pg) or embedded PGlite.
 * The same migrations and queries run on both. Each service owns one schema and
 * writes schema-qualified SQL (`ledger.accounts`); nothing outside a service touches its tables.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Pool, type PoolClient, type QueryConfig } from 'pg';
import type { PGlite as PGliteType } from '@electric-sql/pglite';
import { DatabaseUnavailableError, databaseUnavailableReason } from '../errors';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(text: string): Promise<void>;
}

export type Isolation = 'read committed' | 'repeatable read' | 'serializable';

export interface Db extends Queryable {
  readonly kind: 'pg' | 'pglite';
  readonly schema: string;
  /** Runs fn in one transaction; serialization failures and deadlocks (40001, 40P01) are retried. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, opts?: { isolation?: Isolation; retries?: number }): Promise<T>;
  close(): Promise<void>;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface DbOptions {
  databaseUrl: string | null;
  /** Directory for PGlite, or "memory://" for an in-memory database. */
  dataDir: string;
  poolMax?: number;
  /** The process talks to others over a bus (TRANSPORTER): a per-process PGlite would split the data. */
  distributed?: boolean;
  /** How long a PostgreSQL call may wait before it fails as 503 (packages/config, DATABASE_*_MS); unset = DEFAULT_DB_TIMEOUTS. */
  timeouts?: Partial<DbTimeouts>;
}

/**
 * Bounds on waiting for PostgreSQL. Each one turns a server that is restarting, failing over, frozen or gone
 * into a prompt DatabaseUnavailableError (503) instead of a call that hangs until the bus's request timeout.
 */
export interface DbTimeouts {
  /** Opening a connection, and waiting for a free one in a full pool (pg-pool connectionTimeoutMillis). */
  connectMs: number;
  /** Server side: a statement running longer is cancelled (57014). */
  statementMs: number;
  /** Client side: no answer to a query for this long (a frozen server or a dead path) fails it and drops the connection. */
  queryMs: number;
  /** Server side: a session idle inside a transaction (its process frozen) is ended, releasing its locks. */
  idleInTransactionMs: number;
  /** TCP keep-alive probes start after this much silence, so a vanished server's sockets fail instead of hanging. */
  keepAliveInitialDelayMs: number;
}

/** Defaults: under the bus's 15 s request timeout, so a caller gets a 503 and not a timeout and a resend. */
export const DEFAULT_DB_TIMEOUTS: DbTimeouts = {
  connectMs: 5_000,
  statementMs: 10_000,
  queryMs: 12_000,
  idleInTransactionMs: 5_000,
  keepAliveInitialDelayMs: 10_000,
};

const RETRYABLE = new Set(['40001', '40P01']);
/** Scripts (migrations: an index on a large table) are not held to a call's query timeout. */
const SCRIPT_QUERY_TIMEOUT_MS = 600_000;
/** A script as a query config with its own client-side timeout (pg reads query_timeout per query; its types omit it). */
function script(text: string): QueryConfig {
  return { text, query_timeout: SCRIPT_QUERY_TIMEOUT_MS } as QueryConfig;
}

// Shared per process: one pg pool per URL, one PGlite per data dir (PGlite allows one instance per dir).
const pools = new Map<string, { pool: Pool; refs: number }>();
const pglites = new Map<string, { db: Promise<PGliteType>; refs: number }>();

/** Drops one Db's reference to a shared pool or PGlite; the last one to close it ends it. */
async function release<E extends { refs: number }>(shared: Map<string, E>, key: string, end: (entry: E) => Promise<void>): Promise<void> {
  const entry = shared.get(key);
  if (entry && --entry.refs === 0) {
    shared.delete(key);
    await end(entry);
  }
}

function isRetryable(err: unknown): boolean {
  return RETRYABLE.has((err as { code?: string })?.code ?? '');
}

async function withRetries<T>(retries: number, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= retries || !isRetryable(err)) throw err;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
    }
  }
}

/**
 * Parameterised statements run as named prepared statements: pg parses and plans each text once per
 * connection, then sends only Bind/Execute. Texts without parameters (scripts, migrations) are sent as is.
 */
const statementNames = new Map<string, string>();
function statement(text: string, params?: unknown[]): string | QueryConfig<unknown[]> {
  if (!params || params.length === 0) return text;
  let name = statementNames.get(text);
  if (!name) {
    name = `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (statementNames.size < 5_000) statementNames.set(text, name);
  }
  return { name, text, values: params };
}

/**
 * The driver's "cannot answer now" errors become DatabaseUnavailableError (503, Retry-After, a hint), which keeps
 * its code over the bus; anything else (a constraint, bad input) is thrown as it is.
 */
function unavailableOr(err: unknown): unknown {
  if (err instanceof DatabaseUnavailableError) return err;
  const reason = databaseUnavailableReason(err);
  return reason ? new DatabaseUnavailableError(reason, err) : err;
}

function pgDb(url: string, schema: string, poolMax: number, timeouts: DbTimeouts): Db {
  let entry = pools.get(url);
  if (!entry) {
    const pool = new Pool({
      connectionString: url,
      max: poolMax,
      connectionTimeoutMillis: timeouts.connectMs,
      statement_timeout: timeouts.statementMs,
      query_timeout: timeouts.queryMs,
      // A process frozen mid-transaction (SIGSTOP, a stuck event loop) would hold its row locks — the
      // platform account's, say — and stall every replica. PostgreSQL ends such a session after this long;
      // its work is rolled back and redone by the retry or redelivery that follows.
      idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: timeouts.keepAliveInitialDelayMs,
    });
    // An idle client's error (server restart) must not crash the process.
    pool.on('error', () => undefined);
    entry = { pool, refs: 0 };
    pools.set(url, entry);
  }
  entry.refs++;
  const { pool } = entry;
  let closed = false;

  return {
    kind: 'pg',
    schema,
    // pool.query releases a client whose query failed with the error, which destroys it: a timed-out
    // connection is never reused.
    async query<T>(text: string, params?: unknown[]) {
      try {
        const r = await pool.query(statement(text, params));
        return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
      } catch (err) {
        throw unavailableOr(err);
      }
    },
    async exec(text: string) {
      await pool.query(script(text)).catch((err: unknown) => {
        throw unavailableOr(err);
      });
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>, opts: { isolation?: Isolation; retries?: number } = {}) {
      return withRetries(opts.retries ?? 5, async () => {
        const client: PoolClient = await pool.connect().catch((err: unknown) => {
          throw unavailableOr(err);
        });
        // A checked-out client has no error listener: a connection the server ends (idle-in-transaction
        // timeout after this process was frozen, a restart) would crash the process. Note it instead;
        // the next query fails, the transaction is retried or its event redelivered.
        let broken: Error | undefined;
        const onError = (err: Error) => {
          broken = err;
        };
        client.on('error', onError);
        try {
          await client.query(`BEGIN ISOLATION LEVEL ${(opts.isolation ?? 'read committed').toUpperCase()}`);
          const tx: Queryable = {
            async query<R>(text: string, params?: unknown[]) {
              const r = await client.query(statement(text, params));
              return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
            },
            async exec(text: string) {
              await client.query(script(text));
            },
          };
          const result = await fn(tx);
          await client.query('COMMIT');
          return result;
        } catch (err) {
          // A connection that timed out or broke is not asked to roll back (it may never answer): it is destroyed,
          // and the server rolls its transaction back when the session ends.
          if (databaseUnavailableReason(err)) broken ??= err as Error;
          else await client.query('ROLLBACK').catch(() => undefined);
          throw unavailableOr(err);
        } finally {
          client.removeListener('error', onError);
          // A broken client is destroyed, not returned to the pool.
          client.release(broken);
        }
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await release(pools, url, (e) => e.pool.end());
    },
  };
}

function pgliteDb(dataDir: string, schema: string): Db {
  let entry = pglites.get(dataDir);
  if (!entry) {
    const open = async () => {
      const { PGlite } = await import('@electric-sql/pglite');
      if (dataDir === 'memory://') return new PGlite();
      fs.mkdirSync(dataDir, { recursive: true });
      return new PGlite(dataDir);
    };
    entry = { db: open(), refs: 0 };
    pglites.set(dataDir, entry);
  }
  entry.refs++;
  const dbPromise = entry.db;
  let closed = false;

  return {
    kind: 'pglite',
    schema,
    async query<T>(text: string, params?: unknown[]) {
      const db = await dbPromise;
      const r = await db.query<T>(text, params);
      return { rows: r.rows, rowCount: Math.max(r.rows.length, r.affectedRows ?? 0) };
    },
    async exec(text: string) {
      await (await dbPromise).exec(text);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      // PGlite is one connection: its transaction() holds a lock, so every other query waits.
      const db = await dbPromise;
      return db.transaction(async (t) =>
        fn({
          async query<R>(text: string, params?: unknown[]) {
            const r = await t.query<R>(text, params);
            return { rows: r.rows, rowCount: Math.max(r.rows.length, r.affectedRows ?? 0) };
          },
          async exec(text: string) {
            await t.exec(text);
          },
        }),
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      await release(pglites, dataDir, async (e) => (await e.db).close());
    },
  };
}

export interface PoolStats {
  /** The database name (never the URL: it may hold a password). */
  database: string;
  inUse: number;
  idle: number;
  /** Queries waiting for a free connection. */
  waiting: number;
  max: number;
}

/** The PostgreSQL pools of this process, for metrics. */
export function poolStats(): PoolStats[] {
  return [...pools.entries()].map(([url, { pool }]) => {
    let database = 'unknown';
    try {
      database = decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
    } catch {
      // a connection string that is not a URL: keep 'unknown'
    }
    return { database, inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 };
  });
}

export function openDb(opts: DbOptions, schema: string): Db {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
  if (opts.distributed && !opts.databaseUrl) {
    throw new Error(`${schema}: TRANSPORTER is set but DATABASE_URL is not; distributed processes must share one PostgreSQL`);
  }
  return opts.databaseUrl ? pgDb(opts.databaseUrl, schema, opts.poolMax ?? 10, { ...DEFAULT_DB_TIMEOUTS, ...opts.timeouts }) : pgliteDb(opts.dataDir, schema);
}

/**
 * Applies pending migrations in version order, each in its own transaction.
 * A session advisory lock per schema makes concurrent replicas start safely:
 * the second waits, then finds nothing left to apply.
 */
export async function migrate(db: Db, migrations: Migration[]): Promise<number[]> {
  const schema = db.schema;
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  const applied: number[] = [];
  const lockKey = `migrations:${schema}`;
  await db.transaction(async (tx) => {
    // A migration (an index on a large table) may rightly run longer than a call's statement timeout.
    if (db.kind === 'pg') await tx.exec('SET LOCAL statement_timeout = 0');
    // Transaction-scoped lock: released on commit, held across the whole run.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
    // A service's role (npm run db:roles) owns its schema but may not create schemas: create only when missing.
    const exists = await tx.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await tx.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await tx.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`)).rows.map((r) => r.version),
    );
    for (const m of sorted) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      applied.push(m.version);
    }
  }, { retries: 0 });
  return applied;
}
