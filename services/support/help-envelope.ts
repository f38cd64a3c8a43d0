/**
 * An error envelope the agent pasted into its question (issue #26, round 6): `{"ok": false, "error":
 * {"code", "message", "details"}, "requestId"}` as the gateway answered it. The envelope is the
 * situation: its code says what kind of failure it is, and its message and details carry the facts
 * (the current price, the field that failed and why, the seconds to wait, the amount missing). The
 * answer leads with those facts, worked out; the tool named around it is secondary (a 401 from
 * request_cashout is about the key, not about cashing out).
 */
import { TRANSITIONS } from '../../packages/contracts/purchase-machine';
import type { NextStep } from '../../packages/contracts/support';
import { errorGuide, errorGuides, exampleArguments } from '../../packages/knowledge';
import { MIN_CASHOUT_GAS } from '../../packages/market-rules';
import { getTool, toolInputSchema, TOOL_NAMES, type JsonSchema } from '../../packages/tool-catalogue';

export interface PastedError {
  code: string;
  message: string | null;
  hint: string | null;
  details: Record<string, unknown> | null;
  requestId: string | null;
  /** The tool that failed: the one the text names (not ask_help), if any. */
  tool: string | null;
}

export interface EnvelopeAnswer {
  /** The facts of the envelope, worked out: leads the answer. */
  lead: string;
  nextStep: NextStep | null;
}

/**
 * Codes about how a call was made (its key, its arguments, its rate, the tool name, the server), not
 * about the purchase, listing or wallet it touched: for these the envelope alone decides the answer.
 */
export const CALL_CODES = new Set(['unauthorized', 'invalid_arguments', 'rate_limited', 'unknown_tool', 'service_unavailable', 'internal', 'not_implemented']);

/** The agent calls in a loop to notice changes (a 429 it caused that way is better answered with a webhook). */
const POLLING = /\bpoll\w*|\bevery \d+ ?(?:s\b|secs?\b|seconds?\b|ms\b)|\bevery (?:second|few seconds)\b|\bin a (?:tight )?loop\b/;

const CODES = new Set(errorGuides().map((e) => e.code as string));

/** A JSON string's contents after `"key":` (quotes optional on the key, either quote on the value). */
function stringField(text: string, key: string): string | null {
  const m = new RegExp(`["']?\\b${key}\\b["']?\\s*:\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|'((?:[^'\\\\]|\\\\.)*)')`).exec(text);
  if (!m) return null;
  if (m[2] !== undefined) return m[2];
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return m[1];
  }
}

/** The balanced {…} that starts at `from` (inside strings braces do not count), or null. */
function balancedObject(text: string, from: number): string | null {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"') quote = c;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(from, i + 1);
  }
  return null;
}

/** The object after `"details":`, parsed (a pasted envelope is JSON; a loose one may still parse with its keys quoted). */
function detailsOf(text: string): Record<string, unknown> | null {
  const m = /["']?\bdetails\b["']?\s*:\s*\{/.exec(text);
  if (!m) return null;
  const raw = balancedObject(text, m.index + m[0].length - 1);
  if (!raw) return null;
  for (const candidate of [raw, raw.replace(/([{,]\s*)([A-Za-z_]\w*)\s*:/g, '$1"$2":').replace(/'/g, '"')]) {
    try {
      const v = JSON.parse(candidate) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // not JSON: try the next reading
    }
  }
  return null;
}

/** The error envelope pasted in a text, or null when none is (a code named in prose is not an envelope). */
export function pastedError(text: string): PastedError | null {
  const code = stringField(text, 'code');
  if (!code || !CODES.has(code)) return null;
  // The tool the text names first is the one that was called ("request_cashout … 401 … I copied it from register").
  const named = TOOL_NAMES.filter((t) => t !== 'ask_help')
    .map((t) => ({ t, at: text.search(new RegExp(`\\b${t}\\b`)) }))
    .filter((x) => x.at >= 0)
    .sort((a, b) => a.at - b.at);
  const tool = named[0]?.t ?? null;
  return {
    code,
    message: stringField(text, 'message'),
    hint: stringField(text, 'hint'),
    details: detailsOf(text),
    requestId: /\breq_[A-Za-z0-9]+/.exec(text)?.[0] ?? null,
    tool,
  };
}

// ---------------------------------------------------------------------------------------------
// What a field accepts, from the tool catalogue's own schema.

/** A field's rule in words ("a whole number (integer) from 1 to 5"), from the tool's input schema. */
export function fieldRule(toolName: string | null, field: string): string | null {
  const tool = toolName ? getTool(toolName) : undefined;
  if (!tool) return null;
  const prop: JsonSchema | undefined = toolInputSchema(tool).properties[field];
  if (!prop) return null;
  const kind = Array.isArray(prop.enum)
    ? `one of ${prop.enum.join(', ')}`
    : prop.type === 'integer'
      ? 'a whole number (an integer, no decimals)'
      : prop.type === 'number'
        ? 'a number'
        : prop.type === 'string'
          ? 'a string'
          : prop.type === 'object'
            ? `an object${prop.properties ? ` with ${Object.keys(prop.properties).join(', ')}` : ''}`
            : String(prop.type ?? 'a value');
  const bounds =
    prop.minimum !== undefined && prop.maximum !== undefined
      ? ` from ${prop.minimum} to ${prop.maximum}`
      : prop.minimum !== undefined
        ? ` of at least ${prop.minimum}`
        : prop.maximum !== undefined
          ? ` of at most ${prop.maximum}`
          : prop.minLength !== undefined
            ? ` of ${prop.minLength}–${prop.maxLength ?? '…'} characters`
            : prop.maxLength !== undefined
              ? ` of up to ${prop.maxLength} characters`
              : '';
  return `${kind}${bounds}`;
}

/** What a validator's message asks for, in plain words. */
function fixOf(message: string): string | null {
  const m = message.toLowerCase();
  if (/\binteger\b|\bwhole number\b/.test(m)) return 'a whole number: no decimals (4 or 5, not 4.5)';
  const least = /\b(?:at least|minimum(?: is| of)?|>=|not be (?:less|smaller) than|greater than or equal to)\s*(\d+)/.exec(m);
  if (least) return `${least[1]} or more`;
  const most = /\b(?:at most|maximum(?: is| of)?|<=|not be (?:greater|larger|more) than|less than or equal to)\s*(\d+)/.exec(m);
  if (most) return `${most[1]} or less`;
  if (/\brequired\b|\bmissing\b|\bmust not be empty\b/.test(m)) return 'it is required: send it';
  if (/\bnot allowed\b|\bunknown (?:field|argument|property)\b|\bforbidden\b|\bstrict\b/.test(m)) return 'the tool takes no argument of that name: remove it';
  if (/\bstring\b/.test(m)) return 'a string';
  if (/\bnumber\b/.test(m)) return 'a number';
  return null;
}

/** The field errors of an invalid_arguments envelope: details.errors[], else the fields its message names. */
function fieldErrors(e: PastedError): Array<{ field: string; message: string }> {
  const list = Array.isArray(e.details?.errors) ? (e.details!.errors as unknown[]) : [];
  const out = list
    .map((x) => (x && typeof x === 'object' ? (x as Record<string, unknown>) : null))
    .filter((x): x is Record<string, unknown> => !!x && typeof (x.field ?? x.path) === 'string')
    .map((x) => ({ field: String(x.field ?? x.path), message: String(x.message ?? x.type ?? '') }));
  if (out.length || !e.message) return out;
  const named = /['"`](\w+)['"`] field|\bfield ['"`]?(\w+)['"`]?/.exec(e.message);
  return named ? [{ field: named[1] ?? named[2], message: e.message }] : [];
}

/** The ids the question names, put into a tool's example arguments. */
function withIds(tool: string, question: string, extra: Record<string, unknown> = {}): NextStep {
  const args: Record<string, unknown> = { ...exampleArguments(tool) };
  const pid = /\bpur_[A-Za-z0-9]+/.exec(question)?.[0];
  const lid = /\blst_[A-Za-z0-9]+/.exec(question)?.[0];
  if (pid && 'purchaseId' in args) args.purchaseId = pid;
  if (lid && 'listingId' in args) args.listingId = lid;
  return { tool, arguments: { ...args, ...extra } };
}

/** The scalar details, as the envelope says them ("priceGas 350, remainingGas 40"). */
function scalarDetails(details: Record<string, unknown> | null): string {
  if (!details) return '';
  return Object.entries(details)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean')
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');
}

/** A number in the details under one of these names, else in the message after one of these words. */
function figure(e: PastedError, keys: string[], words: RegExp | null): number | null {
  for (const k of keys) {
    const v = e.details?.[k];
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  }
  const m = words && e.message ? words.exec(e.message) : null;
  const n = m?.slice(1).find((x) => x !== undefined);
  return n !== undefined ? Number(n) : null;
}

/** Who may call a purchase tool, from escrow's purchase machine. */
function sidesOf(tool: string): Set<string> {
  return new Set(TRANSITIONS.filter((t) => t.tool === tool).flatMap((t) => t.who.filter((w) => w === 'buyer' || w === 'seller')));
}

/**
 * The answer an envelope gives by itself: its facts worked out and the call that follows, or null when
 * it carries nothing beyond its code (then the code's guide and the situation answer).
 */
export function envelopeAnswer(e: PastedError, question: string, stated: 'buyer' | 'seller' | 'both' | 'unknown'): EnvelopeAnswer | null {
  const q = question.toLowerCase();
  const guide = errorGuide(e.code);
  const said = e.message ? `The error says: "${e.message.replace(/\.\s*$/, '')}"${scalarDetails(e.details) ? ` (details: ${scalarDetails(e.details)})` : ''}.` : '';
  const tool = e.tool;
  switch (e.code) {
    case 'invalid_arguments': {
      const errors = fieldErrors(e);
      if (!errors.length) return null;
      const lines = errors.map(({ field, message }) => {
        const rule = fieldRule(tool, field);
        const fix = fixOf(message);
        return `- ${field}: ${message}${fix ? ` → send ${fix}` : ''}${rule ? `; ${tool} takes ${field} as ${rule}` : ''}.`;
      });
      const fixed: Record<string, unknown> = {};
      for (const { field } of errors) {
        const example = tool ? exampleArguments(tool)[field] : undefined;
        if (example !== undefined) fixed[field] = example;
      }
      return {
        lead:
          `Nothing happened: the call was refused for its arguments (400 invalid_arguments), before anything was changed. ${errors.length === 1 ? 'The field that failed' : 'The fields that failed'}, from error.details.errors:\n${lines.join('\n')}\n` +
          `Fix ${errors.length === 1 ? 'it' : 'them'} and call ${tool ?? 'the tool'} again${tool && getTool(tool)?.mutating ? ' (a new Idempotency-Key: the refused call did nothing)' : ''}.`,
        nextStep: tool ? withIds(tool, question, fixed) : null,
      };
    }
    case 'invalid_state': {
      // The price guard: the listing costs more now than the maxPriceGas sent.
      const price = figure(e, ['priceGas', 'currentPriceGas', 'price'], /\bcosts?\s*(\d{1,9})\s*gas\b|\bprice(?:Gas)?(?: is| of| now)?\s*(\d{1,9})/i);
      const max = figure(e, ['maxPriceGas'], /\bmaxPriceGas(?: of)?\s*(\d{1,9})/i) ?? (/\bmaxpricegas\W{0,3}(\d{1,9})/.exec(q) ? Number(/\bmaxpricegas\W{0,3}(\d{1,9})/.exec(q)![1]) : null);
      if (price !== null && (max !== null || /\bmaxpricegas\b/i.test(`${e.message ?? ''} ${q}`))) {
        return {
          lead:
            `${said} The listing now costs ${price} gas${max !== null ? `, above the maxPriceGas ${max} you sent` : ''}: the seller raised its price after you saw it, so purchase_service refused and nothing was held — none of your gas was taken. ` +
            `If ${price} gas is still acceptable, call purchase_service again with maxPriceGas ${price} and a new Idempotency-Key (the refused call did nothing); if not, search_services for another listing.`,
          nextStep: withIds('purchase_service', question, { maxPriceGas: price }),
        };
      }
      // A cash-out above what is withdrawable: the figures, and the minimum.
      if (tool === 'request_cashout' || tool === 'cash_out') {
        const withdrawable = figure(e, ['withdrawableGas', 'availableGas'], /\bwithdrawable(?:Gas)?(?: of| is)?\s*(\d{1,9})/i);
        if (withdrawable !== null) {
          return {
            lead:
              `${said} Your withdrawableGas is ${withdrawable} gas: only that much can be cashed out (sale earnings only), and at least ${MIN_CASHOUT_GAS} gas per cash-out` +
              (withdrawable < MIN_CASHOUT_GAS ? ` — so ${withdrawable} gas cannot be cashed out yet; it grows as your sales complete.` : `: request_cashout {"amountGas": ${withdrawable}} takes all of it.`),
            nextStep: withdrawable >= MIN_CASHOUT_GAS ? { tool: 'request_cashout', arguments: { amountGas: withdrawable } } : { tool: 'wallet', arguments: {} },
          };
        }
      }
      return said ? { lead: `${said} Nothing was changed by the refused call.`, nextStep: null } : null;
    }
    case 'forbidden': {
      // A purchase tool of the other side ("only the seller can deliver"): what this side does instead.
      const sides = tool ? sidesOf(tool) : new Set<string>();
      const mine = stated === 'buyer' || stated === 'seller' ? stated : null;
      if (tool && mine && sides.size === 1 && !sides.has(mine)) {
        const other = [...sides][0];
        const hands = /\b(?:give|send|hand|pass|share|provide|upload|attach|get)\b[^.?!]{0,40}\b(?:files?|inputs?|data|details|samples?|info\w*|access|them|it|to (?:the )?(?:seller|buyer))\b/.test(q);
        return {
          lead:
            `${said} ${tool} is the ${other}'s call; as the ${mine} of the purchase you cannot make it, and nothing happened. ` +
            (hands || mine === 'buyer'
              ? `To give the ${other} files, inputs or anything else they need, use send_message {"purchaseId", "body"} (a link to the files, and their checksum): only the two parties see it, and the ${other} reads it with list_messages.`
              : `get_purchase shows the purchase and what it waits for; send_message reaches the ${other}.`),
          nextStep: hands || mine === 'buyer' ? withIds('send_message', question, { body: `For the ${other}: the files you asked for: <link>, sha256 <…>.` }) : withIds('get_purchase', question),
        };
      }
      return null;
    }
    case 'unauthorized':
      return {
        lead:
          `${said} A 401 unauthorized means the server did not read a valid key from the Authorization header: the key goes in the header "Authorization: Bearer rk_live_…" on every call (POST /api/agent and MCP alike), not in the JSON body, not in X-Api-Key or another header, and with "Bearer " before it. ` +
          'A key you copied from register is fine: send it that way and call again (whoami checks it). Only a lost key needs a new registration.',
        nextStep: { tool: 'whoami', arguments: {} },
      };
    case 'rate_limited': {
      const wait = figure(e, ['retryAfterSeconds', 'retryAfter'], /\b(\d{1,5})\s*(?:s\b|sec\w*)/i) ?? (/\bretry-after\W{0,3}(\d{1,5})\b/i.exec(question) ? Number(/\bretry-after\W{0,3}(\d{1,5})\b/i.exec(question)![1]) : null);
      return {
        lead:
          `${said} You are over the per-minute call limit of your key: ${wait !== null ? `wait ${wait} seconds (details.retryAfterSeconds, also the Retry-After header)` : 'wait the seconds of the Retry-After header'}, then retry the same call; nothing was done by the refused one. ` +
          'Space your calls out (back off a little more after each 429, and cache what does not change) instead of retrying at once.' +
          (POLLING.test(q) ? ` To notice new orders, deliveries and payments at once without polling, register a webhook: set_webhook ${JSON.stringify(exampleArguments('set_webhook'))} — each event is POSTed to you, and a slow poll every few minutes is enough as a fallback.` : ''),
        nextStep: tool ? withIds(tool, question) : null,
      };
    }
    default:
      return said && guide ? { lead: said, nextStep: null } : null;
  }
}
