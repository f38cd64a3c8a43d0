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
import { currentRequestId } from '../telemetry/context';
import { injectTraceContext } from '../telemetry/tracing';

/**
 * The request an event was written in (its request id and traceparent), stored with the row under this
 * key and published as the event's headers, not in its data: an event the relay publishes later (its
 * writer died, or the bus was down) still joins the request and the trace that caused it.
 */
const CONTEXT_KEY = '$context';

export interface EventContext {
  requestId?: string;
  traceparent?: string;
}

function stored(data: object): object {
  const context: Record<string, string> = {};
  const requestId = currentRequestId();
  if (requestId) context.requestId = requestId;
  injectTraceContext(context);
  return Object.keys(context).length ? { ...data, [CONTEXT_KEY]: context } : data;
}

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

/**
 * An event to write with a change: [topic, data], or [topic, data, audience] — the agents it is news for.
 * An event with an audience is written only if the writer's `audience` predicate (RelayOptions) accepts
 * one of them (issue #22: notices only for agents with webhooks); without a predicate it is always written.
 */
export type OutboxEventSpec = readonly [string, Record<string, unknown>] | readonly [string, Record<string, unknown>, readonly string[]];

/** SQL true when one of the agent ids in the jsonb array expression `agentsJson` is worth an event. */
export type AudiencePredicate = (agentsJson: string) => string;

/** Call inside the business transaction. With an audience and a predicate, written only if the predicate holds. */
export async function enqueueEvent(
  tx: Queryable,
  schema: string,
  topic: string,
  data: object,
  audience?: { agents: readonly string[]; predicate?: AudiencePredicate },
): Promise<void> {
  if (audience?.predicate) {
    await tx.query(`INSERT INTO ${schema}.outbox (topic, payload) SELECT $1, $2 WHERE ${audience.predicate('$3::jsonb')}`, [
      topic,
      JSON.stringify(stored(data)),
      JSON.stringify(audience.agents),
    ]);
    return;
  }
  await tx.query(`INSERT INTO ${schema}.outbox (topic, payload) VALUES ($1, $2)`, [topic, JSON.stringify(stored(data))]);
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

/** How long a row stays leased to the relay pass that claimed it. */
const OUTBOX_LEASE_SECONDS = 30;
/**
 * How long a row stays leased to the process that wrote it, which publishes it within milliseconds of
 * its commit. Short, so that if the writer is killed in between, another replica's next relay pass
 * publishes it within seconds; a slow publish that outlives it is published twice, which JetStream's
 * msgID dedupe and the consumers' keys absorb.
 */
const OUTBOX_WRITER_LEASE_SECONDS = 2;

/** An outbox row as written: published with OutboxRelay.publishRows right after its commit. */
export interface OutboxRow {
  id: string;
  topic: string;
  payload: unknown;
  created_at: string | Date;
}

/**
 * The body of a CTE that writes outbox rows already leased to the writing process — one per element
 * of the jsonb array parameter `eventsParam` ([{"topic", "data"}]) for each row of `fromCte` (none if
 * the write it depends on changed nothing) — and returns them (OutboxRow) for OutboxRelay.publishRows.
 * No relay pass takes them while the lease lasts (OUTBOX_WRITER_LEASE_SECONDS); if the writer dies
 * first, the next pass after it does.
 */
function leasedOutboxInsertSql(schema: string, events: string, fromCte: string, audience?: AudiencePredicate, orderBy = 'x.n'): string {
  return `INSERT INTO ${schema}.outbox (topic, payload, claimed_until, attempts)
          SELECT e->>'topic', e->'data', now() + make_interval(secs => ${OUTBOX_WRITER_LEASE_SECONDS}), 1
            FROM ${fromCte}, jsonb_array_elements(${events}::jsonb) WITH ORDINALITY AS x(e, n)
           ${audience ? `WHERE (e->'audience' IS NULL OR ${audience(`(e->'audience')`)})` : ''}
           ORDER BY ${orderBy}
          RETURNING id, topic, payload, created_at`;
}

/** The events as leasedOutboxInsertSql reads them ([{"topic", "data", "audience"?}]). */
export function outboxEvents(events: ReadonlyArray<OutboxEventSpec>): Array<Record<string, unknown>> {
  return events.map(([topic, data, audience]) => ({ topic, data: stored(data), ...(audience ? { audience } : {}) }));
}

/** The jsonb parameter leasedOutboxInsertSql reads. */
function outboxEventsParam(events: ReadonlyArray<OutboxEventSpec>): string {
  return JSON.stringify(outboxEvents(events));
}

/**
 * A state change and its events in one statement (its own transaction): `updateSql` (an UPDATE …
 * RETURNING) runs, and one outbox row per event is written for each row it returns — none if it changed
 * nothing. After commit the relay publishes them at once. Returns the updated row, or undefined.
 */
export async function updateWithEvents<T>(
  db: Queryable,
  relay: OutboxRelay,
  updateSql: string,
  params: unknown[],
  events: ReadonlyArray<OutboxEventSpec>,
): Promise<T | undefined> {
  const r = await db.query<T & { outbox?: OutboxRow[] | null }>(
    `WITH u AS (${updateSql}),
     o AS (${leasedOutboxInsertSql(relay.schema, `$${params.length + 1}`, 'u', relay.audience)})
     SELECT u.*, (SELECT json_agg(o) FROM o) AS outbox FROM u`,
    [...params, outboxEventsParam(events)],
  );
  const written = r.rows[0];
  if (!written) return undefined;
  const outbox = written.outbox;
  delete written.outbox;
  // Embedded: the consumers have run when this resolves. Distributed: the relay publishes them in the
  // background (never inside the write: a slow JetStream delays settlement, not the caller), and retries.
  if (outbox?.length) await relay.afterCommit(outbox);
  return written;
}

/**
 * Several state changes and their events in ONE statement (its own transaction; issue #22, batching):
 * `updateSql` is an UPDATE … RETURNING whose rows each carry `batch_n` (the change's place in the batch)
 * and `batch_events` (outboxEvents of that change's events); one outbox row per event is written for each
 * row it returns, in batch order. After commit the relay publishes them all. Returns the rows written,
 * without the two batch columns; a change whose row was not written simply has no row.
 */
export async function updateManyWithEvents<T>(db: Queryable, relay: OutboxRelay, updateSql: string, params: unknown[]): Promise<Array<T & { batch_n: number }>> {
  const r = await db.query<T & { batch_n: number; batch_events?: unknown; outbox?: OutboxRow[] | null }>(
    `WITH u AS (${updateSql}),
     o AS (${leasedOutboxInsertSql(relay.schema, 'u.batch_events', 'u', relay.audience, 'u.batch_n, x.n')})
     SELECT u.*, CASE WHEN row_number() OVER () = 1 THEN (SELECT json_agg(o) FROM o) END AS outbox FROM u`,
    params,
  );
  const outbox = r.rows.flatMap((row) => row.outbox ?? []);
  if (outbox.length) await relay.afterCommit(outbox);
  for (const row of r.rows) {
    delete row.outbox;
    delete row.batch_events;
  }
  return r.rows;
}

export interface RelayOptions {
  /** The pass interval while the relay has work (a pass published something, or a publish failed). */
  intervalMs: number;
  /**
   * The longest interval between passes when there is nothing to do (default intervalMs): an idle relay
   * doubles its interval up to this. The writer publishes its own rows right after commit, so a pass only
   * recovers rows whose writer died or whose publish failed (a local failure brings the interval back to
   * intervalMs at once); a row left by a killed replica is published within maxIntervalMs + its lease.
   */
  maxIntervalMs?: number;
  batchSize?: number;
  leaseSeconds?: number;
  /** Which audiences are worth an event (OutboxEventSpec); default: every event is written. */
  audience?: AudiencePredicate;
}

/**
 * A service's relay, started: passes every second while they find work, backing off to the service's sweep
 * interval when idle (the writer publishes its own rows at once; a pass only recovers what a killed process
 * or a failed publish left). `extra`: the service's own lease or audience.
 */
export function startRelay(broker: ServiceBroker, db: Db, sweepIntervalMs: number, extra: Partial<RelayOptions> = {}): OutboxRelay {
  const relay = new OutboxRelay(broker, db, { intervalMs: Math.min(sweepIntervalMs || 1000, 1000), maxIntervalMs: sweepIntervalMs || 1000, ...extra });
  relay.start();
  return relay;
}

/** What the DurableEvents middleware (packages/broker/durable.ts) adds to a broker: a durable publish. */
export interface ChannelSender {
  sendToChannel(topic: string, payload: unknown, context?: EventContext): Promise<void>;
  /** Its transport: `inline` when publishing runs the consumers in this process (embedded). */
  durableEvents?: { readonly inline: boolean };
}

function isChannelSender(broker: object): broker is ChannelSender {
  return 'sendToChannel' in broker && typeof broker.sendToChannel === 'function';
}

/** A broker without the DurableEvents middleware: nothing can be published. */
const NO_CHANNELS: ChannelSender = {
  sendToChannel: () => Promise.reject(new Error('durable events are not set up on this broker (DurableEventsMiddleware, packages/broker/durable.ts)')),
};

/** Rows waiting for the background publisher at most (beyond, the relay passes pick them up from the table). */
const MAX_QUEUED_ROWS = 10_000;
/** Publishes in flight at once from the background publisher (sent in order, acknowledged together). */
const PUBLISH_WINDOW = 64;

export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private currentIntervalMs = 0;
  private running: Promise<number> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly broker: ServiceBroker,
    private readonly db: Db,
    private readonly opts: RelayOptions,
  ) {}

  /** The broker's durable publish (added by the DurableEvents middleware, packages/broker/durable.ts). */
  private get channels(): ChannelSender {
    return isChannelSender(this.broker) ? this.broker : NO_CHANNELS;
  }

  /** The schema whose outbox this relay publishes. */
  get schema(): string {
    return this.db.schema;
  }

  /**
   * Publishing runs the consumers in this process (embedded, or a broker without the middleware): writers
   * await it. Otherwise (JetStream) the events are published in the background.
   */
  get inline(): boolean {
    return this.channels.durableEvents?.inline !== false;
  }

  /**
   * Right after a commit that wrote leased rows (leasedOutboxInsertSql): embedded, publishes them and
   * resolves once the consumers ran; distributed, queues them for the background publisher and resolves at
   * once. Never throws: a row not published is retried by the relay.
   */
  async afterCommit(rows: OutboxRow[]): Promise<void> {
    if (this.inline) return this.publishRows(rows).catch(() => undefined);
    if (this.queue.length + rows.length > MAX_QUEUED_ROWS) return this.hurry(); // the relay passes take them after the lease
    this.queue.push(...rows);
    if (!this.pumping) this.pumping = this.pump().finally(() => (this.pumping = null));
  }

  /**
   * After a commit that wrote rows with enqueueEvent: embedded, a relay pass that resolves when drained;
   * distributed, starts one and resolves at once (the write path does not wait for JetStream).
   */
  async wake(): Promise<void> {
    const pass = this.kick().catch(() => 0);
    if (this.inline) await pass;
  }

  private readonly queue: OutboxRow[] = [];
  private pumping: Promise<void> | null = null;

  /**
   * The background publisher: rows in commit order, PUBLISH_WINDOW at a time (sent in order, then their acks
   * awaited together). On a failure the failed rows go back to the relay passes at once and the rest of the
   * queue after their short writer lease, so an outage costs no round trip per row.
   */
  private async pump(): Promise<void> {
    const schema = this.db.schema;
    while (this.queue.length && !this.stopped) {
      const rows = this.queue.splice(0, PUBLISH_WINDOW).sort((a, b) => Number(a.id) - Number(b.id));
      const results = await Promise.allSettled(rows.map((row) => this.channels.sendToChannel(row.topic, ...eventOf(schema, row))));
      const failed: string[] = [];
      let error: unknown;
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') this.publishedIds.push(String(rows[i].id));
        else {
          failed.push(String(rows[i].id));
          error ??= r.reason;
        }
      });
      if (this.publishedIds.length && !this.markTimer) {
        this.markTimer = setTimeout(() => void this.flushPublished(), 20);
        this.markTimer.unref();
      }
      if (failed.length) {
        // The rest of the queue too: the relay passes publish them all as soon as JetStream answers again.
        const dropped = this.queue.splice(0).map((row) => String(row.id));
        await this.release([...failed, ...dropped], error);
      }
    }
  }

  /** The age in seconds of the oldest row not yet published (0 when none): how far settlement lags. */
  async oldestUnpublishedSeconds(): Promise<number> {
    const r = await this.db.query<{ age: number | string | null }>(
      `SELECT extract(epoch FROM now() - min(created_at)) AS age FROM ${this.db.schema}.outbox WHERE published_at IS NULL`,
    );
    return Math.max(0, Number(r.rows[0]?.age ?? 0));
  }

  /** The writer's audience predicate (RelayOptions.audience), if any. */
  get audience(): AudiencePredicate | undefined {
    return this.opts.audience;
  }

  start(): void {
    this.stopped = false;
    this.currentIntervalMs = this.opts.intervalMs;
    if (this.opts.intervalMs > 0) this.schedule(this.opts.intervalMs);
    void this.kick();
  }

  /** The next timed pass in `ms`; after it, the interval resets when it found work, else doubles (≤ maxIntervalMs). */
  private schedule(ms: number): void {
    if (this.stopped || this.opts.intervalMs <= 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.kick()
        .catch(() => 0)
        .then((published) => {
          const max = Math.max(this.opts.intervalMs, this.opts.maxIntervalMs ?? this.opts.intervalMs);
          this.currentIntervalMs = published > 0 ? this.opts.intervalMs : Math.min(max, this.currentIntervalMs * 2);
          if (!this.timer) this.schedule(this.currentIntervalMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** Something needs a pass soon (a publish failed): back to the short interval. */
  private hurry(): void {
    if (this.stopped || this.opts.intervalMs <= 0) return;
    this.currentIntervalMs = this.opts.intervalMs;
    this.schedule(this.opts.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
    // Publishes in flight finish first, within a bound (a hung one is the relay's to retry after a restart).
    if (this.pumping) await Promise.race([this.pumping.catch(() => undefined), new Promise((r) => setTimeout(r, 3_000).unref())]);
    await this.flushPublished();
  }

  private publishedIds: string[] = [];
  private markTimer: NodeJS.Timeout | null = null;

  /**
   * Publishes rows this process wrote leased (leasedOutboxInsertSql), in order, right after their
   * commit — no claiming round trip. Their "published" marks are written in batches a moment later;
   * a row whose mark is lost is published again after its lease, and consumers dedupe by eventId.
   * A failed publish releases the row to the relay passes, which retry it.
   */
  async publishRows(rows: OutboxRow[]): Promise<void> {
    const schema = this.db.schema;
    for (const row of [...rows].sort((a, b) => Number(a.id) - Number(b.id))) {
      try {
        await this.channels.sendToChannel(row.topic, ...eventOf(schema, row));
      } catch (err) {
        await this.release([row.id], err);
        return;
      }
      this.publishedIds.push(String(row.id));
      if (!this.markTimer) {
        this.markTimer = setTimeout(() => void this.flushPublished(), 20);
        this.markTimer.unref();
      }
    }
  }

  private async flushPublished(): Promise<void> {
    if (this.markTimer) clearTimeout(this.markTimer);
    this.markTimer = null;
    const ids = this.publishedIds;
    if (!ids.length) return;
    this.publishedIds = [];
    await this.db
      .query(`UPDATE ${this.db.schema}.outbox SET published_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`, [ids])
      .catch(() => undefined);
  }

  private async release(ids: string[], err: unknown): Promise<void> {
    // Release the lease soon so a later pass (or another replica) retries it.
    this.hurry();
    await this.db
      .query(`UPDATE ${this.db.schema}.outbox SET claimed_until = now() + interval '1 second', last_error = $2 WHERE id = ANY($1::bigint[])`, [
        ids,
        String((err as Error)?.message ?? err).slice(0, 500),
      ])
      .catch(() => undefined);
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

  /** Publishes everything pending; returns how many were published. */
  async drain(): Promise<number> {
    const schema = this.db.schema;
    const batchSize = this.opts.batchSize ?? 50;
    let published = 0;
    for (;;) {
      if (this.stopped) return published;
      const claimed = await this.db.query<OutboxRow>(
        `UPDATE ${schema}.outbox SET claimed_until = now() + make_interval(secs => $2), attempts = attempts + 1
          WHERE id IN (
            SELECT id FROM ${schema}.outbox
             WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
             ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING id, topic, payload, created_at`,
        [batchSize, this.opts.leaseSeconds ?? OUTBOX_LEASE_SECONDS],
      );
      if (claimed.rows.length === 0) return published;
      const rows = claimed.rows.sort((a, b) => Number(a.id) - Number(b.id));
      const sent: string[] = [];
      let failed = false;
      for (const [i, row] of rows.entries()) {
        try {
          await this.channels.sendToChannel(row.topic, ...eventOf(schema, row));
          sent.push(String(row.id));
        } catch (err) {
          // This row and the rest of the batch, not held for the pass's lease: the next pass tries them.
          await this.release(rows.slice(i).map((r) => String(r.id)), err);
          failed = true;
          break;
        }
      }
      if (sent.length) {
        await this.db.query(`UPDATE ${schema}.outbox SET published_at = now(), last_error = NULL WHERE id = ANY($1::bigint[])`, [sent]);
        published += sent.length;
      }
      // A short batch was everything pending when it was claimed: no second look (kick() loops if more came).
      if (failed || rows.length < batchSize) return published;
    }
  }
}

function eventOf(schema: string, row: OutboxRow): [OutboxEvent, EventContext] {
  const { [CONTEXT_KEY]: context, ...data } = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<string, unknown>;
  const event = {
    eventId: `${schema}:${row.id}`,
    topic: row.topic,
    occurredAt: new Date(row.created_at).toISOString(),
    data,
  };
  return [event, (context ?? {}) as EventContext];
}
