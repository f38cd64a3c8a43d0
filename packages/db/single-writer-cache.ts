/**
 * Answers kept in memory for a service's hottest reads (the ledger's balances, escrow's spending limits:
 * whoami polls both), used only where the process is certainly the only writer of the service's
 * tables: embedded PGlite, which one process alone can open. Over PostgreSQL it is not used.
 *
 * Exact, not "a few seconds old": every write statement or transaction through the service's Db
 * empties it when it starts and again when it ends, and an answer loaded while a write was in flight
 * is not kept. So a kept answer is never older than the last write that finished.
 */
import type { Db, Queryable } from './index';

const MAX_ENTRIES = 10_000;

/** A statement that cannot change a row (a plain SELECT). */
function isRead(text: string): boolean {
  return /^\s*SELECT\b/i.test(text) && !/\bFOR\s+(UPDATE|SHARE|NO\s+KEY\s+UPDATE|KEY\s+SHARE)\b/i.test(text);
}

export class SingleWriterCache<T> {
  private readonly entries = new Map<string, T>();
  private generation = 0;
  private writesInFlight = 0;

  /** The same Db, with every write (statement, script or transaction) emptying the cache around it. */
  watch(db: Db): Db {
    const writing = <R>(run: () => Promise<R>) => this.writing(run);
    return {
      kind: db.kind,
      schema: db.schema,
      query: <R>(text: string, params?: unknown[]) => (isRead(text) ? db.query<R>(text, params) : writing(() => db.query<R>(text, params))),
      exec: (text: string) => writing(() => db.exec(text)),
      transaction: <R>(fn: (tx: Queryable) => Promise<R>, opts?: Parameters<Db['transaction']>[1]) => writing(() => db.transaction(fn, opts)),
      close: () => db.close(),
    };
  }

  /** The answer for `key`: kept, or loaded (and kept when no write ran meanwhile). */
  async get(key: string, load: () => Promise<T>): Promise<T> {
    const kept = this.entries.get(key);
    if (kept !== undefined) return kept;
    const generation = this.generation;
    const value = await load();
    if (this.writesInFlight === 0 && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }

  private async writing<R>(run: () => Promise<R>): Promise<R> {
    this.writesInFlight++;
    this.generation++;
    this.entries.clear();
    try {
      return await run();
    } finally {
      this.writesInFlight--;
      this.generation++;
      this.entries.clear();
    }
  }
}
