/**
 * Moleculer's NATS transporter with per-service credentials and the call table's permissions
 * (packages/call-table/nats-auth.ts generates the server's side of them):
 * - connects as NATS_USER with NATS_PASSWORD and a per-user inbox prefix;
 * - subscribes only to the subjects its user may (a service that calls nobody does not listen to
 *   other nodes' INFO, so it never discovers their actions); a subscription the server refuses
 *   anyway is logged, never passed to Moleculer as a message;
 * - refuses, before it reaches the bus, a request the caller's row of the call table does not allow;
 * - and when the server refuses a publish (its permissions say no), rejects the pending request(s)
 *   for that subject at once with BusPermissionError and logs it at error level, instead of letting
 *   the caller wait for its request timeout.
 */
import { Errors, Transporters, type LoggerInstance, type ServiceBroker } from 'moleculer';
import type { NatsConnection, Subscription } from 'nats';
import { inboxPrefixFor, permissionsFor } from '../call-table/nats-auth';
import { LAYERS, type ServiceName } from '../call-table';

/**
 * A call waiting for its answer, as Moleculer's transit keeps it. Its typings say `action: string`;
 * at run time it is the action's definition (transit.js stores ctx.action), hence `action.name`.
 */
interface PendingCall {
  action?: { name?: string } | null;
  nodeID?: string;
  reject(err: Error): void;
}

/** The part of Moleculer's transit that rejects pending calls. */
interface PendingCalls {
  pendingRequests?: Map<string, PendingCall>;
  removePendingRequest(id: string): void;
}

/** A call the bus (or the call table it is generated from) does not allow this service to make. Not retryable. */
export class BusPermissionError extends Errors.MoleculerError {
  constructor(user: string, subject: string, action: string | null, source: 'server' | 'call-table') {
    const what = action ? `call ${action}` : `publish to ${subject}`;
    const why =
      source === 'server'
        ? `the NATS server refused "${user}" to publish to ${subject} (permissions generated from the call table)`
        : `the call table does not let "${user}" publish to ${subject}`;
    super(`Bus permission denied: ${user} may not ${what}: ${why}`, 403, 'BUS_PERMISSION_DENIED', { user, subject, action, source });
  }
}

/** NATS subject matching with * (one token) and > (one or more trailing tokens). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

export interface AuthNatsOptions {
  /** TRANSPORTER: nats://host:port[,nats://…]. */
  url: string;
  user: string;
  pass: string;
  namespace: string;
  /** Refuse a call the call table does not allow before it reaches the bus (default true). */
  precheck?: boolean;
}

/**
 * Moleculer's NATS transporter as this subclass uses it: its typings declare no NATS class members
 * (client, logger, broker, prefix, subscriptions), so they are written out here.
 */
interface NatsTransporterBase {
  /** Set once connected; subscriptions are made only then. */
  client: NatsConnection;
  logger: LoggerInstance;
  broker: ServiceBroker;
  prefix: string;
  subscriptions: Subscription[];
  connect(): Promise<void>;
  getTopicName(cmd: string, nodeID?: string): string;
  receive(cmd: string, data: Buffer): unknown;
  send(topic: string, data: Buffer, meta: object): Promise<void>;
}

const NatsTransporter = Transporters.NATS as unknown as new (opts: Record<string, unknown>) => NatsTransporterBase;

export class AuthNatsTransporter extends NatsTransporter {
  private readonly user: string;
  private readonly allow: { publish: string[]; subscribe: string[] } | null;
  readonly precheck: boolean;

  constructor(opts: AuthNatsOptions) {
    const servers = opts.url.split(',').map((u) => u.trim()).filter(Boolean);
    // Not `url`: Moleculer's transporter would overwrite user/pass with the URL's (empty) ones.
    super({ servers, user: opts.user, pass: opts.pass, inboxPrefix: inboxPrefixFor(opts.user), maxReconnectAttempts: -1 });
    this.user = opts.user;
    this.allow = (LAYERS as readonly string[]).includes(opts.user) ? permissionsFor(opts.user as ServiceName, opts.namespace) : null;
    this.precheck = opts.precheck !== false;
  }

  /** Subjects already checked: a process publishes to a few dozen (REQ/RES.<node>, EVENT, INFO…), every call. */
  private readonly publishable = new Map<string, boolean>();

  private mayPublish(subject: string): boolean {
    if (!this.allow) return true;
    let ok = this.publishable.get(subject);
    if (ok === undefined) {
      ok = this.allow.publish.some((p) => subjectMatches(p, subject));
      // Node ids change as replicas restart: bounded, emptied rather than grown.
      if (this.publishable.size >= 1_000) this.publishable.clear();
      this.publishable.set(subject, ok);
    }
    return ok;
  }

  private maySubscribe(subject: string): boolean {
    return !this.allow || this.allow.subscribe.some((p) => subjectMatches(p, subject));
  }

  /** Wraps Moleculer's handler: a subscription the server closes with an error is not a message. */
  private handler(cmd: string, subject: string) {
    return (err: Error | null, msg: { data?: Uint8Array }) => {
      if (err || !msg?.data) {
        this.logger.error(`bus: the NATS server refused ${this.user}'s subscription to ${subject}: ${err?.message ?? 'closed'}`);
        return;
      }
      this.receive(cmd, Buffer.from(msg.data));
    };
  }

  override async connect(): Promise<void> {
    await super.connect();
    void this.watchPermissions();
  }

  subscribe(cmd: string, nodeID?: string): Promise<void> {
    const t = this.getTopicName(cmd, nodeID);
    if (!this.maySubscribe(t)) {
      this.logger.debug(`bus: ${this.user} does not listen to ${t} (not in its permissions)`);
      return Promise.resolve();
    }
    this.client.subscribe(t, { callback: this.handler(cmd, t) });
    return Promise.resolve();
  }

  // With disableBalancer (not how createBroker runs) Moleculer would subscribe REQB.<action> / EVENTB.<group>.<event>
  // queue groups; the generated permissions allow neither, so these only keep such a broker from subscribing.
  subscribeBalancedRequest(action: string): void {
    const topic = `${this.prefix}.REQB.${action}`;
    if (!this.maySubscribe(topic)) return;
    this.subscriptions.push(this.client.subscribe(topic, { queue: action, callback: this.handler('REQ', topic) }));
  }

  subscribeBalancedEvent(event: string, group: string): void {
    const topic = `${this.prefix}.EVENTB.${group}.${event}`.replace(/\*\*.*$/g, '>');
    if (!this.maySubscribe(topic)) return;
    this.subscriptions.push(this.client.subscribe(topic, { queue: group, callback: this.handler('EVENT', topic) }));
  }

  override send(topic: string, data: Buffer, meta: { packet?: { type?: string; payload?: { id?: string; action?: string } } }): Promise<void> {
    if (this.precheck && !this.mayPublish(topic)) {
      const packet = meta?.packet;
      if (packet?.type === 'REQ' && packet.payload?.id) {
        this.rejectPending(topic, 'call-table', packet.payload.id);
      } else {
        this.logger.debug(`bus: ${this.user} does not publish ${packet?.type ?? ''} to ${topic} (not in its permissions)`);
      }
      return Promise.resolve();
    }
    return super.send(topic, data, meta);
  }

  /**
   * Rejects the pending request(s) the refused subject carried: by id, or every one sent to that node
   * (REQ.<nodeID>: the server refuses per callee service, so all of them were refused) or, for a
   * REQB.<action> subject, to that action. Each error names its call's action.
   */
  private rejectPending(subject: string, source: 'server' | 'call-table', id?: string): void {
    const transit = this.broker.transit as unknown as PendingCalls | undefined;
    const pending = transit?.pendingRequests ?? new Map<string, PendingCall>();
    const reqb = `${this.prefix}.REQB.`;
    const req = `${this.prefix}.REQ.`;
    const actions = new Set<string>();
    for (const [reqId, r] of [...pending.entries()]) {
      const match =
        id !== undefined
          ? reqId === id
          : (subject.startsWith(reqb) && r.action?.name === subject.slice(reqb.length)) || (subject.startsWith(req) && r.nodeID === subject.slice(req.length));
      if (!match) continue;
      const action: string | null = r.action?.name ?? null;
      if (action) actions.add(action);
      transit?.removePendingRequest(reqId);
      r.reject(new BusPermissionError(this.user, subject, action, source));
    }
    const what = actions.size ? [...actions].join(', ') : subject.startsWith(reqb) ? subject.slice(reqb.length) : null;
    const error = new BusPermissionError(this.user, subject, what, source);
    this.logger.error(`${error.message}${actions.size ? '' : ' (no pending call matched)'}`);
  }

  private async watchPermissions(): Promise<void> {
    const client = this.client;
    if (!client?.status) return;
    for await (const s of client.status() as AsyncIterable<{ type: string; data: unknown; permissionContext?: { operation: string; subject: string } }>) {
      const ctx = s.permissionContext;
      if (s.type !== 'error' || s.data !== 'PERMISSIONS_VIOLATION' || !ctx) continue;
      if (ctx.operation === 'publish') {
        this.rejectPending(ctx.subject, 'server');
      } else {
        this.logger.error(`bus: the NATS server refused ${this.user}'s subscription to ${ctx.subject}`);
      }
    }
  }
}
