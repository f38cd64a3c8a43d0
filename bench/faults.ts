/**
 * `npm run bench:faults`: the fault scenario (bench/scenarios/faults.ts) with its timing figures —
 * seconds of failed calls and settlement drain per fault, then the NATS node loss on a 3-node NATS cluster
 * (settlement lag, escrow's slowest write), then a private PostgreSQL server restarted, stopped 30 s and frozen
 * 30 s (BENCH_DATABASE_OUTAGE_S) under keyed, retried load. Needs PostgreSQL (BENCH_DATABASE_URL or
 * TEST_DATABASE_URL) and a nats-server binary (it runs its own, on a free port).
 */
import fs from 'node:fs';
import path from 'node:path';

// The testkit declares jest suites at import; outside jest they are not needed.
const g = globalThis as any;
g.describe ??= Object.assign(() => undefined, { skip: () => undefined });

async function main(): Promise<void> {
  const pgUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (!pgUrl) {
    console.log('bench:faults needs BENCH_DATABASE_URL or TEST_DATABASE_URL (PostgreSQL); skipped');
    return;
  }
  const { runFaultScenario, printFaultTable } = await import('./scenarios/faults');
  const { privatePostgresAvailable } = await import('../packages/cluster/postgres-server');
  const run = await runFaultScenario({ pgUrl, log: (l) => console.log(`[faults] ${l}`) });
  // The NATS node loss runs on a cluster of its own (3 NATS nodes, streams on 3 replicas).
  const nodeLoss = await runFaultScenario({ pgUrl, natsNodeLossS: Number(process.env.BENCH_NATS_NODE_LOSS_S || 20), log: (l) => console.log(`[faults] ${l}`) });
  run.rows.push(...nodeLoss.rows);
  run.observations.natsNodeLoss = nodeLoss.observations;
  // The database faults run on a private PostgreSQL server of their own (restarted, stopped, frozen).
  if (privatePostgresAvailable()) {
    const seconds = Number(process.env.BENCH_DATABASE_OUTAGE_S || 30);
    const db = await runFaultScenario({ pgUrl, databaseFaults: { outageS: seconds, freezeS: seconds }, log: (l) => console.log(`[faults] ${l}`) });
    run.rows.push(...db.rows);
  } else console.log('[faults] no PostgreSQL binaries (PG_BIN_DIR) for a private server: the database faults are skipped');
  printFaultTable(run.rows);
  console.log('\nobservations:', JSON.stringify(run.observations, null, 2));
  const out = path.join(__dirname, 'faults-results.json');
  fs.writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), ...run }, null, 2));
  console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error('bench:faults failed:', err);
    process.exit(1);
  },
);
