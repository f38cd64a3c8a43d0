/**
 * Fault scenario, shared by the fault suite (test/distributed/faults.test.ts: asserts correctness)
 * and `npm run bench:faults` (prints the seconds of failed calls and the settlement drain per fault).
 *
 * Two replicas of every service, each its own OS process with its own bus user and database role,
 * started by packages/cluster (a private nats-server with the generated auth, so NATS can be stopped,
 * and PostgreSQL). A steady
 * load of purchase lifecycles runs through both gateways (a client that moves to the other gateway
 * when one refuses connections, as a load balancer would). Faults in turn: kill -9 a ledger, an
 * escrow, an agents and a gateway replica; SIGSTOP a ledger replica for 20 s; stop NATS for 30 s.
 * After each: the load pauses, every purchase must reach the state the load drove it to, every
 * balance is exact to the gas and the ledger audit is clean — without restarting any survivor.
 * A killed replica is then replaced by a fresh process (what Kubernetes does), so the next fault
 * again hits one of two.
 */
import type { ServiceBroker } from 'moleculer';
import { createBroker } from '../../packages/broker';
import { startCluster, type Cluster as LibCluster, type ServiceProcess } from '../../packages/cluster';
import { streamLeader } from '../../packages/cluster/nats-server';
import { startPrivatePostgres, type PrivatePostgres } from '../../packages/cluster/postgres-server';
import { loadConfig, type ServiceName } from '../../packages/config';
import { base62 } from '../../packages/ids';
import { LEDGER } from '../../packages/contracts/ledger';
import { PAYMENTS } from '../../packages/contracts/payments';
import { auditMoney } from '../../packages/ledger-audit';

const PRICE = 100; // fee 10, seller 90
const SELLER_NET = 90;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every service but notifications (no consumer of the load's facts matters here), two processes each. */
export type Role = Exclude<ServiceName, 'notifications'>;
const ROLES: Role[] = ['gateway', 'agents', 'ledger', 'escrow', 'listings', 'payments', 'support'];

export interface FaultRow {
  fault: string;
  /** Tool calls that failed (5xx, or connection refused/reset) while the fault was on. */
  failedCalls: number;
  /** From the first to the last failed call, seconds. */
  failedForS: number;
  /** The failed calls by tool; "(keyed)" marks calls sent with an Idempotency-Key. */
  failedByTool: Record<string, number>;
  /** Calls made while the fault was on. */
  calls: number;
  lifecycles: number;
  /** After the load stopped: seconds until every hold was settled or voided. */
  settleDrainS: number;
  /** Seconds the load took to stop (its workers finish the lifecycle they are in). */
  stopLoadS: number;
  /** The failed calls that got an answer, by HTTP status ("503": n); the rest got none (reset, timeout). */
  failedByStatus?: Record<string, number>;
  /** 5xx answers without a Retry-After header. */
  withoutRetryAfter?: number;
  /** Keyed deliver/confirm retries answered 409 although the step had succeeded (a retry must get the first answer). */
  conflictsAfterSuccess?: number;
  /** The 99th-percentile and the slowest answer of every call (failed ones included) while the fault was on, ms. */
  p99Ms?: number;
  maxMs?: number;
  /** The slowest and the 95th-percentile purchase/deliver/confirm answer while the fault was on, ms. */
  writeMaxMs?: number;
  writeP95Ms?: number;
  /** The longest a confirmed purchase waited for its settlement while the fault was on, seconds. */
  settleLagS?: number;
  note?: string;
}

interface Agent {
  id: string;
  apiKey: string;
}

export interface FaultOptions {
  pgUrl: string;
  log?: (line: string) => void;
  /** Load workers (each runs lifecycles one after the other). */
  concurrency?: number;
  /** Seconds of load after a kill before the load pauses. */
  afterKillS?: number;
  stopLedgerS?: number;
  natsOutageS?: number;
  /**
   * Instead of the process faults: one replica of each service on a 3-node NATS cluster (streams on 3
   * replicas); kill -9 the node leading the events stream for `natsNodeLossS`, then JetStream without quorum
   * (two nodes killed) for as long — settlement lag, and escrow's write latency while publishing is stuck.
   */
  natsNodeLossS?: number;
  /**
   * Instead of the process faults: the cluster on a private PostgreSQL server (one replica of each service),
   * restarted (fast shutdown), stopped `outageS` and frozen (every process SIGSTOPped) `freezeS` under load —
   * every first-try failure must be a 503 with Retry-After, every retried step gets its first answer.
   */
  databaseFaults?: { outageS: number; freezeS: number };
  /**
   * Instead of the process faults: a chaos run — `kills` kill -9 of a random process (gateways included),
   * one every `everyS` seconds, each replaced a second later by a fresh one (what Kubernetes does); the row
   * reports the p99 and slowest answer of every call meanwhile.
   */
  chaos?: { kills: number; everyS: number };
}

/** The cluster (packages/cluster: bus auth, a role per service, a process per replica) plus a client broker and readiness probes. */
export class Cluster {
  inner!: LibCluster;
  /** With the gateway's credentials: the ledger's reads and audit. */
  client!: ServiceBroker;
  /** With payments' credentials: the only row that may credit gas (the load's buyers are funded so). */
  payments!: ServiceBroker;
  /** With escrow's credentials: the only row that may look at holds. */
  escrow!: ServiceBroker;

  get nats() {
    return this.inner.nats;
  }

  get gatewayPorts(): number[] {
    return this.inner.gatewayPorts;
  }

  replicas(role: Role): ServiceProcess[] {
    return this.inner.processes[role];
  }

  async start(pgUrl: string, natsNodes = 1, replicas = natsNodes > 1 ? 1 : 2): Promise<void> {
    // Both replicas of every service at the same instant (they race on migrations and consumers).
    this.inner = await startCluster({
      fresh: true,
      // On a NATS cluster (or a private PostgreSQL) one of each (two cores): the fault is the infrastructure's, not a process's.
      replicas,
      natsNodes,
      services: ROLES,
      port: 0,
      postgresUrl: pgUrl,
      startTimeoutMs: 180_000,
      env: {
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        SWEEP_INTERVAL_MS: '500',
        REQUEST_TIMEOUT_MS: '5000',
        DATABASE_POOL_MAX: '5',
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
        SEED_ON_EMPTY: 'false',
        RATE_LIMIT_PER_MINUTE: '0',
      },
    });
    // The test's own brokers, each with one service's credentials: the call table holds for them too.
    const clientAs = async (service: 'gateway' | 'payments' | 'escrow', waitFor: string[]) => {
      const config = loadConfig({ ...this.inner.clientEnv(service), DATA_DIR: 'memory://', LOG_LEVEL: 'error', NODE_ENV: 'test' });
      const broker = createBroker({ config, services: [], brokerOptions: { nodeID: `faults-client-${process.pid}` } });
      await broker.start();
      await broker.waitForServices(waitFor, 60_000);
      return broker;
    };
    this.client = await clientAs('gateway', ['ledger', 'escrow', 'listings', 'agents', 'payments']);
    this.payments = await clientAs('payments', ['ledger']);
    this.escrow = await clientAs('escrow', ['ledger']);
    for (const port of this.gatewayPorts) await this.waitReady(port, 60_000, (b) => ['agents', 'ledger', 'escrow', 'listings'].every((s) => b?.services?.[s]));
  }

  async replace(role: Role, i: number): Promise<void> {
    const fresh = await this.inner.restart(role, i);
    if (role === 'gateway') await this.waitReady(this.gatewayPorts[i], 60_000, (b) => b?.ok);
    else await this.waitReady(fresh.port, 60_000, (b) => b?.ok);
  }

  async readyz(port: number): Promise<{ status: number; body: any }> {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) });
    return { status: r.status, body: await r.json().catch(() => null) };
  }

  async waitReady(port: number, timeoutMs: number, ok: (body: any) => boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.readyz(port).catch(() => null);
      if (r && r.status === 200 && ok(r.body)) return;
      if (Date.now() > deadline) throw new Error(`port ${port} not ready in ${timeoutMs} ms: ${JSON.stringify(r?.body)}`);
      await sleep(250);
    }
  }

  async stop(): Promise<void> {
    for (const b of [this.client, this.payments, this.escrow]) await b?.stop().catch(() => undefined);
    await this.inner?.stop();
  }
}

/** Purchase lifecycles through both gateways; records every call's outcome. */
export class Load {
  calls: Array<{ at: number; ok: boolean; tool: string; ms: number; status: number; retryAfter: boolean }> = [];
  /** Keyed deliver/confirm retries answered 409 after the step had succeeded, when they were answered. */
  conflictsAfterSuccess: number[] = [];
  purchases = new Map<string, { buyerId: string; sellerId: string }>();
  confirmedAt = new Map<string, number>();
  lifecycles = 0;
  private running = false;
  private workers: Promise<void>[] = [];
  private seq = 0;
  readonly run = base62(6);

  constructor(
    private readonly cluster: Cluster,
    private readonly buyers: Agent[],
    private readonly sellers: Array<Agent & { listingId: string }>,
  ) {}

  /** The last non-200 answer, for a failure message. */
  lastRefusal = '';

  /** Gateways that refused a connection recently (a load balancer's passive health check). */
  private downUntil = new Map<number, number>();

  /**
   * One tool call, recorded once as the buyer sees it. A refused connection is retried on the other
   * gateway, as a load balancer does; a request lost in flight (reset) or a 5xx is a failed call.
   */
  async tool(worker: number, name: string, args: Record<string, unknown>, apiKey: string, headers: Record<string, string> = {}) {
    const ports = this.cluster.gatewayPorts;
    const tool = headers['idempotency-key'] ? `${name} (keyed)` : name;
    const order = [0, 1].map((k) => ports[(worker + k) % ports.length]).sort((a, b) => (this.downUntil.get(a) ?? 0) - (this.downUntil.get(b) ?? 0));
    const started = Date.now();
    for (const port of order) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers },
          body: JSON.stringify({ tool: name, arguments: args }),
          signal: AbortSignal.timeout(30_000),
        });
        const body = (await res.json().catch(() => null)) as any;
        this.calls.push({ at: Date.now(), ok: res.status < 500, tool, ms: Date.now() - started, status: res.status, retryAfter: res.headers.has('retry-after') });
        if (res.status !== 200) this.lastRefusal = `${name} → ${res.status} ${JSON.stringify(body?.error ?? body).slice(0, 300)}`;
        return { status: res.status, body };
      } catch (err) {
        if ((err as any)?.cause?.code === 'ECONNREFUSED') {
          this.downUntil.set(port, Date.now() + 2_000);
          continue;
        }
        break;
      }
    }
    this.calls.push({ at: Date.now(), ok: false, tool, ms: Date.now() - started, status: 0, retryAfter: false });
    return { status: 0, body: null };
  }

  /** Retries (as an agent does) until `done` accepts the answer. */
  private async until<T>(what: string, fn: () => Promise<T | null>, timeoutMs = 180_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn().catch(() => null);
      if (v !== null) return v;
      if (Date.now() > deadline) throw new Error(`${what} did not succeed in ${timeoutMs} ms (last refusal: ${this.lastRefusal})`);
      await sleep(200);
    }
  }

  private async status(w: number, buyer: Agent, purchaseId: string): Promise<string | null> {
    const r = await this.tool(w, 'get_purchase', { purchaseId }, buyer.apiKey);
    return r.status === 200 ? r.body.result.purchase.status : null;
  }

  private async lifecycle(w: number, i: number): Promise<void> {
    const buyer = this.buyers[i % this.buyers.length];
    const seller = this.sellers[i % this.sellers.length];
    const purchase = await this.until(`purchase ${i}`, async () => {
      const r = await this.tool(w, 'purchase_service', { listingId: seller.listingId }, buyer.apiKey, { 'idempotency-key': `${this.run}-${i}` });
      if (r.status === 402) throw new Error(`buyer ran out of gas: ${JSON.stringify(r.body)}`);
      return r.status === 200 ? (r.body.result.purchase as { id: string }) : null;
    });
    this.purchases.set(purchase.id, { buyerId: buyer.id, sellerId: seller.id });
    // Keyed, as a retrying agent sends them: a repeat after success must get the first answer, never 409.
    const step = async (what: string, tool: string, args: Record<string, unknown>, apiKey: string, after: string) =>
      this.until(`${what} ${i}`, async () => {
        const r = await this.tool(w, tool, args, apiKey, { 'idempotency-key': `${this.run}-${what}-${i}` });
        if (r.status === 200) return true;
        if (r.status === 409 && (await this.status(w, buyer, purchase.id)) === after) {
          this.conflictsAfterSuccess.push(Date.now());
          return true;
        }
        return null;
      });
    await step('deliver', 'deliver_work', { purchaseId: purchase.id, delivery: { summary: `fault load ${i}` } }, seller.apiKey, 'delivered');
    await step('confirm', 'confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey, 'completed');
    this.confirmedAt.set(purchase.id, Date.now());
    this.lifecycles++;
  }

  start(concurrency: number): void {
    this.running = true;
    this.workers = Array.from({ length: concurrency }, async (_, w) => {
      while (this.running) await this.lifecycle(w, this.seq++);
    });
  }

  async pause(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  window(from: number, to: number) {
    const calls = this.calls.filter((c) => c.at >= from && c.at <= to);
    const failed = calls.filter((c) => !c.ok);
    const failedByTool: Record<string, number> = {};
    const failedByStatus: Record<string, number> = {};
    for (const c of failed) {
      failedByTool[c.tool] = (failedByTool[c.tool] ?? 0) + 1;
      if (c.status) failedByStatus[c.status] = (failedByStatus[c.status] ?? 0) + 1;
    }
    // Escrow's writes as the buyer and seller saw them (purchase, deliver, confirm): the slowest answer.
    const all = calls.map((c) => c.ms).sort((a, b) => a - b);
    const writes = calls.filter((c) => /^(purchase_service|deliver_work|confirm_delivery)/.test(c.tool)).map((c) => c.ms).sort((a, b) => a - b);
    return {
      failedByTool,
      failedByStatus,
      withoutRetryAfter: failed.filter((c) => c.status >= 500 && !c.retryAfter).length,
      conflictsAfterSuccess: this.conflictsAfterSuccess.filter((at) => at >= from && at <= to).length,
      p99Ms: all.length ? all[Math.floor(all.length * 0.99)] : 0,
      maxMs: all.length ? all[all.length - 1] : 0,
      writeMaxMs: writes.length ? writes[writes.length - 1] : 0,
      writeP95Ms: writes.length ? writes[Math.floor(writes.length * 0.95)] : 0,
      calls: calls.length,
      failedCalls: failed.length,
      failedForS: failed.length ? Math.round((failed[failed.length - 1].at - failed[0].at) / 100) / 10 : 0,
    };
  }
}

export interface FaultRun {
  rows: FaultRow[];
  /** Extra observations (readiness during the NATS outage, settlement while a ledger was stopped). */
  observations: Record<string, unknown>;
}

export async function runFaultScenario(opts: FaultOptions): Promise<FaultRun> {
  const log = opts.log ?? (() => undefined);
  const cluster = new Cluster();
  const rows: FaultRow[] = [];
  const observations: Record<string, unknown> = {};
  let privatePg: PrivatePostgres | null = null;
  try {
    const t0 = Date.now();
    const nodeLoss = opts.natsNodeLossS !== undefined;
    const dbFaults = opts.databaseFaults;
    if (dbFaults) privatePg = await startPrivatePostgres();
    await cluster.start(privatePg?.url ?? opts.pgUrl, nodeLoss ? 3 : 1, nodeLoss || dbFaults ? 1 : 2);
    observations.startAllAtOnceS = Math.round((Date.now() - t0) / 100) / 10;
    const shape = nodeLoss ? 'one process per service on 3 NATS nodes' : dbFaults ? 'one process per service on a private PostgreSQL' : '14 processes started at once';
    log(`cluster up (${shape}) in ${observations.startAllAtOnceS} s`);

    // Agents and money.
    const gw = `http://127.0.0.1:${cluster.gatewayPorts[0]}`;
    const register = async (name: string): Promise<Agent> => {
      const res = await fetch(`${gw}/api/agent/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider: 'other', displayName: name }),
      });
      const body = (await res.json()) as any;
      if (res.status !== 200) throw new Error(`register: ${res.status} ${JSON.stringify(body)}`);
      return { id: body.agent.id, apiKey: body.apiKey };
    };
    const sellers: Array<Agent & { listingId: string }> = [];
    for (let i = 0; i < 3; i++) {
      const s = await register(`Fault Seller ${i}`);
      const res = await fetch(`${gw}/api/agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${s.apiKey}` },
        body: JSON.stringify({
          tool: 'list_service',
          arguments: {
            title: `Write Jest unit tests for a TypeScript module (${i})`,
            description:
              'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.',
            priceGas: PRICE,
            category: 'codegen',
          },
        }),
      });
      const body = (await res.json()) as any;
      if (!body.ok) throw new Error(`list_service: ${JSON.stringify(body)}`);
      sellers.push({ ...s, listingId: body.result.listing.id });
    }
    const buyers: Agent[] = [];
    const funded = new Map<string, number>();
    // Funded as a buyer is: buy_gas, then the (sandbox) checkout approved — so the reconciling audit finds a
    // paid checkout behind every credit.
    // 12 × 10,000 gas each: a quiet 2-core machine ran ~2,400 lifecycles of 100 gas over 6 buyers (4 ran dry).
    const FLEET_CHECKOUTS = 12;
    for (let i = 0; i < 6; i++) {
      const b = await register(`Fault Buyer ${i}`);
      let gas = 0;
      for (let c = 0; c < FLEET_CHECKOUTS; c++) {
        const res = await fetch(`${gw}/api/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${b.apiKey}` },
          body: JSON.stringify({ tool: 'buy_gas', arguments: { packId: 'fleet' } }),
        });
        const body = (await res.json()) as any;
        if (!body.ok) throw new Error(`buy_gas: ${JSON.stringify(body)}`);
        await cluster.client.call(PAYMENTS.sandboxApprove, { sessionId: body.result.sessionId });
        gas += body.result.gas as number;
      }
      for (let t = 0; ; t++) {
        const { gasBalance } = await cluster.client.call<{ gasBalance: number }, any>(LEDGER.balance, { agentId: b.id });
        if (gasBalance === gas) break;
        if (t > 200) throw new Error(`buyer ${b.id}: ${gasBalance} gas after ${FLEET_CHECKOUTS} approved checkouts of ${gas}`);
        await sleep(100);
      }
      funded.set(b.id, gas);
      buyers.push(b);
    }

    const load = new Load(cluster, buyers, sellers);
    const concurrency = opts.concurrency ?? 4;

    const verify = async (fault: string): Promise<{ settleDrainS: number; stopLoadS: number }> => {
      const pausing = Date.now();
      await load.pause();
      const paused = Date.now();
      // Every hold settled (or voided): the events reached the ledger.
      const deadline = Date.now() + 180_000;
      for (;;) {
        const open = await cluster.escrow.call<unknown[], any>(LEDGER.openHolds, {}, { timeout: 10_000 }).catch(() => null);
        if (open && open.length === 0) break;
        if (Date.now() > deadline) throw new Error(`${fault}: ${open?.length ?? '?'} holds still open after 180 s`);
        await sleep(250);
      }
      const drain = Math.round((Date.now() - paused) / 100) / 10;
      // Audit with escrow reachable (a skipped cross-check proves nothing).
      let audit: any = null;
      for (let i = 0; i < 60; i++) {
        audit = await cluster.client.call(LEDGER.audit, {}, { timeout: 60_000 }).catch(() => null);
        if (audit && !audit.checks.some((c: any) => c.skipped)) break;
        await sleep(500);
      }
      if (!audit?.ok) throw new Error(`${fault}: ledger audit failed: ${JSON.stringify(audit?.checks?.filter((c: any) => !c.ok))}`);
      // Reconciled with payments and escrow: every credit a paid checkout, every settle a completed purchase with its split.
      const reconciled = await auditMoney((action, params = {}) => cluster.client.call(action, params, { timeout: 60_000 }), { reconcile: true });
      const broken = reconciled.checks.filter((c) => !c.ok || c.skipped);
      if (broken.length) throw new Error(`${fault}: reconciling audit failed: ${JSON.stringify(broken)}`);
      // Every purchase completed, its hold posted once; balances exact to the gas.
      const earned = new Map<string, number>();
      const spent = new Map<string, number>();
      for (const [purchaseId, { buyerId, sellerId }] of load.purchases) {
        const hold = await cluster.escrow.call<{ status: string } | null, any>(LEDGER.getHold, { purchaseId });
        if (hold?.status !== 'posted') throw new Error(`${fault}: purchase ${purchaseId} hold is ${hold?.status}, expected posted`);
        earned.set(sellerId, (earned.get(sellerId) ?? 0) + SELLER_NET);
        spent.set(buyerId, (spent.get(buyerId) ?? 0) + PRICE);
      }
      for (const b of buyers) {
        const { gasBalance } = await cluster.client.call<{ gasBalance: number }, any>(LEDGER.balance, { agentId: b.id });
        const want = funded.get(b.id)! - (spent.get(b.id) ?? 0);
        if (gasBalance !== want) throw new Error(`${fault}: buyer ${b.id} has ${gasBalance} gas, expected ${want}`);
      }
      for (const s of sellers) {
        const { gasBalance } = await cluster.client.call<{ gasBalance: number }, any>(LEDGER.balance, { agentId: s.id });
        if (gasBalance !== (earned.get(s.id) ?? 0)) throw new Error(`${fault}: seller ${s.id} has ${gasBalance} gas, expected ${earned.get(s.id) ?? 0}`);
      }
      log(`${fault}: ${load.purchases.size} purchases so far all completed and settled, balances exact, audit clean (drain ${drain} s)`);
      return { settleDrainS: drain, stopLoadS: Math.round((paused - pausing) / 100) / 10 };
    };

    const phase = async (fault: string, inject: () => Promise<string | void>) => {
      load.start(concurrency);
      await sleep(2_000); // steady state first
      const before = load.lifecycles;
      const from = Date.now();
      const note = await inject();
      const to = Date.now();
      const lifecycles = load.lifecycles - before;
      const w = load.window(from, to);
      const { settleDrainS, stopLoadS } = await verify(fault);
      const row: FaultRow = { fault, ...w, lifecycles, settleDrainS, stopLoadS, ...(note ? { note } : {}) };
      rows.push(row);
      log(`${fault}: ${JSON.stringify(row)}`);
    };

    /** Watches settlement while a fault is on: the longest a confirmed purchase waited for its hold to be posted. */
    const watchSettlement = (from: number) => {
      const settledAt = new Map<string, number>();
      let on = true;
      let maxLag = 0;
      const loop = (async () => {
        while (on) {
          const now = Date.now();
          const waiting = [...load.confirmedAt].filter(([id, at]) => at >= from - 2_000 && !settledAt.has(id));
          await Promise.all(
            waiting.map(async ([purchaseId, at]) => {
              const hold = await cluster.escrow.call<{ status: string } | null, any>(LEDGER.getHold, { purchaseId }, { timeout: 2_000 }).catch(() => null);
              if (hold?.status === 'posted') settledAt.set(purchaseId, now);
              maxLag = Math.max(maxLag, now - at);
            }),
          );
          await sleep(500);
        }
      })();
      return async () => {
        on = false;
        await loop;
        return Math.round(maxLag / 100) / 10;
      };
    };

    if (nodeLoss) {
      const nodes = cluster.nats.nodes!;
      const stream = `${cluster.inner.namespace.replace(/[^A-Za-z0-9_-]/g, '_')}_EVENTS`;
      const lossMs = opts.natsNodeLossS! * 1000;
      let lag = 0;
      await phase(`NATS node leading the events stream killed ${opts.natsNodeLossS} s`, async () => {
        const leaderName = await streamLeader(nodes, stream);
        const leader = nodes.find((n) => n.name === leaderName);
        if (!leader) throw new Error(`no leader for ${stream}`);
        const stopWatch = watchSettlement(Date.now());
        observations.leaderKilledAt = new Date().toISOString().slice(11, 23);
        await leader.kill();
        const until = Date.now() + lossMs;
        while (Date.now() < until) {
          const newLeader = await streamLeader(nodes.filter((n) => n !== leader), stream);
          if (newLeader && !observations.newStreamLeaderAfterS) observations.newStreamLeaderAfterS = Math.round((lossMs - (until - Date.now())) / 100) / 10;
          await sleep(500);
        }
        await leader.start();
        lag = await stopWatch();
        return `leader ${leaderName} killed; new leader after ${observations.newStreamLeaderAfterS ?? '?'} s; settlement at most ${lag} s behind`;
      });
      rows[rows.length - 1].settleLagS = lag;
      await phase(`JetStream without quorum (2 of 3 NATS nodes killed) ${opts.natsNodeLossS} s`, async () => {
        const [a, b] = nodes.slice(1);
        const stopWatch = watchSettlement(Date.now());
        await Promise.all([a.kill(), b.kill()]);
        // Clients of the killed nodes move to the third (a call in flight on them may be lost and retried): from
        // then on only JetStream is stuck. That takes a second or so on a quiet machine, longer on a busy one, so
        // the window starts once escrow says it is degraded (it is connected again and sees publishing fail),
        // and not before 8 s after the kill (every process's client has moved by then: a request caught on a
        // killed connection times out after REQUEST_TIMEOUT_MS and is retried — core NATS, not JetStream).
        const killedAt = Date.now();
        let stuckFrom = killedAt + 8_000;
        const worker = cluster.replicas('escrow')[0];
        // Every part /readyz named degraded meanwhile (its kind: publishing, consuming, outbox), and the statuses.
        let degraded: { status: number[]; degraded: string[] } | null = null;
        const until = Date.now() + lossMs;
        while (Date.now() < until) {
          const r = await cluster.readyz(worker.port).catch(() => null);
          if (r?.body?.degraded) {
            if (!degraded) stuckFrom = Math.max(stuckFrom, Date.now());
            degraded ??= { status: [], degraded: [] };
            if (!degraded.status.includes(r.status)) degraded.status.push(r.status);
            for (const d of r.body.degraded as string[]) {
              const kind = d.replace(/ failing for .*| is \d+ s old.*|: escrow's.*/, '');
              if (!degraded.degraded.some((x) => x.startsWith(kind))) degraded.degraded.push(d);
            }
          }
          await sleep(500);
        }
        const w = load.window(stuckFrom, Date.now());
        observations.writesWhileJetStreamStuck = { calls: w.calls, failedCalls: w.failedCalls, writeMaxMs: w.writeMaxMs, writeP95Ms: w.writeP95Ms };
        await Promise.all([a.start(), b.start()]);
        lag = await stopWatch();
        observations.escrowReadyzWithoutQuorum = degraded ?? 'never degraded';
        return `escrow /readyz: ${JSON.stringify(degraded ?? 'never degraded').slice(0, 200)}`;
      });
      rows[rows.length - 1].settleLagS = lag;
      // What escrow and the ledger said about it (one warn line per outage and one for its end).
      for (const role of ['escrow', 'ledger'] as Role[]) {
        observations[`${role}DurableEventLines`] = cluster
          .replicas(role)
          .flatMap((p) => p.output().split('\n'))
          .filter((l) => l.includes('durable events:'))
          .map((l) => {
            try {
              const j = JSON.parse(l) as { time: number; level: number; msg: string };
              return `${new Date(j.time).toISOString().slice(11, 23)} ${j.level >= 50 ? 'error' : 'warn'} ${j.msg}`;
            } catch {
              return l;
            }
          })
          .slice(-20);
      }
      observations.totalLifecycles = load.lifecycles;
      return { rows, observations };
    }

    if (privatePg && dbFaults) {
      const pg = privatePg;
      await phase('PostgreSQL restarted (fast shutdown)', async () => {
        const down = Date.now();
        await pg.restart();
        const downS = Math.round((Date.now() - down) / 100) / 10;
        await sleep(8_000);
        return `down ${downS} s`;
      });
      await phase(`PostgreSQL stopped ${dbFaults.outageS} s`, async () => {
        await pg.stop();
        await sleep(dbFaults.outageS * 1000);
        await pg.start();
        await sleep(5_000);
      });
      await phase(`PostgreSQL frozen ${dbFaults.freezeS} s (SIGSTOP: connections open, nothing answers)`, async () => {
        pg.freeze();
        try {
          await sleep(dbFaults.freezeS * 1000);
        } finally {
          pg.thaw();
        }
        await sleep(5_000);
      });
      observations.totalLifecycles = load.lifecycles;
      return { rows, observations };
    }

    if (opts.chaos) {
      const { kills, everyS } = opts.chaos;
      const killed: string[] = [];
      await phase(`chaos: ${kills} kill -9 of a random process, one every ${everyS} s`, async () => {
        for (let k = 0; k < kills; k++) {
          const started = Date.now();
          const role = ROLES[Math.floor(Math.random() * ROLES.length)];
          const i = Math.floor(Math.random() * cluster.replicas(role).length);
          await cluster.replicas(role)[i].kill();
          killed.push(role);
          await sleep(1_000);
          await cluster.replace(role, i);
          await sleep(Math.max(0, everyS * 1000 - (Date.now() - started)));
        }
        return `killed: ${killed.join(', ')}`;
      });
      observations.totalLifecycles = load.lifecycles;
      return { rows, observations };
    }

    const afterKill = (opts.afterKillS ?? 8) * 1000;
    for (const role of ['ledger', 'escrow', 'agents', 'gateway'] as Role[]) {
      await phase(`kill -9 one ${role} replica`, async () => {
        await cluster.replicas(role)[0].kill();
        await sleep(afterKill);
      });
      await cluster.replace(role, 0);
    }

    const stopS = opts.stopLedgerS ?? 20;
    await phase(`SIGSTOP one ledger replica ${stopS} s`, async () => {
      const hung = cluster.replicas('ledger')[0];
      const stoppedAt = Date.now();
      hung.child.kill('SIGSTOP');
      try {
        await sleep((stopS * 1000) / 2);
        // Settlement goes on: purchases confirmed while the replica was stopped are settled before it resumes.
        const confirmed = [...load.confirmedAt].filter(([, at]) => at > stoppedAt + 1_000).map(([id]) => id);
        await sleep((stopS * 1000) / 2 - 2_000);
        const holds = await Promise.all(
          confirmed.map((purchaseId) =>
            cluster.escrow.call<{ status: string } | null, any>(LEDGER.getHold, { purchaseId }, { timeout: 3_000, retries: 1 }).catch(() => null),
          ),
        );
        const posted = holds.filter((h) => h?.status === 'posted').length;
        observations.settledWhileLedgerStopped = { confirmed: confirmed.length, settledBeforeResume: posted };
        return `${posted}/${confirmed.length} confirmed while stopped were settled before it resumed`;
      } finally {
        hung.child.kill('SIGCONT');
        await sleep(2_000);
      }
    });

    const outageS = opts.natsOutageS ?? 30;
    await phase(`NATS stopped ${outageS} s`, async () => {
      const worker = cluster.replicas('ledger')[1];
      await cluster.nats.stop();
      const down = Date.now();
      let notReady: { status: number; body: any } | null = null;
      while (Date.now() - down < outageS * 1000) {
        const r = await cluster.readyz(worker.port).catch(() => null);
        if (r && r.status === 503 && !notReady) notReady = r;
        await sleep(500);
      }
      await cluster.nats.start();
      observations.workerReadyzDuringOutage = notReady ? { status: notReady.status, failing: notReady.body?.failing } : 'never 503';
      // Everything comes back by itself: the workers report ready again.
      const back = Date.now();
      for (const role of ROLES.filter((r) => r !== 'gateway')) {
        for (const p of cluster.replicas(role)) {
          await cluster.waitReady(p.port, 120_000, (b) => b?.ok).catch((err) => {
            throw new Error(`${role} (exit ${p.child.exitCode}) did not come back: ${(err as Error).message}\n${p.output().slice(-3000)}`, { cause: err });
          });
        }
      }
      observations.workersReadyAfterNatsS = Math.round((Date.now() - back) / 100) / 10;
      await sleep(5_000);
      return `worker /readyz during the outage: ${JSON.stringify(observations.workerReadyzDuringOutage)}`;
    });
    observations.totalLifecycles = load.lifecycles;
    return { rows, observations };
  } finally {
    await cluster.stop();
    await privatePg?.dispose();
  }
}

export function printFaultTable(rows: FaultRow[]): void {
  const header = ['fault', 'calls', 'failed calls', 'failed for s', 'lifecycles', 'load stop s', 'settle drain s', 'settle lag s', 'write max ms', '409 after success', 'note'];
  const failedTools = (r: FaultRow) => Object.entries(r.failedByTool).map(([tool, n]) => `${tool} ×${n}`).join(', ');
  const lines = rows.map((r) => [
    r.fault,
    String(r.calls),
    String(r.failedCalls),
    String(r.failedForS),
    String(r.lifecycles),
    String(r.stopLoadS),
    String(r.settleDrainS),
    r.settleLagS === undefined ? '' : String(r.settleLagS),
    r.writeMaxMs === undefined ? '' : String(r.writeMaxMs),
    String(r.conflictsAfterSuccess ?? 0),
    [
      r.failedCalls ? `failed: ${failedTools(r)}` : '',
      r.failedByStatus && Object.keys(r.failedByStatus).length ? `answers: ${Object.entries(r.failedByStatus).map(([st, n]) => `${st} ×${n}`).join(', ')}` : '',
      r.withoutRetryAfter ? `${r.withoutRetryAfter} without Retry-After` : '',
      r.note ?? '',
    ]
      .filter(Boolean)
      .join('; '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cols: string[]) => cols.map((c, i) => (i === 0 || i === cols.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log('\n' + fmt(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(fmt(l));
}
