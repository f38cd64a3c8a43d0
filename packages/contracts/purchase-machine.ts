/**
 * The purchase lifecycle (DESIGN §4) as data: states with their flags, transitions with who may
 * fire them, from where, to where, the columns they write (`sets`), their effects (money event,
 * notices) and their timers (`after`). purchase-engine.ts applies them — the only writer of a
 * purchase's status. Everything else is derived from these two tables: the guards, the sweepers'
 * queries, the SQL CHECK on status, the catalogue's status enum, the invalid_state hints, the views'
 * timers and the knowledge/llms state table. Adding a state = one entry in STATES (+ its transitions)
 * and the handler that fires them (docs/architecture.md, "Adding a state").
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
  /**
   * The purchase as an MCP task (ADR 0015; the stdio package reads it from the purchase view): its status
   * before a delivery, and after one (default completed: the delivery is the task's result); how often a
   * working task is worth polling (funding is quick, people are slow).
   */
  task: { status: TaskStatus; delivered?: TaskStatus; pollMs?: number };
}

export type TaskStatus = 'working' | 'completed' | 'failed';

export const STATES = {
  pending: {
    countsAgainstBudget: true,
    funded: false,
    sellerSees: false,
    open: true,
    final: false,
    task: { status: 'working', pollMs: 1000 },
    next: 'Funding is still being confirmed with the ledger; poll get_purchase in a few seconds.',
  },
  awaiting_approval: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: false,
    open: true,
    final: false,
    task: { status: 'working', pollMs: 30_000 },
    next: `The gas is held and the purchase waits for your human: send them approvalUrl. Approved → awaiting_delivery (only then does the seller see it); declined or ${APPROVAL_WINDOW_HOURS} h without an answer → failed and the hold is voided. Poll get_purchase.`,
  },
  awaiting_delivery: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: true,
    final: false,
    task: { status: 'working', pollMs: 5000 },
    next: 'It awaits delivery: the seller delivers with deliver_work; the buyer may request_refund or dispute_purchase.',
  },
  awaiting_evaluation: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: true,
    final: false,
    task: { status: 'working', delivered: 'working', pollMs: 10_000 },
    next: 'It is delivered and awaits the evaluator the buyer named: the evaluator reads it with get_delivery and calls evaluate_delivery (accept → completed, reject → refunded); no verdict by evaluateBy → delivered and the buyer decides. Either party may dispute_purchase.',
  },
  delivered: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: true,
    final: false,
    task: { status: 'completed' },
    next: 'It is delivered: the buyer reads it with get_delivery and confirms with confirm_delivery (or request_refund / dispute_purchase).',
  },
  completed: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: false,
    final: true,
    task: { status: 'completed' },
    next: 'It is completed and escrow was released: the seller got the price less the platform fee as sale_earn; the buyer may rate_purchase. Nothing else can change.',
  },
  refunded: {
    countsAgainstBudget: false,
    funded: true,
    sellerSees: true,
    open: false,
    final: true,
    task: { status: 'failed' },
    next: "It was refunded: the whole price returned to the buyer's gasBalance, no fee taken; nothing more can change.",
  },
  disputed: {
    countsAgainstBudget: true,
    funded: true,
    sellerSees: true,
    open: true,
    final: false,
    task: { status: 'working', pollMs: 30_000 },
    next: 'It is disputed: escrow is frozen until an operator resolves it. Add facts with send_message.',
  },
  failed: {
    countsAgainstBudget: false,
    funded: false,
    sellerSees: false,
    open: false,
    final: true,
    task: { status: 'failed' },
    next: 'It failed: not enough gas (call buy_gas, then purchase_service again), or your human declined it or did not answer in time (see failureReason). Nothing was charged; any hold was voided.',
  },
} as const satisfies Record<string, StateFlags>;

export type PurchaseStatus = keyof typeof STATES;
export const PURCHASE_STATUSES = Object.keys(STATES) as PurchaseStatus[];

/** owner: the human behind the buyer, on the approval page. */
export type Actor = 'buyer' | 'seller' | 'evaluator' | 'sweeper' | 'operator' | 'ledger' | 'owner';
/**
 * Which ledger step a transition causes. `hold` is a keyed call made BEFORE the transition fires
 * (funding.ts: the hold must exist for the purchase to be funded); `settle` and `void` are outbox
 * events the engine writes in the statement that changes the status.
 */
export type MoneyEvent = 'hold' | 'settle' | 'void' | null;

/** A party of a purchase: whom a notice may be news for (its payload names each as `<party>Id`). */
export type Party = 'buyer' | 'seller' | 'evaluator';

/** The shapes a purchase fact's payload takes (typed in contracts/escrow.ts, built from the row by escrow/events.ts). */
export type PayloadName = 'purchase' | 'approval' | 'approved' | 'evaluation' | 'rating' | 'completed' | 'refunded';

/**
 * A purchase fact written to escrow's outbox in the statement that changes the status, declared once: its
 * durable topic and payload shape and, when it is news for agents, the webhook event it becomes and who is told
 * (`audience`). A fact without a webhook is for services (listings reads `rated`) and always written; one with
 * a webhook is written only when one of its audience has a webhook (issue #22), and notifications fans it out to
 * the same audience. ESCROW_TOPICS, WEBHOOK_EVENTS and their recipients, the notifications fan-out and the call
 * table's topics are derived from NOTICES and MONEY_FACTS.
 */
export interface NoticeSpec {
  topic: `escrow.purchase.${string}`;
  payload: PayloadName;
  webhook?: `purchase.${string}`;
  audience?: readonly Party[];
  /** What the webhook carries besides the purchase, for its description ("with …"). */
  carries?: string;
}

/** The notices a transition declares (`notices`), in the order webhooks list them. */
export const NOTICES = {
  /** The hold is made and the seller can see the purchase. */
  created: { topic: 'escrow.purchase.created', payload: 'purchase', webhook: 'purchase.created', audience: ['seller'] },
  /** The buyer's human approved it: only now does the seller see it (for the seller it is created now). */
  approved: { topic: 'escrow.purchase.approved', payload: 'approved', webhook: 'purchase.created', audience: ['seller'] },
  /** Held above the human's "ask me above" amount: the buyer sends its human the approval link. */
  approval_required: { topic: 'escrow.purchase.approval_required', payload: 'approval', webhook: 'purchase.approval_required', audience: ['buyer'] },
  delivered: { topic: 'escrow.purchase.delivered', payload: 'purchase', webhook: 'purchase.delivered', audience: ['buyer'] },
  /** The money facts again, as news (MONEY_FACTS): written only when the buyer or the seller has a webhook. */
  completed: { topic: 'escrow.purchase.completed_notice', payload: 'completed', webhook: 'purchase.completed', audience: ['buyer', 'seller'] },
  refunded: { topic: 'escrow.purchase.refunded_notice', payload: 'refunded', webhook: 'purchase.refunded', audience: ['buyer', 'seller'] },
  disputed: { topic: 'escrow.purchase.disputed', payload: 'purchase', webhook: 'purchase.disputed', audience: ['buyer', 'seller'] },
  evaluation_requested: { topic: 'escrow.purchase.evaluation_requested', payload: 'evaluation', webhook: 'purchase.evaluation_requested', audience: ['evaluator'] },
  evaluated: { topic: 'escrow.purchase.evaluated', payload: 'evaluation', webhook: 'purchase.evaluated', audience: ['buyer', 'seller'], carries: 'the verdict and report' },
  /** A rating given or changed: listings updates the seller's reputation (no webhook; always written). */
  rated: { topic: 'escrow.purchase.rated', payload: 'rating' },
} as const satisfies Record<string, NoticeSpec>;

/** A purchase fact the transition publishes through the outbox with its state change. */
export type Notice = keyof typeof NOTICES;

/**
 * What a settle or void writes (the transition's moneyEvent; a hold is a keyed call): the money fact, always
 * (the ledger settles or voids the hold, listings counts the sale), and its notices.
 */
export const MONEY_FACTS = {
  settle: { topic: 'escrow.purchase.completed', payload: 'completed', notices: ['completed'] },
  void: { topic: 'escrow.purchase.refunded', payload: 'refunded', notices: ['refunded'] },
} as const satisfies Record<'settle' | 'void', { topic: `escrow.purchase.${string}`; payload: PayloadName; notices: readonly Notice[] }>;

type WebhookOf<S> = S extends { webhook: infer W extends string } ? W : never;
/** The webhook events purchase notices become (contracts/notifications.ts adds the others). */
export type PurchaseWebhookEvent = WebhookOf<(typeof NOTICES)[Notice]>;

/** The notices that are news for agents (they have a webhook and an audience). */
export const WEBHOOK_NOTICES: readonly (NoticeSpec & { webhook: PurchaseWebhookEvent; audience: readonly Party[] })[] = Object.values(NOTICES).filter(
  (n): n is Extract<(typeof NOTICES)[Notice], { webhook: string }> => 'webhook' in n,
);

/** Each purchase webhook event once, in NOTICES order. */
export const PURCHASE_WEBHOOK_EVENTS: readonly PurchaseWebhookEvent[] = [...new Set(WEBHOOK_NOTICES.map((n) => n.webhook))];

const PARTY_TEXT: Record<Party, string> = { buyer: 'buyer', seller: 'seller', evaluator: 'the evaluator the buyer named' };

/** Who receives a purchase webhook event, for the descriptions (set_webhook, the knowledge base). */
export function webhookRecipientsText(event: PurchaseWebhookEvent): string {
  const notices = WEBHOOK_NOTICES.filter((n) => n.webhook === event);
  const parties = [...new Set(notices.flatMap((n) => n.audience))].map((p) => PARTY_TEXT[p]).join(' and ');
  const carries = notices.find((n) => n.carries)?.carries;
  return carries ? `${parties} (with ${carries})` : parties;
}

/**
 * Who of a notice's audience is told, read from its payload (`<party>Id`): the seller only when it sees the
 * purchase — a refund of a purchase it never saw (a declined or expired approval) says `sellerSees: false`.
 * Escrow writes the notice for these agents (if one has a webhook), notifications sends it to them.
 */
export function recipientsOf(notice: NoticeSpec, data: Readonly<Record<string, unknown>>): { party: Party; agentId: string }[] {
  return (notice.audience ?? [])
    .filter((party) => party !== 'seller' || data.sellerSees !== false)
    .map((party) => ({ party, agentId: String(data[`${party}Id`]) }));
}

/** What a declared column is written with when the transition fires (`sets`). */
export const NOW = '@now';
/** The party that fired it ('buyer', 'seller', 'operator', …). */
export const ACTOR = '@actor';
/** A value the handler passes in `input` (a column it may leave out). */
export const INPUT = '@input';
/** NOW, ACTOR, INPUT or a constant (written as is). */
export type ColumnValue = typeof NOW | typeof ACTOR | typeof INPUT | string | boolean | null;

/** How long after a purchase enters a state its timer fires. */
export type Period = { hours: number } | { days: number } | { daysOfColumn: string } | { hoursOfColumn: string } | { daysOfTerm: 'autoReleaseDays' };

/**
 * The one column every timer writes (escrow.purchases.due_at): when the timer leaving the purchase's state
 * fires; null in a state no timer leaves. A state has at most one timer, so one column holds them all.
 */
export const DUE_AT = 'due_at';

/**
 * A timed transition (Sharetribe's `:at first-entered-state + period`, TigerBeetle's pending timeout):
 * the transition that ENTERS `from` writes DUE_AT = entered + period; the sweeper fires this transition
 * for purchases in `from` whose DUE_AT has passed (and whose `unless` column is still empty). A timer is
 * data on its transition: adding one needs no column.
 */
export interface Timer {
  period: Period;
  /** While this column is set the timer does not fire (a refund request pauses auto-release). */
  unless?: string;
}

/** A transition of any machine (the escrow table below, or a test's fixture table). */
export interface MachineTransition {
  trigger: string;
  /** The tool (or process) that fires it, as agents and docs name it. */
  tool: string;
  who: readonly Actor[];
  /** Empty: the transition creates the purchase. */
  from: readonly string[];
  /** null: the status stays (only `sets` change). */
  to: string | null;
  /**
   * The columns the transition writes besides status, updated_at and the timer columns of the state it
   * enters — the engine refuses to write any other — and with what (NOW, ACTOR, INPUT or a constant).
   */
  sets: Readonly<Record<string, ColumnValue>>;
  moneyEvent: MoneyEvent;
  /** The notices written to the outbox with the change. */
  notices?: readonly Notice[];
  /** A timed transition: fired by the sweeper when due. */
  after?: Timer;
  /** The transition applies only to a purchase whose column(s) are all set (e.g. evaluator_id): a guard on the row. */
  when?: string | readonly string[];
}

export interface Transition extends MachineTransition {
  trigger: Trigger;
  from: readonly PurchaseStatus[];
  to: PurchaseStatus | null;
  /** The knowledge/llms state table; false = an internal step not listed there. */
  doc: false | { from?: string; to: string };
}

/** A purchase machine: its states and its transitions. Everything else is derived (see below). */
export interface Machine {
  states: Readonly<Record<string, StateFlags>>;
  transitions: readonly MachineTransition[];
}

export type Trigger =
  | 'purchase'
  | 'fund'
  | 'fund_refused'
  | 'fund_for_approval'
  | 'late_hold'
  | 'approve'
  | 'decline'
  | 'approval_expired'
  | 'ack'
  | 'deliver'
  | 'deliver_for_evaluation'
  | 'evaluate_accept'
  | 'evaluate_reject'
  | 'evaluation_expired'
  | 'confirm'
  | 'auto_release'
  | 'auto_refund'
  | 'refund'
  | 'request_refund'
  | 'dispute'
  | 'resolve_refund'
  | 'resolve_release'
  | 'rate'
  | 'rate_evaluator';

/** Filled in by documentedTransitions with the operator's terms (the fee and auto-release are configurable). */
const feeText = '{sellerPercent}% sale_earn to the seller, {feePercent}% platform fee';

const refundedBy = { refunded_at: NOW, refunded_by: ACTOR } as const;
const completedBy = { completed_at: NOW, completed_by: ACTOR } as const;
const evaluatedWith = (verdict: 'accept' | 'reject') => ({ evaluated_at: NOW, evaluation_verdict: verdict, evaluation_report: INPUT }) as const;

export const TRANSITIONS: readonly Transition[] = [
  { trigger: 'purchase', tool: 'purchase_service', who: ['buyer'], from: [], to: 'pending', sets: { price_gas: INPUT, platform_fee_gas: INPUT, seller_net_gas: INPUT, idempotency_key: INPUT }, moneyEvent: null, doc: false },
  { trigger: 'fund', tool: 'purchase_service', who: ['buyer', 'sweeper'], from: ['pending'], to: 'awaiting_delivery', sets: { referral_checked: INPUT }, moneyEvent: 'hold', notices: ['created'], doc: { from: '—', to: 'awaiting_delivery (gas held in escrow) or error insufficient_gas' } },
  { trigger: 'fund_refused', tool: 'purchase_service', who: ['buyer', 'sweeper'], from: ['pending'], to: 'failed', sets: { failure_reason: INPUT, idempotency_key: null }, moneyEvent: null, doc: false },
  { trigger: 'fund_for_approval', tool: 'purchase_service', who: ['buyer', 'sweeper'], from: ['pending'], to: 'awaiting_approval', sets: { referral_checked: INPUT }, moneyEvent: 'hold', notices: ['approval_required'], doc: { from: '— (price above the human\'s "ask me above N" limit)', to: `awaiting_approval (gas held, seller not shown, approvalUrl for the human), then awaiting_delivery on approval, failed on decline or after ${APPROVAL_WINDOW_HOURS} h (hold voided)` } },
  // The ledger answered a hold after the purchase was marked failed (an old call outlived the sweeper's retry): give the gas back.
  { trigger: 'late_hold', tool: 'funding', who: ['ledger'], from: ['failed'], to: null, sets: {}, moneyEvent: 'void', doc: false },
  { trigger: 'approve', tool: 'approval page', who: ['owner'], from: ['awaiting_approval'], to: 'awaiting_delivery', sets: { approval_decided_at: NOW, approval_decision: 'approved' }, moneyEvent: null, notices: ['approved'], doc: false },
  { trigger: 'decline', tool: 'approval page', who: ['owner'], from: ['awaiting_approval'], to: 'failed', sets: { approval_decided_at: NOW, approval_decision: 'declined', failure_reason: 'declined' }, moneyEvent: 'void', doc: false },
  { trigger: 'approval_expired', tool: 'approval expiry', who: ['sweeper'], from: ['awaiting_approval'], to: 'failed', sets: { approval_decided_at: NOW, approval_decision: 'expired', failure_reason: 'approval_expired' }, moneyEvent: 'void', after: { period: { hours: APPROVAL_WINDOW_HOURS } }, doc: false },
  { trigger: 'ack', tool: 'ack_purchase', who: ['seller'], from: ['awaiting_delivery'], to: null, sets: { acknowledged_at: NOW }, moneyEvent: null, doc: { to: 'same state, acknowledgedAt set' } },
  { trigger: 'deliver', tool: 'deliver_work', who: ['seller'], from: ['awaiting_delivery'], to: 'delivered', sets: { delivered_at: NOW, delivery_json: INPUT, delivery_sha256: INPUT }, moneyEvent: null, notices: ['delivered'], doc: { to: 'delivered (deliveredAt, sha256 of the delivery)' } },
  // Tried first by deliver_work (its `when`); after plain deliver in the table, so readers taking the first match see the common path.
  { trigger: 'deliver_for_evaluation', tool: 'deliver_work', who: ['seller'], from: ['awaiting_delivery'], to: 'awaiting_evaluation', when: 'evaluator_id', sets: { delivered_at: NOW, delivery_json: INPUT, delivery_sha256: INPUT }, moneyEvent: null, notices: ['delivered', 'evaluation_requested'], doc: { to: 'awaiting_evaluation when the buyer named an evaluator (evaluateBy = deliveredAt + evaluationHours)' } },
  { trigger: 'evaluate_accept', tool: 'evaluate_delivery', who: ['evaluator'], from: ['awaiting_evaluation'], to: 'completed', sets: { ...evaluatedWith('accept'), completed_at: NOW, completed_by: 'evaluator' }, moneyEvent: 'settle', notices: ['evaluated'], doc: { to: `completed (verdict accept: ${feeText}, the evaluator its feeGas as evaluator_fee)` } },
  { trigger: 'evaluate_reject', tool: 'evaluate_delivery', who: ['evaluator'], from: ['awaiting_evaluation'], to: 'refunded', sets: { ...evaluatedWith('reject'), refunded_at: NOW, refunded_by: 'evaluator' }, moneyEvent: 'void', notices: ['evaluated'], doc: { to: 'refunded (verdict reject: the price back to the buyer, the evaluator its feeGas as evaluator_fee)' } },
  { trigger: 'evaluation_expired', tool: 'evaluation timeout', who: ['sweeper'], from: ['awaiting_evaluation'], to: 'delivered', sets: { evaluation_expired_at: NOW }, moneyEvent: null, after: { period: { hoursOfColumn: 'evaluation_hours' } }, doc: { from: 'awaiting_evaluation, evaluationHours (default 48) without a verdict', to: 'delivered (the fee goes back to the buyer when the purchase settles; auto-release starts now)' } },
  { trigger: 'confirm', tool: 'confirm_delivery', who: ['buyer'], from: ['delivered'], to: 'completed', sets: completedBy, moneyEvent: 'settle', doc: { to: `completed (${feeText})` } },
  { trigger: 'auto_release', tool: 'auto-release', who: ['sweeper'], from: ['delivered'], to: 'completed', sets: { completed_at: NOW, completed_by: 'auto_release' }, moneyEvent: 'settle', after: { period: { daysOfTerm: 'autoReleaseDays' }, unless: 'refund_requested_at' }, doc: { from: 'delivered, {autoReleaseDays} days after deliveredAt, no refund request or dispute', to: 'completed' } },
  { trigger: 'auto_refund', tool: 'auto-refund', who: ['sweeper'], from: ['awaiting_delivery'], to: 'refunded', sets: { refunded_at: NOW, refunded_by: 'auto_refund' }, moneyEvent: 'void', after: { period: { daysOfColumn: 'delivery_days' } }, doc: { from: `awaiting_delivery, the listing's deliveryDays (default ${DEFAULT_DELIVERY_DAYS}) passed`, to: 'refunded' } },
  { trigger: 'refund', tool: 'request_refund', who: ['buyer'], from: ['awaiting_delivery'], to: 'refunded', sets: { ...refundedBy, refund_reason: INPUT }, moneyEvent: 'void', doc: { to: 'refunded at once' } },
  { trigger: 'request_refund', tool: 'request_refund', who: ['buyer'], from: ['delivered'], to: null, sets: { refund_requested_at: NOW, refund_reason: INPUT }, moneyEvent: null, doc: { to: 'stays delivered, refundRequestedAt set, auto-release paused' } },
  { trigger: 'refund', tool: 'request_refund', who: ['seller'], from: ['awaiting_delivery', 'awaiting_evaluation', 'delivered'], to: 'refunded', sets: { ...refundedBy, refund_reason: INPUT }, moneyEvent: 'void', doc: { to: 'refunded (the seller gives the money back)' } },
  { trigger: 'dispute', tool: 'dispute_purchase', who: ['buyer', 'seller'], from: ['awaiting_delivery', 'awaiting_evaluation', 'delivered'], to: 'disputed', sets: { disputed_at: NOW, disputed_by: ACTOR, dispute_reason: INPUT }, moneyEvent: null, notices: ['disputed'], doc: { to: 'disputed, escrow frozen' } },
  { trigger: 'resolve_refund', tool: 'admin resolve', who: ['operator'], from: ['disputed'], to: 'refunded', sets: { ...refundedBy, dispute_resolved_at: NOW, dispute_outcome: 'refund', dispute_note: INPUT, dispute_resolved_by: INPUT }, moneyEvent: 'void', doc: { to: 'refunded or completed' } },
  { trigger: 'resolve_release', tool: 'admin resolve', who: ['operator'], from: ['disputed'], to: 'completed', sets: { ...completedBy, dispute_resolved_at: NOW, dispute_outcome: 'release', dispute_note: INPUT, dispute_resolved_by: INPUT }, moneyEvent: 'settle', doc: false },
  { trigger: 'rate', tool: 'rate_purchase', who: ['buyer'], from: ['completed'], to: null, sets: { rating: INPUT, rating_comment: INPUT, first_rated_at: INPUT, rated_at: NOW }, moneyEvent: null, notices: ['rated'], doc: { to: `rating 1–5 (once; may be changed within ${RATING_CHANGE_WINDOW_DAYS} days)` } },
  // The buyer rates the evaluator it named (rate_purchase target "evaluator"), once, when nothing else can change; it feeds the evaluator's reputation.
  { trigger: 'rate_evaluator', tool: 'rate_purchase', who: ['buyer'], from: ['completed', 'refunded'], to: null, when: ['evaluator_id', 'delivered_at'], sets: { evaluator_rating: INPUT, evaluator_rated_at: NOW }, moneyEvent: null, doc: { from: 'completed or refunded, with an evaluator that received the delivery', to: 'evaluator rating 1–5 (rate_purchase target "evaluator"; once, final)' } },
];

/** The escrow service's machine. */
export const MACHINE: Machine = { states: STATES, transitions: TRANSITIONS };

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

/** Every state a purchase can reach from `states` by the machine's transitions, those states included. */
export function reachableFrom(states: readonly string[]): Set<string> {
  const seen = new Set<string>(states);
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of TRANSITIONS) {
      if (!t.to || seen.has(t.to) || !t.from.some((f) => seen.has(f))) continue;
      seen.add(t.to);
      grew = true;
    }
  }
  return seen;
}

export function transitionsFor(trigger: Trigger): Transition[] {
  return TRANSITIONS.filter((t) => t.trigger === trigger);
}

// Machine-level (any machine: escrow's, or a test's fixture). The escrow-typed versions follow them.

/** The transition `trigger` fires for `who` from `status` in machine `m`, or undefined when it may not. */
export function transitionIn(m: Machine, trigger: string, who: Actor, status: string, row?: Readonly<Record<string, unknown>>): MachineTransition | undefined {
  return m.transitions.find(
    (t) => t.trigger === trigger && t.who.includes(who) && t.from.includes(status) && (!row || !t.when || [t.when].flat().every((c) => row[c] !== null && row[c] !== undefined)),
  );
}

/** The states of `m` from which a set of triggers is accepted for `who` (the "needs …" of an invalid_state message). */
export function statesAcceptingIn(m: Machine, triggers: readonly string[], who: Actor): string[] {
  const from = new Set<string>();
  for (const t of m.transitions) if (triggers.includes(t.trigger) && t.who.includes(who)) for (const s of t.from) from.add(s);
  return Object.keys(m.states).filter((s) => from.has(s));
}

/** The timed transitions of `m` (what the sweeper fires when due). */
export function timedTransitions(m: Machine): (MachineTransition & { after: Timer })[] {
  return m.transitions.filter((t): t is MachineTransition & { after: Timer } => !!t.after);
}

/** The timers that start when a purchase enters `status` (DUE_AT is written on entry): none or one. */
export function timersOf(m: Machine, status: string): Timer[] {
  return timedTransitions(m).filter((t) => t.from.includes(status)).map((t) => t.after);
}

/** The one timer leaving `status`, if any; a machine whose state has two is refused (one DUE_AT column holds it). */
export function timerOf(m: Machine, status: string): Timer | undefined {
  const timers = timersOf(m, status);
  if (timers.length > 1) throw new Error(`state ${status} has ${timers.length} timers; a state has at most one (one due_at column)`);
  return timers[0];
}

/** The CHECK constraint on escrow.purchases.status for machine `m`. */
export function statusCheckSqlOf(m: Machine, column = 'status'): string {
  return `${column} IN (${Object.keys(m.states).map((s) => `'${s}'`).join(', ')})`;
}

/** The transition `trigger` fires for `who` from `status`, or undefined when it may not. */
export function transitionFrom(trigger: Trigger, who: Actor, status: PurchaseStatus): Transition | undefined {
  return transitionIn(MACHINE, trigger, who, status) as Transition | undefined;
}

/** The states a set of triggers accepts for `who` (the "needs …" of an invalid_state message). */
export function statesAccepting(triggers: readonly Trigger[], who: Actor): PurchaseStatus[] {
  return statesAcceptingIn(MACHINE, triggers, who) as PurchaseStatus[];
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
  return statusCheckSqlOf(MACHINE, column);
}

/**
 * Whether the timer of `trigger` is running for a purchase in `status` (it leaves that state and is not
 * paused by its `unless` column): views show DUE_AT as autoReleaseAt, deliverBy, approvalExpiresAt or
 * evaluateBy from this.
 */
export function timerRunning(status: PurchaseStatus, trigger: Trigger, row: Readonly<Record<string, unknown>>): boolean {
  return TRANSITIONS.some((t) => t.trigger === trigger && t.after && t.from.includes(status) && (!t.after.unless || row[t.after.unless] === null || row[t.after.unless] === undefined));
}

/** The due time a view shows for `trigger`'s timer: the row's DUE_AT while that timer runs, else null. */
export function dueOf(status: PurchaseStatus, trigger: Trigger, row: Readonly<Record<string, unknown>>): unknown {
  return timerRunning(status, trigger, row) ? row[DUE_AT] : null;
}

/** Whether a purchase in `status` waits for `who` (e.g. the owner's approval: the approval link is shown). */
export function awaits(status: PurchaseStatus, who: Actor): boolean {
  return TRANSITIONS.some((t) => t.from.includes(status) && t.who.includes(who));
}

/**
 * A purchase as an MCP task: its state's task status (after a delivery: its `delivered` status, completed by
 * default — the delivery is the result), except that a delivery the evaluator rejected is no result (failed).
 */
export function purchaseTask(status: PurchaseStatus, facts: { delivered: boolean; verdict: 'accept' | 'reject' | null }): { status: TaskStatus; pollIntervalMs?: number } {
  const t: StateFlags['task'] = (STATES as Record<string, StateFlags>)[status]?.task ?? { status: 'working' };
  const taskStatus = facts.verdict === 'reject' ? 'failed' : facts.delivered ? (t.delivered ?? 'completed') : t.status;
  return taskStatus === 'working' ? { status: taskStatus, pollIntervalMs: t.pollMs ?? 5000 } : { status: taskStatus };
}

/**
 * The tools `who` may call on a purchase in `status` (a state's moves: prompts, the purchase view's task.tools);
 * with the row, only the transitions whose `when` columns it has (deliver_work goes to evaluation only with an evaluator).
 */
export function toolsAt(status: PurchaseStatus, who: Actor, row?: Readonly<Record<string, unknown>>): string[] {
  const applies = (t: Transition) => !row || !t.when || [t.when].flat().every((c) => row[c] !== null && row[c] !== undefined);
  return [...new Set(TRANSITIONS.filter((t) => t.from.includes(status) && t.who.includes(who) && applies(t)).map((t) => t.tool))];
}

/** The states in words, for prose: those a purchase moves on from, then the final ones. */
export function statesInWords(): string {
  return `${PURCHASE_STATUSES.filter((s) => !STATES[s].final).join(', ')}; final: ${FINAL_STATUSES.join(', ')}`;
}

/** Each state with what the caller can do next (its `next` hint): the knowledge base's list of states. */
export function stateGuide(): { status: PurchaseStatus; final: boolean; next: string }[] {
  return PURCHASE_STATUSES.map((status) => ({ status, final: STATES[status].final, next: STATES[status].next }));
}

export function nextStepHint(status: PurchaseStatus): string {
  return (STATES as Record<string, StateFlags>)[status]?.next ?? 'Read the purchase again with get_purchase.';
}

/** What one tool (or process) does, state by state, in words ("buyer, from delivered: stays delivered, …"): per-state behaviour for descriptions. */
export function movesInWords(tool: string, terms: MarketTerms = DEFAULT_TERMS): string[] {
  return documentedTransitions(terms)
    .filter((t) => t.trigger === tool)
    .map((t) => `${t.who}, from ${t.from}: ${t.to}`);
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
