/**
 * ask_help's engine: BM25 retrieval (MiniSearch) over the knowledge sections that llms-full.txt is
 * rendered from, with query understanding (phrases, question intents, synonyms weighted below the
 * agent's own words, light stemming, pasted HTTP statuses), the caller's context (error code, own
 * failed request, stuck state), and an optional LLM that may only rephrase the retrieved passages.
 * Without an LLM, the retrieval answer is the product: the sentence that answers most of the question
 * first, then the best section (and a runner-up nearly as good). It says "I don't know" when the
 * documentation does not know most of the question's weight (IDF; unknown words weigh most).
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
import { smallestPackCovering, GAS_PACKS, packById } from '../../packages/market-rules';
import { TOOL_NAMES, PURCHASE_STATUSES } from '../../packages/tool-catalogue';

// ---------------------------------------------------------------------------------------------
// Text processing: the same normalisation for the indexed sections and the questions.

/**
 * Phrases agents use → the words the documentation uses. Applied to questions and sections alike,
 * so a phrase rewritten here always meets its rewritten form in the docs. Intents ("how long
 * until…", "what happens to my gas when I buy…") map to the concept that answers them.
 */
const PHRASES: Array<[RegExp, string]> = [
  [/\bcash[\s-]?outs?\b/g, ' cashout '],
  [/\bpaid out\b/g, ' cashout '],
  [/\bpay[\s-]?outs?\b/g, ' payout '],
  [/\bmoney back\b/g, ' refund '],
  [/\btop[\s-]?up\b/g, ' buy gas '],
  [/\b(?:add|deposit|load|put)\s+(?:more\s+|some\s+)?(?:funds|money|gas|credits?|balance)\b/g, ' buy gas '],
  [/\bapi[\s-]?keys?\b/g, ' apikey '],
  [/\b(?:sign|log)[\s-]?(?:up|in)\b/g, ' register '],
  [/\b(?:create|open|make|set up|get)\s+(?:an?\s+|my\s+)?(?:new\s+)?account\b/g, ' register '],
  [/\bmodel context protocol\b/g, ' mcp '],
  [/\b(?:vs\s?code|visual studio code|windsurf|claude (?:desktop|code)|cline|continue\.dev)\b/g, ' mcp ide '],
  [/\bhook (?:\w+ )?up\b/g, ' connect mcp '],
  [/\bidempotency[\s-]?keys?\b/g, ' idempotency '],
  [/\bauto[\s-]?release[sd]?\b/g, ' autorelease '],
  [/\bauto[\s-]?refund(?:s|ed)?\b/g, ' autorefund '],
  [/\bquality[\s-]?(?:gate|check|review|bar|filter)\b/g, ' quality gate '],
  [/\bx-request-id\b/g, ' requestid '],
  [/\brequest[\s-]?id\b/g, ' requestid '],
  [/\bnot enough\b/g, ' insufficient '],
  [/\bout of gas\b/g, ' insufficient gas '],
  [/\b(?:never|not|didn'?t|did not|hasn'?t|has not|haven'?t|have not|still hasn'?t|still has not)\s+(?:been\s+|yet\s+)?(?:deliver(?:ed|s)?|sent|shipped|handed (?:over|in)|finished)\b/g, ' undelivered refund dispute '],
  [/\b(?:do not|don'?t|never|not|forget to|forgot to|fail to|failed to|doesn'?t|does not|didn'?t)\s+confirm(?:ed|s)?\b/g, ' autorelease confirm '],
  [/\b(?:never|not|hasn'?t|didn'?t)\s+(?:been\s+)?confirmed\b/g, ' autorelease confirm '],
  [/\b(?:what|how much)\s+(?:price\s+)?(?:should|to|do|can|could)\s+(?:i\s+)?(?:charge|ask)\b/g, ' pricing price '],
  [/\bhow long\b/g, ' days '],
  [/\b(?:exchange|conversion) rate\b/g, ' usd peg '],
  [/\breal money\b/g, ' usd cashout '],
  [/\bhand(?:ed)? (?:over|in)\b/g, ' deliver '],
  [/\bcode generation\b/g, ' codegen '],
  [/\bstar rating\b/g, ' rating '],
  [/\bprice range\b/g, ' minPriceGas maxPriceGas price '],
  [/\b(?:cheapest|lowest price|least expensive)\b/g, ' price_asc sort '],
  [/\b(?:most expensive|highest price|priciest)\b/g, ' price_desc sort '],
  [/\bstatus code\b/g, ' status '],
];

/**
 * Question intents ("how long until…", "what happens to my gas when I buy…", "take my listing
 * offline") → the concept that answers them. Applied to questions only, and added to the agent's
 * words rather than replacing them.
 */
const INTENTS: Array<[RegExp, string]> = [
  [/\bhappens? to (?:my |the )?(?:gas|money|funds|credits?|balance|payment)\b/g, '$& escrow held '],
  [/\bwhere (?:does|do|is|are|'s) (?:my |the )?(?:gas|money|funds|credits?|payment)(?: go| goes| kept| held| stored| sitting)?\s*(?:\?|$|until|while|before|after|when|during)/g, '$& escrow held '],
  [/\b(?:someone|somebody|anyone|a buyer|who)\s+(?:bought|purchased|ordered)\b|\bnew orders?\b|\bmy sales\b/g, '$& list_orders seller orders '],
  [/\b(?:my|own|our) (?:agent )?id\b|\bwho am i\b/g, '$& whoami '],
  [/\b(?:purchase|order|sales?|buying) history\b|\b(?:all )?my (?:purchases|orders|sales)\b|\b(?:status|state) of my (?:order|purchase)\b/g, '$& list_orders get_purchase '],
  [/\bchange[sd]? (?:my|your|their) mind\b/g, '$& refund cancel '],
  [/\bhow much (?:do|will|would|can|does) (?:i|we|the seller|a seller|sellers?) (?:earn|get|make|receive|keep|net)\b/g, '$& fee seller nets '],
  [/\b(?:become|be|start as|register as|work as|sign up as) an? seller\b|\bstart selling\b/g, '$& selling list_service '],
  [/\bwhen (?:i|you|we|an agent|a buyer) (?:buy|purchase|order|pay for)\b/g, '$& purchase escrow '],
  [/\b(?:get|gets|getting|be|is|are|am)\s+paid\b|\bget (?:my |the |their )?money\b(?! back)|\breceiv\w*\s+(?:their |my |the |his |her )?(?:payment|money|earnings)\b/g, '$& paid confirm autorelease '],
  [/\b(?:what|which) (?:now|next)\b|\bwhat do i do (?:now|next)\b|\bnext steps?\b/g, '$& next steps '],
  [/\b(?:charged|pay|paying|buy|bought|billed) twice\b|\bdouble[\s-]?(?:charged?|purchase|spend)\b/g, '$& idempotency retry '],
  [/\b(?:timed|times) out\b|\btime[\s-]?out\b/g, '$& timeout retry '],
  [/\b(?:have|has|is) left\b/g, '$& balance '],
  [/\b(?:start|started|begin|began|begun)\s+(?:working|work)\b/g, '$& ack_purchase acknowledge '],
  [/\b(?:take|taking|took)\s+(?:\w+\s+){0,3}(?:offline|down)\b/g, '$& paused pause '],
  [/\b(?:find|hire|looking for|look for|need|get|want)\s+(?:someone|somebody|an agent|a seller|a service|help)\b/g, '$& search_services search buy '],
  [/\b(?:see|read|view|get|download|open|fetch|check)\s+(?:what|the|their)\s+(?:\w+\s+){0,3}(?:delivered|handed over|submitted|delivery|deliverable|work)\b/g, '$& get_delivery read delivery '],
  [/\b(?:maximum|max|highest|upper limit|cap on the)\s+(?:price|amount|spend)\b|\b(?:pay|spend|charged?) more than\b/g, '$& maxPriceGas '],
  [/\bpaid (?:at|on|via|with|through|by) (?:the )?(?:checkout|card|stripe|credit card)\b/g, '$& buy gas checkout '],
  [/\bbalance (?:did ?n'?t|does ?n'?t|has ?n'?t|is not|not|never|is still|still)\b/g, '$& poll wallet gasbalance risen '],
];

const STOP_WORDS = new Set(
  (
    'a an the i im i\'m my me mine we our us you your yours it its this that these those there their they them ' +
    'do does did done doing how what whats why when where which who whom whose is are was were be been being am ' +
    'to of in on for and or but nor so if then than too very can could should would will shall may might must ' +
    'with without from at by as into onto about over under again also just only any some all each every ' +
    'get gets got getting have has had having make makes made want wants need needs please thanks thank hi hello ' +
    'tell explain know let lets here now still ok okay yet one way thing things else mean means meaning happen happens ' +
    'going like current currently last year really actually something someone anything possible supposed able ' +
    'use using used out see look whether later soon anyone anybody somebody maybe much many check left ' +
    'become becoming goes go going options option choices two work works working stopped ' +
    'difference different differ between versus vs compare compared again exist exists existing available badly well ' +
    'while whilst during meanwhile ' +
    'didn doesn don isn wasn hasn haven won can cannot aren weren wouldn shouldn couldn'
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
  safe: ['trust', 'reputation', 'escrow'],
  protected: ['escrow', 'trust'],
  protection: ['escrow', 'trust'],
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
  paid: ['confirm', 'autorelease'],
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
  // the platform's cut
  take: ['fee'],
  takes: ['fee'],
  keep: ['fee'],
  keeps: ['fee'],
  deducted: ['fee'],
  deduct: ['fee'],
  surcharge: ['fee'],
  margin: ['fee'],
  revenue: ['sale_earn', 'earnings'],
  income: ['sale_earn', 'earnings'],
  profit: ['sale_earn', 'earnings'],
  proceeds: ['sale_earn', 'earnings'],
  earned: ['sale_earn', 'earnings'],
  smallest: ['minimum'],
  least: ['minimum'],
  lowest: ['minimum'],
  min: ['minimum'],
  bundle: ['pack'],
  bundles: ['pack'],
  package: ['pack'],
  packages: ['pack'],
  deposit: ['buy', 'gas'],
  recharge: ['buy', 'gas'],
  refill: ['buy', 'gas'],
  card: ['checkout', 'human'],
  pay: ['buy', 'checkout'],
  // buying
  filter: ['search', 'filters'],
  narrow: ['search', 'filters'],
  cheapest: ['price_asc'],
  sort: ['sort', 'search'],
  offers: ['listing', 'search'],
  orders: ['list_orders', 'purchase'],
  ordered: ['list_orders', 'purchase'],
  bought: ['purchase'],
  accept: ['confirm'],
  approve: ['confirm', 'checkout'],
  release: ['confirm', 'autorelease'],
  handed: ['deliver'],
  received: ['deliver'],
  maximum: ['maxPriceGas'],
  ceiling: ['maxPriceGas'],
  // after the purchase
  unhappy: ['refund', 'dispute'],
  dissatisfied: ['refund', 'dispute'],
  unsatisfied: ['refund', 'dispute'],
  poor: ['refund', 'dispute'],
  wrong: ['refund', 'dispute'],
  cheated: ['dispute', 'misrepresentation'],
  fraud: ['dispute', 'misrepresentation'],
  case: ['dispute'],
  claim: ['dispute'],
  arbitration: ['dispute', 'operator'],
  reply: ['message'],
  replies: ['message', 'list_messages'],
  respond: ['message'],
  // selling
  offer: ['list_service', 'listing'],
  publish: ['list_service', 'listing'],
  advertise: ['list_service', 'listing'],
  skills: ['list_service'],
  offline: ['paused'],
  temporarily: ['paused'],
  hide: ['paused'],
  disable: ['paused'],
  deactivate: ['paused'],
  pause: ['paused'],
  ship: ['deliver'],
  submit: ['deliver'],
  upload: ['deliver'],
  finished: ['deliver'],
  job: ['service'],
  gig: ['service'],
  // account and setup
  credentials: ['apikey'],
  password: ['apikey'],
  secret: ['apikey'],
  misplaced: ['lost', 'apikey'],
  forgot: ['lost'],
  recover: ['lost', 'apikey'],
  recovered: ['lost', 'apikey'],
  account: ['register', 'whoami'],
  identity: ['whoami'],
  profile: ['whoami'],
  belongs: ['whoami'],
  desktop: ['mcp'],
  integrate: ['mcp'],
  plugin: ['mcp'],
  reward: ['referral', 'bonus'],
  rewards: ['referral', 'bonus'],
  defect: ['bug', 'report_bug'],
  glitch: ['bug', 'report_bug'],
  broken: ['bug', 'report_bug'],
  feedback: ['report_experience'],
  went: ['report_experience'],
  house: ['platform', 'fee'],
  convert: ['usd', 'cashout'],
  ghost: ['undelivered', 'refund'],
  ghosts: ['undelivered', 'refund'],
  ghosted: ['undelivered', 'refund'],
  disappears: ['undelivered', 'refund'],
  disappeared: ['undelivered', 'refund'],
  vanished: ['undelivered', 'refund'],
  unresponsive: ['undelivered', 'refund', 'message'],
  silent: ['undelivered', 'refund', 'message'],
  garbage: ['refund', 'dispute'],
  junk: ['refund', 'dispute'],
  useless: ['refund', 'dispute'],
  bad: ['refund', 'dispute'],
  terrible: ['refund', 'dispute'],
  incomplete: ['refund', 'dispute'],
  revoked: ['unauthorized', 'apikey'],
  expired: ['unauthorized', 'apikey'],
  invalid: ['unauthorized', 'invalid_arguments'],
  stale: ['unauthorized', 'apikey'],
  myself: ['own'],
  yourself: ['own'],
  week: ['days'],
  weekly: ['days'],
  problem: ['bug', 'report_bug'],
  problems: ['bug', 'report_bug'],
  issue: ['bug', 'report_bug'],
  fast: ['days'],
  quickly: ['days'],
  quick: ['days'],
  link: ['checkoutUrl', 'url'],
  url: ['checkoutUrl'],
  closed: ['lost'],
  tab: ['page', 'checkout'],
  browser: ['page', 'human'],
  bring: ['referral', 'invite'],
  bringing: ['referral', 'invite'],
  recruit: ['referral', 'invite'],
  edit: ['update_service', 'change'],
  modify: ['update_service', 'change'],
  rename: ['update_service', 'change'],
  arrive: ['delivered', 'poll', 'get_purchase'],
  arrives: ['delivered', 'poll', 'get_purchase'],
  arrived: ['delivered', 'poll', 'get_purchase'],
  notified: ['poll'],
  notification: ['poll'],
  notify: ['poll'],
  paypal: ['payout', 'cashout'],
  bank: ['payout', 'cashout'],
  iban: ['payout', 'cashout'],
  wire: ['payout', 'cashout'],
  spec: ['openapi', 'llms'],
  specification: ['openapi', 'llms'],
  reference: ['openapi', 'docs'],
  docs: ['openapi', 'llms', 'docs'],
  documentation: ['openapi', 'llms', 'docs'],
  swagger: ['openapi'],
  describe: ['description'],
  accepted: ['quality', 'passScore'],
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
interface QuestionTerm {
  term: string;
  expansions: string[];
}

function questionTerms(text: string): QuestionTerm[] {
  const seen = new Set<string>();
  const out: QuestionTerm[] = [];
  let question = text.toLowerCase();
  for (const [re, rep] of INTENTS) question = question.replace(re, rep);
  for (const tok of tokenize(question)) {
    const term = processTerm(tok);
    if (!term || seen.has(term)) continue;
    seen.add(term);
    const expansions = (SYNONYMS[tok] ?? []).flatMap((s) => tokenize(s)).map(processTerm).filter((x): x is string => !!x && x !== term);
    out.push({ term, expansions: [...new Set(expansions)] });
  }
  return out;
}

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

/** The answer is "I don't know" unless the documentation knows most of the question's weight… */
const DOMAIN_MIN = 0.55;
/** …and the best section matches a fair share of it. */
const COVERAGE_MIN = 0.3;
const EXPANSION_WEIGHT = 0.5;
/** A second section scoring at least this share of the best one is answered in full too. */
const RUNNER_UP_SHARE = 0.75;
const KIND_BOOST: Record<IndexedSection['kind'], number> = { concept: 1.25, error: 1, tool: 0.8 };
const ERROR_CODES = errorGuides().map((e) => e.code);
/** The first code of each HTTP status (400 → invalid_arguments, the common one). */
const ERROR_CODE_BY_STATUS = new Map<number, string>();
for (const e of errorGuides()) if (!ERROR_CODE_BY_STATUS.has(e.status)) ERROR_CODE_BY_STATUS.set(e.status, e.code);

export class HelpIndex {
  readonly sections: KnowledgeSection[];
  private readonly byId: Map<string, KnowledgeSection>;
  private readonly search: MiniSearch<IndexedSection>;
  /** In how many sections each processed term occurs. */
  private readonly docFrequency = new Map<string, number>();

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
    for (const sec of this.sections) {
      const terms = new Set(tokenize(`${sec.title} ${sec.body} ${sec.tags.join(' ')}`).map(processTerm).filter((x): x is string => !!x));
      for (const t of terms) this.docFrequency.set(t, (this.docFrequency.get(t) ?? 0) + 1);
    }
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
    const terms = questionTerms(query);
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
    const domain = weights.reduce((sum, w) => sum + (w.known ? w.weight : 0), 0) / total;
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
   * The sentence of the retrieved sections that answers most of the question (weighted by how much
   * each of its words says), so the fact asked for leads the answer instead of hiding in a section.
   */
  private keySentence(hits: Retrieved[], terms: QuestionTerm[]): string | null {
    const weights = terms.map((t) => this.termWeight(t).weight);
    let best: { text: string; score: number } | null = null;
    for (const [rank, hit] of hits.slice(0, 3).entries()) {
      for (const sentence of splitSentences(hit.section.body)) {
        const words = new Set(tokenize(sentence).map(processTerm).filter((x): x is string => !!x));
        const score =
          terms.reduce((sum, t, i) => sum + (words.has(t.term) || t.expansions.some((e) => words.has(e)) ? weights[i] : 0), 0) * (rank === 0 ? 1.2 : 1);
        if (!best || score > best.score) best = { text: sentence, score };
      }
    }
    return best && best.score > 0 ? best.text : null;
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
    const { hits, coverage, domain, terms } = this.retrieve(query, { boostIds });
    const good = hits.length > 0 && domain >= DOMAIN_MIN && coverage >= COVERAGE_MIN;
    const explained = explainedCode !== null || codeInText !== null;
    if (good) {
      const top = hits[0].section;
      // An explained error already says what to do: background sections are only pointed to, not repeated.
      if (!sources.has(top.id) && !explained) {
        const key = this.keySentence(hits, terms);
        if (key && !parts.some((p) => p.includes(key))) parts.push(`In short: ${key}`);
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
      const also = hits.slice(explained ? 0 : 1, 4).filter((h) => h.score >= hits[0].score * 0.5 && !sources.has(h.section.id));
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
  // A pasted HTTP status ("status code 503", "Error 404: …", "429 Too Many Requests"), but not an
  // amount ("500 gas").
  const status =
    /\b(?:http(?:\/[\d.]+)?|status(?:\s+code)?|error|code|returned|returns|got|answered|answers|failed with|response)\W{0,3}([45]\d\d)\b(?!\s*(?:gas|usd|%))/.exec(lower) ??
    /\b([45]\d\d)\s*[-:]?\s*(?:unauthorized|forbidden|not found|conflict|too many requests|internal server error|service unavailable|bad request|payment required|unprocessable|not implemented)/.exec(lower);
  if (status) return ERROR_CODE_BY_STATUS.get(Number(status[1])) ?? null;
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
