/**
 * Transactional outbox: a service writes its state change and an outbox row in one transaction;
 * a relay publishes rows to durable channels (JetStream when distributed) until the publish
 * succeeds, then marks them sent. Consumers dedupe by eventId through an inbox table, so
 * "at least once" delivery has an exactly-once effect.
 *
 * Rows are claimed with a short lease (not a held transaction), so the relay never blocks the
 * single PGlite connection while a consumer in the same process handles the message.
 */
import type { ServiceBroker } from 'moleculer';
import type { Db, Queryable } from '../db';

/** SQL for a service's migration: its outbox and inbox tables. */
export function outboxTablesSql(schema: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${schema}.outbox (
      id bigserial PRIMARY KEY,
      topic text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      claimed_until timestamptz,
      published_at timestamptz,
      attempts integer NOT NULL DEFAULT 0,
      last_error text
    );
    CREATE INDEX IF NOT EXISTS outbox_unpublished ON ${schema}.outbox (id) WHERE published_at IS NULL;
    CREATE TABLE IF NOT EXISTS ${schema}.inbox (
      event_id text PRIMARY KEY,
      topic text NOT NULL,
      processed_at timestamptz NOT NULL DEFAULT now()
    );
  `;
}

export interface OutboxEvent<T = Record<string, unknown>> {
  eventId: string;
  topic: string;
  occurredAt: string;
  data: T;
}

/** Call inside the business transaction. */
export async function enqueueEvent(tx: Queryable, schema: string, topic: string, data: Record<string, unknown>): Promise<void> {
  await tx.query(`INSERT INTO ${schema}.outbox (topic, payload) VALUES ($1, $2)`, [topic, JSON.stringify(data)]);
}

/**
 * Consumer side: records the event id in the consumer's inbox inside the consumer's transaction.
 * Returns false when the event was already processed (the caller then does nothing).
 */
export async function claimInbox(tx: Queryable, schema: string, event: OutboxEvent): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO ${schema}.inbox (event_id, topic) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING`,
    [event.eventId, event.topic],
  );
  return r.rowCount === 1;
}

export interface RelayOptions {
  intervalMs: number;
  batchSize?: number;
  leaseSeconds?: number;
  /**
   * Topics this relay publishes that may have no consumer yet (e.g. notifications' events). On
   * JetStream a publish to a subject without a stream fails and would hold up every later row, so
   * the relay declares their streams once before its first publish (the same stream a subscriber
   * creates). The in-process adapter needs nothing.
   */
  topics?: readonly string[];
}

export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private stopped = false;
  private declared: Promise<void> | null = null;

  constructor(
    private readonly broker: ServiceBroker,
    private readonly db: Db,
    private readonly opts: RelayOptions,
  ) {}

  start(): void {
    this.stopped = false;
    if (this.opts.intervalMs > 0) {
      this.timer = setInterval(() => void this.kick(), this.opts.intervalMs);
      this.timer.unref();
    }
    void this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** Publish what is pending now; called after a commit that enqueued something. Resolves when drained. */
  kick(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let total = 0;
      try {
        do {
          this.again = false;
          total += await this.drain();
        } while (this.again && !this.stopped);
      } finally {
        this.running = null;
      }
      return total;
    })();
    return this.running;
  }

  private declareTopics(): Promise<void> {
    const adapter = (this.broker as any).channelAdapter;
    if (!this.opts.topics?.length || typeof adapter?.createStream !== 'function') return Promise.resolve();
    this.declared ??= (async () => {
      if (!adapter.connected) throw new Error('channels adapter not connected yet');
      for (const topic of this.opts.topics!) {
        const subject = adapter.addPrefixTopic(topic);
        // Named as @moleculer/channels names a subscriber's stream, so both declare the same one.
        await adapter.createStream(subject.split('.').join('_'), [subject], {});
      }
    })().catch((err) => {
      this.declared = null;
      throw err;
    });
    return this.declared;
  }

  /** Publishes everything pending; returns how many were published. */
  async drain(): Promise<number> {
    try {
      await this.declareTopics();
    } catch {
      return 0; // not connected yet: the next pass declares and publishes
    }
    const schema = this.db.schema;
    let published = 0;
    for (;;) {
      if (this.stopped) return published;
      const claimed = await this.db.query<{ id: string; topic: string; payload: any; created_at: Date }>(
        `UPDATE ${schema}.outbox SET claimed_until = now() + make_interval(secs => $2), attempts = attempts + 1
          WHERE id IN (
            SELECT id FROM ${schema}.outbox
             WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
             ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING id, topic, payload, created_at`,
        [this.opts.batchSize ?? 50, this.opts.leaseSeconds ?? 30],
      );
      if (claimed.rows.length === 0) return published;
      const rows = claimed.rows.sort((a, b) => Number(a.id) - Number(b.id));
      for (const row of rows) {
        const event: OutboxEvent = {
          eventId: `${schema}:${row.id}`,
          topic: row.topic,
          occurredAt: new Date(row.created_at).toISOString(),
          data: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
        };
        try {
          await (this.broker as any).sendToChannel(row.topic, event);
          await this.db.query(`UPDATE ${schema}.outbox SET published_at = now(), last_error = NULL WHERE id = $1`, [row.id]);
          published++;
        } catch (err) {
          // Release the lease soon so a later pass (or another replica) retries it.
          await this.db
            .query(`UPDATE ${schema}.outbox SET claimed_until = now() + interval '1 second', last_error = $2 WHERE id = $1`, [
              row.id,
              String((err as Error)?.message ?? err).slice(0, 500),
            ])
            .catch(() => undefined);
          return published;
        }
      }
    }
  }
}
