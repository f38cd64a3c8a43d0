/**
 * The one table of who may talk to whom on the bus. The architecture test enforces it on a journey,
 * `npm run bus:config` turns it into the NATS server's users and permissions (deploy/nats/auth.conf),
 * and the broker refuses a call outside it before it reaches the bus. A bottom package: it imports
 * only the services' contracts (names and types), never a service.
 */
import { AGENTS, AGENTS_TOPICS } from '../contracts/agents';
import { ESCROW, ESCROW_TOPICS } from '../contracts/escrow';
import { WEBHOOK_NOTICES } from '../contracts/purchase-machine';
import { LEDGER } from '../contracts/ledger';
import { LISTINGS, LISTINGS_TOPICS } from '../contracts/listings';
import { NOTIFICATIONS, NOTIFICATIONS_TOPICS } from '../contracts/notifications';
import { PAYMENTS, PAYMENTS_TOPICS } from '../contracts/payments';
import { SUPPORT } from '../contracts/support';

/**
 * The services' layers (docs/architecture.md): a service may call only services below it.
 * The ledger is the bottom and calls nobody; reads never write.
 */
export const LAYERS = ['gateway', 'support', 'notifications', 'payments', 'escrow', 'listings', 'agents', 'ledger'] as const;
export type ServiceName = (typeof LAYERS)[number];

/**
 * caller → the other services' actions it may call, one by one. The bus carries each request on a
 * subject that names its action and its caller (packages/broker/nats-transporter.ts), and the NATS
 * server lets each service publish only the actions of its row (nats-auth.ts): the gateway may ask
 * the ledger for a balance and cannot reach a money step. A test reads the source and checks that
 * each row is exactly what the service's code calls.
 */
export const CALLS: Record<ServiceName, readonly string[]> = {
  gateway: [
    AGENTS.authenticate,
    AGENTS.get,
    AGENTS.register,
    AGENTS.setSeed,
    AGENTS.whoami,
    ESCROW.ack,
    ESCROW.approval,
    ESCROW.auditHolds,
    ESCROW.claimCheckoutLimits,
    ESCROW.confirm,
    ESCROW.createOwnerLink,
    ESCROW.decideApproval,
    ESCROW.deliver,
    ESCROW.dispute,
    ESCROW.evaluate,
    ESCROW.evaluatorReputation,
    ESCROW.get,
    ESCROW.getDelivery,
    ESCROW.limitsOf,
    ESCROW.liquidity,
    ESCROW.listDisputes,
    ESCROW.listMessages,
    ESCROW.listOrders,
    ESCROW.metricsSnapshot,
    ESCROW.ownerLink,
    ESCROW.ownerLinks,
    ESCROW.purchase,
    ESCROW.purchaseRecords,
    ESCROW.rate,
    ESCROW.recentPurchases,
    ESCROW.referralRecords,
    ESCROW.requestRefund,
    ESCROW.resolveDispute,
    ESCROW.sandboxFireTimer,
    ESCROW.revokeOtherOwnerLinks,
    ESCROW.revokeOwnerLink,
    ESCROW.sendMessage,
    ESCROW.setLimits,
    ESCROW.stageCheckoutLimits,
    // The ledger's reads only: no money step.
    LEDGER.audit,
    LEDGER.balance,
    LEDGER.cashoutRecords,
    LEDGER.gasCreditRecords,
    LEDGER.holdRecords,
    LEDGER.metricsSnapshot,
    LEDGER.referralRecords,
    LEDGER.walletFigures,
    LISTINGS.create,
    LISTINGS.get,
    LISTINGS.getForPurchase,
    LISTINGS.reputation,
    LISTINGS.restore,
    LISTINGS.search,
    LISTINGS.seed,
    LISTINGS.stats,
    LISTINGS.takeDown,
    LISTINGS.update,
    NOTIFICATIONS.deleteWebhook,
    NOTIFICATIONS.listDeliveries,
    NOTIFICATIONS.setWebhook,
    PAYMENTS.buyGas,
    PAYMENTS.checkoutRecords,
    PAYMENTS.connectPayouts,
    PAYMENTS.getCheckout,
    PAYMENTS.getPayout,
    PAYMENTS.listCashouts,
    PAYMENTS.listCheckouts,
    PAYMENTS.listPayouts,
    PAYMENTS.markPayoutPaid,
    PAYMENTS.payoutRecords,
    PAYMENTS.reconcileSession,
    PAYMENTS.rejectPayout,
    PAYMENTS.requestCashout,
    PAYMENTS.sandboxApprove,
    PAYMENTS.sandboxDecline,
    PAYMENTS.stripeWebhook,
    SUPPORT.askHelp,
    SUPPORT.getBug,
    SUPPORT.listBugs,
    SUPPORT.listExperiences,
    SUPPORT.reportBug,
    SUPPORT.reportExperience,
    SUPPORT.setBugStatus,
    SUPPORT.summary,
  ],
  support: [],
  // A leaf consumer of escrow's and payments' durable events; it calls nobody.
  notifications: [],
  // Gas credits and cash-outs are payments' to post.
  payments: [ESCROW.disputeHistory, LEDGER.cashoutDebit, LEDGER.cashoutPaid, LEDGER.cashoutReturn, LEDGER.creditGasPurchase, LEDGER.withdrawable],
  // Holds are escrow's to place (settle and void travel as its durable events).
  escrow: [AGENTS.count, AGENTS.get, LEDGER.balance, LEDGER.getHold, LEDGER.hold, LEDGER.holdsOf, LEDGER.openHolds, LISTINGS.getForPurchase],
  listings: [AGENTS.get, AGENTS.register],
  agents: [],
  ledger: [],
};

/** One value per service, in LAYERS order. */
function perService<T>(value: (s: ServiceName) => T): Record<ServiceName, T> {
  const out: Partial<Record<ServiceName, T>> = {};
  for (const s of LAYERS) out[s] = value(s);
  return out as Record<ServiceName, T>;
}

/** caller → the services it may call: the services of its row of CALLS. */
export const ALLOWED_CALLS: Record<ServiceName, readonly ServiceName[]> = perService((s) =>
  LAYERS.filter((callee) => CALLS[s].some((a) => serviceOfAction(a) === callee)),
);

/** callee → the services whose rows name one of its actions (the only ones it answers). */
export function callersOf(service: ServiceName): ServiceName[] {
  return LAYERS.filter((c) => ALLOWED_CALLS[c].includes(service));
}

/** The durable-event topics each service publishes (through its outbox): only the owner may publish them. */
export const DURABLE_PUBLISHES: Record<ServiceName, readonly string[]> = {
  gateway: [],
  support: [],
  // Issue #22: whether an agent has webhooks (escrow writes notices only for those who do).
  notifications: Object.values(NOTIFICATIONS_TOPICS),
  payments: Object.values(PAYMENTS_TOPICS),
  escrow: Object.values(ESCROW_TOPICS),
  // Issue #22: a listing's buying terms changed (escrow keeps a copy).
  listings: Object.values(LISTINGS_TOPICS),
  agents: Object.values(AGENTS_TOPICS),
  ledger: [],
};

/**
 * The durable-event topics each service consumes (its schema's `channels`, group = the service name).
 * A test checks this against the services' schemas.
 */
export const DURABLE_CONSUMES: Record<ServiceName, readonly string[]> = {
  gateway: [],
  support: [],
  notifications: [
    // The purchase notices that are webhooks (the machine's NOTICES), then the other facts it tells agents of.
    ...WEBHOOK_NOTICES.map((n) => n.topic),
    ESCROW_TOPICS.messageSent,
    PAYMENTS_TOPICS.gasCredited,
    PAYMENTS_TOPICS.cashoutPaid,
    PAYMENTS_TOPICS.cashoutRejected,
  ],
  payments: [],
  escrow: [NOTIFICATIONS_TOPICS.webhooksChanged, LISTINGS_TOPICS.termsChanged],
  listings: [AGENTS_TOPICS.registered, AGENTS_TOPICS.seedChanged, ESCROW_TOPICS.completed, ESCROW_TOPICS.rated],
  agents: [],
  ledger: [ESCROW_TOPICS.completed, ESCROW_TOPICS.refunded, ESCROW_TOPICS.referralQualified],
};

/** Whose topics each service consumes (the owners of its DURABLE_CONSUMES topics): the source check reads this. */
export const CONSUMES: Record<ServiceName, readonly ServiceName[]> = perService((s) => [
  ...new Set(DURABLE_CONSUMES[s].map((t) => serviceOfTopic(t))),
]);

function serviceOfTopic(topic: string): ServiceName {
  return topic.split('.')[0] as ServiceName;
}

/** The service an action belongs to ("ledger.hold" → "ledger"), or null for an unknown one. */
export function serviceOfAction(action: string): ServiceName | null {
  const name = action.split('.')[0];
  return (LAYERS as readonly string[]).includes(name) ? (name as ServiceName) : null;
}

/** Whether the caller's row of the table names the action (a service may call its own actions). */
export function mayCall(caller: ServiceName, action: string): boolean {
  return serviceOfAction(action) === caller || CALLS[caller].includes(action);
}

/** The service a node belongs to: the first token of its id ("ledger.vm-1-abc" → "ledger"). */
export function ownerOfNode(nodeID: string): string {
  const dot = nodeID.indexOf('.');
  return dot < 0 ? nodeID : nodeID.slice(0, dot);
}

/** The edges that break the table: unknown services, calls not allowed, or calls to a layer at or above the caller. */
export function forbiddenCalls(edges: Iterable<string>): string[] {
  const bad: string[] = [];
  for (const edge of edges) {
    const [from, to] = edge.split('->') as [ServiceName, ServiceName];
    const allowed = ALLOWED_CALLS[from]?.includes(to) ?? false;
    const below = LAYERS.indexOf(to) > LAYERS.indexOf(from);
    if (!allowed || !below) bad.push(edge);
  }
  return bad.sort();
}
