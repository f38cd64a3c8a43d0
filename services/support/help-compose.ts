/**
 * ask_help, step 5: the answer. One sentence that names the next call for the asker's side (with its
 * arguments), then at most a few short lines of the rule behind it, ≤ 700 characters unless a list is
 * asked. Numbers come from the market-rules functions. The lead call is chosen among the calls the
 * situation allows (the machine's, for a purchase) by how well the retrieval ranks them.
 */
import { errorGuide, exampleArguments, type KnowledgeSection, type NextStep } from '../../packages/knowledge';
import { CASHOUT_FEE_PERCENT, CATEGORY_ANCHOR_GAS, GAS_PACKS, PRICE_BANDS, MIN_CASHOUT_GAS, MIN_PRICE_GAS, REFERRAL_BONUS_GAS, REFERRAL_WEEKLY_CAP, cashoutSplit, cheapestPacksCovering, gasToUsd, priceForNet, saleSplit, smallestPackCovering, type MarketTerms } from '../../packages/market-rules';
import { STATES, TRANSITIONS, documentedTransitions } from '../../packages/contracts/purchase-machine';
import { getTool } from '../../packages/tool-catalogue';
import { CATEGORY_WORDS } from '../../packages/knowledge/synonyms';
import { has, normalize, type Parsed, type Side } from './help-parse';
import { legalCalls, sideOfTool, type Grounded } from './help-ground';
import { distinctiveParts, names, type Retrieved } from './help-retrieve';
import type { Intent } from './help-intent';
import type { Topic } from '../../packages/knowledge/topics';

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
    // An enum the question names; else its catch-all ("other") rather than an example's stock value.
    const named = spec?.values?.find((x) => has(p.text, x)) ?? spec?.values?.find((x) => x === 'other');
    if (named) args[k] = named;
    else if (spec?.optional) continue;
    else if (v && typeof v === 'object' && !Array.isArray(v)) args[k] = Object.fromEntries(Object.keys(v).map((f) => [f, `<${f}>`]));
    else args[k] = typeof v === 'string' && !spec?.values && !v.includes('…') ? placeholder(k, spec as { min?: number; description?: string }, p) : v;
  }
  if ('purchaseId' in args && (g.purchase?.id ?? p.purchaseIds[0])) args.purchaseId = g.purchase?.id ?? p.purchaseIds[0];
  if ('listingId' in args && p.listingIds[0]) args.listingId = p.listingIds[0];
  const agent = /\bagt_\w+/.exec(p.text)?.[0];
  if (agent && 'referredBy' in (getTool(tool)?.params ?? {})) args.referredBy = agent;
  const side = g.side ?? p.side ?? (['sales', 'sold', 'orders came', 'new orders'].some((w) => has(p.text, w)) ? 'seller' : null);
  if ('role' in (getTool(tool)?.params ?? {}) && side) args.role = side;
  const stars = /\b([1-5]) ?(?:stars?|\/ ?5|out of 5)\b/.exec(p.text);
  if ('rating' in args && stars) args.rating = Number(stars[1]);
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

/** The figures a question asks for, and the call that follows from them (null: none). */
interface Figures {
  text: string;
  /** Earnings the question says the asker holds now (checked against the wallet). */
  claims?: number;
  tool: string | null;
  /** The call's arguments the figures decide. */
  args?: Record<string, unknown>;
}

function numbers(p: Parsed, terms: MarketTerms, priceGas: number | null, side: Side | null): Figures | null {
  const t = p.text;
  const minimumAsked = ['minimum', 'min'].some((w) => has(t, w)) && ['cash out', 'cash-out', 'cashout', 'withdraw'].some((w) => has(t, w));
  // "10 jobs at 200 gas each": the price is the amount, the count multiplies it.
  const many = /(\d+) (?:[a-z]+ )?(?:sales|jobs|orders) (?:at|of) (\d[\d,]*)/.exec(t);
  const amount = (many ? Number(many[2].replace(/,/g, '')) : undefined) ?? p.amounts.find((n) => n >= 1) ?? (minimumAsked ? MIN_CASHOUT_GAS : has(t, 'how much') ? (priceGas ?? undefined) : undefined);
  const cashout = ['cash out', 'cash-out', 'cashout', 'withdraw', 'payout', 'cashing out', 'btc', 'bitcoin', 'cash the', 'cash it'].some((w) => has(t, w)) || (has(t, 'cash') && has(t, 'out')) || p.tools.includes('request_cashout');
  const connectFirst = ['never set up', 'not set up', 'no payout address', 'set up payouts', 'btc address', 'first time'].some((w) => has(t, w));
  const cashoutCall = (n: number) => (connectFirst ? { tool: 'connect_payouts', args: {} } : { tool: 'request_cashout', args: { amountGas: n } });
  // Bought gas is spending money: it never cashes out, whatever the amount.
  if (cashout && /bought|buy_gas|purchased|the pack|builder pack|starter pack|fleet pack|from a pack/.test(t)) {
    return { text: `No: bought gas cannot be cashed out — only sale earnings (sale_earn) are withdrawable. Spend it with purchase_service; it stays in your wallet.`, tool: null };
  }
  // "What should I charge for a CSV cleanup?": the category's anchor and the band for a first listing.
  const asksPrice = ['what should i charge', 'what to charge', 'how much should i charge', 'what price', 'should i price', 'price it', 'how should i price', 'what should i ask'].some((w) => has(t, w));
  const category = Object.keys(CATEGORY_WORDS).filter((w) => has(t, w)).sort((a, b) => b.length - a.length)[0];
  if (asksPrice && category && amount === undefined) {
    const c = CATEGORY_WORDS[category];
    const fits = PRICE_BANDS.filter((b) => CATEGORY_ANCHOR_GAS[c] >= b.minGas && CATEGORY_ANCHOR_GAS[c] <= b.maxGas);
    const band = fits.find((b) => 'note' in b) ?? fits[0];
    const note = band && 'note' in band ? `, ${band.note}` : '';
    return { text: `As a ${c} listing, price near the ${c} anchor of ${CATEGORY_ANCHOR_GAS[c]} gas${band ? ` (${band.id} band ${band.minGas}–${band.maxGas}${note})` : ''}; the minimum is ${MIN_PRICE_GAS} gas.`, tool: 'list_service', args: { priceGas: CATEGORY_ANCHOR_GAS[c], category: c } };
  }
  // "I referred 14 agents": the bonus per first purchase, up to the weekly cap.
  const referred = /(\d+) (?:new |other )?(?:agents|referrals|friends)/.exec(t);
  if (['referred', 'referral', 'referrals', 'refer'].some((w) => has(t, w)) && referred) {
    // "7 referred, 4 of them bought": only those who made a first purchase count.
    const bought = /(\d+) (?:of them )?(?:go on to |went on to |have |actually |then )?(?:buy|bought|purchase|made)/.exec(t);
    const n = Number((bought ?? referred)[1]);
    const paid = Math.min(n, REFERRAL_WEEKLY_CAP);
    return { text: `${paid} × ${REFERRAL_BONUS_GAS} = ${paid * REFERRAL_BONUS_GAS} gas: each referred agent's first purchase_service pays you ${REFERRAL_BONUS_GAS} gas, at most ${REFERRAL_WEEKLY_CAP} per 7 days${n > REFERRAL_WEEKLY_CAP ? ` (the other ${n - REFERRAL_WEEKLY_CAP} do not count this week)` : ''}.`, tool: 'wallet' };
  }
  if (amount === undefined) return null;
  // "I have 150 and it costs 400" / "I need 2300": the cheapest packs that cover the shortfall.
  const sale = ['sale', 'sales', 'sell', 'sold', 'earn', 'earned', 'seller', 'selling', 'priced', 'job', 'sale_earn', 'i list', 'list it', 'listing at', 'list something', 'do i keep', 'i keep', 'seller get', 'seller gets', 'i net', 'do i net'].some((w) => has(t, w)) || side === 'seller';
  // Earnings the question states ("sale_earn total 675", "432 of earnings"): cashed out as they are, no platform fee again.
  const earned = /(?:sale_earn|earnings|earned)(?: total| of| is| are|:)*\s*(\d[\d,]*)/.exec(t) ?? /(\d[\d,]*)\s*(?:gas\s*)?(?:from|of|in)?\s*(?:sale_earn|earnings)/.exec(t);
  if (earned && cashout) {
    const n = Number(earned[1].replace(/,/g, ''));
    const also = /bought|buy_gas|purchased|pack/.test(t) ? ' (bought gas is not cashable)' : '';
    if (n < MIN_CASHOUT_GAS) return { text: `You have ${n} gas of sale earnings${also}: ${MIN_CASHOUT_GAS - n} short of the ${MIN_CASHOUT_GAS}-gas cash-out minimum — complete more sales, then request_cashout.`, tool: null };
    const c = cashoutSplit(n);
    const call = cashoutCall(n);
    const hypothetical = ['if ', 'once ', 'planning', 'say ', 'would', 'when i'].some((w) => t.includes(w));
    return { claims: hypothetical ? undefined : n, text: `${connectFirst ? 'Call connect_payouts {"btcAddress"} first, then request_cashout: ' : ''}cashing out your ${n} gas of sale earnings${also} costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD in BTC.`, tool: call.tool, args: call.args };
  }
  // "my 200-gas job paid only 180": the seller's share of that price is the figure, not a shortfall.
  const [hi, lo] = [Math.max(...p.amounts), Math.min(...p.amounts)];
  if (sale && p.amounts.length >= 2 && saleSplit(hi, terms.platformFeePercent).sellerNetGas === lo) {
    return { text: `That is right: a ${hi}-gas sale pays the seller ${lo} gas; the platform keeps its ${terms.platformFeePercent}% fee (${hi - lo}) at completion.`, tool: null };
  }
  // "How much is held, and how much comes back on a refund?": the whole price, both ways (the fee is taken only at completion).
  if (['held', 'escrow'].some((w) => has(t, w)) && ['refund', 'back'].some((w) => has(t, w)) && !sale) {
    return { text: `All ${amount} gas is held in escrow from the purchase; a refund returns all ${amount} to the buyer — the ${terms.platformFeePercent}% fee is taken only when the purchase completes.`, tool: null };
  }
  // A price below the minimum ("list it at 5 gas").
  if (amount < MIN_PRICE_GAS && ['price', 'charge', 'list', 'listing', 'sell'].some((w) => has(t, w))) {
    return { text: `No: the minimum price is ${MIN_PRICE_GAS} gas (list_service refuses less with invalid_arguments).`, tool: null };
  }
  // "Which band is a 350-gas listing?": the band, and the category's anchor when the question names one.
  const netAsked = ['net', 'seller get', 'seller gets', 'do i get', 'do i keep', 'receive', 'usd', 'dollars'].some((w) => has(t, w));
  const band = has(t, 'band') && !netAsked ? PRICE_BANDS.find((b) => amount >= b.minGas && amount <= b.maxGas) : undefined;
  if (band) {
    const c = category ? CATEGORY_WORDS[category] : null;
    return { text: `${amount} gas is in the ${band.id} band (${band.minGas}–${band.maxGas}${'note' in band ? `, ${band.note}` : ''})${c ? `; the ${c} anchor is ${CATEGORY_ANCHOR_GAS[c]} gas` : ''}.`, tool: null };
  }
  // "I want to end up with 1000 net from one sale: what price?": the smallest price whose net after both fees reaches it.
  if (sale || has(t, 'list at') || has(t, 'price')) {
    if (['end up with', 'net', 'take home', 'receive', 'pocket', 'clear', 'earned', 'got paid', 'was paid'].some((w) => has(t, w)) && ['what price', 'which price', 'should i charge', 'do i need to charge', 'price do i', 'how much should i', 'what was the', 'listing price', 'original price', 'price was'].some((w) => has(t, w))) {
      const afterCashout = cashout || ['cash-out fee', 'cashout fee', 'both', 'after cash'].some((w) => has(t, w));
      const price = priceForNet(amount, terms.platformFeePercent, afterCashout);
      const sn = saleSplit(price, terms.platformFeePercent).sellerNetGas;
      return { text: `List at ${price} gas: the seller nets ${sn} after the ${terms.platformFeePercent}% platform fee${afterCashout ? `, and cashing that out (${CASHOUT_FEE_PERCENT}% fee) leaves ${cashoutSplit(sn).netGas} gas` : ''} — the lowest price that reaches ${amount}.`, tool: 'list_service', args: { priceGas: price } };
    }
  }
  // "With the builder pack, how many 150-gas services can I buy?": the pack's gas over the price (the buyer pays no fee).
  const pack = GAS_PACKS.find((x) => has(t, x.id));
  if (pack && has(t, 'how many') && amount !== pack.gas) {
    const n = Math.floor(pack.gas / amount);
    return { text: `${n} purchases: ${pack.id} is ${pack.gas} gas for ${pack.usd} USD, and each ${amount}-gas purchase costs exactly ${amount} (the buyer pays no fee on top), leaving ${pack.gas - n * amount} gas.`, tool: 'buy_gas', args: { packId: pack.id } };
  }
  if (['afford', 'short', 'enough', 'cheapest', 'need more', 'combination', 'which packs', 'which pack', 'covers', 'cover', 'i need'].some((w) => has(t, w)) && !sale) {
    // "I have 150 and it costs 400" → 250 short; "services at 250, 400 and 1000, I have 0" → their sum.
    const haveMatch = /i (?:have|hold|got) (?:roughly |about |only )?(\d[\d,]*)/.exec(t);
    const have = haveMatch ? Number(haveMatch[1].replace(/,/g, '')) : p.amounts.length === 2 ? Math.min(...p.amounts) : 0;
    const wanted = p.amounts.filter((a) => a !== have || !haveMatch);
    const need = wanted.length >= 3 ? wanted.reduce((a, b) => a + b, 0) : Math.max(...wanted, amount);
    if (['single pack', 'one pack'].some((w) => has(t, w))) {
      const pack = smallestPackCovering(need - have);
      return { text: `${need} gas in all (the buyer pays no fee on top): ${pack.id} (${pack.gas} gas, ${pack.usd} USD) covers it and leaves ${pack.gas + have - need} gas.`, tool: 'buy_gas', args: { packId: pack.id } };
    }
    const packs = cheapestPacksCovering(need - have);
    const list = [...new Set(packs)].map((x) => `${packs.filter((y) => y === x).length > 1 ? `${packs.filter((y) => y === x).length} × ` : ''}${x.id} (${x.gas} gas, ${x.usd} USD)`).join(' + ');
    const usd = packs.reduce((a, x) => a + x.usd, 0);
    return {
      text: `${['dollar', 'dollars', 'usd', '$'].some((w) => t.includes(w)) ? `${need} gas = ${gasToUsd(need).toFixed(2)} USD. ` : ''}You need ${need - have} more gas: the cheapest cover is ${list} = ${usd} USD${packs.length > 1 ? ', one buy_gas checkout each' : ''}; your human approves each checkoutUrl, then poll wallet.`,
      tool: 'buy_gas',
      args: { packId: packs[packs.length - 1]?.id },
    };
  }
  if (['fee', 'on top'].some((w) => has(t, w)) && ['as the buyer', 'as a buyer', 'do i pay', 'buyer pay', 'on top'].some((w) => has(t, w))) {
    const s = saleSplit(amount, terms.platformFeePercent);
    return { text: `No: the buyer pays exactly the price (${amount} gas); the ${terms.platformFeePercent}% fee (${s.platformFeeGas}) comes out of the seller's side, who nets ${s.sellerNetGas}.`, tool: null };
  }
  if (['dollar', 'dollars', 'usd', 'in $', 'worth'].some((w) => has(t, w)) && !sale && !['fee', 'cash out'].some((w) => has(t, w))) {
    return { text: `${amount} gas = ${gasToUsd(amount).toFixed(2)} USD (gas is pegged to the dollar: 1 gas = 1 US cent).`, tool: null };
  }
  const fee = ['seller get', 'seller gets', 'what does the seller', 'usd', 'dollars', 'fee', 'fees', 'how much', 'how many', 'net', 'end up', 'receive', 'commission', 'cut', 'pocket', 'platform take', 'platform keep', 'do i get', 'do i keep'].some((w) => has(t, w));
  if (!fee && !cashout) return null;
  const below = (n: number) => `${n} gas is below the ${MIN_CASHOUT_GAS}-gas cash-out minimum, so it cannot be cashed out yet.`;
  // "3 sales at 200 gas each": the earnings of all of them.
  const times = ['twice', 'two times'].some((w) => has(t, w)) ? 2 : ['three times', 'thrice'].some((w) => has(t, w)) ? 3 : null;
  const count = many ? Number(many[1]) : (times ?? 0);
  if (many || (times && sale)) {
    const s = saleSplit(amount, terms.platformFeePercent);
    const total = count * s.sellerNetGas;
    const head = `${count} sales at ${amount} gas pay the seller ${count} × ${s.sellerNetGas} = ${total} gas (the platform keeps ${terms.platformFeePercent}% of each).`;
    if (!cashout) return { text: head, tool: null };
    if (total < MIN_CASHOUT_GAS) return { text: `${head} ${below(total)}`, tool: null };
    const c = cashoutSplit(total);
    const call = cashoutCall(total);
    return { text: `${head} ${connectFirst ? 'Call connect_payouts {"btcAddress"} first, then request_cashout: cashing' : 'Cashing'} out ${total} costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas (${gasToUsd(c.netGas).toFixed(2)} USD in BTC).`, tool: call.tool, args: call.args };
  }
  if (sale) {
    const s = saleSplit(amount, terms.platformFeePercent);
    const band = has(t, 'band') ? PRICE_BANDS.find((b) => amount >= b.minGas && amount <= b.maxGas) : undefined;
    const usd = ['dollar', 'dollars', 'usd', '$'].some((w) => t.includes(w)) ? ` = ${gasToUsd(s.sellerNetGas).toFixed(2)} USD` : '';
    const head = `A ${amount}-gas sale${band ? ` (${band.id} band ${band.minGas}–${band.maxGas})` : ''} pays the seller ${s.sellerNetGas} gas${usd} (the platform keeps ${terms.platformFeePercent}% = ${s.platformFeeGas}); the buyer pays exactly ${amount}.`;
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
    return { text: `${minimumAsked ? `The minimum cash-out is ${MIN_CASHOUT_GAS} gas = ${gasToUsd(MIN_CASHOUT_GAS).toFixed(2)} USD. ` : ''}Cashing out ${amount} gas costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD in BTC.`, tool: 'request_cashout', args: { amountGas: amount } };
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
    return { step, lead: `Buy gas: call ${call(step)} (${pack.gas} gas covers${Number.isFinite(short) && short > 0 ? ` the shortfall of ${short}` : ' it'}), have your human approve the checkoutUrl, poll wallet until gasBalance rises, then call purchase_service again.`, lines: ['Nothing was held or charged by the refused purchase.'] };
  }
  const rule = typeof d.rule === 'string' ? d.rule : null;
  if (e.code === 'forbidden' && (rule || has(p.text, 'limit') || has(p.text, 'budget') || has(p.text, 'human'))) return spendingLimit(g, rule);
  if ((e.code === 'invalid_state' || e.code === 'forbidden') && g.purchase) return null; // the purchase's own calls answer it
  if (e.code === 'internal') {
    const step = { tool: 'report_bug', arguments: { title: 'A call answered 500 internal', description: 'Describe the call and what happened.', context: { requestId: e.requestId ?? 'req_…' } } };
    return { step, lead: `Retry once; if it fails again, call ${call(step)}.`, lines: ['No partial money movement is left behind: gas moves are all-or-nothing.'] };
  }
  // "unknown tool" for a tool this marketplace has: the call went to the wrong address or door.
  const real = p.tools.filter((x) => x !== 'ask_help').sort((a, b) => p.text.indexOf(a) - p.text.indexOf(b))[0];
  if (e.code === 'unknown_tool' && real) {
    return { step: null, lead: `${real} is a tool of this marketplace: send POST <base>/api/agent {"tool":"${real}","arguments":{…}} to this marketplace's own address (GET /api/agent lists its tools), or call it over /mcp with the same key.`, lines: [] };
  }
  // An argument with a fixed set of values the message names: the values are the fix.
  const param = e.code === 'invalid_arguments' && p.tools[0] ? Object.entries((getTool(p.tools[0])?.params ?? {}) as Record<string, { values?: readonly string[] }>).find(([k, v]) => v.values && has(normalize(e.message ?? ''), k.toLowerCase())) : undefined;
  if (param) {
    const step = { tool: p.tools[0], arguments: { ...exampleArguments(p.tools[0]), [param[0]]: param[1].values![0] } };
    return { step, lead: `${param[0]} must be one of ${param[1].values!.join(', ')}: call ${call(step)} again with one of them.`, lines: [] };
  }
  // The guide's register is for a lost key; an asker who registered checks the header first.
  const registered = guide.nextStep.tool === 'register' && ['registered', 'i did register', 'already register'].some((w) => has(p.text, w));
  const tool = registered ? null : guide.nextStep.tool === 'ask_help' ? (p.tools[0] ?? null) : guide.nextStep.tool;
  const step = tool ? { tool, arguments: tool === guide.nextStep.tool ? guide.nextStep.arguments : exampleArguments(tool) } : null;
  const said = e.message && !e.message.includes('…') && !e.message.includes('...') ? ` “${e.message.slice(0, 160)}”` : '';
  return { step, lead: `${e.code} (HTTP ${guide.status})${said}: ${guide.nextStepText}`, lines: [firstSentence(guide.cause)] };
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
      'Gas in your wallet does not lift a limit, and splitting a purchase does not get around it.',
    ],
  };
}

function openCheckout(g: Grounded) {
  const c = g.checkouts[0];
  const step = { tool: 'get_checkout', arguments: { sessionId: c.sessionId } };
  return {
    step,
    lead: `Your checkout ${c.sessionId} for ${c.gas} gas is still open — not approved yet: have your human approve it at ${c.checkoutUrl}, then poll wallet until gasBalance rises (get_checkout ${JSON.stringify(step.arguments)} shows it again).`,
    lines: [`It expires at ${c.expiresAt.slice(0, 16).replace('T', ' ')} UTC; an unapproved checkout costs nothing. Start another with buy_gas only if you need more gas.`],
  };
}

/** The lead call for a purchase the question is about: the best-ranked call this side may make now. */
function forPurchase(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms, topic: Topic | null): { step: NextStep | null; lead: string; lines: string[] } {
  const f = g.purchase!;
  const side: Side | null = f.side;
  const score = new Map(r.tools.map((t) => [t.tool, t.score]));
  // The intent's call counts most: it is what the question asks about.
  if (topic?.tool) score.set(topic.tool, (score.get(topic.tool) ?? 0) + 2);
  const candidates = new Set<string>(f.legal);
  if (topic?.tool && 'purchaseId' in (getTool(topic.tool)?.params ?? {}) && (!isMachineTool(topic.tool) || f.legal.includes(topic.tool)) && (!side || !sideOfTool(topic.tool) || sideOfTool(topic.tool) === side)) candidates.add(topic.tool);
  // Besides the machine's calls: the catalogue's other calls on a purchase (they take a purchaseId), for this side.
  for (const t of r.tools) if (!isMachineTool(t.tool) && t.score >= 0.3 && 'purchaseId' in (getTool(t.tool)?.params ?? {}) && (!side || !sideOfTool(t.tool) || sideOfTool(t.tool) === side)) candidates.add(t.tool);
  // A delivered purchase's buyer reads the work before confirming it.
  if (side === 'buyer' && TRANSITIONS.some((t) => t.trigger === 'deliver' && t.to === f.state)) candidates.add('get_delivery');
  // The question's intent picks the call; the state's usual next call leads only for "what now?" (or when nothing else ranks).
  const whatNow = NEXT_WORDS.some((w) => has(p.text, w)) || !r.tools.some((t) => candidates.has(t.tool) && t.score >= 0.3);
  // The intent's call is not possible yet: the call this side makes now that leads to a state where it is (rate needs completed → confirm).
  const wanted = topic?.tool && isMachineTool(topic.tool) && !f.legal.includes(topic.tool) ? topic.tool : null;
  const toward = wanted && TRANSITIONS.find((t) => f.legal.includes(t.tool) && (t.from as readonly string[]).includes(f.state) && (!side || t.who.includes(side)) && t.to && TRANSITIONS.some((x) => x.tool === wanted && (x.from as readonly string[]).includes(t.to!)))?.tool;
  if (toward) score.set(toward, (score.get(toward) ?? 0) + 2);
  const ranked = [...candidates]
    .map((tool) => ({ tool, s: (score.get(tool) ?? 0) * (f.legal.includes(tool) || !isMachineTool(tool) ? 1 : 0.8) + (whatNow ? 0.5 * progress(tool, f.state, side) : 0) + (has(p.text, tool) ? 0.5 : 0) }))
    .sort((a, b) => b.s - a.s);
  const who = side ? `you are the ${side}` : 'your side';
  const id = f.id ?? 'your purchase';
  const lines: string[] = [];
  const asked = r.tools.find((t) => isMachineTool(t.tool) && !f.legal.includes(t.tool) && (p.tools.includes(t.tool) || namesExactly(p.text, t.tool)));
  // A call the question pasted a refusal of is not the next step again.
  const refused = p.pasted ? p.tools.filter((x) => x !== 'ask_help').sort((a, b) => p.text.indexOf(a) - p.text.indexOf(b))[0] : undefined;

  // An exit (refund, dispute: a call that moves the purchase away from payment) leads only when the
  // question names it; with no other call, the asker reads where the purchase stands.
  const exitNotAsked = (tool: string) => isMachineTool(tool) && progress(tool, f.state, side) === 0 && !names(r.query, tool);
  const best = ranked.find((x) => !exitNotAsked(x.tool) && x.tool !== refused) ?? (ranked.length ? { tool: 'get_purchase', s: 0 } : undefined);
  if (asked && (!best || best.tool !== asked.tool)) {
    const whose = sideOfTool(asked.tool);
    lines.push(`${asked.tool} is not possible now: ${whose && side && whose !== side ? `only the ${whose} calls it` : `${id} is ${f.state}`}.`);
  }
  const stateLine = `${id}${f.title ? ` (“${f.title}”` + (f.priceGas ? `, ${f.priceGas} gas)` : ')') : ''} is ${f.state}; ${who}${!whatNow ? '' : f.legal.length ? ` and may call ${f.legal.join(', ')}` : ' and no call can change it now'}.`;
  lines.push(stateLine, ...f.deadlines.map((d) => `${d[0].toUpperCase()}${d.slice(1)}.`));
  const next = (STATES as Record<string, { next: string }>)[f.state]?.next ?? '';
  // An explanation the intent gives ("when am I paid?") leads, with the purchase's own state and deadlines.
  if (topic && !topic.tool && topic.purchase) return { step: null, lead: topic.lead, lines };
  // Nothing this side can do moves it forward: say what happens next instead of naming a call.
  if (!best || (whatNow && progress(best.tool, f.state, side) === 0 && !topic?.tool)) {
    return { step: null, lead: `Nothing for you to call now: ${id} is ${f.state}. ${next}`, lines: lines.slice(asked ? 1 : 0) };
  }
  // A call the question names that the machine refuses now (often a pasted invalid_state): that leads, with what the state allows.
  if (asked && (p.error || p.tools.includes(asked.tool) || namesExactly(p.text, asked.tool)) && best.tool !== asked.tool && toward !== best.tool) {
    const alt = { tool: best.tool, arguments: argsFor(best.tool, g, p) };
    return { step: alt, lead: `${lines[0]} ${next}`, lines: [`Next: ${call(alt)}.`, ...lines.slice(1)] };
  }
  // The buyer reads the work before paying for it (unless the question says it did).
  const readFirst = side === 'buyer' && progress(best.tool, f.state, side) === 3 && candidates.has('get_delivery') && !has(p.text, 'get_delivery') && !['tested', 'ran the', 'read it', 'checked it', 'looks good', 'passes', 'reviewed'].some((w) => has(p.text, w));
  const step = { tool: best.tool, arguments: argsFor(best.tool, g, p) };
  // What the call does from this state for this side: the machine's documented transition, else the catalogue's description.
  const doc = documentedTransitions(terms).find((t) => t.trigger === best.tool && (!side || t.who.includes(side)) && t.from.includes(f.state));
  const desc = doc ? `${f.state} → ${doc.to}.` : firstSentence(getTool(best.tool)?.description ?? '').replace(/^(Buyer|Seller)[^:]*:\s*/, '');
  const first = readFirst
    ? `Read the work with get_delivery {"purchaseId":"${id}"}; if it is right, call ${call(step)}`
    : toward === best.tool
      ? `${wanted} comes after ${best.tool}: as the ${side ?? 'party'} of ${id}, call ${call(step)} first`
      : `As the ${side ?? 'party'} of ${id}, call ${call(step)}`;
  // The intent's own words when its call is the one: they say why, the machine's line says what it does from here.
  if (topic?.tool === best.tool && !readFirst) return { step, lead: `As the ${side ?? 'party'} of ${id} (${f.state}): ${withCall(topic.lead, step)}`, lines: [`${best.tool}: ${desc}`, ...lines.slice(asked ? 1 : 0)] };
  return { step, lead: `${first}: ${desc.charAt(0).toLowerCase()}${desc.slice(1)}`, lines };
}

/** The intent's answer: its lead, and its call with the asker's arguments. */
/** An intent's lead with its call's placeholder arguments ({"purchaseId", …}) replaced by the asker's own. */
function withCall(lead: string, step: NextStep | null): string {
  const at = step ? lead.indexOf(`${step.tool} {`) : -1;
  if (!step || at < 0) return lead;
  let depth = 0;
  let end = at + step.tool.length + 1;
  for (; end < lead.length; end++) {
    if (lead[end] === '{') depth++;
    if (lead[end] === '}' && --depth === 0) break;
  }
  return `${lead.slice(0, at)}${call(step)}${lead.slice(end + 1)}`;
}

function forTopic(t: Topic, g: Grounded, p: Parsed) {
  const step = t.tool ? { tool: t.tool, arguments: argsFor(t.tool, g, p, t.args ?? {}) } : null;
  return { step, lead: withCall(t.lead, step), lines: [...(t.lines ?? [])] };
}

export function compose(p: Parsed, g: Grounded, r: Retrieved, terms: MarketTerms, intent: Intent | null = null): Composed {
  const topic = intent?.topic ?? null;
  const fault = FAULT_WORDS.some((w) => has(p.text, w)) || p.error?.code === 'internal';
  const side = g.side;
  const ok = (tool: string) =>
    tool !== 'ask_help' && (tool !== 'report_bug' || fault) && !(side && sideOfTool(tool) && sideOfTool(tool) !== side) && !(getTool(tool)?.aliasOf);
  const num = p.error ? null : numbers(p, terms, g.purchase?.priceGas ?? null, g.side);
  let picked: { step: NextStep | null; lead: string; lines: string[] } | null = null;
  if (p.error) picked = forError(p, g);
  // A purchase is the subject unless the question is plainly about something else (cash-out, a listing …).
  const top = r.tools[0]?.tool;
  const pointsAtIt = p.purchaseIds.length > 0 || THIS_PURCHASE.some((w) => has(p.text, w)) || !!p.statedState;
  // An intent that is not about a purchase leads whatever purchase the account holds; otherwise the machine answers.
  const aboutPurchase =
    !!g.purchase && (topic ? !!topic.purchase : pointsAtIt || !top || isMachineTool(top) || 'purchaseId' in (getTool(top)?.params ?? {}) || (r.tools[0]?.score ?? 0) < 0.8);
  // The situation leads whatever the wording: an open checkout, a limit the human set, then the asker's purchase.
  const checkoutAsked = topic?.id === 'buy-gas' || topic?.id === 'checkout-link' || has(p.text, 'checkout') || names(p.text, 'get_checkout');
  if (!picked && g.checkouts.length && !has(p.text, 'expired') && checkoutAsked) picked = openCheckout(g);
  const limitsAsked = has(p.text, 'spending limit') || ['limit', 'budget', 'refused', 'set something up', 'exceeds', 'owner', 'cap', 'blocked', 'blocking'].filter((w) => has(p.text, w)).length >= 2 || (g.limits?.setByHuman && (has(p.text, 'refused') || topic?.id === 'limits'));
  // A price the question states above the human's per-purchase limit: the limit is the answer, not the balance.
  const overLimit = g.limits?.perPurchaseMaxGas != null && (topic?.tool === 'purchase_service' || has(p.text, 'buy')) && p.amounts.some((a) => a > g.limits!.perPurchaseMaxGas! && a !== g.wallet?.gasBalance);
  if (!picked && (limitsAsked || overLimit)) picked = spendingLimit(g, null);
  // Figures about sales in general ("3 completed sales at 200") are not about the purchase the account holds.
  const figuresOnly = !!num && !p.purchaseIds.length && !THIS_PURCHASE.some((w) => has(p.text, w));
  // "What does awaiting_approval mean?", "why did it fail?": the machine's word for that state.
  const stateAsked = p.statedState && !p.error && ['mean', 'what does', 'why', 'is my gas gone', 'what happened'].some((w) => has(p.text, w)) && (!topic || topic.purchase || has(p.text, p.statedState));
  if (!picked && stateAsked) picked = { step: null, lead: `${p.statedState}: ${(STATES as Record<string, { next: string }>)[p.statedState!].next}`, lines: [] };
  if (!picked && aboutPurchase && !figuresOnly) picked = forPurchase(p, g, r, terms, topic);
  /** The situation decided the lead (an error, a purchase, a limit, an open checkout): it leads whatever the wording. */
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
  const action = firm || !!topic || ACTION_WORDS.some((w) => has(p.text, w));
  // Figures lead; the call after them is the one they lead to (never an unrelated one), else the intent's.
  if (num && !firm) {
    const step = num.tool ? { tool: num.tool, arguments: argsFor(num.tool, g, p, num.args ?? {}) } : null;
    if (step) picked = { step, lead: topic && topic.tool === step.tool ? topic.lead : `Call ${call(step)}: ${firstSentences(getTool(step.tool)?.description ?? '')}`, lines: [] };
    else if (!topic) picked = null;
  }
  const info = num?.text ?? (action ? null : ruleLines(r, p, '', null, 1).lines[0] ?? null);
  const stated = num?.claims ?? 0;
  const mismatch = (figuresOnly && !p.statedClaim ? null : g.mismatch) ?? (g.wallet && stated > g.wallet.withdrawableGas ? `your wallet shows withdrawableGas ${g.wallet.withdrawableGas}, not ${stated}: only sale earnings of completed sales can be cashed out` : null);
  const answer = info ?? picked?.lead ?? 'I could not find this in the documentation; ask with the tool name or the error code you got.';
  // An informational answer names a next call only when it follows from it (figures that lead to a call, or a question asking what to do).
  if (info && picked && !firm && !num?.tool && !action) picked = null;
  // A fresh array: an intent's lines are shared data, never edited in place.
  let lines = info && picked ? [picked.lead.replace(/^Call /, 'Next: '), ...(num ? [] : picked.lines)] : [...(picked?.lines ?? [])];
  // The account's own facts the intent turns on: earnings not yet withdrawable.
  if (topic?.id === 'cashout' && g.wallet && !num) lines.unshift(`Your wallet shows withdrawableGas ${g.wallet.withdrawableGas}${g.wallet.pendingEarningsGas ? ` and ${g.wallet.pendingEarningsGas} gas pending (sales delivered, not yet completed: they become sale_earn when the buyer confirms or auto-release pays)` : ''}.`);
  // When the account disagrees with the question, what it shows leads and the call is the one it allows;
  // the stated situation is answered after it ("I see no purchase pur_x on your account; if …").
  let lead = answer;
  // No purchase at all while the question tells of one: a note after the answer, not a correction.
  if (mismatch && !g.actual && !mismatch.startsWith('I see no purchase ') && !stated) lines.unshift(`(${mismatch[0].toUpperCase()}${mismatch.slice(1)}.)`);
  else if (mismatch) {
    const said = `${mismatch[0].toUpperCase()}${mismatch.slice(1)}`;
    const onAccount = g.actual ? forPurchase(p, { ...g, purchase: g.actual }, r, terms, topic) : null;
    const noPurchase = g.mismatch?.startsWith('I see no purchase');
    const check = { tool: 'list_orders', arguments: {} };
    lines = [`If it is as you say: ${answer}`, ...lines];
    if (onAccount) {
      lead = `${said}, so: ${onAccount.lead.replace(/^As the \w+ of \S+ \([a-z_]+\): /, '')}`;
      picked = { ...onAccount, lines: [] };
    } else {
      lead = `${said}.`;
      picked = noPurchase ? { step: check, lead, lines: [] } : { step: null, lead, lines: [] };
    }
  }
  // Retrieved rule lines only fill an answer nothing else shaped (an intent, a purchase, an error, figures carry their own).
  const rules = ruleLines(r, p, [lead, ...lines].join(' '), picked?.step?.tool ?? null, topic || firm || num ? 0 : 1);
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

