/**
 * ask_help, step 5: the answer. One sentence that names the next call for the asker's side (with its
 * arguments), then at most a few short lines of the rule behind it, ≤ 700 characters unless a list is
 * asked. Numbers come from the market-rules functions. The lead call is chosen among the calls the
 * situation allows (the machine's, for a purchase) by how well the retrieval ranks them.
 */
import { errorGuide, exampleArguments, type KnowledgeSection, type NextStep } from '../../packages/knowledge';
import { CASHOUT_FEE_PERCENT, GAS_PACKS, MIN_CASHOUT_GAS, cashoutSplit, gasToUsd, saleSplit, smallestPackCovering, type MarketTerms } from '../../packages/market-rules';
import { STATES, TRANSITIONS, documentedTransitions, type PurchaseStatus } from '../../packages/contracts/purchase-machine';
import { getTool } from '../../packages/tool-catalogue';
import { KEY_AT_RISK } from '../../packages/knowledge/synonyms';
import { has, type Parsed, type Side } from './help-parse';
import { legalCalls, sideOfTool, type Grounded } from './help-ground';
import { distinctiveParts, names, type Retrieved } from './help-retrieve';

/** The question uses the tool's own word as such ("rate", "dispute"), not a form of it ("delivered"). */
const namesExactly = (text: string, tool: string) => distinctiveParts(tool).some((part) => has(text, part));

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

/** Words that point at one purchase of the asker's (then it is the subject, whatever else the question names). */
const THIS_PURCHASE = ['my order', 'this order', 'the order', 'my purchase', 'this purchase', 'this sale', 'my sale', 'this job'];

/** Words that say the asker reports a fault of the service (then, and only then, report_bug may lead). */
const FAULT_WORDS = ['bug', 'crash', 'broken', 'internal', 'server error', '500', 'charged twice', 'wrong balance', 'disappeared', 'lost my gas', 'glitch'];
/** A list is asked: the answer may be longer. */
const LIST_WORDS = ['list', 'all the', 'every', 'which tools', 'what tools', 'steps', 'step by step', 'walk me through', 'overview'];

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

const isMachineTool = (tool: string) => TRANSITIONS.some((t) => t.tool === tool);

function firstSentence(s: string): string {
  const m = /^(.+?[.!?])(\s|$)/.exec(s.replace(/\s+/g, ' '));
  return (m ? m[1] : s).trim();
}

/** The first sentences of a text, up to about `max` characters (a catalogue description's "what" and "how"). */
function firstSentences(s: string, max = 220): string {
  let out = '';
  for (const sentence of s.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+/)) {
    if (out && out.length + sentence.length > max) break;
    out = out ? `${out} ${sentence}` : sentence;
  }
  return out;
}

/** A value the asker fills in, valid for the schema (a search takes the question's own words). */
function placeholder(k: string, spec: { min?: number; description?: string }, p: Parsed): string {
  if (k === 'q') return p.text.split(/[^a-z0-9]+/).filter((w) => w.length >= 4 && !COMMON.has(w)).slice(0, 3).join(' ') || '…';
  let out = `<${k}>`;
  if (spec.min && out.length < spec.min) out = `<${k}: ${spec.description ?? ''}>`;
  while (spec.min && out.length < spec.min) out = out.replace(/>$/, ' …>');
  return out;
}

/** Arguments from the question and the account; an example's stock values never stand in for the asker's (an enum the question names is used, other free text is a placeholder). */
function argsFor(tool: string, g: Grounded, p: Parsed, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const params = (getTool(tool)?.params ?? {}) as Record<string, { type?: string; values?: readonly string[]; optional?: boolean }>;
  const args: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(exampleArguments(tool))) {
    const spec = params[k];
    const named = spec?.values?.find((x) => has(p.text, x));
    if (named) args[k] = named;
    else if (spec?.optional) continue;
    else args[k] = typeof v === 'string' && !spec?.values && !v.includes('…') ? placeholder(k, spec as { min?: number; description?: string }, p) : v;
  }
  if ('purchaseId' in args && (g.purchase?.id ?? p.purchaseIds[0])) args.purchaseId = g.purchase?.id ?? p.purchaseIds[0];
  if ('listingId' in args && p.listingIds[0]) args.listingId = p.listingIds[0];
  const side = g.side ?? p.side ?? (['sales', 'sold', 'orders came', 'new orders'].some((w) => has(p.text, w)) ? 'seller' : null);
  if ('role' in (getTool(tool)?.params ?? {}) && side) args.role = side;
  // A price the question names ("bump it to 200") is the one to set; the example's other fields go.
  if ('priceGas' in (getTool(tool)?.params ?? {}) && p.amounts.length && !('purchaseId' in args)) {
    args.priceGas = p.amounts[p.amounts.length - 1];
    delete args.status;
  }
  return { ...args, ...overrides };
}

/** A call as the lead names it: long example values are shortened (the full arguments are in nextStep). */
function call(step: NextStep): string {
  const args = Object.fromEntries(Object.entries(step.arguments).map(([k, v]) => [k, typeof v === 'string' && v.length > 40 ? '…' : v]));
  return `${step.tool} ${JSON.stringify(args)}`;
}

/** Words too common in the documentation to say which sentence answers. */
const COMMON = new Set(['the', 'and', 'for', 'you', 'your', 'how', 'what', 'can', 'does', 'with', 'this', 'that', 'are', 'was', 'not', 'get', 'whats', 'when', 'why', 'who', 'which', 'there', 'have', 'from', 'will', 'should', 'would', 'could', 'about', 'any', 'call', 'tool', 'use', 'want', 'need', 'here']);

/** Words that ask for the state's next step (then, and only then, the machine's progress decides the lead). */
const NEXT_WORDS = ['what now', 'what next', "what's next", 'next step', 'stuck', 'what do i do', 'what should i do', 'what can i do', 'nothing happened', 'nothing has happened', 'waiting'];

/** Words that ask what to do (the lead is a call); otherwise the question asks what something is (the lead is the rule). */
const ACTION_WORDS = ['how do i', 'how can i', 'how to', 'how should i', 'what should i', 'what do i do', 'what can i do', 'next step', 'what now', 'where do i', 'where can i', 'can i', 'should i', 'i want to', 'i need to', 'help', 'what next', 'anything else', 'fix', 'check', 'show me', 'where is', 'where are', 'want to', 'trying to'];

/** Sale → platform fee → cash-out fee, by the market rules, for the amounts the question states. */
/** The cheapest set of packs whose gas covers `gas` (each pack can be bought more than once). */
function cheapestPacks(gas: number): (typeof GAS_PACKS)[number][] {
  const best = new Map<number, { usd: number; packs: (typeof GAS_PACKS)[number][] }>([[0, { usd: 0, packs: [] }]]);
  const step = Math.min(...GAS_PACKS.map((x) => x.gas));
  for (let g = step; g < gas + step * 2; g += step) {
    let choice: { usd: number; packs: (typeof GAS_PACKS)[number][] } | null = null;
    for (const pack of GAS_PACKS) {
      const prev = best.get(Math.max(0, g - pack.gas));
      if (prev && (!choice || prev.usd + pack.usd < choice.usd || (prev.usd + pack.usd === choice.usd && prev.packs.length + 1 < choice.packs.length))) choice = { usd: prev.usd + pack.usd, packs: [...prev.packs, pack] };
    }
    if (choice) best.set(g, choice);
  }
  let answer = { usd: Infinity, packs: [] as (typeof GAS_PACKS)[number][] };
  for (const [g, v] of best) if (g >= gas && (v.usd < answer.usd || (v.usd === answer.usd && v.packs.length < answer.packs.length))) answer = v;
  return answer.packs.sort((a, b) => a.gas - b.gas);
}

/** The figures a question asks for, and the call that follows from them (null: none). */
interface Figures {
  text: string;
  tool: string | null;
  /** The call's arguments the figures decide. */
  args?: Record<string, unknown>;
}

function numbers(p: Parsed, terms: MarketTerms, priceGas: number | null): Figures | null {
  const t = p.text;
  const amount = p.amounts.find((n) => n >= 1) ?? (has(t, 'how much') ? (priceGas ?? undefined) : undefined);
  if (amount === undefined) return null;
  // "I have 150 and it costs 400" / "I need 2300": the cheapest packs that cover the shortfall.
  const sale = ['sale', 'sales', 'sell', 'sold', 'earn', 'earned', 'seller', 'selling', 'priced', 'job', 'sale_earn'].some((w) => has(t, w));
  // "my 200-gas job paid only 180": the seller's share of that price is the figure, not a shortfall.
  const [hi, lo] = [Math.max(...p.amounts), Math.min(...p.amounts)];
  if (sale && p.amounts.length >= 2 && saleSplit(hi, terms.platformFeePercent).sellerNetGas === lo) {
    return { text: `That is right: a ${hi}-gas sale pays the seller ${lo} gas; the platform keeps its ${terms.platformFeePercent}% fee (${hi - lo}) at completion.`, tool: null };
  }
  // Only sale earnings are cashable ("700 I bought and 500 from sale_earn"): the amount next to the sale words.
  const earned = /(\d[\d,]*)\s*(?:gas\s*)?(?:from|of|in|is|are)?\s*(?:sale_earn|sales?|earnings|earned)/.exec(t);
  if (earned && p.amounts.length >= 2 && /bought|buy_gas|purchased/.test(t)) {
    const n = Number(earned[1].replace(/,/g, ''));
    if (n < MIN_CASHOUT_GAS) return { text: `Only sale earnings are cashable (bought gas is not): ${n} gas is below the ${MIN_CASHOUT_GAS}-gas minimum.`, tool: null };
    const c = cashoutSplit(n);
    return { text: `Only sale earnings are cashable (bought gas is not): ${n} gas; the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}) leaves ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD in BTC.`, tool: 'request_cashout', args: { amountGas: n } };
  }
  if (['afford', 'short', 'enough', 'cheapest', 'need more', 'combination', 'which packs', 'i need'].some((w) => has(t, w)) && !sale) {
    const [have, need] = p.amounts.length >= 2 ? [Math.min(...p.amounts.slice(0, 2)), Math.max(...p.amounts.slice(0, 2))] : [0, amount];
    const packs = cheapestPacks(need - have);
    const list = [...new Set(packs)].map((x) => `${packs.filter((y) => y === x).length > 1 ? `${packs.filter((y) => y === x).length} × ` : ''}${x.id} (${x.gas} gas, ${x.usd} USD)`).join(' + ');
    const usd = packs.reduce((a, x) => a + x.usd, 0);
    return {
      text: `You need ${need - have} more gas: the cheapest cover is ${list} = ${usd} USD${packs.length > 1 ? ', one buy_gas checkout each' : ''}; your human approves each checkoutUrl, then poll wallet.`,
      tool: 'buy_gas',
      args: { packId: packs[packs.length - 1]?.id },
    };
  }
  if (['fee', 'on top'].some((w) => has(t, w)) && ['as the buyer', 'as a buyer', 'do i pay', 'buyer pay', 'on top'].some((w) => has(t, w))) {
    const s = saleSplit(amount, terms.platformFeePercent);
    return { text: `No: the buyer pays exactly the price (${amount} gas); the ${terms.platformFeePercent}% fee (${s.platformFeeGas}) comes out of the seller's side, who nets ${s.sellerNetGas}.`, tool: null };
  }
  if (['dollar', 'dollars', 'usd', 'in $', 'worth'].some((w) => has(t, w)) && !['fee', 'cash out', 'sale'].some((w) => has(t, w))) {
    return { text: `${amount} gas = ${gasToUsd(amount).toFixed(2)} USD (gas is pegged to the dollar: 1 gas = 1 US cent).`, tool: null };
  }
  const cashout = ['cash out', 'cash-out', 'cashout', 'withdraw', 'payout', 'cashing out', 'btc', 'bitcoin'].some((w) => has(t, w)) || (has(t, 'cash') && has(t, 'out'));
  const fee = ['fee', 'fees', 'how much', 'how many', 'net', 'end up', 'receive', 'commission', 'cut', 'pocket', 'platform take', 'platform keep', 'do i get', 'do i keep'].some((w) => has(t, w));
  if (!fee && !cashout) return null;
  const below = (n: number) => `${n} gas is below the ${MIN_CASHOUT_GAS}-gas cash-out minimum, so it cannot be cashed out yet.`;
  // "3 sales at 200 gas each": the earnings of all of them.
  const times = ['twice', 'two times'].some((w) => has(t, w)) ? 2 : ['three times', 'thrice'].some((w) => has(t, w)) ? 3 : null;
  const many = /(\d+) (?:[a-z]+ )?(?:sales|jobs|orders) (?:at|of) (\d+)/.exec(t) ?? (times ? ['', String(times), String(amount)] : null);
  if (sale && many && Number(many[2]) === amount) {
    const s = saleSplit(amount, terms.platformFeePercent);
    const total = Number(many[1]) * s.sellerNetGas;
    const head = `${many[1]} sales at ${amount} gas pay the seller ${many[1]} × ${s.sellerNetGas} = ${total} gas (the platform keeps ${terms.platformFeePercent}% of each).`;
    if (!cashout) return { text: head, tool: null };
    if (total < MIN_CASHOUT_GAS) return { text: `${head} ${below(total)}`, tool: null };
    const c = cashoutSplit(total);
    return { text: `${head} Cashing out ${total} costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas (${gasToUsd(c.netGas).toFixed(2)} USD in BTC).`, tool: 'request_cashout', args: { amountGas: total } };
  }
  if (sale) {
    const s = saleSplit(amount, terms.platformFeePercent);
    const head = `A ${amount}-gas sale pays the seller ${s.sellerNetGas} gas (the platform keeps ${terms.platformFeePercent}% = ${s.platformFeeGas}).`;
    if (has(t, 'how many')) {
      const n = Math.ceil(MIN_CASHOUT_GAS / s.sellerNetGas);
      return { text: `${head} ${n} sales (${n * s.sellerNetGas} gas) reach the ${MIN_CASHOUT_GAS}-gas cash-out minimum; ${n - 1} make only ${(n - 1) * s.sellerNetGas}.`, tool: null };
    }
    if (!cashout) return { text: head, tool: null };
    if (s.sellerNetGas < MIN_CASHOUT_GAS) return { text: `${head} ${below(s.sellerNetGas)}`, tool: null };
    const c = cashoutSplit(s.sellerNetGas);
    return { text: `${head} Cashing out those ${s.sellerNetGas} costs the ${CASHOUT_FEE_PERCENT}% cash-out fee (${c.feeGas}), so you end up with ${c.netGas} gas (${gasToUsd(c.netGas).toFixed(2)} USD in BTC).`, tool: 'request_cashout', args: { amountGas: s.sellerNetGas } };
  }
  if (cashout) {
    if (amount < MIN_CASHOUT_GAS) return { text: below(amount), tool: null };
    const c = cashoutSplit(amount);
    return { text: `Cashing out ${amount} gas costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD in BTC.`, tool: 'request_cashout', args: { amountGas: amount } };
  }
  return null;
}

/** The best sentences of the retrieved sections for the question (not repeating the lead), a few. */
function ruleLines(r: Retrieved, p: Parsed, lead: string, tool: string | null, max: number): { lines: string[]; used: KnowledgeSection[] } {
  const words = new Set(r.query.split(/[^a-z0-9_]+/).filter((w) => w.length >= 3 && !COMMON.has(w)));
  const scored: Array<{ s: string; score: number; sec: KnowledgeSection }> = [];
  for (const [i, h] of r.hits.slice(0, 4).entries()) {
    for (const s of h.section.body.split(/\n+|(?<=[.!?])\s+(?=[A-Z])/)) {
      let line = s.replace(/^[-\d.]+\s*/, '').replace(/^(Next step|Cause): /, '').trim();
      if (line.length > 330) line = line.split(/(?<=[.;])\s/)[0];
      if (line.length < 25 || line.length > 330 || line.includes('{"') || line.includes('":') || line.includes('}}') || line.startsWith('Example call') || line.startsWith('Arguments') || lead.includes(line)) continue;
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
function forError(p: Parsed, g: Grounded): { step: NextStep | null; lead: string; lines: string[] } | null {
  const e = p.error!;
  const guide = errorGuide(e.code);
  if (!guide) return null;
  const got = e.requestId && e.message ? `Your request ${e.requestId} failed with HTTP ${guide.status} ${e.code}: ${e.message}` : null;
  const withGot = <T extends { lines: string[] } | null>(x: T): T => (x && got ? { ...x, lines: [got, ...x.lines] } : x);
  return withGot(errorLead(p, g, e, guide));
}

function errorLead(p: Parsed, g: Grounded, e: NonNullable<Parsed['error']>, guide: NonNullable<ReturnType<typeof errorGuide>>): { step: NextStep | null; lead: string; lines: string[] } | null {
  const d = e.details;
  if (e.code === 'insufficient_gas') {
    const short = Number(d.shortfallGas ?? (Number(d.requiredGas) - Number(d.balanceGas)));
    const pack = smallestPackCovering(Number.isFinite(short) && short > 0 ? short : (p.amounts[0] ?? 1));
    if (g.checkouts.length) return openCheckout(g);
    const step = { tool: 'buy_gas', arguments: { packId: pack.id } };
    return { step, lead: `Buy gas: call ${call(step)} (${pack.gas} gas covers${Number.isFinite(short) && short > 0 ? ` the shortfall of ${short}` : ' it'}), have your human approve the checkoutUrl, poll wallet until gasBalance rises, then retry purchase_service with the same Idempotency-Key.`, lines: ['Nothing was held or charged by the refused purchase.'] };
  }
  const rule = typeof d.rule === 'string' ? d.rule : null;
  if (e.code === 'forbidden' && (rule || has(p.text, 'limit') || has(p.text, 'budget') || has(p.text, 'human'))) return spendingLimit(g, rule);
  if ((e.code === 'invalid_state' || e.code === 'forbidden') && g.purchase) return null; // the purchase's own calls answer it
  if (e.code === 'internal') {
    const step = { tool: 'report_bug', arguments: { title: 'A call answered 500 internal', description: 'Describe the call and what happened.', context: { requestId: e.requestId ?? 'req_…' } } };
    return { step, lead: `Retry once with the same Idempotency-Key; if it fails again, call ${call(step)}.`, lines: ['No partial money movement is left behind: gas moves are all-or-nothing.'] };
  }
  const tool = guide.nextStep.tool === 'ask_help' ? (p.tools[0] ?? null) : guide.nextStep.tool;
  const step = tool ? { tool, arguments: tool === guide.nextStep.tool ? guide.nextStep.arguments : exampleArguments(tool) } : null;
  return { step, lead: `${e.code} (HTTP ${guide.status}): ${guide.nextStepText}`, lines: [firstSentence(guide.cause)] };
}

/** The asker's key at risk (leaked, or someone asks for it): no key-rotation tool exists, so check and report. */
function keyAtRisk(p: Parsed) {
  const asked = ['claiming to be', 'claims to be', 'platform support', 'phishing', 'asking for', 'need my', 'wants my', 'asked for'].some((w) => has(p.text, w));
  const step = { tool: 'report_bug', arguments: { title: asked ? 'Phishing: an agent asked for my API key' : 'My API key may be compromised', description: 'What happened and when (never include the key itself).', severity: 'high' } };
  const lead = asked
    ? `Do not share it: that is phishing — platform support never asks for your API key; it only goes in the Authorization header of your own calls. Report it with ${call(step)}.`
    : `Check wallet {} and list_orders {} for activity you did not make, then report it with ${call(step)} (never include the key).`;
  return { step, lead, lines: [asked ? 'Set up payouts yourself with connect_payouts; nobody needs your key for that.' : 'There is no key-rotation tool; the report reaches the operator.'] };
}

function spendingLimit(g: Grounded, rule: string | null) {
  const l = g.limits;
  const parts: string[] = [];
  if (l?.setByHuman) {
    if (l.perPurchaseMaxGas !== null) parts.push(`at most ${l.perPurchaseMaxGas} gas per purchase`);
    if (l.remainingTodayGas !== null) parts.push(`${l.remainingTodayGas} gas left today`);
    if (l.remainingThisWeekGas !== null) parts.push(`${l.remainingThisWeekGas} gas left this week`);
    if (l.allowedCategories) parts.push(`categories ${l.allowedCategories.join(', ')}`);
  }
  const step = { tool: 'wallet', arguments: {} };
  return {
    step,
    lead: `That refusal is your human's spending limit${rule ? ` (${rule})` : ''}, not your balance: read spendingLimits with wallet {} and buy within it, or ask your human to change it — only they can.`,
    lines: [
      parts.length ? `Your account shows limits: ${parts.join('; ')}.` : 'A purchase over a limit answers 403 forbidden with error.details.rule and remainingGas; nothing is held.',
      'Gas in your wallet does not lift a limit.',
    ],
  };
}

function openCheckout(g: Grounded) {
  const c = g.checkouts[0];
  const step = { tool: 'get_checkout', arguments: { sessionId: c.sessionId } };
  return {
    step,
    lead: `You already have an open checkout ${c.sessionId} for ${c.gas} gas: have your human approve it at ${c.checkoutUrl}, then poll wallet until gasBalance rises (get_checkout ${JSON.stringify(step.arguments)} shows it again).`,
    lines: [`It expires at ${c.expiresAt.slice(0, 16).replace('T', ' ')} UTC; an unapproved checkout costs nothing. Start another with buy_gas only if you need more gas.`],
  };
}

/** The lead call for a purchase the question is about: the best-ranked call this side may make now. */
function forPurchase(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms): { step: NextStep | null; lead: string; lines: string[] } {
  const f = g.purchase!;
  const side: Side | null = f.side;
  const score = new Map(r.tools.map((t) => [t.tool, t.score]));
  const candidates = new Set<string>(f.legal);
  // Besides the machine's calls: the catalogue's other calls on a purchase (they take a purchaseId), for this side.
  for (const t of r.tools) if (!isMachineTool(t.tool) && t.score >= 0.3 && 'purchaseId' in (getTool(t.tool)?.params ?? {}) && (!side || !sideOfTool(t.tool) || sideOfTool(t.tool) === side)) candidates.add(t.tool);
  // A delivered purchase's buyer reads the work before confirming it.
  if (side === 'buyer' && TRANSITIONS.some((t) => t.trigger === 'deliver' && t.to === f.state)) candidates.add('get_delivery');
  // The question's intent picks the call; the state's usual next call leads only for "what now?" (or when nothing else ranks).
  const whatNow = NEXT_WORDS.some((w) => has(p.text, w)) || !r.tools.some((t) => candidates.has(t.tool) && t.score >= 0.3);
  const ranked = [...candidates]
    .map((tool) => ({ tool, s: (score.get(tool) ?? 0) * (f.legal.includes(tool) || !isMachineTool(tool) ? 1 : 0.8) + (whatNow ? 0.15 * progress(tool, f.state, side) : 0) + (has(p.text, tool) ? 0.5 : 0) }))
    .sort((a, b) => b.s - a.s);
  const who = side ? `you are the ${side}` : 'your side';
  const id = f.id ?? 'your purchase';
  const lines: string[] = [];
  const asked = r.tools.find((t) => isMachineTool(t.tool) && !f.legal.includes(t.tool) && (p.tools.includes(t.tool) || namesExactly(p.text, t.tool)));
  // An exit (refund, dispute: a call that moves the purchase away from payment) leads only when the
  // question names it; with no other call, the asker reads where the purchase stands.
  const exitNotAsked = (tool: string) => isMachineTool(tool) && progress(tool, f.state, side) === 0 && !names(r.query, tool);
  const best = ranked.find((x) => !exitNotAsked(x.tool)) ?? (ranked.length ? { tool: 'get_purchase', s: 0 } : undefined);
  if (asked && (!best || best.tool !== asked.tool)) {
    const whose = sideOfTool(asked.tool);
    lines.push(`${asked.tool} is not possible now: ${whose && side && whose !== side ? `only the ${whose} calls it` : `${id} is ${f.state}`}.`);
  }
  const stateLine = `${id}${f.title ? ` (“${f.title}”` + (f.priceGas ? `, ${f.priceGas} gas)` : ')') : ''} is ${f.state}; ${who}${!whatNow ? '' : f.legal.length ? ` and may call ${f.legal.join(', ')}` : ' and no call can change it now'}.`;
  lines.push(stateLine, ...f.deadlines.map((d) => `${d[0].toUpperCase()}${d.slice(1)}.`));
  if (!best) {
    const next = (STATES as Record<string, { next: string }>)[f.state]?.next;
    return { step: null, lead: `Nothing more can be done with ${id}: it is ${f.state}.`, lines: next ? [next] : [] };
  }
  const step = { tool: best.tool, arguments: argsFor(best.tool, g, p) };
  // What the call does from this state for this side: the machine's documented transition, else the catalogue's description.
  const doc = documentedTransitions(terms).find((t) => t.trigger === best.tool && (!side || t.who.includes(side)) && t.from.includes(f.state));
  const desc = doc ? `${f.state} → ${doc.to}.` : firstSentence(getTool(best.tool)?.description ?? '').replace(/^(Buyer|Seller)[^:]*:\s*/, '');
  return { step, lead: `As the ${side ?? 'party'} of ${id}, call ${call(step)}: ${desc.charAt(0).toLowerCase()}${desc.slice(1)}`, lines };
}

export function compose(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms): Composed {
  const fault = FAULT_WORDS.some((w) => has(p.text, w)) || p.error?.code === 'internal';
  const side = g.side;
  const ok = (tool: string) =>
    tool !== 'ask_help' && (tool !== 'report_bug' || fault) && !(side && sideOfTool(tool) && sideOfTool(tool) !== side) && !(getTool(tool)?.aliasOf);
  const num = p.pasted || p.error ? null : numbers(p, terms, g.purchase?.priceGas ?? null);
  let picked: { step: NextStep | null; lead: string; lines: string[] } | null = null;
  if (p.error) picked = forError(p, g);
  if (!p.error && KEY_AT_RISK.some((w) => has(p.text, w))) picked = keyAtRisk(p);
  // A purchase is the subject unless the question is plainly about something else (cash-out, a listing …).
  const top = r.tools[0]?.tool;
  const aboutPurchase = !!g.purchase && (p.purchaseIds.length > 0 || THIS_PURCHASE.some((w) => has(p.text, w)) || !top || isMachineTool(top) || 'purchaseId' in (getTool(top)?.params ?? {}) || (r.tools[0]?.score ?? 0) < 0.8);
  if (!picked && aboutPurchase) picked = forPurchase(p, g, r, terms);
  /** The situation decided the lead (an error, a purchase, a limit, an open checkout): it leads whatever the wording. */
  let firm = !!picked;
  if (!picked) {
    const best = r.tools.find((t) => ok(t.tool));
    firm = true;
    if (g.checkouts.length && !has(p.text, 'expired') && (best?.tool === 'buy_gas' || has(p.text, 'checkout') || names(p.text, 'get_checkout'))) picked = openCheckout(g);
    else if (has(p.text, 'spending limit') || ['limit', 'budget', 'refused', 'set something up'].filter((w) => has(p.text, w)).length >= 2 || (g.limits?.setByHuman && has(p.text, 'refused'))) picked = spendingLimit(g, null);
    else firm = false;
    if (!firm && best) {
      const isMachine = isMachineTool(best.tool);
      // A purchase call with nothing to fire it on: name it, but suggest it only when the account cannot say.
      const step = { tool: best.tool, arguments: argsFor(best.tool, g, p) };
      const desc = firstSentences(getTool(best.tool)?.description ?? '');
      picked = { step: isMachine && g.account?.purchases && !g.account.purchases.some((x) => legalCalls(x.status, (x.role as Side) ?? null).includes(best.tool)) && g.account.purchases.length ? null : step, lead: `Call ${call(step)}: ${desc}`, lines: [] };
    }
  }
  const action = firm || ACTION_WORDS.some((w) => has(p.text, w));
  // Figures lead; the call after them is the one they lead to (never an unrelated one).
  if (num && !firm) {
    const step = num.tool ? { tool: num.tool, arguments: argsFor(num.tool, g, p, num.args ?? {}) } : null;
    picked = step ? { step, lead: `Call ${call(step)}: ${firstSentences(getTool(step.tool)?.description ?? '')}`, lines: [] } : null;
  }
  const info = num?.text ?? (action ? null : ruleLines(r, p, '', null, 1).lines[0] ?? null);
  const lead = info ?? picked?.lead ?? 'I could not find this in the documentation; ask with the tool name or the error code you got.';
  // An informational answer names a next call only when it follows from it (figures that lead to a call, or a question asking what to do).
  if (info && picked && !firm && !num?.tool && !action) picked = null;
  const lines = info && picked ? [picked.lead.replace(/^Call /, 'Next: '), ...picked.lines] : (picked?.lines ?? []);
  if (g.mismatch) lines.unshift(`(${g.mismatch[0].toUpperCase()}${g.mismatch.slice(1)}; I answered what you describe.)`);
  const rules = ruleLines(r, p, [lead, ...lines].join(' '), picked?.step?.tool ?? null, lines.length >= 3 ? 1 : 2);
  const allowed = g.purchase ? [...g.purchase.legal] : r.tools.filter((t) => ok(t.tool)).slice(0, 5).map((t) => t.tool);
  if (picked?.step && !allowed.includes(picked.step.tool)) allowed.unshift(picked.step.tool);
  return { lead, lines: [...lines, ...rules.lines], nextStep: picked?.step ?? null, allowed, sources: [...new Set([...r.hits.slice(0, 2).map((h) => h.section), ...rules.used])] };
}

/** The text: the lead, then lines while they fit (a list may take more room). */
export function render(c: Composed, p: Parsed): string {
  const max = LIST_WORDS.some((w) => has(p.text, w)) ? MAX_LIST_CHARS : MAX_ANSWER_CHARS;
  let out = c.lead;
  for (const l of c.lines) {
    if (out.length + l.length + 1 > max) continue;
    out += `\n${l}`;
  }
  // An unconfigured base URL is never shown: the path alone is the link.
  out = out.replace(/https?:\/\/(localhost|127\.0\.0\.1):0(?=\/)/g, '');
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

export { type PurchaseStatus };
