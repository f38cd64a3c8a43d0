/**
 * Database faults under load (issue #38): the cluster on a private PostgreSQL server (packages/cluster/
 * postgres-server.ts: its own data directory and port, created and dropped here, so the shared one keeps
 * running), a retrying client driving purchase → deliver → confirm with Idempotency-Keys. The server is
 * restarted (fast shutdown), stopped 30 s and frozen 30 s (SIGSTOP: connections open, nothing answers).
 * Each time: every call that failed was answered 503 with Retry-After (never 500, never no answer), every
 * step ends done after retries, no retried step answered 409 after it had succeeded, every balance is exact
 * and the reconciling ledger audit is clean. Timing is reported (`npm run bench:faults`), not asserted.
 */
import { describeCluster } from '../kit';
import { privatePostgresAvailable } from '../../packages/cluster/postgres-server';
import { printFaultTable, runFaultScenario } from '../../bench/scenarios/faults';

const describeIf = privatePostgresAvailable() ? describeCluster : describe.skip;
if (!privatePostgresAvailable()) console.log('database-outage.test: no PostgreSQL binaries (PG_BIN_DIR) to start a private server; skipped');

describeIf('database faults: a private PostgreSQL restarted, stopped and frozen under load', () => {
  it('answers 503 + Retry-After while it lasts, loses nothing, and a retry gets the first answer', async () => {
    const run = await runFaultScenario({ pgUrl: '', databaseFaults: { outageS: 30, freezeS: 30 }, log: (l) => process.stdout.write(`[db-faults] ${l}\n`) });
    printFaultTable(run.rows);
    expect(run.rows).toHaveLength(3);
    for (const r of run.rows) {
      const failedWithoutAnswer = r.failedCalls - Object.values(r.failedByStatus ?? {}).reduce((a, b) => a + b, 0);
      expect({ fault: r.fault, progressed: r.lifecycles > 0, statuses: Object.keys(r.failedByStatus ?? {}), failedWithoutAnswer, withoutRetryAfter: r.withoutRetryAfter, conflictsAfterSuccess: r.conflictsAfterSuccess }).toEqual({
        fault: r.fault,
        progressed: true,
        statuses: r.failedCalls ? ['503'] : [],
        failedWithoutAnswer: 0,
        withoutRetryAfter: 0,
        conflictsAfterSuccess: 0,
      });
    }
    // The outage and the freeze were noticed by callers (otherwise the fault was not injected).
    expect(run.rows[1].failedCalls + run.rows[2].failedCalls).toBeGreaterThan(0);
  }, 900_000);
});
