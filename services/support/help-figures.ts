/**
 * ask_help: the figures a question asks for, computed by the market-rules functions from what it states
 * (a sale and its split, several sales, earnings held, a cash-out, packs covering a need, a price for a
 * target net, referral bonuses, bands and anchors), and the call they lead to. Nothing here is typed
 * from a past question: each branch is a kind of figure, the numbers come from market-rules.
 */
import {
  CASHOUT_FEE_PERCENT,
  CATEGORY_ANCHOR_GAS,
  GAS_PACKS,
  GAS_PER_USD,
  PASS_SCORE,
  MIN_CASHOUT_GAS,
  MIN_PRICE_GAS,
  PRICE_BANDS,
  REFERRAL_BONUS_GAS,
  REFERRAL_WEEKLY_CAP,
  cashoutForNet,
  cashoutSplit,
  cheapestPacksCovering,
  gasToUsd,
  priceForNet,
  saleSplit,
  salesToCashout,
  smallestPackCovering,
  type MarketTerms,
} from '../../packages/market-rules';
import { ASKS, CATEGORY_WORDS } from '../../packages/knowledge/synonyms';
import { verdictOf } from '../../packages/listing-gate';
import { aGas, gasOf, has, type Parsed } from './help-parse';

/** The figures a question asks for, and the call that follows from them (null: none). */
export interface Figures {
  text: string;
  /** Earnings the question says the asker holds now (checked against the wallet). */
  claims?: number;
  tool: string | null;
  /** The figures refuse what the question plans ("cash out bought gas"): no call follows them. */
  refuses?: boolean;
  /** The call's arguments the figures decide. */
  args?: Record<string, unknown>;
}

/** A quoted listing judged by the gate the listings service enforces (packages/listing-gate): what would refuse it, or that it passes. */
function listingVerdict(d: NonNullable<Parsed['draft']>): Figures {
  const v = verdictOf(d);
  // Moderation's refusal is of the offer itself: it leads, and the quality score's hints are moot until the concept changes
  // (nor is a description the question never quoted measured).
  if (v.refusals.some((r) => r.startsWith('moderation'))) {
    const rest = v.refusals.filter((r) => !r.startsWith('moderation') && !r.startsWith('its quality score') && !(d.description === '' && r.startsWith('the description')));
    return { text: `Rewording will not pass it: ${v.refusals.find((r) => r.startsWith('moderation'))}${rest.length ? `; besides, ${rest.join('; ')}` : ''} (a refused call creates nothing).`, tool: 'list_service', args: {} };
  }
  if (v.refusals.length) return { text: `Rewrite it before calling list_service again — it would be refused: ${v.refusals.join('; ')} (a refused call creates nothing).`, tool: 'list_service', args: {} };
  const passes = v.score === null ? `the description passes (${v.description.chars} characters, ${v.description.words} words; it says what the buyer provides and gets)` : `moderation approves it and its quality score is ${v.score} (${PASS_SCORE} passes)`;
  return { text: `It passes: ${passes} — call list_service with it.`, tool: 'list_service', args: {} };
}

/** `priceGas`, `side`: the asker's own purchase (its price is the sale a question about "this sale" means; a seller's is a sale). */
/**
 * Purchases the question plans against a balance and the human's per-purchase cap (stated, else the account's): how many
 * at one price, or what a basket ("two 250-gas jobs and a 400 one") costs, leaves and pays its sellers.
 */
function purchasesAgainst(t: string, terms: MarketTerms, balance: number | null, accountCap: number | null, howMany: boolean, anchor: number | null): Figures | null {
  // ("500/purchase" says it outright; "limit … 500" may run past another figure: "limit and 3000 gas".)
  const capped = /(\d[\d,]*k?) ?(?:\/|per|a|each) ?purchase\b/.exec(t) ?? /\b(?:capped|cap|limit|max)(?: (?!and\b)[a-z]+){0,3}? (?:at |of |to )?(\d[\d,]*k?)\b/.exec(t);
  const cap = capped ? gasOf(capped[1]) : accountCap;
  const items: number[] = [];
  for (const m of t.matchAll(/(?:\b(\d{1,2}|a|an|one) )?(\d[\d,]*k?)[- ]?(?:gas )?(?:[a-z-]+ ){0,2}(?:jobs?|services?|listings?|purchases?|gigs?|orders?|ones?|tasks?|buys)\b/g)) {
    const price = gasOf(m[2]);
    if (price < MIN_PRICE_GAS || price === balance || price === cap) continue;
    const n = !m[1] || ['a', 'an', 'one'].includes(m[1]) ? 1 : Number(m[1]);
    for (let i = 0; i < n; i++) items.push(price);
  }
  // ("spend 480 on one listing")
  for (const m of t.matchAll(/\b(?:spend|spending|pay|paying) (\d[\d,]*k?)(?: gas)? on\b/g)) if (!items.includes(gasOf(m[1]))) items.push(gasOf(m[1]));
  // (Only purchases the asker plans: "how many sales until …" is a seller's count, answered below.)
  if (!balance || !['buy', 'afford', 'purchase', 'purchases', 'spend', 'doable'].some((w) => has(t, w))) return null;
  const over = (price: number) => cap !== null && price > cap;
  const capNote = (price: number) => (over(price) ? ` — but ${price} is over the per-purchase limit of ${cap} your human set, so purchase_service refuses it (forbidden); only your human can raise it` : cap !== null ? ` (each within the per-purchase limit of ${cap})` : '');
  if (howMany && (items.length === 1 || (anchor && !items.length))) {
    const price = items[0] ?? anchor!;
    const n = over(price) ? 0 : Math.floor(balance / price);
    const s = saleSplit(price, terms.platformFeePercent);
    return { text: `${n} purchases of ${price} gas (${n * price} of your ${balance}; the buyer pays no fee on top)${over(price) ? capNote(price) : cap !== null ? `, each within the per-purchase limit of ${cap}` : ''}. Completed, the sellers get ${n} × ${s.sellerNetGas} = ${n * s.sellerNetGas} gas and the platform ${n} × ${s.platformFeeGas} = ${n * s.platformFeeGas}.`, tool: n ? 'purchase_service' : null, args: n ? { maxPriceGas: price } : undefined };
  }
  const asks = ['left', 'remain', 'doable', 'afford', 'enough', 'can i', 'sellers get', 'in total', 'total'].some((w) => has(t, w));
  if (!asks || !items.length || (items.length === 1 && !over(items[0]) && !has(t, 'left') && !has(t, 'doable'))) return null;
  if (items.length === 1 && over(items[0])) return { text: `No: ${items[0]} gas is over the per-purchase limit of ${cap} your human set, so purchase_service refuses it (forbidden) though your ${balance} gas would cover it — only your human can raise the limit (on their owner page); or buy a listing within it.`, tool: null, refuses: true };
  const total = items.reduce((a, b) => a + b, 0);
  const nets = items.map((a) => saleSplit(a, terms.platformFeePercent).sellerNetGas);
  const blocked = items.filter(over);
  const head = `${items.length > 1 ? `${items.join(' + ')} = ${total}` : `${total}`} gas (the buyer pays no fee on top): ${balance} − ${total} = ${balance - total} left${balance < total ? ' — not enough: buy_gas first' : ''}`;
  return { text: `${head}${blocked.length ? capNote(blocked[0]) : cap !== null ? capNote(items[0]) : ''}. Completed, ${items.length > 1 ? `the sellers get ${nets.join(' + ')} = ` : 'the seller gets '}${nets.reduce((a, b) => a + b, 0)} gas and the platform ${total - nets.reduce((a, b) => a + b, 0)} (its ${terms.platformFeePercent}% fee).`, tool: blocked.length ? null : 'purchase_service', args: blocked.length ? undefined : { maxPriceGas: Math.max(...items) } };
}

export function figures(p: Parsed, terms: MarketTerms, priceGas: number | null, side: 'buyer' | 'seller' | null = null, account: { balance: number | null; cap: number | null } | null = null): Figures | null {
  if (p.draft) return listingVerdict(p.draft);
  // "My listing got qualityScore 52 — does that pass?": the gate's pass score decides.
  const scored = /score(?: of| is| was|:)? (\d{1,3})\b/.exec(p.text.replace(/\{.*\}/s, ' '));
  const passes = scored && Number(scored[1]) >= PASS_SCORE;
  if (scored && ['pass', 'enough', 'ok', 'good', 'fail'].some((w) => has(p.text, w))) return { text: passes ? `Yes: ${scored[1]} passes (passScore ${PASS_SCORE}).` : `No: ${scored[1]} is below passScore ${PASS_SCORE} — rewrite it (a concrete skill title, the buyer's inputs, your deliverable, scope) and call list_service again.`, tool: passes ? null : 'list_service' };
  // The figures of a pasted envelope are the error's, not the asker's.
  const t = p.text.replace(/\{.*\}/s, ' ');
  const howMany = ['how many', 'number of', 'how much sales', 'how many sales'].some((w) => has(t, w));
  const minimumAsked = (['minimum', 'min'].some((w) => has(t, w)) || /\b(?:smallest|lowest|least)\b(?: \w+){0,2} (?:cash[- ]?outs?|withdrawals?|payouts?)\b/.test(t)) && ASKS.cashout.some((w) => has(t, w)) && !ASKS.rules.some((w) => has(t, w));
  // "10 jobs at 200 gas each": the price is the amount, the count multiplies it.
  const counted = /(\d+) (?:of my )?(?:[a-z]+ )?(?:sales|jobs|orders|gigs|tasks|listings|services|buyers|customers)(?: sold)?(?: [a-z]+){0,3} (?:at|of|for) (\d[\d,]*)/.exec(t);
  // ("I sell at 400, 5 buyers all confirm": the price said first, the count after.)
  const priceFirst = /\b(?:sell|sold|list|listed|priced?) (?:it |them )?(?:at|for) (\d[\d,]*)\b[^.?!]{0,30}?\b(\d+) (?:buyers|customers|sales|orders)\b/.exec(t);
  const many = (counted && new Set(p.amounts.filter((a) => a >= MIN_PRICE_GAS && a !== Number(counted[1]))).size <= 1 ? counted : null) ?? /(\d+) (\d[\d,]*)[- ]gas (?:[a-z]+ )?(?:sales|jobs|orders|gigs|tasks|listings|services|purchases)/.exec(t) ?? (priceFirst ? Object.assign([priceFirst[0], priceFirst[2], priceFirst[1]], { index: priceFirst.index }) : null);
  // ("4 jobs for 900 gas total": the amount is all of them together, not each.)
  const summed = many && !(priceFirst && many[0] === priceFirst[0]) && /^(?: gas)?,? (?:in )?(?:total|all|altogether|combined)\b/.test(t.slice(many.index + many[0].length)) ? Number(many[1]) : null;
  // "priced at the research anchor": that category's anchor is the price.
  const named = [...new Set(Object.keys(CATEGORY_WORDS).filter((w) => has(t, w)).map((w) => CATEGORY_WORDS[w]))];
  const anchored = has(t, 'anchor') && named.length === 1 ? named[0] : undefined;
  // "what lands from this sale?": the asker's own purchase's price when the question states none.
  const ownPrice = priceGas && !['how much time', 'how long'].some((w) => has(t, w)) && ['how much', 'what lands', 'lands in', 'what do i get', 'what would i get', 'do i end up', 'in $', 'in dollars', 'in usd', 'like this', 'go up'].some((w) => has(t, w)) ? priceGas : undefined;
  // (A balance the asker states is not a price: "I've got 3000 gas, want to buy … at 250 and … at 800".)
  // ("If I cash out exactly the minimum": the minimum is the amount, whatever the asker's own sale.)
  const minimumCashed = minimumAsked && /\b(?:cash(?: ?out)?|withdraw)(?: out)?(?: exactly| just| only)? (?:the )?(?:minimum|min)\b/.test(t);
  const amount = (many ? Number(many[2].replace(/,/g, '')) : undefined) ?? (anchored ? CATEGORY_ANCHOR_GAS[anchored] : undefined) ?? p.amounts.find((n) => n >= 1 && (n !== p.balance || p.amounts.length === 1)) ?? (minimumCashed ? MIN_CASHOUT_GAS : undefined) ?? ownPrice ?? (minimumAsked ? MIN_CASHOUT_GAS : undefined);
  // (The minimum asked on a seller's own open sale — "once this sale completes, can I cash it out? the minimum?" — is the account's question.)
  if (minimumAsked && !p.amounts.length && side === 'seller' && priceGas && amount === MIN_CASHOUT_GAS && /\b(?:this|my) (?:sale|order)\b|\bcash it out\b|\bonce (?:it|this)\b/.test(t)) return null;
  // The seller's own purchase is a sale: its figures are the seller's share, never the price.
  const ownSale = side === 'seller' && amount !== undefined && amount === ownPrice && !p.amounts.length;
  const cashout = [...ASKS.cashout, ...ASKS.payout].some((w) => has(t, w)) || (has(t, 'cash') && has(t, 'out')) || p.tools.includes('request_cashout');
  const connectFirst = ['never set up', 'not set up', 'no payout address', 'set up payouts', 'btc address', 'first time'].some((w) => has(t, w));
  const cashoutCall = (n: number) => (connectFirst ? { tool: 'connect_payouts', args: {} } : { tool: 'request_cashout', args: { amountGas: n } });
  // Earnings the question states ("sale_earn total 675", "432 of earnings"): cashed out as they are, no platform fee again.
  const earned = /(?:sale_earn|earnings|earned|withdrawable)(?: total| of| is| are|:)*\s*(?:~ ?|about |around |roughly |approx\.? |approximately |nearly |almost )?(\d[\d,]*)/.exec(t) ?? /([1-9][\d,]*)\s*(?:gas\s*)?(?:from|of|in)?\s*(?:sale\s+)?(?:sale_earn|earnings|withdrawable)/.exec(t);
  // Bought gas is spending money: it never cashes out, whatever the amount.
  // (The asker's own gas bought — not "someone bought my listing", which is a sale.)
  // (Earnings stated beside it are answered below: the bought part is named there.)
  // (Or gas held with no sale ever made: "3000 gas in balance, never sold anything".)
  if (cashout && !earned && /\bi (?:bought|purchased)\b|\b(?:bought|purchased) gas\b|gas i (?:bought|purchased)|buy_gas|the pack|builder pack|starter pack|fleet pack|from a pack|never sold|(?:haven't|have not|didn't|did not) sold|(?:haven't|have not|didn't|did not) sell|no sales yet/.test(t)) {
    return { text: `No: bought gas cannot be cashed out — only sale earnings (sale_earn) are withdrawable. Spend it with purchase_service; it stays in your wallet.`, tool: null, refuses: true };
  }
  // "What should I charge for a CSV cleanup?": the category's anchor and the band for a first listing.
  const asksPrice = ['what should i charge', 'what to charge', 'how much should i charge', 'what price', 'should i price', 'price it', 'how should i price', 'what should i ask'].some((w) => has(t, w));
  const category = Object.keys(CATEGORY_WORDS).filter((w) => has(t, w)).sort((a, b) => b.length - a.length)[0];
  if (asksPrice && category && amount === undefined) {
    const c = CATEGORY_WORDS[category];
    const fits = PRICE_BANDS.filter((b) => CATEGORY_ANCHOR_GAS[c] >= b.minGas && CATEGORY_ANCHOR_GAS[c] <= b.maxGas);
    const band = fits.find((b) => 'note' in b) ?? fits[0];
    const note = band && 'note' in band ? `, ${band.note}` : '';
    return { text: `As a ${c} listing, price near the ${c} anchor of ${CATEGORY_ANCHOR_GAS[c]} gas${band ? ` (${band.id} band ${band.minGas}–${band.maxGas}${note})` : ''}; the minimum is ${MIN_PRICE_GAS} gas.${['net', 'keep', 'earn', 'make', 'pocket', 'would i get', 'do i get'].some((w) => has(t, w)) ? ` At ${CATEGORY_ANCHOR_GAS[c]} you net ${saleSplit(CATEGORY_ANCHOR_GAS[c], terms.platformFeePercent).sellerNetGas} per sale (the platform keeps ${terms.platformFeePercent}%).` : ''}`, tool: 'list_service', args: { priceGas: CATEGORY_ANCHOR_GAS[c], category: c } };
  }
  // "I referred 14 agents": the bonus per first purchase, up to the weekly cap.
  const referred = /(\d+) (?:new |other )?(?:agents|referrals|friends)/.exec(t);
  if (['referred', 'referredby', 'referral', 'referrals', 'refer', 'refferal', 'referal'].some((w) => has(t, w)) && referred) {
    // "7 referred, 4 of them bought": only those who made a first purchase count.
    const bought = /(\d+) (?:[a-z]+ ){0,6}?(?:buy|bought|purchased|made)/.exec(t);
    const n = Number((bought ?? referred)[1]);
    const paid = Math.min(n, REFERRAL_WEEKLY_CAP);
    return { text: `${paid} × ${REFERRAL_BONUS_GAS} = ${paid * REFERRAL_BONUS_GAS} gas: each referred agent's first purchase_service pays you ${REFERRAL_BONUS_GAS} gas, at most ${REFERRAL_WEEKLY_CAP} per 7 days${n > REFERRAL_WEEKLY_CAP ? ` (the other ${n - REFERRAL_WEEKLY_CAP} do not count this week)` : ''}; referral gas is spendable, not withdrawable (only sale earnings cash out).`, tool: 'wallet' };
  }
  // "Is fleet cheaper per gas than builder?": every pack is sold at the peg — no volume discount.
  if (!p.amounts.length && (GAS_PACKS.filter((x) => has(t, x.id)).length >= 2 || /\bper (?:dollar|usd|\$)|\bbest (?:value|deal)\b|\bvolume discount\b/.test(t)) && ['cheaper', 'discount', 'per gas', 'better deal', 'better value', 'cost less', 'per dollar', 'per usd', 'best value', 'best deal'].some((w) => has(t, w))) {
    return { text: `No pack is cheaper per gas: every pack is sold at the peg (${GAS_PER_USD} gas = 1 USD) — ${GAS_PACKS.map((x) => `${x.id} ${x.gas} gas = ${x.usd} USD`).join(', ')}; buy the smallest that covers what you need.`, tool: 'buy_gas', args: { packId: GAS_PACKS[0].id } };
  }
  // "The most gas I can buy in one go?", "the smallest pack?": the largest or the smallest pack, bought again for more (one checkout each).
  const extreme = !p.amounts.length && /\b(?:buy|purchase|get|pack|packs|packid|buy_gas)\b/.test(t) ? (/\b(?:most|largest|biggest|max|maximum)\b/.test(t) ? GAS_PACKS.at(-1) : /\b(?:smallest|cheapest)\b(?: [a-z]+){0,4} (?:gas|pack|packid)\b/.test(t) ? GAS_PACKS[0] : undefined) : undefined;
  if (extreme && /\bgas\b|\bpacks?\b/.test(t)) {
    return { text: `The ${extreme === GAS_PACKS[0] ? 'smallest' : 'largest'} pack is ${extreme.id}: ${extreme.gas} gas = ${extreme.usd} USD, one buy_gas {"packId":"${extreme.id}"} checkout your human approves${extreme === GAS_PACKS[0] ? '' : '; for more, buy another (each checkout is its own)'}. Packs: ${GAS_PACKS.map((x) => `${x.id} ${x.gas} gas = ${x.usd} USD`).join(', ')}.`, tool: 'buy_gas', args: { packId: extreme.id } };
  }
  // "What is my balance worth in dollars?": the wallet's gas at the peg.
  const dollars = ['dollar', 'dollars', 'usd', 'in $', 'worth'].some((w) => has(t, w));
  if (amount === undefined && dollars && account?.balance != null && ['balance', 'my gas', 'wallet', 'i have', 'i hold'].some((w) => has(t, w))) {
    return { text: `Your ${account.balance} gas = ${gasToUsd(account.balance).toFixed(2)} USD at the peg (${GAS_PER_USD} gas = 1 USD). It is spending money: only sale earnings (sale_earn) cash out, in BTC.`, tool: null };
  }
  if (amount === undefined) return null;
  // "Can I cash out the 225 now?" on the seller's own sale: its share (or price) is earnings to come — the account answers when they count.
  // (Asked as a supposition — "if my sale completes … if I cashed it out" — the figures answer.)
  if (cashout && side === 'seller' && priceGas && !howMany && p.amounts.length && p.amounts.every((a) => a === priceGas || a === saleSplit(priceGas, terms.platformFeePercent).sellerNetGas) && !/\bif (?:my|it|i|the)\b/.test(t)) return null;
  // "I have 150 and it costs 400" / "I need 2300": the cheapest packs that cover the shortfall.
  const sale = ownSale || (p.side === 'seller' && !['buy', 'purchase', 'pack'].some((w) => has(t, w))) || ['sale', 'sales', 'sell', 'sold', 'earn', 'earned', 'seller', 'selling', 'priced', 'job', 'sale_earn', 'i list', 'list it', 'listing at', 'list something', 'do i keep', 'i keep', 'seller get', 'seller gets', 'i net', 'do i net', 'becomes mine', 'buyers 250', 'buys my', 'bought my'].some((w) => has(t, w)) || /\bmy \d[\d,]*[- ]?gas (?:listing|service|job)\b/.test(t);
  // "I want exactly $10 from cash-out: how much sale_earn, how much in sales?": the cash-out fee and the platform fee, worked backwards.
  // (Worked backwards only when a target is said — "I want", "do I need" — not "if I sell 1000 and cash out, what do I end up with".)
  if (cashout && !earned && ['how much', 'how many'].some((w) => has(t, w)) && ['exactly', 'to receive', 'target', 'end up with'].some((w) => has(t, w)) && ['sale_earn', 'earnings', 'sales', 'sell'].some((w) => has(t, w)) && ['need', 'must', 'have to', 'want', 'target', 'exactly'].some((w) => has(t, w))) {
    const need = cashoutForNet(amount);
    const price = priceForNet(need, terms.platformFeePercent, false);
    return { text: `${amount} gas = ${gasToUsd(amount).toFixed(2)} USD: receiving it after the ${CASHOUT_FEE_PERCENT}% cash-out fee takes ${need} gas of sale_earn (fee ${need - amount}), and ${need} of sale_earn takes ${price} gas of sales at list price (the seller keeps ${100 - terms.platformFeePercent}%); at least ${MIN_CASHOUT_GAS} gas per cash-out.`, tool: null };
  }
  if (earned && cashout) {
    const n = Number(earned[1].replace(/,/g, ''));
    const also = /bought|buy_gas|purchased|pack/.test(t) ? ' (bought gas is not cashable)' : '';
    if (n < MIN_CASHOUT_GAS && howMany) {
      // "How many such sales before I can cash out?": sales of that size until the minimum, and what the fee takes then.
      const c = salesToCashout(n);
      return { text: `${c.sales} sales of ${n} (${c.amountGas} gas of sale earnings) reach the ${MIN_CASHOUT_GAS}-gas cash-out minimum — ${c.sales - 1} make only ${(c.sales - 1) * n}; cashing out ${c.amountGas} costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD in BTC.`, tool: null };
    }
    if (n < MIN_CASHOUT_GAS) return { text: `You have ${n} gas of sale earnings${also}: ${MIN_CASHOUT_GAS - n} short of the ${MIN_CASHOUT_GAS}-gas cash-out minimum — complete more sales, then request_cashout.`, tool: null, refuses: true };
    const c = cashoutSplit(n);
    const call = cashoutCall(n);
    // (Earnings claimed are the asker's own, said in the first person; "the fee on 3,000 gas of earnings" asks a rule.)
    const hypothetical = ['if ', 'once ', 'planning', 'say ', 'would', 'when i', 'suppose', 'imagine', 'hypothetically'].some((w) => t.includes(w)) || !/\b(?:i|i'm|im|i've|ive|my|me)\b/.test(t);
    return { claims: hypothetical ? undefined : n, text: `${connectFirst ? 'Call connect_payouts {"btcAddress"} first, then request_cashout: c' : 'C'}ashing out your ${n} gas of sale earnings${also} costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD in BTC.`, tool: call.tool, args: call.args };
  }
  // "my 200-gas job paid only 180": the seller's share of that price is the figure, not a shortfall (a human's cap beside a price is no sale).
  const [hi, lo] = [Math.max(...p.amounts), Math.min(...p.amounts)];
  if (sale && p.amounts.length >= 2 && saleSplit(hi, terms.platformFeePercent).sellerNetGas === lo && !['cap', 'capped', 'limit', 'limited'].some((w) => has(t, w))) {
    return { text: `That is right: ${aGas(hi)} sale pays the seller ${lo} gas; the platform keeps its ${terms.platformFeePercent}% fee (${hi - lo}) at completion.`, tool: null };
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
  const netAsked = ['net', 'clear', 'end up', 'take home', 'seller get', 'seller gets', 'do i get', 'do i keep', 'receive', 'usd', 'dollars'].some((w) => has(t, w));
  // ("Is 400 standard or premium? And 1000?": each price stated, its band — both at a shared edge — and its net when asked.)
  const bandAsked = /\bbands?\b/.test(t) || PRICE_BANDS.filter((b) => has(t, b.id)).length >= 2;
  const priced = [...new Set(p.amounts.filter((a) => a >= MIN_PRICE_GAS))].slice(0, 4);
  // (One price with its net or dollars asked is the sale's own figures, band included, below.)
  if (bandAsked && priced.length && !cashout && (!netAsked || priced.length > 1)) {
    const c = category ? CATEGORY_WORDS[category] : null;
    const each = priced.map((a) => {
      const within = PRICE_BANDS.filter((b) => a >= b.minGas && a <= b.maxGas);
      const bands = within.length ? `the ${within.map((b) => `${b.id} band (${b.minGas}–${b.maxGas}${'note' in b ? `, ${b.note}` : ''})`).join(' and the ')}` : 'no band';
      return `${a} gas is in ${bands}${netAsked ? `, netting its seller ${saleSplit(a, terms.platformFeePercent).sellerNetGas}` : ''}`;
    });
    return { text: `${each.join('; ')}${c ? `; the ${c} anchor is ${CATEGORY_ANCHOR_GAS[c]} gas` : ''}.`, tool: null };
  }
  // "The smallest price where one sale reaches the cash-out minimum?": the lowest price whose seller's share reaches it.
  if (cashout && /\b(?:smallest|lowest|minimum|min|cheapest)\b(?: [a-z]+){0,2} price\b/.test(t) && ['minimum', 'min'].some((w) => has(t, w))) {
    const price = priceForNet(MIN_CASHOUT_GAS, terms.platformFeePercent, false);
    const sn = saleSplit(price, terms.platformFeePercent).sellerNetGas;
    return { text: `${price} gas: one sale at ${price} pays the seller ${sn} after the ${terms.platformFeePercent}% platform fee, which reaches the ${MIN_CASHOUT_GAS}-gas cash-out minimum (${price - 1} nets ${saleSplit(price - 1, terms.platformFeePercent).sellerNetGas}); cashing out ${sn} costs the ${CASHOUT_FEE_PERCENT}% fee (${cashoutSplit(sn).feeGas}).`, tool: 'list_service', args: { priceGas: price } };
  }
  // "I want to end up with 1000 net from one sale: what price?": the smallest price whose net after both fees reaches it.
  if (sale || has(t, 'list at') || has(t, 'price')) {
    if (['end up with', 'net', 'take home', 'receive', 'pocket', 'clear', 'earned', 'got paid', 'was paid'].some((w) => has(t, w)) && (/\b(?:lowest|smallest|minimum|min|cheapest)\b(?: [a-z]+){0,2} price(?:gas)?\b/.test(t) || ['what pricegas', 'which pricegas', 'what should i list', 'what price', 'which price', 'should i charge', 'do i need to charge', 'price do i', 'how much should i', 'what was the', 'what listing price', 'which listing price', 'what was the original', 'what original price'].some((w) => has(t, w)))) {
      // The net is after the cash-out fee only when the question says so (a cash-out asked about besides is answered after).
      const afterCashout = ['cash-out fee', 'cashout fee', 'both', 'after cash', 'in btc', 'all fees', 'every fee'].some((w) => has(t, w));
      const price = priceForNet(amount, terms.platformFeePercent, afterCashout);
      const sn = saleSplit(price, terms.platformFeePercent).sellerNetGas;
      const inBand = has(t, 'band') ? PRICE_BANDS.find((b) => price >= b.minGas && price <= b.maxGas) : undefined;
      const { sales } = salesToCashout(sn);
      const minimum = cashout && !afterCashout ? ` ${sn >= MIN_CASHOUT_GAS ? `One sale (${sn}) reaches the ${MIN_CASHOUT_GAS}-gas cash-out minimum` : `One sale (${sn}) is below the ${MIN_CASHOUT_GAS}-gas cash-out minimum: ${sales} sales (${sales * sn}) reach it`}; cashing out costs ${CASHOUT_FEE_PERCENT}% more.` : '';
      return { text: `List at ${price} gas: the seller nets ${sn} after the ${terms.platformFeePercent}% platform fee${afterCashout ? `, and cashing that out (${CASHOUT_FEE_PERCENT}% fee) leaves ${cashoutSplit(sn).netGas} gas` : ''} — the lowest price that reaches ${amount} (fee ${price - sn} gas)${inBand ? `; that is the ${inBand.id} band (${inBand.minGas}–${inBand.maxGas})` : ''}.${minimum}`, tool: 'list_service', args: { priceGas: price } };
    }
  }
  // "At most $15 on gas: is builder OK?": a budget for gas is a ceiling — the packs within it, not the pack that covers it.
  if (ASKS.budget.some((w) => has(t, w)) && p.amounts.length === 1 && ['pack', 'packs', 'buy_gas', ...GAS_PACKS.map((x) => x.id)].some((w) => has(t, w))) {
    const within = GAS_PACKS.filter((x) => x.gas <= amount);
    const best = within[within.length - 1];
    const named = GAS_PACKS.find((x) => has(t, x.id));
    const verdict = named ? `${named.id} (${named.gas} gas = ${named.usd} USD) is ${named.gas <= amount ? 'within it' : 'over it'}; ` : '';
    const fit = best ? `the largest pack within it is ${best.id} (${best.gas} gas = ${best.usd} USD)${amount - best.gas >= GAS_PACKS[0].gas ? `, with ${amount - best.gas} gas to spare for another checkout` : ''}` : `no pack fits — the smallest is ${GAS_PACKS[0].id} (${GAS_PACKS[0].gas} gas = ${GAS_PACKS[0].usd} USD)`;
    return { text: `${amount} gas = ${gasToUsd(amount).toFixed(2)} USD at the peg (${GAS_PER_USD} gas = 1 USD): ${verdict}${fit}. Your human approves each checkout.`, tool: best ? 'buy_gas' : null, args: best ? { packId: best.id } : undefined };
  }
  // "With the builder pack, how many 150-gas services can I buy?": the pack's gas over the price (the buyer pays no fee).
  // (Each pack the question names: "the fleet pack … and the starter?")
  const packsNamed = GAS_PACKS.filter((x) => has(t, x.id) && x.gas !== amount);
  if (packsNamed.length && howMany) {
    const each = packsNamed.map((x) => `${x.id} is ${x.gas} gas for ${x.usd} USD: ${Math.floor(x.gas / amount)} purchases, ${x.gas - Math.floor(x.gas / amount) * amount} gas left`);
    // ("… and how much do the sellers get?": each seller's share of those purchases.)
    const n = Math.floor(packsNamed[0].gas / amount);
    const s = saleSplit(amount, terms.platformFeePercent);
    const sellers = /\bsellers?\b/.test(t) ? ` Completed, the sellers get ${n} × ${s.sellerNetGas} = ${n * s.sellerNetGas} gas and the platform ${n} × ${s.platformFeeGas} = ${n * s.platformFeeGas}.` : '';
    return { text: `${each.join('; ')} — each ${amount}-gas purchase costs exactly ${amount} (the buyer pays no fee on top).${sellers}`, tool: 'buy_gas', args: { packId: packsNamed[0].id } };
  }
  // "I hold 3000; how many 250-gas jobs can I buy?", "two 250s and a 400, what's left?": purchases against the balance and the per-purchase cap.
  const stated = p.balance;
  // ("If I buy the starter pack and spend 480 …": the pack's gas is the balance the plan starts from.)
  const bought = GAS_PACKS.find((x) => [`buy the ${x.id}`, `buy ${x.id}`, `get the ${x.id}`, `with the ${x.id}`, `after the ${x.id}`].some((w) => has(t, w)));
  const plan = purchasesAgainst(t, terms, stated ?? (bought ? bought.gas + (account?.balance ?? 0) : null) ?? account?.balance ?? null, account?.cap ?? null, howMany, anchored ? CATEGORY_ANCHOR_GAS[anchored] : null);
  if (plan) return plan;
  if (['afford', 'short', 'enough', 'cheapest', 'need more', 'combination', 'which packs', 'which pack', 'which gas pack', 'pack should i', 'left over', 'will be left', 'covers', 'cover', 'cheaper', 'i need', 'need exactly', 'combo', 'what packs', 'which packs do i'].some((w) => has(t, w)) && (!sale || ['pack', 'packs'].some((w) => has(t, w)))) {
    // "I have 150 and it costs 400" → 250 short; "services at 250, 400 and 1000, I have 0" → their sum.
    const have = stated ?? 0;
    const wanted = p.amounts.filter((a) => a !== have || stated === null);
    // ("two 250-gas purchases": the count times the price.)
    const need = many && wanted.length === 1 ? Number(many[1]) * Number(many[2].replace(/,/g, '')) : wanted.length >= 3 ? wanted.reduce((a, b) => a + b, 0) : Math.max(...wanted, amount);
    // (Covered, but over the human's per-purchase cap: the limit is the answer, not the balance.)
    if (need <= have) return account?.cap != null && need > account.cap ? null : { text: `Your ${have} gas already covers ${need}: no gas to buy.`, tool: null };
    // "Is the starter pack enough?": the named pack against the need, then the smallest single pack that covers it.
    const namedPack = GAS_PACKS.find((x) => has(t, x.id));
    if ((namedPack || ['single pack', 'one pack', 'which gas pack', 'which pack', 'what pack', 'pack should i', 'smallest pack'].some((w) => has(t, w))) && !['cheapest', 'cheaper', 'combination', 'combo', 'which packs'].some((w) => has(t, w))) {
      const pack = smallestPackCovering(need - have);
      const verdict = namedPack && namedPack.id !== pack.id ? `${namedPack.id} (${namedPack.gas} gas) is ${namedPack.gas + have >= need ? '' : 'not '}enough; ` : '';
      return { text: `${need} gas in all (the buyer pays no fee on top): ${verdict}${pack.id} (${pack.gas} gas, ${pack.usd} USD) is the smallest single pack that covers it and leaves ${pack.gas + have - need} gas.`, tool: 'buy_gas', args: { packId: pack.id } };
    }
    const packs = cheapestPacksCovering(need - have);
    const list = [...new Set(packs)].map((x) => `${packs.filter((y) => y === x).length > 1 ? `${packs.filter((y) => y === x).length} × ` : ''}${x.id} (${x.gas} gas, ${x.usd} USD)`).join(' + ');
    const usd = packs.reduce((a, x) => a + x.usd, 0);
    const inUsd = ['dollar', 'dollars', 'usd', '$'].some((w) => t.includes(w)) ? `${need} gas = ${gasToUsd(need).toFixed(2)} USD. ` : '';
    return { text: `${inUsd}You need ${need - have} more gas: the cheapest cover is ${list} = ${usd} USD${packs.length > 1 ? ', one buy_gas checkout each' : ''}; your human approves each checkoutUrl, then poll wallet.`, tool: 'buy_gas', args: { packId: packs[packs.length - 1]?.id } };
  }
  if (['fee', 'on top'].some((w) => has(t, w)) && ['as the buyer', 'as a buyer', 'do i pay', 'buyer pay', 'on top'].some((w) => has(t, w))) {
    const s = saleSplit(amount, terms.platformFeePercent);
    return { text: `No: the buyer pays exactly the price (${amount} gas); the ${terms.platformFeePercent}% fee (${s.platformFeeGas}) comes out of the seller's side, who nets ${s.sellerNetGas}.`, tool: null };
  }
  if (dollars && !sale && !cashout && !has(t, 'fee')) {
    // (Each amount the question states, "1 gas in $? and my 500 cap?", converted.)
    const each = [...new Set([amount, ...p.amounts])].slice(0, 4).map((a) => `${a} gas = ${gasToUsd(a).toFixed(2)} USD`);
    return { text: `${each.join('; ')} (gas is pegged to the dollar: 1 gas = 1 US cent).`, tool: null };
  }
  const fee = ['seller get', 'seller gets', 'what does the seller', 'usd', 'dollars', 'fee', 'fees', 'how much', 'how many', 'net', 'end up', 'receive', 'commission', 'cut', 'pocket', 'platform take', 'platform keep', 'what do i get', 'how much do i get', 'do i keep'].some((w) => has(t, w));
  if (!fee && !cashout) return null;
  // (Below the minimum it cannot be cashed out alone; what the 2% would leave, once it is with other earnings, when the fee is asked.)
  const below = (n: number) => `${n} gas is below the ${MIN_CASHOUT_GAS}-gas cash-out minimum, so it cannot be cashed out yet${has(t, 'fee') || has(t, 'fees') ? `; in a cash-out with other earnings the ${CASHOUT_FEE_PERCENT}% fee leaves ${cashoutSplit(n).netGas} gas = ${gasToUsd(cashoutSplit(n).netGas).toFixed(2)} USD of it` : ''}.`;
  // Earnings, then (when a cash-out is asked) whether they reach the minimum and what the 2 % fee leaves.
  const thenCashout = (head: string, net: number, claims?: number): Figures => {
    if (!cashout || net < MIN_CASHOUT_GAS) return { claims, text: cashout ? `${head} ${below(net)}` : head, tool: null };
    const c = cashoutSplit(net);
    const call = cashoutCall(net);
    return { text: `${head} ${connectFirst ? 'Call connect_payouts {"btcAddress"} first, then request_cashout: cashing' : 'Cashing'} out ${net} costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas (${gasToUsd(c.netGas).toFixed(2)} USD in BTC).`, tool: call.tool, args: call.args };
  };
  // "3 sales at 150, 250 and 400": each price's split, and their sum.
  const prices = p.amounts.filter((a) => a >= MIN_PRICE_GAS);
  if (sale && !many && prices.length >= 2 && new Set(prices).size >= 2 && ['total', 'in all', 'altogether', 'combined', 'sales', 'jobs', 'orders', 'sale_earn', 'completes', 'completed'].some((w) => has(t, w))) {
    const splits = prices.map((a) => saleSplit(a, terms.platformFeePercent));
    const net = splits.reduce((a, x) => a + x.sellerNetGas, 0);
    const fees = splits.reduce((a, x) => a + x.platformFeeGas, 0);
    const head = `${prices.length} sales at ${prices.join(', ')} gas (${prices.reduce((a, b) => a + b, 0)} in all) pay the seller ${splits.map((x) => x.sellerNetGas).join(' + ')} = ${net} gas = ${gasToUsd(net).toFixed(2)} USD; the platform keeps ${splits.map((x) => x.platformFeeGas).join(' + ')} = ${fees} gas (${terms.platformFeePercent}% of each).`;
    return thenCashout(head, net);
  }
  // "3 sales at 200 gas each": the earnings of all of them.
  const times = ['twice', 'two times'].some((w) => has(t, w)) ? 2 : ['three times', 'thrice'].some((w) => has(t, w)) ? 3 : Number(/\b(\d{1,2}) times\b/.exec(t)?.[1] ?? 0) || null;
  const count = many ? Number(many[1]) : (times ?? 0);
  if (summed) {
    const s = saleSplit(amount, terms.platformFeePercent);
    return thenCashout(`${summed} sales of ${amount} gas in all pay the seller ${s.sellerNetGas} gas (the platform keeps ${terms.platformFeePercent}% of each, ${s.platformFeeGas} in all).`, s.sellerNetGas, /\bi (?:sold|earned|made|completed)\b/.test(t) ? s.sellerNetGas : undefined);
  }
  if (many || (times && sale)) {
    const s = saleSplit(amount, terms.platformFeePercent);
    const total = count * s.sellerNetGas;
    const head = `${count} sales at ${amount} gas pay the seller ${count} × ${s.sellerNetGas} = ${total} gas (the platform keeps ${terms.platformFeePercent}% of each).`;
    return thenCashout(head, total, /\bi (?:sold|earned|made|completed)\b/.test(t) ? total : undefined);
  }
  if (sale) {
    const s = saleSplit(amount, terms.platformFeePercent);
    const band = has(t, 'band') ? PRICE_BANDS.find((b) => amount >= b.minGas && amount <= b.maxGas) : undefined;
    const usd = ['dollar', 'dollars', 'usd', '$'].some((w) => t.includes(w)) ? ` = ${gasToUsd(s.sellerNetGas).toFixed(2)} USD` : '';
    const head = `${aGas(amount, true)} sale${band ? ` (${band.id} band ${band.minGas}–${band.maxGas})` : ''} pays the seller ${s.sellerNetGas} gas${usd} (the platform keeps ${terms.platformFeePercent}% = ${s.platformFeeGas}${usd ? ` gas = ${gasToUsd(s.platformFeeGas).toFixed(2)} USD` : ''}); the buyer pays exactly ${amount}.`;
    if (howMany) {
      const c = salesToCashout(s.sellerNetGas);
      return { text: `${head} ${c.sales} sales (${c.amountGas} gas) reach the ${MIN_CASHOUT_GAS}-gas cash-out minimum; ${c.sales - 1} make only ${(c.sales - 1) * s.sellerNetGas}. Cashing out ${c.amountGas} costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas.`, tool: null };
    }
    return thenCashout(head, s.sellerNetGas);
  }
  if (cashout) {
    // A balance is not what cashes out ("…but wallet says 2500 gas?!"): only sale earnings do.
    if (amount === p.balance) return { text: `Your ${amount}-gas balance is not what cashes out: only sale earnings (sale_earn, shown as withdrawableGas in wallet) do — bought gas, refunds and referral bonuses are spendable, never withdrawable; at least ${MIN_CASHOUT_GAS} gas of them, then a ${CASHOUT_FEE_PERCENT}% fee.`, tool: 'wallet' };
    if (amount < MIN_CASHOUT_GAS) return { text: below(amount), tool: null };
    const c = cashoutSplit(amount);
    // ("the 1600 gas I have left": a balance the asker holds — checked against what the wallet can withdraw.)
    return { claims: /\d gas (?:i have|i hold|left)|\bmy \d/.test(t) ? amount : undefined, text: `${minimumAsked ? `The minimum cash-out is ${MIN_CASHOUT_GAS} gas = ${gasToUsd(MIN_CASHOUT_GAS).toFixed(2)} USD. ` : ''}Cashing out ${amount} gas costs the ${CASHOUT_FEE_PERCENT}% fee (${c.feeGas}): you receive ${c.netGas} gas = ${gasToUsd(c.netGas).toFixed(2)} USD in BTC.`, tool: 'request_cashout', args: { amountGas: amount } };
  }
  return null;
}

