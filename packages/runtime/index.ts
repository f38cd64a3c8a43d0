/**
 * What a service needs from its process besides its own code: the validated config and a clock.
 * Handed to each service when it is created (createBroker puts runtimeMixin first in every schema),
 * so a service reads `this.config` and `this.clock`, never a lookup keyed by its broker.
 * Not in `settings` or broker.metadata: Moleculer broadcasts those to every node, and the config holds secrets.
 */
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import type { ChannelDefinition } from '../broker/durable';
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

/**
 * A service's schema as Moleculer's TypeScript template writes it (`ServiceSchema<Settings, Methods & State>`),
 * with `this` typed as TThis in every action, method, hook and channel handler, so none casts it.
 * `mixins` are other schemas, each typed against its own `this`; `channels` are the durable events'
 * (packages/broker/durable.ts), which Moleculer's schema does not know.
 */
export interface ServiceSchemaOf<TThis, Settings = ServiceSettingSchema> extends Omit<ServiceSchema<Settings, object, object, TThis>, 'mixins'> {
  mixins?: MixinSchema[];
  channels?: Record<string, ChannelDefinition> & ThisType<TThis>;
}

/** Part of a schema, mixed into a service: written against the `this` it needs (a `never` this accepts any). */
export type MixinSchema = Partial<ServiceSchemaOf<never, object>>;

/** Any service's schema, as createBroker loads it (each was checked against its own `this` where it is written). */
export type AnyServiceSchema = ServiceSchemaOf<never, object>;

/** Sets `this.config` and `this.clock` in `created`, before any other hook of the service (`started` included) runs. */
export function runtimeMixin(runtime: Runtime): MixinSchema {
  const mixin: Partial<ServiceSchemaOf<Service>> = {
    created(this: Service) {
      Object.assign(this, { config: runtime.config, clock: runtime.clock } satisfies RuntimeService);
    },
  };
  return mixin;
}

/**
 * The schema as createBroker loads it: a copy (the shared schema object is left as it is) with the runtime
 * mixin last in `mixins`, because Moleculer runs the last mixin's `created` first.
 */
export function withRuntime(schema: AnyServiceSchema, runtime: Runtime): ServiceSchema {
  // To Moleculer's schema, whose `this` is its default: each handler was checked against its own where it is written.
  return { ...schema, mixins: [...(schema.mixins ?? []), runtimeMixin(runtime)] } as ServiceSchema;
}
