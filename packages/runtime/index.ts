/**
 * What a service needs from its process besides its own code: the validated config and a clock.
 * Handed to each service when it is created (createBroker puts runtimeMixin first in every schema),
 * so a service reads `this.config` and `this.clock`, never a lookup keyed by its broker.
 * Not in `settings` or broker.metadata: Moleculer broadcasts those to every node, and the config holds secrets.
 */
import type { Service, ServiceSchema } from 'moleculer';
import type { Config } from '../config';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can move forward (auto-release, auto-refund, expiry). */
export class ManualClock implements Clock {
  private offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  advanceDays(days: number): void {
    this.advance(days * 86_400_000);
  }
}

export interface Runtime {
  config: Config;
  clock: Clock;
}

/** The part of every service's `this` that runtimeMixin sets: intersect it into the service's own `this` type. */
export type RuntimeService = Runtime;

/** Sets `this.config` and `this.clock` in `created`, before any other hook of the service (`started` included) runs. */
export function runtimeMixin(runtime: Runtime): Partial<ServiceSchema> {
  return {
    created(this: Service) {
      Object.assign(this, { config: runtime.config, clock: runtime.clock } satisfies RuntimeService);
    },
  };
}

/**
 * The schema as createBroker loads it: a copy (the shared schema object is left as it is) with the runtime
 * mixin last in `mixins`, because Moleculer runs the last mixin's `created` first.
 */
export function withRuntime(schema: ServiceSchema, runtime: Runtime): ServiceSchema {
  return { ...schema, mixins: [...(schema.mixins ?? []), runtimeMixin(runtime)] };
}
