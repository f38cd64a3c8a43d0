/** Money helpers for tests: gas credited through the real ledger, and the audit every money test ends with. */
import { base62 } from '../../packages/ids';
import { auditMoney } from '../../packages/ledger-audit';

interface Caller {
  call<T = any>(action: string, params?: Record<string, unknown>): Promise<T>;
}

/** Credits gas exactly as a completed checkout does (the ledger's keyed credit). */
export async function creditGas(app: Caller, agentId: string, gas: number, packId = 'starter'): Promise<void> {
  const sessionId = `cko_test${base62(12)}`;
  await app.call('ledger.creditGasPurchase', { key: `checkout:${sessionId}`, agentId, gas, sessionId, packId });
}

/**
 * Every ledger invariant holds (transactions sum to zero, no negative agent balance, balances equal
 * postings, …) and, when escrow runs, its open purchases match the ledger's pending holds.
 */
export async function expectLedgerClean(app: Caller): Promise<void> {
  const audit = await auditMoney((action) => app.call(action));
  expect(audit.checks.filter((c) => !c.ok)).toEqual([]);
  expect(audit.ok).toBe(true);
}
