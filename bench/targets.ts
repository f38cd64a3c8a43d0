/**
 * Issue #22: the purchase lifecycle against three targets in one run, by the same client —
 *   monolith      bench/monolith.ts (express + pg, one statement per step), the reference;
 *   one process   src/main.ts with every service in one process on PostgreSQL (in-process bus);
 *   distributed   packages/cluster startCluster (one process per service, private NATS, a role per service)
 * — and for each: lifecycles/s and latencies, CPU ms per lifecycle per process (its own PostgreSQL
 * backends, PostgreSQL's background processes, its nats-server and the bench client included), idle CPU
 * ms/s per process, the message budget per lifecycle (HTTP requests, SQL round trips, NATS messages,
 * JetStream publishes/pulls/acks, Moleculer requests — counted in every process by bench/count-messages.cjs —
 * and PostgreSQL transactions and rows written from pg_stat_database / pg_stat_user_tables), and the
 * ledger audit after the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { clusterNodeArgs, freePort, startCluster, type Cluster } from '../packages/cluster';
import { startPrivateNats } from '../packages/cluster/nats-server';
import { allPids, cmdline, natsServerPid, readStat } from './proc';
import { ALL_SERVICES, type ServiceName } from '../packages/config';
import { grantFunder, httpCalls, prepareLifecycles, runLifecycles, type Funder, type LifecycleBenchRow } from './scenarios/lifecycle';

const ROOT = path.resolve(__dirname, '..');
// 30 s: long enough to average the 30 s sweeps (a 10 s window catches one or none of them).
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
/** PostgreSQL publishes a backend's table and transaction counters up to ~10 s after they happen (pgstat). */
const PGSTAT_FLUSH_MS = 11_500;
const COUNT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-counts-'));
const PRELOAD = `--require ${path.join(__dirname, 'count-messages.cjs')}`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------- /proc

/** Postgres processes: backends of `database` and the server's background processes (not other databases' backends). */
function postgresPids(database: string): { backends: number[]; background: number[] } {
  const backends: number[] = [];
  const background: number[] = [];
  for (const pid of allPids()) {
    if (readStat(pid)?.comm !== 'postgres') continue;
    const cmd = cmdline(pid);
    // A backend's title: "postgres: 15/main: <user> <database> <host(port)> <state>".
    const m = /^postgres: [^:]+: (\S+) (\S+) \S+\(\d+\)|^postgres: [^:]+: (\S+) (\S+) \[local\]/.exec(cmd);
    if (m) {
      if ((m[2] ?? m[4]) === database) backends.push(pid);
    } else {
      background.push(pid);
    }
  }
  return { backends, background };
}

export interface TargetProcess {
  label: string;
  pid: number;
}

/**
 * CPU used per label between start() and stop(), sampled every 500 ms so that a process that exits
 * meanwhile (a pooled PostgreSQL backend closed when idle) keeps what it used.
 */
class CpuWindow {
  private first = new Map<number, number>();
  private last = new Map<number, { label: string; cpuMs: number }>();
  private timer: NodeJS.Timeout | null = null;
  private startedAt = 0;
  seconds = 0;

  constructor(private readonly pids: () => TargetProcess[]) {}

  private sample(initial: boolean): void {
    for (const { label, pid } of this.pids()) {
      const s = readStat(pid);
      if (!s) continue;
      // A process first seen after the start (a new backend) counts from 0.
      if (initial) this.first.set(pid, s.cpuMs);
      else if (!this.first.has(pid)) this.first.set(pid, 0);
      this.last.set(pid, { label, cpuMs: s.cpuMs });
    }
  }

  start(): void {
    this.startedAt = Date.now();
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), 500);
  }

  stop(): Map<string, number> {
    this.sample(false);
    if (this.timer) clearInterval(this.timer);
    this.seconds = (Date.now() - this.startedAt) / 1000;
    const out = new Map<string, number>();
    for (const [pid, { label, cpuMs }] of this.last) out.set(label, (out.get(label) ?? 0) + cpuMs - (this.first.get(pid) ?? 0));
    return out;
  }
}

// ------------------------------------------------------------------------------------------ counters

type Counts = Record<string, number>;

/** Asks every process for its message counters (bench/count-messages.cjs) and sums them. */
async function messageCounts(procs: TargetProcess[]): Promise<Counts> {
  for (const p of procs) fs.rmSync(path.join(COUNT_DIR, `${p.pid}.json`), { force: true });
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGUSR2');
    } catch {
      // gone
    }
  }
  await sleep(300);
  const total: Counts = {};
  for (const p of procs) {
    try {
      const c = JSON.parse(fs.readFileSync(path.join(COUNT_DIR, `${p.pid}.json`), 'utf8')) as Counts;
      for (const [k, v] of Object.entries(c)) total[k] = (total[k] ?? 0) + v;
    } catch {
      // no counters from this one
    }
  }
  return total;
}

/** PostgreSQL's own counters for a database: transactions, and rows inserted/updated/deleted per table. */
async function pgCounts(adminDbUrl: string): Promise<{ xacts: number; tables: Counts }> {
  const c = new Client({ connectionString: adminDbUrl });
  await c.connect();
  try {
    const db = await c.query(`SELECT xact_commit + xact_rollback AS x FROM pg_stat_database WHERE datname = current_database()`);
    const t = await c.query(`SELECT schemaname || '.' || relname AS name, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del FROM pg_stat_user_tables`);
    const tables: Counts = {};
    for (const r of t.rows) {
      if (Number(r.ins)) tables[`${r.name} ins`] = Number(r.ins);
      if (Number(r.upd)) tables[`${r.name} upd`] = Number(r.upd);
      if (Number(r.del)) tables[`${r.name} del`] = Number(r.del);
    }
    // Our own statements here are transactions too: 2 per call (counted and subtracted by the caller).
    return { xacts: Number(db.rows[0].x), tables };
  } finally {
    await c.end();
  }
}

const diff = (a: Counts, b: Counts): Counts => Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, (b[k] ?? 0) - (a[k] ?? 0)]));

// ------------------------------------------------------------------------------------------- targets

interface Target {
  name: string;
  baseUrl: string;
  database: string;
  adminDbUrl: string;
  fund?: Funder;
  processes: TargetProcess[];
  natsPid: number | null;
  audit(): Promise<{ ok: boolean; text: string }>;
  stop(): Promise<void>;
}

export interface TargetResult {
  target: string;
  rows: LifecycleBenchRow[];
  lifecycles: number;
  /** CPU ms per lifecycle per process label (incl. postgres, nats-server, bench client). */
  cpuPerLifecycle: Record<string, number>;
  /** CPU ms per second when idle, per process label. */
  idleCpuPerSecond: Record<string, number>;
  /** Per lifecycle: httpRequests, sql, natsOut, natsIn, jsPublish, jsFetch, jsAck, moleculerRequests, pgTransactions, rowsWritten, and per table. */
  budget: Record<string, number>;
  /** Per second when idle: the same counters. */
  idleBudget: Record<string, number>;
  audit: { ok: boolean; text: string };
}

function startNode(args: string[], env: Record<string, string>, ready: RegExp, cwd = ROOT): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cwd === BEFORE ? BEFORE_NODE : process.execPath, [...clusterNodeArgs(), '--import', 'tsx', ...args], {
      cwd,
      env: { ...process.env, ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${PRELOAD}`, BENCH_COUNT_DIR: COUNT_DIR },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${out}`)), 120_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    });
    child.stderr!.on('data', (d) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** A database of the target's own, dropped by the target's stop (a bench run leaves none behind). */
async function freshDatabase(serverUrl: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const { createTestDatabase } = await import('../test/kit/database');
  const db = await createTestDatabase(serverUrl);
  return { url: db.url, name: new URL(db.url).pathname.slice(1), drop: () => db.drop().catch(() => undefined) };
}

async function adminAudit(baseUrl: string, token: string): Promise<{ ok: boolean; text: string }> {
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${baseUrl}/api/admin/ledger/audit`, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
    const answer = (await r?.json().catch(() => null)) as { result?: { ok?: boolean; checks?: Array<{ name: string; ok: boolean; skipped?: boolean; message: string }> } } | null;
    const body = answer?.result;
    // Outbox events still in flight (settles reaching listings) can leave a check pending for a moment.
    if (body?.checks && (body.ok || i === 19)) {
      const bad = body.checks.filter((c) => !c.ok || c.skipped);
      const skipped = body.checks.filter((c) => c.skipped).length;
      return { ok: !!body.ok, text: body.ok ? `clean (${body.checks.length} checks${skipped ? `, ${skipped} skipped` : ''})` : `FAILED: ${bad.map((c) => `${c.name}: ${c.message}`).join('; ')}` };
    }
    await sleep(500);
  }
  return { ok: false, text: 'the audit did not answer' };
}

async function monolithTarget(pgUrl: string): Promise<Target> {
  const db = await freshDatabase(pgUrl);
  const { child, match } = await startNode(['bench/monolith.ts'], { PORT: '0', DATABASE_URL: db.url }, /LISTENING (\d+)/);
  const baseUrl = `http://127.0.0.1:${match[1]}`;
  return {
    name: 'monolith (express + pg)',
    baseUrl,
    database: db.name,
    adminDbUrl: db.url,
    fund: grantFunder,
    processes: [{ label: 'monolith', pid: child.pid! }],
    natsPid: null,
    async audit() {
      const body = (await (await fetch(`${baseUrl}/audit`)).json()) as { ok: boolean };
      return { ok: body.ok, text: `${body.ok ? 'clean' : 'FAILED'} ${JSON.stringify(body)}` };
    },
    async stop() {
      await stopChild(child);
      await db.drop();
    },
  };
}

/**
 * BENCH_BEFORE=<dir>: a checkout of the code before a change (e.g. `git archive <commit> | tar -x -C dir`,
 * node_modules linked): its one-process and distributed targets run in the same run, by the same client.
 */
const BEFORE = process.env.BENCH_BEFORE ? path.resolve(process.env.BENCH_BEFORE) : null;
/** BENCH_BEFORE_NODE=<node binary>: the runtime the before code runs on (default: this one), e.g. Node 20's. */
const BEFORE_NODE = process.env.BENCH_BEFORE_NODE || process.execPath;

/** The operator token of the targets the bench starts itself (the cluster makes its own). */
const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123456789abcdef';

/** What a `src/main.ts` the bench starts itself gets: its store and data, quiet logs, no rate limit, no seed. */
function marketEnv(dataDir: string, databaseUrl: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    SEED_ON_EMPTY: 'false',
    RATE_LIMIT_PER_MINUTE: '0',
    NODE_ENV: 'development',
  };
}

async function oneProcessTarget(pgUrl: string, root = ROOT, suffix = ''): Promise<Target> {
  const db = await freshDatabase(pgUrl);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-bench-one-'));
  const port = 3800 + Math.floor(Math.random() * 90);
  const env = { ...marketEnv(dataDir, db.url), PORT: String(port), TRANSPORTER: '', SERVICES: '' };
  const { child } = await startNode(['src/main.ts'], env, /listening on http:\/\/localhost:(\d+)/, root);
  const baseUrl = `http://127.0.0.1:${port}`;
  await experimentSql(db.url);
  return {
    name: `one process (PostgreSQL, in-process bus)${suffix}`,
    baseUrl,
    database: db.name,
    adminDbUrl: db.url,
    processes: [{ label: 'marketplace', pid: child.pid! }],
    natsPid: null,
    audit: () => adminAudit(baseUrl, BENCH_ADMIN_TOKEN),
    async stop() {
      await stopChild(child);
      fs.rmSync(dataDir, { recursive: true, force: true });
      await db.drop();
    },
  };
}

/**
 * BENCH_EXPERIMENT_SQL: run once against the one-process target's database after its migrations, before
 * the load — to bound what a schema feature costs (round 5 dropped every secondary index, foreign key and
 * the balance trigger of the purchase path's tables this way). An experiment, never a result to report as
 * the project's: the guarantees it removes are the project's.
 */
async function experimentSql(url: string): Promise<void> {
  const sql = process.env.BENCH_EXPERIMENT_SQL;
  if (!sql) return;
  const client = new Client(url);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * An experiment, run only when BENCH_TARGETS names it: the services grouped into fewer processes over a
 * private nats-server, to measure what crossing fewer processes on the purchase path would buy (round 5).
 * Not the production shape: no bus users and one database role for every process (the cluster's least
 * privilege has one NATS user per process); its "every service alone" row is the same harness unsplit, the
 * fair comparison for the grouped rows.
 */
async function groupedTarget(pgUrl: string, groups: ServiceName[][]): Promise<Target> {
  const db = await freshDatabase(pgUrl);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-bench-grouped-'));
  const nats = await startPrivateNats({ dir: path.join(dataDir, 'nats') });
  const port = await freePort();
  const children: Array<{ label: string; child: ChildProcess }> = [];
  const stop = async () => {
    for (const c of children.reverse()) await stopChild(c.child);
    await nats.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await db.drop();
  };
  try {
    // One at a time, the gateway's group first: each process runs its services' migrations.
    for (const group of groups) {
      const env = {
        ...marketEnv(dataDir, db.url),
        PORT: group.includes('gateway') ? String(port) : '0',
        TRANSPORTER: nats.url,
        NAMESPACE: 'bench-grouped',
        SERVICES: group.join(','),
      };
      const { child } = await startNode(['src/main.ts'], env, /services: /);
      children.push({ label: group.join('+'), child });
    }
    const baseUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 60 && !(await fetch(`${baseUrl}/readyz`).catch(() => null))?.ok; i++) await sleep(500);
    return {
      name: `experiment: ${groups.length < ALL_SERVICES.length ? groups.filter((g) => g.length > 1).map((g) => g.join('+')).join(', ') + ' in one process' : 'every service alone'}`,
      baseUrl,
      database: db.name,
      adminDbUrl: db.url,
      processes: children.map((c) => ({ label: c.label, pid: c.child.pid! })),
      natsPid: natsServerPid(nats.port),
      audit: () => adminAudit(baseUrl, BENCH_ADMIN_TOKEN),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The experiment's groupings (BENCH_TARGETS=experiment runs all three). */
function groupings(): Array<[string, ServiceName[][]]> {
  const alone = (except: ServiceName[]) => ALL_SERVICES.filter((s) => !except.includes(s)).map((s) => [s]);
  return [
    ['experiment split', alone([])],
    ['experiment gateway+escrow+ledger', [['gateway', 'escrow', 'ledger'], ...alone(['gateway', 'escrow', 'ledger'])]],
    ['experiment escrow+ledger', [['escrow', 'ledger'], ...alone(['escrow', 'ledger'])]],
  ];
}

async function distributedTarget(pgUrl: string, replicas: number, root = ROOT, suffix = ''): Promise<Target> {
  const server = new URL(pgUrl);
  server.pathname = '/postgres';
  const start: typeof startCluster = root === ROOT ? startCluster : (await import(path.join(root, 'packages/cluster'))).startCluster;
  const cluster: Cluster = await start({
    fresh: true,
    baseEnv: root === BEFORE ? { ...process.env, CLUSTER_NODE_BINARY: BEFORE_NODE } : process.env,
    postgresUrl: server.toString(),
    port: 0,
    replicasOf: replicas > 1 ? ({ escrow: replicas, ledger: replicas } as Partial<Record<ServiceName, number>>) : undefined,
    env: {
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${PRELOAD}`,
      BENCH_COUNT_DIR: COUNT_DIR,
    },
  });
  const processes: TargetProcess[] = [];
  for (const [service, list] of Object.entries(cluster.processes)) for (const p of list) processes.push({ label: service, pid: p.child.pid! });
  const baseUrl = cluster.gateways[0];
  return {
    name: `distributed (${replicas}× escrow+ledger)${suffix}`,
    baseUrl,
    database: new URL(cluster.adminDatabaseUrl).pathname.slice(1),
    adminDbUrl: cluster.adminDatabaseUrl,
    processes,
    natsPid: natsServerPid(cluster.nats.port),
    audit: () => adminAudit(baseUrl, cluster.adminToken),
    stop: () => cluster.stop(),
  };
}

// ------------------------------------------------------------------------------------------- measure

async function measure(target: Target, seconds: number): Promise<TargetResult> {
  const procs = (): TargetProcess[] => {
    const pg = postgresPids(target.database);
    return [
      ...target.processes,
      ...pg.backends.map((pid) => ({ label: 'postgres (its backends)', pid })),
      ...pg.background.map((pid) => ({ label: 'postgres (background)', pid })),
      ...(target.natsPid ? [{ label: 'nats-server', pid: target.natsPid }] : []),
      { label: 'bench client', pid: process.pid },
    ];
  };
  const prepared = await prepareLifecycles({ baseUrl: target.baseUrl, fund: target.fund });
  // Settle: outbox events of the set-up delivered, PostgreSQL's counters published.
  await sleep(PGSTAT_FLUSH_MS);

  // Idle.
  const pg0 = await pgCounts(target.adminDbUrl);
  const m0 = await messageCounts(target.processes);
  const idle = new CpuWindow(procs);
  idle.start();
  await sleep(IDLE_SECONDS * 1000);
  const idleCpu = idle.stop();
  const m1 = await messageCounts(target.processes);
  const pg1 = await pgCounts(target.adminDbUrl);

  // Load.
  const http0 = httpCalls.count;
  const load = new CpuWindow(procs);
  load.start();
  const rows = await runLifecycles(prepared, seconds);
  const loadCpu = load.stop();
  const http1 = httpCalls.count;
  const m2 = await messageCounts(target.processes);
  const t2 = Date.now();
  await sleep(PGSTAT_FLUSH_MS);
  const pg3 = await pgCounts(target.adminDbUrl);
  const afterSeconds = (Date.now() - t2) / 1000 + 0.3;
  const audit = await target.audit();

  const n = Math.max(1, rows[0]?.count ?? 1);
  const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
  const idleMsg = diff(m0, m1);
  const idleTables = diff(pg0.tables, pg1.tables);
  const idleXacts = pg1.xacts - pg0.xacts - 2; // our own two statements
  const loadMsg = diff(m1, m2);
  // PostgreSQL's counters include the idle activity of the ~12 s after the window: subtracted at the idle rate.
  const tail = afterSeconds / idle.seconds;
  const loadTables = diff(pg1.tables, pg3.tables);
  const rowsPer: Record<string, number> = {};
  let rowsWritten = 0;
  for (const [k, v] of Object.entries(loadTables)) {
    const net = v - (idleTables[k] ?? 0) * tail;
    if (Math.abs(net) < 0.5) continue;
    rowsPer[`rows: ${k}`] = round(net / n);
    rowsWritten += net;
  }
  const xacts = pg3.xacts - pg1.xacts - 2 - idleXacts * tail;
  const budget: Record<string, number> = {
    httpRequests: round((http1 - http0) / n),
    moleculerRequests: round((loadMsg.moleculerRequests ?? 0) / n),
    sqlRoundTrips: round((loadMsg.sql ?? 0) / n),
    // Per statement, how many of its process's statements were in flight as it started (itself included).
    sqlInFlightAtStart: round((loadMsg.sqlInFlight ?? 0) / Math.max(1, loadMsg.sql ?? 0)),
    pgTransactions: round(xacts / n),
    rowsWritten: round(rowsWritten / n),
    natsMessagesOut: round((loadMsg.natsOut ?? 0) / n),
    natsMessagesIn: round((loadMsg.natsIn ?? 0) / n),
    jetStreamPublishes: round((loadMsg.jsPublish ?? 0) / n),
    jetStreamPulls: round((loadMsg.jsFetch ?? 0) / n),
    jetStreamAcks: round((loadMsg.jsAck ?? 0) / n),
    ...rowsPer,
  };
  const idleBudget: Record<string, number> = {
    sqlRoundTrips: round((idleMsg.sql ?? 0) / idle.seconds),
    pgTransactions: round(idleXacts / idle.seconds),
    natsMessagesOut: round((idleMsg.natsOut ?? 0) / idle.seconds),
    natsMessagesIn: round((idleMsg.natsIn ?? 0) / idle.seconds),
    jetStreamPulls: round((idleMsg.jsFetch ?? 0) / idle.seconds),
    moleculerRequests: round((idleMsg.moleculerRequests ?? 0) / idle.seconds),
  };
  const cpuPerLifecycle: Record<string, number> = {};
  let total = 0;
  for (const [label, ms] of loadCpu) {
    cpuPerLifecycle[label] = round(ms / n);
    total += ms;
  }
  cpuPerLifecycle.total = round(total / n);
  const idleCpuPerSecond: Record<string, number> = {};
  let idleTotal = 0;
  for (const [label, ms] of idleCpu) {
    idleCpuPerSecond[label] = round(ms / idle.seconds, 1);
    if (label !== 'bench client') idleTotal += ms;
  }
  idleCpuPerSecond['total (without the bench client)'] = round(idleTotal / idle.seconds, 1);
  return { target: target.name, rows, lifecycles: n, cpuPerLifecycle, idleCpuPerSecond, budget, idleBudget, audit };
}

/** Runs the lifecycle bench against each target in turn (one at a time: they share the two cores). */
export async function lifecycleTargets(pgUrl: string, seconds: number, opts: { replicas2?: boolean; log?: (s: string) => void } = {}): Promise<TargetResult[]> {
  const log = opts.log ?? ((s: string) => console.log(s));
  const makers: Array<[string, () => Promise<Target>]> = [
    ['monolith', () => monolithTarget(pgUrl)],
    ['one process', () => oneProcessTarget(pgUrl)],
    ['distributed 1×', () => distributedTarget(pgUrl, 1)],
    ...(BEFORE
      ? ([
          ['one process before', () => oneProcessTarget(pgUrl, BEFORE, ' BEFORE')],
          ['distributed 1× before', () => distributedTarget(pgUrl, 1, BEFORE, ' BEFORE')],
        ] as Array<[string, () => Promise<Target>]>)
      : []),
    ...groupings().map(([name, groups]) => [name, () => groupedTarget(pgUrl, groups)] as [string, () => Promise<Target>]),
    ...(opts.replicas2 ? ([['distributed 2×', () => distributedTarget(pgUrl, 2)]] as Array<[string, () => Promise<Target>]>) : []),
  ];
  const only = process.env.BENCH_TARGETS?.split(',').map((s) => s.trim());
  const results: TargetResult[] = [];
  for (const [name, make] of makers) {
    if (only && !only.some((o) => name === o || (name.startsWith(o) && !name.endsWith('before')) || (o === 'before' && name.endsWith('before')))) continue;
    // Experiments run only when named.
    if (name.startsWith('experiment') && !only?.some((o) => name.startsWith(o))) continue;
    log(`lifecycles: starting ${name}`);
    const target = await make();
    try {
      const r = await measure(target, seconds);
      log(`lifecycles: ${name}: ${r.rows[0]?.perSecond}/s, audit ${r.audit.text}`);
      results.push(r);
    } finally {
      await target.stop();
    }
  }
  fs.rmSync(COUNT_DIR, { recursive: true, force: true });
  return results;
}

/** The tables: every lifecycle row with its ratio to the monolith; CPU per lifecycle; idle CPU; the message budget. */
export function printTargets(results: TargetResult[]): void {
  const mono = results.find((r) => r.target.startsWith('monolith'));
  const ratio = (v: number, ref: number | undefined) => (ref ? (v / ref).toFixed(2) : '—');
  console.log('\nPurchase lifecycles, same client, same run (ratio = ÷ the monolith; for latencies, × the monolith)');
  console.log(`${'target / row'.padEnd(62)}${'count'.padStart(7)}${'per s'.padStart(9)}${'ratio'.padStart(7)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'p99 ×'.padStart(7)}`);
  for (const r of results) {
    r.rows.forEach((row, i) => {
      const ref = mono?.rows[i];
      console.log(
        `${`${r.target}: ${row.name.trim()}`.slice(0, 61).padEnd(62)}${String(row.count).padStart(7)}${String(row.perSecond).padStart(9)}${ratio(row.perSecond, ref?.perSecond).padStart(7)}${String(row.p50Ms).padStart(9)}${String(row.p99Ms).padStart(9)}${ratio(row.p99Ms, ref?.p99Ms).padStart(7)}`,
      );
    });
    console.log(`${''.padEnd(4)}ledger audit: ${r.audit.text}`);
  }
  const table = (title: string, pick: (r: TargetResult) => Record<string, number>) => {
    console.log(`\n${title}`);
    const keys = [...new Set(results.flatMap((r) => Object.keys(pick(r))))];
    console.log(`${''.padEnd(34)}${results.map((r) => r.target.slice(0, 22).padStart(24)).join('')}`);
    for (const k of keys) console.log(`${k.slice(0, 33).padEnd(34)}${results.map((r) => String(pick(r)[k] ?? '').padStart(24)).join('')}`);
  };
  table('CPU ms per lifecycle, per process (user+system; postgres = its backends, background = the server’s own processes)', (r) => r.cpuPerLifecycle);
  table(`Idle CPU ms per second, per process (${IDLE_SECONDS} s after start-up and set-up, no load)`, (r) => r.idleCpuPerSecond);
  table('Message budget per lifecycle (counted in every process; PostgreSQL counters for transactions and rows)', (r) => r.budget);
  table('Idle messages per second', (r) => r.idleBudget);
}
