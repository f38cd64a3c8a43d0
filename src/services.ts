/** Every service of the marketplace, by name. SERVICES picks which of them a process runs. */
import type { ServiceSchema } from 'moleculer';
import type { ServiceName } from '../packages/config';
import gateway from '../services/gateway/gateway.service';
import agents from '../services/agents/agents.service';
import listings from '../services/listings/listings.service';
import escrow from '../services/escrow/escrow.service';
import ledger from '../services/ledger/ledger.service';
import payments from '../services/payments/payments.service';
import support from '../services/support/support.service';
import notifications from '../services/notifications/notifications.service';

export const SERVICE_SCHEMAS: Record<ServiceName, ServiceSchema> = { gateway, agents, listings, escrow, ledger, payments, support, notifications };

export function schemasFor(names: readonly ServiceName[]): ServiceSchema[] {
  return names.map((n) => SERVICE_SCHEMAS[n]);
}
