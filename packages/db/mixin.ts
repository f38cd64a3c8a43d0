/**
 * Gives a service its own schema: opens the store picked by the environment (PostgreSQL when
 * <SERVICE>_DATABASE_URL or DATABASE_URL is set, PGlite otherwise), applies the service's migrations at start, closes at stop.
 * On request, a SingleWriterCache for the service's hottest reads (embedded PGlite only).
 */
import type { ServiceSchema } from 'moleculer';
import { databaseUrlFor } from '../config';
import { runtimeOf } from '../runtime';
import { migrate, openDb, type Db, type Migration } from './index';
import { SingleWriterCache } from './single-writer-cache';

export interface DbService {
  db: Db;
  /** With `{ singleWriterCache: true }`: answers kept exactly on embedded PGlite, null over PostgreSQL. */
  singleWriter: SingleWriterCache<any> | null;
}

export function dbMixin(schema: string, migrations: Migration[], opts: { singleWriterCache?: boolean } = {}): Partial<ServiceSchema> {
  return {
    async started(this: any) {
      const { config } = runtimeOf(this.broker);
      let db = openDb(
        // Its own URL (<SERVICE>_DATABASE_URL: its own role or cluster), else DATABASE_URL; one pool per URL.
        { databaseUrl: databaseUrlFor(config, schema), dataDir: config.dataDir, poolMax: config.databasePoolMax, distributed: !!config.transporter },
        schema,
      );
      // PGlite: this process is the only writer of the service's tables, so hot reads can be kept exactly.
      this.singleWriter = opts.singleWriterCache && db.kind === 'pglite' ? new SingleWriterCache() : null;
      if (this.singleWriter) db = this.singleWriter.watch(db);
      this.db = db;
      await migrate(db, migrations);
    },
    async stopped(this: any) {
      await (this.db as Db | undefined)?.close();
    },
  };
}
