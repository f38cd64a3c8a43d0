/**
 * The Stripe client. STRIPE_API_BASE (tests: the local stand-in of test/kit) points the real
 * SDK at another host through its host/port/protocol options; unset, it talks to api.stripe.com.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
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

/**
 * The one-time owner-claim secret of a Stripe checkout (issue #39). It goes only into the session's
 * success_url, which Stripe reveals by redirecting the payer's browser there after a successful
 * payment; the agent, which holds our checkout URL and may open every page first, sees the hosted
 * page's URL but not success_url. So the browser that brings it to /checkout/done paid. Only its
 * sha256 is stored. With an idempotency key it is derived (HMAC under the Stripe secret key, which
 * only payments holds), so a retried create sends Stripe the same parameters, as Stripe's
 * idempotency requires; without one it is random.
 */
export function ownerClaimSecret(stripeSecretKey: string, idempotencyKey?: string): string {
  return idempotencyKey
    ? createHmac('sha256', stripeSecretKey).update(`owner-claim:${idempotencyKey}`).digest('base64url')
    : randomBytes(32).toString('base64url');
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Whether `claim` is the secret whose sha256 is `storedSha256` (constant time). */
export function ownerClaimMatches(storedSha256: string | null, claim: string): boolean {
  if (!storedSha256 || !claim) return false;
  const a = Buffer.from(sha256Hex(claim), 'hex');
  const b = Buffer.from(storedSha256, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
