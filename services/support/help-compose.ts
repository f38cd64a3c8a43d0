/**
 * ask_help, step 5: the answer. One sentence that names the next call for the asker's side (with its
 * arguments), then at most a few short lines of the rule behind it, ≤ 700 characters unless a list is
 * asked. The situation leads (a pasted error, an open checkout, the human's limits, the asker's purchase
 * through the machine), then the question's intent (help-intent.ts), then figures (help-figures.ts);
 * retrieval ranks calls only where none of these decides. When the account disagrees with the
 * question, what it shows leads.
 */
import { errorGuide, exampleArguments, type KnowledgeSection, type NextStep } from '../../packages/knowledge';
import { CASHOUT_FEE_PERCENT, DEFAULT_DELIVERY_DAYS, DISPUTE_LOOKBACK_DAYS, GAS_PACKS, MIN_CASHOUT_GAS, MIN_PRICE_GAS, cashoutSplit, gasToUsd, saleSplit, smallestPackCovering, type MarketTerms } from '../../packages/market-rules';
import { STATES, TRANSITIONS, documentedTransitions, type Period } from '../../packages/contracts/purchase-machine';
import { argumentErrors, getTool, TOOL_NAMES } from '../../packages/tool-catalogue';
import { aGas, affirms, doneCalls, has, normalize, stem, stemmed, withoutQuotes, type Parsed, type Side } from './help-parse';
import { isMachineTool, isOpen, legalCalls, namesTitle, sideOfTool, type Grounded } from './help-ground';
import { distinctiveParts, names, type Retrieved } from './help-retrieve';
import type { Intent } from './help-intent';
import { figures } from './help-figures';
import { AFTER_DELIVERY, KEY_PLACEMENT, topicById, type Topic } from '../../packages/knowledge/topics';
import { ASKS, COMMON, OTHER_PAYOUTS } from '../../packages/knowledge/synonyms';

/** The question says one of the things ASKS lists (a purchase of its own, a fault, a list asked …). */
const says = (p: Parsed, what: keyof typeof ASKS) => ASKS[what].some((w) => has(p.text, w));

/** The question uses the tool's own word as such ("rate", "dispute"), not a form of it ("delivered"). */
/** (A part that is an everyday word on its own — "the work is fine", "the other agent" — names no call.) */
const PLAIN_PARTS = ['work', 'agent', 'services', 'send', 'help', 'update', 'delete', 'connect', 'cash', 'orders'];
const namesExactly = (text: string, tool: string) => distinctiveParts(tool).some((part) => !PLAIN_PARTS.includes(part) && has(text, part));

export const MAX_ANSWER_CHARS = 700;
export const MAX_LIST_CHARS = 1500;

export interface Composed {
  lead: string;
  lines: string[];
  nextStep: NextStep | null;
  /** Calls the situation allows (what an LLM may choose from). */
  allowed: string[];
  sources: KnowledgeSection[];
}

/** A clause as a sentence's start ("escrow auto-releases …" → "Escrow auto-releases …"). */
const sentence = (s: string) => `${s[0].toUpperCase()}${s.slice(1)}`;

/** How much of `said`'s words (four letters or more) `text` already says, 0–1. */
function overlap(said: string, text: string): number {
  const words = (x: string) => new Set(normalize(x).split(/[^a-z0-9_]+/).filter((w) => w.length >= 4));
  const told = words(text);
  const mine = [...words(said)];
  return mine.length ? mine.filter((w) => told.has(w)).length / mine.length : 1;
}

/** The question names the asker's own purchase: its id, "my order", a word of its listing's own title ("the jest tests") or its price ("my 250 gas"). */
function namesPurchase(p: Parsed, g: Grounded): boolean {
  const price = g.purchase?.priceGas ?? g.actual?.priceGas;
  return p.purchaseIds.length > 0 || says(p, 'thisPurchase') || namesTitle(p, g.purchase?.title ?? g.actual?.title) || (!!price && p.amounts.includes(price));
}

/** The call a pasted question shows first (the one that failed). */
const calledFirst = (p: Parsed): string | undefined => p.tools.filter((x) => x !== 'ask_help').sort((a, b) => p.text.indexOf(a) - p.text.indexOf(b))[0];

/** How a transition moves a purchase towards payment (settles > leads to a settling state > stays > exits). */
function progress(tool: string, state: string | null, side: Side | null = null): number {
  const ts = TRANSITIONS.filter((t) => t.tool === tool && (!state || (t.from as readonly string[]).includes(state)) && (!side || t.who.includes(side)));
  let best = 0;
  for (const t of ts) {
    const settlesNext = t.to && TRANSITIONS.some((x) => (x.from as readonly string[]).includes(t.to!) && x.moneyEvent === 'settle' && x.who.some((w) => w === 'buyer' || w === 'seller'));
    best = Math.max(best, t.moneyEvent === 'settle' ? 3 : settlesNext && t.moneyEvent !== 'void' ? 2 : t.to === null ? 1 : 0);
  }
  return best;
}

/** What the machine says comes next in a state (its `next` hint). */
const nextOf = (state: string): string => (STATES as Record<string, { next: string }>)[state]?.next ?? '';

/** The first sentences of a text, up to about `max` characters (a catalogue description's "what" and "how"). */
function firstSentences(s: string, max = 220): string {
  let out = '';
  for (const sentence of s.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+/)) {
    if (out && out.length + sentence.length > max) break;
    out = out ? `${out} ${sentence}` : sentence;
  }
  return out;
}
const firstSentence = (s: string) => firstSentences(s, 0);

/** A value the asker fills in, valid for the schema (a search takes the question's own words). */
function placeholder(k: string, spec: { min?: number; description?: string }, p: Parsed): string {
  if (k === 'q') return p.text.split(/[^a-z0-9]+/).filter((w) => w.length >= 4 && !COMMON.has(w)).slice(0, 3).join(' ') || '…';
  let out = `<${k}>`;
  if (spec.min && out.length < spec.min) out = `<${k}: ${spec.description ?? ''}>`;
  while (spec.min && out.length < spec.min) out = out.replace(/>$/, ' …>');
  return out;
}

/** The value of an enum the text names: itself, with spaces for its underscores ("Claude Code"), or a long part of it. */
const valueNamed = (values: readonly string[] | undefined, text: string) => values?.find((x) => has(text, x) || has(text, x.replace(/_/g, ' '))) ?? values?.find((x) => x.split('_').some((part) => part.length >= 5 && has(text, part)));

/** Arguments from the question and the account; an example's stock values never stand in for the asker's (an enum the question names is used, other free text is a placeholder). */
function argsFor(tool: string, g: Grounded, p: Parsed, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const params = (getTool(tool)?.params ?? {}) as Record<string, { type?: string; values?: readonly string[]; optional?: boolean }>;
  const args: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(exampleArguments(tool))) {
    const spec = params[k];
    // An enum the question names; else its catch-all ("other") rather than an example's stock value.
    // (A pack named by its gas against another named by its id — "a starter checkout, but get the bigger one (2000)" — is the one wanted.)
    const named = (k === 'packId' ? GAS_PACKS.find((x) => p.amounts.includes(x.gas) && GAS_PACKS.some((y) => y !== x && has(p.text, y.id)))?.id : undefined) ?? valueNamed(spec?.values, p.text) ?? spec?.values?.find((x) => x === 'other');
    if (named) args[k] = named;
    else if (spec?.optional) continue;
    else if (v && typeof v === 'object' && !Array.isArray(v)) args[k] = Object.fromEntries(Object.keys(v).map((f) => [f, `<${f}>`]));
    else args[k] = typeof v === 'string' && !spec?.values && !v.includes('…') ? placeholder(k, spec as { min?: number; description?: string }, p) : v;
  }
  // An optional query and price bound the question gives ("search for a python code reviewer under 300 gas").
  const wanted = /\b(?:search(?:ing)? for|look(?:ing)? for|find(?: me)?|hire)(?: an?| some| someone to| someone who| an agent to)? ((?:[a-z0-9+#.-]+ ){0,4}?[a-z0-9+#.-]+)(?= under| below| for | with| at | that| cheaper|[?.,!]| $)/.exec(p.text)?.[1];
  if ('q' in params && !('q' in args) && wanted && !/^(?:a |an |the )?(?:service|listing|seller|agent|someone|something)s?$/.test(wanted)) args.q = wanted;
  // (Never above the per-purchase limit the human set.)
  const prices = p.amounts.filter((a) => a !== p.balance);
  const cap = g.limits?.setByHuman ? g.limits.perPurchaseMaxGas : null;
  if ('maxPriceGas' in params && !('maxPriceGas' in args) && (prices.length || cap != null)) args.maxPriceGas = Math.min(prices.length ? Math.max(...prices) : Infinity, cap ?? Infinity);
  if ('purchaseId' in args && (g.purchase?.id ?? p.purchaseIds[0])) args.purchaseId = g.purchase?.id ?? p.purchaseIds[0];
  if ('listingId' in args && p.listingIds[0]) args.listingId = p.listingIds[0];
  const agent = /\bagt_\w+/.exec(p.text)?.[0];
  if (agent && 'referredBy' in (getTool(tool)?.params ?? {})) args.referredBy = agent;
  const side = g.side ?? p.side ?? (says(p, 'seller') ? 'seller' : null);
  if ('role' in (getTool(tool)?.params ?? {}) && side) args.role = side;
  const stars = /\b([1-5]) ?(?:stars?|\/ ?5|out of 5)\b/.exec(p.text);
  if ('rating' in args && stars) args.rating = Number(stars[1]);
  // A price the question names ("bump it to 200") is the one to set; the example's other fields go.
  // ("change the price to 400 and charge the extra 150": the amount said with "to" is the price.)
  const toPrice = Number(/\bto (\d[\d,]*)\b/.exec(p.text)?.[1]?.replace(/,/g, ''));
  const price = p.amounts.includes(toPrice) ? toPrice : p.amounts[p.amounts.length - 1];
  if ('priceGas' in (getTool(tool)?.params ?? {}) && p.amounts.length && !('purchaseId' in args) && price >= ((params.priceGas as { min?: number }).min ?? 0)) {
    args.priceGas = price;
    delete args.status;
  }
  return { ...args, ...overrides };
}

/** A call as the lead names it: long example values are shortened (the full arguments are in nextStep). */
function call(step: NextStep): string {
  const args = Object.fromEntries(Object.entries(step.arguments).map(([k, v]) => [k, typeof v === 'string' && v.length > 40 ? '…' : v]));
  return `${step.tool} ${JSON.stringify(args)}`;
}

/** A number argument's bounds in the catalogue's schema (rate_purchase's rating: 1 and 5), when it has both. */
function boundsOf(tool: string, field: string): { min: number; max: number } | null {
  const spec = ((getTool(tool)?.params ?? {}) as Record<string, { type?: string; min?: number; max?: number }>)[field];
  return spec?.type === 'number' && spec.min !== undefined && spec.max !== undefined ? { min: spec.min, max: spec.max } : null;
}

/** A call whose numbers the asker picks (an example's value it did not state) named by their bounds: rate_purchase {"purchaseId":"pur_x","rating":1–5}. */
function withBounds(tool: string, args: Record<string, unknown>): string {
  const example = exampleArguments(tool);
  const shown = Object.fromEntries(Object.entries(args).map(([k, v]) => {
    const b = v === example[k] ? boundsOf(tool, k) : null;
    return [k, b ? `${b.min}–${b.max}` : v];
  }));
  return call({ tool, arguments: shown }).replace(/"(\d+–\d+)"/g, '$1');
}

/** The best sentences of the retrieved sections for the question (not repeating the lead), a few. */
function ruleLines(r: Retrieved, lead: string, tool: string | null, max: number): { lines: string[]; used: KnowledgeSection[] } {
  const words = new Set(r.query.split(/[^a-z0-9_]+/).filter((w) => w.length >= 3 && !COMMON.has(w)));
  const scored: Array<{ s: string; score: number; sec: KnowledgeSection }> = [];
  for (const [i, h] of r.hits.slice(0, 4).entries()) {
    for (const s of h.section.body.split(/\n+|(?<=[.!?])\s+(?=[A-Z])/)) {
      let line = s.replace(/^[-\d.]+\s*/, '').replace(/^(Next step|Cause): /, '').trim();
      if (line.length > 330) line = line.split(/(?<=[.;])\s/)[0];
      if (line.length < 25 || line.length > 330 || line.startsWith('`') || line.includes('{"') || line.includes('":') || line.includes('}}') || line.startsWith('Example call') || line.startsWith('Arguments') || lead.includes(line)) continue;
      const lw = line.toLowerCase();
      let score = 0;
      for (const w of words) if (lw.includes(w)) score += 1;
      if (tool && lw.includes(tool)) score += 1.5;
      score -= i * 0.7;
      if (score >= 1) scored.push({ s: line, score, sec: h.section });
    }
  }
  const chosen = scored.sort((a, b) => b.score - a.score).slice(0, max);
  return { lines: chosen.map((c) => c.s), used: [...new Set(chosen.map((c) => c.sec))] };
}

/** The lead for a pasted error: its guide, with the account's facts where they decide. */
/** What the catalogue's own check says of the arguments a question quotes (only those it quotes: a missing one may simply not be shown). */
function quotedArgumentErrors(tool: string, args: Record<string, unknown>): string[] {
  const def = getTool(tool);
  if (!def) return [];
  const params = def.params as Record<string, unknown>;
  // (A name the call does not take is named only beside one it does: otherwise the pairs quoted are not its arguments.)
  const unknown = Object.keys(args).some((k) => k in params) ? Object.keys(args).filter((k) => !(k in params)).map((k) => `“${k}” is not an argument of ${tool} (its arguments: ${Object.keys(params).join(', ')}).`) : [];
  const errors = argumentErrors(def, { ...args }, Object.keys(args));
  // (With the field's own bounds from the schema: "an integer" says more as "an integer from 1 to 5".)
  const bounds = (field: string) => {
    const b = boundsOf(tool, field);
    return b ? ` (${field} is ${b.min} to ${b.max}.)` : '';
  };
  return [...errors.map((r) => `${r.message}${['number', 'boolean'].includes(r.type ?? '') && typeof args[r.field] === 'string' ? ` (you sent ${JSON.stringify(args[r.field])}, a string)` : /\d/.test(r.message) ? '' : bounds(r.field)}`), ...unknown];
}

/**
 * A purchase call whose answer never came (a 500, a timeout) may have gone through: its state says so before any retry.
 * (A call that creates the purchase has no id to look up yet: the newest order shows whether it went through.)
 */
function wentThrough(tool: string, id = 'pur_…'): { check: string; step: NextStep } {
  const creates = !('purchaseId' in (getTool(tool)?.params ?? {}));
  const step = creates ? { tool: 'list_orders', arguments: { role: 'buyer' } } : { tool: 'get_purchase', arguments: { purchaseId: id } };
  return { step, check: `First check with ${creates ? 'list_orders {"role":"buyer"}' : 'get_purchase'} whether ${tool} went through (${creates ? 'a new purchase there means it did, its price held in escrow' : 'the state shows it'}); if not, retry it with the same Idempotency-Key` };
}

function forError(p: Parsed, g: Grounded, terms: MarketTerms): { step: NextStep | null; lead: string; lines: string[] } | null {
  const e = p.error!;
  const guide = errorGuide(e.code);
  if (!guide) return null;
  const got = e.requestId && e.message ? `Your request ${e.requestId} failed with HTTP ${guide.status} ${e.code}: ${e.message}` : null;
  const withGot = <T extends { lines: string[] } | null>(x: T): T => (x && got ? { ...x, lines: [got, ...x.lines] } : x);
  const led = withGot(errorLead(p, g, e, guide, terms));
  // "Is it a bug?" of a refusal (4xx): no — the service applied its rules.
  return led && guide.status < 500 && /\b(?:is (?:it|this|that) a bug|a bug or)\b/.test(p.text) ? { ...led, lead: `Not a bug: a ${guide.status} ${e.code} is the service refusing the call by its rules. ${led.lead}` } : led;
}

function errorLead(p: Parsed, g: Grounded, e: NonNullable<Parsed['error']>, guide: NonNullable<ReturnType<typeof errorGuide>>, terms: MarketTerms): { step: NextStep | null; lead: string; lines: string[] } | null {
  const d = e.details;
  /** The pasted message's own words (a code of another client's keeps its words here). */
  const told = normalize(e.message ?? '');
  if (e.code === 'insufficient_gas') {
    const short = Number(d.shortfallGas ?? (Number(d.requiredGas) - Number(d.balanceGas)));
    // (The price the refusal or the question states, when the shortfall is not given.)
    const price = Number(d.required ?? d.priceGas) || Math.max(0, ...(e.message?.match(/\d+/g) ?? []).map(Number)) || p.amounts[0];
    const pack = smallestPackCovering(Number.isFinite(short) && short > 0 ? short : (price ?? 1));
    if (g.checkouts.length) return openCheckout(g);
    const step = { tool: 'buy_gas', arguments: { packId: pack.id } };
    return { step, lead: `Buy gas: call ${call(step)} (${Number.isFinite(short) && short > 0 ? `${pack.gas} gas covers the shortfall of ${short}` : price ? `${pack.gas} gas covers it` : `${pack.gas} gas; a larger pack if the listing costs more`}), have your human approve the checkoutUrl, poll wallet until gasBalance rises, then call purchase_service again.`, lines: ['Nothing was held or charged by the refused purchase.'] };
  }
  // A refused key: where the pasted call put it says what to change (a lost key is another question).
  if (e.code === 'unauthorized' && !says(p, 'lostKey')) {
    const placed = KEY_PLACEMENT.find((k) => k.clues.some((c) => p.text.includes(c)));
    if (placed) return { step: null, lead: placed.text, lines: [firstSentence(guide.cause)] };
  }
  // A refused listing the question quotes: the gate's own verdict on it answers (figures).
  if ((e.code === 'listing_rejected' || e.code === 'invalid_arguments') && p.draft) return null;
  // Moderation's verdict is on the offer itself: no rewording passes it (the quality gate's hints are for another refusal).
  if (e.code === 'listing_rejected' && (d.moderation || ['moderation', 'moderated'].some((w) => has(p.text, w) || has(told, w)))) {
    const looks = /when it looks like ([^.]+)\./.exec(guide.cause)?.[1];
    return { step: null, lead: `Do not resubmit it reworded: a moderation verdict is about the offer itself${looks ? ` — moderation refuses what looks like ${looks}` : ''}. Only a real service passes: list_service with a concrete deliverable and what the buyer sends.`, lines: [] };
  }
  const rule = typeof d.rule === 'string' ? d.rule : null;
  if (e.code === 'forbidden' && (rule || ['limit', 'budget', 'human', 'owner', 'maximum', 'per_purchase_max', 'daily_budget', 'weekly_budget', 'category_not_allowed'].some((w) => has(p.text, w) || has(told, w)))) return spendingLimit(g, rule, p, terms);
  if ((e.code === 'invalid_state' || e.code === 'forbidden') && g.purchase) return null; // the purchase's own calls answer it
  const failed = calledFirst(p);
  // A gas purchase refused or failed while another checkout is open: that one still works.
  if (failed === 'buy_gas' && g.checkouts.length && e.code !== 'unauthorized') {
    const open = openCheckout(g);
    return { ...open, lines: e.code === 'internal' ? [`If you still need another, retry buy_gas once with the same Idempotency-Key; if it fails again, report_bug with requestId ${e.requestId ?? 'req_…'}.`] : open.lines };
  }
  // A refusal of a call outside the purchase machine (request_cashout …): that call's own rules answer it.
  if ((e.code === 'invalid_state' || e.code === 'forbidden') && failed && !isMachineTool(failed)) return null;
  if (e.code === 'internal') {
    const step = { tool: 'report_bug', arguments: { title: 'A call answered 500 internal', description: 'Describe the call and what happened.', context: { requestId: e.requestId ?? 'req_…', ...(failed ? { toolName: failed } : {}) } } };
    const check = failed && isMachineTool(failed) ? wentThrough(failed).check : 'Retry once with the same Idempotency-Key';
    // Retried already ("tried twice", "keeps failing") on a call that moves nothing: the report is the step now.
    // (Or the report itself is asked: "how do I report this?")
    const retried = /\b(?:retried|tried (?:it )?(?:again|twice|\d+ times|three times)|twice|in a row|keeps? (?:failing|happening|returning)|still (?:failing|fails)|same (?:error|thing|result)(?: again)?|how (?:do|can|should) i report|report (?:this|it))\b/.test(p.text);
    // (A call that only reads changed nothing: a plain retry, and what the question fears — an open checkout — is where it was.)
    const reads = !!failed && getTool(failed)?.effect === 'reads';
    const open = reads && g.checkouts[0] ? ` Your checkout ${g.checkouts[0].sessionId} is untouched and still open: the gas arrives when your human approves it at ${g.checkouts[0].checkoutUrl}.` : '';
    if (retried && !(failed && isMachineTool(failed))) return { step, lead: `Report it now: call ${call(step)} — the requestId lets the operator trace it.${open}`, lines: ['No partial money movement is left behind: gas moves are all-or-nothing.'] };
    if (reads) return { step, lead: `${failed} only reads, so nothing was lost or changed: retry it once; if it fails again, call ${call(step)}.${open}`, lines: [] };
    return { step, lead: `${check}; if it fails again, call ${call(step)}.`, lines: ['No partial money movement is left behind: gas moves are all-or-nothing.'] };
  }
  // A price that rose above the buyer's bound: the current price is the decision (nothing was held).
  if (e.code === 'invalid_state' && Number(d.priceGas) > 0 && failed === 'purchase_service') {
    const step = { tool: 'purchase_service', arguments: { listingId: p.listingIds[0] ?? 'lst_…', maxPriceGas: Number(d.priceGas) } };
    return { step, lead: `The listing now costs ${d.priceGas} gas, above your maxPriceGas, so nothing was held: if you accept the new price, call ${call(step)} again; otherwise search_services for another.`, lines: [] };
  }
  // "unknown tool" for a tool this marketplace has: the call went to the wrong address or door.
  // A catalogue name written another way ("deliver-work", "deliverWork"): the exact name is the fix.
  const spelled = e.code === 'unknown_tool' && !failed ? TOOL_NAMES.find((t) => t.includes('_') && new RegExp(`\\b${t.split('_').join('[-. ]?')}\\b`).test(p.text)) : undefined;
  if (spelled) return { step: null, lead: `The tool is named ${spelled}, exactly so (lowercase, with an underscore): POST <base>/api/agent {"tool":"${spelled}","arguments":{…}}; GET /api/agent lists every name.`, lines: [] };
  // Nothing delivered yet on the asker's own purchase ("No delivery for this purchase"): the purchase's wait answers, not another id.
  if (e.code === 'not_found' && g.purchase?.inAccount && !p.purchaseIds.some((id) => id !== g.purchase!.id) && has(told, 'delivery') && !AFTER_DELIVERY.includes(g.purchase.state)) {
    const w = whileWaiting(p, g, terms, g.purchase, g.purchase.side);
    return { ...w, lead: `Nothing is delivered yet: ${g.purchase.id} is ${g.purchase.state}, so get_delivery has nothing to read until the seller calls deliver_work. ${w.lead}` };
  }
  // An id of a purchase the key cannot see: the asker's own purchases, listed, give the right one.
  if (e.code === 'not_found' && (p.purchaseIds.length || (failed && 'purchaseId' in (getTool(failed)?.params ?? {})))) {
    const side = g.side ?? (failed ? sideOfTool(failed) : null);
    const step = { tool: 'list_orders', arguments: side ? { role: side } : {} };
    const mine = (g.account?.purchases ?? []).filter((x) => !side || x.role === side);
    const shown = mine.length ? ` — your account shows ${mine.slice(0, 3).map((x) => `${x.id} (${x.status})`).join(', ')}` : '';
    return { step, lead: `That id names no purchase your key can see: call ${call(step)} to get the right pur_… id${shown}, then call ${failed ?? 'it'} again with it.`, lines: ['Purchases are visible only to their buyer and seller, each with its own key.'] };
  }
  // A name the catalogue does not have ("rate_seller"): the catalogue's tool its own word names (rate_purchase).
  const guessed = e.code === 'unknown_tool' && !failed ? [...p.text.matchAll(/\b[a-z]+(?:_[a-z]+)+\b/g)].map((m) => m[0]).filter((w) => !TOOL_NAMES.includes(w)).flatMap((w) => TOOL_NAMES.filter((t) => !getTool(t)?.aliasOf && distinctiveParts(t).some((part) => w.split('_').includes(part))).map((t) => ({ w, t })))[0] : undefined;
  if (guessed) {
    const step = { tool: guessed.t, arguments: argsFor(guessed.t, g, p) };
    return { step, lead: `There is no tool ${guessed.w}: the call is ${call(step)} — ${firstSentence(getTool(guessed.t)?.description ?? '').replace(/^(Buyer|Seller)[^:]*:\s*/, '')}`, lines: ['GET /api/agent lists every tool and its arguments.'] };
  }
  if (e.code === 'unknown_tool' && failed) {
    return { step: null, lead: `${failed} is a tool of this marketplace: send POST <base>/api/agent {"tool":"${failed}","arguments":{…}} to this marketplace's own address (GET /api/agent lists its tools), or call it over /mcp with the same key.`, lines: [] };
  }
  // An argument with a fixed set of values the message names: the values are the fix.
  const param = e.code === 'invalid_arguments' && p.tools[0] ? Object.entries((getTool(p.tools[0])?.params ?? {}) as Record<string, { values?: readonly string[] }>).find(([k, v]) => v.values && has(told, k.toLowerCase())) : undefined;
  if (param) {
    const step = { tool: p.tools[0], arguments: { ...exampleArguments(p.tools[0]), [param[0]]: valueNamed(param[1].values, p.text) ?? (param[1].values!.includes('other') ? 'other' : param[1].values![0]) } };
    return { step, lead: `${param[0]} must be one of ${param[1].values!.join(', ')}: call ${call(step)} again with one of them.`, lines: [] };
  }
  // The call's own arguments as the question quotes them ('"priceGas": "9.5"'): checked against the catalogue's schema, each violation named.
  const checked = ['invalid_arguments', 'listing_rejected'].includes(e.code) && p.tools[0] && p.quotedArgs ? quotedArgumentErrors(p.tools[0], p.quotedArgs) : [];
  if (checked.length) {
    const early = g.purchase?.inAccount && isMachineTool(p.tools[0]) && !g.purchase.legal.includes(p.tools[0]) ? [`${p.tools[0]} is not possible yet on ${g.purchase.id} (${g.purchase.state}). ${nextOf(g.purchase.state)}`] : [];
    return { step: null, lead: `${p.tools[0]} refuses it: ${checked.join(' ')} Fix ${checked.length > 1 ? 'them' : 'it'} and call ${p.tools[0]} again — the refused call created and changed nothing.`, lines: early };
  }
  // A message that names an argument of the call ("priceGas must be at least 10"): that argument is the fix.
  const named = e.message && p.tools[0] ? Object.keys(getTool(p.tools[0])?.params ?? {}).find((k) => has(told, k.toLowerCase())) : undefined;
  if (named && e.code !== 'unauthorized') {
    // (A purchase call its state does not allow yet fails again once fixed: the call that gets there comes first.)
    const early = g.purchase?.inAccount && isMachineTool(p.tools[0]) && !g.purchase.legal.includes(p.tools[0]) ? `${p.tools[0]} is not possible yet on ${g.purchase.id} (${g.purchase.state}). ${nextOf(g.purchase.state)}` : null;
    return { step: null, lead: `${e.code} “${e.message}”: fix ${named} as it says and call ${p.tools[0]} again — the refused call created and changed nothing.`, lines: [...(early ? [early] : []), firstSentence(guide.cause)] };
  }
  // (The guide's register is for a lost key only: registering again makes a new agent with an empty wallet.)
  const tool = guide.nextStep.tool === 'register' && !says(p, 'lostKey') ? null : guide.nextStep.tool === 'ask_help' ? (p.tools[0] ?? null) : guide.nextStep.tool;
  // (The asker's own values, or placeholders: a guide's example listing never stands in for the asker's.)
  const step = tool ? { tool, arguments: argsFor(tool, g, p) } : null;
  const said = e.message && !e.message.includes('…') && !e.message.includes('...') ? ` “${e.message.slice(0, 160)}”` : '';
  return { step, lead: `${e.code} (HTTP ${guide.status})${said}: ${guide.nextStepText}`, lines: [firstSentence(guide.cause)] };
}

/**
 * The prices a question states besides the balance (the wallet's or the one it believes) and the human's own cap:
 * never an amount below the minimum price ("1 gas in $"), nor a limit's value ("raise my limit to 1000").
 */
const statedPrices = (g: Grounded, p: Parsed) => {
  const limitValues = [...p.text.matchAll(/\b(?:limit|cap|budget)s?(?: [a-z-]+)? (?:to|of|at) (\d[\d,]*)/g)].map((m) => Number(m[1].replace(/,/g, '')));
  return p.amounts.filter((a) => a >= MIN_PRICE_GAS && !limitValues.includes(a) && a !== g.wallet?.gasBalance && a !== p.balance && a !== g.limits?.perPurchaseMaxGas);
};

/** The human's limits as the answer: asked how to see them ("how can I check how much I may still spend?"), wallet leads with what it shows. */
function spendingLimit(g: Grounded, rule: string | null, p: Parsed, terms: MarketTerms): Picked {
  const r = limitsAnswer(g, rule, p, terms);
  // "Can I buy it in three pieces?" asked plainly: a listing is bought whole, at its price (a plan to get around the limit is declined before this).
  // (Only with the pieces' own figure stated, "three chunks of 400": without one, the limit's answer says it already.)
  const max = g.limits?.perPurchaseMaxGas;
  const stated = statedPrices(g, p);
  const whole = max != null && /\b(?:chunks?|pieces?|parts?|split|splitting|installments?|instalments?|halves|bit by bit)\b/.test(p.text) && stated.some((a) => a <= max) ? stated.find((a) => a > max) : undefined;
  if (whole) return { step: { tool: 'wallet', arguments: {} }, lead: `No: a listing is bought whole, at its price, in one purchase_service — ${whole} gas is over your human's per-purchase limit of ${g.limits!.perPurchaseMaxGas} gas however it is split, and only your human can raise the limit (on their owner page); or buy a listing within it.`, lines: ['wallet {} shows spendingLimits.'] };
  if (rule || !/\b(?:how|where)\b.*\b(?:see|check|view|find out|look up|know)\b/.test(p.text) || r.lead.includes('wallet {} shows')) return r;
  return { step: { tool: 'wallet', arguments: {} }, lead: `Call wallet {}: its spendingLimits show what your human allows (per purchase, per day and week, with what is left) — only your human can change them. ${r.lead}`, lines: r.lines };
}

function limitsAnswer(g: Grounded, rule: string | null, p: Parsed, terms: MarketTerms): Picked {
  const l = g.limits;
  // A price the question states within the per-purchase limit: the limit is no obstacle, buy.
  const prices = statedPrices(g, p);
  const price = prices.find((a) => l?.perPurchaseMaxGas != null && a <= l.perPurchaseMaxGas);
  // Several prices: which fit under the limit, what is left, what each seller nets.
  if (!rule && prices.length >= 2 && l?.setByHuman && l.perPurchaseMaxGas != null) {
    const fit = prices.filter((a) => a <= l.perPurchaseMaxGas!);
    const over = prices.filter((a) => a > l.perPurchaseMaxGas!);
    const total = fit.reduce((a, b) => a + b, 0);
    const left = g.wallet ? `; ${g.wallet.gasBalance - total} of your ${g.wallet.gasBalance} gas left` : '';
    const nets = fit.map((a) => `${a} → ${saleSplit(a, terms.platformFeePercent).sellerNetGas}`).join(', ');
    return { step: fit.length ? { tool: 'purchase_service', arguments: { listingId: 'lst_…', maxPriceGas: fit[0] } } : null, lead: `Under your human's per-purchase limit of ${l.perPurchaseMaxGas} gas you can buy ${fit.length ? `${fit.join(' and ')} (${total} gas in all${left})` : 'none of them'}${over.length ? `; ${over.join(' and ')} ${over.length > 1 ? 'are' : 'is'} over it — only your human can raise the limit` : ''}.`, lines: fit.length ? [`The sellers net (after the ${terms.platformFeePercent}% fee): ${nets}.`] : [] };
  }
  // "The most expensive listing I can buy?": the limit or the balance, whichever is lower, and what its seller nets.
  const top = !rule && l?.setByHuman && l.perPurchaseMaxGas != null && ['most expensive', 'priciest', 'most i can', 'max i can', 'maximum i can', 'highest i can'].some((w) => has(p.text, w)) ? Math.min(l.perPurchaseMaxGas, g.wallet?.gasBalance ?? Infinity) : null;
  if (top) return { step: { tool: 'purchase_service', arguments: { listingId: 'lst_…', maxPriceGas: top } }, lead: `${top} gas is the most one purchase may cost you (your human's per-purchase limit ${l!.perPurchaseMaxGas} gas; your balance ${g.wallet?.gasBalance ?? '?'}): ${aGas(top)} listing nets its seller ${saleSplit(top, terms.platformFeePercent).sellerNetGas} gas, the platform keeps ${saleSplit(top, terms.platformFeePercent).platformFeeGas}.`, lines: [] };
  if (!rule && price && l?.setByHuman) {
    const buy = { tool: 'purchase_service', arguments: { listingId: 'lst_…', maxPriceGas: price } };
    // ("three listings at 400 each": each within the limit; the balance pays for all of them.)
    const n = Number(/(\d+) (?:different |separate )?(?:listings|purchases|jobs|services) at/.exec(p.text)?.[1] ?? 1);
    return { step: buy, lead: `${price} gas is within your human's per-purchase limit of ${l.perPurchaseMaxGas} gas${g.wallet && g.wallet.gasBalance >= n * price ? ` and your balance (${g.wallet.gasBalance} gas; ${g.wallet.gasBalance - n * price} left after ${n > 1 ? `${n} purchases, ${n * price} in all` : 'it'})` : ''}: call ${call(buy)} — the price is held in escrow until you confirm the delivery.`, lines: ['Not delivered by the listing\'s deliveryDays → refunded automatically; request_refund or dispute_purchase before that.'] };
  }
  const parts: string[] = [];
  if (l?.setByHuman) {
    if (l.perPurchaseMaxGas !== null) parts.push(`at most ${l.perPurchaseMaxGas} gas per purchase`);
    if (l.remainingTodayGas !== null) parts.push(`${l.remainingTodayGas} gas left today`);
    if (l.remainingThisWeekGas !== null) parts.push(`${l.remainingThisWeekGas} gas left this week`);
    if (l.allowedCategories) parts.push(`categories ${l.allowedCategories.join(', ')}`);
  }
  const step = { tool: 'wallet', arguments: {} };
  // (A refusal the question tells of, or a purchase it plans over the limit.)
  const over = prices.find((a) => l?.perPurchaseMaxGas != null && a > l.perPurchaseMaxGas);
  const refused = rule || p.error || ['refused', 'rejected', 'failed', 'fails', 'denied', 'blocked', "won't let", 'forbidden', '403'].some((w) => has(p.text, w));
  // (A price over the per-purchase limit is named, refused already or planned; a refusal of another rule is the limit's too.)
  const lead = over && !rule
    ? `${aGas(over, true)} purchase is over your human's spending limit of ${l!.perPurchaseMaxGas} gas per purchase, so it would be refused whatever your balance: ask your human to raise the limit (only they can, on their owner page) or buy within it.`
    : refused
    ? `That refusal is your human's spending limit${rule ? ` (${rule})` : ''}, not your balance: read spendingLimits with wallet {} and buy within it, or ask your human to change it — only they can.`
    : `Your human's spending limits decide it, not only your balance${parts.length ? `: ${parts.join('; ')}` : ''} — wallet {} shows spendingLimits; only your human can change them, on their owner page.`;
  const shown = parts.length ? `Your account shows limits: ${parts.join('; ')}.` : 'A purchase over a limit answers 403 forbidden with error.details.rule and remainingGas; nothing is held.';
  return { step, lead, lines: [...(parts.length && lead.includes(parts[0]) ? [] : [shown]), 'Gas in your wallet does not lift a limit, and splitting a purchase does not get around it.'] };
}

/** The human's payment did not go through: declined, the page closed, cancelled. */
const unfinishedPayment = (p: Parsed) => /\b(?:declined|card (?:was )?(?:refused|rejected|failed)|payment (?:failed|didn't go through|did not go through)|closed|cancel+ed|didn't finish|did not finish|never finished|before (?:they|he|she) (?:could )?finish(?:ed)?)\b/.test(p.text);

function openCheckout(g: Grounded, p: Parsed | null = null) {
  const c = g.checkouts[0];
  const step = { tool: 'get_checkout', arguments: { sessionId: c.sessionId } };
  const lead = `Your checkout ${c.sessionId} for ${c.gas} gas is still open — not approved yet: have your human approve it at ${c.checkoutUrl}, then poll wallet until gasBalance rises (get_checkout ${JSON.stringify(step.arguments)} shows it again).`;
  const lines = [`It expires at ${c.expiresAt.slice(0, 16).replace('T', ' ')} UTC; an unapproved checkout costs nothing. Start another with buy_gas only if you need more gas.`];
  // The asker paying it itself ("can't I complete the payment myself?"): no — the card and the approval are the human's.
  if (p && /\b(?:myself|by myself|on my own|i (?:could|can|should) (?:just )?(?:pay|approve|complete|enter))\b|\b(?:complete|approve|verify|finish|enter|do)\b[^.?!]{0,25}\bfor (?:him|her|them|my human|my owner)\b/.test(p.text)) return { step, lead: `No: only your human enters the card and approves a checkout — never you. ${lead}`, lines };
  // A payment the human did not finish (declined, closed, cancelled): nothing was charged, and the same checkout still takes it.
  if (p && unfinishedPayment(p)) {
    return { step, lead: `Nothing was charged and ${c.sessionId} (${c.gas} gas) is still open: have your human open ${c.checkoutUrl} again and complete it${/declined|refused|rejected|failed/.test(p.text) ? ' with another card' : ''} — no need to call buy_gas again (two approved checkouts buy twice).`, lines };
  }
  // The human says it paid while the checkout is still open: that payment did not complete here; a charge without gas is a fault to report.
  if (p && /\b(?:says?|said|swears?|claims?|told me)(?: that)?(?: (?:they|he|she))?(?: already)? (?:paid|approved)\b|\b(?:human|owner) (?:already )?(?:paid|approved)\b/.test(p.text)) {
    const report = { tool: 'report_bug', arguments: { title: 'Checkout paid but still open', description: `My human says checkout ${c.sessionId} was paid; it is still open and no gas arrived.`, context: { toolName: 'buy_gas' } } };
    return { step, lead: `${c.sessionId} still shows open, not approved, so no payment has reached it: have your human open ${c.checkoutUrl} and approve it there; if they were charged and it stays open, call ${call(report)}.`, lines };
  }
  return { step, lead, lines };
}

/** A purchase whose next move is not the asker's (the other party's, a timer's, an operator's — read from the machine's transitions out of its state): what the money does meanwhile and who moves next lead, with the one call the asker has while it waits (a message to the other party) and the calls that leave the purchase. */
function whileWaiting(p: Parsed, g: Grounded, terms: MarketTerms, f: NonNullable<Grounded['purchase']>, side: Side | null): Picked {
  const out = TRANSITIONS.filter((t) => (t.from as readonly string[]).includes(f.state));
  const timer = out.find((t) => t.who.includes('sweeper') && t.moneyEvent);
  const other = side === 'seller' ? 'buyer' : 'seller';
  const theirs = out.find((t) => t.who.includes(other) && t.moneyEvent === 'settle');
  const id = f.id ?? 'your purchase';
  const held = f.priceGas ? `its ${f.priceGas} gas stay` : 'the price stays';
  const net = f.priceGas ? `${saleSplit(f.priceGas, terms.platformFeePercent).sellerNetGas} gas (${f.priceGas} less the ${terms.platformFeePercent}% platform fee)` : `${100 - terms.platformFeePercent}% of the price`;
  const step = { tool: 'send_message', arguments: argsFor('send_message', g, p) };
  // The calls that leave the purchase, for the side that waits for its work (a seller waiting to be paid has none to take).
  const exits = (side === 'seller' ? [] : f.legal).flatMap((tool) => {
    const doc = documentedTransitions(terms).find((t) => t.trigger === tool && (!side || t.who.includes(side)) && t.from.includes(f.state));
    return doc ? [`If it does not move: ${tool} {"purchaseId":"${id}"} (${f.state} → ${doc.to}).`] : [];
  });
  // The seller is paid without acting / an operator decides / the other party moves next.
  const lead =
    side === 'seller' && (timer?.moneyEvent === 'settle' || theirs)
      ? `Nothing is required of you: ${id} is ${f.state}, and you are paid ${net} when the buyer calls ${theirs?.tool ?? 'confirm_delivery'}${timer?.moneyEvent === 'settle' ? ', or automatically when auto-release runs if they do nothing' : ''}; to nudge the buyer, call ${call(step)}.`
      : !timer && out.some((t) => t.who.includes('operator'))
        ? `Give your side of it to the ${other} and the operator with ${call(step)}: ${id} is ${f.state}, so ${held} frozen in escrow — no auto-release, no payout, no refund — until an operator decides (a refund to the buyer or a release to the seller)${f.legal.length ? '' : '; no call of yours ends or withdraws it, and no timer runs'}; follow it with get_purchase.`
        : `Ask the ${other} with ${call(step)}: ${id} is ${f.state} and ${held} held in escrow — ${side === 'buyer' ? 'the seller is not paid until you confirm the delivery' : 'you are paid once the buyer confirms'}.`;
  // What an open dispute does to the asker, asked ("will it hurt me?"): only a seller's cash-out turns on it.
  const costs = !timer && says(p, 'consequence') ? [side === 'seller' ? `While it is open your cash-out is paused; a dispute you lose as the seller blocks cash-out for ${DISPUTE_LOOKBACK_DAYS} days, one you win does not.` : 'A dispute as the buyer never blocks your own cash-out.'] : [];
  return { step, lead, lines: [...costs, ...f.deadlines.map((d) => `${sentence(d)}.`), ...exits] };
}

/** The lead call for a purchase the question is about: the best-ranked call this side may make now. */
function forPurchase(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms, topic: Topic | null): { step: NextStep | null; lead: string; lines: string[] } {
  const f = g.purchase!;
  const side: Side | null = f.side;
  // A call the asker says it made already is not the next one.
  const done = [...doneCalls(p), ...(ASKS.readAlready.some((w) => affirms(p.text, w)) ? ['get_delivery'] : [])];
  const score = new Map(r.tools.map((t) => [t.tool, done.includes(t.tool) ? 0 : t.score]));
  // The intent's call counts most: it is what the question asks about (unless the asker says it made it).
  if (topic?.tool && !done.includes(topic.tool)) score.set(topic.tool, (score.get(topic.tool) ?? 0) + 2);
  const candidates = new Set<string>(f.legal);
  if (topic?.tool && 'purchaseId' in (getTool(topic.tool)?.params ?? {}) && (!isMachineTool(topic.tool) || f.legal.includes(topic.tool)) && (!side || !sideOfTool(topic.tool) || sideOfTool(topic.tool) === side)) candidates.add(topic.tool);
  // Besides the machine's calls: the catalogue's other calls on a purchase (they take a purchaseId), for this side (a delivery is read only once there is one).
  for (const t of r.tools) if (!isMachineTool(t.tool) && t.score >= 0.3 && 'purchaseId' in (getTool(t.tool)?.params ?? {}) && (!side || !sideOfTool(t.tool) || sideOfTool(t.tool) === side) && (t.tool !== 'get_delivery' || AFTER_DELIVERY.includes(f.state))) candidates.add(t.tool);
  // A delivered purchase's buyer reads the work before confirming it.
  if (side === 'buyer' && TRANSITIONS.some((t) => t.trigger === 'deliver' && t.to === f.state)) candidates.add('get_delivery');
  // The intent's call decides; the state's usual next call leads for "what now?" without one, when nothing else ranks, or after an explanation the intent gives ("when am I paid?").
  const explain = topic && !topic.tool && topic.purchase ? topic.lead : null;
  const whatNow = !!explain || !(topic?.tool && candidates.has(topic.tool)) && (says(p, 'next') || !r.tools.some((t) => candidates.has(t.tool) && t.score >= 0.3));
  // The intent's call is not possible yet: the call this side makes now that leads to a state where it is (rate needs completed → confirm).
  const wanted = topic?.tool && isMachineTool(topic.tool) && !f.legal.includes(topic.tool) ? topic.tool : null;
  const toward = wanted && TRANSITIONS.find((t) => f.legal.includes(t.tool) && (t.from as readonly string[]).includes(f.state) && (!side || t.who.includes(side)) && t.to && TRANSITIONS.some((x) => x.tool === wanted && (x.from as readonly string[]).includes(t.to!)))?.tool;
  if (toward) score.set(toward, (score.get(toward) ?? 0) + 2);
  const ranked = [...candidates]
    .map((tool) => ({ tool, s: (score.get(tool) ?? 0) * (f.legal.includes(tool) || !isMachineTool(tool) ? 1 : 0.8) + (whatNow ? 0.5 * progress(tool, f.state, side) : 0) + (has(p.text, tool) && !done.includes(tool) ? 0.5 : 0) }))
    .sort((a, b) => b.s - a.s);
  const who = side ? `you are the ${side}` : 'your side';
  const id = f.id ?? 'your purchase';
  const lines: string[] = [];
  // (Not a call that brought the purchase here: "my dispute" on a disputed purchase asks about it, not to dispute again.)
  const asked = r.tools.find((t) => isMachineTool(t.tool) && !f.legal.includes(t.tool) && !TRANSITIONS.some((x) => x.tool === t.tool && x.to === f.state) && (p.tools.includes(t.tool) || namesExactly(p.text, t.tool)));
  // A call the question pasted a refusal of (its state or role) is not the next step again; a wrong id, a 5xx or a timeout is fixed and retried.
  const serverSide = (p.error?.status ?? 0) >= 500 || (!p.error && /\b5\d\d\b|timeout|timed out|unavailable/.test(p.text));
  const refused = p.pasted && !serverSide && (!p.error || ['invalid_state', 'forbidden'].includes(p.error.code)) ? calledFirst(p) : undefined;

  // An exit (refund, dispute: a call that moves the purchase away from payment) leads only when the question names it (or its intent is it) as the asker's own
  // ("the buyer opens a dispute" is the other party's move); with no other call, the asker reads where the purchase stands.
  // ("The buyer wants a refund" asks the asker to grant it: its own call.)
  const theirs = (tool: string) => new RegExp(`\\b(?:${side === 'seller' ? 'buyer' : 'seller'}|they|the other (?:party|side))\\b(?: (?!wants?\\b|asks?\\b|asked\\b|asking\\b|requests?\\b|requested\\b)[a-z']+){0,2} (?:${distinctiveParts(tool).join('|') || tool})`).test(p.text);
  const exitNotAsked = (tool: string) => isMachineTool(tool) && progress(tool, f.state, side) === 0 && ((!names(r.query, tool) && topic?.tool !== tool) || theirs(tool));
  const best = ranked.find((x) => !exitNotAsked(x.tool) && x.tool !== refused) ?? (ranked.length ? { tool: 'get_purchase', s: 0 } : undefined);
  if (asked && (!best || best.tool !== asked.tool)) {
    const whose = sideOfTool(asked.tool);
    lines.push(`${asked.tool} is not possible now: ${whose && side && whose !== side ? `only the ${whose} calls it` : `${id} is ${f.state}`}.`);
  }
  const stateLine = `${id}${f.title ? ` (“${f.title}”` + (f.priceGas ? `, ${f.priceGas} gas)` : ')') : ''} is ${f.state}; ${who}${!whatNow ? '' : f.legal.length ? ` and may call ${f.legal.join(', ')}` : ' and no call can change it now'}.`;
  // (A purchase only the question tells of is not stated back as if the account showed it.)
  lines.push(...(f.inAccount ? [stateLine] : []), ...f.deadlines.map((d) => `${sentence(d)}.`));
  const next = nextOf(f.state);
  const final = !isOpen(f.state);
  // "What are my options?": every call this side may make (a call it named that it cannot make is said first).
  if (side && says(p, 'options') && f.legal.length && !final) {
    const o = options(p, g, f, side, terms);
    return asked ? { ...o, lead: `${lines[0]} ${o.lead}` } : o;
  }
  // On a purchase that can no longer change, an explanation the intent gives ("when am I paid?") leads.
  if (explain && final) return { step: null, lead: explain, lines };
  // Nothing this side can do moves it forward (the other party, a timer or an operator moves next) and no call of its is asked: what happens meanwhile.
  const waits = !final && !f.legal.some((t) => progress(t, f.state, side) >= 2);
  // The question asks for this call: it names it, or its intent is it, or it is a reading call the question ranks high (list_messages).
  const chosen = !!best && (topic?.tool === best.tool || (p.tools.includes(best.tool) && !done.includes(best.tool)) || namesExactly(p.text, best.tool) || names(r.query, best.tool) || (!isMachineTool(best.tool) && best.tool !== 'get_purchase' && best.s >= 0.5));
  if (!best || (waits && !chosen) || (whatNow && progress(best.tool, f.state, side) === 0 && !topic?.tool)) {
    if (!final) {
      const w = whileWaiting(p, g, terms, f, side);
      // (A seller's wait already says when it is paid; a buyer's keeps the explanation asked for.)
      // (A call the question names that this side cannot make is answered first.)
      return { ...w, lead: asked ? `${lines[0]} ${w.lead}` : w.lead, lines: [...(explain && side !== 'seller' ? [explain] : []), ...w.lines] };
    }
    return { step: null, lead: `Nothing for you to call now: ${id} is ${f.state}. ${next}`, lines: lines.slice(asked ? 1 : 0) };
  }
  // A call the question names that the machine refuses now (often a pasted invalid_state): that leads, with what the state allows.
  if (asked && (p.error || p.tools.includes(asked.tool) || namesExactly(p.text, asked.tool)) && best.tool !== asked.tool && toward !== best.tool && !(topic?.tool === best.tool && !p.error && (topic.states?.includes(f.state) || progress(best.tool, f.state, side) >= 2))) {
    const alt = { tool: best.tool, arguments: argsFor(best.tool, g, p) };
    return { step: alt, lead: `${lines[0]} ${next}`, lines: [`Next: ${call(alt)}.`, ...lines.slice(1)] };
  }
  // The buyer reads the work before paying for it (unless the question says it did).
  const readFirst = side === 'buyer' && progress(best.tool, f.state, side) === 3 && candidates.has('get_delivery') && !has(p.text, 'get_delivery') && !done.includes('get_delivery');
  const step = { tool: best.tool, arguments: argsFor(best.tool, g, p) };
  // What the call does from this state for this side: the machine's documented transition, else the catalogue's description.
  const doc = documentedTransitions(terms).find((t) => t.trigger === best.tool && (!side || t.who.includes(side)) && t.from.includes(f.state));
  const desc = doc ? `${f.state} → ${doc.to}.` : firstSentence(getTool(best.tool)?.description ?? '').replace(/^(Buyer|Seller)[^:]*:\s*/, '');
  // (The call that gets there is what the transition describes; the wanted call follows with its own arguments.)
  const then = toward === best.tool && wanted ? ` — ${desc.replace(/\.$/, '')} — then ${withBounds(wanted, argsFor(wanted, g, p))}.` : '';
  const first = readFirst
    ? `Read the work with get_delivery {"purchaseId":"${id}"}; if it is right, call ${call(step)}${then}`
    : toward === best.tool
      ? `${wanted} comes after ${best.tool}: as the ${side ?? 'party'} of ${id}, call ${call(step)} first`
      : `As the ${side ?? 'party'} of ${id}, call ${call(step)}`;
  // The intent's call comes later ("what ratings can I give?" before confirming): its rule leads, then the call that gets there.
  // (Asked what to do or how, the route leads as below.)
  if (wanted && toward === best.tool && topic?.tool === wanted && progress(toward, f.state, side) >= 2 && !says(p, 'next') && !says(p, 'howTo')) return { step, lead: `${withCall(topic.lead, { tool: wanted, arguments: argsFor(wanted, g, p) })} First: ${readFirst ? `${first.charAt(0).toLowerCase()}${first.slice(1)}` : `call ${call(step)}`}${readFirst && then ? '' : `: ${desc.charAt(0).toLowerCase()}${desc.slice(1)}`}`, lines };
  // The intent's own words when its call is the one: they say why, the machine's line says what it does from here.
  // (A call outside the machine — a message — has no transition to name: the intent's words say what it is for.)
  if (topic?.tool === best.tool && !readFirst) return { step, lead: `As the ${side ?? 'party'} of ${id} (${f.state}): ${withCall(topic.lead, step).replace(/^As the (buyer|seller), c/, 'C')}`, lines: [...(doc ? [`${best.tool}: ${desc}`] : []), ...lines.slice(asked ? 1 : 0)] };
  return { step, lead: readFirst && then ? first : `${first}: ${desc.charAt(0).toLowerCase()}${desc.slice(1)}`, lines: explain ? [explain, ...lines] : lines };
}

/** "What are my options?" on a purchase: a message to the other party, each call the machine lets this side make now (and where it leads), and what the timer does if nobody acts. */
function options(p: Parsed, g: Grounded, f: NonNullable<Grounded['purchase']>, side: Side, terms: MarketTerms): Picked {
  const id = f.id ?? 'your purchase';
  const ask = { tool: 'send_message', arguments: argsFor('send_message', g, p) };
  // (A seller's own way to be paid — deliver_work — comes first; a buyer's first option is to ask.)
  const forward = side === 'seller' ? f.legal.find((t) => progress(t, f.state, side) >= 2) : undefined;
  const step = forward ? { tool: forward, arguments: argsFor(forward, g, p) } : ask;
  // (The buyer's call that pays the seller comes last, for work that is right.)
  const calls = f.legal.filter((t) => t !== forward).sort((a, b) => (side === 'buyer' ? progress(a, f.state, side) - progress(b, f.state, side) : 0)).map((tool) => {
    const doc = documentedTransitions(terms).find((t) => t.trigger === tool && t.who.includes(side) && t.from.includes(f.state));
    return `${tool}${doc ? ` (→ ${doc.to})` : ''}${side === 'buyer' && progress(tool, f.state, side) === 3 ? ' only if the work is right' : ''}`;
  });
  return { step, lead: `Your options as the ${side} of ${id} (${f.state}${f.priceGas ? `; its ${f.priceGas} gas held in escrow` : ''}): ${forward ? `call ${call(step)}; ask the buyer with send_message` : `ask the ${side === 'buyer' ? 'seller' : 'buyer'} with ${call(step)}`}; or call ${calls.join('; ')}.`, lines: f.deadlines.map((d) => `If nobody acts: ${d}.`) };
}

/** An intent's lead with its call's placeholder arguments ({"purchaseId", …}) replaced by the asker's own. */
function withCall(lead: string, step: NextStep | null): string {
  // (Arguments nest one level at most: {"delivery": {"summary"}}.)
  return step ? lead.replace(new RegExp(`${step.tool} \\{(?:[^{}]|\\{[^{}]*\\})*\\}`), () => call(step)) : lead;
}

function forTopic(t: Topic, g: Grounded, p: Parsed) {
  const step = t.tool ? { tool: t.tool, arguments: argsFor(t.tool, g, p, t.args ?? {}) } : null;
  // A rule on the asker's own open sale ("the cut off my sale"): the rule's figures on that sale, and what pays it.
  const sale = (g.account?.purchases ?? []).find((x) => x.role === 'seller' && isOpen(x.status) && x.status !== 'disputed');
  if (t.account === 'sale' && sale && has(p.text, 'my')) {
    const deliver = legalCalls(sale.status, 'seller').includes('deliver_work');
    const own = { tool: deliver ? 'deliver_work' : 'get_purchase', arguments: deliver ? { purchaseId: sale.id, delivery: { summary: '<summary>' } } : { purchaseId: sale.id } };
    return { step: deliver ? own : null, lead: `On your ${sale.priceGas}-gas sale ${sale.id} the platform's fee is ${sale.priceGas - sale.sellerNetGas} gas: you get ${sale.sellerNetGas} as sale_earn when it completes (the buyer confirms, or auto-release)${deliver ? ` — first deliver it with ${call(own)}` : ''}.`, lines: [t.lead] };
  }
  return { step, lead: withCall(t.lead, step), lines: [...(t.lines ?? [])] };
}

type Picked = { step: NextStep | null; lead: string; lines: string[] };

/** What the situation decides whatever the wording: a pasted error, an open checkout, a limit the human set, a state asked about, the asker's purchase. */
function bySituation(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms, topic: Topic | null, figuresOnly: boolean): Picked | null {
  // An open checkout answers any question about gas arriving or buying it ("paid yet?", "do I call buy_gas again", a pasted refusal of buy_gas).
  const aboutGas = !topic || topic.account === 'checkout' || topic.tool === 'buy_gas';
  const errorOnGas = !p.error || (p.error.code !== 'insufficient_gas' && (p.tools.includes('buy_gas') || has(normalize(p.error.message ?? ''), 'checkout')));
  const checkoutAsked = topic?.account === 'checkout' || (aboutGas && (names(p.text, 'get_checkout') || (!g.purchase && (p.tools.includes('buy_gas') || says(p, 'gasArrival')))));
  // (Buying a pack other than the open checkout's is its own question: swapping, or buying more.)
  const otherPack = GAS_PACKS.some((x) => x.gas !== g.checkouts[0]?.gas && (has(p.text, x.id) || p.amounts.includes(x.gas)));
  // Another pack instead of the open checkout's ("switch to builder instead"): that pack's own checkout; the open one lapses unpaid.
  // ("the bigger pack" names none: the next pack up from the open one's.)
  const bigger = /\b(?:bigger|larger|next|more gas)\b/.test(p.text) ? GAS_PACKS.filter((x) => x.gas > (g.checkouts[0]?.gas ?? Infinity)).sort((a, b) => a.gas - b.gas)[0] : undefined;
  const swap = g.checkouts.length && /\b(?:instead|switch|swap|change|rather)\b/.test(p.text) ? GAS_PACKS.find((x) => x.gas !== g.checkouts[0].gas && (has(p.text, x.id) || p.amounts.includes(x.gas))) ?? bigger : undefined;
  if (swap) {
    const c = g.checkouts[0];
    const step = { tool: 'buy_gas', arguments: { packId: swap.id } };
    return { step, lead: withCall(topicById(terms, 'another-pack')!.lead, step), lines: [`${swap.id} is ${swap.gas} gas = ${swap.usd} USD; the open ${c.sessionId} (${c.gas} gas) expires unpaid at ${c.expiresAt.slice(0, 16).replace('T', ' ')} UTC.`] };
  }
  // A payment the human left unfinished on the checkout's page ("cancelled on the stripe page", "card declined"): that open checkout answers.
  if (g.checkouts.length && !p.error && unfinishedPayment(p) && ['checkout', 'checkouturl', 'stripe', 'payment page', 'pay page', 'card', 'buy_gas'].some((w) => has(p.text, w))) return openCheckout(g, p);
  // (A pasted error the guides know is answered with them: they point to the open checkout and add what the error needs.)
  if (g.checkouts.length && !has(p.text, 'expired') && checkoutAsked && errorOnGas && !(otherPack && topic?.tool === 'buy_gas') && !(p.error && forError(p, g, terms))) return openCheckout(g, p);
  if (p.error) {
    const e = forError(p, g, terms);
    if (e) return e;
    // A refused call on the asker's purchase: what its state allows answers, whatever else the question names.
    if (g.purchase?.inAccount && ['invalid_state', 'forbidden'].includes(p.error.code)) {
      const a = forPurchase(p, g, r, terms, topic?.purchase ? topic : null);
      const failed = calledFirst(p);
      return failed && isMachineTool(failed) && !g.purchase.legal.includes(failed) && !a.lead.includes(`${failed} is not possible`) ? { ...a, lead: `${failed} cannot be called on ${g.purchase.id ?? 'this purchase'} now: it is ${g.purchase.state}. ${a.lead}` } : a;
    }
  }
  // "What does awaiting_approval mean?": the machine's word for that state; "why was it refunded?": the machine's ways into it.
  const stateAsked = p.statedState && !p.error && says(p, 'stateMeaning') && (!topic || topic.purchase || has(p.text, p.statedState));
  if (stateAsked && pastWhy(p)) return becauseOf(p, g);
  if (stateAsked) return { step: null, lead: `${p.statedState}: ${nextOf(p.statedState!)}`, lines: [] };
  const limitsAsked = has(p.text, 'spending limit') || ['limit', 'budget', 'refused', 'set something up', 'exceeds', 'owner', 'cap', 'blocked', 'blocking'].filter((w) => has(p.text, w)).length >= 2 || (g.limits?.setByHuman && (has(p.text, 'refused') || has(p.text, 'limit') || topic?.account === 'limits'));
  // A price the question states above the human's per-purchase limit: the limit is the answer, not the balance.
  // (Or at the limit itself: "can't buy stuff over 500" when the human's per-purchase maximum is 500.)
  const overLimit = g.limits?.perPurchaseMaxGas != null && (topic?.tool === 'purchase_service' || p.tools.includes('purchase_service') || has(p.text, 'buy')) && p.amounts.some((a) => a >= g.limits!.perPurchaseMaxGas! && a !== g.wallet?.gasBalance && a !== p.balance);
  // (The human's limits bind purchases of services; a gas pack asked about against a budget is figures' — the human approves its checkout anyway.)
  const packs = (p.tools.includes('buy_gas') || (has(p.text, 'pack') && ASKS.budget.some((w) => has(p.text, w)))) && !p.tools.includes('purchase_service');
  // (A budget or an owner said beside another task — "owner gave me a budget; how do I choose a seller?" — is that task's, unless a limit or a refusal is named.)
  const elsewhere = !!topic?.tool && topic.account !== 'limits' && topic.tool !== 'purchase_service' && !['limit', 'limits', 'cap', 'refused', 'blocked', 'exceeds'].some((w) => has(p.text, w));
  if (((limitsAsked && !elsewhere) || overLimit) && !packs) return spendingLimit(g, null, p, terms);
  // Limits asked about on an account whose human set none: nothing but the balance bounds a purchase.
  if (topic?.account === 'limits' && g.limits && !g.limits.setByHuman && g.wallet) {
    return { step: { tool: 'wallet', arguments: {} }, lead: `No spending limit is set on your account: one purchase may cost up to your gasBalance (${g.wallet.gasBalance} gas now${g.wallet.gasBalance ? '' : ': buy_gas first'}) — the marketplace has no per-purchase maximum of its own.`, lines: ['Your human may set limits (per purchase, per day or week, categories) on their owner page; wallet {} shows spendingLimits then.'] };
  }
  // A purchase is the subject unless the question is plainly about something else (cash-out, a listing …); an
  // intent that is not about a purchase leads whatever purchase the account holds.
  // (ask_help named is the one asked, not a call asked about.)
  const ranked = r.tools.find((t) => t.tool !== 'ask_help');
  const top = ranked?.tool;
  const pointsAtIt = namesPurchase(p, g) || !!p.statedState;
  const aboutPurchase = !!g.purchase && (says(p, 'options') || (topic && !says(p, 'idle') ? !!topic.purchase : pointsAtIt || says(p, 'idle') || !top || isMachineTool(top) || 'purchaseId' in (getTool(top)?.params ?? {}) || (ranked?.score ?? 0) < 0.8));
  // Figures about sales in general ("3 completed sales at 200") are not about the purchase the account holds.
  if (aboutPurchase && !figuresOnly) return forPurchase(p, g, r, terms, topic);
  return null;
}

/** The gas pack the question asks about (by its id, its gas with "pack", or buy_gas named), not a service it buys. */
function packAsked(p: Parsed): (typeof GAS_PACKS)[number] | null {
  // (A listing bought with gas a pack brought — "bought the fleet pack, now I want a 450-gas listing" — is a purchase.)
  if (p.tools.includes('purchase_service') || ['listing', 'listings', 'service', 'services', 'order', 'job'].some((w) => has(p.text, w)) || !(p.tools.includes('buy_gas') || has(p.text, 'pack') || has(p.text, 'packs'))) return null;
  return GAS_PACKS.find((x) => has(p.text, x.id)) ?? GAS_PACKS.find((x) => p.amounts.includes(x.gas)) ?? (p.tools.includes('buy_gas') || has(p.text, 'gas pack') ? GAS_PACKS[0] : null);
}

/** The machine's timer out of `state` (a sweeper's transition) and its length in hours (a listing's deliveryDays at its default). */
function timerOf(state: string, terms: MarketTerms): { tool: string; to: string; hours: number } | null {
  const t = TRANSITIONS.find((x) => x.who.includes('sweeper') && (x.from as readonly string[]).includes(state) && x.after && x.to);
  const period: Period | undefined = t?.after?.period;
  const hours = !period ? null : 'hours' in period ? period.hours : 'days' in period ? period.days * 24 : 'daysOfTerm' in period ? terms[period.daysOfTerm] * 24 : 'daysOfColumn' in period && period.daysOfColumn === 'delivery_days' ? DEFAULT_DELIVERY_DAYS * 24 : null;
  return t && hours ? { tool: t.tool, to: String(t.to), hours } : null;
}

const lengthOf = (hours: number) => (hours % 24 ? `${hours} h` : `${hours / 24}-day`);
/** "2 days ago": the age the question states, in hours. */
function statedAge(p: Parsed): { said: string; hours: number } | null {
  if (has(p.text, 'yesterday')) return { said: 'yesterday', hours: 24 };
  // ("4 days ago", or how long it has been so: "delivered for 4 days", "been delivered 5 days now".)
  const ago = /\b(\d+|a|an|one|two|three|four|five|six) (hour|day|week)s? ago\b/.exec(p.text) ?? /\b(?:for|since|over) (\d+|a|an|one|two|three|four|five|six) (hour|day|week)s?\b(?! from)/.exec(p.text);
  const n = ago ? ({ a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6 } as Record<string, number>)[ago[1]] ?? Number(ago[1]) : 0;
  return ago ? { said: ago[0].replace(/^(?:for|since|over) /, ''), hours: n * { hour: 1, day: 24, week: 168 }[ago[2] as 'hour' | 'day' | 'week'] } : null;
}

/** An age the question states for a purchase ("delivered 4 days ago") at or past the machine's timer out of its state (a listing's own period at its default): what the timer has most likely done. */
function timerPassed(p: Parsed, state: string, terms: MarketTerms): string | null {
  const ago = statedAge(p);
  const t = timerOf(state, terms);
  return ago && t && ago.hours > t.hours ? `${ago.said} is past the ${lengthOf(t.hours)} ${t.tool} out of ${state}: it has most likely moved to ${t.to} — check with get_purchase. If it has not:` : null;
}

/** The timer of a purchase only the question tells of ("will it complete on its own?"): the machine's rule, and what is left of it at the age stated. */
function statedTimer(p: Parsed, state: string, terms: MarketTerms): string | null {
  const t = timerOf(state, terms);
  if (!t) return null;
  const ago = statedAge(p);
  const rest = ago ? t.hours - ago.hours : 0;
  const left = ago && rest >= 0 ? ` — ${ago.said}, so in about ${rest >= 24 ? `${Math.round(rest / 24)} day${rest >= 36 ? 's' : ''}` : `${rest} h`}` : '';
  // ("delivered Monday at 10:00 UTC": the weekday and time it fires.)
  const at = /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?: at)? (\d{1,2}):(\d\d)/.exec(p.text);
  const days = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
  const day = (d: string) => d.replace(/^./, (c) => c.toUpperCase());
  const utc = at && /\butc\b/.test(p.text) ? ' UTC' : '';
  const fires = at ? ` — ${day(at[1])} ${at[2]}:${at[3]}${utc} plus ${lengthOf(t.hours).replace('-day', ' days')}: ${day(days[(days.indexOf(at[1]) + Math.floor((Number(at[2]) + t.hours) / 24)) % 7])} ${String((Number(at[2]) + t.hours) % 24).padStart(2, '0')}:${at[3]}${utc}` : '';
  return `If nobody acts, ${t.tool} moves ${/^[aeiou]/.test(state) ? 'an' : 'a'} ${state} purchase to ${t.to} ${lengthOf(t.hours).replace('-day', ' days')} after it became ${state}${left}${fires}.`;
}

/** "Max price for a listing?", "longest description?": the upper bound the catalogue's schema sets on that argument (of the call the question names, else the first that takes it). */
function boundAsked(p: Parsed): string | null {
  // ("min priceGas?": the lower bound of an argument named exactly; a minimum asked in words has its rule's own answer.)
  // (A number said with it is a figure question — "I sent priceGas: 5" — answered by the rule's own figures.)
  const lower = /\b(?:min|minimum|lowest|shortest)\b(?! ago)/.test(p.text) && !/\d/.test(p.text);
  if (!(lower || /\b(?:max|maximum|highest|longest|upper limit|most (?:i|you) can)\b/.test(p.text)) || p.amounts.length || p.error) return null;
  const words = (k: string) => k.replace(/([A-Z])/g, ' $1').toLowerCase().split(' ').filter((w) => w && !['gas', 'id', 'max', 'min'].includes(w));
  const st = stemmed(p.text);
  const found = TOOL_NAMES.flatMap((tool) => Object.entries((getTool(tool)?.params ?? {}) as Record<string, { type?: string; max?: number; min?: number }>).filter(([k, v]) => (lower ? v.min : v.max) !== undefined && !/Ids?$/.test(k) && k !== 'limit' && (lower ? k !== k.toLowerCase() && has(p.text, k.toLowerCase()) : words(k).length && words(k).every((w) => has(st, stem(w))))).map(([k, v]) => ({ tool, k, v })));
  const pick = found.find((f) => namesExactly(p.text, f.tool) || distinctiveParts(f.tool).some((part) => p.text.includes(` ${part}`))) ?? found[0];
  if (!pick) return null;
  const unit = pick.v.type === 'string' ? ' characters' : '';
  const bounds = [...(pick.v.min !== undefined ? [`at least ${pick.v.min}${unit}`] : []), ...(pick.v.max !== undefined ? [`at most ${pick.v.max}${unit}`] : [])];
  return `${pick.k} of ${pick.tool}: ${(lower ? bounds : bounds.reverse()).join(', ')} (${firstSentence((pick.v as { description?: string }).description ?? '').replace(/\.$/, '')})`.replace(/ \(\)$/, '') + '.';
}

/** "Why was it refunded?", "how did it end up completed?": asked how a purchase got to a state. */
const pastWhy = (p: Parsed) => !!p.statedState && (/\b(?:why (?:was|is|did|has|got)|how did (?:it|this|that|my)|who (?:refunded|completed|failed))\b/.test(p.text) || (has(p.text, 'why') && new RegExp(`\\b(?:was|got|been|were)(?: [a-z]+)? ${p.statedState.replace(/_/g, ' ')}\\b`).test(p.text)));

/** How a purchase gets to the state asked about — the machine's transitions into it (who moves it, with which call, from where) — and the call that shows which one did. */
function becauseOf(p: Parsed, g: Grounded): Picked {
  const state = p.statedState!;
  const ways = TRANSITIONS.filter((t) => t.to === state).map((t) => `${t.who.map((w) => (w === 'sweeper' ? 'a timer' : `the ${w}`)).join(' or ')} (${t.tool}, from ${(t.doc && t.doc.from) || t.from.join(' or ')})`);
  const id = p.purchaseIds[0] ?? g.purchase?.id ?? null;
  const known = id && (g.account?.purchases ?? []).some((x) => x.id === id);
  const step = { tool: known || !id ? 'get_purchase' : 'list_orders', arguments: known || !id ? { purchaseId: id ?? 'pur_…' } : {} };
  const unknown = id && !known && g.account?.purchases ? `I see no purchase ${id} on your account — check the id with ${call(step)}. ` : '';
  return { step, lead: `${unknown}A purchase becomes ${state} in ${ways.length} way${ways.length > 1 ? 's' : ''}: ${[...new Set(ways)].join('; ')}.`, lines: [`get_purchase on it shows which (its timestamps and reason fields). ${nextOf(state)}`] };
}

/** The answer for a purchase as the question tells it ("If pur_x is delivered as you say: …"), its own "As the buyer of …" opening dropped. */
const asTold = (f: NonNullable<Grounded['purchase']>, answer: string) => `If ${f.id} is ${f.state} as you say: ${sentence(answer.replace(/^As the \w+ of \S+( \([a-z_]+\))?[:,] /, ''))}`;

/**
 * When the account disagrees with the question, what it shows leads and the call is the one it allows: a purchase in
 * another state is answered on that state alone (the intent's call if it fits it, else what the state says next); an
 * unknown id or earnings the wallet does not hold are named first and the stated situation follows ("if …").
 */
function accountFirst(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms, topic: Topic | null, mismatch: string, answer: string, lines: string[]): { lead: string; lines: string[]; picked: Picked } {
  const said = sentence(mismatch);
  if (g.actual) {
    // The purchase the account shows is answered by the machine from its own state (the intent only if it fits it).
    const fits = topic && (!topic.states || topic.states.includes(g.actual.state)) && (!topic.side || !g.actual.side || topic.side === g.actual.side);
    // (On the other side than the question states, an intent of the stated side's is not the asker's: that side's own next step answers.)
    const otherSide = !!p.side && !!g.actual.side && g.actual.side !== p.side && !fits;
    const shows = g.mismatch?.startsWith('I see no purchase') && !g.mismatch.includes('account shows') ? `${said.replace(/ \(check the id with list_orders\)$/, '')}; it shows ${g.actual.id}${g.actual.title ? ` (“${g.actual.title}”)` : ''}, ${g.actual.state}` : said;
    // The other side stated on a purchase only the question tells of ("I'm the SELLER on pur_x, which tool?"): that side's call as stated, made with that agent's own key.
    const statedSide = p.side && g.actual.side && g.actual.side !== p.side && g.purchase && !g.purchase.inAccount && isOpen(g.purchase.state) && g.purchase.legal.length ? g.purchase : null;
    if (statedSide && p.side) {
      const stated = forPurchase(p, { ...g, side: p.side, purchase: statedSide, actual: null, mismatch: null }, r, terms, topic?.tool && statedSide.legal.includes(topic.tool) ? topic : null);
      const lead = `${said}. If you are its ${p.side} as you say: ${stated.lead.replace(/^As the \w+ of \S+( \([a-z_]+\))?[:,] (c(?=all))?/, (_, _s, c) => (c ? 'C' : ''))}`;
      return { lead, lines: ['Make it with that agent\'s own key: whoami {} shows which agent this key is.'], picked: { step: { tool: 'whoami', arguments: {} }, lead, lines: [] } };
    }
    // Another open state told of an id the account lacks, on the same side ("I'm the seller on pur_x, the buyer has paid, I want to deliver"): the stated situation's own step leads.
    const statedState = !statedSide && p.statedState && p.statedState !== g.actual.state && isOpen(p.statedState) && g.purchase && !g.purchase.inAccount && g.purchase.id !== g.actual.id && p.purchaseIds.length ? g.purchase : null;
    if (statedState) {
      const lead = asTold(statedState, answer);
      return { lead, lines: [`(${shows} — check the id with list_orders.)`], picked: { step: { tool: 'list_orders', arguments: {} }, lead, lines: [] } };
    }
    // An intent that is not about the purchase's next call but a call on it (staying on the platform: a message …) answers as it is, on the purchase the account shows.
    if (topic?.tool && !topic.purchase && fits && 'purchaseId' in (getTool(topic.tool)?.params ?? {})) {
      const t = forTopic(topic, { ...g, purchase: g.actual }, p);
      return { lead: `${shows}. ${t.lead}`, lines: t.lines, picked: { ...t, lines: [] } };
    }
    // A purchase stated as final ("I already confirmed it"), asked about with an intent of that final state: the stated situation is answered first
    // (no call on the account's other purchase answers it), then what the account shows.
    const final = !!p.statedState && !isOpen(p.statedState);
    // (Not when the account's purchase is the one the question means: then its own state answers.)
    // (A final state said of an id the account lacks is that purchase's, never the account's other one; with no intent of that state, the machine's own word on it answers.)
    if (final && (!fits || (p.purchaseIds.length > 0 && !p.error)) && g.purchase && !g.purchase.inAccount && g.purchase.id !== g.actual.id) {
      const ofState = topic?.states?.includes(p.statedState!);
      const stated = ofState ? forPurchase(p, g, r, terms, topic) : { lead: nextOf(p.statedState!) };
      const lead = stated.lead.replace(/^As the \w+ of \S+ \([a-z_]+\): /, '');
      return { lead: `If ${g.purchase.id ?? 'it'} is ${p.statedState} as you say: ${lead}`, lines: [`(${shows}.)`], picked: { step: { tool: 'list_orders', arguments: {} }, lead, lines: [] } };
    }
    // A rule asked (an intent that explains, with no call and no purchase step): it is answered as it is, after what the account shows; the purchase's own step follows.
    if (topic && !topic.tool && !topic.purchase) {
      const own = forPurchase({ ...p, text: ' what now ', tools: [], amounts: [], statedState: null, error: null }, { ...g, side: g.actual.side ?? g.side, purchase: g.actual }, { ...r, tools: [], query: '' }, terms, null);
      return { lead: `${shows}. ${topic.lead}`, lines: [own.lead, ...(topic.lines ?? [])], picked: { ...own, lines: [] } };
    }
    const onAccount = forPurchase(otherSide ? { ...p, text: ' what now ', tools: [], amounts: [], statedState: null, error: null } : p, { ...g, side: g.actual.side ?? g.side, purchase: g.actual }, otherSide ? { ...r, tools: [], query: '' } : r, terms, fits ? topic : null);
    // (The state the question tells, when the other party's next move leads there — "the buyer disputed", "the seller delivered": what the machine says of it.)
    const them = g.actual.side === 'seller' ? 'buyer' : g.actual.side === 'buyer' ? 'seller' : null;
    const leadsTo = (who: string | null) => !!who && TRANSITIONS.some((t) => t.to === p.statedState && (t.from as readonly string[]).includes(g.actual!.state) && t.who.includes(who as Side));
    // (Or the asker's own move into a final state — "after I confirm": what the machine says of it once there.)
    const ownFinal = leadsTo(g.actual.side) && final;
    const ifStated = p.statedState && !otherSide && (leadsTo(them) || ownFinal) ? [`${leadsTo(them) ? 'If it becomes' : 'Once it is'} ${p.statedState}: ${nextOf(p.statedState)}`] : [];
    return { lead: `${shows}, so: ${onAccount.lead.replace(/^As the \w+ of \S+ \([a-z_]+\): /, '')}`, lines: [...ifStated, ...onAccount.lines.slice(0, 2)], picked: { ...onAccount, lines: [] } };
  }
  const check = g.mismatch?.startsWith('I see no purchase') ? { tool: g.mismatch.includes('whoami') ? 'whoami' : 'list_orders', arguments: {} } : null;
  // A purchase the question tells the state of, on an id the account lacks: the stated situation's own step leads, what the account shows follows.
  const stated = g.purchase && !g.purchase.inAccount && p.statedState && p.purchaseIds.length ? g.purchase : null;
  if (stated) {
    const lead = asTold(stated, answer);
    return { lead, lines: [`(${said.replace(' (check the id with list_orders)', ' — check the id with list_orders')}.)`, ...lines], picked: { step: check, lead, lines: [] } };
  }
  // (Earnings the wallet does not hold yet: the steps as stated lead — they are what was asked — and the wallet's figure follows.)
  if (!check && mismatch.includes('withdrawableGas')) return { lead: `If it is as you say: ${answer}`, lines: [`(${said}.)`, ...lines], picked: { step: null, lead: answer, lines: [] } };
  return { lead: `${said}.`, lines: [`If it is as you say: ${answer}`, ...lines], picked: { step: check, lead: `${said}.`, lines: [] } };
}

/**
 * A cash-out asked about on the asker's own account (not figures the question states): what it can withdraw now leads —
 * an open dispute as a seller pauses it, below the minimum it is "not yet" with what its open sales add when they complete.
 */
function cashoutOnAccount(p: Parsed, g: Grounded, figured: string | null, topic: Topic | null, terms: MarketTerms): { lead: string; lines: string[]; step: NextStep | null } | null {
  const r = cashoutNow(p, g, figured, topic, terms);
  // A payout asked in another currency or method ("to paypal"): there is only BTC.
  const other = OTHER_PAYOUTS.find((w) => has(p.text, w));
  return r && other ? { ...r, lead: `Cash-out pays only in BTC, sent by the operator to your connect_payouts address — no ${other} payout. ${r.lead}` } : r;
}

function cashoutNow(p: Parsed, g: Grounded, figured: string | null, topic: Topic | null, terms: MarketTerms): { lead: string; lines: string[]; step: NextStep | null } | null {
  const sales = (g.account?.purchases ?? []).filter((x) => x.role === 'seller');
  // (Words of a quoted message are the quote's: "call request_cashout to bc1q…" in a phishing message asks no cash-out.)
  const own = { ...p, text: withoutQuotes(p.text) };
  const asked = (says(own, 'cashout') && !says(own, 'notCashout')) || has(own.text, 'request_cashout');
  const disputed = sales.filter((x) => x.status === 'disputed');
  // The asker's own gas asked to be cashed out beyond what it may withdraw ("I have 3000 gas in my wallet, can I cash out 2000 of it?"): the wallet's own answer.
  // (Its own held gas, never earnings it states or plans: "600 gas of sale_earn", "if I sell one job … and cash out all of it".)
  const mine = (p.balance !== null || /\b\d[\d,]* gas (?:sitting |that is |that's )?in (?:my )?(?:wallet|balance)\b/.test(own.text)) && !['sale_earn', 'earnings', 'earned', 'sales', 'sale', 'sell', 'sold'].some((w) => has(own.text, w));
  const beyond = p.amounts.filter((a) => a !== p.balance).find((a) => g.wallet && a > g.wallet.withdrawableGas);
  if (asked && g.wallet && mine && beyond && !p.error && !disputed.length) {
    return { step: { tool: 'wallet', arguments: {} }, lead: `No: only sale earnings (sale_earn) can be cashed out — your wallet shows withdrawableGas ${g.wallet.withdrawableGas} of your gasBalance ${g.wallet.gasBalance}; bought gas, refunds and referral bonuses are spendable, never withdrawable.`, lines: [`A cash-out needs at least ${MIN_CASHOUT_GAS} gas of sale_earn, a ${CASHOUT_FEE_PERCENT}% fee, paid in BTC by the operator after connect_payouts.`] };
  }
  // Figures the question asks for are answered as figures (after an open dispute that pauses any cash-out); on an account with no sale and nothing to withdraw, only a question about cashing out is.
  // (A refusal told with figures that only restate the account — its sale's price or share, the minimum the error quoted — is the account's question.)
  const known = [MIN_CASHOUT_GAS, ...sales.flatMap((x) => [x.priceGas, x.sellerNetGas])];
  const ownFigures = !(p.error || /\berror\b/.test(p.text)) || !p.amounts.length || p.amounts.some((a) => !known.includes(a));
  if (!asked || !g.wallet || p.draft || (figured && ownFigures && !disputed.length) || (p.error && calledFirst(p) !== 'request_cashout') || (!sales.length && !g.wallet.withdrawableGas && topic?.account !== 'earnings')) return null;
  const w = g.wallet.withdrawableGas;
  const open = sales.filter((x) => isOpen(x.status) && x.status !== 'disputed');
  if (says(p, 'howTo') && !disputed.length && !open.length) return null;
  const min = `a cash-out needs at least ${MIN_CASHOUT_GAS} gas of completed-sale earnings (sale_earn)`;
  if (disputed.length) {
    const d = disputed[0];
    const step = { tool: 'send_message', arguments: { purchaseId: d.id, body: '<body>' } };
    return { step, lead: `Not while ${d.id} is disputed: cash-out is paused, for all your earnings, while you have an open dispute as a seller; it opens again once an operator decides it (a dispute lost as a seller blocks it for ${DISPUTE_LOOKBACK_DAYS} days). Give your side with ${call(step)}.`, lines: [...(figured ? [`Once it may: ${figured}`] : []), ...(says(p, 'rules') ? [`The rules besides: only sale_earn is withdrawable (bought gas, refunds, referral bonuses never), at least ${MIN_CASHOUT_GAS} gas, a ${CASHOUT_FEE_PERCENT}% fee, paid in BTC by the operator after connect_payouts.`] : []), `Your wallet shows withdrawableGas ${w}; the ${d.sellerNetGas} gas of ${d.id} stay frozen until the decision, and ${min}.`] };
  }
  if (w >= MIN_CASHOUT_GAS) {
    const c = cashoutSplit(w);
    const step = { tool: 'request_cashout', arguments: { amountGas: w } };
    return { step, lead: `Yes: call ${call(step)} (connect_payouts {"btcAddress"} once before the first): the ${CASHOUT_FEE_PERCENT}% fee leaves ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD, paid in BTC by the operator.`, lines: open.length ? [`${open.map((x) => x.id).join(', ')} add their earnings only once completed.`] : [] };
  }
  const s = open[0];
  const after = s ? w + s.sellerNetGas : w;
  const when = s && legalCalls(s.status, 'seller').includes('deliver_work') ? 'after you deliver it with deliver_work and the buyer confirms' : 'when the buyer confirms it, or auto-release pays it';
  const adds = s ? ` — ${s.id} (${s.status}) pays you ${s.sellerNetGas} gas only ${when}, which makes ${after}: ${after >= MIN_CASHOUT_GAS ? 'enough then' : `still ${MIN_CASHOUT_GAS - after} short`}` : '';
  const step = s && legalCalls(s.status, 'seller').includes('deliver_work') ? { tool: 'deliver_work', arguments: { purchaseId: s.id, delivery: { summary: '<summary>' } } } : null;
  // (No sale at all: selling is how earnings come.)
  const earn = !sales.length ? ` — they come only from selling: list_service, then deliver_work on each order; a completed sale adds ${100 - terms.platformFeePercent}% of its price` : '';
  return { step, lead: `Not yet: your wallet shows withdrawableGas ${w}, and ${min}${adds}${earn}.`, lines: [`Then: connect_payouts {"btcAddress"} once, and request_cashout {"amountGas"} — a ${CASHOUT_FEE_PERCENT}% fee, paid in BTC by the operator.`, 'Bought gas, refunds and referral bonuses are spendable, not withdrawable.'] };
}

export function compose(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms, intent: Intent | null = null): Composed {
  const topic = intent?.topic ?? null;
  const fault = says(p, 'fault') || p.error?.code === 'internal';
  const side = g.side;
  const ok = (tool: string) =>
    tool !== 'ask_help' && (tool !== 'report_bug' || fault) && !(side && sideOfTool(tool) && sideOfTool(tool) !== side) && !(getTool(tool)?.aliasOf);
  // Figures answer unless a pasted error decides the lead (its guide; a refusal it leaves to the call's rules does not).
  // (The account's one purchase is the sale "like this" means when the question names none.)
  const only = g.account?.purchases?.length === 1 ? g.account.purchases[0] : null;
  // (Amounts only a quoted message states — "'pay me the 250 in BTC'" — are the quote's, not figures asked.)
  const quotedOnly = p.amounts.length > 0 && !/\d/.test(withoutQuotes(p.text));
  const figured = (p.error && forError(p, g, terms)) || quotedOnly ? null : figures(p, terms, g.purchase?.priceGas ?? only?.priceGas ?? null, g.purchase?.side ?? (only?.role as Side | undefined) ?? null, g.wallet ? { balance: g.wallet.gasBalance, cap: g.limits?.setByHuman ? (g.limits.perPurchaseMaxGas ?? null) : null } : null);
  // (Figures for the very call a pasted error refused — "request_cashout for my 3000 returned not_eligible" — restate a plan that already failed.)
  // (A quoted listing's verdict is the fix of the refused call itself: it stays.)
  const num = figured?.tool && p.error && !p.draft && calledFirst(p) === figured.tool ? null : figured;
  // "How do I hand it over, and what do I get?": the call leads and the figures follow it.
  const callFirst = !!num && !!topic?.tool && !p.draft && says(p, 'howTo');
  const figuresOnly = !!num && !callFirst && !namesPurchase(p, g);
  // A tool's other name ("cash_out"): the same call under its catalogue name.
  const alias = p.pasted ? undefined : p.tools.map(getTool).find((t) => t?.aliasOf);
  if (alias?.aliasOf) return { lead: `${alias.name} is another name for ${alias.aliasOf}: the same call with the same arguments — use ${alias.aliasOf}.`, lines: [firstSentence(getTool(alias.aliasOf)?.description ?? '')], nextStep: null, allowed: [alias.aliasOf], sources: [] };
  // A gas pack asked against the human's limits: they bind purchase_service only; the human approves every checkout anyway.
  const gasPack = packAsked(p);
  if (gasPack && ['limit', 'limits', 'limited', 'cap', 'capped'].some((w) => has(p.text, w))) {
    const step = { tool: 'buy_gas', arguments: { packId: gasPack.id } };
    const within = g.limits?.perPurchaseMaxGas != null ? [`Each purchase_service stays within ${g.limits.perPurchaseMaxGas} gas, whatever your balance.`] : [];
    return { lead: `Your human's spending limits bind purchases of services (purchase_service), not buying gas: call ${call(step)} (${gasPack.gas} gas = ${gasPack.usd} USD); your human approves its checkout before any gas arrives.`, lines: within, nextStep: step, allowed: ['buy_gas'], sources: [] };
  }
  const bound = boundAsked(p);
  if (bound) return { lead: bound, lines: [], nextStep: null, allowed: [], sources: [] };
  // "The difference between request_refund and dispute_purchase?": each call as the catalogue describes it.
  const compared = /\b(?:difference|differ|versus|vs\.?|compared to|or should i use)\b/.test(p.text) ? p.tools.filter((t) => t !== 'ask_help').slice(0, 3) : [];
  if (compared.length >= 2) return { lead: compared.map((t) => `${t}: ${firstSentences(getTool(t)?.description ?? '', 200)}`).join(' '), lines: [], nextStep: null, allowed: compared, sources: [] };
  // "Which module is deliver_work in?": the catalogue's module of that tool (and the others that carry it).
  // (Each tool the question names: "deliver_work? and confirm_delivery? buy_gas?")
  const inModules = /\b(?:which|what) (?:mcp )?(?:module|group)s?\b/.test(p.text) ? p.tools.map(getTool).filter((t) => !!t && t.name !== 'ask_help').slice(0, 4) : [];
  if (inModules.length) {
    const modsOf = (t: NonNullable<ReturnType<typeof getTool>>) => [t.module, ...(t.alsoIn ?? [])];
    const each = inModules.map((t) => `${t!.name} is in the ${modsOf(t!).join(' and ')} module${modsOf(t!).length > 1 ? 's' : ''}`);
    return { lead: `${each.join('; ')}: pick them with ?modules=${[...new Set(inModules.map((t) => modsOf(t!)[0]))].join(',')} on /mcp (or --modules for the stdio client); with no modules chosen every tool is offered.`, lines: [], nextStep: null, allowed: [], sources: [] };
  }
  // "What does ack_purchase do?": the catalogue's description of it, and whose call it is on the asker's purchase.
  const defined = p.error ? undefined : p.tools.find((t) => t !== 'ask_help' && (new RegExp(`\\bwhat(?:'s| is| does| do)(?: the)? ${t}\\b(?! (?:says?|shows?|returns?|returned|gave)\\b)`).test(p.text) || new RegExp(`\\b${t}\\b\\W{0,3}(?:what (?:it|does it) do(?:es)?|what is it|what's it for)\\b`).test(p.text)));
  if (defined) {
    const whose = sideOfTool(defined);
    const theirs = g.purchase && whose && g.side && whose !== g.side ? [`On ${g.purchase.id ?? 'your purchase'} it is the ${whose}'s call, not yours.`] : [];
    return { lead: `${defined}: ${firstSentences(getTool(defined)?.description ?? '', 300)}`, lines: theirs, nextStep: null, allowed: [defined], sources: [] };
  }
  // A purchase call that timed out ("I don't know if it went through"): whether it did, before any retry.
  const lost = !p.error && /\b(?:timed? ?out|timeout|no response|network (?:error|issue|glitch)|connection (?:reset|dropped|closed|lost)|(?:don't|do not|didn't) know if it went through)\b/.test(p.text) ? calledFirst(p) : undefined;
  if (lost && isMachineTool(lost)) {
    const w = wentThrough(lost, g.purchase?.id ?? 'pur_…');
    return { lead: `${w.check}: a retry with the same key returns the first result instead of doing it twice.`, lines: ['A first call sent without an Idempotency-Key has nothing to replay: check before sending it again.'], nextStep: w.step, allowed: [w.step.tool], sources: [] };
  }
  const cash = cashoutOnAccount(p, g, num?.text ?? null, topic, terms);
  // (A rule the question asks beside it — how a dispute bears on cash-out — follows the account's answer.)
  // (Not beside an open dispute as a seller: that answer is the dispute's bearing itself.)
  const inDispute = (g.account?.purchases ?? []).some((x) => x.role === 'seller' && x.status === 'disputed');
  const rule = topic && !topic.tool && !inDispute && topic.account !== 'earnings' && overlap(topic.lead, cash?.lead ?? '') < 0.6 ? [topic.lead] : [];
  if (cash) return { lead: cash.lead, lines: [...rule, ...cash.lines], nextStep: cash.step, allowed: cash.step ? [cash.step.tool] : [], sources: [] };
  let picked = bySituation(p, g, r, terms, topic, figuresOnly);
  // "Delivered 4 days ago": a stated age past the machine's timer out of that state — the timer has most likely moved it.
  const moved = g.purchase && !g.purchase.inAccount ? timerPassed(p, g.purchase.state, terms) : null;
  if (moved && picked) picked = { ...picked, step: { tool: 'get_purchase', arguments: { purchaseId: g.purchase!.id ?? 'pur_…' } }, lead: `${moved} ${picked.lead}` };
  // "What happens if the buyer disputes it?" ("if they dispute": the other party): the other party's move from this state, by the machine, before the asker's own step.
  const them = g.purchase?.side === 'seller' ? 'buyer' : g.purchase?.side === 'buyer' ? 'seller' : null;
  const ifThey = them && picked && /\bwhat (?:happens|would happen|if)\b/.test(p.text) ? documentedTransitions(terms).find((t) => t.who.includes(them) && t.from.includes(g.purchase!.state) && new RegExp(`\\b(?:${them}|they|the other (?:party|side))\\b(?: (?!never\\b|not\\b|doesn't\\b|don't\\b|won't\\b|didn't\\b)[a-z']+){0,3} (?:${distinctiveParts(t.trigger).join('|') || t.trigger})`).test(p.text)) : undefined;
  if (ifThey && picked) picked = { ...picked, lead: `If the ${them} calls ${ifThey.trigger}: ${g.purchase!.state} → ${ifThey.to}. Meanwhile: ${picked.lead}`, lines: [nextOf(ifThey.to.split(/[ ,(]/)[0]), ...picked.lines] };
  // "If I do nothing?": the purchase's running timer answers first.
  if (picked && says(p, 'idle') && g.purchase?.deadlines[0]) picked = { ...picked, lead: `If nobody acts: ${g.purchase.deadlines[0]}. ${picked.lead}` };
  // "How long do I have?" asked alone: the timer is the answer and leads; asked beside what to do ("is there a deadline?"), it follows the lead.
  else if (picked && says(p, 'deadline') && g.purchase?.deadlines[0] && !says(p, 'next') && !says(p, 'howTo')) picked = { ...picked, lead: `${sentence(g.purchase.deadlines[0])}. ${picked.lead}`, lines: picked.lines.filter((l) => !l.toLowerCase().includes(g.purchase!.deadlines[0].toLowerCase())) };
  else if (picked && says(p, 'deadline') && g.purchase?.deadlines[0] && !picked.lines.some((l) => l.includes(g.purchase!.deadlines[0]))) picked = { ...picked, lines: [`Deadline: ${g.purchase.deadlines[0]}.`, ...picked.lines] };
  // A rule asked about the purchase ("auto release is how many days, and counted from what?"), not what to do: the rule leads, the purchase's own step follows.
  // (Not when the purchase's own lead says most of it already, nor on a purchase only the question tells of.)
  else if (picked && topic?.purchase && !topic.tool && g.purchase?.inAccount && !says(p, 'action') && !says(p, 'next') && !picked.lead.startsWith(topic.lead) && overlap(topic.lead, picked.lead) < 0.6) picked = { ...picked, lead: topic.lead, lines: [picked.lead, ...picked.lines.filter((l) => l !== topic.lead)] };
  // The timer asked on a purchase only the question tells of: the machine's rule for its state.
  const told = picked && g.purchase && !g.purchase.inAccount && !moved && (says(p, 'idle') || says(p, 'deadline')) ? statedTimer(p, g.purchase.state, terms) : null;
  if (told && picked) picked = { ...picked, lead: `${told} ${picked.lead}` };
  /** The situation decided the lead: it leads whatever the wording. */
  const firm = !!picked;
  if (!picked && topic) picked = forTopic(topic, g, p);
  if (!picked) {
    const best = r.tools.find((t) => ok(t.tool));
    if (best) {
      const isMachine = isMachineTool(best.tool);
      // A purchase call with nothing to fire it on: name it, but suggest it only when the account cannot say.
      const step = { tool: best.tool, arguments: argsFor(best.tool, g, p) };
      const desc = firstSentences(getTool(best.tool)?.description ?? '');
      picked = { step: isMachine && g.account?.purchases && !g.account.purchases.some((x) => legalCalls(x.status, (x.role as Side) ?? null).includes(best.tool)) && g.account.purchases.length ? null : step, lead: `Call ${call(step)}: ${desc}`, lines: [] };
    }
  }
  // ("how deliver", "how cashout": a terse how-to.)
  const action = firm || !!topic || says(p, 'action') || /^\s*how (?!much|many|long|often|does|do|is|are|was|were|come)[a-z]/.test(p.text);
  // Figures lead; the call after them is the one they lead to (never an unrelated one), else the intent's.
  if (num && !firm && !callFirst) {
    const step = num.tool ? { tool: num.tool, arguments: argsFor(num.tool, g, p, num.args ?? {}) } : null;
    if (step) picked = { step, lead: topic && topic.tool === step.tool ? withCall(topic.lead, step) : `Call ${call(step)}: ${firstSentences(getTool(step.tool)?.description ?? '')}`, lines: [] };
    else if (!topic) picked = null;
  }
  const info = (callFirst ? null : num?.text) ?? (action ? null : ruleLines(r, '', null, 1).lines[0] ?? null);
  const stated = num?.claims ?? 0;
  const mismatch = ((figuresOnly || (num && g.actual)) && !p.statedClaim ? null : g.mismatch) ?? (g.wallet && stated > g.wallet.withdrawableGas ? `your wallet shows withdrawableGas ${g.wallet.withdrawableGas}, not ${stated}: only sale earnings of completed sales can be cashed out` : null);
  const answer = info ?? picked?.lead ?? 'I could not find this in the documentation; ask with the tool name or the error code you got.';
  // An informational answer names a next call only when it follows from it (figures that lead to a call, or a question asking what to do).
  if (info && picked && !firm && !num?.tool && (!action || num?.refuses)) picked = null;
  // A fresh array: an intent's lines are shared data, never edited in place.
  let lines = info && picked ? [picked.lead.replace(/^Call /, 'Next: '), ...(num ? [] : picked.lines)] : [...(picked?.lines ?? [])];
  if (callFirst && num) lines.unshift(num.text);
  // A question that asks two things: the second intent's rule follows.
  // (Not when the answer already says most of it.)
  // (Not a second call the situation's own answer rules out: "buy_gas again?" beside an open checkout.)
  if (intent?.also && overlap(intent.also.lead, [answer, ...lines].join(' ')) < 0.6 && !(firm && intent.also.tool && g.checkouts.length && intent.also.tool === 'buy_gas')) lines.push(intent.also.lead);
  // The account's own facts the intent turns on: what it may withdraw (a cash-out asked about is answered above).
  const frozen = (g.account?.purchases ?? []).some((x) => x.role === 'seller' && x.status === 'disputed');
  if (topic?.account === 'earnings' && g.wallet && !num) lines.unshift(`Your wallet shows withdrawableGas ${g.wallet.withdrawableGas}${g.wallet.pendingEarningsGas ? ` and ${g.wallet.pendingEarningsGas} gas pending (${frozen ? 'frozen in a dispute until an operator decides' : 'sales delivered, not yet completed: they become sale_earn when the buyer confirms or auto-release pays'})` : ''}.`);
  let lead = answer;
  // An asker that says it has not registered yet: registering comes first.
  if (says(p, 'notRegistered') && !/\bregister\b/.test(answer)) {
    lead = `First register {"provider", "displayName"} (no key needed; store the rk_live_… key it returns once), then: ${answer}`;
  }
  // A balance the question states that the wallet does not hold: said after the answer.
  const claimed = p.balance;
  // A purchase the question plans at a price the wallet cannot pay: what is missing, and the pack that covers it.
  // (A seller's order is a sale, never a purchase the asker plans.)
  const planned = g.wallet && !num && !p.error && g.side !== 'seller' && !packAsked(p) && ['buy', 'purchase', 'afford', 'order'].some((w) => has(p.text, w)) ? p.amounts.find((a) => a > g.wallet!.gasBalance && a !== claimed && a !== g.limits?.perPurchaseMaxGas) : undefined;
  const pack = planned ? smallestPackCovering(planned - g.wallet!.gasBalance) : null;
  const short = planned && pack ? `${aGas(planned, true)} purchase needs ${planned - g.wallet!.gasBalance} more than your ${g.wallet!.gasBalance} spendable gas${g.wallet!.heldGas ? ` (${g.wallet!.heldGas} is held in escrow)` : ''}: buy_gas {"packId":"${pack.id}"} (${pack.gas} gas) first.` : null;
  const believed = claimed !== null && !!g.wallet && claimed > g.wallet.gasBalance;
  // (While a checkout is open, that is always why the gas is not there yet.)
  if (believed && (has(p.text, 'why') || has(p.text, 'should have') || g.checkouts.length)) {
    // Gas the asker expects and the wallet lacks: that is why it fails, and bought gas arrives only with the human's approval.
    const c = g.checkouts[0];
    lead = `Your wallet shows gasBalance ${g.wallet!.gasBalance}, not ${claimed}: ${c ? `your checkout ${c.sessionId} for ${c.gas} gas is still open — your human must approve it at ${c.checkoutUrl} before any gas arrives` : 'bought gas arrives only once your human approves the buy_gas checkout (get_checkout {} lists open ones); if they were charged and no gas came, report it with report_bug naming the sessionId'}.`;
    lines = [answer, ...lines];
    picked = { step: { tool: 'get_checkout', arguments: c ? { sessionId: c.sessionId } : {} }, lead, lines: [] };
  } else if (believed && short && pack && !lead.startsWith('Your wallet shows gasBalance')) {
    // (A balance the asker believes it holds, and the purchase it plans on it: what the wallet really lets it do leads.)
    lines = [answer, ...lines];
    lead = `Your wallet shows gasBalance ${g.wallet!.gasBalance}, not ${claimed}. ${short}`;
    picked = { step: { tool: 'buy_gas', arguments: { packId: pack.id } }, lead, lines: [] };
  } else {
    if (claimed !== null && g.wallet && claimed !== g.wallet.gasBalance) lines.unshift(`(Your wallet shows gasBalance ${g.wallet.gasBalance}, not ${claimed}.)`);
    if (short && !lead.startsWith('Your wallet shows gasBalance')) lines.unshift(short);
  }
  // No purchase at all while the question mentions one: a note after the answer (a claim of its own leads, below).
  // (A server fault's guide keeps the lead — check whether the call went through: the account's other purchase is a note after it.)
  // (Nor on a timer asked of a purchase the question only tells of, on an account with none: the timer is the answer.)
  const timerOnly = !!told && mismatch?.startsWith('I see no purchases');
  if (mismatch && ((!g.actual && !mismatch.startsWith('I see no purchase') && !stated && !p.statedClaim) || p.error?.code === 'internal' || timerOnly)) lines.unshift(`(${sentence(mismatch)}.)`);
  // (A pasted not_found already names what the account shows.)
  else if (mismatch && !pastWhy(p) && !(p.error?.code === 'not_found' && picked?.step?.tool === 'list_orders')) ({ lead, lines, picked } = accountFirst(p, g, r, terms, topic, mismatch, answer, lines));
  // A sale of the account that waits on the asker's own delivery while the question is about something else: said after the answer (undelivered, it is refunded, never paid).
  const forward = (x: { status: string }) => legalCalls(x.status, 'seller').find((t) => progress(t, x.status, 'seller') >= 2);
  const waiting = !g.purchase && !g.actual && !p.error ? (g.account?.purchases ?? []).find((x) => x.role === 'seller' && forward(x)) : undefined;
  const deliver = waiting && forward(waiting);
  if (waiting && deliver && !lead.includes(waiting.id)) lines.unshift(`Meanwhile ${waiting.id} (${waiting.status}) waits on your ${deliver} {"purchaseId":"${waiting.id}"${'delivery' in (getTool(deliver)?.params ?? {}) ? ',"delivery"' : ''}}.`);
  // Retrieved rule lines only fill an answer nothing else shaped (an intent, a purchase, an error, figures carry their own).
  const rules = ruleLines(r, [lead, ...lines].join(' '), picked?.step?.tool ?? null, topic || firm || num ? 0 : 1);
  // The suggested call is one the asker may make now, and never one the lead puts after another ("read it with get_delivery, then confirm_delivery").
  const on = g.actual ?? g.purchase;
  const mayNow = (tool: string) => tool !== 'ask_help' && !(isMachineTool(tool) && on && !on.legal.includes(tool)) && !(tool === 'request_cashout' && g.wallet && g.wallet.withdrawableGas < MIN_CASHOUT_GAS);
  const said = normalize(lead);
  const at = (t: string) => Math.min(...[`${t} {`, `with ${t}`, `try ${t}`, `call ${t}`].map((f) => said.indexOf(f)).filter((i) => i >= 0), Infinity);
  const before = picked?.step && picked.step.tool !== 'report_bug' && has(said, picked.step.tool) ? TOOL_NAMES.filter((t) => t !== picked!.step!.tool && ok(t) && mayNow(t) && at(t) < said.indexOf(picked!.step!.tool)).sort((x, y) => at(x) - at(y))[0] : undefined;
  if (before) picked = { ...picked!, step: { tool: before, arguments: argsFor(before, on ? { ...g, purchase: on } : g, p) } };
  else if (picked?.step && !mayNow(picked.step.tool)) picked = { ...picked, step: null };
  // Another buy_gas suggested while a checkout is open: the open one comes first (two approved checkouts buy twice).
  const c = g.checkouts[0];
  if (c && picked?.step?.tool === 'buy_gas' && ![lead, ...lines].some((l) => l.includes(c.sessionId))) {
    const open = openCheckout(g);
    lines.unshift(open.lead);
    picked = { ...picked, step: open.step };
  }
  const allowed = g.purchase ? [...g.purchase.legal] : r.tools.filter((t) => ok(t.tool)).slice(0, 5).map((t) => t.tool);
  if (picked?.step && !allowed.includes(picked.step.tool)) allowed.unshift(picked.step.tool);
  return { lead, lines: [...lines, ...rules.lines], nextStep: picked?.step ?? null, allowed, sources: [...new Set([...r.hits.slice(0, 2).map((h) => h.section), ...rules.used])] };
}

/** The text: the lead, then lines while they fit (a list may take more room). */
export function render(c: Composed, p: Parsed): string {
  const max = says(p, 'list') ? MAX_LIST_CHARS : MAX_ANSWER_CHARS;
  let out = c.lead;
  for (const l of c.lines) {
    if (out.length + l.length + 1 > max) continue;
    out += `\n${l}`;
  }
  // An unconfigured base URL is never shown: the path alone is the link.
  out = out.replace(/https?:\/\/(localhost|127\.0\.0\.1):0(?=\/)/g, '');
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

