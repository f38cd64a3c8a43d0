/**
 * The full money audit: the ledger's own invariants (ledger.audit) plus escrow's cross-check of its
 * open purchases against the ledger's pending holds (escrow.auditHolds). The ledger is the bottom
 * layer and asks nobody, so the two halves are joined here, by whoever asks: the gateway's admin
 * route, `npm run audit:ledger` and the tests.
 *
 * With `reconcile`, it also reconciles the ledger with the services whose facts it posts (reconcile.ts):
 * gas credits with paid checkouts, settled and voided holds with escrow's purchases and their split,
 * cash-out debits with payouts, referral bonuses with escrow's qualified referrals.
 */
import type { AuditCheck, AuditReport } from '../contracts/ledger';
import { LEDGER } from '../contracts/ledger';
import { ESCROW } from '../contracts/escrow';
import { reconcileServices, UNAVAILABLE, type CallAction, type ReconcileOptions } from './reconcile';

export type { AuditCheck, AuditReport, CallAction, ReconcileOptions };
export { DEFAULT_GRACE_MS } from './reconcile';

export interface AuditOptions extends ReconcileOptions {
  /** Reconcile the ledger with payments and escrow too (pages through every record: an operator job). */
  reconcile?: boolean;
}

export async function auditMoney(call: CallAction, options: AuditOptions = {}): Promise<AuditReport> {
  const ledger = (await call(LEDGER.audit, {})) as AuditReport;
  let cross: AuditCheck[];
  try {
    cross = (await call(ESCROW.auditHolds, {})) as AuditCheck[];
  } catch (err) {
    const type = (err as { type?: string })?.type ?? '';
    const reason = UNAVAILABLE.has(type) ? 'the escrow service is not available' : `${ESCROW.auditHolds} failed: ${(err as Error)?.message ?? err}`;
    cross = [{ name: 'escrow_holds_cross_check', ok: true, skipped: true, message: `skipped: ${reason}` }];
  }
  const reconciled = options.reconcile ? await reconcileServices(call, options) : [];
  const checks = [...ledger.checks, ...cross, ...reconciled];
  return { ok: checks.every((c) => c.ok), checkedAt: new Date().toISOString(), checks };
}
