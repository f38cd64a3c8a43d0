/**
 * Ledger throughput: postings per second through broker.call on a broker running just the ledger
 * (PGlite in memory when databaseUrl is null, else that PostgreSQL database). Two scenarios:
 * a gas-purchase credit (one transaction, 2 postings) and a purchase's hold + settle (two
 * transactions, 5 postings). Latency is per call (credit) or per hold+settle pair.
 */
import { createBroker } from '../../packages/broker';
import { loadConfig } from '../../packages/config';
import { base62 } from '../../packages/ids';
import ledger from '../../services/ledger/ledger.service';

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
      await broker.call('ledger.creditGasPurchase', { key: `checkout:${sessionId}`, agentId: `agt_bench${base62(4)}`, gas: 500, sessionId, packId: 'starter' });
    });
    rows.push(summarise('ledger credit (2 postings)', credit, 2));

    // Each worker is its own buyer with a large balance; a hold and its settle per iteration.
    const buyers = Array.from({ length: concurrency }, () => `agt_buyer${base62(8)}`);
    for (const b of buyers) {
      const sessionId = `cko_${base62(16)}`;
      await broker.call('ledger.creditGasPurchase', { key: `checkout:${sessionId}`, agentId: b, gas: 1_000_000_000, sessionId, packId: 'fleet' });
    }
    let next = 0;
    const holdSettle = await run(opts.seconds, concurrency, async () => {
      const buyerId = buyers[next++ % buyers.length];
      const purchaseId = `pur_${base62(16)}`;
      await broker.call('ledger.hold', { key: `purchase:${purchaseId}:hold`, purchaseId, buyerId, sellerId: `agt_seller${base62(3)}`, amountGas: 250 });
      await broker.call('ledger.settle', { key: `purchase:${purchaseId}:settle`, purchaseId });
    });
    rows.push(summarise('ledger hold+settle (5 postings)', holdSettle, 5));

    const audit = (await broker.call('ledger.audit')) as { ok: boolean };
    if (!audit.ok) throw new Error('ledger audit failed after the benchmark');
  } finally {
    await broker.stop();
  }
  return rows;
}

function summarise(name: string, r: { count: number; latencies: number[]; elapsedMs: number }, postingsPerOp: number): LedgerBenchRow {
  const postings = r.count * postingsPerOp;
  return {
    name: `${name}: postings/s`,
    count: postings,
    perSecond: Math.round((postings / r.elapsedMs) * 1000),
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
