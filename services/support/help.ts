/**
 * ask_help (issue #36): a small grounded pipeline over the project's single sources —
 *   parse    the question's structure (help-parse.ts)
 *   decline  what ask_help must not do (help-decline.ts)
 *   ground   the caller's account and what the question states (help-ground.ts)
 *   retrieve one index over the generated knowledge sections (help-retrieve.ts)
 *   compose  the next call for the asker's side, then the rule behind it (help-compose.ts)
 * and an optional LLM that may only choose among the calls the situation allows (help-llm.ts).
 */
import { DEFAULT_TERMS, type MarketTerms } from '../../packages/market-rules';
import type { HelpAnswer, HelpContext, HelpInput } from '../../packages/contracts/support';
import type { RequestLogEntry } from '../../packages/tool-catalogue/meta';
import { has, parse, type Parsed } from './help-parse';
import { ASKS } from '../../packages/knowledge/synonyms';
import { declineOf } from './help-decline';
import { ground, isMachineTool, isOpen, legalCalls, namesTitle, type Grounded } from './help-ground';
import { KnowledgeIndex } from './help-retrieve';
import { compose, render, type Composed } from './help-compose';
import { Intents } from './help-intent';
import { exampleArguments } from '../../packages/knowledge';
import { getTool } from '../../packages/tool-catalogue';

export type { HelpAnswer, HelpContext, HelpInput, RequestLogEntry };
export { composeWithLlm, type LlmOptions } from './help-llm';

/** What the pipeline found, for the optional LLM. */
export interface Pipeline {
  parsed: Parsed;
  grounded: Grounded;
  composed: Composed | null;
}

function requestField(input: HelpInput): Pick<HelpAnswer, 'request'> {
  if (!input.context?.requestId) return {};
  const r = input.request;
  return { request: r ? { requestId: r.requestId, tool: r.tool, status: r.status, errorCode: r.errorCode, errorMessage: r.errorMessage ?? null, at: r.at ?? null } : null };
}

export class HelpIndex {
  readonly index: KnowledgeIndex;
  private readonly intents: Intents;

  constructor(
    readonly baseUrl: string,
    readonly terms: MarketTerms = DEFAULT_TERMS,
  ) {
    this.index = new KnowledgeIndex(baseUrl, terms);
    this.intents = new Intents(terms);
  }

  run(input: HelpInput): { answer: HelpAnswer; pipeline: Pipeline } {
    const parsed = parse(input);
    const retrieved = this.index.retrieve(parsed);
    let grounded = ground(parsed, input.account ?? null, input.now ?? new Date());
    // (A purchase the account shows in another state than the question tells is answered in the account's state: intents are ruled out by that one.)
    const intentOf = (g: Grounded) => this.intents.of(parsed, g.side, g.actual?.state ?? g.purchase?.state ?? null);
    let intent = intentOf(grounded);
    // (Unless the question states the purchase as final — "I already confirmed it" — with an intent of that state: the stated situation is answered first.)
    const stated = parsed.statedState && grounded.actual && grounded.purchase && !grounded.purchase.inAccount && grounded.purchase.id !== grounded.actual.id ? this.intents.of(parsed, parsed.side ?? grounded.purchase.side, parsed.statedState) : null;
    if (stated?.topic.states?.includes(parsed.statedState!) && !isOpen(parsed.statedState!)) intent = stated;
    // (Another open state told of an id the account lacks: that stated situation is answered, with its own intent.)
    else if (parsed.statedState && isOpen(parsed.statedState) && parsed.purchaseIds.length && grounded.actual && parsed.statedState !== grounded.actual.state && !(parsed.side && grounded.actual.side && parsed.side !== grounded.actual.side)) intent = stated;
    // An intent about a purchase the question does not name, or a bare "what now?": the account's purchase is the one meant.
    if ((intent?.topic.purchase || ASKS.next.some((w) => has(parsed.text, w))) && !grounded.purchase && input.account?.purchases?.length) {
      grounded = ground(parsed, input.account, input.now ?? new Date(), true);
      intent = intentOf(grounded);
    }
    // A question that shows one of the marketplace's intents, or names the asker's own purchase ("the tests don't run"), is about this marketplace.
    // (Or it tells of a purchase's state on an account that has purchases: "nothing's arrived yet, am I stuck?".)
    const ownPurchase = (input.account?.purchases ?? []).some((x) => namesTitle(parsed, x.listingTitle)) || (!!parsed.statedState && !!input.account?.purchases?.length);
    const decline = declineOf(parsed.text, retrieved.inDomain || ownPurchase || (!!intent && intent.score >= 2), !!parsed.error || parsed.pasted, grounded.side);
    if (decline) {
      // An injection found in the asker's own delivery: the buyer's way out of that purchase follows the refusal.
      const own = grounded.purchase?.inAccount ? grounded.purchase : (grounded.actual ?? grounded.purchase);
      const exit = decline.reason === 'quoted_instructions' && own?.side === 'buyer' ? ['dispute_purchase', 'request_refund'].find((t) => own.legal.includes(t)) : undefined;
      // (A seller's order it stays on: the work is delivered as usual.)
      const carryOn = decline.reason === 'quoted_instructions' && own?.side === 'seller' && own.legal.includes('deliver_work') ? ` Deliver the work as usual with deliver_work {"purchaseId":"${own.id}","delivery"}.` : '';
      // Asked to act on the asker's own purchase: what the machine lets it do there itself follows the refusal (from the machine alone, never the words retrieved).
      const mine = decline.reason === 'acts' && own?.inAccount ? compose({ ...parsed, text: ' what now ', tools: [], amounts: [], statedState: null, error: null, purchaseIds: [] }, { ...grounded, side: own.side, purchase: own, actual: null, mismatch: null }, { ...retrieved, tools: [], query: '' }, this.terms, null) : null;
      const other = own?.side === 'buyer' ? 'seller' : 'buyer';
      const why = (own ? parsed.tools.filter((t) => isMachineTool(t) && !own.legal.includes(t) && 'purchaseId' in (getTool(t)?.params ?? {})) : []).map((t) => (own!.side && legalCalls(own!.state, other).includes(t) ? `${t} is the ${other}'s call, not yours.` : `${t} is not possible on ${own!.id} while it is ${own!.state}.`));
      const route = mine ? ` ${why.join(' ')}${why.length ? ' ' : ''}Your own next step: ${mine.lead.replace(/^As the \w+ of \S+( \([a-z_]+\))?: /, '')}` : '';
      // A call the request names that the asker may make itself ("call whoami for me"): the asker's own way to do it.
      const itself = decline.reason === 'acts' && !mine ? parsed.tools.find((t) => t !== 'ask_help' && !isMachineTool(t) && [`call ${t}`, `run ${t}`, `use ${t}`, `${t} for me`].some((f) => parsed.text.includes(f))) : undefined;
      const refusal = decline.instead ? `${decline.text}${decline.instead[own?.inAccount && own.side ? own.side : 'none']}` : itself ? `I cannot make calls or move gas for you: each call is made by its own party, with its own key. Call ${itself} ${JSON.stringify(exampleArguments(itself))} yourself.` : decline.text;
      const text = exit ? `${decline.text} If the work itself is not what you ordered, call ${exit} {"purchaseId":"${own!.id}","reason"} before the escrow auto-releases.` : route ? `${decline.text.replace(/ Tell me what you want to do[^.]*\.$/, '')}${route}` : `${refusal}${carryOn}`;
      const answer: HelpAnswer = { answer: text, nextStep: mine?.nextStep ?? null, sources: [], known: true, confidence: 1, generatedBy: 'retrieval', declined: true, lookedAt: [], ...requestField(input) };
      return { answer, pipeline: { parsed, grounded, composed: null } };
    }
    const composed = compose(parsed, grounded, retrieved, this.terms, intent);
    const sources = composed.sources.map((s) => ({ id: s.id, title: s.title }));
    const known = retrieved.hits.length > 0 || !!parsed.error;
    const confidence = Math.min(1, retrieved.tools[0]?.score ?? 0);
    const answer: HelpAnswer = { answer: render(composed, parsed), nextStep: composed.nextStep, sources, known, confidence, generatedBy: 'retrieval', lookedAt: grounded.lookedAt, declined: false, ...requestField(input) };
    return { answer, pipeline: { parsed, grounded, composed } };
  }

  answer(input: HelpInput): HelpAnswer {
    return this.run(input).answer;
  }
}
