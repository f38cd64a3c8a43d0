/**
 * Gives a service its own schema: opens the store picked by the environment (PostgreSQL when
 * <SERVICE>_DATABASE_URL or DATABASE_URL is set, PGlite otherwise), applies the service's migrations at start, closes at stop.
 * On request, a SingleWriterCache for the service's hottest reads (embedded PGlite only).
 */
import type { Service } from 'moleculer';
import { databaseUrlFor, type Config } from '../config';
import type { MixinSchema, RuntimeService, ServiceSchemaOf } from '../runtime';
import { migrate, openDb, type Db, type DbTimeouts, type Migration } from './index';
import { SingleWriterCache } from './single-writer-cache';

/** The pool's timeouts from the configuration (DATABASE_*_MS). */
export function dbTimeoutsOf(config: Config): DbTimeouts {
  return {
    connectMs: config.databaseConnectTimeoutMs,
    statementMs: config.databaseStatementTimeoutMs,
    queryMs: config.databaseQueryTimeoutMs,
    idleInTransactionMs: config.databaseIdleInTransactionTimeoutMs,
    keepAliveInitialDelayMs: config.databaseKeepAliveInitialDelayMs,
  };
}

/** T: what the service keeps in its single-writer cache. */
export interface DbService<T = unknown> {
  db: Db;
  /** With `{ singleWriterCache: true }`: answers kept exactly on embedded PGlite, null over PostgreSQL. */
  singleWriter: SingleWriterCache<T> | null;
}

/** `this` in the mixin's hooks: the config comes from the runtime createBroker handed the service. */
type DbMixinThis = Service & RuntimeService & Partial<DbService>;

export function dbMixin(schema: string, migrations: Migration[], opts: { singleWriterCache?: boolean } = {}): MixinSchema {
  const mixin: Partial<ServiceSchemaOf<DbMixinThis>> = {
    async started(this: DbMixinThis) {
      const { config } = this;
      let db = openDb(
        // Its own URL (<SERVICE>_DATABASE_URL: its own role or cluster), else DATABASE_URL; one pool per URL.
        { databaseUrl: databaseUrlFor(config, schema), dataDir: config.dataDir, poolMax: config.databasePoolMax, distributed: !!config.transporter, timeouts: dbTimeoutsOf(config) },
        schema,
      );
      // PGlite: this process is the only writer of the service's tables, so hot reads can be kept exactly.
      const singleWriter = opts.singleWriterCache && db.kind === 'pglite' ? new SingleWriterCache<unknown>() : null;
      if (singleWriter) db = singleWriter.watch(db);
      this.singleWriter = singleWriter;
      this.db = db;
      await migrate(db, migrations);
    },
    async stopped(this: DbMixinThis) {
      await this.db?.close();
    },
  };
  return mixin;
}

/**
 * A service's `metricsSnapshot` action (internal, read-only): the business figures the gateway's /metrics
 * shows, read by `read` from the service's own database.
 */
export function metricsSnapshotMixin<T>(read: (db: Db) => Promise<T>): MixinSchema {
  const mixin: Partial<ServiceSchemaOf<{ db: Db }>> = {
    actions: {
      metricsSnapshot: {
        visibility: 'public',
        handler(this: { db: Db }): Promise<T> {
          return read(this.db);
        },
      },
    },
  };
  return mixin;
}
