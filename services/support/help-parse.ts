/**
 * ask_help, step 1: the question's structure, nothing more — a pasted error envelope, ids, tool
 * names of the catalogue, gas amounts, the asker's side and the purchase state the asker states.
 * Which words mean what is data (packages/knowledge/synonyms.ts, the catalogue, the machine).
 */
import { TOOL_NAMES } from '../../packages/tool-catalogue';
import { STATUS_BY_CODE } from '../../packages/errors';
import { PURCHASE_STATUSES } from '../../packages/contracts/purchase-machine';
import { NUMBER_WORDS, SHORTHAND, SIDE_PHRASES, STATE_PHRASES } from '../../packages/knowledge/synonyms';
import { errorGuides } from '../../packages/knowledge';
import type { HelpInput } from '../../packages/contracts/support';

export type Side = 'buyer' | 'seller';

export interface PastedError {
  code: string;
  status: number | null;
  message: string | null;
  details: Record<string, unknown>;
  requestId: string | null;
}

export interface Parsed {
  /** The question carries a pasted error envelope (JSON with an "error"), whether or not its code is one of ours. */
  pasted: boolean;
  /** The question lower-cased, with one space between words and straight quotes. */
  text: string;
  error: PastedError | null;
  purchaseIds: string[];
  listingIds: string[];
  checkoutIds: string[];
  tools: string[];
  /** Gas amounts the question states ("1,000 gas", "900"). */
  amounts: number[];
  side: Side | null;
  /** A purchase state the question tells of (a machine state name). */
  statedState: string | null;
  /** The asker tells it of its own purchase ("I delivered", "I confirmed"), not a state name in passing ("completed sales"). */
  statedClaim: boolean;
  /** The balance the asker says it holds ("I have 500 gas", "3k gas bal"), or null. */
  balance: number | null;
  /** A listing the question quotes (its list_service arguments, or 'title: "…", description: "…", price 100'). */
  draft: { title: string; description: string; priceGas: number | null; category: string | null } | null;
  /** The arguments the question quotes as JSON pairs ('"priceGas": "9.5"'), case kept — never the error envelope's own fields. */
  quotedArgs: Record<string, unknown> | null;
}

const ENVELOPE_FIELDS = new Set(['ok', 'error', 'code', 'message', 'details', 'requestId', 'status', 'hint', 'errors', 'field', 'type', 'result', 'tool', 'arguments', 'score', 'passScore', 'issues', 'qualityReport', 'moderation', 'verdict', 'reason', 'state']);

function quotedArgsOf(q: string): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const m of q.matchAll(/"([A-Za-z][A-Za-z0-9_]*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)) {
    if (!ENVELOPE_FIELDS.has(m[1])) out[m[1]] = JSON.parse(m[2]) as unknown;
  }
  return Object.keys(out).length ? out : null;
}

/** The listing a question quotes, field by field, as written (case kept). */
function draftOf(q: string): Parsed['draft'] {
  const field = (name: string) => new RegExp(`"?${name}"?(?:\\s*[:=]\\s*|\\s+(?:is\\s+|was\\s+)?)(["'])(.+?)\\1(?=\\s*[,.;:)}\\]?!]|\\s|$)`, 'i').exec(q)?.[2] ?? null;
  const title = field('title');
  // ("Is this description long enough: '…'": the one long quote is the description.)
  // ("the description says I'm fast and reliable": told in words, to the sentence's end.)
  const description = field('description') ?? (/\bdescription\b/i.test(q) && !q.includes('{') ? (/(?<![a-z])(["'])([^"']{20,})\1(?![a-z])/i.exec(q)?.[2] ?? /\bdescription (?:says|reads|is)(?: that| just)? ([^.?!]{20,})/i.exec(q)?.[1] ?? null) : null);
  if (title === null && description === null) return null;
  // (A search result quoted — a title beside its seller or quote — is a listing looked at, not one drafted.)
  if (description === null && /"(?:seller|quote|qualityScore|reputation|salesCount)"\s*:/.test(q)) return null;
  const price = (/"?price(?:Gas)?"?\s*(?:[:=]|of|at)?\s*(\d+(?:\.\d+)?)/i.exec(q) ?? /\b(?:for|at) (\d+(?:\.\d+)?) ?gas\b/i.exec(q))?.[1];
  return { title: title ?? '', description: description ?? '', priceGas: price ? Number(price) : null, category: field('category') };
}

export function normalize(s: string): string {
  const text = s.toLowerCase().replace(/\bw\/o\b/g, 'without').replace(/[‘’`]/g, "'").replace(/[“”]/g, '"').replace(/\s+/g, ' ').trim();
  // A dollar sign that is not an amount ("how many $") is the word.
  return ` ${text.replace(/\$(?!\s?\d)/g, ' usd ').replace(/\b[a-z0-9]+\b/g, (w) => SHORTHAND[w] ?? NUMBER_WORDS[w] ?? w)} `;
}

/** Whether `phrase` occurs in the normalized text on word boundaries. */
export function has(text: string, phrase: string): boolean {
  let at = text.indexOf(phrase);
  while (at >= 0) {
    const before = text[at - 1] ?? ' ';
    const after = text[at + phrase.length] ?? ' ';
    if (!/[a-z0-9_]/.test(before) && !/[a-z0-9_]/.test(after)) return true;
    at = text.indexOf(phrase, at + 1);
  }
  return false;
}

/** Light stemming, the same for questions, phrases and the index: plurals and -ing/-ed go ("refunded" → "refund"). */
export function stem(w: string): string {
  if (w.includes('_')) return w;
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** A text with every word stemmed (for matching phrases whatever their inflection). */
export const stemmed = (text: string) => text.replace(/[a-z_]+/g, stem);

const ERROR_CODES = Object.keys(STATUS_BY_CODE);

/** A JSON object pasted in the question (the envelope, or its error part), if one parses. */
function pastedJson(q: string): Record<string, unknown> | null {
  // The envelope may follow the call's own arguments ('buy_gas {"packId":"pro"} -> {"error": …}') or come before an elided body
  // ('says {"error":"unknown tool"} when I POST {"tool":…,...}'): the first object that parses and carries an error, else the first that parses.
  const ends = [...q.matchAll(/}/g)].map((m) => m.index).reverse();
  let first: Record<string, unknown> | null = null;
  for (let start = q.indexOf('{'); start >= 0; start = q.indexOf('{', start + 1)) {
    for (const end of ends.filter((e) => e > start)) {
      try {
        const v = JSON.parse(q.slice(start, end + 1)) as unknown;
        if (!v || typeof v !== 'object') continue;
        if ('error' in v) return v as Record<string, unknown>;
        first ??= v as Record<string, unknown>;
        break;
      } catch {
        // not this one
      }
    }
  }
  return first;
}

/**
 * A pasted code that is not ours ("AUTH_MISSING", "OWNER_LIMIT_EXCEEDED" — another client's or a proxy's
 * wording): the error guide whose words its code and message use most, else the pasted HTTP status's code.
 */
function ourCode(code: string, message: string, text: string): string | null {
  const best = codeByWords(normalize(`${code.replace(/[_-]+/g, ' ')} ${message}`));
  if (best) return best;
  const status = /(?:http|status|->|resp(?:onse)?:?)\s*(\d{3})\b/.exec(text)?.[1];
  return ERROR_CODES.find((c) => String(STATUS_BY_CODE[c as keyof typeof STATUS_BY_CODE]) === status) ?? null;
}

/** The error guide (of `among`, else any) whose code and synonyms the words say most, or null. */
function codeByWords(said: string, among: string[] = ERROR_CODES): string | null {
  let best: { code: string; score: number } | null = null;
  for (const g of errorGuides().filter((x) => among.includes(x.code))) {
    // (A status among the synonyms is matched by the status below, never by an amount in the message.)
    // (A longer phrase says more: "invalid tool" is unknown_tool's, over invalid_arguments' "invalid".)
    const score = [g.code.replace(/_/g, ' '), ...g.synonyms.filter((w) => !/^\d+$/.test(w))].filter((w) => has(said, w.toLowerCase())).reduce((sum, w) => sum + w.split(' ').length, 0);
    if (score > (best?.score ?? 0)) best = { code: g.code, score };
  }
  return best?.code ?? null;
}

/** A request id the question states in words ("x-request-id: 7f3c…", "requestId 'r-7f3'"): a value with a digit, never the next word. */
const REQUEST_ID_SAID = /\b(?:x-request-id|request ?id)(?: header)?(?: is| was| =|:)?\s*['"]?([A-Za-z0-9][\w…-]*\d[\w…-]*)/i;

function errorOf(input: HelpInput, text: string): PastedError | null {
  const json = pastedJson(input.question);
  const env = (json?.error && typeof json.error === 'object' ? json.error : json) as Record<string, unknown> | null;
  const fromContext = input.context?.error ? normalize(input.context.error) : '';
  const logged = input.request?.errorCode ?? null;
  const code =
    (typeof env?.code === 'string' ? (ERROR_CODES.includes(env.code) ? env.code : ourCode(env.code, typeof env.message === 'string' ? env.message : '', text)) : null) ??
    // ('"error": "unknown tool"': the error as a bare string, read by its words.)
    (typeof json?.error === 'string' ? (ERROR_CODES.includes(json.error) ? json.error : ourCode(json.error, '', text)) : null) ??
    logged ??
    ERROR_CODES.find((c) => has(fromContext, c)) ??
    ERROR_CODES.find((c) => has(text, c)) ??
    // (A call's quoted message, "deliver_work says `purchase not found`": read by its words.)
    codeByWords(QUOTED_MESSAGE.exec(text)?.[1] ?? '') ??
    null;
  // A pasted HTTP status ("returns 401", "HTTP 422"), never an amount ("500 gas").
  // (Of the codes that share the status, the one its words say: a 400 "Unknown tool" is unknown_tool, not invalid_arguments.)
  const ofStatus = ERROR_CODES.filter((c) => statusSaid(text, STATUS_BY_CODE[c as keyof typeof STATUS_BY_CODE]));
  const statusInText = ofStatus.length > 1 ? (codeByWords(text, ofStatus) ?? ofStatus[0]) : ofStatus[0];
  const finalCode = code ?? statusInText ?? null;
  if (!finalCode) return null;
  const details = env?.details && typeof env.details === 'object' ? (env.details as Record<string, unknown>) : {};
  const requestId = (typeof json?.requestId === 'string' ? json.requestId : null) ?? input.context?.requestId ?? input.request?.requestId ?? idsOf(input.question, 'req_')[0] ?? REQUEST_ID_SAID.exec(input.question)?.[1] ?? null;
  return {
    code: finalCode,
    status: STATUS_BY_CODE[finalCode as keyof typeof STATUS_BY_CODE] ?? null,
    // (A code of another client's, read as ours by its words, is its message when it has none: "spending limit exceeded".)
    message: (typeof env?.message === 'string' ? env.message : null) ?? input.request?.errorMessage ?? input.context?.error ?? textMessage(input.question, finalCode) ?? [env?.code, json?.error].find((c): c is string => typeof c === 'string' && c !== finalCode)?.replace(/[_-]+/g, ' ') ?? null,
    details,
    requestId,
  };
}

/** What a named call answered, quoted: 'deliver_work says `purchase not found`', 'buy_gas returned "pack unavailable"'. */
const QUOTED_MESSAGE = new RegExp(`\\b(?:${TOOL_NAMES.join('|')})(?: call)? (?:says|said|returns?|returned|gives|gave|answers|answered|errors?|errored|fails|failed)(?: with)?:? [\`'"“]([^\`'"”]{4,120})[\`'"”]`);

/** An error told in words ("400 invalid_arguments: reason too short. I wrote 'bad'"): its message is what follows the code, to the sentence's end. */
function textMessage(text: string, code: string): string | null {
  return new RegExp(`(?<!["“])\\b${code}(?:: *([^.;?!"“]{6,160})| *:? *["“]([^"”]{6,160})["”])`, 'i').exec(text)?.slice(1).find(Boolean)?.trim() ?? null;
}

function idsOf(q: string, prefix: string): string[] {
  const out = new Set<string>();
  for (const m of q.matchAll(/\b([a-z]{3}_[A-Za-z0-9]{1,40})\b/g)) if (m[1].startsWith(prefix)) out.add(m[1]);
  return [...out];
}

/** "a 250-gas", "an 800-gas" (`start`: "A …" opening a sentence): the article an amount takes read aloud (eight…, eleven, eighteen). */
export const aGas = (n: number, start = false) => `${/^8|^1[18](\d{3})?$/.test(String(n)) ? 'an' : 'a'} ${n}-gas`.replace(/^a/, start ? 'A' : 'a');

/** A gas amount as written ("3k", "1,200"). */
export const gasOf = (s: string) => Number(s.replace(/,/g, '').replace(/k$/, '')) * (s.endsWith('k') ? 1000 : 1);

/** The balance the asker says it holds or should hold — not its earnings ("I have 900 gas of sale_earn"). */
function balanceOf(t: string): number | null {
  const held =
    /\b(?:i(?:'ve| have)? (?:have|hold|got|should have|am sitting on|sit on)|should have|should be at|bal(?:ance)?(?: is| of|:| should be| is supposed to be| ought to be)?|wallet (?:has|holds|shows|says)) (?:roughly |about |around |approx |approximately |only |now |~ ?)?(\d[\d,]*k?)(?![\d,k])\b(?= gas\b| and\b| but\b| so\b| left\b| now\b| in\b| on\b|\s*[,.;:!?)]|\s*$)(?! (?:gas )?(?:of |in |from )?(?:sale_earn|earnings|sales|withdrawable))/.exec(t) ??
    /(\d[\d,]*k?) gas (?:bal(?:ance)?\b|in (?:my |the )?wallet|on hand)/.exec(t);
  return held ? gasOf(held[1]) : null;
}

/** The text tells of an HTTP status it got ("HTTP 422", "got a 409", "returns 401", "-> 500"), not of an amount (nor "so it doesn't get 422'd"). */
const statusSaid = (text: string, status: number) => new RegExp(`(?:->|\\b(?:http|status|error|failed|fails|came back|comes back|returns?|returned|got|get|gets|getting|received|hit|seeing|throws?|threw|answered|answers))[:=]?(?: (?:a|an|the|back|me|http|with))? ${status}\\b(?!')`).test(text);

/** The text without what it quotes (a listing's title, a message, a command): the quote's words are data, never the asker's own. */
export const withoutQuotes = (text: string): string => text.replace(/(^|[\s:(])['"“‘][^'"”’]{8,}['"”’]/g, '$1 ');

function amountsOf(text: string): number[] {
  const out: number[] = [];
  const statuses = new Set(Object.values(STATUS_BY_CODE));
  for (const m of text.matchAll(/(?<![\w.$#])(?<![a-z]-)(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*(k\b)?([\s-]*gas)?(?! ?(?:usd|dollars?|bucks)\b)/g)) {
    const n = gasOf(`${m[1]}${m[2] ? 'k' : ''}`);
    // (A code's number — "ADM-7781", "#1234" — is not an amount.)
    // An HTTP status is not an amount: "HTTP 422", "returns 409", "422'd", "400 {…"; nor a count ("salesCount 40").
    const after = text.slice((m.index ?? 0) + m[0].length);
    const before = text.slice(0, m.index ?? 0).trim().split(/[\s:=]+/).pop() ?? '';
    // (A score or a count said a word or two before: "score passes 55", "rating was 4".)
    const lead = text.slice(Math.max(0, (m.index ?? 0) - 40), m.index ?? 0);
    if (/(count|avg|days|score)$/.test(before) || (!m[3] && /\b(?:score|scores|qualityscore|rating|ratingavg)(?: [a-z']+){1,2} $/.test(lead))) continue;
    const isStatus = statuses.has(n) && !m[3] && (statusSaid(`${lead}${n}`, n) || /^('d|\s*\{|\s*error|\s*back\b)/.test(after));
    if (Number.isFinite(n) && n > 0 && n < 1e9 && (m[3] || (n >= 10 && !isStatus && !/^\s*(day|hour|h\b|min|week|sec|time|star|%|x\b|char|word|test|file|rating|agent)/.test(after)))) out.push(n);
  }
  // Dollars stated ("net $4.50", "37 usd") are gas at the peg.
  for (const m of text.matchAll(/\$\s?(\d+(?:\.\d{1,2})?)|(\d+(?:\.\d{1,2})?) ?(?:usd|dollars?|bucks)\b/g)) out.push(Math.round(Number(m[1] ?? m[2]) * 100));
  return out;
}

/** The side the question states: the phrase that says most (the longest match wins a tie). */
function sideOf(text: string): Side | null {
  const score: Record<Side, number> = { buyer: 0, seller: 0 };
  // A sentence that opens with the asker's own past act drops its "I" ("Delivered pur_c33 yesterday", "Sold 4 jobs").
  const mine = text.replace(/(^\s*|[.!?;]\s*)(?=[a-z]+ed\b|sold\b|paid\b|bought\b)/g, '$1i ');
  for (const [phrase, side] of Object.entries(SIDE_PHRASES)) if (has(mine, phrase)) score[side] += phrase.split(' ').length;
  if (score.buyer === score.seller) return null;
  return score.buyer > score.seller ? 'buyer' : 'seller';
}

/** The state the question tells of: its paraphrases and the machine's names; where it tells of several ("disputed although I delivered"), the one furthest along the lifecycle. */
/** The text says it, not its negation ("I haven't reviewed it" does not say "reviewed"; "before anything is delivered" does not say "delivered"). */
export function affirms(text: string, phrase: string): boolean {
  const at = text.indexOf(` ${phrase}`);
  return has(text, phrase) && !/(?:\bnot|n't|\bnever|\byet to|\bbefore|\buntil)( \w+){0,2} $/.test(text.slice(Math.max(0, at - 32), at + 1));
}

/** A call's own outcome ("the tool call failed", "buy_gas failed", "my checkout expired") is not a purchase's state. */
const CALL_OUTCOME = new RegExp(`\\b(?:call|request|tool|api|checkout|payment|card|cash ?out|webhook|registration|login|${TOOL_NAMES.join('|')})s? (?:has |have |just |also |then )?(?:failed|expired)\\b`, 'g');

function stateOf(text: string): string | null {
  let rest = text.replace(CALL_OUTCOME, ' ');
  const told: string[] = [];
  for (const phrase of Object.keys(STATE_PHRASES).sort((a, b) => b.length - a.length)) {
    if (!has(rest, phrase)) continue;
    if (affirms(rest, phrase)) told.push(STATE_PHRASES[phrase]);
    rest = rest.split(phrase).join(' ');
  }
  told.push(...PURCHASE_STATUSES.filter((s) => !has(rest, `${s} earnings`) && (affirms(rest, s) || affirms(rest, s.replace(/_/g, ' ')))));
  return told.sort((a, b) => PURCHASE_STATUSES.indexOf(b as never) - PURCHASE_STATUSES.indexOf(a as never))[0] ?? null;
}

/** The catalogue calls the question says the asker made already ("I pulled it with get_delivery", "list_orders shows …"). */
export function doneCalls(p: Parsed): string[] {
  return p.tools.filter((tool) => ['via', 'with', 'w/', 'called', 'ran', 'used', 'pulled', 'did', 'tried', 'got from', 'read from'].some((w) => p.text.includes(` ${w} ${tool}`)) || ['shows', 'says', 'returned', 'gave', 'is', 'was', 'contains', 'came back'].some((w) => has(p.text, `${tool} ${w}`)));
}

export function parse(input: HelpInput): Parsed {
  const q = `${input.question} ${input.stuckState ?? ''}`;
  const text = normalize(q);
  const error = errorOf(input, text);
  // Tools the asker names — not those a pasted error's own message or hint lists ("tool must be one of: …").
  const env = pastedJson(input.question);
  const said = [env?.error, env].flatMap((e) => (e && typeof e === 'object' ? Object.values(e as Record<string, unknown>).filter((v): v is string => typeof v === 'string' && v.length > 40) : []));
  const own = said.reduce((t, v) => t.split(normalize(v).trim()).join(' '), text);
  const tools = TOOL_NAMES.filter((t) => has(own, t));
  for (const t of [input.context?.toolName, input.request?.tool]) if (t && TOOL_NAMES.includes(t) && !tools.includes(t)) tools.push(t);
  return {
    pasted: text.includes('"error"') || text.includes('"code"'),
    text,
    error,
    purchaseIds: idsOf(q, 'pur_'),
    listingIds: idsOf(q, 'lst_'),
    checkoutIds: idsOf(q, 'cko_'),
    tools,
    // The figures of a pasted envelope are the error's, not the asker's.
    // (The envelope leaves a "{}" behind, so a status before it — "-> 422 {…}" — is still read as one.)
    amounts: amountsOf(text.replace(/\{.*\}/s, ' {} ')),
    side: sideOf(text),
    statedState: stateOf(text),
    statedClaim: Object.keys(STATE_PHRASES).some((phrase) => has(text, phrase)),
    balance: balanceOf(text.replace(/\{.*\}/s, ' ')),
    draft: draftOf(q),
    quotedArgs: quotedArgsOf(q),
  };
}
