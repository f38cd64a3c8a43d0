/** Stripe webhook (raw body) and the sandbox checkout pages. Built by the payments issue. */
import type { Express } from 'express';
import type { GatewayDeps } from '../app';

export function registerPaymentsRoutes(_app: Express, _deps: GatewayDeps): void {
  // Mounted before any JSON parser: the webhook signature is checked over the raw body.
}
