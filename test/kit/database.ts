/** Fresh, empty PostgreSQL databases for tests and benches (no jest needed, so the bench can use it too). */
import { Client } from 'pg';
import { base62 } from '../../packages/ids';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || null;

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the TEST_DATABASE_URL server, so suites never see each other's data. */
export async function createTestDatabase(baseUrl = TEST_DATABASE_URL): Promise<TestDatabase> {
  if (!baseUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `t_${base62(12).toLowerCase()}`;
  const admin = new Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

