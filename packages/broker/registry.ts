/** What Moleculer's registry offers at run time but its typings omit: the endpoints serving one action. */
import type { ServiceBroker } from 'moleculer';

export interface ActionEndpoints {
  hasLocal(): boolean;
  endpoints: { action?: { retrySafe?: unknown } }[];
}

export function actionEndpoints(broker: ServiceBroker, action: string): ActionEndpoints | undefined {
  const registry = broker.registry as unknown as { getActionEndpoints?(name: string): ActionEndpoints | undefined };
  return registry.getActionEndpoints?.(action);
}
