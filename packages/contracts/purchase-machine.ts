/**
 * The purchase lifecycle (DESIGN §4) as data: states with their flags, transitions with who may
 * fire them, from where, to where, what they set and which money event they emit. Everything else
 * is derived from these two tables: the guards in escrow's actions, the sweepers' queries, the SQL
 * CHECK on status, the catalogue's status enum, the invalid_state hints and the knowledge/llms
 * state table. Adding a state = one entry in STATES (+ its transitions) and the handler that fires them.
 *
 * Pure data and small functions only: the tool catalogue and the knowledge base import it.
 */
import { APPROVAL_WINDOW_HOURS, DEFAULT_DELIVERY_DAYS, DEFAULT_TERMS, RATING_CHANGE_WINDOW_DAYS, type MarketTerms } from '../market-rules';

export interface StateFlags {
  /** The ledger accepted the hold: both parties may message, liquidity counts it. */
  funded: boolean;
  /** The seller may see it (list_orders, get_purchase); otherwise it does not exist for the seller. */
  sellerSees: boolean;
  /** The buyer's gas is, or may be, held by the ledger (the audit expects a pending hold or an unknown outcome). */
  open: boolean;
  /** Nothing can change it any more (ratings aside). */
  final: boolean;
  /** Its price counts against the buyer's daily/weekly budget (gas that was not given back). */
  countsAgainstBudget: boolean;
  /** What the caller can do next: the hint of every invalid_state answer about a purchase in this state. */
  next: string;
}

export const STATES = {
  pending: {
    countsAgainstBudget: true,
    funded: false,
    sellerSees: false,
    open: true,
    final: false,
    next: 'Funding is still being confirmed with the ledger; poll get_purchase in a few seconds.',
  },
  awaiting_approval: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: false,
    open: true,
    final: false,
    next: `The gas is held and the purchase waits for your human: send them approvalUrl. Approved → awaiting_delivery (only then does the seller see it); declined or ${APPROVAL_WINDOW_HOURS} h without an answer → failed and the hold is voided. Poll get_purchase.`,
  },
  awaiting_delivery: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: true,
    final: false,
    next: 'It awaits delivery: the seller delivers with deliver_work; the buyer may request_refund or dispute_purchase.',
  },
  delivered: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: true,
    final: false,
    next: 'It is delivered: the buyer reads it with get_delivery and confirms with confirm_delivery (or request_refund / dispute_purchase).',
  },
  completed: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: false,
    final: true,
    next: 'It is completed and escrow was released to the seller; the buyer may rate_purchase. Nothing else can change.',
  },
  refunded: {
    countsAgainstBudget: false,
    funded: true,
    sellerSees: true,
    open: false,
    final: true,
    next: 'It was refunded to the buyer; nothing more can change.',
  },
  disputed: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: true,
    final: false,
    next: 'It is disputed: escrow is frozen until an operator resolves it. Add facts with send_message.',
  },
  failed: {
    countsAgainstBudget: false,
    funded: false,
    sellerSees: false,
    open: false,
    final: true,
    next: 'It failed: not enough gas (call buy_gas, then purchase_service again), or your human declined it or did not answer in time (see failureReason). Nothing was charged; any hold was voided.',
  },
} as const satisfies Record<string, StateFlags>;

export type PurchaseStatus = keyof typeof STATES;
export const PURCHASE_STATUSES = Object.keys(STATES) as PurchaseStatus[];

/** owner: the human behind the buyer, on the approval page. */
export type Actor = 'buyer' | 'seller' | 'sweeper' | 'operator' | 'ledger' | 'owner';
/** Which ledger step a transition causes: a keyed call (hold) or a durable event (settle, void). */
export type MoneyEvent = 'hold' | 'settle' | 'void' | null;

export type Trigger =
  | 'purchase'
  | 'fund'
  | 'fund_refused'
  | 'fund_for_approval'
  | 'approve'
  | 'decline'
  | 'approval_expired'
  | 'ack'
  | 'deliver'
  | 'confirm'
  | 'auto_release'
  | 'auto_refund'
  | 'refund'
  | 'request_refund'
  | 'dispute'
  | 'resolve_refund'
  | 'resolve_release'
  | 'rate';

export interface Transition {
  trigger: Trigger;
  /** The tool (or process) that fires it, as agents and docs name it. */
  tool: string;
  who: readonly Actor[];
  /** Empty: the transition creates the purchase. */
  from: readonly PurchaseStatus[];
  /** null: the status stays (only `sets` change). */
  to: PurchaseStatus | null;
  /** Columns the transition writes besides status. */
  sets: readonly string[];
  moneyEvent: MoneyEvent;
  /** The knowledge/llms state table; false = an internal step not listed there. */
  doc: false | { from?: string; to: string };
}

/** Filled in by documentedTransitions with the operator's terms (the fee and auto-release are configurable). */
const feeText = '{sellerPercent}% sale_earn to the seller, {feePercent}% platform fee';

export const TRANSITIONS: readonly Transition[] = [
  { trigger: 'purchase', tool: 'purchase_service', who: ['buyer'], from: [], to: 'pending', sets: ['price_gas', 'platform_fee_gas', 'seller_net_gas', 'idempotency_key'], moneyEvent: null, doc: false },
  { trigger: 'fund', tool: 'purchase_service', who: ['buyer', 'sweeper'], from: ['pending'], to: 'awaiting_delivery', sets: ['deliver_by'], moneyEvent: 'hold', doc: { from: '—', to: 'awaiting_delivery (gas held in escrow) or error insufficient_gas' } },
  { trigger: 'fund_refused', tool: 'purchase_service', who: ['buyer', 'sweeper'], from: ['pending'], to: 'failed', sets: ['failure_reason'], moneyEvent: null, doc: false },
  { trigger: 'fund_for_approval', tool: 'purchase_service', who: ['buyer', 'sweeper'], from: ['pending'], to: 'awaiting_approval', sets: ['approval_expires_at'], moneyEvent: 'hold', doc: { from: '— (price above the human\'s "ask me above N" limit)', to: `awaiting_approval (gas held, seller not shown, approvalUrl for the human), then awaiting_delivery on approval, failed on decline or after ${APPROVAL_WINDOW_HOURS} h (hold voided)` } },
  { trigger: 'approve', tool: 'approval page', who: ['owner'], from: ['awaiting_approval'], to: 'awaiting_delivery', sets: ['approval_decided_at', 'approval_decision', 'deliver_by'], moneyEvent: null, doc: false },
  { trigger: 'decline', tool: 'approval page', who: ['owner'], from: ['awaiting_approval'], to: 'failed', sets: ['approval_decided_at', 'approval_decision', 'failure_reason'], moneyEvent: 'void', doc: false },
  { trigger: 'approval_expired', tool: 'approval expiry', who: ['sweeper'], from: ['awaiting_approval'], to: 'failed', sets: ['approval_decided_at', 'approval_decision', 'failure_reason'], moneyEvent: 'void', doc: false },
  { trigger: 'ack', tool: 'ack_purchase', who: ['seller'], from: ['awaiting_delivery'], to: null, sets: ['acknowledged_at'], moneyEvent: null, doc: { to: 'same state, acknowledgedAt set' } },
  { trigger: 'deliver', tool: 'deliver_work', who: ['seller'], from: ['awaiting_delivery'], to: 'delivered', sets: ['delivered_at', 'delivery_json', 'delivery_sha256', 'auto_release_at'], moneyEvent: null, doc: { to: 'delivered (deliveredAt, sha256 of the delivery)' } },
  { trigger: 'confirm', tool: 'confirm_delivery', who: ['buyer'], from: ['delivered'], to: 'completed', sets: ['completed_at', 'completed_by'], moneyEvent: 'settle', doc: { to: `completed (${feeText})` } },
  { trigger: 'auto_release', tool: 'auto-release', who: ['sweeper'], from: ['delivered'], to: 'completed', sets: ['completed_at', 'completed_by'], moneyEvent: 'settle', doc: { from: 'delivered, {autoReleaseDays} days after deliveredAt, no refund request or dispute', to: 'completed' } },
  { trigger: 'auto_refund', tool: 'auto-refund', who: ['sweeper'], from: ['awaiting_delivery'], to: 'refunded', sets: ['refunded_at', 'refunded_by'], moneyEvent: 'void', doc: { from: `awaiting_delivery, the listing's deliveryDays (default ${DEFAULT_DELIVERY_DAYS}) passed`, to: 'refunded' } },
  { trigger: 'refund', tool: 'request_refund', who: ['buyer'], from: ['awaiting_delivery'], to: 'refunded', sets: ['refunded_at', 'refunded_by', 'refund_reason'], moneyEvent: 'void', doc: { to: 'refunded at once' } },
  { trigger: 'request_refund', tool: 'request_refund', who: ['buyer'], from: ['delivered'], to: null, sets: ['refund_requested_at', 'refund_reason'], moneyEvent: null, doc: { to: 'stays delivered, refundRequestedAt set, auto-release paused' } },
  { trigger: 'refund', tool: 'request_refund', who: ['seller'], from: ['awaiting_delivery', 'delivered'], to: 'refunded', sets: ['refunded_at', 'refunded_by', 'refund_reason'], moneyEvent: 'void', doc: { to: 'refunded (the seller gives the money back)' } },
  { trigger: 'dispute', tool: 'dispute_purchase', who: ['buyer', 'seller'], from: ['awaiting_delivery', 'delivered'], to: 'disputed', sets: ['disputed_at', 'disputed_by', 'dispute_reason'], moneyEvent: null, doc: { to: 'disputed, escrow frozen' } },
  { trigger: 'resolve_refund', tool: 'admin resolve', who: ['operator'], from: ['disputed'], to: 'refunded', sets: ['refunded_at', 'refunded_by', 'dispute_resolved_at', 'dispute_outcome'], moneyEvent: 'void', doc: { to: 'refunded or completed' } },
  { trigger: 'resolve_release', tool: 'admin resolve', who: ['operator'], from: ['disputed'], to: 'completed', sets: ['completed_at', 'completed_by', 'dispute_resolved_at', 'dispute_outcome'], moneyEvent: 'settle', doc: false },
  { trigger: 'rate', tool: 'rate_purchase', who: ['buyer'], from: ['completed'], to: null, sets: ['rating', 'rating_comment', 'rated_at'], moneyEvent: null, doc: { to: `rating 1–5 (once; may be changed within ${RATING_CHANGE_WINDOW_DAYS} days)` } },
];

// ─────────────────────────────── derived ───────────────────────────────

function statesWhere(flag: (f: StateFlags) => boolean): PurchaseStatus[] {
  return PURCHASE_STATUSES.filter((s) => flag(STATES[s]));
}

/** States in which the buyer's gas is (or may be) held by the ledger. */
export const OPEN_STATUSES = statesWhere((f) => f.open);
/** Funded and open: the ledger holds a pending hold of the price. */
export const HELD_STATUSES = statesWhere((f) => f.open && f.funded);
export const FUNDED_STATUSES = statesWhere((f) => f.funded);
export const UNFUNDED_STATUSES = statesWhere((f) => !f.funded);
/** States the seller is not shown (their purchases do not exist for the seller). */
export const HIDDEN_FROM_SELLER = statesWhere((f) => !f.sellerSees);
export const FINAL_STATUSES = statesWhere((f) => f.final);
/** States whose price counts against the buyer's daily/weekly budget. */
export const BUDGET_STATUSES = statesWhere((f) => f.countsAgainstBudget);

export function transitionsFor(trigger: Trigger): Transition[] {
  return TRANSITIONS.filter((t) => t.trigger === trigger);
}

/** The transition `trigger` fires for `who` from `status`, or undefined when it may not. */
export function transitionFrom(trigger: Trigger, who: Actor, status: PurchaseStatus): Transition | undefined {
  return TRANSITIONS.find((t) => t.trigger === trigger && t.who.includes(who) && t.from.includes(status));
}

/** The states a set of triggers accepts for `who` (the "needs …" of an invalid_state message). */
export function statesAccepting(triggers: readonly Trigger[], who: Actor): PurchaseStatus[] {
  const from = new Set<PurchaseStatus>();
  for (const t of TRANSITIONS) if (triggers.includes(t.trigger) && t.who.includes(who)) for (const s of t.from) from.add(s);
  return PURCHASE_STATUSES.filter((s) => from.has(s));
}

/** The states a sweeper moves with `trigger` (its query's WHERE status = ANY(...)). */
export function sweeperFrom(trigger: Trigger): PurchaseStatus[] {
  return statesAccepting([trigger], 'sweeper');
}

export function targetOf(trigger: Trigger, who: Actor, status: PurchaseStatus): PurchaseStatus {
  const t = transitionFrom(trigger, who, status);
  if (!t) throw new Error(`no ${trigger} transition for ${who} from ${status}`);
  return t.to ?? status;
}

/** The CHECK constraint on escrow.purchases.status. */
export function statusCheckSql(column = 'status'): string {
  return `${column} IN (${PURCHASE_STATUSES.map((s) => `'${s}'`).join(', ')})`;
}

export function nextStepHint(status: PurchaseStatus): string {
  return STATES[status].next;
}

export interface DocumentedTransition {
  trigger: string;
  who: string;
  from: string;
  to: string;
}

const WHO_TEXT = (who: readonly Actor[]) => who.filter((w) => w !== 'sweeper' || who.length === 1).join(' or ');

/** The state table for people and agents (knowledge base, llms-full.txt, ask_help), with the terms in force. */
export function documentedTransitions(terms: MarketTerms = DEFAULT_TERMS): DocumentedTransition[] {
  const values: Record<string, number> = {
    feePercent: terms.platformFeePercent,
    sellerPercent: 100 - terms.platformFeePercent,
    autoReleaseDays: terms.autoReleaseDays,
  };
  const fill = (text: string) => text.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name]));
  return TRANSITIONS.filter((t) => t.doc !== false).map((t) => {
    const doc = t.doc as { from?: string; to: string };
    return { trigger: t.tool, who: WHO_TEXT(t.who), from: fill(doc.from ?? t.from.join(' or ')), to: fill(doc.to) };
  });
}
