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
  connectPayouts: 'payments.connectPayouts',
  requestCashout: 'payments.requestCashout',
  listPayouts: 'payments.listPayouts',
  getPayout: 'payments.getPayout',
  markPayoutPaid: 'payments.markPayoutPaid',
  rejectPayout: 'payments.rejectPayout',
  sweepCashouts: 'payments.sweepCashouts',
  listCheckouts: 'payments.listCheckouts',
} as const;

/** Facts payments publishes through its outbox for notifications (webhooks); no money consumer. */
export const PAYMENTS_TOPICS = {
  gasCredited: 'payments.gas.credited',
  cashoutPaid: 'payments.cashout.paid',
  cashoutRejected: 'payments.cashout.rejected',
} as const;


export interface GasCredited {
  agentId: string;
  sessionId: string;
  packId: string;
  gas: number;
  gasBalance: number;
  at: string;
}

export interface CashoutFinished {
  agentId: string;
  cashoutId: string;
  amountGas: number;
  status: 'paid' | 'rejected';
  at: string;
}

/** A checkout session's state: open → paid → completed, or declined / expired. */
export type CheckoutStatus = 'open' | 'paid' | 'completed' | 'declined' | 'expired';

export interface CheckoutView {
  id: string;
  provider: 'sandbox' | 'stripe';
  agentId: string;
  packId: string;
  gas: number;
  usd: number;
  status: CheckoutStatus;
  /** The provider's page: the sandbox page, or Stripe's hosted page (agents get humanCheckoutUrl instead). */
  checkoutUrl: string;
  expiresAt: string;
  createdAt: string;
  completedAt: string | null;
  /**
   * Asked with a `claim`: whether it is this Stripe session's one-time owner-claim secret, which only
   * the payer's browser gets (Stripe redirects it to success_url after paying).
   */
  claimValid?: boolean;
}

export interface FulfilResult {
  sessionId: string;
  /** true only for the call that moved the gas. */
  credited: boolean;
  status: CheckoutStatus;
  gas: number;
  gasBalance?: number;
}
