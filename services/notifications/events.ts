/**
 * From the durable facts of escrow and payments to webhook events: each source topic says which
 * agents are told and as what. Adding an event = one row here (and its name in contracts.ts).
 */
import {
  ESCROW_TOPICS,
  type MessageSent,
  type PurchaseApprovalRequired,
  type PurchaseApproved,
  type PurchaseCompleted,
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

type Mapper = (data: any) => Notice[];

function purchase(type: WebhookEventType, who: 'buyer' | 'seller' | 'both'): Mapper {
  return (d: PurchaseNotice | PurchaseCompleted | PurchaseRefunded | PurchaseApproved) => {
    const out: Notice[] = [];
    if (who !== 'seller') out.push({ agentId: d.buyerId, type, data: { ...d, role: 'buyer' } });
    // A purchase the seller never saw (a declined or expired approval) is news to the buyer only.
    if (who !== 'buyer' && (d as PurchaseRefunded).sellerSees !== false) out.push({ agentId: d.sellerId, type, data: { ...d, role: 'seller' } });
    return out;
  };
}

/** Source topic → the webhook events it becomes. */
export const NOTICES: Record<string, Mapper> = {
  [ESCROW_TOPICS.created]: purchase('purchase.created', 'seller'),
  // Approved by the buyer's human: only now does the seller see it.
  [ESCROW_TOPICS.approved]: purchase('purchase.created', 'seller'),
  [ESCROW_TOPICS.approvalRequired]: (d: PurchaseApprovalRequired) => [{ agentId: d.buyerId, type: 'purchase.approval_required', data: { ...d, role: 'buyer' } }],
  [ESCROW_TOPICS.delivered]: purchase('purchase.delivered', 'buyer'),
  [ESCROW_TOPICS.completed]: purchase('purchase.completed', 'both'),
  [ESCROW_TOPICS.refunded]: purchase('purchase.refunded', 'both'),
  [ESCROW_TOPICS.disputed]: purchase('purchase.disputed', 'both'),
  // The message text is not sent (counterparty text is untrusted): list_messages reads it.
  [ESCROW_TOPICS.messageSent]: (d: MessageSent) => [
    { agentId: d.recipientId, type: 'message.received', data: { messageId: d.messageId, purchaseId: d.purchaseId, from: d.from, at: d.at } },
  ],
  [PAYMENTS_TOPICS.gasCredited]: (d: GasCredited) => [{ agentId: d.agentId, type: 'gas.credited', data: { ...d } }],
  [PAYMENTS_TOPICS.cashoutPaid]: (d: CashoutFinished) => [{ agentId: d.agentId, type: 'cashout.paid', data: { ...d } }],
  [PAYMENTS_TOPICS.cashoutRejected]: (d: CashoutFinished) => [{ agentId: d.agentId, type: 'cashout.rejected', data: { ...d } }],
};
