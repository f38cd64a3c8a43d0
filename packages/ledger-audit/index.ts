/**
 * The full money audit: the ledger's own invariants (ledger.audit) plus escrow's cross-check of its
 * open purchases against the ledger's pending holds (escrow.auditHolds). The ledger is the bottom
 * layer and asks nobody, so the two halves are joined here, by whoever asks: the gateway's admin
 * route, `npm run audit:ledger` and the tests.
 */
import type { AuditCheck, AuditReport } from '../contracts/ledger';
import { LEDGER } from '../contracts/ledger';
import { ESCROW } from '../contracts/escrow';

export type { AuditCheck, AuditReport };

/** Calls an action with no parameters (a broker, a test app, a remote client). */
export type CallAction = (action: string) => Promise<unknown>;

const UNAVAILABLE = new Set(['SERVICE_NOT_FOUND', 'SERVICE_NOT_AVAILABLE', 'REQUEST_TIMEOUT', 'REQUEST_REJECTED']);

export async function auditMoney(call: CallAction): Promise<AuditReport> {
  const ledger = (await call(LEDGER.audit)) as AuditReport;
  let cross: AuditCheck[];
  try {
    cross = (await call(ESCROW.auditHolds)) as AuditCheck[];
  } catch (err) {
    const type = (err as { type?: string })?.type ?? '';
    const reason = UNAVAILABLE.has(type) ? 'the escrow service is not available' : `${ESCROW.auditHolds} failed: ${(err as Error)?.message ?? err}`;
    cross = [{ name: 'escrow_holds_cross_check', ok: true, skipped: true, message: `skipped: ${reason}` }];
  }
  const checks = [...ledger.checks, ...cross];
  return { ok: checks.every((c) => c.ok), checkedAt: new Date().toISOString(), checks };
}
