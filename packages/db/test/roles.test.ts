/**
 * `npm run db:roles` on an existing installation (tables made by the admin): each service's role then
 * owns its schema's tables, runs its migrations, and cannot touch another service's schema.
 */
import { Client } from 'pg';
import { base62 } from '../../ids';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../../test/kit';
import { migrate, openDb } from '..';
import { createServiceRoles, databasesOpenToEveryone, DEFAULT_CONNECTION_LIMIT, dropServiceRoles, type ServiceRole } from '../roles';
import { migrations as ledgerMigrations } from '../../../services/ledger/migrations';
import { migrations as escrowMigrations } from '../../../services/escrow/migrations';

describeWithPostgres('db:roles (real PostgreSQL)', () => {
  let tdb: TestDatabase;
  const prefix = `t${base62(8).toLowerCase()}_`;
  let roles: ServiceRole[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    // An installation from before: every schema created by the admin.
    for (const [schema, migrations] of [['ledger', ledgerMigrations], ['escrow', escrowMigrations]] as const) {
      const db = openDb({ databaseUrl: tdb.url, dataDir: 'memory://' }, schema);
      await migrate(db, migrations);
      await db.close();
    }
    roles = await createServiceRoles({ adminUrl: tdb.url, prefix, services: ['ledger', 'escrow'] });
  });

  afterAll(async () => {
    await tdb?.drop();
    await dropServiceRoles(process.env.TEST_DATABASE_URL!, prefix, ['ledger', 'escrow']);
  });

  it("hands each schema to its service's role; the ledger's role runs its migrations and cannot read escrow", async () => {
    const ledger = roles.find((r) => r.service === 'ledger')!;
    expect(ledger.role).toBe(`${prefix}ledger`);
    const db = openDb({ databaseUrl: ledger.url, dataDir: 'memory://' }, 'ledger');
    try {
      await expect(migrate(db, ledgerMigrations)).resolves.toEqual([]);
      const owners = await db.query<{ owner: string }>(`SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'ledger'`);
      expect(owners.rows).toEqual([{ owner: ledger.role }]);
      await expect(db.query('SELECT count(*) FROM escrow.purchases')).rejects.toThrow(/permission denied/);
      await expect(db.query('CREATE SCHEMA sneaky')).rejects.toThrow(/permission denied/);
    } finally {
      await db.close();
    }
  });

  it('limits each role\'s connections and takes CONNECT on the database from PUBLIC (only the service roles connect)', async () => {
    const admin = new Client({ connectionString: tdb.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ rolname: string; rolconnlimit: number }>('SELECT rolname, rolconnlimit FROM pg_roles WHERE rolname LIKE $1 ORDER BY rolname', [`${prefix}%`]);
      expect(rows).toEqual([
        { rolname: `${prefix}escrow`, rolconnlimit: DEFAULT_CONNECTION_LIMIT },
        { rolname: `${prefix}ledger`, rolconnlimit: DEFAULT_CONNECTION_LIMIT },
      ]);
      const db = (await admin.query<{ db: string }>('SELECT current_database() AS db')).rows[0].db;
      const open = await admin.query<{ ok: boolean }>(`SELECT has_database_privilege('public', $1, 'CONNECT') AS ok`, [db]);
      expect(open.rows[0].ok).toBe(false);
      expect(await databasesOpenToEveryone(tdb.url)).not.toContain(db);
      // A role that is not a service's cannot connect to the marketplace's database any more.
      const outsider = `${prefix}outsider`;
      await admin.query(`CREATE ROLE ${outsider} LOGIN PASSWORD 'outsider-pw'`);
      const url = new URL(tdb.url);
      url.username = outsider;
      url.password = 'outsider-pw';
      const c = new Client({ connectionString: url.toString() });
      await expect(c.connect()).rejects.toThrow(/permission denied for database/);
      await admin.query(`DROP ROLE ${outsider}`);
    } finally {
      await admin.end();
    }
    await expect(createServiceRoles({ adminUrl: tdb.url, prefix, services: ['escrow'], connectionLimit: 0 })).rejects.toThrow(/connectionLimit/);
  });

  it('can run again (it rotates the passwords) and still leaves each role its own schema only', async () => {
    const again = await createServiceRoles({ adminUrl: tdb.url, prefix, services: ['escrow'] });
    const c = new Client({ connectionString: again[0].url });
    await c.connect();
    try {
      expect((await c.query('SELECT current_user AS u')).rows[0].u).toBe(`${prefix}escrow`);
      expect((await c.query('SELECT count(*)::int AS n FROM escrow.purchases')).rows[0].n).toBe(0);
      await expect(c.query('SELECT count(*) FROM ledger.accounts')).rejects.toThrow(/permission denied/);
    } finally {
      await c.end();
    }
  });
});
