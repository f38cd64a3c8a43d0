/** Payouts: connect_payouts, request_cashout / cash_out, and the operator's payout actions. Mixed into payments. */
import type { ServiceSchema } from 'moleculer';

export const payoutsMixin: Partial<ServiceSchema> = {
  actions: {},
};
