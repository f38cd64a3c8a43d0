/** Money helpers for tests: gas credited through the real ledger, and the audit every money test ends with. */
import { base62 } from '../../packages/ids';
import { auditMoney, type AuditOptions, type AuditReport } from '../../packages/ledger-audit';

interface Caller {
  call<T = any>(action: string, params?: Record<string, unknown>): Promise<T>;
}

/**
 * Credits gas exactly as a completed checkout's credit looks in the ledger (the ledger's keyed credit),
 * without a checkout in payments: the reconciling audit reports such credits (buyGasByCard does not).
 */
export async function creditGas(app: Caller, agentId: string, gas: number, packId = 'starter'): Promise<void> {
  const sessionId = `cko_test${base62(12)}`;
  await app.call('ledger.creditGasPurchase', { key: `checkout:${sessionId}`, agentId, gas, sessionId, packId });
}

/** The money audit of the app under test (as the admin route runs it); `reconcile` adds the cross-service reconciliation. */
export function auditOf(app: Caller, options: AuditOptions = {}): Promise<AuditReport> {
  return auditMoney((action, params = {}) => app.call(action, params), options);
}

/**
 * Every ledger invariant holds (transactions sum to zero, no negative agent balance, balances equal
 * postings, …) and, when escrow runs, its open purchases match the ledger's pending holds.
 */
export async function expectLedgerClean(app: Caller): Promise<void> {
  const audit = await auditOf(app);
  expect(audit.checks.filter((c) => !c.ok)).toEqual([]);
  expect(audit.ok).toBe(true);
}

/** expectLedgerClean, and every ledger posting reconciles with payments and escrow (nothing skipped). */
export async function expectLedgerReconciled(app: Caller, options: AuditOptions = {}): Promise<AuditReport> {
  const audit = await auditOf(app, { reconcile: true, ...options });
  expect(audit.checks.filter((c) => !c.ok || c.skipped)).toEqual([]);
  expect(audit.ok).toBe(true);
  return audit;
}
