/** The outbox events a purchase's money transitions write (payloads typed in contracts.ts). */
import { ESCROW_TOPICS, type EscrowEvents, type PurchaseCompleted, type PurchaseEvaluation, type PurchaseRefunded } from '../../packages/contracts/escrow';
import { STATES, type MoneyEvent, type Notice } from '../../packages/contracts/purchase-machine';
import type { PurchaseRow } from './purchases';

/** An outbox event: [topic, data], or with its audience (the agents it is news for: written only if one has webhooks). */
export type EscrowEvent = { [K in keyof EscrowEvents]: [K, EscrowEvents[K]] | [K, EscrowEvents[K], string[]] }[keyof EscrowEvents];

function completedData(row: PurchaseRow, completedAt: string): PurchaseCompleted {
  return {
    purchaseId: row.id,
    buyerId: row.buyer_id,
    sellerId: row.seller_id,
    listingId: row.listing_id,
    priceGas: Number(row.price_gas),
    platformFeeGas: Number(row.platform_fee_gas),
    sellerNetGas: Number(row.seller_net_gas),
    completedAt,
    ...evaluatorLeg(row),
  };
}

/**
 * The evaluator's leg of a settle or void: its fee goes to the evaluator when it gave a verdict, back to
 * the buyer otherwise (timeout, a dispute while awaiting evaluation, a refund before delivery).
 */
function evaluatorLeg(row: PurchaseRow): Pick<PurchaseCompleted, 'evaluatorId' | 'evaluatorFeeGas' | 'evaluatorPaid'> {
  if (!row.evaluator_id) return {};
  return { evaluatorId: row.evaluator_id, evaluatorFeeGas: Number(row.evaluator_fee_gas), evaluatorPaid: row.evaluation_verdict !== null && row.evaluation_verdict !== undefined };
}

function refundedData(row: PurchaseRow, refundedAt: string): PurchaseRefunded {
  return { purchaseId: row.id, buyerId: row.buyer_id, sellerId: row.seller_id, listingId: row.listing_id, priceGas: Number(row.price_gas), refundedAt, sellerSees: STATES[row.status].sellerSees, ...evaluatorLeg(row) };
}

function evaluationData(row: PurchaseRow, at: string): PurchaseEvaluation {
  return {
    purchaseId: row.id,
    buyerId: row.buyer_id,
    sellerId: row.seller_id,
    evaluatorId: row.evaluator_id!,
    listingId: row.listing_id,
    listingTitle: row.listing_title,
    priceGas: Number(row.price_gas),
    evaluatorFeeGas: Number(row.evaluator_fee_gas),
    status: row.status,
    evaluateBy: row.status === 'awaiting_evaluation' && row.due_at ? new Date(row.due_at).toISOString() : null,
    verdict: row.evaluation_verdict,
    report: row.evaluation_report,
    at,
  };
}

/**
 * A purchase fact for notifications (created, delivered, disputed), in the state it is in now, written only
 * if one of `audience` (its recipients, as notifications/events.ts maps them) has webhooks (audience.ts).
 */
export function noticeEvent(
  topic: typeof ESCROW_TOPICS.created | typeof ESCROW_TOPICS.delivered | typeof ESCROW_TOPICS.disputed,
  row: PurchaseRow,
  at: string,
  audience: string[],
): EscrowEvent {
  return [
    topic,
    {
      purchaseId: row.id,
      buyerId: row.buyer_id,
      sellerId: row.seller_id,
      listingId: row.listing_id,
      listingTitle: row.listing_title,
      priceGas: Number(row.price_gas),
      status: row.status,
      at,
    },
    audience,
  ] as EscrowEvent;
}

/**
 * The events a transition's moneyEvent asks for (none for holds: funding is a keyed call): the money fact,
 * always (the ledger and listings read it), and the same fact as a notice for whoever of buyer and seller
 * would be told — written only if one of them has a webhook (audience.ts).
 */
export function moneyEvents(moneyEvent: MoneyEvent, before: PurchaseRow, at: string, after: PurchaseRow = before): EscrowEvent[] {
  // The row as it was (its status: whether the seller ever saw it), with the verdict the transition writes.
  const row = { ...before, evaluation_verdict: after.evaluation_verdict ?? before.evaluation_verdict } as PurchaseRow;
  if (moneyEvent === 'settle') {
    const data = completedData(row, at);
    return [[ESCROW_TOPICS.completed, data], [ESCROW_TOPICS.completedNotice, data, [row.buyer_id, row.seller_id]]];
  }
  if (moneyEvent === 'void') {
    const data = refundedData(row, at);
    // A purchase the seller never saw (a declined or expired approval) is news to the buyer only.
    return [[ESCROW_TOPICS.refunded, data], [ESCROW_TOPICS.refundedNotice, data, data.sellerSees ? [row.buyer_id, row.seller_id] : [row.buyer_id]]];
  }
  return [];
}

/**
 * The notices a transition declares (`notices` in purchase-machine.ts), built from the row before and
 * after the change; null: nothing to say (a rating whose value did not change).
 */
export const NOTICES: Record<Notice, (before: PurchaseRow, after: PurchaseRow, at: string) => EscrowEvent | null> = {
  created: (_before, after, at) => noticeEvent(ESCROW_TOPICS.created, after, at, [after.seller_id]),
  delivered: (_before, after, at) => noticeEvent(ESCROW_TOPICS.delivered, after, at, [after.buyer_id]),
  evaluation_requested: (_before, after, at) => [ESCROW_TOPICS.evaluationRequested, evaluationData(after, at), [after.evaluator_id!]],
  evaluated: (_before, after, at) => [ESCROW_TOPICS.evaluated, evaluationData(after, at), [after.buyer_id, after.seller_id]],
  disputed: (_before, after, at) => noticeEvent(ESCROW_TOPICS.disputed, after, at, [after.buyer_id, after.seller_id]),
  approval_required: (_before, after) => [
    ESCROW_TOPICS.approvalRequired,
    {
      purchaseId: after.id,
      buyerId: after.buyer_id,
      listingId: after.listing_id,
      listingTitle: after.listing_title,
      priceGas: Number(after.price_gas),
      approvalUrl: after.approval_url ?? '',
      approvalExpiresAt: new Date(after.due_at!).toISOString(),
    },
    [after.buyer_id],
  ],
  approved: (_before, after, at) => [
    ESCROW_TOPICS.approved,
    { purchaseId: after.id, buyerId: after.buyer_id, sellerId: after.seller_id, listingId: after.listing_id, priceGas: Number(after.price_gas), approvedAt: at },
    [after.seller_id],
  ],
  rated: (before, after) => {
    const previousRating = before.rating === null ? null : Number(before.rating);
    if (previousRating === Number(after.rating)) return null;
    return [ESCROW_TOPICS.rated, { purchaseId: after.id, sellerId: after.seller_id, listingId: after.listing_id, rating: Number(after.rating), previousRating }];
  },
};
