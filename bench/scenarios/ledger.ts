/**
 * Ledger throughput: ledger transactions per second through broker.call on a broker running just the
 * ledger (PGlite in memory when databaseUrl is null, else that PostgreSQL database). Two scenarios:
 * a gas-purchase credit (one transaction, 2 postings) and a purchase's hold + settle (two
 * transactions, 5 postings). Latency is per call (credit) or per hold+settle pair.
 *
 * On PostgreSQL the same run also measures a pgbench-equivalent reference — a two-account transfer in
 * plain SQL (BEGIN; debit one account; credit another; insert a history row; COMMIT) through the same
 * driver, the same database and the same concurrency — and prints each ledger row's ratio to it, so a
 * noisy machine moves both sides alike.
 */
import { Pool } from 'pg';
import { createBroker } from '../../packages/broker';
import { loadConfig } from '../../packages/config';
import { base62 } from '../../packages/ids';
import ledger from '../../services/ledger/ledger.service';
import { LEDGER } from '../../packages/contracts/ledger';

export interface LedgerBenchRow {
  name: string;
  count: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 100) / 100;
}

async function run(seconds: number, concurrency: number, op: () => Promise<void>): Promise<{ count: number; latencies: number[]; elapsedMs: number }> {
  const latencies: number[] = [];
  const start = Date.now();
  const deadline = start + seconds * 1000;
  const worker = async () => {
    while (Date.now() < deadline) {
      const t = process.hrtime.bigint();
      await op();
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { count: latencies.length, latencies: latencies.sort((a, b) => a - b), elapsedMs: Date.now() - start };
}

export async function ledgerBench(opts: { databaseUrl: string | null; seconds: number }): Promise<LedgerBenchRow[]> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'warn',
    SWEEP_INTERVAL_MS: '0',
    ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {}),
  });
  const broker = createBroker({ config, services: [ledger], brokerOptions: { nodeID: `bench-ledger-${base62(6)}` } });
  await broker.start();
  // PGlite is one connection: more callers only queue. PostgreSQL: several agents in parallel.
  const concurrency = opts.databaseUrl ? 8 : 1;
  const rows: LedgerBenchRow[] = [];
  try {
    const credit = await run(opts.seconds, concurrency, async () => {
      const sessionId = `cko_${base62(16)}`;
      await broker.call(LEDGER.creditGasPurchase, { key: `checkout:${sessionId}`, agentId: `agt_bench${base62(4)}`, gas: 500, sessionId, packId: 'starter' });
    });
    rows.push(summarise('ledger credit (1 transaction, 2 postings)', credit, 1));

    // Each worker is its own buyer with a large balance; a hold and its settle per iteration.
    const buyers = Array.from({ length: concurrency }, () => `agt_buyer${base62(8)}`);
    for (const b of buyers) {
      const sessionId = `cko_${base62(16)}`;
      await broker.call(LEDGER.creditGasPurchase, { key: `checkout:${sessionId}`, agentId: b, gas: 1_000_000_000, sessionId, packId: 'fleet' });
    }
    let next = 0;
    const holdSettle = await run(opts.seconds, concurrency, async () => {
      const buyerId = buyers[next++ % buyers.length];
      const purchaseId = `pur_${base62(16)}`;
      await broker.call(LEDGER.hold, { key: `purchase:${purchaseId}:hold`, purchaseId, buyerId, sellerId: `agt_seller${base62(3)}`, amountGas: 250 });
      await broker.call(LEDGER.settle, { key: `purchase:${purchaseId}:settle`, purchaseId });
    });
    rows.push(summarise('ledger hold+settle (2 transactions, 5 postings)', holdSettle, 2));

    const audit = (await broker.call(LEDGER.audit)) as { ok: boolean };
    if (!audit.ok) throw new Error('ledger audit failed after the benchmark');
  } finally {
    await broker.stop();
  }
  if (opts.databaseUrl) {
    const reference = await transferReference(opts.databaseUrl, opts.seconds, concurrency);
    const ratios = rows.map((r) => ({
      name: `${r.name.replace(': transactions/s', '')} ÷ reference: ratio`,
      count: 0,
      perSecond: Number((r.perSecond / Math.max(1, reference.perSecond)).toFixed(3)),
      p50Ms: 0,
      p99Ms: 0,
    }));
    rows.push(reference, ...ratios);
  }
  return rows;
}

/** pgbench-equivalent: a two-account transfer in plain SQL, same driver, same database, same concurrency. */
async function transferReference(databaseUrl: string, seconds: number, concurrency: number): Promise<LedgerBenchRow> {
  const ACCOUNTS = 10_000;
  const pool = new Pool({ connectionString: databaseUrl, max: concurrency });
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS bench_ref;
      DROP TABLE IF EXISTS bench_ref.accounts, bench_ref.history;
      CREATE TABLE bench_ref.accounts (id int PRIMARY KEY, balance bigint NOT NULL);
      CREATE TABLE bench_ref.history (id bigserial PRIMARY KEY, from_id int NOT NULL, to_id int NOT NULL, amount bigint NOT NULL, at timestamptz NOT NULL DEFAULT now());
      INSERT INTO bench_ref.accounts SELECT g, 1000000 FROM generate_series(1, ${ACCOUNTS}) g;`);
    const r = await run(seconds, concurrency, async () => {
      const a = 1 + Math.floor(Math.random() * ACCOUNTS);
      const b = 1 + ((a + Math.floor(Math.random() * (ACCOUNTS - 1))) % ACCOUNTS);
      const [lo, hi] = a < b ? [a, b] : [b, a];
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query({ name: 'ref_debit', text: 'UPDATE bench_ref.accounts SET balance = balance - $2 WHERE id = $1', values: [lo, 5] });
        await client.query({ name: 'ref_credit', text: 'UPDATE bench_ref.accounts SET balance = balance + $2 WHERE id = $1', values: [hi, 5] });
        await client.query({ name: 'ref_history', text: 'INSERT INTO bench_ref.history (from_id, to_id, amount) VALUES ($1, $2, $3)', values: [lo, hi, 5] });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });
    return summarise('pgbench-equivalent two-account transfer (reference)', r, 1);
  } finally {
    await pool.end();
  }
}

function summarise(name: string, r: { count: number; latencies: number[]; elapsedMs: number }, transactionsPerOp: number): LedgerBenchRow {
  const transactions = r.count * transactionsPerOp;
  return {
    name: `${name}: transactions/s`,
    count: transactions,
    perSecond: Math.round((transactions / r.elapsedMs) * 1000),
    p50Ms: percentile(r.latencies, 50),
    p99Ms: percentile(r.latencies, 99),
  };
}

if (require.main === module) {
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  ledgerBench({ databaseUrl: process.env.BENCH_DATABASE_URL || null, seconds })
    .then((rows) => console.table(rows))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
