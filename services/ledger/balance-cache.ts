/**
 * Agent balances kept in memory for `ledger.balance` (whoami's one read), used only where this process
 * is certainly the ledger's only writer: embedded PGlite, which one process alone can open.
 *
 * Exact, not "a few seconds old": every write statement or transaction of the ledger's Db empties it
 * when it starts and again when it ends, and a balance read while a write was in flight is not kept.
 * So a kept balance is never older than the last write that finished.
 */
import type { Db, Queryable } from '../../packages/db';

const MAX_ENTRIES = 10_000;

/** A statement that cannot change a row (a plain SELECT outside a transaction). */
function isRead(text: string): boolean {
  return /^\s*SELECT\b/i.test(text) && !/\bFOR\s+(UPDATE|SHARE)\b/i.test(text);
}

export class BalanceCache {
  private readonly balances = new Map<string, number>();
  private generation = 0;
  private writesInFlight = 0;

  /** The same Db, with every write (statement, script or transaction) emptying the cache around it. */
  watch(db: Db): Db {
    const writing = <T>(run: () => Promise<T>) => this.writing(run);
    return {
      kind: db.kind,
      schema: db.schema,
      query: <T>(text: string, params?: unknown[]) => (isRead(text) ? db.query<T>(text, params) : writing(() => db.query<T>(text, params))),
      exec: (text: string) => writing(() => db.exec(text)),
      transaction: <T>(fn: (tx: Queryable) => Promise<T>, opts?: Parameters<Db['transaction']>[1]) => writing(() => db.transaction(fn, opts)),
      close: () => db.close(),
    };
  }

  /** The agent's balance: kept, or loaded (and kept when no write ran meanwhile). */
  async balance(agentId: string, load: () => Promise<number>): Promise<number> {
    const kept = this.balances.get(agentId);
    if (kept !== undefined) return kept;
    const generation = this.generation;
    const value = await load();
    if (this.writesInFlight === 0 && generation === this.generation) {
      if (this.balances.size >= MAX_ENTRIES) this.balances.clear();
      this.balances.set(agentId, value);
    }
    return value;
  }

  private async writing<T>(run: () => Promise<T>): Promise<T> {
    this.writesInFlight++;
    this.generation++;
    this.balances.clear();
    try {
      return await run();
    } finally {
      this.writesInFlight--;
      this.generation++;
      this.balances.clear();
    }
  }
}
