/** Every service of the marketplace, by name. SERVICES picks which of them a process runs. */
import type { ServiceName } from '../packages/config';
import type { AnyServiceSchema } from '../packages/runtime';
import gateway from '../services/gateway/gateway.service';
import agents from '../services/agents/agents.service';
import listings from '../services/listings/listings.service';
import escrow from '../services/escrow/escrow.service';
import ledger from '../services/ledger/ledger.service';
import payments from '../services/payments/payments.service';
import support from '../services/support/support.service';
import notifications from '../services/notifications/notifications.service';

export const SERVICE_SCHEMAS: Record<ServiceName, AnyServiceSchema> = { gateway, agents, listings, escrow, ledger, payments, support, notifications };

export function schemasFor(names: readonly ServiceName[]): AnyServiceSchema[] {
  return names.map((n) => SERVICE_SCHEMAS[n]);
}
