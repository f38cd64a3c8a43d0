/** The endpoints serving one action, as Moleculer's registry keeps them. */
import type { ActionSchema, ServiceBroker } from 'moleculer';

export interface ActionEndpoints {
  hasLocal(): boolean;
  /** retrySafe: the action's own flag (packages/broker/failover.ts), beside Moleculer's schema. */
  endpoints: { action?: ActionSchema & { retrySafe?: unknown } }[];
}

export function actionEndpoints(broker: ServiceBroker, action: string): ActionEndpoints | undefined {
  return broker.registry?.getActionEndpoints(action);
}
