/**
 * Checks every tool call's arguments before the schema does, for what no per-field rule catches:
 * text PostgreSQL cannot store (NUL, lone UTF-16 surrogates), nesting deep enough to exhaust a
 * recursive parser, and argument names the tool does not have (refused with a did-you-mean).
 */

/** Objects/arrays nested deeper than this are refused (delivery, requirements, deliverableSchema, context). */
export const MAX_NESTING_DEPTH = 32;

export interface ArgumentProblem {
  field: string;
  message: string;
  hint: string;
  type: 'nulCharacter' | 'loneSurrogate' | 'tooDeep' | 'unsafeNumber';
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(text: string, field: string, what: 'value' | 'key'): ArgumentProblem | null {
  const of = what === 'key' ? `A key in ${field}` : field;
  if (text.includes('\u0000')) {
    return { field, type: 'nulCharacter', message: `${of} contains a NUL character (\\u0000).`, hint: `Remove the NUL (\\u0000) characters from ${field}: send plain Unicode text.` };
  }
  if (LONE_SURROGATE.test(text)) {
    return {
      field,
      type: 'loneSurrogate',
      message: `${of} contains a lone UTF-16 surrogate (not valid Unicode).`,
      hint: `Send ${field} as well-formed UTF-8 text: every \\uD800–\\uDFFF escape must be part of a surrogate pair.`,
    };
  }
  return null;
}

/** The first problem in a value (depth-first), or null. `depth` counts the containers above `value`. */
export function findArgumentProblem(value: unknown, field: string, depth = 0): ArgumentProblem | null {
  if (typeof value === 'string') return textProblem(value, field, 'value');
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { field, type: 'unsafeNumber', message: `${field} is not a finite number.`, hint: `Send ${field} as a finite JSON number.` };
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_NESTING_DEPTH) {
    return {
      field,
      type: 'tooDeep',
      message: `${field} is nested more than ${MAX_NESTING_DEPTH} levels deep.`,
      hint: `Flatten ${field.split(/[.[]/)[0]}: at most ${MAX_NESTING_DEPTH} levels of nested objects and arrays.`,
    };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = findArgumentProblem(value[i], `${field}[${i}]`, depth + 1);
      if (p) return p;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const keyProblem = textProblem(k, field, 'key');
    if (keyProblem) return keyProblem;
    const p = findArgumentProblem(v, `${field}.${k}`, depth + 1);
    if (p) return p;
  }
  return null;
}

/** Problems in a tool's top-level arguments (field names without a prefix). */
export function findArgumentsProblem(args: Record<string, unknown>): ArgumentProblem | null {
  for (const [k, v] of Object.entries(args)) {
    const keyProblem = textProblem(k, 'arguments', 'key');
    if (keyProblem) return keyProblem;
    const p = findArgumentProblem(v, k, 0);
    if (p) return p;
  }
  return null;
}

/** Names people and agents use for our arguments (a Map: "constructor" or "__proto__" are not synonyms). */
const SYNONYMS = new Map<string, string>(Object.entries({
  query: 'q',
  search: 'q',
  text: 'q',
  keywords: 'q',
  maxprice: 'maxPriceGas',
  minprice: 'minPriceGas',
  price: 'priceGas',
  amount: 'amountGas',
  name: 'displayName',
  listing: 'listingId',
  id: 'listingId',
  purchase: 'purchaseId',
  pack: 'packId',
  message: 'body',
  text_body: 'body',
  address: 'btcAddress',
  referrer: 'referredBy',
  page: 'cursor',
}));

function levenshtein(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return 99;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** The known argument an unknown name most likely meant, or null. */
export function suggestArgument(unknown: string, known: readonly string[]): string | null {
  if (known.length === 0) return null;
  const u = unknown.toLowerCase().replace(/[-_\s]/g, '');
  const norm = (k: string) => k.toLowerCase();
  const synonym = SYNONYMS.get(u) ?? SYNONYMS.get(unknown);
  if (synonym) {
    const hit = known.find((k) => k === synonym) ?? (synonym.endsWith('Id') ? known.find((k) => k.endsWith('Id')) : undefined);
    if (hit) return hit;
  }
  for (const k of known) if (norm(k) === u || norm(k) === `${u}gas` || norm(k) === `${u}id`) return k;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = levenshtein(u, norm(k));
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  if (best && bestDistance <= Math.max(1, Math.floor(best.length / 3))) return best;
  const prefix = known.find((k) => u.startsWith(norm(k)) || norm(k).startsWith(u));
  return prefix ?? null;
}
