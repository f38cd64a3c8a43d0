/**
 * `npm run bench`: starts the marketplace (its own process, embedded defaults in a temp data dir),
 * drives it with autocannon, and prints a table + writes bench/results.json.
 * Scenarios: whoami vs a bare express JSON endpoint (the reference) and their ratio, ledger transactions
 * with a pgbench-equivalent reference and ratios on PostgreSQL (PGlite, and
 * PostgreSQL when BENCH_DATABASE_URL or TEST_DATABASE_URL is set), search over many listings,
 * full purchase lifecycles embedded (PGlite) and — with a PostgreSQL URL — against three targets driven by
 * the same client in the same run (bench/targets.ts): the lean monolith reference (bench/monolith.ts), the
 * marketplace in one process on PostgreSQL, and distributed through packages/cluster (one process per
 * service, private NATS; 1× and 2× escrow+ledger), each with ratios to the monolith, CPU per lifecycle and
 * idle CPU per process, the message budget per lifecycle and the ledger audit.
 * BENCH_SECONDS (default 5) sets each run's length; BENCH_LIFECYCLE_PAIRS (default 32) the concurrent
 * buyer/seller pairs; BENCH_IDLE_SECONDS (default 30) the idle measurement.
 * Quick mode: BENCH_ONLY=lifecycle — only monolith, one process and distributed 1× (a few minutes on 2
 * cores with BENCH_SECONDS=5); BENCH_TARGETS=monolith,distributed picks targets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { lifecycleTargets, printTargets, type TargetResult } from './targets';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PG_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || null;

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

function writeResults(file: string, rows: BenchRow[], targets: TargetResult[]): void {
  const out = path.join(__dirname, file);
  // results.json rows are {name, perSecond, p50Ms, p99Ms}; counts and notes are in the printed table.
  const resultRows = rows.map(({ name, perSecond, p50Ms, p99Ms }) => ({ name, perSecond, p50Ms, p99Ms }));
  fs.writeFileSync(
    out,
    JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, connections: CONNECTIONS, cores: os.cpus().length, rows: resultRows, lifecycleTargets: targets }, null, 2),
  );
  console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'lifecycle' || process.env.BENCH_ONLY === 'capacity') {
    if (!PG_URL) {
      console.log('BENCH_ONLY=lifecycle needs a PostgreSQL URL (BENCH_DATABASE_URL/TEST_DATABASE_URL)');
      process.exit(1);
    }
    console.log(`bench (quick): lifecycles only, ${SECONDS}s per target, ${os.cpus().length} cores`);
    const targets = await lifecycleTargets(PG_URL, SECONDS, { replicas2: process.env.BENCH_ONLY === 'capacity' });
    printTargets(targets);
    writeResults('lifecycle-results.json', [], targets);
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

  // The lifecycle targets: monolith reference, one process on PostgreSQL, distributed 1× and 2×.
  const targets = PG_URL ? await lifecycleTargets(PG_URL, SECONDS, { replicas2: true }) : [];

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
  printTargets(targets);
  writeResults('results.json', rows, targets);
  process.exit(0);
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

async function freshDatabase(baseUrl: string): Promise<string> {
  const { createTestDatabase } = await import('../test/kit/database');
  // Bench databases are left for inspection; they are small and named t_<random>.
  return (await createTestDatabase(baseUrl)).url;
}

main().catch((err) => {
  console.error('bench failed:', err);
  process.exit(1);
});
