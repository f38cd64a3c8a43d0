/**
 * Support's internal contract. The gateway hands support the caller's own request-log entry and a
 * small snapshot of the caller's own account in meta; support calls nobody.
 */
import { callerOf, type Action, type NoParams } from './call';
import type { RequestLogEntry } from './gateway';
import type { PurchaseView, SpendingLimitsView } from './escrow';
import type { DeliveryView, WebhookView } from './notifications';

/** A concrete tool call ask_help suggests. */
export interface NextStep {
  tool: string;
  arguments: Record<string, unknown>;
}

export const SUPPORT = {
  askHelp: 'support.askHelp',
  reportBug: 'support.reportBug',
  reportExperience: 'support.reportExperience',
  summary: 'support.summary',
  listBugs: 'support.listBugs',
  getBug: 'support.getBug',
  setBugStatus: 'support.setBugStatus',
  listExperiences: 'support.listExperiences',
} as const;

/** A bug report's states, as the operator moves it (report_bug files it open). */
export const BUG_STATUSES = ['open', 'acknowledged', 'fixed', 'closed', 'wont_fix'] as const;

/** ctx.meta of askHelp / reportBug as the gateway sends it. */
export interface SupportCallMeta {
  requestLogEntry?: RequestLogEntry | null;
  /** ask_help: the caller's own account as the gateway read it (null: not authenticated, or nothing could be read). */
  helpAccount?: HelpAccount | null;
}

/**
 * The caller's own account, as ask_help sees it (issue #26): the gateway reads it with the caller's
 * identity (list_orders, wallet, spending limits, webhooks, its own request log), never another
 * agent's. Each part is null when its service did not answer.
 */
export interface HelpAccount {
  agentId: string;
  /** When it was read (ISO). */
  at: string;
  /** The caller's recent purchases as buyer and as seller, newest first (role = the caller's side). */
  purchases: PurchaseView[] | null;
  wallet: { gasBalance: number; heldGas: number; pendingEarningsGas: number; withdrawableGas: number } | null;
  limits: SpendingLimitsView | null;
  webhooks: WebhookView[] | null;
  /** Webhook deliveries that are failing or failed (status failed, or pending with a failed attempt). */
  failedDeliveries: DeliveryView[] | null;
  /** The caller's own recent failed calls (request log, last 7 days), newest first. */
  recentErrors: RequestLogEntry[] | null;
  /** The caller's open gas checkouts (get_checkout), newest first; absent or null when payments did not answer. */
  checkouts?: HelpCheckout[] | null;
}

/** An open gas checkout as get_checkout shows it to its agent. */
export interface HelpCheckout {
  sessionId: string;
  checkoutUrl: string;
  packId: string;
  gas: number;
  status: string;
  expiresAt: string;
}

/** One thing of the caller's own account an answer looked at. */
export interface LookedAt {
  kind: 'orders' | 'purchase' | 'wallet' | 'spending_limits' | 'checkouts' | 'webhooks' | 'webhook' | 'webhook_delivery' | 'requests' | 'request';
  /** The id (pur_…, whk_…, req_…); the agent's own id for the lists (orders, webhooks, requests), wallet and spending limits. */
  id: string;
}

export interface HelpContext {
  toolName?: string;
  error?: string;
  requestId?: string;
}

export interface HelpInput {
  question: string;
  stuckState?: string;
  context?: HelpContext;
  /** The caller's own request-log entry for context.requestId, or null (unknown or someone else's). */
  request?: RequestLogEntry | null;
  /** The caller's own account as the gateway read it (absent or null: answer from the documentation). */
  account?: HelpAccount | null;
  /** Now, for "delivered 2 days ago, auto-releases in 1 day" (support's clock). */
  now?: Date;
}

export interface HelpAnswer {
  answer: string;
  nextStep: NextStep | null;
  sources: Array<{ id: string; title: string }>;
  known: boolean;
  confidence: number;
  generatedBy: 'retrieval' | 'llm';
  /** The explained request (context.requestId), when it is the caller's own. */
  request?: { requestId: string; tool: string | null; status: number; errorCode: string | null; errorMessage: string | null; at: string | null } | null;
  /** What of the caller's own account the answer was grounded in (empty: answered from the documentation alone). */
  lookedAt?: LookedAt[];
  /** true: ask_help refused (off-topic, an action it cannot take, or someone else's data or secrets); the answer says what it can do instead. */
  declined?: boolean;
}

/** Support's actions other services call: name → params and result (callSupport's types). */
export interface SupportActions {
  [SUPPORT.summary]: Action<NoParams, Record<string, unknown>>;
}

/** A support call whose params and result are the action's own. */
export const callSupport = callerOf<SupportActions>();
