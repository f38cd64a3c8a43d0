/**
 * `npm run audit:ledger`: checks every ledger invariant and prints a readable report.
 * 1. Asks the running marketplace (GET /api/admin/ledger/audit; MARKET_BASE_URL or PORT, and
 *    ADMIN_TOKEN or the local DATA_DIR/operator-token).
 * 2. If no server answers and DATABASE_URL (or TRANSPORTER) is set, runs the ledger's audit in this process: over
 *    the bus when TRANSPORTER is set (the running ledger and escrow answer), else by starting the
 *    ledger service alone against the database (the open-holds cross-check is then skipped:
 *    starting escrow here would let its outbox relay hand events to the wrong consumers).
 * Exit codes: 0 clean, 1 violations found, 2 the audit could not run.
 */
import type { ServiceSchema } from 'moleculer';
import { adminRequest, OperatorError, operatorTarget } from '../packages/operator-client';
import { createBroker } from '../packages/broker';
import { ConfigError, loadConfig } from '../packages/config';
import { base62 } from '../packages/ids';
import { auditMoney, type AuditReport } from '../packages/ledger-audit';
import ledgerService from '../services/ledger/ledger.service';

function print(report: AuditReport, source: string): void {
  console.log(`Ledger audit (${source}) at ${report.checkedAt}`);
  for (const c of report.checks) {
    const mark = c.skipped ? 'SKIP' : c.ok ? ' OK ' : 'FAIL';
    console.log(`  [${mark}] ${c.name}: ${c.message}`);
    if (!c.ok && c.details) {
      for (const line of JSON.stringify(c.details, null, 2).split('\n')) console.log(`         ${line}`);
    }
  }
  const failed = report.checks.filter((c) => !c.ok).length;
  console.log(report.ok ? '\nClean: every invariant holds.' : `\n${failed} check(s) FAILED: the ledger needs an operator's attention.`);
}

async function viaDatabase(): Promise<AuditReport | null> {
  let config;
  try {
    config = loadConfig({ ...process.env, SWEEP_INTERVAL_MS: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', SERVICES: undefined });
  } catch (err) {
    if (err instanceof ConfigError) throw new OperatorError(`Configuration error: ${err.message}`);
    throw err;
  }
  if (!config.databaseUrl && !config.transporter) return null;
  const services: ServiceSchema[] = config.transporter ? [] : [ledgerService];
  const broker = createBroker({ config, services, brokerOptions: { nodeID: `audit-ledger-${base62(6)}` } });
  await broker.start();
  try {
    await broker.waitForServices(['ledger'], 15_000);
    return await auditMoney((action) => broker.call(action, {}, { timeout: 120_000 }));
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<number> {
  const target = operatorTarget();
  let httpError: string;
  try {
    const report = await adminRequest<AuditReport>(target, 'GET', '/ledger/audit');
    print(report, target.baseUrl);
    return report.ok ? 0 : 1;
  } catch (err) {
    if (!(err instanceof OperatorError)) throw err;
    httpError = err.message;
  }
  try {
    const report = await viaDatabase();
    if (report) {
      print(report, process.env.TRANSPORTER ? 'over the bus' : 'directly against DATABASE_URL');
      return report.ok ? 0 : 1;
    }
  } catch (err) {
    console.error(`Cannot run the audit against DATABASE_URL: ${(err as Error).message}`);
    return 2;
  }
  console.error(`Cannot run the ledger audit: ${httpError}`);
  console.error('Start the marketplace (npm start) or set DATABASE_URL to audit the database directly.');
  return 2;
}

main()
  .then((code) => process.exit(code))
  .catch((err) => {
    console.error(`Ledger audit failed to run: ${err?.message ?? err}`);
    process.exit(2);
  });
