/**
 * Escrow's internal contract, declared once: the actions other services and the gateway call,
 * and the durable event topics it publishes through its outbox, with their payload types.
 * Consumers (ledger, listings) import the topics and payloads from here.
 */
import { callerOf, type Action, type NoParams } from './call';
import { MONEY_FACTS, NOTICES, type Notice, type PurchaseStatus } from './purchase-machine';

export const ESCROW = {
  purchase: 'escrow.purchase',
  get: 'escrow.get',
  disputeHistory: 'escrow.disputeHistory',
  listDisputes: 'escrow.listDisputes',
  resolveDispute: 'escrow.resolveDispute',
  openPurchaseIds: 'escrow.openPurchaseIds',
  openPurchases: 'escrow.openPurchases',
  auditHolds: 'escrow.auditHolds',
  // Read-only pages of escrow's side for the reconciling audit (packages/ledger-audit joins them).
  purchaseRecords: 'escrow.purchaseRecords',
  referralRecords: 'escrow.referralRecords',
  liquidity: 'escrow.liquidity',
  sweep: 'escrow.sweep',
  // spending limits and approvals: called by the gateway's pages for people only (no tool reaches them)
  limitsOf: 'escrow.limitsOf',
  setLimits: 'escrow.setLimits',
  createOwnerLink: 'escrow.createOwnerLink',
  ownerLink: 'escrow.ownerLink',
  revokeOwnerLink: 'escrow.revokeOwnerLink',
  ownerLinks: 'escrow.ownerLinks',
  revokeOtherOwnerLinks: 'escrow.revokeOtherOwnerLinks',
  recentPurchases: 'escrow.recentPurchases',
  stageCheckoutLimits: 'escrow.stageCheckoutLimits',
  claimCheckoutLimits: 'escrow.claimCheckoutLimits',
  approval: 'escrow.approval',
  decideApproval: 'escrow.decideApproval',
  metricsSnapshot: 'escrow.metricsSnapshot',
  dispute: 'escrow.dispute',
  rate: 'escrow.rate',
  sendMessage: 'escrow.sendMessage',
  listMessages: 'escrow.listMessages',
  listOrders: 'escrow.listOrders',
  ack: 'escrow.ack',
  deliver: 'escrow.deliver',
  getDelivery: 'escrow.getDelivery',
  confirm: 'escrow.confirm',
  requestRefund: 'escrow.requestRefund',
  evaluate: 'escrow.evaluate',
  evaluatorReputation: 'escrow.evaluatorReputation',
  // sandbox only (ADR 0040): an operator brings one purchase's timer to now, to see a timeout without waiting for it
  sandboxFireTimer: 'escrow.sandboxFireTimer',
} as const;

type CamelCase<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;
/** A purchase fact of the machine: a notice or a money fact (settle, void). */
type PurchaseFact = (typeof NOTICES)[Notice] | (typeof MONEY_FACTS)[keyof typeof MONEY_FACTS];
/** 'escrow.purchase.completed_notice' → 'completedNotice'. */
type TopicKey<T extends string> = T extends `escrow.purchase.${infer S}` ? CamelCase<S> : never;

function topicKey(topic: string): string {
  return topic.replace(/^escrow\.purchase\./, '').replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
}

/**
 * The purchase facts' topics, keyed by their topic's camelCased name (`completed`, `completedNotice`,
 * `evaluationRequested`): declared in the machine (NOTICES, MONEY_FACTS in purchase-machine.ts, where each
 * one's meaning and readers are written), so a new notice needs no line here.
 */
const PURCHASE_TOPICS = Object.fromEntries(
  [...Object.values(MONEY_FACTS), ...Object.values(NOTICES)].map((f) => [topicKey(f.topic), f.topic]),
) as { [F in PurchaseFact as TopicKey<F['topic']>]: F['topic'] };

export const ESCROW_TOPICS = {
  ...PURCHASE_TOPICS,
  /** a referred buyer's first funded purchase: the ledger pays the referral bonus. */
  referralQualified: 'escrow.referral.qualified',
  messageSent: 'escrow.message.sent',
} as const;

export type EscrowTopic = (typeof ESCROW_TOPICS)[keyof typeof ESCROW_TOPICS];

export type PurchaseCompleted = {
  purchaseId: string;
  buyerId: string;
  sellerId: string;
  listingId: string;
  priceGas: number;
  platformFeeGas: number;
  sellerNetGas: number;
  completedAt: string;
  /** A purchase with an evaluator: its fee is held too; `evaluatorPaid` says whether it goes to the evaluator (a verdict) or back to the buyer. */
  evaluatorId?: string | null;
  evaluatorFeeGas?: number;
  evaluatorPaid?: boolean;
};

export type PurchaseRefunded = {
  purchaseId: string;
  buyerId: string;
  sellerId: string;
  listingId: string;
  priceGas: number;
  refundedAt: string;
  /** false when the seller never saw the purchase (a declined or expired approval): only the buyer is told. */
  sellerSees?: boolean;
  evaluatorId?: string | null;
  evaluatorFeeGas?: number;
  evaluatorPaid?: boolean;
};

/** purchase.evaluation_requested (to the evaluator) and purchase.evaluated (to both parties). */
export type PurchaseEvaluation = {
  purchaseId: string;
  buyerId: string;
  sellerId: string;
  evaluatorId: string;
  listingId: string;
  listingTitle: string;
  priceGas: number;
  evaluatorFeeGas: number;
  status: PurchaseStatus;
  evaluateBy: string | null;
  verdict: 'accept' | 'reject' | null;
  report: string | null;
  at: string;
};

export type PurchaseRated = {
  purchaseId: string;
  sellerId: string;
  listingId: string;
  rating: number;
  previousRating: number | null;
};

export type ReferralQualified = {
  referrerId: string;
  referredId: string;
  purchaseId: string;
};

export type PurchaseApprovalRequired = {
  purchaseId: string;
  buyerId: string;
  listingId: string;
  listingTitle: string;
  priceGas: number;
  approvalUrl: string;
  approvalExpiresAt: string;
};

export type PurchaseApproved = {
  purchaseId: string;
  buyerId: string;
  sellerId: string;
  listingId: string;
  priceGas: number;
  approvedAt: string;
};

/** What the human sets (null = no such limit). */
export interface SpendingLimitsInput {
  perPurchaseMaxGas?: number | null;
  dailyBudgetGas?: number | null;
  weeklyBudgetGas?: number | null;
  allowedCategories?: string[] | null;
  approvalAboveGas?: number | null;
}

/** whoami/wallet `spendingLimits`: the limits and what was spent in the UTC day and ISO week. */
export interface SpendingLimitsView {
  perPurchaseMaxGas: number | null;
  dailyBudgetGas: number | null;
  weeklyBudgetGas: number | null;
  allowedCategories: string[] | null;
  approvalAboveGas: number | null;
  spentTodayGas: number;
  spentThisWeekGas: number;
  remainingTodayGas: number | null;
  remainingThisWeekGas: number | null;
  /** false: the human never set limits (everything is allowed). */
  setByHuman: boolean;
}

/** created / delivered / disputed: who is involved and what it is about. */
export type PurchaseNotice = {
  purchaseId: string;
  buyerId: string;
  sellerId: string;
  listingId: string;
  listingTitle: string;
  priceGas: number;
  status: PurchaseStatus;
  at: string;
};

export type MessageSent = {
  messageId: string;
  purchaseId: string;
  senderId: string;
  recipientId: string;
  from: 'buyer' | 'seller' | 'evaluator';
  at: string;
};

/** Each payload shape the machine's purchase facts name (escrow/events.ts builds one per shape). */
export interface PurchasePayloads {
  purchase: PurchaseNotice;
  approval: PurchaseApprovalRequired;
  approved: PurchaseApproved;
  evaluation: PurchaseEvaluation;
  rating: PurchaseRated;
  completed: PurchaseCompleted;
  refunded: PurchaseRefunded;
}

/** Every notice's payload names each party of its audience (`<party>Id`): whom escrow and notifications tell. */
type Audience<F> = F extends { audience: readonly (infer P extends string)[] } ? P : never;
type NamesItsAudience<F extends PurchaseFact> = PurchasePayloads[F['payload']] extends Record<`${Audience<F>}Id`, string> ? true : false;
const payloadsNameTheirAudience: { [F in PurchaseFact as F['topic']]: NamesItsAudience<F> } extends Record<string, true> ? true : false = true;
void payloadsNameTheirAudience;

/** Escrow's durable topics and their payloads. */
export type EscrowEvents = { [F in PurchaseFact as F['topic']]: PurchasePayloads[F['payload']] } & {
  'escrow.message.sent': MessageSent;
  'escrow.referral.qualified': ReferralQualified;
};

export interface OpenPurchase {
  purchaseId: string;
  buyerId: string;
  amountGas: number;
  status: PurchaseStatus;
}

export interface DisputeHistory {
  openAsSeller: number;
  lostLast90Days: number;
  disputesLast90Days: number;
}

export type Role = 'buyer' | 'seller' | 'evaluator';

/** A purchase's evaluator (issue #35): named by the buyer at purchase, paid feeGas for a verdict. */
export interface EvaluatorView {
  agentId: string;
  feeGas: number;
  evaluationHours: number;
  /** awaiting_evaluation: no verdict by then → delivered (the buyer decides; the fee goes back to the buyer). */
  evaluateBy: string | null;
  verdict: 'accept' | 'reject' | null;
  /** The evaluator's report, shown to both parties. */
  report: string | null;
  evaluatedAt: string | null;
  /** Set when the evaluator gave no verdict in time. */
  expiredAt: string | null;
  /** The buyer's rating of the evaluator (rate_purchase target "evaluator"), 1–5, once. */
  rating: number | null;
}

export interface PurchaseView {
  id: string;
  listingId: string;
  listingTitle: string;
  buyerId: string;
  sellerId: string;
  priceGas: number;
  platformFeeGas: number;
  sellerNetGas: number;
  status: PurchaseStatus;
  requirements: unknown;
  acknowledgedAt: string | null;
  deliveredAt: string | null;
  deliverySha256: string | null;
  completedAt: string | null;
  refundedAt: string | null;
  refundRequestedAt: string | null;
  disputedAt: string | null;
  /** When escrow releases to the seller unless the buyer acts; null while paused (refund requested, dispute) or not delivered. */
  autoReleaseAt: string | null;
  /** Undelivered by then → refunded automatically. */
  deliverBy: string | null;
  rating: number | null;
  createdAt: string;
  updatedAt: string;
  deliveryDays: number;
  ratingComment: string | null;
  refundReason: string | null;
  disputedBy: Role | null;
  disputeReason: string | null;
  disputeOutcome: 'refund' | 'release' | null;
  failureReason: string | null;
  /** awaiting_approval: the page the buyer's human approves or declines on (shown to the buyer only). */
  approvalUrl: string | null;
  /** awaiting_approval: unanswered by then → failed, hold voided. */
  approvalExpiresAt: string | null;
  /** The caller's side of this purchase (absent for operators). */
  role?: Role;
  /** Only on a purchase with an evaluator. */
  evaluator?: EvaluatorView;
  /** Price + the evaluator's fee: what the buyer's gas holds (only on a purchase with an evaluator). */
  totalHeldGas?: number;
  /** The purchase as an MCP task (derived from the machine; the stdio package reads it instead of restating it), and what comes next. */
  /** tools: what the reading party may call on it now (the machine's transitions from this state for that party). */
  task: { status: 'working' | 'completed' | 'failed'; pollIntervalMs?: number; next: string; tools?: string[] };
}

export interface EscrowMetricsSnapshot {
  purchasesByState: Record<string, number>;
  /** Outbox events (settle/refund/referral) not yet handed to the bus, and the age of the oldest in seconds. */
  outboxPending: number;
  settlementLagSeconds: number;
}

/** A purchase as the reconciling audit compares it with its ledger hold: parties, price and the split quoted at purchase. */
export interface PurchaseRecord extends Pick<PurchaseView, 'buyerId' | 'sellerId' | 'priceGas' | 'platformFeeGas' | 'sellerNetGas' | 'status'> {
  purchaseId: string;
  completedAt: string | null;
  refundedAt: string | null;
  updatedAt: string;
  /** The evaluator's fee held with the price (0 without an evaluator). */
  evaluatorFeeGas?: number;
}

/** A referred buyer's first funded purchase that qualified its referrer (escrow.referral.qualified was written with it). */
export interface ReferralRecord {
  referredId: string;
  referrerId: string;
  purchaseId: string;
  checkedAt: string;
}

/**
 * An agent's signals as an evaluator (issue #35), read from the purchases that named it: verdicts given,
 * purchases whose evaluation timed out, and the buyers' ratings of it (rate_purchase target "evaluator").
 */
export interface EvaluatorReputation {
  /** Deliveries it received to evaluate (accepted + rejected + timedOut + those still awaiting or disputed). */
  evaluations: number;
  accepted: number;
  rejected: number;
  /** No verdict within evaluationHours (the purchase went to delivered). */
  timedOut: number;
  ratingAvg: number | null;
  ratingCount: number;
}

/** Escrow's actions other services call: name → params and result (callEscrow's types). */
export interface EscrowActions {
  [ESCROW.disputeHistory]: Action<{ sellerId: string }, DisputeHistory>;
  [ESCROW.limitsOf]: Action<{ agentId: string }, SpendingLimitsView>;
  [ESCROW.setLimits]: Action<{ agentId: string; limits: SpendingLimitsInput }, SpendingLimitsView>;
  [ESCROW.listOrders]: Action<{ role?: Role | 'all'; status?: string; limit?: number; cursor?: string }, { purchases: PurchaseView[] }>;
  [ESCROW.createOwnerLink]: Action<{ agentId: string }, { token: string }>;
  [ESCROW.ownerLink]: Action<{ token: string }, { agentId: string }>;
  [ESCROW.revokeOwnerLink]: Action<{ token: string }, { revoked: boolean }>;
  [ESCROW.ownerLinks]: Action<{ token: string }, { links: { createdAt: string; current: boolean }[] }>;
  [ESCROW.revokeOtherOwnerLinks]: Action<{ token: string }, { revoked: number }>;
  [ESCROW.recentPurchases]: Action<{ agentId: string; limit?: number }, { purchases: PurchaseView[] }>;
  [ESCROW.stageCheckoutLimits]: Action<{ sessionId: string; agentId: string; limits?: SpendingLimitsInput | null; browser: string }, { staged: boolean }>;
  [ESCROW.claimCheckoutLimits]: Action<{ sessionId: string; agentId: string; browser?: string }, { ownerToken: string | null; limitsApplied: boolean }>;
  [ESCROW.approval]: Action<{ token: string }, { purchase: PurchaseView }>;
  [ESCROW.decideApproval]: Action<{ token: string; decision: string }, { purchase: PurchaseView }>;
  [ESCROW.liquidity]: Action<NoParams, Record<string, unknown>>;
  [ESCROW.metricsSnapshot]: Action<NoParams, EscrowMetricsSnapshot>;
  [ESCROW.evaluatorReputation]: Action<{ agentId: string }, EvaluatorReputation>;
  [ESCROW.sandboxFireTimer]: Action<{ purchaseId: string }, { purchaseId: string; trigger: string; status: PurchaseStatus }>;
}

/** An escrow call whose params and result are the action's own. */
export const callEscrow = callerOf<EscrowActions>();
