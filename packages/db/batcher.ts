/**
 * Group commit for statements of one kind (issue #22, "batching under load"): work submitted while
 * `maxInFlight` batches are already running waits, and everything waiting when one finishes goes out
 * together as the next batch. A lone request is sent at once — nothing is delayed by a timer — so
 * batches form only when the database is the queue: the busier the service, the fewer statements per
 * unit of work.
 *
 * `run(batch)` settles each item (resolve or reject); if it throws, every item of the batch that it did
 * not settle is rejected with that error. `fits(batch, item)` may keep an item out of a non-empty batch
 * (it goes in the next one); `keys(item)` keeps two changes of one row apart, in a batch and in flight.
 */
/**
 * Batches in flight for work a caller waits on (a tool call's statement): a batch runs on ONE PostgreSQL
 * backend, so fewer in flight would hold back the server's other cores and lengthen every call at
 * moderate load (one run on a busy machine, with 2: p99 of purchase_service 696 → 974 ms); with 4, batches form only
 * when that many statements of the kind are already running.
 */
export const CALLER_WAITS_IN_FLIGHT = 4;
/**
 * For consumers (settles, sale counts): the same four. Distributed nobody waits on them, but in one process
 * the outbox delivers to them inline, on the confirming call's path (measured: with one, that call waited).
 */
export const BACKGROUND_IN_FLIGHT = 4;

export interface BatchItem<R> {
  resolve(value: R): void;
  reject(err: unknown): void;
}

export interface BatcherOptions<T> {
  maxInFlight: number;
  maxBatch: number;
  fits?(batch: readonly T[], item: T): boolean;
  /**
   * The rows an item changes (a purchase id, an account): two items with a key in common are never in
   * flight at once — the second waits for the first's batch — so this process's batches never lock the
   * same row, and never wait on each other.
   */
  keys?(item: T): readonly string[];
}

/**
 * How batches came out so far: their count and the items they held (items / batches = mean size), and how
 * many times a batch's statement failed so that its items were tried one by one (counted by `run`).
 */
export interface BatcherStats {
  batches: number;
  items: number;
  retriedAlone: number;
}

export class Batcher<T, R> {
  /** Each waiting item with its settle and its keys (opts.keys, read once). */
  private queue: Array<{ item: T; settle: BatchItem<R>; keys: readonly string[] }> = [];
  private inFlight = 0;
  /** The keys of the items in flight (opts.keys). */
  private readonly busy = new Set<string>();
  readonly stats: BatcherStats = { batches: 0, items: 0, retriedAlone: 0 };

  constructor(
    private readonly run: (batch: Array<{ item: T; settle: BatchItem<R> }>, stats: BatcherStats) => Promise<void>,
    private readonly opts: BatcherOptions<T>,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, settle: { resolve, reject }, keys: this.opts.keys?.(item) ?? [] });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
      const batch: typeof this.queue = [];
      const items: T[] = [];
      const later: typeof this.queue = [];
      for (const entry of this.queue) {
        const free = entry.keys.every((k) => !this.busy.has(k));
        if (free && (batch.length === 0 || (batch.length < this.opts.maxBatch && (!this.opts.fits || this.opts.fits(items, entry.item))))) {
          batch.push(entry);
          items.push(entry.item);
          for (const k of entry.keys) this.busy.add(k);
        } else later.push(entry);
      }
      this.queue = later;
      // Everything waiting shares a key with work in flight: the batch that ends frees it and pumps again.
      if (batch.length === 0) return;
      this.inFlight++;
      this.stats.batches++;
      this.stats.items += batch.length;
      void this.send(batch);
    }
  }

  private async send(batch: typeof this.queue): Promise<void> {
    const settled = new Set<BatchItem<R>>();
    const guarded = batch.map(({ item, settle }) => ({
      item,
      settle: {
        resolve: (v: R) => {
          if (settled.has(settle)) return;
          settled.add(settle);
          settle.resolve(v);
        },
        reject: (e: unknown) => {
          if (settled.has(settle)) return;
          settled.add(settle);
          settle.reject(e);
        },
      },
    }));
    try {
      await this.run(guarded, this.stats);
    } catch (err) {
      for (const { settle } of guarded) settle.reject(err);
    } finally {
      for (const { settle } of guarded) settle.reject(new Error('batch ended without an answer for this item'));
      for (const { keys } of batch) for (const k of keys) this.busy.delete(k);
      this.inFlight--;
      this.pump();
    }
  }
}
