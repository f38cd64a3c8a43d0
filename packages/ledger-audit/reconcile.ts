/**
 * The reconciling audit (issue 39): every money fact the ledger posted has its cause in the service that
 * owns it, and every cause has its posting. Each service lists its side as compact records, page by page
 * (`*Records` actions, read-only); for each page the other side is looked up by key, so neither side is
 * ever loaded whole and no bus message grows with the tables.
 *
 * Which side commits first decides what a missing counterpart means:
 *   gas credits     payments marks the checkout paid, then the ledger credits it (fulfil)
 *   holds           escrow records the purchase, then the ledger holds; escrow completes or refunds, then
 *                   the ledger settles or voids from escrow's durable event
 *   cash-outs       payments records the request, then the ledger debits; payments claims paying or
 *                   rejecting, then the ledger pays or returns, then payments finishes
 *   referrals       escrow qualifies the referral (with its durable event), then the ledger pays the bonus
 * An item on the earlier side not yet followed on the later one is in flight while younger than the grace
 * period, a violation after it. An item on the later side with no cause on the earlier one is a violation
 * at once: that is money made up by a direct call.
 */
import type {
  AuditCheck,
  CashoutDebitRecord,
  CashoutDebitStatus,
  GasCreditRecord,
  HoldRecord,
  HoldStatus,
  RecordPage,
  ReferralOutcomeRecord,
} from '../contracts/ledger';
import { LEDGER } from '../contracts/ledger';
import { ESCROW, type PurchaseRecord, type ReferralRecord } from '../contracts/escrow';
import { PAID_CHECKOUT_STATUSES, PAYMENTS, type CheckoutRecord, type PayoutRecord, type PayoutStatus } from '../contracts/payments';
import { FINAL_STATUSES, STATES, TRANSITIONS, type PurchaseStatus } from '../contracts/purchase-machine';
import { DEFAULT_RECORD_PAGE, MAX_RECORD_PAGE } from './records';

/** Calls an action (a broker, a test app, a remote client). */
export type CallAction = (action: string, params?: Record<string, unknown>) => Promise<unknown>;

export interface ReconcileOptions {
  /** How long an item may wait for its counterpart on the later side before it is a violation. */
  graceMs?: number;
  /** Records per page (at most MAX_RECORD_PAGE). */
  pageSize?: number;
}

export const DEFAULT_GRACE_MS = 5 * 60_000;
const SAMPLES = 20;
const IN_FLIGHT = Symbol('in flight');
type Verdict = string | typeof IN_FLIGHT | null;

export const UNAVAILABLE = new Set(['SERVICE_NOT_FOUND', 'SERVICE_NOT_AVAILABLE', 'REQUEST_TIMEOUT', 'REQUEST_REJECTED']);

/** One direction of a reconciliation: the side listed page by page, and its counterpart looked up by key. */
interface Pairing<A, B> {
  name: string;
  listed: { action: string; statuses?: readonly string[] };
  counterpart: string;
  keyOf(a: A): string | null;
  counterpartKeyOf(b: B): string | null;
  /** When the listed item reached the state its counterpart must follow (its age decides "in flight"). */
  since?(a: A): string | null;
  judge(a: A, counterparts: B[], young: boolean): Verdict;
  sample(a: A): Record<string, unknown>;
  /** "gas-purchase credits"; "match a paid checkout (same agent, gas and session)"; "do not …". */
  what: string;
  holds: string;
  broken: string;
}

async function reconcile<A, B>(call: CallAction, p: Pairing<A, B>, graceMs: number, pageSize: number): Promise<AuditCheck> {
  let checked = 0;
  let problemCount = 0;
  let inFlightCount = 0;
  const problems: Record<string, unknown>[] = [];
  const inFlight: Record<string, unknown>[] = [];
  try {
    let cursor: string | null = null;
    do {
      const page = (await call(p.listed.action, {
        limit: pageSize,
        ...(cursor ? { cursor } : {}),
        ...(p.listed.statuses ? { statuses: [...p.listed.statuses] } : {}),
      })) as RecordPage<A>;
      const keys = [...new Set(page.items.map((a) => p.keyOf(a)).filter((k): k is string => k !== null))];
      const found = keys.length ? ((await call(p.counterpart, { ids: keys })) as RecordPage<B>).items : [];
      const byKey = new Map<string, B[]>();
      for (const b of found) {
        const k = p.counterpartKeyOf(b);
        if (k !== null) byKey.set(k, [...(byKey.get(k) ?? []), b]);
      }
      const asOf = Date.parse(page.asOf);
      for (const a of page.items) {
        checked++;
        const since = p.since?.(a);
        const young = since ? asOf - Date.parse(since) < graceMs : false;
        const key = p.keyOf(a);
        const verdict = p.judge(a, key === null ? [] : (byKey.get(key) ?? []), young);
        if (verdict === IN_FLIGHT) {
          inFlightCount++;
          if (inFlight.length < SAMPLES) inFlight.push(p.sample(a));
        } else if (verdict) {
          problemCount++;
          if (problems.length < SAMPLES) problems.push({ ...p.sample(a), problem: verdict });
        }
      }
      cursor = page.nextCursor;
    } while (cursor);
  } catch (err) {
    const type = (err as { type?: string })?.type ?? '';
    const reason = UNAVAILABLE.has(type)
      ? `${p.listed.action} or ${p.counterpart} is not available (${(err as Error)?.message ?? type})`
      : `${p.listed.action} / ${p.counterpart} failed: ${(err as Error)?.message ?? err}`;
    return { name: p.name, ok: true, skipped: true, message: `skipped: ${reason}` };
  }
  const pending = inFlightCount ? `; ${inFlightCount} in flight (younger than ${Math.round(graceMs / 1000)} s)` : '';
  if (problemCount === 0) {
    return {
      name: p.name,
      ok: true,
      message: checked === 0 ? `no ${p.what}` : `all ${checked} ${p.what} ${p.holds}${pending}`,
      ...(inFlightCount ? { details: { inFlight } } : {}),
    };
  }
  return {
    name: p.name,
    ok: false,
    message: `${problemCount} of ${checked} ${p.what} ${p.broken}${pending}`,
    details: { problems, ...(inFlightCount ? { inFlight } : {}) },
  };
}

/** "gas 1000000 ≠ 500": the fields of the ledger's record that differ from the owner's. */
function differences(pairs: Array<[string, unknown, unknown]>, owner: string): string[] {
  return pairs.filter(([, mine, theirs]) => mine !== theirs).map(([field, mine, theirs]) => `${field} ${String(mine)} ≠ ${owner}'s ${String(theirs)}`);
}

// ─────────────────────────────── gas credits ↔ paid checkouts ───────────────────────────────

const creditSample = (c: GasCreditRecord) => ({ transactionId: c.transactionId, key: c.key, sessionId: c.sessionId, agentId: c.agentId, gas: c.gas });

const gasCreditsMatchPaidCheckouts: Pairing<GasCreditRecord, CheckoutRecord> = {
  name: 'gas_credits_match_paid_checkouts',
  listed: { action: LEDGER.gasCreditRecords },
  counterpart: PAYMENTS.checkoutRecords,
  keyOf: (c) => c.sessionId,
  counterpartKeyOf: (k) => k.sessionId,
  judge(c, [checkout]) {
    if (!c.sessionId) return 'the credit names no checkout session';
    if (!checkout) return 'payments has no checkout with this session id';
    if (!PAID_CHECKOUT_STATUSES.includes(checkout.status)) return `the checkout is ${checkout.status}: it was never paid`;
    const diff = differences([['agentId', c.agentId, checkout.agentId], ['gas', c.gas, checkout.gas]], 'checkout');
    return diff.length ? diff.join('; ') : null;
  },
  sample: creditSample,
  what: 'gas-purchase credits',
  holds: 'match a paid checkout (same agent, gas and session)',
  broken: 'match no paid checkout (same agent, gas and session)',
};

const paidCheckoutsCredited: Pairing<CheckoutRecord, GasCreditRecord> = {
  name: 'paid_checkouts_credited',
  listed: { action: PAYMENTS.checkoutRecords, statuses: PAID_CHECKOUT_STATUSES },
  counterpart: LEDGER.gasCreditRecords,
  keyOf: (k) => k.sessionId,
  counterpartKeyOf: (c) => c.sessionId,
  since: (k) => k.paidAt ?? k.createdAt,
  judge(checkout, credits, young) {
    if (credits.length === 0) return checkout.status === 'paid' && young ? IN_FLIGHT : `the checkout is ${checkout.status} but the ledger never credited it`;
    if (credits.length > 1) return `credited ${credits.length} times (${credits.map((c) => c.key).join(', ')})`;
    return null;
  },
  sample: (k) => ({ sessionId: k.sessionId, agentId: k.agentId, gas: k.gas, status: k.status, paidAt: k.paidAt }),
  what: 'paid checkouts',
  holds: 'have exactly one gas-purchase credit',
  broken: 'do not have exactly one gas-purchase credit',
};

// ─────────────────────────────── holds ↔ escrow purchases ───────────────────────────────

type HoldOutcome = Exclude<HoldStatus, 'pending'> | 'none';

/**
 * What the ledger's hold must end as once a purchase rests in a final state, read from the purchase
 * machine: the money event of every transition into it (settle → posted, void → voided; funding refused
 * before any hold → none).
 */
export function holdOutcomesOf(status: PurchaseStatus): Set<HoldOutcome> {
  const outcomes = new Set<HoldOutcome>();
  for (const t of TRANSITIONS) {
    if (!(t.to === status || (t.to === null && t.from.includes(status)))) continue;
    if (t.moneyEvent === 'settle') outcomes.add('posted');
    else if (t.moneyEvent === 'void') outcomes.add('voided');
    else if (t.moneyEvent === null && t.to === status && t.from.every((f) => !STATES[f].funded)) outcomes.add('none');
  }
  return outcomes;
}

const finalStatusesEndingIn = (outcome: HoldOutcome): PurchaseStatus[] => FINAL_STATUSES.filter((s) => holdOutcomesOf(s).has(outcome));

const holdSample = (h: HoldRecord) => ({
  purchaseId: h.purchaseId,
  buyerId: h.buyerId,
  sellerId: h.sellerId,
  amountGas: h.amountGas,
  platformFeeGas: h.platformFeeGas,
  sellerNetGas: h.sellerNetGas,
});

/** Resolved holds of one kind against escrow: the purchase exists, rests in a state that ends so, and has the hold's parties, price and split. */
function holdsMatchPurchases(name: string, status: 'posted' | 'voided', what: string): Pairing<HoldRecord, PurchaseRecord> {
  const expected = finalStatusesEndingIn(status);
  return {
    name,
    listed: { action: LEDGER.holdRecords, statuses: [status] },
    counterpart: ESCROW.purchaseRecords,
    keyOf: (h) => h.purchaseId,
    counterpartKeyOf: (p) => p.purchaseId,
    judge(h, [p]) {
      if (!p) return 'escrow has no such purchase';
      if (!expected.includes(p.status)) return `the purchase is ${p.status}, not ${expected.join(' or ')}`;
      const diff = differences(
        [
          ['buyerId', h.buyerId, p.buyerId],
          ['sellerId', h.sellerId, p.sellerId],
          ['amountGas', h.amountGas, p.priceGas + (p.evaluatorFeeGas ?? 0)],
          ['platformFeeGas', h.platformFeeGas, p.platformFeeGas],
          ['sellerNetGas', h.sellerNetGas, p.sellerNetGas],
        ],
        'purchase',
      );
      return diff.length ? diff.join('; ') : null;
    },
    sample: holdSample,
    what,
    holds: `match a ${expected.join(' or ')} purchase (same buyer, seller, price and split)`,
    broken: `match no ${expected.join(' or ')} purchase with the same buyer, seller, price and split`,
  };
}

/** Escrow's closed purchases of one kind against the ledger: their hold ended as the machine says (pending = in flight while young). */
function purchasesResolvedInLedger(name: string, outcome: 'posted' | 'voided', what: string): Pairing<PurchaseRecord, HoldRecord> {
  const statuses = finalStatusesEndingIn(outcome);
  return {
    name,
    listed: { action: ESCROW.purchaseRecords, statuses },
    counterpart: LEDGER.holdRecords,
    keyOf: (p) => p.purchaseId,
    counterpartKeyOf: (h) => h.purchaseId,
    since: (p) => p.completedAt ?? p.refundedAt ?? p.updatedAt,
    judge(p, [h], young) {
      const outcomes = holdOutcomesOf(p.status);
      if (!h) return outcomes.has('none') ? null : 'the ledger has no hold for it';
      if (h.status === 'pending') return young ? IN_FLIGHT : `it is ${p.status} but its hold is still pending`;
      return outcomes.has(h.status) ? null : `it is ${p.status} but its hold was ${h.status}`;
    },
    sample: (p) => ({ purchaseId: p.purchaseId, buyerId: p.buyerId, sellerId: p.sellerId, priceGas: p.priceGas, status: p.status }),
    what,
    holds: `have their hold ${outcome}`,
    broken: `do not have their hold ${outcome}`,
  };
}

// ─────────────────────────────── cash-out debits ↔ payouts ───────────────────────────────

/** Payments' states a cash-out may be in once the ledger shows it so (read after the ledger, so payments may be further on). */
const PAYOUT_STATES_AFTER: Record<CashoutDebitStatus, readonly PayoutStatus[]> = {
  pending: ['requested', 'pending', 'paying', 'paid', 'rejecting', 'rejected'],
  paid: ['paying', 'paid'],
  returned: ['rejecting', 'rejected'],
};

/** The ledger's debit each payments state needs: done (`ok`), or still to come (`next`, in flight while young). */
const DEBIT_FOR_PAYOUT: Record<Exclude<PayoutStatus, 'failed'>, { ok: ReadonlyArray<CashoutDebitStatus>; next: ReadonlyArray<CashoutDebitStatus | 'none'> }> = {
  requested: { ok: ['pending', 'paid', 'returned'], next: ['none'] },
  pending: { ok: ['pending', 'paid', 'returned'], next: [] },
  paying: { ok: ['paid'], next: ['pending'] },
  paid: { ok: ['paid'], next: [] },
  rejecting: { ok: ['returned'], next: ['pending'] },
  rejected: { ok: ['returned'], next: [] },
};

const cashoutDebitsMatchPayouts: Pairing<CashoutDebitRecord, PayoutRecord> = {
  name: 'cashout_debits_match_payouts',
  listed: { action: LEDGER.cashoutRecords },
  counterpart: PAYMENTS.payoutRecords,
  keyOf: (d) => d.cashoutId,
  counterpartKeyOf: (c) => c.cashoutId,
  judge(d, [payout]) {
    if (!payout) return 'payments has no cash-out with this id';
    const diff = differences(
      [
        ['agentId', d.agentId, payout.agentId],
        ['amountGas', d.amountGas, payout.amountGas],
        ['feeGas', d.feeGas, payout.feeGas],
      ],
      'payout',
    );
    if (!PAYOUT_STATES_AFTER[d.status].includes(payout.status)) diff.push(`the ledger shows it ${d.status} but payments shows it ${payout.status}`);
    return diff.length ? diff.join('; ') : null;
  },
  sample: (d) => ({ cashoutId: d.cashoutId, agentId: d.agentId, amountGas: d.amountGas, feeGas: d.feeGas, status: d.status }),
  what: 'cash-out debits',
  holds: 'match a payout record (same agent, amount and fee, a state that follows)',
  broken: 'match no payout record with the same agent, amount, fee and a state that follows',
};

const payoutsDebited: Pairing<PayoutRecord, CashoutDebitRecord> = {
  name: 'payouts_debited',
  listed: { action: PAYMENTS.payoutRecords, statuses: Object.keys(DEBIT_FOR_PAYOUT) },
  counterpart: LEDGER.cashoutRecords,
  keyOf: (c) => c.cashoutId,
  counterpartKeyOf: (d) => d.cashoutId,
  since: (c) => c.updatedAt,
  judge(payout, [debit], young) {
    const need = DEBIT_FOR_PAYOUT[payout.status as keyof typeof DEBIT_FOR_PAYOUT];
    if (!need) return null;
    const state = debit?.status ?? 'none';
    if ((need.ok as readonly string[]).includes(state)) return null;
    if ((need.next as readonly string[]).includes(state)) return young ? IN_FLIGHT : `it is ${payout.status} but the ledger's debit is ${state} after the grace period`;
    return debit ? `it is ${payout.status} but the ledger's debit is ${state}` : `it is ${payout.status} but the ledger never debited it`;
  },
  sample: (c) => ({ cashoutId: c.cashoutId, agentId: c.agentId, amountGas: c.amountGas, status: c.status }),
  what: 'cash-outs',
  holds: 'have the ledger debit their state needs',
  broken: 'lack the ledger debit their state needs',
};

// ─────────────────────────────── referral bonuses ↔ escrow's referrals ───────────────────────────────

const referralBonusesMatchEscrow: Pairing<ReferralOutcomeRecord, ReferralRecord> = {
  name: 'referral_bonuses_match_escrow_referrals',
  listed: { action: LEDGER.referralRecords },
  counterpart: ESCROW.referralRecords,
  keyOf: (o) => o.referredId,
  counterpartKeyOf: (r) => r.referredId,
  judge(o, [r]) {
    if (!o.credited) return null; // refused (self referral, weekly cap): no gas moved
    if (!r) return 'escrow never qualified this referral';
    return r.referrerId === o.referrerId ? null : `referrerId ${o.referrerId} ≠ escrow's ${r.referrerId}`;
  },
  sample: (o) => ({ referredId: o.referredId, referrerId: o.referrerId, credited: o.credited }),
  what: 'referral outcomes',
  holds: 'credit only referrals escrow qualified, to the same referrer',
  broken: 'credit a referral escrow never qualified for that referrer',
};

const qualifiedReferralsHaveOutcomes: Pairing<ReferralRecord, ReferralOutcomeRecord> = {
  name: 'qualified_referrals_have_ledger_outcomes',
  listed: { action: ESCROW.referralRecords },
  counterpart: LEDGER.referralRecords,
  keyOf: (r) => r.referredId,
  counterpartKeyOf: (o) => o.referredId,
  since: (r) => r.checkedAt,
  judge(r, [o], young) {
    if (!o) return young ? IN_FLIGHT : 'the ledger never recorded its outcome';
    return o.referrerId === r.referrerId ? null : `the ledger's referrerId ${o.referrerId} ≠ escrow's ${r.referrerId}`;
  },
  sample: (r) => ({ referredId: r.referredId, referrerId: r.referrerId, purchaseId: r.purchaseId }),
  what: 'qualified referrals',
  holds: 'have a ledger outcome (credited or refused) for the same referrer',
  broken: 'lack a ledger outcome for the same referrer',
};

/** The reconciliation checks, in the report's order. */
export async function reconcileServices(call: CallAction, options: ReconcileOptions = {}): Promise<AuditCheck[]> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const pageSize = Math.min(Math.max(1, options.pageSize ?? DEFAULT_RECORD_PAGE), MAX_RECORD_PAGE);
  const run = <A, B>(p: Pairing<A, B>) => reconcile(call, p, graceMs, pageSize);
  return [
    await run(gasCreditsMatchPaidCheckouts),
    await run(paidCheckoutsCredited),
    await run(holdsMatchPurchases('settled_holds_match_completed_purchases', 'posted', 'settled holds')),
    await run(purchasesResolvedInLedger('completed_purchases_settled', 'posted', 'completed purchases')),
    await run(holdsMatchPurchases('voided_holds_match_refunded_purchases', 'voided', 'voided holds')),
    await run(purchasesResolvedInLedger('refunded_purchases_voided', 'voided', 'refunded or failed purchases')),
    await run(cashoutDebitsMatchPayouts),
    await run(payoutsDebited),
    await run(referralBonusesMatchEscrow),
    await run(qualifiedReferralsHaveOutcomes),
  ];
}
