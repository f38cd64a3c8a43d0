/**
 * `npm run bench`: starts the marketplace (its own process, embedded defaults in a temp data dir),
 * drives it with autocannon, and prints a table + writes bench/results.json.
 * Scenarios: whoami vs a bare express JSON endpoint (the reference) and their ratio, ledger transactions
 * with a pgbench-equivalent reference and ratios on PostgreSQL (PGlite, and
 * PostgreSQL when BENCH_DATABASE_URL or TEST_DATABASE_URL is set), search over many listings,
 * full purchase lifecycles embedded and — with a PostgreSQL URL and BENCH_NATS_URL or TEST_NATS_URL —
 * distributed (one process per service over NATS, with whoami and its ratio there too). BENCH_SECONDS
 * (default 5) sets each run's length; BENCH_LIFECYCLE_PAIRS (default 32) the concurrent buyer/seller pairs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PG_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || null;
const NATS_URL = process.env.BENCH_NATS_URL || process.env.TEST_NATS_URL || null;
const SERVICES = (process.env.BENCH_SERVICES ?? 'ledger,escrow,agents,listings,payments,support,notifications,gateway').split(',');

export interface BenchRow {
  name: string;
  count: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  note?: string;
}

function startProcess(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    // BENCH_NODE_ARGS: extra node flags for every spawned process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
    const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d.toString()));
    // BENCH_LOG_DIR: keep every process's log (to find the cause of a failed call after the run).
    if (process.env.BENCH_LOG_DIR) {
      const log = fs.createWriteStream(path.join(process.env.BENCH_LOG_DIR, `${path.basename(args[0])}-${env.SERVICES ?? 'all'}-${process.hrtime.bigint()}.log`));
      child.stdout!.pipe(log);
      child.stderr!.pipe(log);
    }
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`)));
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

async function cannon(name: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<BenchRow> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const non2xx = result.non2xx + result.errors;
  return {
    name,
    count: result.requests.total,
    perSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    ...(non2xx ? { note: `${non2xx} non-2xx/errors` } : {}),
  };
}

async function optionalScenario<T>(file: string, exportName: string): Promise<T | null> {
  const full = path.join(__dirname, 'scenarios', `${file}.ts`);
  if (!fs.existsSync(full)) return null;
  const mod = await import(full);
  return (mod[exportName] as T) ?? null;
}

function printTable(rows: BenchRow[]): void {
  const header = ['scenario', 'count', 'per second', 'p50 ms', 'p99 ms', 'note'];
  const lines = rows.map((r) => [r.name, String(r.count), String(r.perSecond), String(r.p50Ms), String(r.p99Ms), r.note ?? '']);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cols: string[]) => cols.map((c, i) => (i === 0 || i === 5 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log('\n' + fmt(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(fmt(l));
}

/** BENCH_ONLY=capacity: just the distributed runs (1 and 2 replicas of escrow and ledger) and CPU per service. */
async function capacityOnly(): Promise<void> {
  if (!PG_URL || !NATS_URL) {
    console.log('BENCH_ONLY=capacity needs a PostgreSQL URL (BENCH_DATABASE_URL/TEST_DATABASE_URL) and NATS (BENCH_NATS_URL/TEST_NATS_URL)');
    return;
  }
  const cpuRows: CpuRow[] = [];
  const rows = [...(await distributedLifecycles(PG_URL, NATS_URL, 1, cpuRows)), ...(await distributedLifecycles(PG_URL, NATS_URL, 2, cpuRows))];
  printTable(rows);
  printCpuTable(cpuRows);
  const out = path.join(__dirname, 'capacity-results.json');
  fs.writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, cores: os.cpus().length, rows, cpuPerLifecycle: cpuRows }, null, 2));
  console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'capacity') {
    await capacityOnly();
    process.exit(0);
  }
  const rows: BenchRow[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-bench-'));
  const port = 3900 + Math.floor(Math.random() * 90);
  const env = { PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SEED_ON_EMPTY: 'false', RATE_LIMIT_PER_MINUTE: '0', NODE_ENV: 'development' };
  console.log(`bench: ${SECONDS}s per run, ${CONNECTIONS} connections, ${os.cpus().length} cores`);

  const bare = await startProcess(['bench/bare-express.ts'], { PORT: '0' }, /LISTENING (\d+)/);
  const app = await startProcess(['src/main.ts'], env, /listening on http:\/\/localhost:(\d+)/);
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    rows.push(...(await whoamiRows(baseUrl, 'embedded', `http://127.0.0.1:${bare.match[1]}/json`)));

    const lifecycle = await optionalScenario<(o: { baseUrl: string; seconds: number }) => Promise<BenchRow[]>>('lifecycle', 'lifecycleBench');
    if (lifecycle) rows.push(...(await lifecycle({ baseUrl, seconds: SECONDS })).map((r) => ({ ...r, name: `${r.name} (embedded)` })));
  } finally {
    await stopProcess(app.child);
    await stopProcess(bare.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  // Capacity: the same lifecycles with one and with two replicas of escrow and ledger, in one run.
  const cpuRows: CpuRow[] = [];
  if (PG_URL && NATS_URL) {
    rows.push(...(await distributedLifecycles(PG_URL, NATS_URL, 1, cpuRows)));
    rows.push(...(await distributedLifecycles(PG_URL, NATS_URL, 2, cpuRows)));
  }

  const ledger = await optionalScenario<(o: { databaseUrl: string | null; seconds: number }) => Promise<BenchRow[]>>('ledger', 'ledgerBench');
  if (ledger) {
    rows.push(...(await ledger({ databaseUrl: null, seconds: SECONDS })).map((r) => ({ ...r, name: `${r.name} (PGlite)` })));
    if (PG_URL) rows.push(...(await ledger({ databaseUrl: await freshDatabase(PG_URL), seconds: SECONDS })).map((r) => ({ ...r, name: `${r.name} (PostgreSQL)` })));
  }
  const search = await optionalScenario<(o: { databaseUrl: string | null; listings: number; seconds: number }) => Promise<BenchRow[]>>('search', 'searchBench');
  if (search) {
    if (PG_URL) rows.push(...(await search({ databaseUrl: await freshDatabase(PG_URL), listings: 10_000, seconds: SECONDS })).map((r) => ({ ...r, name: `${r.name} (PostgreSQL, 10k listings)` })));
    else rows.push(...(await search({ databaseUrl: null, listings: 2_000, seconds: SECONDS })).map((r) => ({ ...r, name: `${r.name} (PGlite, 2k listings; set BENCH_DATABASE_URL for 10k on PostgreSQL)` })));
  }

  printTable(rows);
  printCpuTable(cpuRows);
  const out = path.join(__dirname, 'results.json');
  // results.json rows are {name, perSecond, p50Ms, p99Ms}; counts and notes are in the printed table.
  const resultRows = rows.map(({ name, perSecond, p50Ms, p99Ms }) => ({ name, perSecond, p50Ms, p99Ms }));
  fs.writeFileSync(
    out,
    JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, connections: CONNECTIONS, cores: os.cpus().length, rows: resultRows, cpuPerLifecycle: cpuRows }, null, 2),
  );
  console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
  process.exit(0);
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc; null elsewhere). */
function cpuMs(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the full line (12 and 13 after the command), in clock ticks.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/** CPU time the whole machine has been busy so far (all cores, user+nice+system+irq+softirq+steal), in ms; null off Linux. */
function machineBusyMs(): number | null {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    return ((user + nice + system + irq + softirq + steal) * 1000) / 100;
  } catch {
    return null;
  }
}

/** CPU ms used so far by every live process whose command is `comm` (postgres backends, nats-server). */
function commandCpuMs(comm: string): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== comm) continue;
      total += cpuMs(Number(pid)) ?? 0;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

export interface CpuRow {
  setup: string;
  service: string;
  replicas: number;
  cpuMsPerLifecycle: number;
}

/**
 * The same lifecycles against one process per service over NATS and PostgreSQL, with `replicas`
 * processes of escrow and ledger. Also measures each service's CPU ms per lifecycle (all its replicas).
 */
async function distributedLifecycles(pgUrl: string, natsUrl: string, replicas: number, cpuRows: CpuRow[]): Promise<BenchRow[]> {
  const lifecycle = await optionalScenario<(o: { baseUrl: string; seconds: number }) => Promise<BenchRow[]>>('lifecycle', 'lifecycleBench');
  if (!lifecycle) return [];
  const port = 3990 + Math.floor(Math.random() * 9);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-bench-dist-'));
  const env = {
    TRANSPORTER: natsUrl,
    DATABASE_URL: await freshDatabase(pgUrl),
    NAMESPACE: `bench${Date.now().toString(36)}`,
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    SEED_ON_EMPTY: 'false',
    RATE_LIMIT_PER_MINUTE: '0',
    NODE_ENV: 'development',
  };
  const setup = `${replicas}x escrow+ledger`;
  const children: Array<{ service: string; child: ChildProcess }> = [];
  try {
    // One at a time: each process compiles TypeScript on start, and the first ones create the schemas.
    // Every process listens on PORT (workers serve /readyz there): the gateway on `port`, the others one each.
    let next = port + 100;
    for (const name of SERVICES) {
      const count = name === 'escrow' || name === 'ledger' ? replicas : 1;
      for (let i = 0; i < count; i++) {
        const own = name === 'gateway' ? String(port) : String(next++);
        children.push({ service: name, child: (await startProcess(['src/main.ts'], { ...env, SERVICES: name, PORT: own }, / {2}services: /)).child });
      }
    }
    const baseUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      const r = await fetch(`${baseUrl}/readyz`).then((x) => x.json() as any).catch(() => null);
      if (r?.services && SERVICES.every((s) => r.services[s])) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    await new Promise((res) => setTimeout(res, 2_000)); // every replica discovered by the gateway
    const before = children.map((c) => cpuMs(c.child.pid));
    const machineBefore = machineBusyMs();
    const othersBefore = { postgres: commandCpuMs('postgres'), 'nats-server': commandCpuMs('nats-server'), 'bench client': cpuMs(process.pid) ?? 0 };
    const rows = await lifecycle({ baseUrl, seconds: SECONDS });
    const machineAfter = machineBusyMs();
    const othersAfter = { postgres: commandCpuMs('postgres'), 'nats-server': commandCpuMs('nats-server'), 'bench client': cpuMs(process.pid) ?? 0 };
    const after = children.map((c) => cpuMs(c.child.pid));
    const done = Math.max(1, rows[0]?.count ?? 1);
    let services = 0;
    for (const name of SERVICES) {
      let total = 0;
      let n = 0;
      children.forEach((c, i) => {
        if (c.service !== name || before[i] === null || after[i] === null) return;
        total += after[i]! - before[i]!;
        n++;
      });
      // Includes the funding calls of the bench's set-up window only marginally (they happen before `before`).
      if (n) cpuRows.push({ setup, service: name, replicas: n, cpuMsPerLifecycle: Math.round((total / done) * 100) / 100 });
      services += total;
    }
    for (const name of Object.keys(othersBefore) as Array<keyof typeof othersBefore>) {
      const used = othersAfter[name] - othersBefore[name];
      services += used;
      if (process.platform === 'linux') cpuRows.push({ setup, service: name, replicas: 0, cpuMsPerLifecycle: Math.round((used / done) * 100) / 100 });
    }
    if (machineBefore !== null && machineAfter !== null) {
      // The rest of the machine: the OS (network stack, scheduling) and anything else running.
      const rest = Math.max(0, machineAfter - machineBefore - services);
      cpuRows.push({ setup, service: 'rest', replicas: 0, cpuMsPerLifecycle: Math.round((rest / done) * 100) / 100 });
    }
    const named = rows.map((r) => ({ ...r, name: `${r.name} (distributed, ${setup})` }));
    if (replicas === 1) named.push(...(await whoamiRows(baseUrl, 'PostgreSQL + NATS')));
    // The money after the run: `npm run audit:ledger` over the bus (ledger and escrow answer), as an operator would.
    console.log(`\nledger audit after the ${setup} run (DATABASE_URL=${env.DATABASE_URL}):\n${await auditLedger(env)}`);
    return named;
  } finally {
    await Promise.all(children.map((c) => stopProcess(c.child)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function printCpuTable(rows: CpuRow[]): void {
  if (!rows.length) return;
  console.log('\nCPU per purchase lifecycle (user+system ms, all replicas of the service; "rest" = the machine’s other busy time: kernel, other processes)');
  console.log(`${'setup'.padEnd(22)}${'service'.padEnd(10)}${'replicas'.padStart(9)}${'cpu ms/lifecycle'.padStart(18)}`);
  for (const r of rows) console.log(`${r.setup.padEnd(22)}${r.service.padEnd(10)}${String(r.replicas).padStart(9)}${String(r.cpuMsPerLifecycle).padStart(18)}`);
}

/**
 * whoami through the tool router and a bare express JSON endpoint (the reference) measured back to
 * back in the same run, and their ratio. Starts its own bare express when no reference URL is given.
 */
async function whoamiRows(baseUrl: string, label: string, referenceUrl?: string): Promise<BenchRow[]> {
  const reg = await fetch(`${baseUrl}/api/agent/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'other', displayName: 'Bench' }),
  });
  const { apiKey } = (await reg.json()) as { apiKey: string };
  const bare = referenceUrl ? null : await startProcess(['bench/bare-express.ts'], { PORT: '0' }, /LISTENING (\d+)/);
  try {
    const reference = await cannon(`bare express JSON (reference, ${label} run)`, referenceUrl ?? `http://127.0.0.1:${bare!.match[1]}/json`, { hello: 1 });
    const whoami = await cannon(`whoami (tool router, ${label})`, `${baseUrl}/api/agent`, { tool: 'whoami' }, { authorization: `Bearer ${apiKey}` });
    const ratio = {
      name: `whoami / reference throughput ratio (${label})`,
      count: 0,
      perSecond: Number((whoami.perSecond / Math.max(1, reference.perSecond)).toFixed(3)),
      p50Ms: 0,
      p99Ms: 0,
    };
    return [reference, whoami, ratio];
  } finally {
    if (bare) await stopProcess(bare.child);
  }
}

/** Runs `npm run audit:ledger` against a distributed run's bus and database; its report, or why it failed. */
function auditLedger(env: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/audit-ledger.ts'], {
      cwd: ROOT,
      // No server is asked (nothing listens on port 1): the audit runs over the bus.
      env: { ...process.env, TRANSPORTER: env.TRANSPORTER, DATABASE_URL: env.DATABASE_URL, NAMESPACE: env.NAMESPACE, MARKET_BASE_URL: 'http://127.0.0.1:1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d.toString()));
    child.stderr!.on('data', (d) => (out += d.toString()));
    child.on('exit', (code) => resolve(`${out.trim()}\n(exit ${code})`));
  });
}

async function freshDatabase(baseUrl: string): Promise<string> {
  const { createTestDatabase } = await import('../test/kit/database');
  // Bench databases are left for inspection; they are small and named t_<random>.
  return (await createTestDatabase(baseUrl)).url;
}

main().catch((err) => {
  console.error('bench failed:', err);
  process.exit(1);
});
