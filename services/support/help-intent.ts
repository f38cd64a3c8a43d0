/**
 * ask_help, between parse and compose: what the question wants — one intent of the data table
 * (packages/knowledge/topics.ts), picked by the phrases that show it and the asker's side, never
 * by which documentation section shares most words with it. A question about the asker's own
 * purchase is answered from the purchase machine (compose's forPurchase); the intent then only
 * says which call the question asks about.
 */
import { topics, type Topic } from '../../packages/knowledge/topics';
import type { MarketTerms } from '../../packages/market-rules';
import { has, stemmed, type Parsed, type Side } from './help-parse';

export interface Intent {
  topic: Topic;
  /** Words of the phrases that matched (a longer phrase says more). */
  score: number;
}

export class Intents {
  private readonly table: Topic[];

  constructor(terms: MarketTerms) {
    // Phrases match whatever their inflection ("cancelling the order" shows "cancel the order").
    this.table = topics(terms).map((t) => ({ ...t, phrases: [...new Set(t.phrases.map(stemmed))] }));
  }

  /** The best intent for the question and the asker's side, or null when no phrase shows one. */
  of(p: Parsed, side: Side | null, state: string | null): Intent | null {
    let best: Intent | null = null;
    for (const topic of this.table) {
      if (side && topic.side && topic.side !== side) continue;
      if (state && topic.states && !topic.states.includes(state)) continue;
      // The words the intent's phrases cover, longest phrase first (a shorter one inside it counts once).
      let score = 0;
      let rest = stemmed(p.text);
      for (const phrase of [...topic.phrases].sort((a, b) => b.length - a.length)) {
        if (!has(rest, phrase)) continue;
        score += phrase.split(' ').length;
        rest = rest.split(phrase).join(' ');
      }
      // A tool the question names is the intent whose call it is (unless a phrase says more).
      // A tool the question names is the intent whose call it is, unless the asker says it made that call already.
      const done = (tool: string) => ['via', 'with', 'called', 'ran', 'used', 'pulled', 'did'].some((w) => has(p.text, `${w} ${tool}`));
      if (topic.tool && p.tools.includes(topic.tool) && !done(topic.tool)) score += 1.5;
      if (score > (best?.score ?? 0)) best = { topic, score };
    }
    return best;
  }
}
