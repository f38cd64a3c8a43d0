/**
 * ask_help's engine: BM25 retrieval (MiniSearch) over the knowledge sections that llms-full.txt is
 * rendered from, with query understanding (phrases, question intents, synonyms weighted below the
 * agent's own words, light stemming, pasted HTTP statuses), the caller's context (error code, own
 * failed request, stuck state), and an optional LLM that may only rephrase the retrieved passages.
 * Without an LLM, the retrieval answer is the product: the sentence that answers most of the question
 * first, then the best section (and a runner-up nearly as good). It says "I don't know" when the
 * documentation does not know most of the question's weight (IDF; unknown words weigh most), or —
 * when the question names the marketplace's own things (gas, a listing, escrow …) — a fair share of it.
 * Measured by test/help-eval.ts.
 */
import MiniSearch, { type SearchResult } from 'minisearch';
import type { RequestLogEntry } from '../../packages/tool-catalogue/meta';
import {
  knowledgeSections,
  errorGuide,
  errorGuides,
  purchaseTransitions,
  exampleArguments,
  type KnowledgeSection,
  type NextStep,
} from '../../packages/knowledge';
import {
  CASHOUT_FEE_PERCENT,
  DEFAULT_TERMS,
  GAS_PER_USD,
  REFERRAL_BONUS_GAS,
  REFERRAL_WEEKLY_CAP,
  cashoutSplit,
  gasToUsd,
  smallestPackCovering,
  GAS_PACKS,
  MIN_CASHOUT_GAS,
  packById,
  saleSplit,
  type MarketTerms,
} from '../../packages/market-rules';
import { TOOL_NAMES, PURCHASE_STATUSES, TOOLS } from '../../packages/tool-catalogue';
import { askingPart } from './help-goals';
import { callTo, canComeNext, wantedCall } from './help-want';
import { LEARNED_MARGIN, learnedCall } from './help-learned';
import { describe } from './help-lifecycle';
import { processTerm, questionTerms, tokenize, type QuestionTerm } from './help-text';
import { FIRST_PERSON, SPENDING, TOOL_RULES, aboutTheService, accountOverview, actionTool, declineOf, describePurchase, ownOrderOf, offTopicDecline, limitsNow, reportsFault, roleOf, situationOf, statesUnseenPurchase, withStatedFigures, type Decline } from './help-situation';
import { CALL_CODES, envelopeAnswer, pastedError } from './help-envelope';
import type { HelpAccount, HelpAnswer, HelpContext, HelpInput, LookedAt } from '../../packages/contracts/support';

export type { HelpAnswer, HelpContext, HelpInput };

export { composeWithLlm, type LlmOptions } from './help-llm';

/** A section body's sentences and list items, each short enough to lead an answer. */
function splitSentences(body: string): string[] {
  return body
    .split(/\n+|(?<=[.!?])\s+(?=[A-Z0-9])/)
    .map((x) => x.trim())
    .filter((x) => x.length > 12);
}

// ---------------------------------------------------------------------------------------------
// The index.

interface IndexedSection {
  id: string;
  title: string;
  body: string;
  tagText: string;
  kind: 'concept' | 'error' | 'tool';
}

/** A catalogue tool as a candidate next call: its BM25 score and the weighted share of the question it matches. */
export interface RankedTool {
  tool: string;
  score: number;
  coverage: number;
}

export interface Retrieved {
  section: KnowledgeSection;
  score: number;
  matched: string[];
}

export type { RequestLogEntry };

/** The answer is "I don't know" unless the documentation knows most of the question's weight… */
const DOMAIN_MIN = 0.55;
/** …and the best section matches a fair share of it. */
const COVERAGE_MIN = 0.3;
/**
 * A question that names the marketplace's own things in its own words (a listing, the escrow, a
 * webhook …) is about this service even when its other words are new to the documentation
 * ("how do I liquidate my earned gas?"): then a smaller known share is enough.
 */
const ANCHORED_DOMAIN_MIN = 0.3;
const ANCHORED_COVERAGE_MIN = 0.2;
/** Parts of tool names that say nothing about this marketplace by themselves ("get", "send", "report a bug"). */
const CATALOGUE_GENERIC_WORDS = new Set(['get', 'list', 'set', 'update', 'send', 'request', 'delete', 'ask', 'help', 'report', 'bug', 'work', 'out', 'connect', 'experience', 'whoami']);
const ANCHORS = new Set(
  [
    'gas', 'escrow', 'listing', 'listings', 'seller', 'sellers', 'buyer', 'buyers', 'purchase', 'purchases', 'delivery',
    'deliverable', 'dispute', 'disputes', 'refund', 'refunds', 'cashout', 'payout', 'payouts', 'webhook', 'webhooks',
    'mcp', 'apikey', 'wallet', 'checkout', 'marketplace', 'sale', 'sales', 'commission', 'offer', 'offers', 'order', 'orders',
    'agent', 'service', 'services', 'card', 'sell', 'buy',
    // The catalogue's own verbs and objects (rate_purchase, confirm_delivery …) name this marketplace's actions too.
    ...TOOLS.filter((t) => !t.aliasOf).flatMap((t) => t.name.split('_')).filter((w) => !CATALOGUE_GENERIC_WORDS.has(w)),
  ]
    .map((w) => processTerm(w))
    .filter((w): w is string => !!w),
);
const EXPANSION_WEIGHT = 0.5;
/** A second section scoring at least this share of the best one is answered in full too. */
const RUNNER_UP_SHARE = 0.75;
const KIND_BOOST: Record<IndexedSection['kind'], number> = { concept: 1.25, error: 1, tool: 0.8 };
const ERROR_CODES = errorGuides().map((e) => e.code);
/** Error codes whose guide alone says what to do next, whatever purchase the question tells of. */
const SELF_EXPLAINING = new Set(['insufficient_gas', 'unknown_tool', 'not_found']);
/** Tools that are another tool's old name (buy_credits, cash_out): never suggested over the tool itself. */
const ALIASES = new Set(TOOLS.filter((t) => t.aliasOf).map((t) => t.name));
/** Each tool's catalogue description: what a suggested call does (and its rule: "A price change never affects purchases already made"). */
const TOOL_LINES = new Map(TOOLS.map((t) => [t.name, t.description]));
/** Never the learned next call: asking again, or filing a bug (only a reported fault leads there, below). */
const NEVER_LEARNED = new Set(['ask_help', 'report_bug', 'report_experience']);
/** The first code of each HTTP status (400 → invalid_arguments, the common one). */
const ERROR_CODE_BY_STATUS = new Map<number, string>();
for (const e of errorGuides()) if (!ERROR_CODE_BY_STATUS.has(e.status)) ERROR_CODE_BY_STATUS.set(e.status, e.code);

/** Words before a tool's name that say it is not what the asker wants ("before I even register", "without buy_gas"). */
const NOT_WANTED_BEFORE = /\b(?:before|without|instead of|rather than|no need to|don'?t want to)\s+(?:i\s+|we\s+)?(?:even\s+|first\s+)?/;

export class HelpIndex {
  readonly sections: KnowledgeSection[];
  private readonly byId: Map<string, KnowledgeSection>;
  private readonly search: MiniSearch<IndexedSection>;
  /** In how many sections each processed term occurs. */
  private readonly docFrequency = new Map<string, number>();

  constructor(
    readonly baseUrl: string,
    readonly terms: MarketTerms = DEFAULT_TERMS,
  ) {
    this.sections = knowledgeSections(baseUrl, terms);
    this.byId = new Map(this.sections.map((s) => [s.id, s]));
    this.search = new MiniSearch<IndexedSection>({
      fields: ['title', 'body', 'tagText'],
      storeFields: ['kind'],
      tokenize,
      processTerm,
      searchOptions: { boost: { title: 2, tagText: 3 }, combineWith: 'OR', fuzzy: (term) => (term.length > 6 ? 0.15 : false), weights: { fuzzy: 0.3, prefix: 0.3 } },
    });
    this.search.addAll(
      this.sections.map((s) => ({
        id: s.id,
        title: s.title,
        body: s.body,
        tagText: s.tags.join(' '),
        kind: s.id.startsWith('tool-') ? 'tool' : s.id.startsWith('error-') ? 'error' : 'concept',
      })),
    );
    for (const sec of this.sections) {
      const terms = new Set(tokenize(`${sec.title} ${sec.body} ${sec.tags.join(' ')}`).map(processTerm).filter((x): x is string => !!x));
      for (const t of terms) this.docFrequency.set(t, (this.docFrequency.get(t) ?? 0) + 1);
    }
  }

  private readonly nearCache = new Map<string, string | null>();

  /** The documentation's term one edit (or one swap) away from a long unknown word, if exactly one is. */
  private nearTerm(term: string): string | null {
    if (term.length < 6 || /\d/.test(term)) return null;
    let found = this.nearCache.get(term);
    if (found !== undefined) return found;
    const matches = [...this.docFrequency.keys()].filter((d) => d[0] === term[0] && Math.abs(d.length - term.length) <= 1 && oneEditApart(term, d));
    found = matches.length === 1 ? matches[0] : null;
    if (this.nearCache.size >= 10_000) this.nearCache.clear(); // questions are anyone's words: keep it bounded
    this.nearCache.set(term, found);
    return found;
  }

  section(id: string): KnowledgeSection | undefined {
    return this.byId.get(id);
  }

  /**
   * How much a question term says: the inverse document frequency of the term or of its rarest
   * expansion. A word the documentation never uses weighs as much as the rarest word: it is what
   * makes "the capital of Australia" a question this service cannot answer.
   */
  private termWeight(t: QuestionTerm): { weight: number; known: boolean } {
    const dfs = [t.term, ...t.expansions].map((x) => this.docFrequency.get(x) ?? 0).filter((n) => n > 0);
    const rarest = dfs.length ? Math.min(...dfs) : 1;
    return { weight: Math.log(1 + this.sections.length / rarest), known: dfs.length > 0 };
  }

  /**
   * Ranked sections for a query. coverage: the weighted share of the question's terms the best
   * section matches; domain: the weighted share the documentation knows at all.
   */
  retrieve(query: string, opts: { boostIds?: string[] } = {}): { hits: Retrieved[]; coverage: number; domain: number; termCount: number; terms: QuestionTerm[] } {
    const terms = questionTerms(query, (t) => this.docFrequency.has(t)).map((t) => {
      // A typo ("servise") meets the documentation's word one edit away.
      if (this.docFrequency.has(t.term) || t.expansions.some((e) => this.docFrequency.has(e))) return t;
      const near = this.nearTerm(t.term);
      return near ? { ...t, expansions: [...t.expansions, near] } : t;
    });
    if (terms.length === 0) return { hits: [], coverage: 0, domain: 0, termCount: 0, terms };
    const all = [...new Set(terms.flatMap((t) => [t.term, ...t.expansions]))];
    const originals = new Set(terms.map((t) => t.term));
    const boostIds = new Set(opts.boostIds ?? []);
    const results: SearchResult[] = this.search.search(all.join(' '), {
      // Terms are already processed; keep them as they are.
      tokenize: (t) => t.split(' ').filter(Boolean),
      processTerm: (t) => t,
      boostDocument: (id, _term, stored) => KIND_BOOST[(stored?.kind as IndexedSection['kind']) ?? 'concept'] * (boostIds.has(String(id)) ? 3 : 1),
      // The agent's own words count fully; the synonyms they were expanded to count half.
      boostTerm: (term) => (originals.has(term) ? 1 : EXPANSION_WEIGHT),
    });
    const weights = terms.map((t) => this.termWeight(t));
    const total = weights.reduce((sum, w) => sum + w.weight, 0);
    // A topic word of a search request ("a Dockerfile expert") is the catalogue's to know, not the documentation's.
    const domain = weights.reduce((sum, w, i) => sum + (w.known || terms[i].topic ? w.weight : 0), 0) / total;
    const coverageOf = (matchedTerms: string[]) => {
      const matched = new Set(matchedTerms);
      return terms.reduce((sum, t, i) => sum + (matched.has(t.term) || t.expansions.some((e) => matched.has(e)) ? weights[i].weight : 0), 0) / total;
    };
    // BM25 favours short sections that repeat one common word; a section that covers more of the
    // question's rare words is the better answer, so the first few are re-ranked by coverage too.
    const hits = results
      .slice(0, 5)
      .map((r) => ({ section: this.byId.get(String(r.id))!, score: r.score, matched: r.queryTerms, coverage: coverageOf(r.queryTerms) }))
      .sort((a, b) => b.score * (0.5 + b.coverage) - a.score * (0.5 + a.coverage))
      .map(({ coverage: _c, ...h }) => h);
    const coverage = hits.length ? coverageOf(hits[0].matched) : 0;
    return { hits, coverage, domain, termCount: terms.length, terms };
  }

  /**
   * The catalogue's tools ranked by how well the question matches each one's description and
   * arguments (the same BM25 index, restricted to the tool sections): the words of the sentences
   * that ask or want ("how do I …", "I want …") count fully, the ones that tell what happened half.
   */
  rankTools(question: string): RankedTool[] {
    const known = (t: string) => this.docFrequency.has(t);
    const terms = questionTerms(question, known);
    if (!terms.length) return [];
    const weights = terms.map((t) => this.termWeight(t).weight);
    const total = weights.reduce((a, b) => a + b, 0) || 1;
    const asked = new Set(questionTerms(askingPart(question.toLowerCase()), known).flatMap((t) => [t.term, ...t.expansions]));
    const originals = new Set(terms.map((t) => t.term));
    const all = [...new Set(terms.flatMap((t) => [t.term, ...t.expansions]))];
    return this.search
      .search(all.join(' '), {
        tokenize: (t) => t.split(' ').filter(Boolean),
        processTerm: (t) => t,
        filter: (r) => r.kind === 'tool',
        // The tags repeat the name's parts ("orders"): a word of the question meets the description instead.
        fields: ['title', 'body'],
        boostTerm: (term) => (originals.has(term) ? 1 : EXPANSION_WEIGHT) * (asked.has(term) ? 1 : 0.5),
      })
      .map((r) => {
        const matched = new Set(r.queryTerms);
        const coverage = terms.reduce((sum, t, i) => sum + (matched.has(t.term) || t.expansions.some((e) => matched.has(e)) ? weights[i] : 0), 0) / total;
        return { tool: String(r.id).slice('tool-'.length), score: r.score, coverage };
      })
      .filter((r) => !ALIASES.has(r.tool));
  }

  /**
   * The sentence of the retrieved sections that answers most of the question (weighted by how much
   * each of its words says), so the fact asked for leads the answer instead of hiding in a section.
   */
  private keySentence(hits: Retrieved[], terms: QuestionTerm[]): { text: string; share: number } | null {
    const weighed = terms.map((t) => this.termWeight(t));
    const weights = weighed.map((w) => w.weight);
    const total = weights.reduce((a, b) => a + b, 0) || 1;
    // The question's focus: its most telling word the documentation knows. A sentence without it
    // answers something else, however many of the other words it shares ("In short" stays on topic).
    const focusIndex = weighed.reduce((best, w, i) => (w.known && !terms[i].topic && (best < 0 || w.weight > weighed[best].weight) ? i : best), -1);
    const focus = focusIndex >= 0 ? terms[focusIndex] : null;
    let best: { text: string; score: number } | null = null;
    for (const [rank, hit] of hits.slice(0, 3).entries()) {
      for (const sentence of splitSentences(hit.section.body)) {
        if (/^(?:Next step|Cause|HTTP \d)/.test(sentence)) continue;
        const words = new Set(tokenize(sentence).map(processTerm).filter((x): x is string => !!x));
        if (focus && !words.has(focus.term) && !focus.expansions.some((e) => words.has(e))) continue;
        const score =
          terms.reduce((sum, t, i) => sum + (words.has(t.term) || t.expansions.some((e) => words.has(e)) ? weights[i] : 0), 0) * (rank === 0 ? 1.2 : 1);
        if (!best || score > best.score) best = { text: sentence, score };
      }
    }
    return best && best.score > 0 ? { text: best.text, share: best.score / 1.2 / total } : null;
  }

  /** The retrieval answer: context first (own request, error code, stuck state), then the best sections. */
  answer(input: HelpInput): HelpAnswer {
    const ctx = input.context ?? {};
    const account = withStatedFigures(input.question, input.account ?? null);
    const now = input.now ?? new Date();
    // 0. What ask_help does not do: refused at once, with what it can do instead.
    const decline = declineOf(input.question);
    if (decline) {
      const grounded = groundedDecline(decline, input.question, account);
      return declined(grounded.decline, input, grounded.lookedAt);
    }
    // A rule asked with a number ("2500 gas in dollars?", "cash out 1000 gas after the fee?"): the worked-out fact leads.
    const parts: string[] = ruleFacts(input.question);
    const lookedAt: LookedAt[] = [];
    const sources = new Map<string, string>();
    let nextStep: NextStep | null = null;
    /**
     * The call follows from what the question pasted or states (the tool name it meant, a header to fix, a
     * fault to report, the purchase machine's move for a stated state, figures worked out): nothing learned replaces it.
     */
    let ruledStep = parts.length > 0;
    /** The call is only the best section's example, not one the question asked for. */
    let sectionExample = false;
    let known = parts.length > 0;
    let confidence = parts.length ? 0.9 : 0;
    const boostIds: string[] = [];

    // 1. The caller's own failed request.
    let explainedCode: string | null = null;
    const lastFailure =
      !ctx.requestId && account?.recentErrors?.length && LAST_CALL.test(input.question) && !findErrorCode(`${ctx.error ?? ''} ${input.question}`) ? account.recentErrors[0] : null;
    if (ctx.requestId || lastFailure) {
      const r = lastFailure ?? input.request;
      if (r) lookedAt.push({ kind: 'request', id: r.requestId });
      if (r) {
        const when = r.at ? ` at ${r.at}` : '';
        if (r.errorCode) {
          explainedCode = r.errorCode;
          const guide = errorGuide(r.errorCode);
          parts.push(
            `Your request ${r.requestId}${when} called ${r.tool ?? 'an unknown tool'} and failed with HTTP ${r.status} ${r.errorCode}` +
              (r.errorMessage ? `: "${r.errorMessage}"` : '.') +
              (guide ? `\nWhy: ${guide.cause}\nWhat to do: ${guide.nextStepText}` : ''),
          );
          if (guide) {
            sources.set(`error-${guide.code}`, `Error ${guide.title}`);
            nextStep = nextStepAfterFailure(guide.code, r.tool) ?? guide.nextStep;
            ruledStep = true;
          }
          if (r.errorCode === 'insufficient_gas') {
            const shortfall = parseShortfall(`${r.errorMessage ?? ''} ${ctx.error ?? ''}`);
            nextStep = insufficientGasStep(shortfall);
            parts.push(insufficientGasLine(shortfall));
          }
          known = true;
          confidence = 1;
        } else {
          parts.push(`Your request ${r.requestId}${when} called ${r.tool ?? 'an unknown tool'} and succeeded (HTTP ${r.status}); nothing went wrong in it.`);
          known = true;
          confidence = 0.9;
        }
        if (r.tool && TOOL_NAMES.includes(r.tool)) boostIds.push(`tool-${r.tool}`);
      } else {
        parts.push(
          `I could not find request ${ctx.requestId} among your own requests of the last 7 days (only the caller's own requests can be looked up), so I answer from the question alone.`,
        );
      }
    }

    // 2. A pasted error envelope is the situation: its code, message and details (the current price,
    //    the field that failed, the seconds to wait) lead, worked out (help-envelope.ts).
    const pasted = explainedCode ? null : pastedError(`${ctx.error ?? ''} ${input.question}`);
    const envelope = pasted ? envelopeAnswer(pasted, input.question, roleOf(input.question, null)) : null;
    if (envelope) {
      // The figures of a pasted error are its own: no rule is worked out from them ("800 gas … after the fee").
      parts.length = 0;
      parts.push(envelope.lead);
      if (envelope.nextStep) nextStep = envelope.nextStep;
      ruledStep ||= envelope.nextStep !== null;
      known = true;
      confidence = 0.95;
    }

    // 3. The situation: who is asking, what happened, what they want, from the question and the
    //    caller's own account; it leads the answer with the call to make (help-situation.ts).
    const codeFound = explainedCode ? null : (pasted?.code ?? findErrorCode(`${ctx.error ?? ''} ${input.question}`));
    let situation = explainedCode ? null : situationOf(`${input.question} ${input.stuckState ?? ''}`.trim(), account, now, this.terms, codeFound);
    // An envelope about how the call was made (its key, its arguments, its rate) is answered by its
    // code alone: the tool it names and the state the question tells are secondary — unless a rule is
    // about that very error (a reused Idempotency-Key).
    // The same for a code whose own guide names the fix (not enough gas → buy_gas, an unknown tool → its right
    // name, nothing found → search again), pasted or named: the purchase the question tells of is not what
    // failed. (A bare status is not enough: "my webhook handler answers 404" is the agent's own endpoint.)
    if (situation && codeFound && (CALL_CODES.has(codeFound) || SELF_EXPLAINING.has(codeFound)) && (pasted || (SELF_EXPLAINING.has(codeFound) && input.question.toLowerCase().includes(codeFound))) && (situation.described || !situation.overridesError)) situation = null;
    if (situation) {
      const leadAt = parts.length;
      parts.push(situation.lead);
      if (!envelope?.nextStep) nextStep = situation.nextStep;
      // The purchase machine's call for a stated state and side, or one worked out from stated figures.
      ruledStep ||= !!(situation.described || situation.worked);
      lookedAt.push(...situation.lookedAt);
      for (const id of situation.sections) {
        const sec = this.byId.get(id);
        if (sec && !sources.has(id)) {
          parts.push(`${parts.length === leadAt + 1 ? 'The rule behind it — ' : ''}${sec.title}:\n${sec.body}`);
          sources.set(id, sec.title);
        }
      }
      known = true;
      confidence = 0.9;
    }
    const codeInText = situation?.overridesError ? null : codeFound;

    // 4. An error code named in context.error (or the question), when no request explained it.
    if (codeInText) {
      const guide = errorGuide(codeInText)!;
      let line = `${guide.code} (HTTP ${guide.status}): ${guide.cause}\nWhat to do: ${guide.nextStepText}`;
      // The tool that failed: from the context, or named in the pasted message.
      const failedTool = ctx.toolName ?? TOOL_NAMES.find((t) => new RegExp(`\\b${t}\\b`).test(input.question)) ?? null;
      if (!situation && !envelope?.nextStep) nextStep = nextStepAfterFailure(guide.code, failedTool) ?? guide.nextStep;
      // The gateway's context names the failed call: its guide's call is the answer.
      ruledStep ||= !!(ctx.toolName || ctx.error);
      // A call that failed for a moment (unreachable, rate limited) is retried as it was: the same call and Idempotency-Key.
      if ((guide.code === 'service_unavailable' || guide.code === 'rate_limited') && failedTool && !envelope?.nextStep && !PERSISTENT.test(input.question)) {
        nextStep = { tool: failedTool, arguments: exampleArguments(failedTool) };
        ruledStep = true;
      }
      if (guide.code === 'invalid_state' && !envelope?.nextStep && /\bmaxpricegas\b|\bprice (?:rose|went up|was raised|increased|changed)\b|\braised (?:the|its|their) price\b/i.test(input.question)) {
        nextStep = { tool: 'purchase_service', arguments: exampleArguments('purchase_service') };
        line += '\nThe seller raised the price after you saw it, so nothing was held: do not just retry. Look at the new price (details.priceGas, or search_services / the listing again); if you still want it, call purchase_service again with maxPriceGas set to the new price and a new Idempotency-Key.';
      }
      if (guide.code === 'invalid_state' && !failedTool && /\blisting\b/i.test(input.question) && /\b(?:paused|removed|inactive|taken down|not active)\b/i.test(input.question)) {
        nextStep = { tool: 'search_services', arguments: exampleArguments('search_services') };
        line += '\nA paused or removed listing cannot be bought until its seller makes it active again: search_services for another one.';
      }
      // A 401 with a header that lacks "Bearer": the key is fine, the header is not — retry the call.
      if (guide.code === 'unauthorized' && !envelope && ((/\bauthori[sz]ation\s*:/i.test(input.question) && !/\bbearer\b/i.test(input.question)) || /\b(?:bearer|prefix|header format|malformed header)\b/i.test(input.question))) {
        nextStep = { tool: failedTool ?? 'whoami', arguments: exampleArguments(failedTool ?? 'whoami') };
        ruledStep = true;
        line += '\nYour header has no "Bearer " before the key: send exactly "Authorization: Bearer rk_live_…" and call it again (whoami checks the key). A registered key does not need a new registration.';
      }
      // An unknown tool name: the catalogue's closest name.
      if (guide.code === 'unknown_tool') {
        const close = closestTool(input.question);
        if (close) {
          nextStep = { tool: close.tool, arguments: exampleArguments(close.tool) };
          ruledStep = true;
          line += `\nThe tool you mean is most likely ${close.tool} (you sent ${close.sent}).`;
        }
      }
      if ((failedTool === 'request_cashout' || failedTool === 'cash_out') && !CALL_CODES.has(guide.code)) {
        line += `\nCash-out rules: at least ${MIN_CASHOUT_GAS} gas, at most wallet.withdrawableGas (sale earnings only), and no open dispute as a seller.`;
      }
      if ((guide.code === 'service_unavailable' || guide.code === 'internal') && PERSISTENT.test(input.question)) {
        nextStep = { tool: 'report_bug', arguments: { ...exampleArguments('report_bug'), title: `Persistent ${guide.code}`, description: input.question.slice(0, 500).padEnd(10, '.') } };
        ruledStep = true;
        line += '\nIt keeps happening after retries: report_bug with the requestIds and times so the operator sees it.';
      }
      if (guide.code === 'insufficient_gas') {
        const shortfall = parseShortfall(`${ctx.error ?? ''} ${input.question}`);
        if (!situation && !envelope?.nextStep) nextStep = insufficientGasStep(shortfall);
        line += `\n${insufficientGasLine(shortfall)}`;
      }
      parts.push(line);
      sources.set(`error-${guide.code}`, `Error ${guide.title}`);
      // The rules of the tool that failed (a rating window, a cash-out minimum …) often say why.
      const rules = failedTool ? this.byId.get(TOOL_RULES[failedTool] ?? '') : undefined;
      if (rules && !sources.has(rules.id) && !['insufficient_gas', 'unauthorized', 'rate_limited', 'service_unavailable', 'internal'].includes(guide.code)) {
        parts.push(`The rules of ${failedTool} — ${rules.title}:\n${rules.body}`);
        sources.set(rules.id, rules.title);
      }
      known = true;
      confidence = Math.max(confidence, 0.95);
    }

    // 5. The stuck state narrows the answer to the transitions it allows.
    const state = findPurchaseState(input.stuckState ?? '');
    if (state) {
      const moves = purchaseTransitions(this.terms).filter((t) => t.from.split(/[ ,]+/).includes(state) || t.from.startsWith(`${state},`));
      if (moves.length) {
        parts.push(
          `From ${state}:\n` + moves.map((t) => `- ${t.trigger} (${t.who}) → ${t.to}`).join('\n'),
        );
        sources.set('purchase-states', this.byId.get('purchase-states')!.title);
        known = true;
        confidence = Math.max(confidence, 0.8);
      }
    }
    if (ctx.toolName && TOOL_NAMES.includes(ctx.toolName)) boostIds.push(`tool-${ctx.toolName}`);

    // 6. Retrieval over the question (and the stuck state's words).
    const query = [input.question, input.stuckState ?? ''].join(' ');
    const { hits, coverage, domain, terms } = this.retrieve(query, { boostIds });
    const anchored = terms.some((t) => ANCHORS.has(t.term));
    const good =
      hits.length > 0 &&
      ((domain >= DOMAIN_MIN && coverage >= COVERAGE_MIN) || (anchored && domain >= ANCHORED_DOMAIN_MIN && coverage >= ANCHORED_COVERAGE_MIN));
    const explained = explainedCode !== null || codeInText !== null;
    if (good) {
      const top = hits[0].section;
      // A sale price named in the question: the split, worked out ("I sell for 500 gas, what do I get?").
      const price = /\b(\d{1,7})\s*gas\b/i.exec(input.question);
      if (price && /\b(?:sell\w*|sold|sale|earn\w*|receive\w*|keep|get|fee|commission|cut|net|balance)\b/i.test(input.question) && !/\b(?:buy gas|pack|cash[\s-]?out|withdraw\w*)\b/i.test(input.question)) {
        const split = saleSplit(Number(price[1]), this.terms.platformFeePercent);
        parts.push(`For a price of ${price[1]} gas: the platform fee is ${split.platformFeeGas} gas and the seller gets ${split.sellerNetGas} gas (as sale_earn, when the buyer confirms or on auto-release).`);
      }
      // An explained error already says what to do: background sections are only pointed to, not repeated.
      if (!sources.has(top.id) && !explained && !situation) {
        // "In short" only when that sentence answers most of what was asked (never an unrelated lead line).
        const action = actionTool(input.question);
        if (action && TOOL_NAMES.includes(action)) {
          const step: NextStep = { tool: action, arguments: exampleArguments(action) };
          parts.push(`Call ${action} ${JSON.stringify(step.arguments)}.`);
          nextStep = step;
          const toolSection = this.byId.get(`tool-${action}`);
          if (toolSection && toolSection.id !== top.id) {
            parts.push(`${toolSection.title}:\n${toolSection.body}`);
            sources.set(toolSection.id, toolSection.title);
          }
        } else {
          const key = this.keySentence(hits, terms);
          if (key && key.share >= KEY_SENTENCE_MIN_SHARE && !parts.some((p) => p.includes(key.text))) parts.push(`In short: ${key.text}`);
        }
        parts.push(`${top.title}:\n${top.body}`);
        sources.set(top.id, top.title);
        // A runner-up nearly as relevant is part of the answer, not a pointer: paraphrases often
        // sit between two sections (the quality gate in "Selling" and in "Why a listing is rejected").
        const runnerUp = hits[1];
        if (runnerUp && runnerUp.score >= hits[0].score * RUNNER_UP_SHARE && !sources.has(runnerUp.section.id)) {
          parts.push(`${runnerUp.section.title}:\n${runnerUp.section.body}`);
          sources.set(runnerUp.section.id, runnerUp.section.title);
        }
      }
      // An error (explained, or the best section) whose question is also about a concept (a reused
      // Idempotency-Key, a cash-out rule) gets that concept too.
      const isConcept = (id: string) => !/^(?:error|tool)-/.test(id) && id !== 'errors';
      const concept = explained || !isConcept(top.id) ? hits.slice(0, 3).find((h) => isConcept(h.section.id) && h.score >= hits[0].score * 0.4) : undefined;
      if (concept && !sources.has(concept.section.id) && coverage >= 0.5) {
        parts.push(`${concept.section.title}:\n${concept.section.body}`);
        sources.set(concept.section.id, concept.section.title);
      }
      const also = hits.slice(explained || situation ? 0 : 1, 4).filter((h) => h.score >= hits[0].score * 0.5 && !sources.has(h.section.id));
      if (also.length) {
        parts.push(`See also: ${also.map((h) => h.section.title).join('; ')}.`);
        for (const h of also) sources.set(h.section.id, h.section.title);
      }
      // A question naming one tool ("what do I send in deliver_work?") is about that tool. One named only in
      // what the asker tells is about it when the asker called it ("called buy_gas … now what?"); otherwise
      // it is where the asker looked ("… wallet is at 0"), not what it asks for.
      const asking = askingPart(input.question.toLowerCase());
      const calledBefore = describe(input.question, 'unknown').called;
      const named =
        explained || situation
          ? []
          : TOOL_NAMES.filter((t) => t !== 'ask_help' && new RegExp(`(?<!${NOT_WANTED_BEFORE.source})\\b${t}\\b`).test(calledBefore.includes(t) ? input.question : asking));
      if (!nextStep && named.length === 1) nextStep = { tool: named[0], arguments: exampleArguments(named[0]) };
      if (!nextStep && top.nextStep) {
        nextStep = top.nextStep;
        sectionExample = true;
      }
      known = true;
      confidence = Math.max(confidence, Math.min(0.9, 0.4 + coverage * 0.5));
    }

    const hasOpen = (account?.purchases ?? []).some((p) => ['awaiting_approval', 'awaiting_delivery', 'delivered', 'disputed'].includes(p.status));
    if (!known && account && !situation && !statesUnseenPurchase(input.question, account) && (FIRST_PERSON.test(input.question) || ACCOUNT_WORDS.test(input.question)) && (anchored || hasOpen || ACCOUNT_WORDS.test(input.question))) {
      // A first-person question the documentation cannot place: the caller's own account answers it.
      const overview = accountOverview(account, now, this.terms);
      parts.push(overview.lead);
      nextStep = overview.nextStep;
      lookedAt.push(...overview.lookedAt);
      for (const id of overview.sections) {
        const sec = this.byId.get(id);
        if (sec) {
          parts.push(`${sec.title}:\n${sec.body}`);
          sources.set(id, sec.title);
        }
      }
      known = true;
      confidence = 0.5;
    }
    if (!known) {
      // Not about this marketplace at all: a short refusal. About it but not documented: "I don't know",
      // with no report_bug (not knowing is not a fault; an agent following nextStep must not file one).
      if (!anchored && domain < DOMAIN_MIN && !reportsFault(input.question) && !aboutTheService(input.question)) return declined(offTopicDecline(), input);
      parts.length = 0;
      parts.push(
        "I don't know: this service's documentation does not cover that question, and I will not guess. " +
          'Rephrase it with the tool or the error code involved (for example "why did purchase_service fail with insufficient_gas?"), or read ' +
          `${this.baseUrl}/llms-full.txt.` +
          (reportsFault(input.question) ? ' If something is broken, report_bug with the failed call\'s requestId lets the operator see it.' : ''),
      );
      nextStep = reportsFault(input.question)
        ? { tool: 'report_bug', arguments: { ...exampleArguments('report_bug'), title: 'Something does not work', description: input.question.slice(0, 500).padEnd(10, '.') } }
        : null;
      return { answer: parts.join('\n\n'), nextStep, sources: [], known: false, confidence: 0, generatedBy: 'retrieval', lookedAt, ...requestField(input) };
    }
    // The call the asker says it wants, when the chosen one only shows the state or is out of turn (help-want.ts).
    const wanted = wantedCall(input.question, nextStep, this.rankTools(input.question), TOOL_LINES, explainedCode !== null || codeInText !== null || envelope !== null, sectionExample);
    if (wanted) {
      nextStep = wanted.nextStep;
      parts.unshift(wanted.lead);
    }
    // The call learned from labelled questions, when it clearly prefers another (help-learned.ts).
    const learned = learnedCall(input.question, account, nextStep?.tool ?? null);
    // How sure it must be depends on where the chosen call came from: a section's example or a
    // catalogue match gives way easily, a situation rule less, an error's guide or a section's own
    // call hardly. (A rule worked out with the question's numbers leads unchanged.)
    const fromError = explainedCode !== null || codeInText !== null || envelope !== null;
    const bar =
      !nextStep || wanted || sectionExample
        ? LEARNED_MARGIN.overGuess
        : situation && !fromError
          ? LEARNED_MARGIN.overRule
          : LEARNED_MARGIN.overGuide;
    if (learned && !ruledStep && learned.margin >= bar && !NEVER_LEARNED.has(learned.tool) && canComeNext(input.question, learned.tool)) {
      const call = callTo(input.question, learned.tool, TOOL_LINES);
      nextStep = call.nextStep;
      if (wanted) parts.shift();
      parts.unshift(call.lead);
    }
    // An answer about the asker's own order that nothing grounded yet: the order, from its account.
    const own = lookedAt.some((l) => l.kind === 'purchase') ? null : ownOrderOf(input.question, account);
    if (own) {
      parts.splice(1, 0, describePurchase(own, now, this.terms).text);
      lookedAt.push({ kind: 'purchase', id: own.id });
      if (nextStep && nextStep.arguments.purchaseId === 'pur_…') nextStep = { ...nextStep, arguments: { ...nextStep.arguments, purchaseId: own.id } };
    }
    // report_bug is the next step only when the question reports a fault.
    if (nextStep?.tool === 'report_bug' && !reportsFault(`${input.question} ${ctx.error ?? ''} ${explainedCode ?? ''} ${codeInText ?? ''}`) && !/\breport_bug\b|\breport (?:a )?bug\b/i.test(input.question)) nextStep = null;
    // A caller who is signed in is registered: register is its next step only for a lost or leaked key or a second agent.
    if (account && !situation && nextStep?.tool === 'register' && !/\bregist\w*|\bsign(?:ing)? ?up\b|\b(?:api )?keys?\b|\bnew agent|\bsecond agent|\banother agent|\bunauthori[sz]ed\b|\b401\b/i.test(input.question)) {
      nextStep = { tool: 'whoami', arguments: {} };
    }
    if (nextStep) parts.push(`Next step: ${JSON.stringify({ tool: nextStep.tool, arguments: nextStep.arguments })}`);
    return {
      answer: parts.join('\n\n'),
      nextStep,
      sources: [...sources].map(([id, title]) => ({ id, title })),
      known: true,
      confidence: Math.round(confidence * 100) / 100,
      generatedBy: 'retrieval',
      lookedAt,
      ...requestField(input),
    };
  }

  /** The passages an LLM may use: the sections the retrieval answer cites. */
  passagesFor(answer: HelpAnswer): KnowledgeSection[] {
    return answer.sources.map((s) => this.byId.get(s.id)).filter((s): s is KnowledgeSection => !!s);
  }
}

/** "Why did my last call fail?": the caller's most recent failed request answers it. */
const LAST_CALL = /\b(?:my|the) (?:last|latest|previous|most recent|recent) (?:call|request|error|failure|tool call)s?\b|\bwhy did (?:it|that|my (?:call|request)) fail\b|\bwhat went wrong\b/i;

/** Words of a first-person question about one's own dealings ("is there something I need to do?"). */
const ACCOUNT_WORDS = /\b(?:bought|ordered|got|get|receive\w*|pending|side|mine|sold|work|ready|job|order|purchase|sale|delivery|delivered|happy|unhappy|need to do|something|anything|waiting|expect\w*|status|next|now|still|yet|done|paid|money|stuck|options?|forever|stand|overview|summary|situation|account)\b/i;

/** A failure that keeps happening (then it is a fault worth a bug report); "if I try again" is a retry, not a repeat. */
const PERSISTENT = /\b(?:keeps?|kept|still|(?:fail\w*|error\w*|happen\w*|broke|down|503|500) again|every (?:time|call)|since (?:an? )?(?:hour|day|yesterday|this morning|\d+)|for (?:an? |\d+ )?(?:hours?|minutes?|days?)|retried|repeatedly|persist\w*|always)\b/i;

/** The share of the question's weight a sentence must cover to lead as "In short". */
const KEY_SENTENCE_MIN_SHARE = 0.4;

function declined(d: Decline, input: HelpInput, lookedAt: LookedAt[] = []): HelpAnswer {
  return { answer: d.answer, nextStep: d.nextStep, sources: [], known: false, confidence: 0, generatedBy: 'retrieval', lookedAt, declined: true, ...requestField(input) };
}

/**
 * An operator action refused about the caller's own purchase ("close the dispute on my sale"): the
 * refusal names that purchase and what its party can do (talk to the other party; an operator resolves
 * disputes), instead of a generic pointer.
 */
function groundedDecline(d: Decline, question: string, account: HelpAccount | null): { decline: Decline; lookedAt: LookedAt[] } {
  const q = question.toLowerCase();
  // A change of the caller's own limits asked of the help: the refusal says what they are now.
  if (d.intent === 'operator_action' && account?.limits && SPENDING.test(q)) {
    return { decline: { ...d, answer: `${d.answer}\n\n${limitsNow(account.limits)}` }, lookedAt: [{ kind: 'spending_limits', id: account.agentId }] };
  }
  if (d.intent !== 'operator_action' || !account?.purchases?.length) return { decline: d, lookedAt: [] };
  if (!/\b(?:disput\w*|escrow|refund\w*|releas\w*|purchase|order|sale|pur_\w+|deliver\w*|buyer|seller)\b/.test(q)) return { decline: d, lookedAt: [] };
  const named = /\bpur_[a-z0-9]+/i.exec(question)?.[0]?.toLowerCase();
  const ps = account.purchases;
  // Only a purchase the question is about: one it names, or the caller's disputed one when it asks about
  // the dispute. Other refusals read no account (nothing to cite: the refusal and its pointer suffice).
  const p =
    (named ? ps.find((x) => x.id.toLowerCase() === named) : undefined) ??
    (/\bdisput\w*/.test(q) ? ps.find((x) => x.status === 'disputed') : undefined);
  if (!p) return { decline: d, lookedAt: [] };
  const other = p.role === 'seller' ? 'buyer' : 'seller';
  const yours = `Your ${p.role === 'seller' ? 'sale' : 'purchase'} ${p.id} ("${p.listingTitle}", ${p.priceGas} gas) is ${p.status}`;
  const answer =
    p.status === 'disputed'
      ? `${d.answer}\n\n${yours}: only an operator resolves a dispute (a refund to the buyer or a release to the seller), in the operator console. What you can do: send_message {"purchaseId": "${p.id}", "body"} to talk with the ${other} and put your evidence there.`
      : `${d.answer}\n\n${yours}: get_purchase {"purchaseId": "${p.id}"} shows it.`;
  const nextStep: NextStep | null =
    p.status === 'disputed'
      ? { tool: 'send_message', arguments: { purchaseId: p.id, body: p.role === 'seller' ? 'About the dispute: here is what I delivered and how it matches the listing: …' : 'About the dispute: …' } }
      : d.nextStep && JSON.stringify(d.nextStep.arguments).includes('pur_…')
        ? { tool: d.nextStep.tool, arguments: { ...d.nextStep.arguments, purchaseId: p.id } }
        : d.nextStep;
  return { decline: { ...d, answer, nextStep }, lookedAt: [{ kind: 'purchase', id: p.id }] };
}

/** The first amount of gas a text names ("2,500 gas" → 2500). */
function gasAmount(text: string): number | null {
  const m = /\b(\d{1,3}(?:,\d{3})+|\d{1,9})\s*gas\b/i.exec(text);
  return m ? Number(m[1].replace(/,/g, '')) : null;
}

/**
 * The market rules a question asks about with a number, worked out: a conversion (N gas → N/100 USD
 * and back), the net of a cash-out after its fee, what a referral pays and when. They lead the answer,
 * whatever section or situation follows.
 */
export function ruleFacts(question: string): string[] {
  const q = question.toLowerCase().replace(/(\d),(\d{3})\b/g, '$1$2');
  const out: string[] = [];
  const gas = gasAmount(q);
  const usdWords = /\b(?:usd|dollars?|bucks|cents|us\$|fiat|real money)\b|\$|\bworth\b|\bin money\b/;
  const cashout = /\bcash(?:ing)?[\s-]?out|\bwithdraw\w*|\brequest_cashout\b|\bpaid out\b|\bpayout\b/.test(q);
  if (gas !== null && cashout && /\bfee\b|\bafter\b|\bnet\b|\bhow much\b|\bget\b|\breceive\b|\bend up\b|\bkeep\b|\bleft\b/.test(q)) {
    const c = cashoutSplit(gas);
    out.push(
      `Cashing out ${gas} gas: the ${CASHOUT_FEE_PERCENT}% fee is ${c.feeGas} gas, so you receive ${c.netGas} gas (= ${gasToUsd(c.netGas).toFixed(2)} USD), paid in BTC.` +
        (gas < MIN_CASHOUT_GAS ? ` But the minimum cash-out is ${MIN_CASHOUT_GAS} gas, so ${gas} gas cannot be cashed out yet.` : ''),
    );
  } else if (gas !== null && usdWords.test(q)) {
    out.push(`${gas} gas = ${gasToUsd(gas).toFixed(2)} USD (${GAS_PER_USD} gas = 1.00 USD).`);
  } else if (gas === null && /\bgas\b/.test(q)) {
    const usd = /(?:\$|us\$)\s?(\d{1,7}(?:\.\d{1,2})?)\b|\b(\d{1,7}(?:\.\d{1,2})?)\s*(?:usd|dollars?|bucks)\b/.exec(q);
    if (usd) {
      const amount = Number(usd[1] ?? usd[2]);
      out.push(`${amount} USD = ${Math.round(amount * GAS_PER_USD)} gas (${GAS_PER_USD} gas = 1.00 USD).`);
    }
  }
  if (/\brefer(?:s|red|ring|rer\w*|ral\w*)?\b|\bsigns? up (?:with|using|under) (?:my|their|your|his|her|its) (?:agent )?id\b/.test(q) && /\bhow much\b|\bearn\w*|\bbonus\w*|\bwhen\b|\bget\b|\bpaid\b|\bpayable\b|\breward\w*|\bcredit\w*/.test(q)) {
    out.push(
      `Referral: the referrer earns ${REFERRAL_BONUS_GAS} gas when the referred agent makes its first purchase (its first purchase_service), not at sign-up; ` +
        `at most ${REFERRAL_WEEKLY_CAP} referred agents per referrer per rolling 7 days count. The bonus is spendable gas, not withdrawable; referredBy is set only at registration.`,
    );
  }
  return out;
}

const PURCHASE_TOOLS = new Set(['get_purchase', 'get_delivery', 'confirm_delivery', 'ack_purchase', 'deliver_work', 'rate_purchase', 'request_refund', 'dispute_purchase', 'send_message', 'list_messages']);
const LISTING_TOOLS = new Set(['purchase_service', 'update_service']);

/** The concrete call after a failure of a known tool: retry it correctly, or look up the right id or state. */
/** Words agents use for a catalogue tool's parts (buy_service → purchase_service). */
const TOOL_SYNONYMS: Record<string, string> = { buy: 'purchase', order: 'purchase', checkout: 'purchase', create: 'list', post: 'list', publish: 'list', listing: 'service', listings: 'services', find: 'search', get: 'get', refund: 'refund', cancel: 'refund', withdraw: 'cashout', cash: 'cashout', payout: 'cashout', token: 'gas', tokens: 'gas', credit: 'gas', credits: 'gas', coins: 'gas', topup: 'gas', balance: 'wallet', me: 'whoami', send: 'send', message: 'message', accept: 'confirm', approve: 'confirm' };

/** Verbs that many tools share (get_purchase, get_delivery …): they do not tell one tool from another. */
const GENERIC_VERBS = new Set(['get', 'list', 'set', 'update', 'send', 'request']);

/** The catalogue tool closest to an unknown tool name quoted in the question ('buy_service'). */
function closestTool(question: string): { tool: string; sent: string } | null {
  const quoted = [...question.matchAll(/['"`]([a-z][a-z0-9]*(?:_[a-z0-9]+)*|[a-z]+[A-Z]\w*)['"`]/g)].map((m) => m[1]);
  // Or named as the tool called, unquoted ("I called tool get_balance", "Unknown tool get_balance.").
  const called = [...question.matchAll(/\b(?:tool|called|calling):?\s+['"`]?([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z]\w*|[a-z]+(?=['"`]))/g)].map((m) => m[1]);
  // Or sent as the "tool" field of a request ({"tool": "whoamj"}).
  called.push(...[...question.matchAll(/["']tool["']\s*:\s*["']([A-Za-z][\w-]*)["']/g)].map((m) => m[1]));
  // An error code or a state quoted from the answer is not the name that was sent.
  const sent = [...called, ...quoted].find((n) => !TOOL_NAMES.includes(n) && !(ERROR_CODES as readonly string[]).includes(n) && !(PURCHASE_STATUSES as readonly string[]).includes(n));
  if (!sent) return null;
  // A typo of a real name ("buy_gaz") is that name, before any synonym is tried.
  const typo = TOOL_NAMES.find((t) => oneEditApart(sent.toLowerCase(), t));
  if (typo) return { tool: typo, sent };
  const parts = sent.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase().split('_').map((w) => TOOL_SYNONYMS[w] ?? w);
  let best: { tool: string; score: number } | null = null;
  for (const tool of TOOL_NAMES) {
    if (tool === 'ask_help') continue;
    const tp = tool.split('_');
    // The object (the last part: service, balance) weighs more than the verb (get, buy).
    const has = (w: string) => tp.includes(w) || tp.includes(`${w}s`) || tp.includes(w.replace(/s$/, ''));
    // A purchase-level object (confirm_order, cancel_order) names the purchase every purchase tool takes: then the
    // verb decides (confirm_order → confirm_delivery, not purchase_service).
    const score =
      parts.reduce((sum, w, i) => sum + (has(w) ? (i === parts.length - 1 && w !== 'purchase' ? 2 : 1) : 0), 0) +
      (parts.length > 1 && !GENERIC_VERBS.has(parts[0]) && has(parts[0]) ? 0.5 : 0) -
      0.1 * Math.abs(tp.length - parts.length);
    if (score > 0 && (!best || score > best.score)) best = { tool, score };
  }
  return best ? { tool: best.tool, sent } : null;
}

function nextStepAfterFailure(code: string, tool: string | null): NextStep | null {
  if (!tool || !TOOL_NAMES.includes(tool)) return null;
  switch (code) {
    case 'invalid_arguments':
    case 'rate_limited':
    case 'service_unavailable':
      return { tool, arguments: exampleArguments(tool) };
    case 'not_found':
      if (LISTING_TOOLS.has(tool)) return { tool: 'search_services', arguments: exampleArguments('search_services') };
      if (PURCHASE_TOOLS.has(tool)) return { tool: 'list_orders', arguments: exampleArguments('list_orders') };
      return null;
    case 'invalid_state':
    case 'forbidden':
      if (code === 'forbidden' && tool === 'purchase_service') return { tool: 'search_services', arguments: exampleArguments('search_services') };
      if (PURCHASE_TOOLS.has(tool)) return { tool: 'get_purchase', arguments: exampleArguments('get_purchase') };
      if (tool === 'request_cashout' || tool === 'cash_out') return { tool: 'wallet', arguments: exampleArguments('wallet') };
      return null;
    default:
      return null;
  }
}

function requestField(input: HelpInput): Pick<HelpAnswer, 'request'> {
  if (!input.context?.requestId) return {};
  const r = input.request;
  return {
    request: r
      ? { requestId: r.requestId, tool: r.tool, status: r.status, errorCode: r.errorCode, errorMessage: r.errorMessage ?? null, at: r.at ?? null }
      : null,
  };
}

export function findErrorCode(text: string): string | null {
  const lower = text.toLowerCase();
  // Longest first, so "invalid_state" is not mistaken for a shorter code.
  for (const code of [...ERROR_CODES].sort((a, b) => b.length - a.length)) {
    if (new RegExp(`(^|[^a-z_])${code}([^a-z_]|$)`).test(lower)) return code;
  }
  // A pasted HTTP status ("status code 503", "Error 404: …", "429 Too Many Requests"), but not an
  // amount ("500 gas").
  const status =
    /\b(?:http(?:\/[\d.]+)?|status(?:\s+code)?|error|code|returned|returns|returning|gives|giving|throws|throwing|got|getting|answered|answers|failed(?: with)?|fails(?: with)?|failing(?: with)?|response|->|→)\W{0,3}([45]\d\d)\b(?!\s*(?:gas|usd|%))/.exec(lower) ??
    /\b[a-z]+_[a-z_]+\s*(?:->|→|:|returned|returns|gave|gives|says)?\s*\(?([45]\d\d)\b(?!\s*(?:gas|usd|%))/.exec(lower) ??
    /^\W*([45]\d\d)\s*[:\-–]/.exec(lower) ??
    /\b([45]\d\d)\s*[-:]?\s*(?:unauthorized|forbidden|not found|conflict|too many requests|internal server error|service unavailable|bad request|payment required|unprocessable|not implemented)/.exec(lower);
  if (status) return ERROR_CODE_BY_STATUS.get(Number(status[1])) ?? (Number(status[1]) >= 500 ? 'service_unavailable' : null);
  // The status's words without its number ("the server says too many requests").
  for (const [phrase, code] of STATUS_PHRASES) if (phrase.test(lower)) return code;
  return null;
}

/** One insertion, deletion, substitution or swap of neighbours turns a into b. */
function oneEditApart(a: string, b: string): boolean {
  if (a === b) return false;
  if (a.length === b.length) {
    const diff = [...a].map((c, i) => (c === b[i] ? -1 : i)).filter((i) => i >= 0);
    return diff.length === 1 || (diff.length === 2 && diff[1] === diff[0] + 1 && a[diff[0]] === b[diff[1]] && a[diff[1]] === b[diff[0]]);
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  if (long.length - short.length !== 1) return false;
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  return short.slice(i) === long.slice(i + 1);
}

const STATUS_PHRASES: Array<[RegExp, string]> = [
  [/\btoo many (?:requests|calls)\b|\brate[\s-]?limit(?:ed)?\b|\bthrottl\w*/, 'rate_limited'],
  [/\bpayment required\b/, 'insufficient_gas'],
  [/\bservice (?:is )?unavailable\b|\bbad gateway\b|\bgateway time-?out\b/, 'service_unavailable'],
  [/\binternal server error\b/, 'internal'],
];

function findPurchaseState(text: string): string | null {
  const lower = text.toLowerCase();
  for (const s of [...PURCHASE_STATUSES].sort((a, b) => b.length - a.length)) {
    if (new RegExp(`(^|[^a-z_])${s}([^a-z_]|$)`).test(lower)) return s;
  }
  return null;
}

/** The shortfall in gas, from an insufficient_gas message or details (whatever the caller pasted). */
export function parseShortfall(text: string): number | null {
  const direct =
    /shortfall(?:Gas)?["']?\s*[:=]?\s*(\d+)/i.exec(text) ??
    /short (?:by |of )?(\d+)/i.exec(text) ??
    /(\d+)\s*gas short/i.exec(text) ??
    /(\d+)\s*(?:more )?gas (?:more )?(?:is |are )?(?:missing|needed|required)/i.exec(text);
  if (direct) return Number(direct[1]);
  const required = /required(?:Gas)?["']?\s*[:=]?\s*(\d+)/i.exec(text) ?? /(?:costs?|price(?:Gas)?(?: is)?|needs?)["']?\s*[:=]?\s*(\d+)\s*(?:gas)?/i.exec(text);
  const balance = /balance(?:Gas)?["']?\s*(?:is|of)?\s*[:=]?\s*(\d+)/i.exec(text) ?? /(?:you )?ha(?:ve|s)\s*(?:only\s*)?(\d+)\s*gas/i.exec(text);
  if (required && balance) {
    const shortfall = Number(required[1]) - Number(balance[1]);
    return shortfall > 0 ? shortfall : null;
  }
  return null;
}

function insufficientGasStep(shortfall: number | null): NextStep {
  const pack = shortfall ? smallestPackCovering(shortfall) : (packById('starter') ?? GAS_PACKS[0]);
  return { tool: 'buy_gas', arguments: { packId: pack.id } };
}

function insufficientGasLine(shortfall: number | null): string {
  if (shortfall) {
    const pack = smallestPackCovering(shortfall);
    const covers = pack.gas >= shortfall;
    return (
      `You were short by ${shortfall} gas. Buy the ${pack.id} pack (${pack.gas} gas for ${pack.usd} USD)` +
      (covers ? ', the smallest pack that covers it' : `; it does not cover ${shortfall} gas on its own, so buy it ${Math.ceil(shortfall / pack.gas)} times`) +
      ': call buy_gas {"packId": "' + pack.id + '"}, have a human approve the payment at checkoutUrl, poll wallet until gasBalance has risen, then retry purchase_service with the same Idempotency-Key.'
    );
  }
  const starter = packById('starter') ?? GAS_PACKS[0];
  return (
    `Buy gas with buy_gas {"packId": "${starter.id}"} (${starter.gas} gas for ${starter.usd} USD, the intended first pack; ` +
    `pick a larger pack if the price is above ${starter.gas} gas: ${GAS_PACKS.filter((p) => p.id !== starter.id).map((p) => `${p.id} ${p.gas}`).join(', ')}), ` +
    'have a human approve the payment at checkoutUrl, poll wallet until gasBalance has risen, then retry purchase_service with the same Idempotency-Key.'
  );
}
