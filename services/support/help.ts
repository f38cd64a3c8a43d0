/**
 * ask_help's engine: BM25 retrieval (MiniSearch) over the knowledge sections that llms-full.txt is
 * rendered from, with a little query understanding (phrases, synonyms, light stemming), the
 * caller's context (error code, own failed request, stuck state), and an optional LLM that may only
 * rephrase the retrieved passages. Without an LLM, the retrieval answer is the product.
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
import { smallestPackCovering, GAS_PACKS, packById } from '../../packages/market-rules';
import { TOOL_NAMES, PURCHASE_STATUSES } from '../../packages/tool-catalogue';

// ---------------------------------------------------------------------------------------------
// Text processing: the same normalisation for the indexed sections and the questions.

const PHRASES: Array<[RegExp, string]> = [
  [/\bcash[\s-]?outs?\b/g, ' cashout '],
  [/\bpay[\s-]?outs?\b/g, ' payout '],
  [/\bmoney back\b/g, ' refund '],
  [/\btop[\s-]?up\b/g, ' buy gas '],
  [/\bapi[\s-]?keys?\b/g, ' apikey '],
  [/\b(?:sign|log)[\s-]?(?:up|in)\b/g, ' register '],
  [/\bmodel context protocol\b/g, ' mcp '],
  [/\bidempotency[\s-]?keys?\b/g, ' idempotency '],
  [/\bauto[\s-]?release[sd]?\b/g, ' autorelease '],
  [/\bauto[\s-]?refund(?:s|ed)?\b/g, ' autorefund '],
  [/\bquality[\s-]?gate\b/g, ' quality gate '],
  [/\bx-request-id\b/g, ' requestid '],
  [/\brequest[\s-]?id\b/g, ' requestid '],
  [/\bnot enough\b/g, ' insufficient '],
  [/\bout of gas\b/g, ' insufficient gas '],
  [/\b(?:never|not|didn'?t|did not|hasn'?t|has not|haven'?t|have not)\s+(?:been\s+|yet\s+)?deliver(?:ed|s)?\b/g, ' undelivered refund dispute '],
  [/\b(?:do not|don'?t|never|not|forget to|forgot to)\s+confirm\b/g, ' autorelease confirm '],
  [/\b(?:what|how much)\s+(?:should|to|do|can|could)\s+(?:i\s+)?(?:charge|ask)\b/g, ' pricing price '],
  [/\bhow long\b/g, ' days '],
  [/\b(?:exchange|conversion) rate\b/g, ' usd peg '],
];

const STOP_WORDS = new Set(
  (
    'a an the i im i\'m my me mine we our us you your yours it its this that these those there their they them ' +
    'do does did done doing how what whats why when where which who whom whose is are was were be been being am ' +
    'to of in on for and or but nor so if then than too very can could should would will shall may might must ' +
    'with without from at by as into onto about over under again also just only any some all each every ' +
    'get gets got getting have has had having make makes made want wants need needs please thanks thank hi hello ' +
    'tell explain know let lets here now still ok okay yet one way thing things else mean means meaning happen happens'
  ).split(/\s+/),
);

/** Question words → words the documentation uses. Stems are applied afterwards. */
const SYNONYMS: Record<string, string[]> = {
  withdraw: ['cashout'],
  withdrawal: ['cashout'],
  withdrawing: ['cashout'],
  payout: ['cashout'],
  bitcoin: ['btc', 'cashout'],
  btc: ['cashout'],
  earnings: ['cashout', 'sale_earn'],
  credit: ['gas'],
  credits: ['gas'],
  token: ['gas'],
  tokens: ['gas'],
  funds: ['gas'],
  fund: ['gas'],
  coins: ['gas'],
  money: ['gas'],
  balance: ['gas', 'wallet'],
  cost: ['fee'],
  costs: ['fee'],
  charge: ['fee', 'pricing'],
  commission: ['fee'],
  cut: ['fee'],
  percent: ['fee'],
  percentage: ['fee'],
  reject: ['rejected', 'listing_rejected'],
  rejected: ['listing_rejected'],
  rejection: ['listing_rejected'],
  refused: ['rejected'],
  denied: ['rejected'],
  review: ['rating'],
  reviews: ['rating'],
  stars: ['rating'],
  invite: ['referral'],
  affiliate: ['referral'],
  referred: ['referral'],
  trustworthy: ['trust', 'reputation'],
  reliable: ['trust', 'reputation'],
  safe: ['trust', 'reputation'],
  scam: ['trust', 'dispute'],
  scammed: ['dispute', 'misrepresentation'],
  legit: ['trust', 'reputation'],
  held: ['escrow', 'hold'],
  locked: ['escrow', 'hold'],
  frozen: ['escrow', 'dispute'],
  chat: ['message'],
  contact: ['message'],
  cancel: ['refund'],
  complaint: ['dispute'],
  complain: ['dispute'],
  install: ['mcp', 'setup'],
  configure: ['mcp', 'config'],
  ide: ['mcp'],
  claude: ['mcp'],
  cursor: ['mcp'],
  stdio: ['mcp'],
  key: ['apikey'],
  apikey: ['apikey', 'auth'],
  lost: ['apikey'],
  '401': ['unauthorized'],
  '402': ['insufficient_gas'],
  '403': ['forbidden'],
  '404': ['not_found'],
  '409': ['invalid_state'],
  '422': ['listing_rejected'],
  '429': ['rate_limited'],
  '500': ['internal'],
  '501': ['not_implemented'],
  '503': ['service_unavailable'],
  retry: ['idempotency'],
  duplicate: ['idempotency'],
  twice: ['idempotency'],
  price: ['pricing'],
  insufficient: ['insufficient_gas'],
  paid: ['cashout', 'confirm'],
  status: ['state'],
  states: ['state'],
  lifecycle: ['state'],
  stuck: ['state'],
  sell: ['selling', 'list_service'],
  selling: ['list_service'],
  task: ['service'],
  deadline: ['days'],
  undelivered: ['deliver', 'refund'],
  dollar: ['usd'],
  dollars: ['usd'],
  worth: ['usd', 'peg'],
  exchange: ['usd', 'peg'],
};

function normalise(text: string): string {
  let t = text.toLowerCase();
  for (const [re, rep] of PHRASES) t = t.replace(re, rep);
  return t;
}

/** Splits on anything but letters, digits and underscores; snake_case names also yield their parts. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const raw of normalise(text).split(/[^\p{L}\p{N}_]+/u)) {
    const t = raw.replace(/^_+|_+$/g, '');
    if (!t) continue;
    out.push(t);
    if (t.includes('_')) for (const part of t.split('_')) if (part) out.push(part);
  }
  return out;
}

/** A light suffix stemmer: enough to meet "refunded"/"refunds", "delivery"/"delivered", "rejection"/"rejected". */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || w.includes('_') || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('ion') && w.length > 6) w = w.slice(0, -3);
  if (w.endsWith('ery')) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length >= 4) w = w.slice(0, -1);
  return w;
}

export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (STOP_WORDS.has(t)) return null;
  if (t.length < 2 && !/\d/.test(t)) return null;
  return stem(t);
}

/** Question terms: each original term with its expansions (processed), so coverage counts originals. */
function questionTerms(text: string): Array<{ term: string; expansions: string[] }> {
  const seen = new Set<string>();
  const out: Array<{ term: string; expansions: string[] }> = [];
  for (const tok of tokenize(text)) {
    const term = processTerm(tok);
    if (!term || seen.has(term)) continue;
    seen.add(term);
    const expansions = (SYNONYMS[tok] ?? []).flatMap((s) => tokenize(s)).map(processTerm).filter((x): x is string => !!x && x !== term);
    out.push({ term, expansions: [...new Set(expansions)] });
  }
  return out;
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

export interface Retrieved {
  section: KnowledgeSection;
  score: number;
  matched: string[];
}


export type { RequestLogEntry };

export interface HelpContext {
  toolName?: string;
  error?: string;
  requestId?: string;
}

export interface HelpInput {
  question: string;
  stuckState?: string;
  context?: HelpContext;
  /** The caller's own request-log entry for context.requestId, or null (unknown or someone else's). */
  request?: RequestLogEntry | null;
}

export interface HelpAnswer {
  answer: string;
  nextStep: NextStep | null;
  sources: Array<{ id: string; title: string }>;
  known: boolean;
  confidence: number;
  generatedBy: 'retrieval' | 'llm';
  /** The explained request (context.requestId), when it is the caller's own. */
  request?: { requestId: string; tool: string | null; status: number; errorCode: string | null; errorMessage: string | null; at: string | null } | null;
}

const KIND_BOOST: Record<IndexedSection['kind'], number> = { concept: 1.25, error: 1, tool: 0.8 };
const ERROR_CODES = errorGuides().map((e) => e.code);

export class HelpIndex {
  readonly sections: KnowledgeSection[];
  private readonly byId: Map<string, KnowledgeSection>;
  private readonly search: MiniSearch<IndexedSection>;

  constructor(readonly baseUrl: string) {
    this.sections = knowledgeSections(baseUrl);
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
  }

  section(id: string): KnowledgeSection | undefined {
    return this.byId.get(id);
  }

  /** Ranked sections for a query, with the share of the question's terms the best one covers. */
  retrieve(query: string, opts: { boostIds?: string[] } = {}): { hits: Retrieved[]; coverage: number; termCount: number } {
    const terms = questionTerms(query);
    if (terms.length === 0) return { hits: [], coverage: 0, termCount: 0 };
    const all = [...new Set(terms.flatMap((t) => [t.term, ...t.expansions]))];
    const boostIds = new Set(opts.boostIds ?? []);
    const results: SearchResult[] = this.search.search(all.join(' '), {
      // Terms are already processed; keep them as they are.
      tokenize: (t) => t.split(' ').filter(Boolean),
      processTerm: (t) => t,
      boostDocument: (id, _term, stored) => KIND_BOOST[(stored?.kind as IndexedSection['kind']) ?? 'concept'] * (boostIds.has(String(id)) ? 3 : 1),
    });
    const hits = results.slice(0, 5).map((r) => ({ section: this.byId.get(String(r.id))!, score: r.score, matched: r.queryTerms }));
    let coverage = 0;
    if (hits.length) {
      const matched = new Set(hits[0].matched);
      const covered = terms.filter((t) => matched.has(t.term) || t.expansions.some((e) => matched.has(e))).length;
      coverage = covered / terms.length;
    }
    return { hits, coverage, termCount: terms.length };
  }

  /** The retrieval answer: context first (own request, error code, stuck state), then the best sections. */
  answer(input: HelpInput): HelpAnswer {
    const ctx = input.context ?? {};
    const parts: string[] = [];
    const sources = new Map<string, string>();
    let nextStep: NextStep | null = null;
    let known = false;
    let confidence = 0;
    const boostIds: string[] = [];

    // 1. The caller's own failed request.
    let explainedCode: string | null = null;
    if (ctx.requestId) {
      const r = input.request;
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

    // 2. An error code named in context.error (or the question), when no request explained it.
    const codeInText = !explainedCode ? findErrorCode(`${ctx.error ?? ''} ${input.question}`) : null;
    if (codeInText) {
      const guide = errorGuide(codeInText)!;
      let line = `${guide.code} (HTTP ${guide.status}): ${guide.cause}\nWhat to do: ${guide.nextStepText}`;
      nextStep = nextStepAfterFailure(guide.code, ctx.toolName ?? null) ?? guide.nextStep;
      if (guide.code === 'insufficient_gas') {
        const shortfall = parseShortfall(`${ctx.error ?? ''} ${input.question}`);
        nextStep = insufficientGasStep(shortfall);
        line += `\n${insufficientGasLine(shortfall)}`;
      }
      parts.push(line);
      sources.set(`error-${guide.code}`, `Error ${guide.title}`);
      known = true;
      confidence = Math.max(confidence, 0.95);
    }

    // 3. The stuck state narrows the answer to the transitions it allows.
    const state = findPurchaseState(input.stuckState ?? '');
    if (state) {
      const moves = purchaseTransitions().filter((t) => t.from.split(/[ ,]+/).includes(state) || t.from.startsWith(`${state},`));
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

    // 4. Retrieval over the question (and the stuck state's words).
    const query = [input.question, input.stuckState ?? ''].join(' ');
    const { hits, coverage, termCount } = this.retrieve(query, { boostIds });
    const good = hits.length > 0 && (coverage >= 0.5 || (termCount >= 4 && coverage >= 0.34));
    const explained = explainedCode !== null || codeInText !== null;
    if (good) {
      const top = hits[0].section;
      // An explained error already says what to do: background sections are only pointed to, not repeated.
      if (!sources.has(top.id) && !explained) {
        parts.push(`${top.title}:\n${top.body}`);
        sources.set(top.id, top.title);
      }
      const also = hits.slice(explained ? 0 : 1, 3).filter((h) => h.score >= hits[0].score * 0.5 && !sources.has(h.section.id));
      if (also.length) {
        parts.push(`See also: ${also.map((h) => h.section.title).join('; ')}.`);
        for (const h of also) sources.set(h.section.id, h.section.title);
      }
      if (!nextStep && top.nextStep) nextStep = top.nextStep;
      known = true;
      confidence = Math.max(confidence, Math.min(0.9, 0.4 + coverage * 0.5));
    }

    if (!known) {
      parts.length = 0;
      parts.push(
        "I don't know: this service's documentation does not cover that question, and I will not guess. " +
          'Rephrase it with the tool or the error code involved (for example "why did purchase_service fail with insufficient_gas?"), read ' +
          `${this.baseUrl}/llms-full.txt, or file it with report_bug so the operator sees it.`,
      );
      nextStep = { tool: 'report_bug', arguments: { ...exampleArguments('report_bug'), title: 'Question the help could not answer', description: input.question.slice(0, 500).padEnd(10, '.') } };
      return { answer: parts.join('\n\n'), nextStep, sources: [], known: false, confidence: 0, generatedBy: 'retrieval', ...requestField(input) };
    }
    if (nextStep) parts.push(`Next step: ${JSON.stringify({ tool: nextStep.tool, arguments: nextStep.arguments })}`);
    return {
      answer: parts.join('\n\n'),
      nextStep,
      sources: [...sources].map(([id, title]) => ({ id, title })),
      known: true,
      confidence: Math.round(confidence * 100) / 100,
      generatedBy: 'retrieval',
      ...requestField(input),
    };
  }

  /** The passages an LLM may use: the sections the retrieval answer cites. */
  passagesFor(answer: HelpAnswer): KnowledgeSection[] {
    return answer.sources.map((s) => this.byId.get(s.id)).filter((s): s is KnowledgeSection => !!s);
  }
}

const PURCHASE_TOOLS = new Set(['get_purchase', 'get_delivery', 'confirm_delivery', 'ack_purchase', 'deliver_work', 'rate_purchase', 'request_refund', 'dispute_purchase', 'send_message', 'list_messages']);
const LISTING_TOOLS = new Set(['purchase_service', 'update_service']);

/** The concrete call after a failure of a known tool: retry it correctly, or look up the right id or state. */
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
  return null;
}

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

// ---------------------------------------------------------------------------------------------
// Optional LLM composition (OpenAI-compatible chat completions), grounded in the passages only.

export interface LlmOptions {
  url: string;
  key: string | null;
  model: string;
  timeoutMs: number;
}

const SYSTEM_PROMPT =
  'You are the help assistant of an agent marketplace. Answer ONLY from the passages given. ' +
  'Name tools, arguments and numbers exactly as the passages do; never invent a tool, an argument or a number. ' +
  'If the passages do not answer the question, say you do not know. Be brief: a few sentences, then the next tool call.';

function chatUrl(url: string): string {
  const u = url.replace(/\/+$/, '');
  return /\/chat\/completions$/.test(u) ? u : `${u}/chat/completions`;
}

/** Numbers and tool names in the LLM's text must all appear in what it was given. */
export function isGrounded(text: string, given: string): boolean {
  const numbers = (s: string) => new Set((s.match(/\d+(?:\.\d+)?/g) ?? []).map((n) => n.replace(/\.0+$/, '')));
  const givenNumbers = numbers(given);
  for (const n of numbers(text)) if (!givenNumbers.has(n)) return false;
  const snake = (s: string) => new Set(s.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? []);
  const givenSnake = snake(given);
  for (const w of snake(text)) if (!givenSnake.has(w)) return false;
  return true;
}

export async function composeWithLlm(
  opts: LlmOptions,
  input: HelpInput,
  retrieval: HelpAnswer,
  passages: KnowledgeSection[],
): Promise<string | null> {
  const passageText = passages.map((p) => `[${p.id}] ${p.title}\n${p.body}`).join('\n\n---\n\n');
  const contextText = [
    input.stuckState ? `Stuck state: ${input.stuckState}` : '',
    input.context?.toolName ? `Tool: ${input.context.toolName}` : '',
    input.context?.error ? `Error: ${input.context.error}` : '',
    `Facts already established:\n${retrieval.answer}`,
  ]
    .filter(Boolean)
    .join('\n');
  const user = `Passages:\n${passageText}\n\n${contextText}\n\nQuestion: ${input.question}`;
  const res = await fetch(chatUrl(opts.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}) },
    body: JSON.stringify({
      model: opts.model,
      temperature: 0,
      max_tokens: 600,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: user },
      ],
    }),
    signal: AbortSignal.timeout(opts.timeoutMs),
  });
  if (!res.ok) throw new Error(`LLM answered HTTP ${res.status}`);
  const json = (await res.json()) as any;
  const content = json?.choices?.[0]?.message?.content;
  if (typeof content !== 'string' || !content.trim()) throw new Error('LLM returned no content');
  const text = content.trim().slice(0, 4000);
  if (!isGrounded(text, `${user}\n${JSON.stringify(retrieval.nextStep ?? {})}`)) return null;
  return text;
}
