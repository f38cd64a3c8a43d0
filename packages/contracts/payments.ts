/** Payments' internal contract: the actions the gateway and other services call. Payments calls the ledger, never the reverse. */
import { callerOf, type Action, type NoParams } from './call';
import type { HelpCheckout } from './support';

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
  // Read-only pages of payments' side for the reconciling audit (packages/ledger-audit joins them).
  checkoutRecords: 'payments.checkoutRecords',
  payoutRecords: 'payments.payoutRecords',
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

/** Paid at the card: `paid` while the ledger credit is being made, `completed` once it was (fulfil). */
export const PAID_CHECKOUT_STATUSES: readonly CheckoutStatus[] = ['paid', 'completed'];

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

/** A checkout as the reconciling audit compares it with the ledger's gas_purchase credit. */
export interface CheckoutRecord {
  sessionId: string;
  agentId: string;
  packId: string;
  gas: number;
  status: CheckoutStatus;
  paidAt: string | null;
  createdAt: string;
}

/** requested → pending (ledger debited) | failed; pending → paying → paid; pending → rejecting → rejected (gas returned). */
export type PayoutStatus = 'requested' | 'pending' | 'paying' | 'paid' | 'rejecting' | 'rejected' | 'failed';

/** A cash-out as the reconciling audit compares it with the ledger's cash-out debit. */
export interface PayoutRecord {
  cashoutId: string;
  agentId: string;
  amountGas: number;
  feeGas: number;
  status: PayoutStatus;
  createdAt: string;
  updatedAt: string;
}

/** Payments' actions other services call: name → params and result (callPayments' types). */
export interface PaymentsActions {
  [PAYMENTS.getCheckout]: Action<{ sessionId: string; claim?: string }, CheckoutView>;
  [PAYMENTS.reconcileSession]: Action<{ sessionId: string }, unknown>;
  [PAYMENTS.sandboxApprove]: Action<{ sessionId: string }, FulfilResult>;
  [PAYMENTS.sandboxDecline]: Action<{ sessionId: string }, { declined: boolean; status: CheckoutStatus }>;
  [PAYMENTS.stripeWebhook]: Action<{ payload: string; signature?: string }, unknown>;
  [PAYMENTS.listCashouts]: Action<{ agentId: string }, unknown[]>;
  [PAYMENTS.listCheckouts]: Action<NoParams, { checkouts: HelpCheckout[] }>;
}

/** A payments call whose params and result are the action's own. */
export const callPayments = callerOf<PaymentsActions>();
