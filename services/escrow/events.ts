/** The outbox events a purchase's transitions write: the machine's facts (purchase-machine.ts), their payloads built here. */
import type { EscrowEvents, PurchaseCompleted, PurchaseEvaluation, PurchasePayloads, PurchaseRefunded } from '../../packages/contracts/escrow';
import { dueOf, MONEY_FACTS, NOTICES, recipientsOf, STATES, type MachineTransition, type Notice, type NoticeSpec, type PayloadName } from '../../packages/contracts/purchase-machine';
import { iso, type PurchaseRow } from './purchases';

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
    evaluateBy: iso(dueOf(row.status, 'evaluation_expired', row) as Date | null),
    verdict: row.evaluation_verdict,
    report: row.evaluation_report,
    at,
  };
}

/** The row as it was (its status: whether the seller ever saw it), with the verdict the transition writes. */
function withVerdict(before: PurchaseRow, after: PurchaseRow): PurchaseRow {
  return { ...before, evaluation_verdict: after.evaluation_verdict ?? before.evaluation_verdict } as PurchaseRow;
}

/**
 * Each payload shape of the machine's purchase facts (PayloadName), built from the row before and after the
 * change; null: nothing to say (a rating whose value did not change). A new notice of an existing shape needs
 * no line here.
 */
const PAYLOADS: { [P in PayloadName]: (before: PurchaseRow, after: PurchaseRow, at: string) => PurchasePayloads[P] | null } = {
  purchase: (_before, after, at) => ({
    purchaseId: after.id,
    buyerId: after.buyer_id,
    sellerId: after.seller_id,
    listingId: after.listing_id,
    listingTitle: after.listing_title,
    priceGas: Number(after.price_gas),
    status: after.status,
    at,
  }),
  approval: (_before, after) => ({
    purchaseId: after.id,
    buyerId: after.buyer_id,
    listingId: after.listing_id,
    listingTitle: after.listing_title,
    priceGas: Number(after.price_gas),
    approvalUrl: after.approval_url ?? '',
    approvalExpiresAt: new Date(after.due_at!).toISOString(),
  }),
  approved: (_before, after, at) => ({ purchaseId: after.id, buyerId: after.buyer_id, sellerId: after.seller_id, listingId: after.listing_id, priceGas: Number(after.price_gas), approvedAt: at }),
  evaluation: (_before, after, at) => evaluationData(after, at),
  rating: (before, after) => {
    const previousRating = before.rating === null ? null : Number(before.rating);
    if (previousRating === Number(after.rating)) return null;
    return { purchaseId: after.id, sellerId: after.seller_id, listingId: after.listing_id, rating: Number(after.rating), previousRating };
  },
  completed: (before, after, at) => completedData(withVerdict(before, after), at),
  refunded: (before, after, at) => refundedData(withVerdict(before, after), at),
};

/**
 * One purchase fact as an outbox event: a fact for services is always written; news is written with its
 * audience (recipientsOf: the agents notifications will tell), only if one of them has a webhook (audience.ts).
 */
function factEvent(fact: { topic: string; payload: PayloadName } & Partial<NoticeSpec>, before: PurchaseRow, after: PurchaseRow, at: string): EscrowEvent | null {
  const data = PAYLOADS[fact.payload](before, after, at);
  if (!data) return null;
  if (!fact.webhook) return [fact.topic, data] as EscrowEvent;
  return [fact.topic, data, recipientsOf(fact as NoticeSpec, data).map((r) => r.agentId)] as EscrowEvent;
}

/**
 * The outbox events a transition writes with its state change: its money fact (settle/void — none for holds,
 * funding is a keyed call) and that fact's notices, then the notices it declares (purchase-machine.ts).
 */
export function transitionEvents(t: MachineTransition, before: PurchaseRow, after: PurchaseRow, at: string): EscrowEvent[] {
  const money = t.moneyEvent === 'settle' || t.moneyEvent === 'void' ? MONEY_FACTS[t.moneyEvent] : null;
  const notices: readonly Notice[] = [...(money?.notices ?? []), ...(t.notices ?? [])];
  const facts = [...(money ? [money] : []), ...notices.map((n) => NOTICES[n])];
  return facts.map((f) => factEvent(f, before, after, at)).filter((e): e is EscrowEvent => e !== null);
}
