/**
 * The ledger's side of the reconciling audit, as compact read-only pages (packages/ledger-audit joins
 * them with payments' checkouts and payouts and escrow's purchases and referrals): gas credits, holds,
 * cash-out debits and referral outcomes. Reads never write.
 */
import type { Queryable } from '../../packages/db';
import { isoOrNull, recordPage } from '../../packages/ledger-audit/records';
import type {
  CashoutDebitRecord,
  GasCreditRecord,
  HoldRecord,
  RecordPage,
  RecordQuery,
  ReferralOutcomeRecord,
} from '../../packages/contracts/ledger';

import { holdView, type CashoutRow, type HoldRow } from './postings';

type Stamped = { created_at: Date | string; resolved_at?: Date | string | null };
interface GasCreditRow {
  id: string;
  key: string;
  session_id: string | null;
  created_at: Date | string;
  agent_id: string;
  amount: string;
}
interface ReferralOutcomeRow {
  referred_id: string;
  referrer_id: string;
  credited: boolean;
  reason: string | null;
  created_at: Date | string;
}

/** Each gas_purchase transaction with what it moved to whom: its agent leg, not what its fingerprint says. */
export function gasCreditRecords(db: Queryable, q: RecordQuery, at: Date): Promise<RecordPage<GasCreditRecord>> {
  return recordPage<GasCreditRow, GasCreditRecord>(
    db,
    {
      select: `SELECT t.id, t.key, t.session_id, t.created_at, a.agent_id, p.amount
                 FROM ledger.transactions t
                 JOIN ledger.postings p ON p.transaction_id = t.id AND p.amount > 0
                 JOIN ledger.accounts a ON a.id = p.account_id AND a.kind = 'agent'
                WHERE t.type = 'gas_purchase'`,
      key: 't.session_id',
      order: 't.id',
    },
    q,
    (r) => ({ transactionId: r.id, key: r.key, sessionId: r.session_id, agentId: r.agent_id, gas: Number(r.amount), createdAt: isoOrNull(r.created_at)! }),
    at,
  );
}

export function holdRecords(db: Queryable, q: RecordQuery, at: Date): Promise<RecordPage<HoldRecord>> {
  return recordPage<HoldRow & Stamped, HoldRecord>(
    db,
    { select: 'SELECT * FROM ledger.holds WHERE true', key: 'purchase_id', order: 'purchase_id', pageFilter: 'status = ANY($2::text[])' },
    q,
    (h) => ({ ...holdView(h), createdAt: isoOrNull(h.created_at)!, resolvedAt: isoOrNull(h.resolved_at) }),
    at,
  );
}

export function cashoutRecords(db: Queryable, q: RecordQuery, at: Date): Promise<RecordPage<CashoutDebitRecord>> {
  return recordPage<CashoutRow & Stamped, CashoutDebitRecord>(
    db,
    { select: 'SELECT * FROM ledger.cashouts WHERE true', key: 'cashout_id', order: 'cashout_id', pageFilter: 'status = ANY($2::text[])' },
    q,
    (c) => ({
      cashoutId: c.cashout_id,
      agentId: c.agent_id,
      amountGas: Number(c.amount_gas),
      feeGas: Number(c.fee_gas),
      status: c.status,
      createdAt: isoOrNull(c.created_at)!,
      resolvedAt: isoOrNull(c.resolved_at),
    }),
    at,
  );
}

export function referralRecords(db: Queryable, q: RecordQuery, at: Date): Promise<RecordPage<ReferralOutcomeRecord>> {
  return recordPage<ReferralOutcomeRow, ReferralOutcomeRecord>(
    db,
    { select: 'SELECT * FROM ledger.referral_outcomes WHERE true', key: 'referred_id', order: 'referred_id' },
    q,
    (o) => ({ referredId: o.referred_id, referrerId: o.referrer_id, credited: o.credited, reason: o.reason, createdAt: isoOrNull(o.created_at)! }),
    at,
  );
}
