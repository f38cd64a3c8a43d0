/**
 * The one table of who may talk to whom on the bus. The architecture test enforces it on a journey,
 * `npm run bus:config` turns it into the NATS server's users and permissions (deploy/nats/auth.conf),
 * and the broker refuses a call outside it before it reaches the bus. A bottom package: it imports
 * only the services' contracts (names and types), never a service.
 */
import { AGENTS_TOPICS } from '../contracts/agents';
import { ESCROW_TOPICS } from '../contracts/escrow';
import { LISTINGS_TOPICS } from '../contracts/listings';
import { NOTIFICATIONS_TOPICS } from '../contracts/notifications';
import { PAYMENTS_TOPICS } from '../contracts/payments';

/**
 * The services' layers (docs/architecture.md): a service may call only the services listed for it,
 * all of them below it. The ledger is the bottom and calls nobody; reads never write.
 */
export const LAYERS = ['gateway', 'support', 'notifications', 'payments', 'escrow', 'listings', 'agents', 'ledger'] as const;
export type ServiceName = (typeof LAYERS)[number];

/** caller → the callees it may use (each strictly below it). */
export const ALLOWED_CALLS: Record<ServiceName, readonly ServiceName[]> = {
  gateway: ['support', 'notifications', 'payments', 'escrow', 'listings', 'agents', 'ledger'],
  support: [],
  // A leaf consumer of escrow's and payments' durable events; it calls nobody.
  notifications: [],
  payments: ['escrow', 'ledger'],
  escrow: ['listings', 'agents', 'ledger'],
  listings: ['agents'],
  agents: [],
  ledger: [],
};

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
    ESCROW_TOPICS.created,
    ESCROW_TOPICS.approved,
    ESCROW_TOPICS.approvalRequired,
    ESCROW_TOPICS.delivered,
    ESCROW_TOPICS.completedNotice,
    ESCROW_TOPICS.refundedNotice,
    ESCROW_TOPICS.disputed,
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
export const CONSUMES: Record<ServiceName, readonly ServiceName[]> = Object.fromEntries(
  LAYERS.map((s) => [s, [...new Set(DURABLE_CONSUMES[s].map((t) => serviceOfTopic(t)))]]),
) as unknown as Record<ServiceName, readonly ServiceName[]>;

function serviceOfTopic(topic: string): ServiceName {
  return topic.split('.')[0] as ServiceName;
}

/** The service an action belongs to ("ledger.hold" → "ledger"), or null for an unknown one. */
export function serviceOfAction(action: string): ServiceName | null {
  const name = action.split('.')[0];
  return (LAYERS as readonly string[]).includes(name) ? (name as ServiceName) : null;
}

/** Whether the caller's row of the table allows calling the action (a service may call its own actions). */
export function mayCall(caller: ServiceName, action: string): boolean {
  const callee = serviceOfAction(action);
  if (!callee) return false;
  return callee === caller || ALLOWED_CALLS[caller].includes(callee);
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
