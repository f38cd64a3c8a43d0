/**
 * ask_help, step 3: the situation the answer is about — the caller's own account (as the gateway
 * read it) and what the question states. The asker's side of a purchase and the calls it may make
 * now come from the purchase machine and the catalogue; nothing here lists states or transitions.
 * When the question and the account disagree, the stated situation is answered and `mismatch` says
 * what the account shows.
 */
import { STATES, TRANSITIONS, reachableFrom, toolsAt, type PurchaseStatus } from '../../packages/contracts/purchase-machine';
import { TOOL_NAMES, getTool } from '../../packages/tool-catalogue';
import type { PurchaseView, SpendingLimitsView } from '../../packages/contracts/escrow';
import type { HelpAccount, HelpCheckout, LookedAt } from '../../packages/contracts/support';
import { has, type Parsed, type Side } from './help-parse';
import { names } from './help-retrieve';
import { ASKS, DOMAIN_WORDS, PURCHASE_WORDS, SIDE_PHRASES, WEAK_DOMAIN_WORDS } from '../../packages/knowledge/synonyms';

export interface PurchaseFacts {
  id: string | null;
  state: string;
  side: Side | null;
  title: string | null;
  priceGas: number | null;
  /** Catalogue tools the machine lets this side fire from this state, in the machine's order. */
  legal: string[];
  /** Deadlines that run now, in words ("auto-releases to the seller 2026-… (in 3 d)"). */
  deadlines: string[];
  inAccount: boolean;
}

export interface Grounded {
  side: Side | null;
  purchase: PurchaseFacts | null;
  /** The purchase as the account shows it, when the question tells another state of it. */
  actual: PurchaseFacts | null;
  /** What the account shows when it disagrees with the question (one sentence), or null. */
  mismatch: string | null;
  wallet: HelpAccount['wallet'];
  limits: SpendingLimitsView | null;
  checkouts: HelpCheckout[];
  account: HelpAccount | null;
  lookedAt: LookedAt[];
}

const SIDES: Side[] = ['buyer', 'seller'];

/** Tools a side may fire on a purchase in `state`, from the machine (catalogue tools only, not sweepers). */
export function legalCalls(state: string, side: Side | null): string[] {
  const calls = new Set((side ? [side] : SIDES).flatMap((who) => toolsAt(state as PurchaseStatus, who)));
  // In the machine's order, as the state lines list them.
  return [...new Set(TRANSITIONS.map((t) => t.tool))].filter((tool) => calls.has(tool) && TOOL_NAMES.includes(tool));
}

/** A call of the purchase machine (it moves a purchase), not another catalogue tool. */
export const isMachineTool = (tool: string) => TRANSITIONS.some((t) => t.tool === tool);

/** A purchase not yet settled either way (the machine's non-final states; a dispute is open). */
export const isOpen = (status: string) => !STATES[status as PurchaseStatus]?.final;

/** The side a catalogue tool belongs to: from the machine's `who`, else the catalogue's "Buyer:"/"Seller:" description; null when either side may call it. */
export function sideOfTool(tool: string): Side | null {
  const who = new Set(TRANSITIONS.filter((t) => t.tool === tool).flatMap((t) => t.who.filter((w): w is Side => (SIDES as string[]).includes(w))));
  if (who.size === 1) return [...who][0];
  if (who.size > 1) return null;
  const d = getTool(tool)?.description ?? '';
  return d.startsWith('Buyer') ? 'buyer' : d.startsWith('Seller') ? 'seller' : null;
}

/** States a purchase leaves by a timer (the sweeper): their due time is the deadline shown. */
function deadlinesOf(p: PurchaseView, side: Side | null, now: Date): string[] {
  const out: string[] = [];
  const when = (iso: string) => {
    const h = Math.round((Date.parse(iso) - now.getTime()) / 3_600_000);
    return `${iso.slice(0, 16).replace('T', ' ')} UTC (${h >= 48 ? `in ${Math.round(h / 24)} d` : h >= 0 ? `in ${h} h` : 'overdue'})`;
  };
  if (p.autoReleaseAt) out.push(`escrow auto-releases to the seller at ${when(p.autoReleaseAt)} unless the buyer acts`);
  if (p.deliverBy && !p.deliveredAt) out.push(`undelivered at ${when(p.deliverBy)} it is refunded to the buyer automatically`);
  if (p.approvalExpiresAt && side !== 'seller') out.push(`unapproved at ${when(p.approvalExpiresAt)} it fails and the hold is voided`);
  return out;
}

/** The marketplace's own words: a listing title's other words ("jest", "typescript") name that listing. */
const MARKET_WORDS = new Set([...DOMAIN_WORDS, ...WEAK_DOMAIN_WORDS, 'write', 'with', 'from', 'your', 'this', 'that', 'for', 'and', 'the']);

/** The question uses a word of a listing's own title ("the jest tests"): it means that purchase. */
export function namesTitle(p: Parsed, title: string | null | undefined): boolean {
  return (title ?? '').toLowerCase().split(/[^a-z0-9]+/).some((w) => w.length >= 4 && !MARKET_WORDS.has(w) && has(p.text, w));
}

function aboutAPurchase(p: Parsed, purchases: PurchaseView[]): boolean {
  return !!(p.purchaseIds.length || p.statedState || TRANSITIONS.some((x) => p.tools.includes(x.tool) || names(p.text, x.tool)) || [...PURCHASE_WORDS, ...ASKS.idle].some((w) => has(p.text, w)) || purchases.some((x) => namesTitle(p, x.listingTitle) || p.amounts.includes(x.priceGas)));
}

function facts(view: PurchaseView | null, state: string, side: Side | null, now: Date, id: string | null): PurchaseFacts {
  const deadlines = view && view.status === state ? deadlinesOf(view, side, now) : [];
  return { id: view?.id ?? id, state, side, title: view?.listingTitle ?? null, priceGas: view?.priceGas ?? null, legal: legalCalls(state, side), deadlines, inAccount: !!view };
}

/** `about`: the question's intent is about a purchase though it names none ("how do I get my gas back?"). */
export function ground(p: Parsed, account: HelpAccount | null, now: Date, about = false): Grounded {
  const purchases = account?.purchases ?? [];
  const lookedAt: LookedAt[] = [];
  if (account) {
    if (account.purchases) lookedAt.push({ kind: 'orders', id: account.agentId });
    if (account.wallet) lookedAt.push({ kind: 'wallet', id: account.agentId });
    if (account.limits) lookedAt.push({ kind: 'spending_limits', id: account.agentId });
  }
  let side: Side | null = p.side;
  let purchase: PurchaseFacts | null = null;
  let mismatch: string | null = null;
  let actual: PurchaseFacts | null = null;
  // A purchase_service that failed was a new purchase: the account's others are not what the question is about.
  const newOne = p.tools.includes('purchase_service') && (!!p.error || p.statedState === 'failed');
  if (!newOne && (about || aboutAPurchase(p, purchases))) {
    const statedId = p.purchaseIds[0] ?? null;
    const byId = statedId ? purchases.find((x) => x.id === statedId) ?? null : null;
    const mine = (x: PurchaseView) => !side || x.role === side;
    const open = (x: PurchaseView) => isOpen(x.status);
    // A side read only from naming the other party ("what pays the seller?") gives way to the account's one open purchase.
    const onlyNamed = !Object.entries(SIDE_PHRASES).some(([w, s]) => s === side && !/^(the|a) (buyer|seller)$/.test(w) && has(p.text, w));
    const theOther = onlyNamed && purchases.filter(open).length === 1 ? purchases.find(open) ?? null : null;
    const view =
      byId ??
      (statedId
        ? null
        : purchases.find((x) => mine(x) && p.statedState === x.status) ?? purchases.find((x) => mine(x) && open(x)) ?? (p.statedState ? null : purchases.find(mine)) ?? theOther);
    if (view && view === theOther) side = view.role as Side;
    if (statedId && !byId && account?.purchases) {
      mismatch = `I see no purchase ${statedId} on your account (check the id with list_orders)`;
      // One open purchase on the asker's side: the one the question most likely means (answered as the account shows it).
      const candidates = purchases.filter((x) => mine(x) && open(x));
      if (candidates.length === 1) actual = facts(candidates[0], candidates[0].status, side ?? (candidates[0].role as Side), now, candidates[0].id);
    }
    // The side the question states has no purchase here and the other side one open purchase: that is what the account shows.
    const other = !view && !actual && p.side ? purchases.filter((x) => open(x) && x.role !== p.side) : [];
    if (other.length === 1) {
      mismatch = `${statedId ? `I see no purchase ${statedId} on your account; ` : ''}your account shows you as the ${other[0].role} of ${other[0].id} (${other[0].status}), not its ${p.side}`;
      actual = facts(other[0], other[0].status, other[0].role as Side, now, other[0].id);
    }
    if (view) {
      lookedAt.push({ kind: 'purchase', id: view.id });
      if (!side && view.role) side = view.role as Side;
      if (view.role && side && view.role !== side && p.side) mismatch = `your account shows you as the ${view.role} of ${view.id}, not the ${side}`;
    }
    // A state the asker's own call made, on the purchase's way to the account's ("I delivered" of a disputed sale): history, no
    // disagreement (the question's stated state is cleared). A state only believed current ("still hasn't delivered") stays one.
    const ownMove = (state: string) => !!side && TRANSITIONS.some((t) => t.to === state && t.who.length === 1 && t.who[0] === side);
    if (view && p.statedState && p.statedState !== view.status && ownMove(p.statedState) && reachableFrom([p.statedState]).has(view.status)) p.statedState = null;
    const state = p.statedState ?? view?.status ?? null;
    if (view && p.statedState && p.statedState !== view.status) {
      mismatch = `your account shows ${view.id} as ${view.status}, not ${p.statedState}`;
      actual = facts(view, view.status, side, now, view.id);
    }
    if (state) purchase = facts(view && (!p.statedState || view.status === p.statedState || !!byId) ? view : null, state, side, now, statedId ?? view?.id ?? null);
    if (purchase && view && !purchase.id) purchase.id = view.id;
    if (!view && !statedId && account?.purchases && !purchases.length && p.statedState && !p.error && PURCHASE_WORDS.some((w) => has(p.text, w))) mismatch = 'I see no purchases on your account yet — check with whoami that this is the agent (key) you sold or bought with';
  }
  const checkouts = (account?.checkouts ?? []).filter((c) => c.status === 'open');
  return { side, purchase, actual, mismatch, wallet: account?.wallet ?? null, limits: account?.limits ?? null, checkouts, account, lookedAt };
}
