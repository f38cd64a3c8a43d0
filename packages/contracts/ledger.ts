/**
 * The ledger's internal contract: every action other services call, with its parameters and
 * result, declared once. Callers import these names and types instead of typing strings.
 * The ledger is the bottom layer: it calls no other service and emits no events; it consumes
 * escrow's durable events (see services/escrow/contracts.ts for their payloads).
 */

import { callerOf, type Action, type NoParams } from './call';

export const LEDGER = {
  balance: 'ledger.balance',
  entries: 'ledger.entries',
  walletFigures: 'ledger.walletFigures',
  creditGasPurchase: 'ledger.creditGasPurchase',
  hold: 'ledger.hold',
  settle: 'ledger.settle',
  void: 'ledger.void',
  referralBonus: 'ledger.referralBonus',
  cashoutDebit: 'ledger.cashoutDebit',
  cashoutPaid: 'ledger.cashoutPaid',
  cashoutReturn: 'ledger.cashoutReturn',
  withdrawable: 'ledger.withdrawable',
  openHolds: 'ledger.openHolds',
  holdsOf: 'ledger.holdsOf',
  getHold: 'ledger.getHold',
  audit: 'ledger.audit',
  // Read-only pages of the ledger's side for the reconciling audit (packages/ledger-audit joins them).
  gasCreditRecords: 'ledger.gasCreditRecords',
  holdRecords: 'ledger.holdRecords',
  cashoutRecords: 'ledger.cashoutRecords',
  referralRecords: 'ledger.referralRecords',
  metricsSnapshot: 'ledger.metricsSnapshot',
} as const;

export type HoldStatus = 'pending' | 'posted' | 'voided';

export interface CreditGasPurchaseParams {
  key: string;
  agentId: string;
  gas: number;
  sessionId: string;
  packId: string;
}

/**
 * A pending transfer buyer → escrow. The split quoted at purchase travels with it and is what
 * settle posts (TigerBeetle: post the pending amounts). Omitted, it is fixed now at the ledger's
 * configured fee.
 */
export interface HoldParams {
  key: string;
  purchaseId: string;
  buyerId: string;
  sellerId: string;
  amountGas: number;
  platformFeeGas?: number;
  sellerNetGas?: number;
  /** A purchase with an evaluator (issue #35): its fee is part of amountGas, a leg of its own. */
  evaluatorId?: string;
  evaluatorFeeGas?: number;
}

/** settle / void of a hold with an evaluator: whether its fee goes to the evaluator (it gave a verdict) or back to the buyer. */
export interface ResolveParams {
  key: string;
  purchaseId: string;
  evaluatorPaid?: boolean;
}

export interface HoldResult {
  holdId: string;
  purchaseId: string;
  status: HoldStatus;
  amountGas: number;
  replayed: boolean;
}

export interface SettleResult {
  transactionId: string;
  purchaseId: string;
  status: 'posted';
  sellerId: string;
  priceGas: number;
  sellerNetGas: number;
  platformFeeGas: number;
  replayed: boolean;
}

export interface HoldView {
  purchaseId: string;
  buyerId: string;
  sellerId: string;
  amountGas: number;
  platformFeeGas: number;
  sellerNetGas: number;
  status: HoldStatus;
  evaluatorId?: string | null;
  evaluatorFeeGas?: number;
}

/** A cash-out debit; `feeGas` is the fee quoted to the agent and is what cashoutPaid posts. */
export interface CashoutDebitParams {
  key: string;
  cashoutId: string;
  agentId: string;
  amountGas: number;
  feeGas?: number;
}

export interface Withdrawable {
  withdrawableGas: number;
  lifetimeEarnedGas: number;
  cashedOutGas: number;
  gasBalance: number;
}

export type EntryType =
  | 'gas_purchase'
  | 'escrow_hold'
  | 'escrow_refund'
  | 'sale_earn'
  | 'platform_fee'
  | 'referral_bonus'
  | 'cashout'
  | 'cashout_paid'
  | 'cashout_returned'
  | 'escrow_release'
  /** An evaluator's fee for its verdict (issue #35): earned by work, withdrawable like sale_earn. */
  | 'evaluator_fee';

/**
 * The entry types an agent's own account can hold (what `wallet` lists); the rest post only to platform
 * accounts (platform_fee, escrow_release, cashout_paid).
 */
export const WALLET_ENTRY_TYPES = [
  'gas_purchase',
  'escrow_hold',
  'escrow_refund',
  'sale_earn',
  'evaluator_fee',
  'referral_bonus',
  'cashout',
  'cashout_returned',
] as const satisfies readonly EntryType[];

export interface WalletEntry {
  id: string;
  type: EntryType;
  amountGas: number;
  balanceAfterGas: number;
  purchaseId?: string;
  sessionId?: string;
  cashoutId?: string;
  createdAt: string;
}

export interface WalletFigures {
  gasBalance: number;
  heldGas: number;
  pendingEarningsGas: number;
  withdrawableGas: number;
  lifetimeEarnedGas: number;
  entries: WalletEntry[];
  nextCursor: string | null;
}

export interface AuditCheck {
  name: string;
  ok: boolean;
  skipped?: boolean;
  message: string;
  details?: Record<string, unknown>;
}

export interface AuditReport {
  ok: boolean;
  checkedAt: string;
  checks: AuditCheck[];
}

export interface LedgerMetricsSnapshot {
  gasCreditedTotal: number;
  saleEarnedTotal: number;
  platformFeesTotal: number;
  heldGas: number;
}

/**
 * One page of a service's side of the reconciling audit: compact records in the owner's key order.
 * `asOf` is the owner's clock when it read them, so an item's age is measured on the clock that stamped it.
 */
export interface RecordPage<R> {
  items: R[];
  nextCursor: string | null;
  asOf: string;
}

/**
 * What the record actions take: a page (`cursor`, `limit`, optionally `statuses`), or the records of
 * these keys (`ids`: every status, no paging).
 */
export interface RecordQuery {
  cursor?: string;
  limit?: number;
  ids?: string[];
  statuses?: string[];
}

/** A gas_purchase credit as it was posted: the agent leg of the transaction. */
export interface GasCreditRecord {
  transactionId: string;
  key: string;
  sessionId: string | null;
  agentId: string;
  gas: number;
  createdAt: string;
}

export interface HoldRecord extends HoldView {
  createdAt: string;
  resolvedAt: string | null;
}

export type CashoutDebitStatus = 'pending' | 'paid' | 'returned';

export interface CashoutDebitRecord {
  cashoutId: string;
  agentId: string;
  amountGas: number;
  feeGas: number;
  status: CashoutDebitStatus;
  createdAt: string;
  resolvedAt: string | null;
}

/** One referred agent's outcome: credited (a referral_bonus was posted) or refused (self referral, weekly cap). */
export interface ReferralOutcomeRecord {
  referredId: string;
  referrerId: string;
  credited: boolean;
  reason: string | null;
  createdAt: string;
}

/** The ledger's actions other services call: name → params and result (callLedger's types). */
export interface LedgerActions {
  [LEDGER.balance]: Action<{ agentId: string }, { gasBalance: number }>;
  [LEDGER.walletFigures]: Action<{ agentId: string; limit?: number; cursor?: string }, WalletFigures>;
  [LEDGER.creditGasPurchase]: Action<CreditGasPurchaseParams, { transactionId: string; gasBalance: number; replayed: boolean }>;
  [LEDGER.hold]: Action<HoldParams, HoldResult>;
  [LEDGER.getHold]: Action<{ purchaseId: string }, HoldView | null>;
  [LEDGER.holdsOf]: Action<{ purchaseIds: string[] }, HoldView[]>;
  [LEDGER.openHolds]: Action<NoParams, HoldView[]>;
  [LEDGER.cashoutDebit]: Action<CashoutDebitParams, unknown>;
  [LEDGER.cashoutPaid]: Action<{ key: string; cashoutId: string }, unknown>;
  [LEDGER.cashoutReturn]: Action<{ key: string; cashoutId: string }, unknown>;
  [LEDGER.withdrawable]: Action<{ agentId: string }, Withdrawable>;
  [LEDGER.metricsSnapshot]: Action<NoParams, LedgerMetricsSnapshot>;
}

/** A ledger call whose params and result are the action's own. */
export const callLedger = callerOf<LedgerActions>();
