/** Purchase rows, their public view, the callers' roles, and the hints derived from the purchase machine (the engine guards). */
import { InvalidStateError, NotFoundError, ForbiddenError } from '../../packages/errors';
import { awaits, dueOf, nextStepHint, purchaseTask, STATES, toolsAt, type PurchaseStatus, type Trigger } from '../../packages/contracts/purchase-machine';
import type { PurchaseView, Role } from '../../packages/contracts/escrow';
export type { PurchaseView, Role };

export { OPEN_STATUSES, type PurchaseStatus } from '../../packages/contracts/purchase-machine';

/** A type (not an interface) so it is a Record<string, unknown>: the machine reads its columns by name. */
export type PurchaseRow = {
  id: string;
  listing_id: string;
  listing_title: string;
  category: string | null;
  buyer_id: string;
  seller_id: string;
  price_gas: number;
  platform_fee_gas: number;
  seller_net_gas: number;
  status: PurchaseStatus;
  requirements: unknown;
  delivery_days: number;
  deliverable_schema: Record<string, unknown> | null;
  idempotency_key: string | null;
  failure_reason: string | null;
  hold_attempts: number;
  referral_checked: boolean;
  acknowledged_at: Date | null;
  delivered_at: Date | null;
  delivery_json: string | null;
  delivery_sha256: string | null;
  /** When the timer leaving the current state fires (purchase-machine.ts DUE_AT); null when none leaves it. */
  due_at: Date | null;
  completed_at: Date | null;
  completed_by: string | null;
  refunded_at: Date | null;
  refunded_by: string | null;
  refund_requested_at: Date | null;
  refund_reason: string | null;
  disputed_at: Date | null;
  disputed_by: string | null;
  dispute_reason: string | null;
  dispute_resolved_at: Date | null;
  dispute_outcome: 'refund' | 'release' | null;
  dispute_note: string | null;
  dispute_resolved_by: string | null;
  rating: number | null;
  rating_comment: string | null;
  first_rated_at: Date | null;
  rated_at: Date | null;
  needs_approval: boolean;
  approval_token: string | null;
  approval_url: string | null;
  approval_decided_at: Date | null;
  approval_decision: 'approved' | 'declined' | 'expired' | null;
  evaluator_id: string | null;
  evaluator_fee_gas: number;
  evaluation_hours: number | null;
  evaluated_at: Date | null;
  evaluation_verdict: 'accept' | 'reject' | null;
  evaluation_report: string | null;
  evaluation_expired_at: Date | null;
  evaluator_rating: number | null;
  evaluator_rated_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export function iso(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  return new Date(d).toISOString();
}

/** The due time of `trigger`'s timer while it runs for this purchase (its due_at), else null. */
function due(row: PurchaseRow, trigger: Trigger): string | null {
  return iso(dueOf(row.status, trigger, row) as Date | null);
}

/** The public view; what it shows of a timer or an approval follows the machine (the state's timers, who it awaits). */
export function toView(row: PurchaseRow, viewerId?: string): PurchaseView {
  // The party reading it (an operator's console reads as nobody): its moves are the machine's for that party.
  const viewerRole: Role | null = !viewerId ? null : viewerId === row.buyer_id ? 'buyer' : viewerId === row.seller_id ? 'seller' : viewerId === row.evaluator_id ? 'evaluator' : null;
  const view: PurchaseView = {
    id: row.id,
    listingId: row.listing_id,
    listingTitle: row.listing_title,
    buyerId: row.buyer_id,
    sellerId: row.seller_id,
    priceGas: Number(row.price_gas),
    platformFeeGas: Number(row.platform_fee_gas),
    sellerNetGas: Number(row.seller_net_gas),
    status: row.status,
    requirements: row.requirements ?? null,
    acknowledgedAt: iso(row.acknowledged_at),
    deliveredAt: iso(row.delivered_at),
    deliverySha256: row.delivery_sha256,
    completedAt: iso(row.completed_at),
    refundedAt: iso(row.refunded_at),
    refundRequestedAt: iso(row.refund_requested_at),
    disputedAt: iso(row.disputed_at),
    autoReleaseAt: due(row, 'auto_release'),
    deliverBy: due(row, 'auto_refund'),
    rating: row.rating === null ? null : Number(row.rating),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    deliveryDays: Number(row.delivery_days),
    ratingComment: row.rating_comment,
    refundReason: row.refund_reason,
    disputedBy: (row.disputed_by as Role | null) ?? null,
    disputeReason: row.dispute_reason,
    disputeOutcome: row.dispute_outcome,
    failureReason: row.failure_reason,
    approvalUrl: awaits(row.status, 'owner') && viewerId !== row.seller_id ? row.approval_url : null,
    approvalExpiresAt: due(row, 'approval_expired'),
    task: {
      ...purchaseTask(row.status, { delivered: row.delivered_at !== null && row.delivered_at !== undefined, verdict: row.evaluation_verdict ?? null }),
      next: nextStepHint(row.status),
      ...(viewerRole ? { tools: toolsAt(row.status, viewerRole, row) } : {}),
    },
  };
  if (row.evaluator_id) {
    const feeGas = Number(row.evaluator_fee_gas);
    view.evaluator = {
      agentId: row.evaluator_id,
      feeGas,
      evaluationHours: Number(row.evaluation_hours),
      evaluateBy: due(row, 'evaluation_expired'),
      verdict: row.evaluation_verdict,
      report: row.evaluation_report,
      evaluatedAt: iso(row.evaluated_at),
      expiredAt: iso(row.evaluation_expired_at),
      rating: row.evaluator_rating === null || row.evaluator_rating === undefined ? null : Number(row.evaluator_rating),
    };
    view.totalHeldGas = Number(row.price_gas) + feeGas;
  }
  if (viewerId === row.buyer_id) view.role = 'buyer';
  else if (viewerId === row.seller_id) view.role = 'seller';
  else if (viewerId && viewerId === row.evaluator_id) view.role = 'evaluator';
  return view;
}

export function invalidState(row: PurchaseRow, tool: string, needs: string): InvalidStateError {
  return new InvalidStateError(`Purchase ${row.id} is ${row.status}; ${tool} needs ${needs}.`, {
    hint: nextStepHint(row.status),
    details: { purchaseId: row.id, status: row.status },
  });
}

export function notFound(purchaseId: string): NotFoundError {
  return new NotFoundError(`No purchase ${purchaseId} of yours.`, {
    hint: 'Use a purchaseId from list_orders; only its buyer and its seller can see a purchase.',
    details: { purchaseId },
  });
}

/** The caller's role, or not_found for anyone else (a purchase's existence is not revealed to strangers). */
export function roleOf(row: PurchaseRow | undefined, agentId: string, purchaseId: string): Role {
  if (row && row.buyer_id === agentId) return 'buyer';
  // The seller (and the evaluator) never sees a purchase that was not funded.
  if (row && row.seller_id === agentId && STATES[row.status].sellerSees) return 'seller';
  if (row && row.evaluator_id === agentId && STATES[row.status].sellerSees) return 'evaluator';
  throw notFound(purchaseId);
}

export function requireRole(row: PurchaseRow | undefined, agentId: string, purchaseId: string, role: Role, tool: string): void {
  const actual = roleOf(row, agentId, purchaseId);
  if (actual !== role) {
    throw new ForbiddenError(`Only the ${role} of purchase ${purchaseId} can call ${tool}; you are its ${actual}.`, {
      hint: role === 'evaluator'
        ? 'Only the evaluator the buyer named calls evaluate_delivery; as a party you may dispute_purchase or send_message.'
        : actual === 'evaluator'
          ? 'As the evaluator you read get_delivery and call evaluate_delivery {purchaseId, verdict: "accept"|"reject", report}.'
          : role === 'seller'
            ? 'The seller acknowledges and delivers; as the buyer you confirm_delivery, request_refund or dispute_purchase.'
            : 'The buyer confirms, reads the delivery and rates; as the seller you ack_purchase, deliver_work or request_refund (to refund the buyer).',
      details: { purchaseId, role: actual },
    });
  }
}

/** requireRole for the engine's `actor`: the caller's role when it is `role`, else not_found / forbidden. */
export function asRole(row: PurchaseRow, agentId: string, purchaseId: string, role: Role, tool: string): Role {
  requireRole(row, agentId, purchaseId, role, tool);
  return role;
}

