/**
 * What a service needs from its process besides its own code: the validated config and a clock.
 * Kept beside the broker (not in broker.metadata, which Moleculer broadcasts to every node).
 */
import type { ServiceBroker } from 'moleculer';
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

const runtimes = new WeakMap<ServiceBroker, Runtime>();

export function setRuntime(broker: ServiceBroker, runtime: Runtime): void {
  runtimes.set(broker, runtime);
}

export function runtimeOf(broker: ServiceBroker): Runtime {
  const rt = runtimes.get(broker);
  if (!rt) throw new Error('broker was not created by createBroker(): no runtime attached');
  return rt;
}
