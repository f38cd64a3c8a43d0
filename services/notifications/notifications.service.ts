/**
 * notifications: signed webhooks (DESIGN §5). A leaf consumer: it turns escrow's and payments'
 * durable facts into one stored delivery per (event, webhook) and POSTs them, signed, until the
 * receiver answers 2xx — with exponential backoff for 24 h. It owns its tables and calls nobody.
 *
 *   events.ts    source topic → webhook events and recipients
 *   ssrf.ts      which targets are allowed (after DNS resolution)
 *   sender.ts    one POST, pinned to the checked address
 *   signing.ts   Market-Signature
 *
 * At least once and never lost: the inbox row and the delivery rows are written in one
 * transaction before the durable message is acknowledged; a sweeper claims due rows with a lease,
 * so a process killed mid-POST is retried after the lease.
 *
 * Endpoints are isolated (issue #23): at most one attempt in flight per webhook, each with a total
 * deadline; claiming never waits for an attempt (each runs on its own and, when it ends, asks for
 * the next), so a hung or trickling receiver delays only its own deliveries. An endpoint failing
 * for WEBHOOK_PAUSE_AFTER_HOURS is paused with its deliveries kept (pending, listed).
 */
import type { Context, Service } from 'moleculer';
import { dbMixin } from '../../packages/db/mixin';
import { rowView } from '../../packages/db/row-view';
import type { Db, Queryable } from '../../packages/db';
import { InvalidArgumentsError, InvalidStateError, NotFoundError } from '../../packages/errors';
import { base62, newId, sha256Hex } from '../../packages/ids';
import { claimInbox, startRelay, type OutboxEvent, type OutboxRelay } from '../../packages/outbox';
import { NOTIFICATIONS_TOPICS } from '../../packages/contracts/notifications';
import { decodeTimeCursor, timePage } from '../../packages/pagination';
import type { RuntimeService, ServiceSchemaOf } from '../../packages/runtime';
import { toolParams } from '../../packages/tool-catalogue';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import {
  MAX_WEBHOOKS_PER_AGENT,
  WEBHOOK_EVENTS,
  WEBHOOK_PAUSE_AFTER_HOURS,
  WEBHOOK_RETRY_HOURS,
  type DeliveryView,
  type WebhookBody,
  type WebhookEventType,
  type WebhookView,
} from '../../packages/contracts/notifications';
import { NOTICES } from './events';
import { migrations } from './migrations';
import { postWebhook } from './sender';
import { signatureHeader } from './signing';
import { SpanKind, tracingEnabled, withSpan } from '../../packages/telemetry/tracing';
import { resolveWebhookTarget, WebhookTargetError } from './ssrf';

const HOUR_MS = 3_600_000;
const BATCH = 20;
/** Attempts in flight in one process, all endpoints together (one per endpoint at most). */
const MAX_IN_FLIGHT = 200;
const LEASE_SECONDS = 60;
const FIRST_RETRY_SECONDS = 10;
const MAX_RETRY_SECONDS = 3600;
const CURSOR_HINT = 'Pass nextCursor from the previous list_webhook_deliveries answer unchanged, or leave cursor out.';

/** Seconds before attempt n+1 after n failed ones: 10 s, 20 s, 40 s … capped at an hour, ±20 % jitter. */
export function retryDelaySeconds(failedAttempts: number): number {
  const base = Math.min(MAX_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

interface WebhookRow {
  id: string;
  agent_id: string;
  url: string;
  /** Written only from set_webhook's checked list. */
  events: WebhookEventType[];
  secret: string;
  created_at: Date;
  failing_since: Date | null;
  paused_at: Date | null;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: WebhookEventType;
  status: DeliveryView['status'];
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

/** Each webhook attempt is a span (tracing on): its delivery, event, attempt number and outcome; the POST is its child. */
function tracedAttempt(d: ClaimedDelivery, attempt: () => Promise<boolean>): Promise<boolean> {
  if (!tracingEnabled()) return attempt();
  return withSpan('webhook attempt', {
    kind: SpanKind.CLIENT,
    attributes: { 'webhook.delivery_id': String(d.id), 'webhook.event_id': String(d.event_id), 'webhook.attempt': Number(d.attempts) },
  }, async (span) => {
    const delivered = await attempt();
    span?.setAttribute('webhook.delivered', delivered);
    return delivered;
  });
}

interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  body: string;
  event_id: string;
  attempts: number;
  give_up_at: Date;
  url: string;
  secret: string;
  deleted_at: Date | null;
}

interface NotificationsState {
  db: Db;
  /** Publishes notifications.webhooks_changed (escrow writes notices only for agents with webhooks). */
  relay: OutboxRelay;
  timer: NodeJS.Timeout | null;
  /** Arms the sweep timer to fire in `ms` (sooner than it would); no-op without a sweep interval. */
  sweepSoon(ms: number): void;
  /** The claim loop running now (claims are one at a time; attempts are not). */
  claiming: Promise<Promise<boolean>[]> | null;
  claimAgain: boolean;
  /** Attempts in flight, by webhook id: one per endpoint. */
  inFlight: Map<string, Promise<boolean>>;
  stopping: boolean;
}

interface NotificationsMethods {
  now(): Date;
  allowPrivate(): boolean;
  record(event: OutboxEvent): Promise<number>;
  pump(): Promise<Promise<boolean>[]>;
  kickSender(): Promise<number>;
  claimDue(limit: number): Promise<ClaimedDelivery[]>;
  launch(d: ClaimedDelivery): Promise<boolean>;
  attempt(d: ClaimedDelivery): Promise<boolean>;
}

type NotificationsThis = Service & RuntimeService & NotificationsState & NotificationsMethods;

const iso = (d: Date | string | null): string | null => (d ? new Date(d).toISOString() : null);

function webhookView(w: WebhookRow): WebhookView {
  return rowView(w, ['id', 'url', 'events', 'created_at', 'failing_since', 'paused_at']);
}

function deliveryView(d: DeliveryRow): DeliveryView {
  return {
    ...rowView(d, ['id', 'webhook_id', 'event_id', 'status', 'attempts', 'last_status_code', 'last_error', 'delivered_at', 'created_at']),
    type: d.event_type,
    nextAttemptAt: d.status === 'pending' ? iso(d.next_attempt_at) : null,
  };
}

/**
 * In the transaction that changed an agent's webhooks: tells escrow (durable, through the outbox) whether the
 * agent has webhooks now; `version` (the database's clock, µs) orders one agent's changes.
 */
async function webhooksChanged(tx: Queryable, agentId: string): Promise<void> {
  await tx.query(
    `INSERT INTO notifications.outbox (topic, payload)
     SELECT $1, jsonb_build_object('agentId', $2::text,
              'hasWebhooks', EXISTS (SELECT 1 FROM notifications.webhooks WHERE agent_id = $2 AND deleted_at IS NULL),
              'version', ((extract(epoch from clock_timestamp()) * 1000000)::bigint)::text)`,
    [NOTIFICATIONS_TOPICS.webhooksChanged, agentId],
  );
}

/** The event id a receiver dedupes on: the same for every retry of one fact to one agent. */
function webhookEventId(sourceEventId: string, agentId: string, type: string): string {
  return `evt_${sha256Hex(`${sourceEventId}|${agentId}|${type}`).slice(0, 32)}`;
}

const channels = Object.fromEntries(
  Object.keys(NOTICES).map((topic) => [
    topic,
    {
      group: 'notifications',
      async handler(this: NotificationsThis, event: OutboxEvent) {
        const queued = await this.record(event);
        // Not awaited: the publisher (in-process: the tool call that caused it) does not wait for receivers.
        if (queued) void this.kickSender().catch((err: Error) => this.logger.warn('webhook send failed; the sweeper retries', err.message));
      },
    },
  ]),
);

const NotificationsService: ServiceSchemaOf<NotificationsThis> = {
  name: 'notifications',
  mixins: [dbMixin('notifications', migrations)],

  actions: {
    setWebhook: {
      params: toolParams('set_webhook'),
      async handler(this: NotificationsThis, ctx: Context<{ url: string; events?: WebhookEventType[] }, CallMeta>) {
        const agent = requireAgent(ctx);
        const events = [...new Set(ctx.params.events?.length ? ctx.params.events : WEBHOOK_EVENTS)];
        try {
          await resolveWebhookTarget(ctx.params.url, this.allowPrivate());
        } catch (err) {
          if (!(err instanceof WebhookTargetError)) throw err;
          throw new InvalidArgumentsError(`This webhook url is not allowed: ${err.message}`, {
            hint: 'Use a public https URL whose host resolves only to public addresses (no localhost, private, link-local or metadata addresses).',
            details: { field: 'url', reason: err.reason },
          });
        }
        const url = new URL(ctx.params.url).toString();
        const secret = `whsec_${base62(32)}`;
        const webhook = await this.db.transaction(async (tx) => {
          // Setting the same url again replaces its events and rotates its secret; a paused webhook is
          // resumed: its kept deliveries are due now, with a fresh retry window.
          const same = await tx.query<WebhookRow>(
            `UPDATE notifications.webhooks w SET events = $3, secret = $4, paused_at = NULL, failing_since = NULL
               FROM (SELECT id, paused_at FROM notifications.webhooks WHERE agent_id = $1 AND url = $2 AND deleted_at IS NULL FOR UPDATE) old
              WHERE w.id = old.id RETURNING w.*, old.paused_at AS was_paused`,
            [agent.id, url, events, secret],
          );
          if (same.rows[0]) {
            if ((same.rows[0] as WebhookRow & { was_paused: Date | null }).was_paused) {
              const now = this.now();
              await tx.query(
                `UPDATE notifications.deliveries SET next_attempt_at = $2, give_up_at = GREATEST(give_up_at, $3::timestamptz)
                  WHERE webhook_id = $1 AND status = 'pending'`,
                [same.rows[0].id, now.toISOString(), new Date(now.getTime() + WEBHOOK_RETRY_HOURS * HOUR_MS).toISOString()],
              );
            }
            return same.rows[0];
          }
          const count = await tx.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM notifications.webhooks WHERE agent_id = $1 AND deleted_at IS NULL`,
            [agent.id],
          );
          if (count.rows[0].n >= MAX_WEBHOOKS_PER_AGENT) {
            throw new InvalidStateError(`You already have ${MAX_WEBHOOKS_PER_AGENT} webhooks.`, {
              hint: 'delete_webhook one you no longer use (list_webhook_deliveries lists them), then set_webhook again.',
              details: { maxWebhooks: MAX_WEBHOOKS_PER_AGENT },
            });
          }
          const ins = await tx.query<WebhookRow>(
            `INSERT INTO notifications.webhooks (id, agent_id, url, events, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
            [newId('whk'), agent.id, url, events, secret, this.now().toISOString()],
          );
          // The agent's first webhook: escrow starts writing its notices.
          if (count.rows[0].n === 0) await webhooksChanged(tx, agent.id);
          return ins.rows[0];
        });
        // Published before answering: in one process escrow knows on return; distributed, within its consumer's delay.
        await this.relay.wake();
        void this.kickSender().catch(() => undefined);
        return {
          webhook: { ...webhookView(webhook), secret },
          notice: 'The secret is shown only now: store it to verify Market-Signature. Calling set_webhook with the same url rotates it.',
        };
      },
    },

    deleteWebhook: {
      params: toolParams('delete_webhook'),
      async handler(this: NotificationsThis, ctx: Context<{ webhookId: string }, CallMeta>) {
        const agent = requireAgent(ctx);
        const { webhookId } = ctx.params;
        const deleted = await this.db.transaction(async (tx) => {
          const r = await tx.query<WebhookRow>(
            `UPDATE notifications.webhooks SET deleted_at = $3 WHERE id = $1 AND agent_id = $2 AND deleted_at IS NULL RETURNING *`,
            [webhookId, agent.id, this.now().toISOString()],
          );
          if (!r.rows[0]) return null;
          await tx.query(
            `UPDATE notifications.deliveries SET status = 'failed', last_error = 'webhook deleted', next_attempt_at = NULL
              WHERE webhook_id = $1 AND status = 'pending'`,
            [webhookId],
          );
          await webhooksChanged(tx, agent.id);
          return r.rows[0];
        });
        if (deleted) await this.relay.wake();
        if (!deleted) {
          throw new NotFoundError(`You have no webhook ${webhookId}.`, {
            hint: 'list_webhook_deliveries lists your webhooks with their ids.',
            details: { webhookId },
          });
        }
        return { deleted: true, webhook: webhookView(deleted) };
      },
    },

    listDeliveries: {
      params: toolParams('list_webhook_deliveries'),
      async handler(this: NotificationsThis, ctx: Context<{ limit?: number; cursor?: string }, CallMeta>) {
        const agent = requireAgent(ctx);
        const limit = ctx.params.limit ?? 20;
        const cursor = decodeTimeCursor(ctx.params.cursor, CURSOR_HINT);
        const r = await this.db.query<DeliveryRow>(
          `SELECT * FROM notifications.deliveries
            WHERE agent_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
            ORDER BY created_at DESC, id DESC LIMIT $4`,
          [agent.id, cursor?.at ?? null, cursor?.id ?? null, limit + 1],
        );
        const page = timePage(r.rows, limit);
        const hooks = await this.db.query<WebhookRow>(
          `SELECT * FROM notifications.webhooks WHERE agent_id = $1 AND deleted_at IS NULL ORDER BY created_at`,
          [agent.id],
        );
        return { webhooks: hooks.rows.map(webhookView), deliveries: page.rows.map(deliveryView), nextCursor: page.nextCursor };
      },
    },

    /** Internal: sends what is due now (the timer does this; tests call it after moving the clock). */
    sweep: {
      params: {},
      async handler(this: NotificationsThis) {
        return { sent: await this.kickSender() };
      },
    },
  },

  channels,

  methods: {
    now(this: NotificationsThis): Date {
      return this.clock.now();
    },

    allowPrivate(this: NotificationsThis): boolean {
      return this.config.webhookAllowPrivate;
    },

    /**
     * Inbox row + one delivery per subscribed webhook, in one transaction; returns how many were queued.
     * One read finds the subscribed webhooks; most agents have none, and nothing is written for them.
     */
    async record(this: NotificationsThis, event: OutboxEvent): Promise<number> {
      const notices = NOTICES[event.topic]?.(event.data) ?? [];
      if (!notices.length) return 0;
      const subscribed = await this.db.query<{ id: string; agent_id: string; events: string[] }>(
        `SELECT id, agent_id, events FROM notifications.webhooks WHERE agent_id = ANY($1::text[]) AND deleted_at IS NULL`,
        [[...new Set(notices.map((n) => n.agentId))]],
      );
      const hooksFor = (n: (typeof notices)[number]) => subscribed.rows.filter((h) => h.agent_id === n.agentId && h.events.includes(n.type));
      if (!notices.some((n) => hooksFor(n).length)) return 0;
      const now = this.now();
      const giveUpAt = new Date(now.getTime() + WEBHOOK_RETRY_HOURS * HOUR_MS).toISOString();
      return this.db.transaction(async (tx) => {
        if (!(await claimInbox(tx, 'notifications', event))) return 0;
        let queued = 0;
        for (const n of notices) {
          const hooks = hooksFor(n);
          if (!hooks.length) continue;
          const eventId = webhookEventId(event.eventId, n.agentId, n.type);
          const body: WebhookBody = { id: eventId, type: n.type, createdAt: event.occurredAt, agentId: n.agentId, data: n.data };
          const raw = JSON.stringify(body);
          for (const h of hooks) {
            const ins = await tx.query(
              `INSERT INTO notifications.deliveries (id, webhook_id, agent_id, event_id, event_type, body, next_attempt_at, give_up_at, created_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7) ON CONFLICT (webhook_id, event_id) DO NOTHING`,
              [newId('whd'), h.id, n.agentId, eventId, n.type, raw, now.toISOString(), giveUpAt],
            );
            queued += ins.rowCount;
          }
        }
        return queued;
      });
    },

    /**
     * Claims what is due and starts each attempt on its own; returns the attempts it started without
     * waiting for them. Claims are one loop at a time (a kick during it asks for another round);
     * an attempt that ends pumps again, so its endpoint's next delivery goes at once.
     */
    pump(this: NotificationsThis): Promise<Promise<boolean>[]> {
      if (this.claiming) {
        this.claimAgain = true;
        return this.claiming;
      }
      const launched: Promise<boolean>[] = [];
      this.claiming = (async () => {
        try {
          do {
            this.claimAgain = false;
            for (;;) {
              const room = Math.min(BATCH, MAX_IN_FLIGHT - this.inFlight.size);
              if (room <= 0 || this.stopping) break;
              const claimed = await this.claimDue(room);
              for (const d of claimed) launched.push(this.launch(d));
              if (claimed.length < room) break;
            }
          } while (this.claimAgain && !this.stopping);
        } finally {
          this.claiming = null;
        }
        return launched;
      })();
      return this.claiming;
    },

    /**
     * Sends what is due and waits for those attempts and any already in flight (the sweep action and
     * shutdown wait; the event handler and the timer do not). Returns how many were delivered.
     */
    async kickSender(this: NotificationsThis): Promise<number> {
      const launched = await this.pump();
      const all = [...new Set([...launched, ...this.inFlight.values()])];
      const results = await Promise.allSettled(all);
      return results.filter((r) => r.status === 'fulfilled' && r.value).length;
    },

    /**
     * Due deliveries, at most one per webhook, of webhooks with no attempt in flight (here or, by its
     * lease, in another process) and not paused. The UPDATE re-checks each row, so two processes
     * never both claim one.
     */
    async claimDue(this: NotificationsThis, limit: number): Promise<ClaimedDelivery[]> {
      const now = this.now().toISOString();
      const r = await this.db.query<ClaimedDelivery>(
        `WITH candidates AS (
           SELECT DISTINCT ON (d.webhook_id) d.id, d.next_attempt_at
             FROM notifications.deliveries d JOIN notifications.webhooks w ON w.id = d.webhook_id
            WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.claimed_until IS NULL OR d.claimed_until < $1)
              AND w.paused_at IS NULL AND NOT (d.webhook_id = ANY($4::text[]))
              AND NOT EXISTS (SELECT 1 FROM notifications.deliveries x
                               WHERE x.webhook_id = d.webhook_id AND x.status = 'pending' AND x.claimed_until >= $1)
            ORDER BY d.webhook_id, d.next_attempt_at),
         picked AS (SELECT id FROM candidates ORDER BY next_attempt_at LIMIT $2)
         UPDATE notifications.deliveries d
            SET claimed_until = $1::timestamptz + make_interval(secs => $3), attempts = d.attempts + 1
           FROM notifications.webhooks w
          WHERE w.id = d.webhook_id AND d.id IN (SELECT id FROM picked)
            AND d.status = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until < $1)
          RETURNING d.id, d.webhook_id, d.body, d.event_id, d.attempts, d.give_up_at, w.url, w.secret, w.deleted_at`,
        [now, limit, LEASE_SECONDS, [...this.inFlight.keys()]],
      );
      return r.rows;
    },

    /** Starts one attempt; its endpoint is busy until it ends, then the sender looks for more. */
    launch(this: NotificationsThis, d: ClaimedDelivery): Promise<boolean> {
      const p = tracedAttempt(d, () => this.attempt(d))
        .catch((err: Error) => {
          this.logger.warn(`webhook delivery ${d.id} not recorded; retried after its lease`, err?.message);
          return false;
        })
        .finally(() => {
          this.inFlight.delete(d.webhook_id);
          if (!this.stopping) void this.pump().catch((err: Error) => this.logger.warn('webhook send failed; the sweeper retries', err.message));
        });
      this.inFlight.set(d.webhook_id, p);
      return p;
    },

    /** One POST and its outcome written back: delivered, retried later, or failed after 24 h. */
    async attempt(this: NotificationsThis, d: ClaimedDelivery): Promise<boolean> {
      let statusCode: number | null = null;
      let error: string | null;
      if (d.deleted_at) error = 'webhook deleted';
      else {
        try {
          // Resolved and checked at every attempt; the POST connects to the checked address.
          const target = await resolveWebhookTarget(d.url, this.allowPrivate());
          const t = Math.floor(Date.now() / 1000);
          const r = await postWebhook(target, d.body, {
            'market-event-id': d.event_id,
            'market-signature': signatureHeader(d.secret, d.body, t),
          });
          statusCode = r.statusCode;
          error = r.error ?? (statusCode !== null && statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}`);
        } catch (err) {
          error = err instanceof WebhookTargetError ? `refused: ${err.message}` : String((err as Error)?.message ?? err);
        }
      }
      const now = this.now();
      if (!error) {
        await this.db.query(
          `UPDATE notifications.deliveries SET status = 'delivered', delivered_at = $2, last_status_code = $3, last_error = NULL,
                  next_attempt_at = NULL, claimed_until = NULL WHERE id = $1`,
          [d.id, now.toISOString(), statusCode],
        );
        await this.db.query('UPDATE notifications.webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', [d.webhook_id]);
        return true;
      }
      // The endpoint's failing streak; failing for hours pauses it (its deliveries are kept, pending).
      const w = await this.db.query<{ paused_at: Date | null }>(
        `UPDATE notifications.webhooks SET failing_since = COALESCE(failing_since, $2::timestamptz),
                paused_at = CASE WHEN paused_at IS NULL AND COALESCE(failing_since, $2::timestamptz) <= $2::timestamptz - make_interval(hours => $3)
                                 THEN $2::timestamptz ELSE paused_at END
          WHERE id = $1 RETURNING paused_at`,
        [d.webhook_id, now.toISOString(), WEBHOOK_PAUSE_AFTER_HOURS],
      );
      const paused = !!w.rows[0]?.paused_at && d.deleted_at === null;
      const next = new Date(now.getTime() + retryDelaySeconds(d.attempts) * 1000);
      const giveUp = d.deleted_at !== null || (!paused && next > new Date(d.give_up_at));
      if (!giveUp && !paused) this.sweepSoon(next.getTime() - now.getTime());
      await this.db.query(
        `UPDATE notifications.deliveries SET status = $2, last_status_code = $3, last_error = $4, next_attempt_at = $5, claimed_until = NULL
          WHERE id = $1`,
        [d.id, giveUp ? 'failed' : 'pending', statusCode, (paused ? `${error} (webhook paused: call set_webhook with this url again to resume)` : error).slice(0, 500), giveUp ? null : next.toISOString()],
      );
      return false;
    },
  },

  async started(this: NotificationsThis) {
    const { config } = this;
    this.claiming = null;
    this.claimAgain = false;
    this.inFlight = new Map();
    this.stopping = false;
    this.timer = null;
    this.sweepSoon = () => undefined;
    this.relay = startRelay(this.broker, this.db, config.sweepIntervalMs);
    if (config.sweepIntervalMs > 0) {
      // Idle costs nothing: the sweep runs every second while it finds due deliveries, else its interval
      // doubles up to SWEEP_INTERVAL_MS. New deliveries are sent at once by the event handler; a failed
      // attempt arms the timer for its retry time (sweepSoon), so retries are not delayed by the backoff.
      const base = Math.min(config.sweepIntervalMs, 1000);
      let delay = base;
      let dueAt = 0;
      const arm = (ms: number) => {
        if (this.stopping) return;
        if (this.timer && Date.now() + ms >= dueAt) return;
        if (this.timer) clearTimeout(this.timer);
        dueAt = Date.now() + ms;
        this.timer = setTimeout(() => {
          this.timer = null;
          void this
            .pump()
            .then((launched) => (delay = launched.length || this.inFlight.size ? base : Math.min(config.sweepIntervalMs, delay * 2)))
            .catch((err: Error) => this.logger.warn('webhook sweep failed; retried next interval', err.message))
            .finally(() => arm(delay));
        }, ms);
        this.timer.unref();
      };
      this.sweepSoon = (ms: number) => {
        delay = base;
        arm(Math.max(base, ms));
      };
      arm(base);
    }
    // Deliveries left by a previous process (killed mid-way) are due now.
    void this.kickSender().catch(() => undefined);
  },

  async stopped(this: NotificationsThis) {
    if (this.timer) clearTimeout(this.timer);
    await this.relay?.stop();
    this.stopping = true;
    await this.claiming?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight.values()]);
  },
};

export default NotificationsService;
