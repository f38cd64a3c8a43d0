/**
 * ask_help, step 4: one MiniSearch index over the knowledge sections the project already generates
 * (the catalogue's tools, the rules, the machine, the error codes). The question's words are searched
 * with the documentation's words for its paraphrases (packages/knowledge/synonyms.ts) added.
 */
import MiniSearch from 'minisearch';
import { knowledgeSections, type KnowledgeSection } from '../../packages/knowledge';
import { COMMON, DOMAIN_WORDS, OFF_TOPIC_WORDS, QUESTION_WORDS, STOP, SYNONYMS, WEAK_DOMAIN_WORDS } from '../../packages/knowledge/synonyms';
import { TOOL_NAMES, TOOLS } from '../../packages/tool-catalogue';
import type { MarketTerms } from '../../packages/market-rules';
import { has, stem, stemmed, type Parsed } from './help-parse';

export interface Hit {
  section: KnowledgeSection;
  score: number;
}

export interface Retrieved {
  hits: Hit[];
  /** Catalogue tools the question points at, best first, with a relative score (1 = best). */
  tools: Array<{ tool: string; score: number }>;
  inDomain: boolean;
  /** The question with the documentation's words for its paraphrases (what was searched). */
  query: string;
}

/** The parts of tool names that name one tool only ("dispute", "refund", "confirm"): a question using one asks about that tool. */
const PART_COUNT = new Map<string, number>();
for (const t of TOOL_NAMES) for (const part of new Set(t.split('_'))) PART_COUNT.set(part, (PART_COUNT.get(part) ?? 0) + 1);
export function distinctiveParts(tool: string): string[] {
  return tool.split('_').filter((part) => PART_COUNT.get(part) === 1 && part.length > 3);
}

/** Whether the (expanded) query names `tool` by its own word ("refund" → request_refund; "refunded" too). */
export function names(query: string, tool: string): boolean {
  return query.includes(tool) || distinctiveParts(tool).some((part) => query.split(/[^a-z0-9_]+/).some((w) => w.startsWith(part)));
}

/** Words with their underscore parts ("buy_gas" → buy_gas, buy, gas). */
function tokenize(s: string): string[] {
  const out: string[] = [];
  for (const w of s.toLowerCase().split(/[^a-z0-9_]+/)) {
    if (!w) continue;
    out.push(w);
    if (w.includes('_')) out.push(...w.split('_').filter(Boolean));
  }
  return out;
}

/** Light stemming, the same on both sides: plurals and -ing/-ed go. */
function processTerm(t: string): string | null {
  return STOP.has(t) || t.length < 2 ? null : stem(t);
}

/** The sections of tools that are another tool's old name (buy_credits, cash_out): the tool's own section answers. */
const ALIAS_SECTIONS = new Set(TOOLS.filter((t) => t.aliasOf).map((t) => `tool-${t.name}`));

/** How much less a section that only leads to a tool counts for that tool than the tool's own section. */
const LEADS_TO_WEIGHT = 0.6;

export class KnowledgeIndex {
  readonly sections: KnowledgeSection[];
  private readonly search: MiniSearch<{ id: string; title: string; body: string; tags: string }>;
  private readonly byId: Map<string, KnowledgeSection>;

  constructor(baseUrl: string, terms?: MarketTerms) {
    this.sections = knowledgeSections(baseUrl, terms);
    this.byId = new Map(this.sections.map((s) => [s.id, s]));
    this.search = new MiniSearch({
      fields: ['title', 'body', 'tags'],
      tokenize,
      processTerm,
      searchOptions: { boost: { title: 2, tags: 3 }, combineWith: 'OR', prefix: (t) => t.length > 4, fuzzy: (t) => (t.length > 6 ? 0.2 : false) },
    });
    this.search.addAll(this.sections.map((s) => ({ id: s.id, title: s.title, body: s.body, tags: s.tags.join(' ') })));
    for (const s of this.sections) for (const m of s.body.matchAll(/\b[a-z]+[A-Z][A-Za-z]+\b/g)) this.identifiers.add(m[0].toLowerCase());
  }

  /** The documentation's own identifiers (gasBalance, isSeed …): a question naming one is about this marketplace. */
  private readonly identifiers = new Set<string>();

  retrieve(p: Parsed): Retrieved {
    const expansions = Object.entries(SYNONYMS)
      .filter(([phrase]) => has(p.text, phrase))
      .map(([, words]) => words);
    const query = [p.text, ...expansions, ...expansions, p.error ? `error ${p.error.code}` : ''].join(' ');
    const hits = this.search
      .search(query)
      .filter((r) => !ALIAS_SECTIONS.has(String(r.id)))
      .slice(0, 8)
      .map((r) => ({ section: this.byId.get(String(r.id))!, score: r.score }));
    const toolScores = new Map<string, number>();
    const bump = (tool: string, score: number) => toolScores.set(tool, (toolScores.get(tool) ?? 0) + score);
    for (const h of hits) {
      if (h.section.id.startsWith('tool-')) bump(h.section.id.slice(5), h.score);
      else if (h.section.nextStep) bump(h.section.nextStep.tool, h.score * LEADS_TO_WEIGHT);
    }
    const best = Math.max(1e-9, ...toolScores.values(), ...hits.map((h) => h.score));
    for (const t of p.tools) bump(t, best * 2);
    // A paraphrase the synonyms table maps onto a tool names that tool.
    for (const words of expansions) for (const w of words.split(' ')) if (TOOL_NAMES.includes(w)) bump(w, best * 0.5);
    const tools = [...toolScores.entries()].sort((a, b) => b[1] - a[1]).map(([tool, score]) => ({ tool, score: score / best }));
    const words = p.text.split(/[^a-z0-9_]+/);
    const namesATool = TOOL_NAMES.some((t) => distinctiveParts(t).some((part) => words.some((w) => w.startsWith(part))));
    return { hits, tools, query, inDomain: inDomain(p) || namesATool || words.some((w) => this.identifiers.has(w)) };
  }
}

function inDomain(p: Parsed): boolean {
  // A question that names nothing at all ("what now?", "how much will I get?") is about the asker's own account here.
  if (!p.text.split(/[^a-z0-9_]+/).some((w) => w.length >= 3 && !STOP.has(w) && !COMMON.has(w) && !QUESTION_WORDS.has(w))) return true;
  if (p.tools.length || p.error || p.purchaseIds.length || p.listingIds.length || p.checkoutIds.length) return true;
  if (TOOL_NAMES.some((t) => has(p.text, t.replace(/_/g, ' ')))) return true;
  // (Any inflection of a word says it: "after buying" says "buy".)
  // ("purchase_id": a name written with an underscore says its words.)
  const st = stemmed(p.text.replace(/_/g, ' '));
  const says = (w: string) => has(p.text, w) || has(st, w);
  if (DOMAIN_WORDS.some(says)) return true;
  const offTopic = OFF_TOPIC_WORDS.some((w) => has(p.text, w));
  return !offTopic && (WEAK_DOMAIN_WORDS.some(says) || Object.keys(SYNONYMS).some(says));
}
