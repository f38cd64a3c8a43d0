/**
 * A process frozen mid-transaction (SIGSTOP) must not hold row locks for ever, and must survive
 * when PostgreSQL ends its session: the transaction fails (and is retried by its caller), the
 * process does not crash on the connection's error event.
 */
import { openDb } from '..';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../../../test/kit';

describeWithPostgres('a transaction whose session PostgreSQL ends', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => tdb?.drop());

  it('fails the transaction without crashing, and the pool goes on', async () => {
    const db = openDb({ databaseUrl: tdb.url, dataDir: 'memory://' }, 'frozen');
    try {
      await db.exec('CREATE SCHEMA IF NOT EXISTS frozen; CREATE TABLE frozen.t (id int PRIMARY KEY)');
      const idleTimeout = await db.query<{ v: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS v");
      expect(idleTimeout.rows[0].v).toBe('5s');
      await expect(
        db.transaction(
          async (tx) => {
            const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
            // What the idle-in-transaction timeout does to a frozen process: the server ends its session.
            await db.query('SELECT pg_terminate_backend($1)', [pid]);
            await new Promise((r) => setTimeout(r, 300)); // the error event arrives while "idle"
            await tx.query('INSERT INTO frozen.t VALUES (1)');
          },
          { retries: 0 },
        ),
      ).rejects.toThrow();
      expect((await db.query('SELECT count(*)::int AS n FROM frozen.t')).rows[0].n).toBe(0);
    } finally {
      await db.close();
    }
  });
});
