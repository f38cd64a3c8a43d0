/** The single-writer cache is exact: every write empties it, and a read that overlaps a write is not kept. */
import { openDb, type Db } from '../index';
import { SingleWriterCache } from '../single-writer-cache';

describe('single-writer cache (embedded PGlite)', () => {
  let raw: Db;
  let db: Db;
  let cache: SingleWriterCache<number>;
  beforeAll(async () => {
    raw = openDb({ databaseUrl: null, dataDir: 'memory://' }, 'cachetest');
    await raw.exec('CREATE SCHEMA IF NOT EXISTS cachetest; CREATE TABLE cachetest.accounts (id text PRIMARY KEY, balance bigint NOT NULL)');
    cache = new SingleWriterCache<number>();
    db = cache.watch(raw);
    await db.query('INSERT INTO cachetest.accounts VALUES ($1, $2)', ['a', 100]);
  });
  afterAll(async () => {
    await raw.close();
  });

  const read = () => db.query<{ balance: string }>('SELECT balance FROM cachetest.accounts WHERE id = $1', ['a']).then((r) => Number(r.rows[0].balance));

  it('keeps a balance until the next write, statement or transaction', async () => {
    let loads = 0;
    const balance = () => cache.get('a', () => (loads++, read()));
    expect(await balance()).toBe(100);
    expect(await balance()).toBe(100);
    expect(loads).toBe(1);

    await db.query('UPDATE cachetest.accounts SET balance = balance - 30 WHERE id = $1', ['a']);
    expect(await balance()).toBe(70);
    await db.transaction(async (tx) => {
      await tx.query('UPDATE cachetest.accounts SET balance = balance + 5 WHERE id = $1', ['a']);
    });
    expect(await balance()).toBe(75);
    expect(loads).toBe(3);
  });

  it('does not keep a balance read while a write was in flight', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const write = db.transaction(async (tx) => {
      await gate;
      await tx.query('UPDATE cachetest.accounts SET balance = balance + 1 WHERE id = $1', ['a']);
    });
    // PGlite is one connection: this read waits behind nothing here (the transaction is not started yet).
    const during = cache.get('a', () => raw.query<{ balance: string }>('SELECT balance FROM cachetest.accounts WHERE id = $1', ['a']).then((r) => Number(r.rows[0].balance)));
    release();
    await write;
    await during;
    let loads = 0;
    expect(await cache.get('a', () => (loads++, read()))).toBe(76);
    expect(loads).toBe(1);
  });
});
