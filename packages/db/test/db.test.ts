/** The storage layer on both engines: same SQL, same row counts, migrations safe when replicas start together. */
import { migrate, openDb, type Db, type Migration } from '..';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../../test/kit';

const migrations: Migration[] = [
  { version: 1, name: 'accounts', sql: `CREATE TABLE demo.accounts (id text PRIMARY KEY, balance integer NOT NULL CHECK (balance >= 0)); INSERT INTO demo.accounts VALUES ('a', 10);` },
  { version: 2, name: 'notes', sql: 'CREATE TABLE demo.notes (id serial PRIMARY KEY, body text NOT NULL);' },
];

function behaves(open: () => Promise<{ db: Db; extra?: () => Db; done: () => Promise<void> }>) {
  let db: Db;
  let done: () => Promise<void>;
  let extra: (() => Db) | undefined;
  beforeAll(async () => {
    ({ db, done, extra } = await open());
    await migrate(db, migrations);
  });
  afterAll(async () => done());

  it('applies migrations once, in order, and records them', async () => {
    expect(await migrate(db, migrations)).toEqual([]);
    const r = await db.query<{ version: number }>('SELECT version FROM demo.schema_migrations ORDER BY version');
    expect(r.rows.map((x) => x.version)).toEqual([1, 2]);
  });

  it('reports row counts the same way for SELECT, UPDATE and INSERT … ON CONFLICT', async () => {
    expect((await db.query('SELECT * FROM demo.accounts WHERE id = $1', ['a'])).rowCount).toBe(1);
    expect((await db.query('UPDATE demo.accounts SET balance = balance - 3 WHERE id = $1 AND balance >= 3', ['a'])).rowCount).toBe(1);
    expect((await db.query('UPDATE demo.accounts SET balance = balance - 100 WHERE id = $1 AND balance >= 100', ['a'])).rowCount).toBe(0);
    expect((await db.query(`INSERT INTO demo.accounts VALUES ('a', 1) ON CONFLICT DO NOTHING`)).rowCount).toBe(0);
  });

  it('rolls a failed transaction back and enforces CHECK constraints', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO demo.notes (body) VALUES ('kept?')`);
        await tx.query(`UPDATE demo.accounts SET balance = -1 WHERE id = 'a'`);
      }),
    ).rejects.toThrow(/check/i);
    expect((await db.query(`SELECT * FROM demo.notes WHERE body = 'kept?'`)).rowCount).toBe(0);
  });

  it('lets several replicas migrate at once without applying anything twice', async () => {
    if (!extra) return;
    const fresh: Migration[] = [{ version: 3, name: 'race', sql: 'CREATE TABLE demo.race (id int PRIMARY KEY);' }];
    const replicas = [extra(), extra(), extra(), extra()];
    const results = await Promise.all(replicas.map((r) => migrate(r, [...migrations, ...fresh])));
    expect(results.flat()).toEqual([3]);
    await Promise.all(replicas.map((r) => r.close()));
  });
}

describe('db on PGlite', () => {
  behaves(async () => {
    const db = openDb({ databaseUrl: null, dataDir: 'memory://' }, 'demo');
    return { db, done: () => db.close() };
  });
});

describeWithPostgres('db on PostgreSQL', () => {
  let tdb: TestDatabase;
  behaves(async () => {
    tdb = await createTestDatabase();
    const db = openDb({ databaseUrl: tdb.url, dataDir: '' }, 'demo');
    // Separate pools stand in for separate replicas (each pool is its own set of connections).
    const extra = () => openDb({ databaseUrl: `${tdb.url}?replica=${Math.random()}`, dataDir: '' }, 'demo');
    return {
      db,
      extra,
      done: async () => {
        await db.close();
        await tdb.drop();
      },
    };
  });
});
