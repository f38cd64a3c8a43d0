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

/**
 * Durable events: whose topics each service consumes (through its outbox → JetStream → consumer group).
 * A service publishes only its own topics.
 */
export const CONSUMES: Record<ServiceName, readonly ServiceName[]> = {
  gateway: [],
  support: [],
  notifications: ['escrow', 'payments'],
  payments: [],
  escrow: [],
  listings: ['escrow', 'agents'],
  agents: [],
  ledger: ['escrow'],
};

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
