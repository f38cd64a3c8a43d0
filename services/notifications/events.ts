/**
 * From the durable facts of escrow and payments to webhook events: each source topic says which
 * agents are told and as what. Adding an event = one row here (and its name in contracts.ts).
 */
import {
  ESCROW_TOPICS,
  type EscrowEvents,
  type MessageSent,
  type PurchaseApprovalRequired,
  type PurchaseApproved,
  type PurchaseCompleted,
  type PurchaseEvaluation,
  type PurchaseNotice,
  type PurchaseRefunded,
} from '../../packages/contracts/escrow';
import { PAYMENTS_TOPICS, type CashoutFinished, type GasCredited } from '../../packages/contracts/payments';
import type { WebhookEventType } from '../../packages/contracts/notifications';

export interface Notice {
  agentId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/** What each source topic carries: the producer's contract type (its outbox wrote it). */
type Payloads = EscrowEvents & {
  [PAYMENTS_TOPICS.gasCredited]: GasCredited;
  [PAYMENTS_TOPICS.cashoutPaid]: CashoutFinished;
  [PAYMENTS_TOPICS.cashoutRejected]: CashoutFinished;
};

/** Per topic, the mapper of its payload (the compiler checks each row against the topic's contract type). */
type Mappers = { [T in keyof Payloads]?: (data: Payloads[T]) => Notice[] };

/** A mapper as the consumer calls it: with an event's data, which the bus hands over untyped. */
type Mapper = (data: unknown) => Notice[];

function purchase(type: WebhookEventType, who: 'buyer' | 'seller' | 'both') {
  return (d: PurchaseNotice | PurchaseCompleted | PurchaseRefunded | PurchaseApproved | PurchaseEvaluation): Notice[] => {
    const out: Notice[] = [];
    if (who !== 'seller') out.push({ agentId: d.buyerId, type, data: { ...d, role: 'buyer' } });
    // A purchase the seller never saw (a declined or expired approval) is news to the buyer only.
    if (who !== 'buyer' && (d as PurchaseRefunded).sellerSees !== false) out.push({ agentId: d.sellerId, type, data: { ...d, role: 'seller' } });
    return out;
  };
}

const MAPPERS: Mappers = {
  [ESCROW_TOPICS.created]: purchase('purchase.created', 'seller'),
  // Approved by the buyer's human: only now does the seller see it.
  [ESCROW_TOPICS.approved]: purchase('purchase.created', 'seller'),
  [ESCROW_TOPICS.approvalRequired]: (d: PurchaseApprovalRequired) => [{ agentId: d.buyerId, type: 'purchase.approval_required', data: { ...d, role: 'buyer' } }],
  [ESCROW_TOPICS.delivered]: purchase('purchase.delivered', 'buyer'),
  [ESCROW_TOPICS.completedNotice]: purchase('purchase.completed', 'both'),
  [ESCROW_TOPICS.refundedNotice]: purchase('purchase.refunded', 'both'),
  [ESCROW_TOPICS.disputed]: purchase('purchase.disputed', 'both'),
  [ESCROW_TOPICS.evaluationRequested]: (d: PurchaseEvaluation) => [{ agentId: d.evaluatorId, type: 'purchase.evaluation_requested', data: { ...d, role: 'evaluator' } }],
  [ESCROW_TOPICS.evaluated]: purchase('purchase.evaluated', 'both'),
  // The message text is not sent (counterparty text is untrusted): list_messages reads it.
  [ESCROW_TOPICS.messageSent]: (d: MessageSent) => [
    { agentId: d.recipientId, type: 'message.received', data: { messageId: d.messageId, purchaseId: d.purchaseId, from: d.from, at: d.at } },
  ],
  [PAYMENTS_TOPICS.gasCredited]: (d: GasCredited) => [{ agentId: d.agentId, type: 'gas.credited', data: { ...d } }],
  [PAYMENTS_TOPICS.cashoutPaid]: (d: CashoutFinished) => [{ agentId: d.agentId, type: 'cashout.paid', data: { ...d } }],
  [PAYMENTS_TOPICS.cashoutRejected]: (d: CashoutFinished) => [{ agentId: d.agentId, type: 'cashout.rejected', data: { ...d } }],
};

/**
 * Source topic → the webhook events it becomes. The event's data is trusted to be its topic's contract
 * type (written by the producer's outbox from that type): the one cast from the bus's untyped data.
 */
export const NOTICES = MAPPERS as Record<string, Mapper>;
