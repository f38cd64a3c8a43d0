/**
 * `npm run audit:ledger`: checks every ledger invariant and prints a readable report.
 * 1. Asks the running marketplace (GET /api/admin/ledger/audit; MARKET_BASE_URL or PORT, and
 *    ADMIN_TOKEN or the local DATA_DIR/operator-token).
 * 2. If no server answers and DATABASE_URL (or TRANSPORTER) is set, runs the ledger's audit in this process: over
 *    the bus when TRANSPORTER is set (the running ledger and escrow answer), else by starting the
 *    ledger service alone against the database (the open-holds cross-check is then skipped:
 *    starting escrow here would let its outbox relay hand events to the wrong consumers).
 * `-- --reconcile` also reconciles the ledger with payments and escrow (every gas credit with a paid checkout,
 * every settled or voided hold with escrow's purchase and its split, every cash-out debit with its payout,
 * every referral bonus with escrow's referral); `--grace-seconds=N` (default 300, or AUDIT_GRACE_SECONDS) is how
 * long an item may wait for its counterpart before it counts as a violation. Run against the database alone,
 * only the ledger is started, so the reconciliation cannot run: its checks are skipped and the exit code is 2.
 * Exit codes: 0 clean, 1 violations found, 2 the audit could not run (or a reconciliation check was skipped).
 */
import type { AnyServiceSchema } from '../packages/runtime';
import { adminRequest, OperatorError, operatorTarget } from '../packages/operator-client';
import { createBroker } from '../packages/broker';
import { ConfigError, loadConfig } from '../packages/config';
import { base62 } from '../packages/ids';
import { auditMoney, DEFAULT_GRACE_MS, type AuditOptions, type AuditReport } from '../packages/ledger-audit';
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

/** --reconcile and --grace-seconds=N (or AUDIT_GRACE_SECONDS). */
export function auditOptionsOf(argv: string[], env: NodeJS.ProcessEnv = process.env): AuditOptions {
  const reconcile = argv.includes('--reconcile');
  const flag = argv.find((a) => a.startsWith('--grace-seconds='))?.slice('--grace-seconds='.length);
  const raw = flag ?? env.AUDIT_GRACE_SECONDS;
  const graceSeconds = raw === undefined || raw === '' ? DEFAULT_GRACE_MS / 1000 : Number(raw);
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0) throw new OperatorError(`--grace-seconds must be a whole number of seconds, not "${raw}".`);
  const unknown = argv.filter((a) => a !== '--reconcile' && !a.startsWith('--grace-seconds='));
  if (unknown.length) throw new OperatorError(`Unknown argument(s): ${unknown.join(' ')} (use --reconcile and --grace-seconds=N).`);
  return { reconcile, graceMs: graceSeconds * 1000 };
}

/** 0 clean, 1 violations, 2 a reconciliation the operator asked for could not run. */
function exitCodeOf(report: AuditReport, options: AuditOptions): number {
  if (!report.ok) return 1;
  if (options.reconcile && report.checks.some((c) => c.skipped)) {
    console.log('The reconciliation did not run in full (see SKIP above): run it against the running marketplace.');
    return 2;
  }
  return 0;
}

async function viaDatabase(options: AuditOptions): Promise<AuditReport | null> {
  let config;
  try {
    config = loadConfig({ ...process.env, SWEEP_INTERVAL_MS: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', SERVICES: undefined });
  } catch (err) {
    if (err instanceof ConfigError) throw new OperatorError(`Configuration error: ${err.message}`);
    throw err;
  }
  if (!config.databaseUrl && !config.transporter) return null;
  const services: AnyServiceSchema[] = config.transporter ? [] : [ledgerService];
  const broker = createBroker({ config, services, brokerOptions: { nodeID: `audit-ledger-${base62(6)}` } });
  await broker.start();
  try {
    await broker.waitForServices(['ledger'], 15_000);
    return await auditMoney((action, params = {}) => broker.call(action, params, { timeout: 120_000 }), options);
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<number> {
  let options: AuditOptions;
  try {
    options = auditOptionsOf(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const target = operatorTarget();
  const query = options.reconcile ? `?reconcile=1&graceSeconds=${options.graceMs! / 1000}` : '';
  let httpError: string;
  try {
    const report = await adminRequest<AuditReport>(target, 'GET', `/ledger/audit${query}`);
    print(report, target.baseUrl);
    return exitCodeOf(report, options);
  } catch (err) {
    if (!(err instanceof OperatorError)) throw err;
    httpError = err.message;
  }
  try {
    const report = await viaDatabase(options);
    if (report) {
      print(report, process.env.TRANSPORTER ? 'over the bus' : 'directly against DATABASE_URL');
      return exitCodeOf(report, options);
    }
  } catch (err) {
    console.error(`Cannot run the audit against DATABASE_URL: ${(err as Error).message}`);
    return 2;
  }
  console.error(`Cannot run the ledger audit: ${httpError}`);
  console.error('Start the marketplace (npm start) or set DATABASE_URL to audit the database directly.');
  return 2;
}

if (require.main === module) {
  main()
    .then((code) => process.exit(code))
    .catch((err) => {
      console.error(`Ledger audit failed to run: ${err?.message ?? err}`);
      process.exit(2);
    });
}
