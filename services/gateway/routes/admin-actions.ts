/**
 * The operator's actions, once: argument checks, the owning service's action, and the audit log
 * (runAudited). /api/admin (admin-ops.ts, admin-support.ts) answers them as JSON; the console
 * (web/admin) as pages. Neither re-implements them.
 */
import type { Request } from 'express';
import { InvalidArgumentsError } from '../../../packages/errors';
import { rowView } from '../../../packages/db/row-view';
import type { GatewayDeps } from '../deps';
import { adminKit, type AuditedAction } from './admin-kit';
import { LISTINGS, type SellerReputation } from '../../../packages/contracts/listings';
import { ESCROW, type PurchaseView } from '../../../packages/contracts/escrow';
import { SUPPORT } from '../../../packages/contracts/support';
import { PAYMENTS } from '../../../packages/contracts/payments';
import { AGENTS } from '../../../packages/contracts/agents';

export const PAYOUT_STATUSES = ['requested', 'pending', 'paying', 'paid', 'rejecting', 'rejected', 'failed', 'all'];

function requiredText(value: unknown, field: string, hint: string, min = 3): string {
  if (typeof value !== 'string' || value.trim().length < min) {
    throw new InvalidArgumentsError(`${field} is required (at least ${min} characters).`, { hint, details: { field } });
  }
  return value.trim();
}

/** The owning service answers either {<name>: …} or the bare object; the API always answers {<name>: …}. */
function asObject(name: string, value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && name in value ? (value as Record<string, unknown>) : { [name]: value };
}

/** An operator's form or JSON body: fields are checked one by one before use. */
export type OperatorInput = Record<string, unknown>;

// What the operator's pages read of the owning services' answers (payments.listPayouts,
// escrow.listDisputes, listings.search/get, support.listBugs/listExperiences/summary).

export interface OperatorPayout {
  id: string;
  agentId: string;
  status: string;
  amountGas: number;
  feeGas: number;
  netGas: number;
  btcAddress: string;
  btcNetwork: string;
  createdAt: string;
  btcTxid: string | null;
  btcAmount: string | null;
  rejectReason: string | null;
}

export interface OperatorDispute {
  purchase: PurchaseView;
  disputedBy: string | null;
  reason: string | null;
  outcome: string | null;
  note: string | null;
  resolvedAt: string | null;
  resolvedBy: string | null;
  delivery: { delivery: unknown; sha256: string | null; deliveredAt: string | null } | null;
  messages: Array<{ from: string; body: string; createdAt: string | null }>;
}

export interface OperatorListing {
  id: string;
  title: string;
  status: string;
  priceGas: number;
  seller: { id: string; displayName: string; reputation: SellerReputation };
}

export interface BugReport {
  id: string;
  agentId: string;
  title: string;
  description: string;
  severity: string;
  status: string;
  count: number;
  lastReportedAt: string;
}

export interface ExperienceReport {
  id: string;
  rating: number;
  journeyStep: string;
  whatWorked: string | null;
  whatFailed: string | null;
  createdAt: string;
}

export interface ReportsSummary {
  bugs: { total: number; open: number; reports: number };
  experiences: { total: number; averageRating: number | null };
  helpQuestions: { total: number; unanswered: number };
}

export interface AuditLogEntry {
  id: number;
  operator: string;
  action: string;
  target: string;
  params: unknown;
  before: unknown;
  after: unknown;
  ok: boolean;
  error: string | null;
  requestId: string | null;
  at: string;
}

interface AuditLogRow extends Omit<AuditLogEntry, 'id' | 'requestId' | 'at'> {
  id: string | number;
  request_id: string | null;
  at: Date;
}
const AUDIT_LOG_COLUMNS = ['id', 'operator', 'action', 'target', 'params', 'before', 'after', 'ok', 'error', 'request_id', 'at'] as const;

export function operatorActions(deps: GatewayDeps) {
  const { call, runAudited } = adminKit(deps);

  const listDisputes = async (req: Request, status?: string): Promise<OperatorDispute[]> => {
    const r = await call<OperatorDispute[] | { disputes?: OperatorDispute[] } | null>(req, ESCROW.listDisputes, status ? { status } : {});
    return Array.isArray(r) ? r : (r?.disputes ?? []);
  };

  /**
   * An audited operator action that needs a reason, which the affected party sees (`sees`, with an
   * example reason for the hint when it is missing); `run` gets the reason.
   */
  const withReason = (req: Request, input: OperatorInput, sees: { who: string; example: string }, audit: Omit<AuditedAction, 'params' | 'run'> & { run: (reason: string) => Promise<unknown> }) => {
    const reason = requiredText(input.reason, 'reason', `Say why, e.g. {"reason": "${sees.example}"}; the ${sees.who} sees it.`);
    return runAudited(req, { ...audit, params: { reason }, run: () => audit.run(reason) });
  };

  return {
    call,

    // ---- payouts ----------------------------------------------------------------------------------
    async listPayouts(req: Request, status = 'pending', limit?: number): Promise<OperatorPayout[]> {
      if (!PAYOUT_STATUSES.includes(status)) {
        throw new InvalidArgumentsError(`Unknown payout status "${status}".`, { hint: `Use one of: ${PAYOUT_STATUSES.join(', ')}.`, details: { field: 'status' } });
      }
      return call<OperatorPayout[]>(req, PAYMENTS.listPayouts, { status, limit });
    },

    getPayout: (req: Request, cashoutId: string) => call(req, PAYMENTS.getPayout, { cashoutId }),

    payPayout(req: Request, cashoutId: string, input: OperatorInput) {
      const btcTxid = requiredText(input.btcTxid ?? input.txid, 'btcTxid', 'Send {"btcTxid": "<64 hex>", "btcAmount": "0.00529"}.', 1);
      const btcAmount = input.btcAmount ?? input.btc;
      if (btcAmount === undefined || btcAmount === null || btcAmount === '') {
        throw new InvalidArgumentsError('btcAmount is required.', { hint: 'Send the BTC amount the transaction paid, e.g. {"btcAmount": "0.00529"}.', details: { field: 'btcAmount' } });
      }
      return runAudited(req, {
        action: 'payouts.pay',
        target: cashoutId,
        params: { btcTxid, btcAmount },
        before: () => call(req, PAYMENTS.getPayout, { cashoutId }),
        run: async () => ({ payout: await call(req, PAYMENTS.markPayoutPaid, { cashoutId, btcTxid, btcAmount: typeof btcAmount === 'number' ? btcAmount : String(btcAmount) }) }),
      });
    },

    rejectPayout: (req: Request, cashoutId: string, input: OperatorInput) =>
      withReason(req, input, { who: 'agent', example: 'address belongs to a sanctioned service' }, {
        action: 'payouts.reject',
        target: cashoutId,
        before: () => call(req, PAYMENTS.getPayout, { cashoutId }),
        run: async (reason) => ({ payout: await call(req, PAYMENTS.rejectPayout, { cashoutId, reason }) }),
      }),

    // ---- disputes ---------------------------------------------------------------------------------
    listDisputes,

    resolveDispute(req: Request, purchaseId: string, input: OperatorInput) {
      const outcome = input.outcome;
      if (outcome !== 'refund' && outcome !== 'release') {
        throw new InvalidArgumentsError('outcome must be "refund" (the buyer gets the gas back) or "release" (the seller is paid).', {
          hint: 'Send {"outcome": "refund"} or {"outcome": "release"}, optionally with "note".',
          details: { field: 'outcome' },
        });
      }
      const note = typeof input.note === 'string' && input.note.trim() ? input.note.trim() : undefined;
      return runAudited(req, {
        action: 'disputes.resolve',
        target: purchaseId,
        params: { outcome, note },
        before: async () => (await listDisputes(req)).find((d) => d?.purchase?.id === purchaseId) ?? null,
        run: async () => asObject('purchase', await call(req, ESCROW.resolveDispute, { purchaseId, outcome, ...(note ? { note } : {}) })),
      });
    },

    /** Sandbox only (ADR 0040): fire one purchase's running timer now (any timer of the machine), audited. */
    fireTimer(req: Request, purchaseId: string) {
      return runAudited(req, {
        action: 'purchases.fire_timer',
        target: purchaseId,
        params: {},
        run: async () => await call(req, ESCROW.sandboxFireTimer, { purchaseId }),
      });
    },

    // ---- listings ---------------------------------------------------------------------------------
    /** Seed flag of an agent, addressed by the agent id or by one of its listings. */
    async setSeed(req: Request, id: string, input: OperatorInput) {
      if (input.isSeed !== undefined && typeof input.isSeed !== 'boolean') {
        throw new InvalidArgumentsError('isSeed must be true or false.', { hint: 'Send {"isSeed": true} to mark, {"isSeed": false} to clear.', details: { field: 'isSeed' } });
      }
      const isSeed: boolean = input.isSeed ?? true;
      let agentId = id;
      let listingId: string | null = null;
      if (!id.startsWith('agt_')) {
        const listing = await call<{ sellerId: string }>(req, LISTINGS.getForPurchase, { listingId: id });
        agentId = listing.sellerId;
        listingId = id;
      }
      return runAudited(req, {
        action: isSeed ? LISTINGS.seed : 'listings.unseed',
        target: agentId,
        params: { isSeed, listingId },
        before: () => call(req, AGENTS.get, { agentId }),
        run: async () => ({ agent: await call(req, AGENTS.setSeed, { agentId, isSeed }), listingId }),
      });
    },

    takeDown: (req: Request, listingId: string, input: OperatorInput) =>
      withReason(req, input, { who: 'seller', example: 'offers stolen API keys' }, {
        action: 'listings.takedown',
        target: listingId,
        before: () => call(req, LISTINGS.get, { listingId }),
        run: async (reason) => asObject('listing', await call(req, LISTINGS.takeDown, { listingId, reason })),
      }),

    restore(req: Request, listingId: string, input: OperatorInput) {
      const note = typeof input.note === 'string' && input.note.trim() ? input.note.trim() : undefined;
      return runAudited(req, {
        action: LISTINGS.restore,
        target: listingId,
        params: { note },
        before: () => call(req, LISTINGS.get, { listingId }),
        run: async () => asObject('listing', await call(req, LISTINGS.restore, { listingId })),
      });
    },

    // ---- support ----------------------------------------------------------------------------------
    setBugStatus(req: Request, bugId: string, input: OperatorInput) {
      const status = input.status;
      return runAudited(req, {
        action: 'support.bug_status',
        target: bugId,
        params: { status },
        run: () => call(req, SUPPORT.setBugStatus, { bugId, status }),
      });
    },

    // ---- audit log --------------------------------------------------------------------------------
    async auditLog(limit = 100, action: string | null = null): Promise<AuditLogEntry[]> {
      const r = await deps.db.query<AuditLogRow>(
        `SELECT ${AUDIT_LOG_COLUMNS.join(', ')} FROM gateway.audit_log
          WHERE ($1::text IS NULL OR action = $1) ORDER BY id DESC LIMIT $2`,
        [action, limit],
      );
      // The id is a bigserial, which pg returns as a string.
      return r.rows.map((e) => ({ ...rowView(e, AUDIT_LOG_COLUMNS), id: Number(e.id) }));
    },
  };
}

export type OperatorActions = ReturnType<typeof operatorActions>;
