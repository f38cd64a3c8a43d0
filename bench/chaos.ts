/**
 * `npm run bench:chaos`: two replicas of every service under the fault scenario's keyed, retried load while
 * random processes (gateways included) are killed -9, one every BENCH_CHAOS_EVERY_S seconds (default 10),
 * BENCH_CHAOS_KILLS times (default 30), each replaced a second later. Prints the row — the p99 and slowest
 * answer of every call, failed calls — after every purchase completed, balances exact and the reconciling
 * audit clean. Needs PostgreSQL (BENCH_DATABASE_URL or TEST_DATABASE_URL) and a nats-server binary.
 */
const g = globalThis as any;
g.describe ??= Object.assign(() => undefined, { skip: () => undefined });

async function main(): Promise<void> {
  const pgUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (!pgUrl) {
    console.log('bench:chaos needs BENCH_DATABASE_URL or TEST_DATABASE_URL (PostgreSQL); skipped');
    return;
  }
  const { runFaultScenario, printFaultTable } = await import('./scenarios/faults');
  const chaos = { kills: Number(process.env.BENCH_CHAOS_KILLS || 30), everyS: Number(process.env.BENCH_CHAOS_EVERY_S || 10) };
  const run = await runFaultScenario({ pgUrl, chaos, log: (l) => console.log(`[chaos] ${l}`) });
  printFaultTable(run.rows);
  for (const r of run.rows) console.log(`\n${r.fault}: p99 ${r.p99Ms} ms, slowest ${r.maxMs} ms, ${r.failedCalls} failed of ${r.calls} calls, ${r.lifecycles} lifecycles`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error('bench:chaos failed:', err);
    process.exit(1);
  },
);
