/**
 * Gives a service its own schema: opens the store picked by the environment (PostgreSQL when
 * DATABASE_URL is set, PGlite otherwise), applies the service's migrations at start, closes at stop.
 */
import type { ServiceSchema } from 'moleculer';
import { runtimeOf } from '../runtime';
import { migrate, openDb, type Db, type Migration } from './index';

export interface DbService {
  db: Db;
}

export function dbMixin(schema: string, migrations: Migration[]): Partial<ServiceSchema> {
  return {
    async started(this: any) {
      const { config } = runtimeOf(this.broker);
      const db = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }, schema);
      this.db = db;
      await migrate(db, migrations);
    },
    async stopped(this: any) {
      await (this.db as Db | undefined)?.close();
    },
  };
}
