/** Payments' internal contract: the actions the gateway and other services call. Payments calls the ledger, never the reverse. */
export const PAYMENTS = {
  buyGas: 'payments.buyGas',
  getCheckout: 'payments.getCheckout',
  reconcileSession: 'payments.reconcileSession',
  reconcileAgent: 'payments.reconcileAgent',
  sandboxApprove: 'payments.sandboxApprove',
  sandboxDecline: 'payments.sandboxDecline',
  stripeWebhook: 'payments.stripeWebhook',
  sweepCheckouts: 'payments.sweepCheckouts',
  listCashouts: 'payments.listCashouts',
  payoutAddress: 'payments.payoutAddress',
} as const;
