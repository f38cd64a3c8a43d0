/**
 * The Stripe client. STRIPE_API_BASE (tests: the local stand-in of test/kit) points the real
 * SDK at another host through its host/port/protocol options; unset, it talks to api.stripe.com.
 */
import Stripe from 'stripe';
import type { Config } from '../../packages/config';

export type StripeClient = InstanceType<typeof Stripe>;
export type StripeEvent = Stripe.Event;
export type StripeCheckoutSession = Stripe.Checkout.Session;

export function createStripeClient(config: Config): StripeClient | null {
  if (!config.stripeSecretKey) return null;
  const options: Stripe.StripeConfig = { maxNetworkRetries: 2, timeout: 10_000, telemetry: false };
  if (config.stripeApiBase) {
    const base = new URL(config.stripeApiBase);
    options.host = base.hostname;
    options.port = base.port || (base.protocol === 'http:' ? 80 : 443);
    options.protocol = base.protocol === 'http:' ? 'http' : 'https';
  }
  return new Stripe(config.stripeSecretKey, options);
}

/** Verifies Stripe-Signature over the raw body; throws on a bad, missing or stale signature. */
export function verifyStripeEvent(payload: string, signature: string, secret: string): StripeEvent {
  // Default tolerance (300 s): an old event replayed later is refused.
  return Stripe.webhooks.constructEvent(payload, signature, secret);
}
