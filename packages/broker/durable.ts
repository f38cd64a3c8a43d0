/**
 * Durable events ("channels") for the marketplace, replacing @moleculer/channels 0.1.8, whose NATS
 * adapter shares one in-flight budget between all replicas (a hung replica stalls the group),
 * gives up reconnecting after a few attempts, and races on consumer creation.
 *
 * Services keep the same surface: a `channels: { 'topic': { group, handler } }` key in their
 * schema, and `broker.sendToChannel(topic, payload)` (the outbox relay calls it).
 *
 * Distributed (TRANSPORTER=nats://…): one JetStream stream per namespace; one durable *pull*
 * consumer per (group, topic), shared by every replica of the group. Each replica pulls only as
 * many messages as its own in-flight budget allows, so a hung or dead replica delays only what it
 * holds, and that is redelivered to a live replica after a short ack wait (handlers in progress
 * keep their messages with `working()`). Explicit acks; a failing message is retried with backoff
 * and parked in a dead-letter stream after `maxRetries` deliveries. The connection reconnects for
 * ever; while it is down the process reports not-ready and logs at error level.
 *
 * Replicated (ADR 0036): streams get `replicas` copies (JETSTREAM_REPLICAS; default 3 on a JetStream cluster of
 * 3 or more servers, else 1), consumers follow their stream's count, and the stream-admin user raises the count
 * of streams created smaller (an upgraded deployment). Pulls are short and carry idle heartbeats, so a consumer
 * whose leader died asks again (reaching the new leader) within seconds, not after a 30 s expiry.
 *
 * Embedded (no TRANSPORTER): publish awaits every group's handler in-process and throws if one
 * fails, so the outbox relay only marks a row sent once every consumer handled it.
 */
import { hostname } from 'node:os';
import {
  AckPolicy,
  connect,
  ConsumerEvents,
  DeliverPolicy,
  headers as natsHeaders,
  RetentionPolicy,
  StorageType,
  type Consumer,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type StreamConfig,
  type StreamInfo,
} from 'nats';
import type { Logger, Service, ServiceBroker } from 'moleculer';
import { inboxPrefixFor, STREAM_ADMIN_SERVICE } from '../call-table/nats-auth';
import { currentRequestId, withRequestContext } from '../telemetry/context';
import type { ChannelSender, EventContext } from '../outbox';
import { extractTraceContext, injectTraceContext, SpanKind, tracingEnabled, withSpan } from '../telemetry/tracing';

/** The header carrying the gateway's request id with a durable event. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A durable event's handler. The transport hands over the decoded JSON; each handler declares its
 * topic's payload type (e.g. OutboxEvent<PurchaseCompleted>), so the parameter is bivariant (method
 * syntax, as React's EventHandler does): a typed handler fits, and an untyped one sees `unknown`.
 */
export type ChannelHandler = { handle(payload: unknown, raw?: unknown): unknown }['handle'];

/** What a service declares under `channels` in its schema. */
export interface ChannelDefinition {
  /** Consumer group; replicas of one group share the messages. Defaults to the service name. */
  group?: string;
  handler: ChannelHandler;
  /** Messages this replica handles at once for this channel (default: the transport's maxInFlight). */
  maxInFlight?: number;
}

export interface ChannelSubscription {
  topic: string;
  group: string;
  handler: ChannelHandler;
  maxInFlight?: number;
}

export interface DurableStatus {
  /** Connected (embedded: always true once started). */
  connected: boolean;
  /** Why it is not ready, for /readyz. */
  detail?: string;
  /**
   * Connected, but events cannot be published or consumed right now (no stream leader, streams missing,
   * pulls failing): /readyz shows it under `degraded` without taking the process out of service, since
   * writes keep working and their events wait in the outbox.
   */
  degraded?: string[];
}

export interface DurableTransport {
  /**
   * publish() runs the consumers in this process and resolves once they handled the event (embedded): a
   * writer awaits it so a call's effects are done when it answers. Otherwise publishing is left to the
   * outbox relay, off the write path.
   */
  readonly inline: boolean;
  setLogger(logger: Logger): void;
  connect(): Promise<void>;
  subscribe(sub: ChannelSubscription): Promise<void>;
  /** `headers`: the event's context (traceparent, x-request-id), beside the payload, not in it. */
  publish(topic: string, payload: unknown, headers?: Record<string, string>): Promise<void>;
  /** Called once every service's channels are subscribed. */
  startConsuming(): void;
  /** Stops taking new messages and waits for the ones in progress. */
  stopConsuming(): Promise<void>;
  close(): Promise<void>;
  status(): DurableStatus;
  /** Messages waiting per consumer group and topic (metrics); empty when not connected or embedded. */
  backlog?(): Promise<ConsumerBacklog[]>;
}

export interface ConsumerBacklog {
  group: string;
  topic: string;
  /** Not yet delivered to any replica of the group. */
  pending: number;
  /** Delivered and not yet acknowledged (in progress, or held by a hung replica). */
  ackPending: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** In-process delivery for the embedded mode (one process, no NATS). */
export class LocalDurableTransport implements DurableTransport {
  readonly inline = true;
  private readonly subs: ChannelSubscription[] = [];
  private consuming = false;

  setLogger(): void {}

  async connect(): Promise<void> {}

  async subscribe(sub: ChannelSubscription): Promise<void> {
    this.subs.push(sub);
  }

  startConsuming(): void {
    this.consuming = true;
  }

  async publish(topic: string, payload: unknown, headers: Record<string, string> = {}): Promise<void> {
    // Before every consumer is subscribed a message would reach nobody: the outbox keeps it and retries.
    if (!this.consuming) throw new Error('durable events: consumers are not subscribed yet');
    // One handler per group, like a queue group: replicas of one service share the work.
    const byGroup = new Map<string, ChannelSubscription>();
    for (const sub of this.subs) if (sub.topic === topic && !byGroup.has(sub.group)) byGroup.set(sub.group, sub);
    const failures: unknown[] = [];
    for (const sub of byGroup.values()) {
      try {
        await sub.handler(payload, { headers });
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length) throw failures[0];
  }

  async stopConsuming(): Promise<void> {
    this.consuming = false;
    this.subs.length = 0;
  }

  async close(): Promise<void> {}

  status(): DurableStatus {
    return { connected: true };
  }
}

export interface JetStreamOptions {
  url: string;
  namespace: string;
  /** The service's bus credentials (NATS_USER / NATS_PASSWORD); replies then come to _INBOX_<user>. */
  user?: string | null;
  pass?: string | null;
  /** Messages one replica handles at once per channel (its own budget, not the group's). */
  maxInFlight?: number;
  /** Unacknowledged messages of a dead or hung replica go back to the group after this long. */
  ackWaitMs?: number;
  /** Deliveries of a failing message before it is parked in the dead-letter stream. */
  maxRetries?: number;
  /**
   * How long one pull waits for messages (nats.js needs at least 1000). A pull is answered as soon as a
   * message arrives, so its length decides how often an idle consumer asks again (issue #22: 2 s pulls of
   * ~20 consumers were a large part of an idle cluster's CPU) — and, with the heartbeat below, how soon a
   * pull left on a dead consumer leader is replaced. Stop and reconnect end the pull in progress at once.
   */
  fetchExpiresMs?: number;
  /**
   * The server sends an idle heartbeat this often while a pull waits; two missed end the pull and a new one
   * goes to the consumer's current leader (a node loss pauses consumption for about 2–3 of these, overlapping
   * the election). 0.5 s: a node loss's pause stays under 10 s on a loaded 2-core machine (measured 4.8–7.7 s;
   * at 1 s it reached 9.8 s, at 1.5 s 9.7 s). The price is idle CPU: every waiting pull costs a message per
   * heartbeat, and the ~20 consumers of an idle cluster doubled its CPU (85 against 44 ms/s, docs/performance.md).
   */
  idleHeartbeatMs?: number;
  /**
   * Stream copies (JETSTREAM_REPLICAS). Unset: 3 when the JetStream cluster has 3 or more servers, else 1.
   * Consumers follow their stream's count.
   */
  replicas?: number | null;
  /**
   * This user may update the two streams (packages/call-table/nats-auth.ts: STREAM_ADMIN_SERVICE): it raises
   * a stream created with fewer replicas. Default: true without bus auth (no user), else false.
   */
  raiseReplicas?: boolean;
  /** How long the stream keeps messages. */
  maxAgeMs?: number;
  /** A handler still running after this long stops holding its message (it is redelivered). */
  handlerMaxMs?: number;
  /** At stop, how long handlers in progress may take before the connection closes anyway. */
  shutdownTimeoutMs?: number;
}

/** JetStream names allow neither dots nor wildcards. */
export function jetStreamName(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

const ms = (n: number) => n * 1_000_000; // JetStream durations are nanoseconds

/**
 * Stream copies when JETSTREAM_REPLICAS is unset: 3 on a JetStream cluster of 3 or more servers (the INFO a
 * server sends lists every server's client URL), else 1. A cluster that hides its URLs (no_advertise) needs the setting.
 */
export function defaultReplicas(info: { cluster?: string; connect_urls?: string[] } | undefined): number {
  if (!info?.cluster) return 1;
  return new Set(info.connect_urls ?? []).size >= 3 ? 3 : 1;
}

/**
 * Something that fails for a while: one warn line when it starts and one when it ends (not one per
 * attempt), and its detail meanwhile for /readyz's `degraded`.
 */
class Outage {
  private since: number | null = null;
  private last = '';
  constructor(
    private readonly what: string,
    private readonly log: () => Logger | Console,
  ) {}

  fail(detail: string): void {
    this.last = detail;
    if (this.since !== null) return;
    this.since = Date.now();
    this.log().warn(`durable events: ${this.what} failing: ${detail}`);
  }

  ok(): void {
    if (this.since === null) return;
    const seconds = ((Date.now() - this.since) / 1000).toFixed(1);
    this.since = null;
    this.log().warn(`durable events: ${this.what} working again after ${seconds} s`);
  }

  /** The detail while failing, else null. */
  status(): string | null {
    return this.since === null ? null : `${this.what} failing for ${Math.round((Date.now() - this.since) / 1000)} s: ${this.last}`;
  }
}

interface RunningSub extends ChannelSubscription {
  durable: string;
  inFlight: Set<Promise<void>>;
  loop?: Promise<void>;
  /** The pull in progress (stopped at stop and on reconnect, so neither waits for its expiry). */
  pull?: { stop(): unknown } | null;
}

export class JetStreamDurableTransport implements DurableTransport {
  readonly inline = false;
  readonly streamName: string;
  readonly deadLetterStream: string;
  private readonly subjectPrefix: string;
  private readonly opts: Required<Omit<JetStreamOptions, 'user' | 'pass' | 'replicas'>> & Pick<JetStreamOptions, 'user' | 'pass' | 'replicas'>;
  private nc: NatsConnection | null = null;
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;
  private connected = false;
  private downSince: number | null = null;
  private downLogTimer: NodeJS.Timeout | null = null;
  private streamsReady: Promise<void> | null = null;
  private stopping = false;
  private readonly subs: RunningSub[] = [];
  private logger: Logger | Console = console;
  private wakeups: Array<() => void> = [];
  private stopSignal!: () => void;
  private stopped: Promise<void> = this.resetStop();
  /** The stream copies wanted (set at connect). */
  private replicas = 1;
  private readonly publishing = new Outage('publishing', () => this.logger);
  private readonly consuming = new Outage('consuming', () => this.logger);
  /** The subscriptions whose pulls fail right now (the consuming outage lasts while any does). */
  private readonly failingPulls = new Map<string, string>();

  private resetStop(): Promise<void> {
    return new Promise<void>((r) => (this.stopSignal = r));
  }

  constructor(opts: JetStreamOptions) {
    this.opts = {
      maxInFlight: 10,
      ackWaitMs: 5_000,
      maxRetries: 100,
      fetchExpiresMs: 10_000,
      idleHeartbeatMs: 500,
      raiseReplicas: !opts.user,
      maxAgeMs: 7 * 24 * 3600_000,
      shutdownTimeoutMs: 10_000,
      handlerMaxMs: 60_000,
      ...opts,
    };
    this.opts.fetchExpiresMs = Math.max(1_000, this.opts.fetchExpiresMs);
    // The server wants the heartbeat well inside the pull's expiry.
    this.opts.idleHeartbeatMs = Math.max(500, Math.min(this.opts.idleHeartbeatMs, Math.floor(this.opts.fetchExpiresMs / 2)));
    const ns = jetStreamName(opts.namespace);
    this.streamName = `${ns}_EVENTS`;
    this.deadLetterStream = `${ns}_DEAD_LETTER`;
    this.subjectPrefix = `${ns}.events`;
  }

  setLogger(logger: Logger): void {
    this.logger = logger;
  }

  /** The stream copies this process creates and (as the stream admin) raises streams to. */
  get streamReplicas(): number {
    return this.replicas;
  }

  status(): DurableStatus {
    if (this.connected) {
      const degraded = [this.publishing.status(), this.consuming.status()].filter((d): d is string => d !== null);
      return degraded.length ? { connected: true, degraded } : { connected: true };
    }
    const since = this.downSince ? ` for ${Math.round((Date.now() - this.downSince) / 1000)} s` : '';
    return { connected: false, detail: `JetStream connection to ${this.opts.url} is down${since}` };
  }

  async connect(): Promise<void> {
    if (this.nc) return;
    this.stopping = false;
    this.stopped = this.resetStop();
    this.nc = await connect({
      servers: this.opts.url.split(',').map((u) => u.trim()),
      name: `durable-events ${hostname()} ${process.pid}`,
      // Per service: a user, and an inbox prefix its permissions allow (packages/call-table/nats-auth.ts).
      ...(this.opts.user && this.opts.pass ? { user: this.opts.user, pass: this.opts.pass, inboxPrefix: inboxPrefixFor(this.opts.user) } : {}),
      // Never give up: when NATS comes back, whatever is queued drains without restarting anything.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
      pingInterval: 5_000,
      maxPingOut: 2,
    });
    this.connected = true;
    this.js = this.nc.jetstream();
    // Lookups fail fast during an election (the loops retry) rather than hold a consumer for 5 s each.
    this.jsm = await this.nc.jetstreamManager({ timeout: 3_000 });
    this.replicas = this.opts.replicas ?? defaultReplicas(this.nc.info);
    void this.watchStatus(this.nc);
    await this.ensureStreams();
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' && this.connected) {
        this.connected = false;
        this.downSince = Date.now();
        this.logger.error(`durable events: lost the JetStream connection (${this.opts.url}); reconnecting, events wait in the outbox`);
        this.downLogTimer = setInterval(() => this.logger.error(`durable events: ${this.status().detail}; still reconnecting`), 15_000);
        this.downLogTimer.unref();
      } else if (s.type === 'reconnect') {
        const seconds = this.downSince ? Math.round((Date.now() - this.downSince) / 1000) : 0;
        if (this.downLogTimer) clearInterval(this.downLogTimer);
        this.downLogTimer = null;
        this.downSince = null;
        this.connected = true;
        // The server may have come back empty (no persistent volume): make sure the streams exist again —
        // once, in the background; publishes do not wait for it (one that fails is retried by the outbox).
        this.recheckStreams();
        this.logger.warn(`durable events: JetStream connection back after ${seconds} s`);
        // A pull issued before the outage may be gone from a restarted server: ask again now.
        this.endPulls();
        this.wake();
      }
    }
  }

  private endPulls(): void {
    for (const sub of this.subs) {
      try {
        sub.pull?.stop();
      } catch {
        // already over
      }
    }
  }

  private wake(): void {
    const w = this.wakeups;
    this.wakeups = [];
    for (const f of w) f();
  }

  /** Resolves when connected again, or after maxMs, whichever first. */
  private waitForConnection(maxMs: number): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, maxMs);
      this.wakeups.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /** Checks the streams again in the background (after a reconnect, or a publish nobody answered). */
  private recheckStreams(): void {
    if (this.recheckPending) return;
    this.recheckPending = true;
    this.streamsReady = null;
    this.ensureStreams()
      .catch((err) => this.logger.debug(`durable events: stream check failed: ${(err as Error)?.message ?? err}`))
      .finally(() => {
        // At most one check every few seconds, however many publishes fail meanwhile.
        setTimeout(() => (this.recheckPending = false), 5_000).unref();
      });
  }

  private recheckPending = false;

  /** Creates (or finds) the stream and the dead-letter stream, with the wanted copies; safe when replicas race. */
  private ensureStreams(): Promise<void> {
    if (!this.streamsReady) {
      this.streamsReady = (async () => {
        await this.ensureStream(this.streamName, {
          subjects: [`${this.subjectPrefix}.>`],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          max_age: ms(this.opts.maxAgeMs),
          duplicate_window: ms(120_000),
        });
        await this.ensureStream(this.deadLetterStream, {
          subjects: [`${jetStreamName(this.opts.namespace)}.dead.>`],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          max_age: ms(30 * 24 * 3600_000),
        });
      })();
      this.streamsReady.catch(() => (this.streamsReady = null));
    }
    return this.streamsReady;
  }

  private async ensureStream(name: string, config: Partial<StreamConfig>): Promise<void> {
    let found: StreamInfo | null = null;
    await this.ensure(
      async () => (found = await this.jsm!.streams.info(name)),
      () => this.jsm!.streams.add({ ...config, name, num_replicas: this.replicas }),
    );
    const info = found as StreamInfo | null;
    const has = info?.config.num_replicas ?? this.replicas;
    if (!info || has >= this.replicas) return;
    if (!this.opts.raiseReplicas) {
      this.logger.warn(`durable events: stream ${name} has ${has} replica(s), ${this.replicas} wanted; the stream admin (${STREAM_ADMIN_SERVICE}) raises it at its start`);
      return;
    }
    // Only the count changes (consumers follow their stream's); never lowered. A refusal (too few servers)
    // leaves the stream as it is: events still flow, on fewer copies, and the next start tries again.
    try {
      await this.jsm!.streams.update(name, { ...info.config, num_replicas: this.replicas });
      this.logger.warn(`durable events: stream ${name} raised from ${has} to ${this.replicas} replicas`);
    } catch (err) {
      this.logger.error(`durable events: could not raise stream ${name} from ${has} to ${this.replicas} replicas: ${(err as Error)?.message ?? err}`);
    }
  }

  /**
   * Look, then create; if creating fails because another replica created it at the same instant
   * (or with an older config), look again. A few rounds with jitter settle any race.
   */
  private async ensure(find: () => Promise<unknown>, create: () => Promise<unknown>): Promise<void> {
    let lastErr: unknown;
    for (let attempt = 0; attempt < 8; attempt++) {
      try {
        await find();
        return;
      } catch {
        // not there (yet): create it
      }
      try {
        await create();
        return;
      } catch (err) {
        lastErr = err;
        await sleep(50 + Math.random() * 150 * (attempt + 1));
      }
    }
    throw lastErr;
  }

  private consumerConfig(sub: RunningSub): Partial<ConsumerConfig> {
    return {
      durable_name: sub.durable,
      ack_policy: AckPolicy.Explicit,
      // A group created after messages were published still gets them (consumers are idempotent).
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${this.subjectPrefix}.${sub.topic}`,
      ack_wait: ms(this.opts.ackWaitMs),
      // Redelivery is bounded by this layer (it dead-letters after maxRetries), not by the server.
      max_deliver: -1,
      // The group's total; each replica limits itself to its own maxInFlight.
      max_ack_pending: 10_000,
    };
  }

  private async ensureConsumer(sub: RunningSub): Promise<void> {
    await this.ensureStreams();
    await this.ensure(
      () => this.jsm!.consumers.info(this.streamName, sub.durable),
      () => this.jsm!.consumers.add(this.streamName, this.consumerConfig(sub)),
    );
  }

  /**
   * The consume loop's consumer, looked up again (one attempt: the loop retries) and created only if it is
   * gone — without waiting on a background stream check, which an election can hold for several lookups.
   */
  private async consumerAgain(sub: RunningSub): Promise<Consumer> {
    try {
      return await this.js!.consumers.get(this.streamName, sub.durable);
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      if (!/not found/i.test(message)) throw err;
      if (/stream not found/i.test(message)) await this.ensureStreams();
      // Another replica may create it at the same instant: look again either way.
      await this.jsm!.consumers.add(this.streamName, this.consumerConfig(sub)).catch(() => undefined);
      return this.js!.consumers.get(this.streamName, sub.durable);
    }
  }

  async subscribe(sub: ChannelSubscription): Promise<void> {
    if (!this.nc) throw new Error('durable events: subscribe before connect');
    const running: RunningSub = { ...sub, durable: jetStreamName(`${sub.group}--${sub.topic}`), inFlight: new Set() };
    await this.ensureConsumer(running);
    this.subs.push(running);
    running.loop = this.consumeLoop(running);
  }

  startConsuming(): void {}

  async publish(topic: string, payload: unknown, headers: Record<string, string> = {}): Promise<void> {
    if (!this.js || !this.connected) throw new Error(`durable events: ${this.status().detail ?? 'not connected'}`);
    const eventId = (payload as { eventId?: unknown })?.eventId;
    const h = natsHeaders();
    h.set('content-type', 'application/json');
    for (const [name, value] of Object.entries(headers)) h.set(name, value);
    try {
      await this.js.publish(`${this.subjectPrefix}.${topic}`, new TextEncoder().encode(JSON.stringify(payload)), {
        headers: h,
        // The outbox may publish a row twice (crash between publish and mark): JetStream drops the copy.
        ...(typeof eventId === 'string' ? { msgID: eventId } : {}),
        // Short: a publish caught in a leader election is tried again (by the outbox) rather than waited on.
        timeout: 3_000,
      });
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      this.publishing.fail(message);
      // Nobody answered: no stream leader yet (it comes by itself), or the stream is gone (check once, in the background).
      if (/no responders|503/i.test(message)) this.recheckStreams();
      throw err;
    }
    this.publishing.ok();
  }

  async backlog(): Promise<ConsumerBacklog[]> {
    if (!this.jsm || !this.connected) return [];
    const out: ConsumerBacklog[] = [];
    for (const sub of this.subs) {
      try {
        const info = await this.jsm.consumers.info(this.streamName, sub.durable);
        out.push({ group: sub.group, topic: sub.topic, pending: info.num_pending, ackPending: info.num_ack_pending });
      } catch {
        // not created yet, or NATS went away meanwhile: no figure rather than a wrong one
      }
    }
    return out;
  }

  private async consumeLoop(sub: RunningSub): Promise<void> {
    const max = Math.max(1, sub.maxInFlight ?? this.opts.maxInFlight);
    let consumer: Consumer | null = null;
    let failures = 0;
    while (!this.stopping) {
      try {
        if (!this.connected) {
          await this.waitForConnection(5_000);
          continue;
        }
        consumer ??= await this.consumerAgain(sub);
        const room = max - sub.inFlight.size;
        if (room <= 0) {
          // Full: wait for one to finish (or for stop; a handler may hang).
          await Promise.race([...sub.inFlight, this.stopped]);
          continue;
        }
        const batch = await consumer.fetch({ max_messages: room, expires: this.opts.fetchExpiresMs, idle_heartbeat: this.opts.idleHeartbeatMs });
        sub.pull = batch;
        if (this.stopping) void batch.stop();
        // No heartbeat: the pull waits on a consumer leader that is gone (node lost). End it; the next one
        // reaches the new leader. The guard covers a fetch that outlives its expiry anyway.
        let silent = false;
        const end = () => {
          silent = true;
          void batch.stop();
        };
        void (async () => {
          for await (const s of await batch.status()) if (s.type === ConsumerEvents.HeartbeatsMissed) return end();
        })().catch(() => undefined);
        const guard = setTimeout(end, this.opts.fetchExpiresMs + 3 * this.opts.idleHeartbeatMs);
        // A pull still heartbeating after three intervals reaches a live leader: consumption works again
        // (an idle consumer need not wait for its pull's expiry to say so).
        const alive = setTimeout(() => silent || this.pullWorks(sub), 3 * this.opts.idleHeartbeatMs);
        try {
          for await (const msg of batch) {
            if (this.stopping) break; // not acked: redelivered to another replica
            this.pullWorks(sub);
            this.dispatch(sub, msg);
          }
        } finally {
          clearTimeout(guard);
          clearTimeout(alive);
          sub.pull = null;
        }
        if (silent && !this.stopping && this.connected) throw new Error(`no heartbeat from the consumer's leader in ${2 * this.opts.idleHeartbeatMs} ms`);
        failures = 0;
        this.pullWorks(sub);
      } catch (err) {
        if (this.stopping) break;
        failures++;
        const message = (err as Error)?.message ?? String(err);
        // A consumer that vanished (NATS came back without its data) is created again; otherwise the same
        // consumer is pulled again at once (its new leader answers once elected).
        if (/not found|deleted/i.test(message)) consumer = null;
        this.logger.debug(`durable events: ${sub.group}/${sub.topic} pull failed: ${message}`);
        if (this.connected) this.pullFails(sub, message);
        await sleep(Math.min(100 * failures, 1_000));
      }
    }
  }

  private pullFails(sub: RunningSub, message: string): void {
    this.failingPulls.set(sub.durable, message);
    this.consuming.fail(`${this.failingPulls.size} consumer(s), e.g. ${sub.group}/${sub.topic}: ${message}`);
  }

  private pullWorks(sub: RunningSub): void {
    if (!this.failingPulls.delete(sub.durable)) return;
    if (this.failingPulls.size === 0) this.consuming.ok();
  }

  private dispatch(sub: RunningSub, msg: JsMsg): void {
    const run = (async () => {
      // Keep the message while the handler runs (a slow database is not a dead replica).
      // …but not for ever: a handler stuck past handlerMaxMs lets the message go to another replica.
      const started = Date.now();
      const keepAlive = setInterval(() => {
        if (this.nc && !this.nc.isClosed() && Date.now() - started < this.opts.handlerMaxMs) msg.working();
      }, Math.max(200, Math.floor(this.opts.ackWaitMs / 3)));
      keepAlive.unref();
      try {
        let payload: unknown;
        try {
          payload = JSON.parse(new TextDecoder().decode(msg.data));
        } catch (err) {
          await this.deadLetter(sub, msg, err);
          return;
        }
        try {
          await sub.handler(payload, msg);
          msg.ack();
        } catch (err) {
          const deliveries = msg.info.redeliveryCount;
          if (deliveries >= this.opts.maxRetries) {
            await this.deadLetter(sub, msg, err);
          } else {
            const delay = Math.min(100 * 2 ** Math.min(deliveries - 1, 10), 10_000);
            this.logger.warn(
              `durable events: ${sub.group}/${sub.topic} failed (delivery ${deliveries}/${this.opts.maxRetries}), retrying in ${delay} ms: ${(err as Error)?.message ?? err}`,
            );
            msg.nak(delay);
          }
        }
      } finally {
        clearInterval(keepAlive);
      }
    })().catch((err) => this.logger.error(`durable events: ${sub.group}/${sub.topic} dispatch error`, err));
    sub.inFlight.add(run);
    void run.finally(() => sub.inFlight.delete(run));
  }

  /** Parks a message that keeps failing in the dead-letter stream, then stops its redelivery. */
  private async deadLetter(sub: RunningSub, msg: JsMsg, err: unknown): Promise<void> {
    const reason = String((err as Error)?.message ?? err).slice(0, 500);
    this.logger.error(`durable events: ${sub.group}/${sub.topic} message ${msg.seq} dead-lettered after ${msg.info.redeliveryCount} deliveries: ${reason}`);
    try {
      const h = natsHeaders();
      h.set('x-topic', sub.topic);
      h.set('x-group', sub.group);
      h.set('x-stream-seq', String(msg.seq));
      h.set('x-error', reason.replace(/[\r\n]+/g, ' '));
      await this.js!.publish(`${jetStreamName(this.opts.namespace)}.dead.${sub.topic}`, msg.data, { headers: h, timeout: 5_000 });
      msg.term(reason);
    } catch (dlqErr) {
      // Not parked: leave it for redelivery rather than lose it.
      this.logger.error(`durable events: could not dead-letter ${sub.topic} ${msg.seq}: ${(dlqErr as Error)?.message ?? dlqErr}`);
      msg.nak(5_000);
    }
  }

  async stopConsuming(): Promise<void> {
    this.stopping = true;
    this.stopSignal();
    this.wake();
    this.endPulls();
    await Promise.all(this.subs.map((s) => s.loop?.catch(() => undefined)));
    // Handlers in progress finish first, within a bound: what they leave unacked is redelivered.
    const inFlight = Promise.all(this.subs.flatMap((s) => [...s.inFlight]));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([inFlight, new Promise((r) => (timer = setTimeout(r, this.opts.shutdownTimeoutMs)))]);
    clearTimeout(timer);
    this.subs.length = 0;
  }

  async close(): Promise<void> {
    if (!this.stopping) await this.stopConsuming();
    if (this.downLogTimer) clearInterval(this.downLogTimer);
    const nc = this.nc;
    this.nc = null;
    this.js = null;
    this.jsm = null;
    this.connected = false;
    this.streamsReady = null;
    if (nc) await nc.drain().catch(() => nc.close());
  }
}

/** A message's headers as a plain object: JetStream's MsgHdrs, or the embedded transport's object. */
function headersOf(raw: unknown): Record<string, string> {
  const h = (raw as { headers?: unknown } | undefined)?.headers;
  if (!h) return {};
  if (typeof (h as { get?: unknown }).get === 'function') {
    const out: Record<string, string> = {};
    for (const name of [REQUEST_ID_HEADER, 'traceparent', 'tracestate']) {
      const v = (h as { get(k: string): string }).get(name);
      if (v) out[name] = v;
    }
    return out;
  }
  return h as Record<string, string>;
}

/**
 * Publishes with the current request's context in the headers — its request id, and the traceparent
 * of a PRODUCER span — so the consumer's log lines and spans join the same request and trace.
 */
function publishInContext(transport: DurableTransport, topic: string, payload: unknown, context?: EventContext): Promise<void> {
  // The outbox passes the context the event was written in; a direct publish uses the current one.
  const requestId = context ? context.requestId : currentRequestId();
  const run = () => {
    const headers: Record<string, string> = {};
    if (requestId) headers[REQUEST_ID_HEADER] = requestId;
    injectTraceContext(headers);
    return transport.publish(topic, payload, headers);
  };
  if (!tracingEnabled()) return run();
  return withSpan(`publish ${topic}`, {
    kind: SpanKind.PRODUCER,
    parent: context ? extractTraceContext(context as Record<string, unknown>) : undefined,
    attributes: { 'messaging.system': 'nats', 'messaging.destination.name': topic },
  }, run);
}

/** The handler runs in the publisher's request, under a CONSUMER span that continues the publisher's trace. */
function consumeInContext(topic: string, group: string, handler: ChannelHandler, logger: () => Logger | null): ChannelHandler {
  return (payload, raw) => {
    const headers = headersOf(raw);
    const run = () =>
      withRequestContext({ requestId: headers[REQUEST_ID_HEADER] }, async () => {
        const started = Date.now();
        const result = await handler(payload, raw);
        // Inside the request's context: the line carries the publisher's requestId (and traceId).
        logger()?.debug({ topic, group, eventId: (payload as { eventId?: unknown })?.eventId, ms: Date.now() - started }, `durable event ${topic} handled by ${group}`);
        return result;
      });
    if (!tracingEnabled()) return run();
    return withSpan(`consume ${topic}`, {
      kind: SpanKind.CONSUMER,
      parent: extractTraceContext(headers),
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': topic, 'messaging.consumer.group.name': group },
    }, run);
  };
}

/** Each broker's durable-event transport (also on the broker as `durableEvents`, for the outbox relay). */
const transports = new WeakMap<ServiceBroker, DurableTransport>();

/**
 * The Moleculer middleware: reads each service's `channels`, adds `broker.sendToChannel`, and
 * ties the transport to the broker's lifecycle (connect before services start so their outbox
 * relays can publish; subscribe once all are started; stop consuming before services stop).
 */
export function DurableEventsMiddleware(transport: DurableTransport) {
  const subs: ChannelSubscription[] = [];
  let started = false;
  let logger: Logger | null = null;
  return {
    name: 'DurableEvents',
    created(broker: ServiceBroker) {
      logger = broker.getLogger('durable-events');
      transport.setLogger(logger);
      transports.set(broker, transport);
      Object.assign(broker, {
        sendToChannel: (topic: string, payload: unknown, context?: EventContext) => publishInContext(transport, topic, payload, context),
        durableEvents: transport,
      } satisfies ChannelSender & { durableEvents: DurableTransport });
    },
    async serviceCreated(svc: Service) {
      const channels = (svc.schema as { channels?: Record<string, ChannelDefinition> } | undefined)?.channels ?? {};
      for (const [topic, def] of Object.entries(channels)) {
        const sub: ChannelSubscription = {
          topic,
          group: def.group ?? svc.fullName,
          handler: consumeInContext(topic, def.group ?? svc.fullName, def.handler.bind(svc), () => logger),
          maxInFlight: def.maxInFlight,
        };
        subs.push(sub);
        if (started) await transport.subscribe(sub);
      }
    },
    async starting() {
      await transport.connect();
    },
    async started() {
      for (const sub of subs) await transport.subscribe(sub);
      transport.startConsuming();
      started = true;
    },
    async stopping() {
      started = false;
      await transport.stopConsuming();
    },
    async stopped() {
      await transport.close();
    },
  };
}

/** The durable-event transport of a broker (for readiness checks). */
export function durableEventsOf(broker: ServiceBroker): DurableTransport | null {
  return transports.get(broker) ?? null;
}
