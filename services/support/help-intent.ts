/**
 * ask_help, between parse and compose: what the question wants — intents of the data table
 * (packages/knowledge/topics.ts), picked by the phrases that show them and the asker's side, never
 * by which documentation section shares most words with it. A question about the asker's own
 * purchase is answered from the purchase machine (compose's forPurchase); the intent then only
 * says which call the question asks about. A question that asks two things gets a second intent.
 */
import { topics, type Topic } from '../../packages/knowledge/topics';
import type { MarketTerms } from '../../packages/market-rules';
import { doneCalls, has, stemmed, type Parsed, type Side } from './help-parse';
import { distinctiveParts } from './help-retrieve';
import { BUYS_A_SERVICE, MODIFIER_WORDS, NEEDS_GAS, SELLS } from '../../packages/knowledge/synonyms';

export interface Intent {
  topic: Topic;
  /** Words of the phrases that matched (a longer phrase says more). */
  score: number;
  /** What else the question asks, when a second intent is as clear (a multi-part question). */
  also: Topic | null;
}

/** A typo of a long word ("refferal", "categorys"): one edit apart, two for words of eight letters or more. */
function typo(a: string, b: string): boolean {
  const max = Math.min(a.length, b.length) >= 8 ? 2 : 1;
  if (a[0] !== b[0] || Math.abs(a.length - b.length) > max) return false;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length] <= max;
}

/** Any determiner is one ("change my price" shows "change the price"; "cancel this order" shows "cancel my order"). */
const determined = (s: string) => s.replace(/\b(?:my|the|a|an|this|that|our|its)\b/g, 'the');

/** The question names the tool as a call ("confirm_delivery", "call wallet", "wallet {}"), not as a plain word ("my wallet"). */
const calls = (text: string, tool: string) => tool.includes('_') || [`call ${tool}`, `${tool} {`, `${tool} tool`, `${tool} call`, `${tool} ->`, `${tool} returns`, `${tool} shows`, `${tool} says`].some((f) => text.includes(f));

export class Intents {
  private readonly table: Topic[];
  /** How much a word of a phrase says: a word many intents' phrases share ("my", "key", "order") says less than one only a few use ("shown", "referral"). */
  private readonly weight = new Map<string, number>();

  constructor(terms: MarketTerms) {
    // Phrases match whatever their inflection ("cancelling the order" shows "cancel the order").
    this.table = topics(terms).map((t) => ({ ...t, phrases: [...new Set(t.phrases.map((x) => determined(stemmed(x))))] }));
    const df = new Map<string, number>();
    for (const t of this.table) for (const w of new Set(t.phrases.flatMap((x) => x.split(' ')))) df.set(w, (df.get(w) ?? 0) + 1);
    const n = this.table.length;
    for (const [w, k] of df) this.weight.set(w, Math.min(1, Math.log(n / k) / Math.log(n / 2)) * (MODIFIER_WORDS.includes(w) ? 0.5 : 1));
  }

  private said(phrase: string): number {
    return phrase.split(' ').reduce((sum, w) => sum + (this.weight.get(w) ?? 1), 0);
  }

  /** The words the intent's phrases cover (`words`, longest phrase first: a shorter one inside it counts once), and what they say (`weight`). */
  private score(topic: Topic, p: Parsed, text: string, typos: string[]): { words: number; weight: number } {
    // An intent shown only by both of two things ("cash out" and "dispute"): the best phrase of each group, or nothing.
    if (topic.together) {
      const best = topic.together.map((group) => Math.max(0, ...group.filter((x) => has(text, determined(stemmed(x)))).map((x) => this.said(determined(stemmed(x))))));
      return best.every((w) => w > 0) ? { words: topic.together.length, weight: best.reduce((a, b) => a + b, 0) } : { words: 0, weight: 0 };
    }
    let words = 0;
    let weight = 0;
    let rest = text;
    for (const phrase of [...topic.phrases].sort((a, b) => b.length - a.length)) {
      if (has(rest, phrase)) {
        words += phrase.split(' ').length;
        weight += this.said(phrase);
        rest = rest.split(phrase).join(' ');
      } else if (!phrase.includes(' ') && typos.some((w) => typo(w, phrase))) {
        words += 1;
        weight += 1;
      }
    }
    // A tool the question names is the intent whose call it is, unless the asker says it made that call already.
    if (topic.tool && p.tools.includes(topic.tool) && calls(p.text, topic.tool) && !doneCalls(p).includes(topic.tool)) {
      words += 1.5;
      // (A named tool calls up its general intent; a special use of it — preset arguments — needs its own words too.)
      weight += topic.args ? 1 : 1.5;
    } else if (topic.tool && distinctiveParts(topic.tool).some((part) => has(text, part))) weight += 0.5; // its call's own word ("a refund" → request_refund)
    return { words, weight };
  }

  /** The best intent for the question and the asker's side (and a second one as clear), or null when no phrase shows one. */
  of(p: Parsed, side: Side | null, state: string | null): Intent | null {
    // (A pasted envelope's own requestId field is not what the question is about.)
    const text = determined(stemmed(p.text.replace(/"requestid"\s*:\s*"[^"]*"/g, ' ')));
    const words = text.split(/[^a-z0-9_]+/).filter((w) => w.length >= 6);
    const ranked = this.table
      .filter((t) => !(side && t.side && t.side !== side) && !(state && t.states && !t.states.includes(state)))
      .map((topic) => {
        const { words: score, weight } = this.score(topic, p, text, words);
        // (An intent of the side the asker states says a little more: "new seller … buy gas before I can list" is about listing.)
        return { topic, score, weight: weight + (score && p.side && topic.side === p.side ? 0.1 : 0) };
      })
      .filter((x, _, all) => x.score > 0 && !x.topic.yieldsTo?.some((id) => all.some((y) => y.topic.id === id && y.score > 0)))
      // The intent its words say most about leads (the number of words only breaks a tie).
      .sort((a, b) => b.weight - a.weight || b.score - a.score);
    if (!ranked.length) return null;
    // Gas asked about by an agent that means to sell, and buys nothing: listing needs none.
    const list = ranked.find((x) => x.topic.id === 'list') ?? (SELLS.test(p.text) && NEEDS_GAS.test(p.text) ? { ...ranked[0], topic: this.table.find((t) => t.id === 'list')! } : null);
    if (list && ranked[0].topic.tool === 'buy_gas' && !BUYS_A_SERVICE.test(p.text)) ranked.unshift(list);
    // A question that asks two things ("…? Also, …", "1) … 2) …", "…, and which one …"): a later part may show a second intent by one word.
    const parts = p.text.split(/\?|;|\b(?:also|quick one|plus)\b|\(?\b[2-4]\)|,? and (?=(?:how|what|which|is|are|can|do|does|should|will|when|where|why|who)\b)/).slice(1).map((x) => determined(stemmed(x))).filter((x) => x.trim().length > 3);
    const inTail = parts.flatMap((tail) => ranked.map((x) => ({ ...x, ...this.score(x.topic, p, tail, []) })).map((x) => ({ ...x, score: x.words })).filter((x) => x.score >= 1)).sort((a, b) => b.score - a.score);
    // (Without a second part, only an intent shown as strongly as the first is a second question.)
    const second = [...inTail, ...ranked.filter((x) => x.score >= Math.max(3, ranked[0].score))].find((x) => x.topic.id !== ranked[0].topic.id && (!x.topic.tool || x.topic.tool !== ranked[0].topic.tool));
    return { topic: ranked[0].topic, score: ranked[0].score, also: second && ranked[0].score >= 2 ? second.topic : null };
  }
}
