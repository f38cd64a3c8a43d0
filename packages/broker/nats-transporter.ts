/**
 * Moleculer's NATS transporter with per-service credentials and the call table's permissions
 * (packages/call-table/nats-auth.ts generates the server's side of them):
 * - connects as NATS_USER with NATS_PASSWORD and a per-user inbox prefix;
 * - binds every packet to its bus user: the subject ends with the sender's service (a request's also
 *   names its action), the server lets each user publish only subjects ending with its own name and
 *   only the actions of its row, and a received packet whose sender field names another service, whose
 *   action differs from its subject's, or whose answer comes from a node the request was not sent to
 *   is dropped and logged — so one service's credentials can neither pose as another service's node
 *   nor reach an action outside its row;
 * - subscribes only to the subjects its user may (a service that calls nobody does not listen to
 *   other nodes' INFO, so it never discovers their actions); a subscription the server refuses
 *   anyway is logged, never passed to Moleculer as a message;
 * - refuses, before it reaches the bus, a request the caller's row of the call table does not allow;
 * - and when the server refuses a publish (its permissions say no), rejects the pending request(s)
 *   for that subject at once with BusPermissionError and logs it at error level, instead of letting
 *   the caller wait for its request timeout;
 * - sends every request to a node with a reply subject in its own inbox, so the NATS server answers
 *   "no responders" (503) the moment that node has no subscription any more (killed: the server drops a
 *   dead connection's subscriptions at once): the node is then taken as gone — its pending calls are
 *   rejected and retried on a twin where safe (packages/broker/failover.ts), new calls avoid it — in
 *   milliseconds instead of after the heartbeat timeout. A node that was only reconnecting is found again
 *   by its next heartbeat.
 */
import { Errors, Transporters, type Packet } from 'moleculer';
import type { NatsConnection } from 'nats';
import { inboxPrefixFor, permissionsFor } from '../call-table/nats-auth';
import { LAYERS, mayCall, ownerOfNode, type ServiceName } from '../call-table';

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

/** A packet as Moleculer's transit hands it to the transporter: a request's payload has its id and action. */
type OutgoingPacket = Packet.Packet<Packet.PacketPayload & { id?: string; action?: string }>;

/** The fields of a received packet's payload this transporter reads. */
interface PacketPayload {
  sender?: unknown;
  action?: unknown;
  id?: unknown;
}

export class AuthNatsTransporter extends Transporters.NATS {
  /** Set once connected; subscriptions are made only then (Moleculer types it `any`). */
  declare client: NatsConnection;
  /** Set by Moleculer's transit in init(): hands a received packet to the broker (not in its typings). */
  declare messageHandler: (cmd: string, packet: unknown) => unknown;
  private readonly user: string;
  private readonly allow: { publish: string[]; subscribe: string[] } | null;
  readonly precheck: boolean;
  /** When each kind of dropped packet was last logged: a flood of forgeries is logged once a minute. */
  private readonly droppedLogged = new Map<string, number>();

  constructor(opts: AuthNatsOptions) {
    const servers = opts.url.split(',').map((u) => u.trim()).filter(Boolean);
    // Not `url`: Moleculer's transporter would overwrite user/pass with the URL's (empty) ones.
    super({ servers, user: opts.user, pass: opts.pass, inboxPrefix: inboxPrefixFor(opts.user), maxReconnectAttempts: -1 });
    this.user = opts.user;
    this.allow = (LAYERS as readonly string[]).includes(opts.user) ? permissionsFor(opts.user as ServiceName, opts.namespace) : null;
    this.precheck = opts.precheck !== false;
  }

  /** Subjects already checked: a process publishes to a few hundred (one per callee node and action), every call. */
  private readonly publishable = new Map<string, boolean>();

  private mayPublish(subject: string): boolean {
    if (!this.allow) return true;
    let ok = this.publishable.get(subject);
    if (ok === undefined) {
      ok = this.allow.publish.some((p) => subjectMatches(p, subject));
      // Node ids change as replicas restart: bounded, emptied rather than grown.
      if (this.publishable.size >= 5_000) this.publishable.clear();
      this.publishable.set(subject, ok);
    }
    return ok;
  }

  private maySubscribe(subject: string): boolean {
    return !this.allow || this.allow.subscribe.some((p) => subjectMatches(p, subject));
  }

  /**
   * The subject a packet travels on: Moleculer's (MOL-<ns>.<TYPE>[.<target node>]), then the action for
   * a request, then the sender's service — the token the server's permissions tie to this bus user.
   */
  subjectOf(packet: OutgoingPacket): string {
    const base = this.getTopicName(packet.type, packet.target ?? undefined);
    return packet.type === 'REQ' ? `${base}.${packet.payload.action}.${this.user}` : `${base}.${this.user}`;
  }

  override publish(packet: OutgoingPacket): Promise<void> {
    return this.send(this.subjectOf(packet), this.serialize(packet), { packet });
  }

  /** Wraps Moleculer's handler: a subscription the server closes with an error is not a message. */
  private handler(cmd: string, base: string) {
    return (err: Error | null, msg: { data?: Uint8Array; subject?: string }) => {
      if (err || !msg?.data || !msg.subject) {
        this.logger.error(`bus: the NATS server refused ${this.user}'s subscription to ${base}: ${err?.message ?? 'closed'}`);
        return;
      }
      this.receiveFrom(cmd, base, msg.subject, Buffer.from(msg.data));
    };
  }

  /** Hands Moleculer a packet only when its subject's sender (and action) are the packet's own. */
  private receiveFrom(cmd: string, base: string, subject: string, data: Buffer): void {
    const rest = subject.slice(base.length + 1);
    const dot = rest.lastIndexOf('.');
    const service = rest.slice(dot + 1);
    const action = dot < 0 ? null : rest.slice(0, dot);
    try {
      const packet = this.deserialize(cmd, data);
      const why = this.refusal(cmd, service, action, packet?.payload);
      if (why) {
        this.dropped(cmd, service, subject, why);
        return;
      }
      void this.messageHandler(cmd, packet);
    } catch (err) {
      this.dropped(cmd, service, subject, `it cannot be read (${(err as Error).message})`);
    }
  }

  /** Why a received packet is not what its subject says it is, or null when it is. */
  private refusal(cmd: string, service: string, action: string | null, payload: PacketPayload | undefined): string | null {
    const sender = payload?.sender;
    if (typeof sender !== 'string' || ownerOfNode(sender) !== service) return `its sender (${String(sender)}) is not a ${service} node`;
    if (cmd === 'REQ') {
      if (action === null || payload?.action !== action) return `it asks for ${String(payload?.action)} on a subject for ${action}`;
      if (!(LAYERS as readonly string[]).includes(service) || !mayCall(service as ServiceName, action)) return `the call table does not let ${service} call ${action}`;
    } else if (action !== null) {
      return 'its subject has more tokens than a sender';
    }
    if (cmd === 'RES') {
      const pending = this.broker.transit?.pendingRequests.get(String(payload?.id));
      if (pending?.nodeID && pending.nodeID !== sender) return `it answers a request that was sent to ${pending.nodeID}`;
    }
    return null;
  }

  private dropped(cmd: string, service: string, subject: string, why: string): void {
    const key = `${cmd} ${service}`;
    const now = Date.now();
    if ((this.droppedLogged.get(key) ?? 0) > now - 60_000) return;
    if (this.droppedLogged.size >= 1_000) this.droppedLogged.clear();
    this.droppedLogged.set(key, now);
    this.logger.warn(`bus: dropped a ${cmd} packet on ${subject}: ${why} (logged once a minute per kind)`);
  }

  override async connect(): Promise<void> {
    await super.connect();
    void this.watchPermissions();
    this.watchNoResponders();
  }

  /** Where the server answers "no responders" for a request: <own inbox>.nr.<request id>. */
  private get noRespondersPrefix(): string {
    return `${inboxPrefixFor(this.user)}.nr`;
  }

  private watchNoResponders(): void {
    const subject = `${this.noRespondersPrefix}.*`;
    if (!this.client || !this.maySubscribe(subject)) return;
    this.client.subscribe(subject, {
      callback: (err, msg) => {
        // Only the server's status message: no payload, status 503 (nothing else is ever sent here).
        if (err || !msg || msg.data.length !== 0 || msg.headers?.code !== 503) return;
        this.nodeGone(msg.subject.slice(this.noRespondersPrefix.length + 1));
      },
    });
  }

  /** The node a request went to has no subscription on the bus: it is gone (or reconnecting), now rather than after the heartbeat timeout. */
  private nodeGone(requestId: string): void {
    const nodeID = this.broker.transit?.pendingRequests.get(requestId)?.nodeID;
    const nodes = this.broker.registry?.nodes;
    if (!nodeID || !nodes?.get(nodeID)?.available) return;
    this.logger.warn(`bus: node ${nodeID} no longer listens on the bus (the NATS server answered "no responders"): taken as gone; its calls are rejected and retried where safe`);
    nodes.disconnected(nodeID, true);
  }

  /** Packets addressed to everyone end with one token (the sender), those addressed to a node with its action too. */
  override subscribe(cmd: string, nodeID?: string): Promise<void> {
    const base = this.getTopicName(cmd, nodeID);
    const subject = cmd === 'REQ' && nodeID ? `${base}.>` : `${base}.*`;
    if (!this.maySubscribe(subject)) {
      this.logger.debug(`bus: ${this.user} does not listen to ${subject} (not in its permissions)`);
      return Promise.resolve();
    }
    this.client.subscribe(subject, { callback: this.handler(cmd, base) });
    return Promise.resolve();
  }

  // With disableBalancer (not how createBroker runs) Moleculer would send REQB.<action> / EVENTB.<group>.<event>
  // to NATS queue groups; the generated permissions allow neither, and these subscribe to neither.
  override subscribeBalancedRequest(): Promise<void> {
    return Promise.resolve();
  }

  override subscribeBalancedEvent(): Promise<void> {
    return Promise.resolve();
  }

  override send(topic: string, data: Buffer, meta?: { packet?: { type?: string; payload?: { id?: string; action?: string } } }): Promise<void> {
    if (this.precheck && !this.mayPublish(topic)) {
      const packet = meta?.packet;
      if (packet?.type === 'REQ' && packet.payload?.id) {
        this.rejectPending(topic, 'call-table', packet.payload.id);
      } else {
        this.logger.debug(`bus: ${this.user} does not publish ${packet?.type ?? ''} to ${topic} (not in its permissions)`);
      }
      return Promise.resolve();
    }
    const packet = meta?.packet as OutgoingPacket | undefined;
    if (packet?.type === 'REQ' && packet.target && packet.payload?.id && this.client) {
      this.client.publish(topic, data, { reply: `${this.noRespondersPrefix}.${packet.payload.id}` });
      return Promise.resolve();
    }
    return super.send(topic, data);
  }

  /**
   * Rejects the pending request(s) the refused subject carried: by id, or every one sent to that node for
   * that action (REQ.<service>.<node>.<action>.<sender>: the server refuses per action). Each error names
   * its call's action.
   */
  private rejectPending(subject: string, source: 'server' | 'call-table', id?: string): void {
    const transit = this.broker.transit;
    const pending = transit?.pendingRequests ?? new Map<string, never>();
    const req = `${this.prefix}.REQ.`;
    const tokens = subject.startsWith(req) ? subject.slice(req.length).split('.') : [];
    const node = tokens.slice(0, 2).join('.');
    const refused = tokens.slice(2, -1).join('.');
    const actions = new Set<string>();
    for (const [reqId, r] of [...pending.entries()]) {
      const match = id !== undefined ? reqId === id : tokens.length > 3 && r.nodeID === node && r.ctx?.action?.name === refused;
      if (!match) continue;
      const action: string | null = r.ctx?.action?.name ?? null;
      if (action) actions.add(action);
      transit?.removePendingRequest(reqId);
      r.reject(new BusPermissionError(this.user, subject, action, source));
    }
    const what = actions.size ? [...actions].join(', ') : refused || null;
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
