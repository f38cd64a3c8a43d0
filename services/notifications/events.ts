/**
 * From the durable facts of escrow and payments to webhook events: each source topic says which
 * agents are told and as what. Purchase notices come from the machine (a new one needs no line here);
 * another event = one row here (and its name in contracts/notifications.ts).
 */
import { ESCROW_TOPICS, type EscrowEvents, type MessageSent } from '../../packages/contracts/escrow';
import { recipientsOf, WEBHOOK_NOTICES } from '../../packages/contracts/purchase-machine';
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

/**
 * The purchase notices that are webhooks, from the machine (purchase-machine.ts NOTICES): each told to its
 * audience (recipientsOf — the same agents escrow wrote it for) with the party it is told as.
 */
const PURCHASE_MAPPERS: Record<string, Mapper> = Object.fromEntries(
  WEBHOOK_NOTICES.map((notice) => [
    notice.topic,
    (d: unknown): Notice[] => {
      const data = d as Record<string, unknown>;
      return recipientsOf(notice, data).map(({ party, agentId }) => ({ agentId, type: notice.webhook, data: { ...data, role: party } }));
    },
  ]),
);

const MAPPERS: Mappers = {
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
export const NOTICES: Record<string, Mapper> = { ...PURCHASE_MAPPERS, ...(MAPPERS as Record<string, Mapper>) };
