/** Builds the marketplace for a process: the config's SERVICES on one broker. */
import type { ServiceBroker, BrokerOptions } from 'moleculer';
import { createBroker } from '../packages/broker';
import type { Config } from '../packages/config';
import type { Clock } from '../packages/runtime';
import { schemasFor } from './services';

export function createMarketplace(config: Config, opts: { clock?: Clock; brokerOptions?: Partial<BrokerOptions> } = {}): ServiceBroker {
  return createBroker({ config, clock: opts.clock, services: schemasFor(config.services), brokerOptions: opts.brokerOptions });
}

/** The port the gateway listens on in this process, or null when it runs elsewhere. */
export function gatewayPort(broker: ServiceBroker): number | null {
  // The gateway service's port() method (services/gateway/gateway.service.ts).
  const gw: object | undefined = broker.getLocalService('gateway');
  return gw && 'port' in gw && typeof gw.port === 'function' ? Number(gw.port()) : null;
}
