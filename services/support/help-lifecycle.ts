/**
 * The situation an agent describes mid-task, read before its keywords (issue #26, round 5): the
 * tools it says it called and what came back (a purchase state, a wallet figure, an HTTP status),
 * the side it is on, and the outcome it wants ("what else", "my gas back", "sooner", "not more than
 * N", "why was it refused", "what does this field do"). The next call comes from (situation, want)
 * in one small table (MOVES); the state a call leaves a purchase in comes from escrow's purchase
 * machine, not from phrases. Nothing here is read from the caller's account unless the question
 * leaves it open: what the agent states wins over what its account holds.
 */
import { STATES, TRANSITIONS, type PurchaseStatus } from '../../packages/contracts/purchase-machine';
import type { PurchaseView } from '../../packages/contracts/escrow';
import type { HelpAccount, LookedAt, NextStep } from '../../packages/contracts/support';
import { exampleArguments } from '../../packages/knowledge';
import {
  APPROVAL_WINDOW_HOURS,
  CASHOUT_FEE_PERCENT,
  DEFAULT_TERMS,
  MIN_CASHOUT_GAS,
  RATING_CHANGE_WINDOW_DAYS,
  REFERRAL_BONUS_GAS,
  REFERRAL_WEEKLY_CAP,
  WEBHOOK_RETRY_HOURS,
  type MarketTerms,
} from '../../packages/market-rules';
import { PURCHASE_STATUSES, TOOL_NAMES, TOOLS } from '../../packages/tool-catalogue';

export type Want = 'next' | 'money_back' | 'sooner' | 'cap_price' | 'why' | 'explain' | 'check';
type Side = 'buyer' | 'seller';

/** What the question says happened, apart from what it asks. */
export interface Described {
  /** Catalogue tools the agent says it called (not the ones it is about to call or that the other party has not called). */
  called: string[];
  /** Tools it is about to call. */
  planned: string[];
  /** Tools it called that answered with an error (retrying one may be its next step). */
  failed: string[];
  /** Tools the other party called ("the buyer called request_refund"): not the asker's own moves. */
  byOther: string[];
  /** The purchase state it is in: stated, else the state its last call leaves a purchase in. */
  state: PurchaseStatus | null;
  /** The state is named in the question (not inferred from a call). */
  stateStated: boolean;
  side: Side | null;
  /** Figures it quotes (wallet fields, lastStatusCode …), by lower-case name. */
  figures: Map<string, number>;
  /** An HTTP status its own endpoint answered (a webhook delivery's lastStatusCode). */
  endpointStatus: number | null;
  /** A call of its was refused or failed. */
  refused: boolean;
  purchaseId: string | null;
  listingId: string | null;
  wants: Want[];
}

// ---------------------------------------------------------------------------------------------
// Reading the situation.

/** The state a tool's call leaves a purchase in, from escrow's machine (the documented transition). */
const STATE_AFTER = new Map<string, { state: PurchaseStatus; who: string[] }>();
for (const t of TRANSITIONS) {
  if (STATE_AFTER.has(t.tool) || !TOOL_NAMES.includes(t.tool) || t.doc === false) continue;
  const state = t.to ?? (t.from.length === 1 ? t.from[0] : null);
  if (state) STATE_AFTER.set(t.tool, { state: state as PurchaseStatus, who: t.who.filter((w) => w === 'buyer' || w === 'seller') });
}

/** A read shows a purchase in the state it needs (get_delivery reads a delivery, so the purchase was delivered). */
for (const [tool, state] of [['get_delivery', 'delivered']] as const) if (!STATE_AFTER.has(tool)) STATE_AFTER.set(tool, { state, who: ['buyer'] });

/** A tool named as not (yet) called, or about to be called. */
const NOT_CALLED = /\b(?:not|never|hasn'?t|has not|haven'?t|have not|didn'?t|did not|won'?t|yet to|without)\b[^.?!;,]{0,25}$/;
const PLANNED = /\b(?:about to|going to|gonna|want to|plan(?:ning)? to|before (?:i |calling |my )?|will|next i|should i)\b[^.?!;,]{0,25}$/;
const OTHER_PARTY = /\b(?:(?:the|my) (?:buyer|seller|customer|client)|they|he|she)\b[^.?!;,]{0,20}$/;

const FIGURE = /\b(gasbalance|heldgas|pendingearningsgas|withdrawablegas|laststatuscode|pricegas|maxpricegas|attempts)\b["']?\s*(?:is|=|:|of|at)?\s*(\d{1,9})\b/g;

/** A call's answer that is an error (then the call moved nothing). */
const FAILED_CALL = /(?:->|→|\b(?:returned|returns|got|gave|answered|failed|fails|errored|threw|refused|rejected|http|status)\b)\W{0,3}(?:[45]\d\d\b|\{\s*"ok"\s*:\s*false|[a-z]+_[a-z_]+\b)|\b(?:error\w*|refused|rejected|fail\w*|denied|came back [45]\d\d|timed? ?out|timeout|econn\w+)\b/;

const REFUSED = /\b(?:refus\w*|complain\w*|blocked|can'?t|cannot|won'?t|doesn'?t let|no luck|reject\w*|denied|declined|fail\w*|won'?t let|didn'?t (?:go through|work)|not allowed|error\w*|[45]\d\d)\b/;

const WANTS: Array<[Want, RegExp]> = [
  ['next', /\b(?:anything (?:else|more|left)|what(?:'s| is)? (?:next|left)|what now|now what|next steps?|what (?:else )?(?:should|do|must|can) i (?:still )?do(?: now| next)?\b|is that (?:it|all)|am i done|(?:all )?done now|what remains|(?:which|what) (?:call|tool|step)\b[^?.]{0,15}\bnext|next (?:call|tool|move)|(?:do|must|should) i (?:still )?(?:need to )?(?:do|call) (?:something|anything)|need to do (?:something|anything)|(?:anything|something) (?:i|we) (?:must|should|need to|have to) do)\b/],
  ['money_back', /\b(?:refund\w*|(?:gas|money|funds|payment) back|back (?:my|the) (?:gas|money|funds)|(?:gas|money|funds) returned|recover (?:my|the) (?:gas|money|funds)|cancel\w*)\b/],
  ['sooner', /\b(?:faster|sooner|quicker|earlier|speed(?:ing)? (?:\w+ )?up|hurry|expedite|nudge|remind|chase|poke|push (?:them|the buyer|the seller))\b/],
  ['cap_price', /\b(?:charged|billed|pay|paying|debited)\b[^.?!]{0,15}\b(?:more|extra|above|over|higher)\b|\bprice\b[^.?!]{0,40}\b(?:change[sd]?|rises?|rose|goes up|went up|bump\w*|raise[sd]?|increase[sd]?|jump\w*)\b|\b(?:bump\w*|raise[sd]?|increase[sd]?|change[sd]?) (?:the|its|their) price\b|\b(?:cap|lock|guarantee|protect)\w* (?:in )?(?:the |my )?price\b/],
  ['why', /\bwhy\b|\bwhat'?s (?:going on|wrong|happening)\b|\bwhat (?:went wrong|happened)\b|\bhow come\b/],
  ['explain', /\bwhat (?:does|do|would|will) (?!i\b|we\b)\w+ (?:actually )?(?:do|mean|change|give)\b|\bwhat (?:is|are) [^?]{0,30}\b(?:for|meant)\b|\bwhat(?:'s| is) the (?:point|use|effect) of\b|\bmeaning of\b/],
  ['check', /\bhow (?:do|can|should) i (?:check|see|look up|find out|view|read|know)\b|\bwhere (?:do|can) i (?:see|check|find)\b/],
];

/** A state word under a negation ("hasn't delivered") or in a supposition ("before it gets refunded") states no state. */
const NEGATED = /\b(?:not|never|hasn'?t|has not|haven'?t|didn'?t|did not|isn'?t|wasn'?t|yet to|nothing|gets?|getting|will|would|be|before|until|unless|if|once|when|can|could|should|auto)\s+(?:\w+\s+)?$/;

function stateNamed(q: string): PurchaseStatus | null {
  for (const s of [...PURCHASE_STATUSES].sort((a, b) => b.length - a.length)) {
    for (const m of q.matchAll(new RegExp(`(?:^|[^a-z_])(${s})(?=[^a-z_]|$)`, 'g'))) {
      if (!NEGATED.test(q.slice(Math.max(0, m.index - 25), m.index + m[0].length - s.length))) return s as PurchaseStatus;
    }
  }
  // "it came back completed", "it's delivered": the state in plain words.
  const plain = /\b(?:came back|is now|it'?s|status(?: is)?|shows?|says?|now)\s+(completed|delivered|refunded|disputed)\b/.exec(q);
  return plain ? (plain[1] as PurchaseStatus) : null;
}

/** What the question says happened, what the agent is about to do and what it wants. */
export function describe(question: string, stated: 'buyer' | 'seller' | 'both' | 'unknown'): Described {
  const q = question.toLowerCase();
  const called: string[] = [];
  const planned: string[] = [];
  const failed = new Set<string>();
  const byOther = new Set<string>();
  for (const m of q.matchAll(/\b[a-z]+(?:_[a-z]+)+\b/g)) {
    const tool = m[0];
    if (!TOOL_NAMES.includes(tool) || tool === 'ask_help') continue;
    const before = q.slice(Math.max(0, m.index - 40), m.index);
    if (PLANNED.test(before)) planned.push(tool);
    else if (!NOT_CALLED.test(before)) {
      // The other party's call ("the seller ran deliver_work") moves the purchase too, but says the asker is on the other side.
      if (OTHER_PARTY.test(before)) byOther.add(tool);
      called.push(tool);
      // What came back: a call answered with an error moved nothing.
      const after = q.slice(m.index + tool.length, m.index + tool.length + 80).split(/[.?!]\s/)[0];
      if (FAILED_CALL.test(after)) failed.add(tool);
    }
  }
  // A state the agent names wins; else the one its last successful purchase call leads to.
  const last = [...called].reverse().find((t) => STATE_AFTER.has(t) && !failed.has(t));
  const named = stateNamed(q);
  const state = named ?? (last ? STATE_AFTER.get(last)!.state : null);
  const who = last ? STATE_AFTER.get(last)!.who : [];
  const caller: Side | null = who.length === 1 ? (who[0] as Side) : null;
  const side: Side | null = stated === 'buyer' || stated === 'seller' ? stated : caller && last && byOther.has(last) ? (caller === 'buyer' ? 'seller' : 'buyer') : caller;
  const figures = new Map<string, number>();
  for (const m of q.matchAll(FIGURE)) if (!figures.has(m[1])) figures.set(m[1], Number(m[2]));
  const webhookish = /\bwebhook|\blist_webhook_deliveries\b|\bhandler\b|\bendpoint\b/.test(q);
  const statusText = /\b(?:laststatuscode|status(?: code)?|answer(?:s|ed)?|respond(?:s|ed)?|return(?:s|ed)?|got)\W{0,3}([1-5]\d\d)\b(?!\s*gas)/.exec(q);
  const endpointStatus = webhookish && statusText ? Number(statusText[1]) : null;
  return {
    called,
    planned,
    failed: [...failed],
    byOther: [...byOther],
    state,
    stateStated: named !== null,
    side,
    figures,
    endpointStatus,
    refused: REFUSED.test(q),
    purchaseId: /\bpur_[a-z0-9]+/.exec(q)?.[0] ?? null,
    listingId: /\blst_[a-z0-9]+/.exec(q)?.[0] ?? null,
    wants: WANTS.filter(([, re]) => re.test(q)).map(([w]) => w),
  };
}

// ---------------------------------------------------------------------------------------------
// The table: (situation, want) → the next call, then the rule.

export interface Move {
  lead: string;
  nextStep: NextStep;
  sections: string[];
  lookedAt: LookedAt[];
  /** The move depends on something the question may say in other words (the verdict on a delivery): then it competes with the keyword rules instead of deciding. */
  tentative?: boolean;
  /** Only the state and side were read, not what is wanted: a candidate ranked after the specific rules. */
  fallback?: boolean;
}

interface Ctx {
  d: Described;
  q: string;
  account: HelpAccount | null | undefined;
  terms: MarketTerms;
  /** The agent judges the work it got as not what it asked for. */
  unhappy: boolean;
}

interface Row {
  /** The situation this row is about. */
  when: (c: Ctx) => boolean;
  wants: Want[];
  move: (c: Ctx) => Move;
}

/** The purchase the question is about: the one it names, else the caller's own in the stated state and side. */
function purchaseOf(c: Ctx): PurchaseView | null {
  const ps = c.account?.purchases ?? [];
  if (c.d.purchaseId) return ps.find((p) => p.id.toLowerCase() === c.d.purchaseId) ?? null;
  return ps.find((p) => p.status === c.d.state && p.role === (c.d.side ?? 'buyer')) ?? null;
}
const pid = (c: Ctx) => purchaseOf(c)?.id ?? c.d.purchaseId ?? 'pur_…';
const id = (c: Ctx) => ({ purchaseId: pid(c) });
const looked = (c: Ctx): LookedAt[] => {
  const p = purchaseOf(c);
  return p ? [{ kind: 'purchase', id: p.id }] : [];
};
/** The stated state on the stated side (a seller's situation needs the agent to say it sells). */
const inState = (c: Ctx, state: PurchaseStatus, side: Side) => c.d.state === state && (c.d.side ?? 'buyer') === side;
const GOOD = /\b(?:good|great|fine|perfect|correct|works|passes|happy with|satisfied|as (?:described|promised|asked)|match(?:es|ed)?)\b/;

/** Fields an agent sends or reads, and what they do (the numbers from the market rules). */
const FIELDS: Array<{ field: RegExp; tool: string; text: (c: Ctx) => string; sections: string[] }> = [
  {
    field: /\breferredby\b/,
    tool: 'register',
    text: () =>
      `register {"displayName", "referredBy": "agt_…"} names the agent that referred you; it can be set only at registration. It costs you nothing and changes nothing for you; the referrer earns ${REFERRAL_BONUS_GAS} gas when you make your first purchase (your first purchase_service), not at sign-up, for at most ${REFERRAL_WEEKLY_CAP} referred agents a week. That bonus is spendable gas, not withdrawable.`,
    sections: ['referral'],
  },
  {
    field: /\bmaxpricegas\b/,
    tool: 'purchase_service',
    text: () => 'maxPriceGas on purchase_service is the most you agree to pay: if the listing now costs more, the call answers 409 invalid_state and nothing is held; at or below it you pay the listing\'s price.',
    sections: ['buying'],
  },
  {
    field: /\bautoreleaseat\b/,
    tool: 'get_purchase',
    text: (c) => `autoReleaseAt is when a delivered purchase completes by itself (${c.terms.autoReleaseDays} days after delivery) and the seller is paid, unless the buyer confirms earlier, requests a refund (which pauses it) or disputes (which freezes it).`,
    sections: ['purchase-states'],
  },
  {
    field: /\b(?:withdrawablegas|pendingearningsgas)\b/,
    tool: 'wallet',
    text: (c) => cashoutRule(c),
    sections: ['cashout', 'wallet'],
  },
];

function cashoutRule(c: Ctx): string {
  const f = c.d.figures;
  const w = c.account?.wallet;
  // The figures the agent quotes are the situation; its account fills in only what it leaves open.
  const withdrawable = f.get('withdrawablegas') ?? w?.withdrawableGas ?? null;
  const pending = f.get('pendingearningsgas') ?? w?.pendingEarningsGas ?? null;
  const balance = f.get('gasbalance') ?? null;
  return (
    `request_cashout pays out only withdrawableGas — earnings of completed sales (sale_earn) — and at least ${MIN_CASHOUT_GAS} gas per cash-out (${CASHOUT_FEE_PERCENT}% fee, paid in BTC).` +
    (withdrawable !== null ? ` Your withdrawableGas is ${withdrawable}${withdrawable < MIN_CASHOUT_GAS ? `, below the ${MIN_CASHOUT_GAS} gas minimum` : ''}.` : '') +
    (pending !== null && pending > 0
      ? ` The ${pending} gas of pendingEarningsGas are sales delivered but not completed yet: they become withdrawable when each buyer calls confirm_delivery, or ${c.terms.autoReleaseDays} days after delivery (auto-release)` +
        ((withdrawable ?? 0) + pending < MIN_CASHOUT_GAS ? `, and even then ${(withdrawable ?? 0) + pending} gas is under the ${MIN_CASHOUT_GAS} gas minimum.` : '.')
      : '') +
    (balance !== null ? ` Bought gas (your gasBalance ${balance}), refunds and referral bonuses are spendable but never withdrawable.` : ' Bought gas, refunds and referral bonuses are spendable but never withdrawable.') +
    ' An open dispute on one of your sales also blocks cash-out.'
  );
}

/** A purchase whose status is failed ("returned a purchase with status failed"), not a call or a delivery that failed. */
export const PURCHASE_FAILED = /\b(?:status|state)\W{0,3}(?:is |was |of |=\s*)?["']?failed\b|\bpurchase (?:is|was|has|came back|ended(?: up)?)\W{0,3}(?:in |as )?(?:status )?failed\b/;

const MOVES: Row[] = [
  // Before buying: maxPriceGas caps what is charged.
  {
    when: (c) => !c.d.state && (c.d.planned.includes('purchase_service') || !!c.d.listingId || /\bbuy\w*|\bpurchas\w*/.test(c.q)),
    wants: ['cap_price'],
    move: (c) => {
      const cap = /\b(?:more than|above|over|beyond|exceed\w*)\s*(\d{1,7})\b/.exec(c.q) ?? /\b(?:quoted|priced|costs?|price(?:gas)?(?: is| of)?|at)\s*(?:it at\s*)?(\d{1,7})\s*gas\b/.exec(c.q);
      const max = cap ? Number(cap[1]) : null;
      const listingId = c.d.listingId ?? 'lst_…';
      return {
        lead:
          `Set maxPriceGas: purchase_service {"listingId": "${listingId}", "requirements", "maxPriceGas": ${max ?? '<the quoted price>'}} with an Idempotency-Key. ` +
          'If the seller raised the price before your call lands, it answers 409 invalid_state and nothing is held; otherwise you pay the listed price, never more. The price held is the price paid.',
        nextStep: { tool: 'purchase_service', arguments: { ...exampleArguments('purchase_service'), listingId, ...(max ? { maxPriceGas: max } : {}) } },
        sections: ['buying'],
        lookedAt: [],
      };
    },
  },
  // A refused cash-out: withdrawable versus pending earnings, and the minimum.
  {
    when: (c) => (c.d.called.includes('request_cashout') || /\bcash(?:ing)?[\s-]?out\b|\bwithdraw\b/.test(c.q)) && (c.d.refused || c.d.figures.has('withdrawablegas') || c.d.figures.has('pendingearningsgas')),
    wants: ['why', 'next'],
    move: (c) =>
      // The refusal names the missing payout address: that precondition, not the figures, is the step.
      /\b(?:payout|btc|bitcoin) address\b|\bpayouts_not_connected\b|\bpayouts? (?:are |is )?not (?:connected|set up)\b|\bconnect_payouts\b/.test(c.q) && !/\balready (?:connected|set|called)\b/.test(c.q)
        ? {
            lead: `The missing step is the payout address: connect_payouts {"btcAddress": "bc1q…"} sets the Bitcoin address cash-outs are paid to (once). Then request_cashout {"amountGas"} again (at least ${MIN_CASHOUT_GAS} gas of withdrawableGas, ${CASHOUT_FEE_PERCENT}% fee).`,
            nextStep: { tool: 'connect_payouts', arguments: exampleArguments('connect_payouts') },
            sections: ['cashout'],
            lookedAt: [],
          }
        : {
            lead: cashoutRule(c),
            nextStep: { tool: 'wallet', arguments: {} },
            sections: ['cashout', 'wallet'],
            lookedAt: c.account?.wallet && !c.d.figures.size ? [{ kind: 'wallet', id: c.account.agentId }] : [],
          },
  },
  // A webhook endpoint that answers anything but 2xx.
  {
    when: (c) => c.d.endpointStatus !== null && (c.d.endpointStatus < 200 || c.d.endpointStatus >= 300),
    wants: ['why', 'next'],
    move: (c) => {
      const s = c.d.endpointStatus!;
      const cause =
        s >= 500
          ? `${s} means your handler threw or crashed before answering`
          : s === 401 || s === 403
            ? `${s} means your handler rejected the request, usually its signature check`
            : s === 404 || s === 405
              ? `${s} means the url does not reach your handler's route (path or method)`
              : `${s} is not a success`;
      return {
        lead:
          `Fix the handler so it answers 2xx (200) at once: ${cause}. list_webhook_deliveries then shows the next attempt's status. ` +
          `Each delivery is retried with exponential backoff for ${WEBHOOK_RETRY_HOURS} hours with the same Market-Event-Id (dedupe on it); a webhook failing for hours is paused until set_webhook is called with its url again. ` +
          'In express: mount express.raw({type: "application/json"}) on the webhook route (not express.json before it), verify Market-Signature (HMAC-SHA256 of "<t>.<raw body>" with your secret), answer 200, then do the work.',
        nextStep: { tool: 'list_webhook_deliveries', arguments: {} },
        sections: ['webhooks'],
        lookedAt: [],
      };
    },
  },
  // Completed: the buyer's one step left is the rating; the seller's earnings are in the wallet.
  {
    when: (c) => inState(c, 'completed', 'buyer') && c.d.called.includes('rate_purchase'),
    wants: ['next'],
    move: (c) => ({
      lead: `Nothing is left on it: the purchase is completed, the seller paid and your rating recorded (rate_purchase again within ${RATING_CHANGE_WINDOW_DAYS} days changes it). Your next purchase starts with search_services.`,
      nextStep: { tool: 'search_services', arguments: exampleArguments('search_services') },
      sections: ['ratings'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'completed', 'buyer'),
    wants: ['next'],
    move: (c) => ({
      lead: `Rate it: rate_purchase {"purchaseId": "${pid(c)}", "rating": 1–5, "comment"?} is the one step left (you can change it within ${RATING_CHANGE_WINDOW_DAYS} days; it feeds the seller's ratingAvg). Nothing else is required: the purchase is completed, the seller is paid, and it can no longer be refunded or disputed.`,
      nextStep: { tool: 'rate_purchase', arguments: { ...id(c), rating: 5 } },
      sections: ['ratings'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'completed', 'seller'),
    wants: ['next', 'check'],
    move: (c) => ({
      lead: `The sale is completed: your ${100 - c.terms.platformFeePercent}% is in your wallet as sale_earn and counts in withdrawableGas. wallet shows it; to take it out in BTC, connect_payouts {"btcAddress"} once, then request_cashout {"amountGas"} (at least ${MIN_CASHOUT_GAS} gas, ${CASHOUT_FEE_PERCENT}% fee).`,
      nextStep: { tool: 'wallet', arguments: {} },
      sections: ['cashout'],
      lookedAt: looked(c),
    }),
  },
  // The seller gives the money back: before completion a seller's request_refund refunds the buyer at once.
  {
    when: (c) => (c.d.state === 'awaiting_delivery' || c.d.state === 'delivered') && c.d.side === 'seller',
    wants: ['money_back'],
    move: (c) => ({
      lead:
        `As the seller you refund the buyer yourself: request_refund {"purchaseId": "${pid(c)}", "reason"} returns the full price to the buyer's gasBalance at once (the purchase becomes refunded; you earn nothing on it). ` +
        'A seller can do that any time before completion, delivered or not; tell the buyer with send_message.',
      nextStep: { tool: 'request_refund', arguments: { ...id(c), reason: 'Refunded by the seller.' } },
      sections: ['refunds-disputes'],
      lookedAt: looked(c),
    }),
  },
  // Delivered, seller side: the buyer decides; auto-release is the floor, a message the way to be paid sooner.
  {
    when: (c) => inState(c, 'delivered', 'seller'),
    wants: ['sooner', 'next'],
    move: (c) => ({
      lead:
        `Ask the buyer: send_message {"purchaseId": "${pid(c)}", "body"} — say it is delivered and ask them to check it and call confirm_delivery, which pays you at once. ` +
        `Nothing else speeds it up, and you need not: if the buyer does nothing, it auto-releases to you ${c.terms.autoReleaseDays} days after delivery (autoReleaseAt on get_purchase). A refund request pauses that and a dispute freezes it.`,
      nextStep: { tool: 'send_message', arguments: { ...id(c), body: 'Delivered: please check it and call confirm_delivery if it is what you asked for.' } },
      sections: ['purchase-states', 'messages'],
      lookedAt: looked(c),
    }),
  },
  // Delivered, buyer side: the verdict on the work decides.
  {
    when: (c) => inState(c, 'delivered', 'buyer') && c.unhappy,
    wants: ['next', 'money_back', 'why'],
    move: (c) => ({
      lead:
        `Do not confirm it. Call dispute_purchase {"purchaseId": "${pid(c)}", "reason"} before it auto-releases (${c.terms.autoReleaseDays} days after delivery): work that is not what the listing promised is what a dispute is for; the escrow is frozen and an operator decides between a refund to you and a release to the seller. ` +
        `A softer first step: request_refund {"purchaseId": "${pid(c)}", "reason"} asks the seller to refund and pauses auto-release.`,
      nextStep: { tool: 'dispute_purchase', arguments: { ...id(c), reason: 'The delivery does not match the listing: it is not what was promised.' } },
      sections: ['refunds-disputes'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'delivered', 'buyer'),
    wants: ['money_back'],
    move: (c) => ({
      lead:
        `After delivery a refund is the seller's to grant: request_refund {"purchaseId": "${pid(c)}", "reason"} asks for it and pauses auto-release. If the work is not what the listing promised, dispute_purchase {"purchaseId": "${pid(c)}", "reason"} freezes the escrow for an operator to decide. ` +
        `Do it before it auto-releases (${c.terms.autoReleaseDays} days after delivery); once completed nothing is refunded.`,
      nextStep: { tool: 'request_refund', arguments: { ...id(c), reason: 'The delivery is not what I asked for.' } },
      sections: ['refunds-disputes'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'delivered', 'buyer') && GOOD.test(c.q),
    wants: ['next'],
    move: (c) => ({
      lead: `Confirm it: confirm_delivery {"purchaseId": "${pid(c)}"} completes the purchase and pays the seller (final: no refund or dispute after it); then rate_purchase rates it.`,
      nextStep: { tool: 'confirm_delivery', arguments: id(c) },
      sections: ['purchase-states'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'delivered', 'buyer'),
    wants: ['next'],
    move: (c) => ({
      lead: `Read the delivery with get_delivery {"purchaseId": "${pid(c)}"}; if it is what you asked for, confirm_delivery pays the seller (then rate_purchase). If not, request_refund or dispute_purchase before it auto-releases ${c.terms.autoReleaseDays} days after delivery.`,
      tentative: true,
      nextStep: { tool: 'get_delivery', arguments: id(c) },
      sections: ['purchase-states'],
      lookedAt: looked(c),
    }),
  },
  // Disputed: frozen until an operator decides; either side adds its evidence.
  {
    when: (c) => c.d.state === 'disputed',
    wants: ['next', 'sooner', 'why', 'check'],
    move: (c) => ({
      lead:
        `Put your evidence in the purchase's messages: send_message {"purchaseId": "${pid(c)}", "body"} (what was asked, what was delivered; the delivery's sha256 is on record). ` +
        `The escrow is frozen (no auto-release, no payout, no refund) until an operator decides between a refund to the buyer and a release to the seller; get_purchase shows the outcome. ${c.d.side === 'seller' ? 'While a dispute is open on one of your sales you cannot cash out; if the buyer is right, request_refund refunds them yourself.' : ''}`.trim(),
      nextStep: { tool: 'send_message', arguments: { ...id(c), body: 'Evidence for the operator: …' } },
      sections: ['refunds-disputes', 'messages'],
      lookedAt: looked(c),
    }),
  },
  // Refunded: the full price is back with the buyer.
  {
    when: (c) => c.d.state === 'refunded',
    wants: ['next', 'check', 'money_back'],
    move: (c) => ({
      lead: `Check wallet: a refund returns the full price to the buyer's gasBalance at once (a refund entry in the ledger), nothing held any more. The purchase is final: no delivery, rating or dispute on it.`,
      nextStep: { tool: 'wallet', arguments: {} },
      sections: ['wallet', 'refunds-disputes'],
      lookedAt: looked(c),
    }),
  },
  // Failed: final, nothing charged; its failureReason says why and what to do before buying again.
  {
    when: (c) => c.d.state === 'failed' && PURCHASE_FAILED.test(c.q),
    wants: ['why', 'next', 'check', 'money_back'],
    move: (c) => ({
      lead:
        `Read its failureReason: get_purchase {"purchaseId": "${pid(c)}"}. ${STATES.failed.next} ` +
        'A failed purchase is final; buy again with purchase_service and a new Idempotency-Key once the reason is dealt with.',
      nextStep: { tool: 'get_purchase', arguments: id(c) },
      sections: ['purchase-states', 'buying'],
      lookedAt: looked(c),
    }),
  },
  // Awaiting approval: only the buyer's human moves it.
  {
    when: (c) => inState(c, 'awaiting_approval', 'buyer'),
    wants: ['sooner', 'next', 'why'],
    move: (c) => ({
      lead: `Only your human can move it: send them the approvalUrl from the purchase (get_purchase {"purchaseId": "${pid(c)}"} shows it) to approve or decline. The gas is held meanwhile and the seller does not see the order; not approved within ${APPROVAL_WINDOW_HOURS} hours, it fails and the hold is voided.`,
      nextStep: { tool: 'get_purchase', arguments: id(c) },
      sections: ['spending-limits', 'purchase-states'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'awaiting_approval', 'buyer'),
    wants: ['money_back'],
    move: (c) => ({
      lead: `Ask your human to decline it at the approvalUrl (get_purchase {"purchaseId": "${pid(c)}"} shows it): a declined or expired approval (${APPROVAL_WINDOW_HOURS} hours) voids the hold and the gas is back in your gasBalance.`,
      nextStep: { tool: 'get_purchase', arguments: id(c) },
      sections: ['spending-limits'],
      lookedAt: looked(c),
    }),
  },
  // Awaiting delivery, buyer side: before delivery a refund is the buyer's own.
  {
    when: (c) => inState(c, 'awaiting_delivery', 'buyer'),
    wants: ['money_back'],
    move: (c) => ({
      lead:
        `Call request_refund {"purchaseId": "${pid(c)}"}: before delivery (awaiting_delivery) it refunds you at once, the full price back to your gasBalance — no need for the seller to answer, and no dispute needed. ` +
        `If you do nothing, it is refunded automatically once the listing's delivery days pass.`,
      nextStep: { tool: 'request_refund', arguments: { ...id(c), reason: 'No delivery and no answer from the seller.' } },
      sections: ['refunds-disputes'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'awaiting_delivery', 'buyer'),
    wants: ['sooner', 'next'],
    move: (c) => ({
      lead: `The seller has the order and the price is held in escrow. Ask about progress with send_message {"purchaseId": "${pid(c)}", "body"}; get_purchase shows deliverBy. Undelivered by then it is refunded automatically, and request_refund refunds it at once before delivery.`,
      nextStep: { tool: 'send_message', arguments: { ...id(c), body: 'Could you tell me where this stands?' } },
      sections: ['purchase-states', 'messages'],
      lookedAt: looked(c),
    }),
  },
  {
    when: (c) => inState(c, 'awaiting_delivery', 'seller'),
    wants: ['next'],
    move: (c) => ({
      lead: `Deliver: deliver_work {"purchaseId": "${pid(c)}", "delivery": {"summary"}} before the deadline (deliverBy), or the buyer is refunded automatically. You are paid when the buyer confirms, or ${c.terms.autoReleaseDays} days after delivery.`,
      nextStep: { tool: 'deliver_work', arguments: { ...id(c), delivery: { summary: 'What I delivered, in a few sentences; links to the files.' } } },
      sections: ['selling'],
      lookedAt: looked(c),
    }),
  },
];

/** The move for the situation a question describes, or null when it describes none of the table's. */
export function describedMove(
  question: string,
  stated: 'buyer' | 'seller' | 'both' | 'unknown',
  account: HelpAccount | null | undefined,
  terms: MarketTerms = DEFAULT_TERMS,
  unhappy = false,
): Move | null {
  const d = describe(question, stated);
  const c: Ctx = { d, q: question.toLowerCase(), account, terms, unhappy };
  // A field the agent is about to send or reads, asked what it does.
  if (d.wants.includes('explain')) {
    const f = FIELDS.find((x) => x.field.test(c.q));
    if (f) {
      const args = f.tool === 'register' ? { ...exampleArguments('register'), ...(/\bagt_[a-z0-9]+/.test(c.q) ? { referredBy: /\bagt_[a-z0-9]+/.exec(c.q)![0] } : {}) } : exampleArguments(f.tool);
      return { lead: f.text(c), nextStep: { tool: f.tool, arguments: args }, sections: f.sections, lookedAt: [] };
    }
  }
  // Only a described situation: a call made, a state, a figure or a status (else the keywords decide).
  if (!d.called.length && !d.planned.length && !d.state && !d.figures.size && d.endpointStatus === null && !d.listingId) return null;
  // Rows are in table order, narrowest first (a refused call before the state it left alone).
  const row = MOVES.find((r) => r.wants.some((w) => d.wants.includes(w)) && r.when(c));
  if (row) return row.move(c);
  // A state and a side stated with a want the table does not know ("how do I hand it over?"): the call
  // that state waits for from that side, as a candidate beside the keyword rules (it does not decide).
  if (!d.stateStated || (stated !== 'buyer' && stated !== 'seller') || d.refused) return null;
  const next = MOVES.find((r) => r.wants.includes('next') && r.when(c))?.move(c);
  // The call it just made is not its next one.
  return next && !d.called.includes(next.nextStep.tool) ? { ...next, tentative: true, fallback: true } : null;
}

/** Reads and messages either party may use on a funded purchase (no transition: they move nothing). */
const PURCHASE_READS: Record<Side, string[]> = {
  buyer: ['get_purchase', 'get_delivery', 'send_message', 'list_messages', 'list_orders'],
  seller: ['get_purchase', 'send_message', 'list_messages', 'list_orders'],
};

/** Tools that act on one purchase (take a purchaseId) or create one: the ones a purchase's state gates. */
export const PURCHASE_BOUND = new Set([
  ...TOOLS.filter((t) => 'purchaseId' in t.params).map((t) => t.name),
  ...TRANSITIONS.filter((t) => TOOL_NAMES.includes(t.tool)).map((t) => t.tool),
]);

/** The transitions a side may fire from a state (no reads): empty when the purchase waits for someone else. */
export function movesOf(state: PurchaseStatus, side: Side): string[] {
  return TRANSITIONS.filter((t) => t.from.includes(state) && t.who.includes(side) && TOOL_NAMES.includes(t.tool)).map((t) => t.tool);
}

/** The states a purchase can be in once delivered (the deliver transition's state and what follows it): get_delivery has something to read. */
const DELIVERED_SINCE = ((): Set<string> => {
  const seen = new Set<string>(TRANSITIONS.filter((t) => t.tool === 'deliver_work' && t.to).map((t) => t.to!));
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of TRANSITIONS) {
      if (t.to && t.from.some((f) => seen.has(f)) && !seen.has(t.to)) {
        seen.add(t.to);
        grew = true;
      }
    }
  }
  return seen;
})();

/**
 * The calls a side may make on a purchase in a state: the purchase machine's transitions from that
 * state for that side (a seller in awaiting_delivery: ack_purchase, deliver_work, request_refund,
 * dispute_purchase), and the reads and messages.
 */
export function allowedCalls(state: PurchaseStatus, side: Side): Set<string> {
  return new Set([...movesOf(state, side), ...PURCHASE_READS[side].filter((tool) => tool !== 'get_delivery' || DELIVERED_SINCE.has(state))]);
}

/** Whether a side ever makes a call: a tool the purchase machine gives only to the other side is never this side's. */
export function sideMakes(tool: string, side: Side): boolean {
  const whos = TRANSITIONS.filter((t) => t.tool === tool).flatMap((t) => t.who);
  return !whos.length || whos.includes(side) || !whos.some((w) => w === 'buyer' || w === 'seller');
}
