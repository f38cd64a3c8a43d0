/** Small text helpers of the listing gate: the quality score and moderation read text through them (pure functions). */
import unhomoglyph from 'unhomoglyph';

export const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can do does for from has have he her his how i if in into is it its me my no not of on or our ' +
    'out over so such than that the their them then there these they this those to up us was we were what when where which who will ' +
    'with you your yours per via any all each also just only more most other some very about after before both same own too'
  ).split(' '),
);

/** Lowercase word tokens (keeps tech-ish tokens like c++, c#, node.js, 10k). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9][a-z0-9+#'.-]*/g) ?? []).map((w) => w.replace(/[.'-]+$/, ''));
}

export function contentWords(text: string): string[] {
  return words(text).filter((w) => w.length >= 3 && !STOPWORDS.has(w));
}

/** Set of word 3-shingles, for near-duplicate detection. */
export function shingles(text: string, size = 3): Set<string> {
  const w = contentWords(text);
  const out = new Set<string>();
  if (w.length < size) {
    if (w.length) out.add(w.join(' '));
    return out;
  }
  for (let i = 0; i + size <= w.length; i++) out.add(w.slice(i, i + size).join(' '));
  return out;
}

export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/** A short excerpt around a match, for evidence in a rejection. */
export function excerpt(text: string, index: number, length: number): string {
  const start = Math.max(0, index - 20);
  const end = Math.min(text.length, index + length + 20);
  return (start > 0 ? '…' : '') + text.slice(start, end).replace(/\s+/g, ' ').trim() + (end < text.length ? '…' : '');
}

// ---- Text as moderation reads it (issue 39: disguised contact details, payment links and injections) ----

const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The text a reader sees: compatibility forms folded by NFKC (full-width, mathematical, circled and
 * superscript letters become plain ones) and the invisible code points (zero-width spaces and joiners,
 * soft hyphens, variation selectors, tags: Unicode's Default_Ignorable_Code_Point) dropped, since a
 * reader never sees them but they split a word in two for a pattern. `invisibleAs: ' '` reads them as
 * word breaks instead, for "Ignore\u200Bprevious\u200Binstructions", which a model may read as words.
 */
export function visibleText(text: string, invisibleAs: '' | ' ' = ''): string {
  return text.normalize('NFKC').replace(INVISIBLE, invisibleAs);
}

const ASCII_PRINTABLE = /^[\x20-\x7e]+$/;
const isAscii = (s: string) => ASCII_PRINTABLE.test(s);

/** The ASCII characters behind each ASCII skeleton: "l" is the skeleton of l, I, 1 and |; "rn" that of m. */
const ASCII_BY_SKELETON = new Map<string, string[]>();
for (let code = 0x20; code < 0x7f; code++) {
  const c = String.fromCharCode(code);
  const skeleton = unhomoglyph(c);
  ASCII_BY_SKELETON.set(skeleton, [...(ASCII_BY_SKELETON.get(skeleton) ?? []), c]);
}

/** The ASCII a look-alike imitates, or the character itself when it imitates none. */
function asciiLookalike(c: string): string {
  const skeleton = unhomoglyph(c);
  if (skeleton === c || !isAscii(skeleton)) return c;
  const candidates = ASCII_BY_SKELETON.get(skeleton);
  if (!candidates) return skeleton;
  if (candidates.length === 1) return candidates[0];
  // Several ASCII characters share the skeleton ("l": l, I, 1, |): keep the kind of character that was written.
  const kind = /\p{Lu}/u.test(c) ? /[A-Z]/ : /\p{L}/u.test(c) ? /[a-z]/ : /\p{N}/u.test(c) ? /[0-9]/ : /[^A-Za-z0-9]/;
  return candidates.find((a) => kind.test(a)) ?? skeleton;
}

const LOOKALIKE_CACHE = new Map<string, string>();
const LOOKALIKE_CACHE_LIMIT = 10_000;

function cachedAsciiLookalike(c: string): string {
  let folded = LOOKALIKE_CACHE.get(c);
  if (folded === undefined) {
    if (LOOKALIKE_CACHE.size >= LOOKALIKE_CACHE_LIMIT) LOOKALIKE_CACHE.clear();
    folded = asciiLookalike(c);
    LOOKALIKE_CACHE.set(c, folded);
  }
  return folded;
}

/**
 * Look-alike letters from other scripts folded to the ASCII they imitate ("pаypal" with a Cyrillic а
 * reads "paypal"), from Unicode's confusables data (TR39) as unhomoglyph ships it. Two departures from
 * the TR39 skeleton, so that ASCII patterns still read the result: ASCII is left as written (the
 * skeleton turns "m" into "rn" and "1" into "l"), and a character is folded only to ASCII, so a Cyrillic
 * or Japanese word keeps every letter that does not look Latin. Linear: one look-up per code point.
 */
export function foldLookalikes(text: string): string {
  return text.replace(/[\u0080-\u{10ffff}]/gu, cachedAsciiLookalike);
}

// "at" and "dot" as written to slip an address past a filter: "(at)", "[at]", "{at}", "<at>", a spaced
// "@" or a bare " at "; "(dot)", "[dot]", "(.)" or a bare " dot ".
const AT = String.raw`\s*[([{<]\s*at\s*[)\]}>]\s*|\s*@\s*|\s+at\s+`;
const DOT = String.raw`\s*[([{<]\s*(?:dot|\.)\s*[)\]}>]\s*|\s+dot\s+|\.`;
const SPELLED_ADDRESS = new RegExp(String.raw`(?<=[\w+-])(${AT})([\w-]+(?:(?:${DOT})[\w-]+)*(?:${DOT})[a-z]{2,})\b`, 'gi');
const DOT_SPELLING = new RegExp(DOT, 'gi');
const BARE_AT = /^\s+at\s+$/i;
const SPELLED_DOT = /\bdot\b|[([{<]\s*\.\s*[)\]}>]/i;

/**
 * E-mail addresses spelled out ("name (at) domain (dot) com", "name at domain dot com") written as
 * addresses. A bare " at " counts only with a spelled-out dot, so "results at github.com" stays prose.
 */
export function unspellEmails(text: string): string {
  return text.replace(SPELLED_ADDRESS, (written, at: string, domain: string) => {
    if (BARE_AT.test(at) && !SPELLED_DOT.test(domain)) return written;
    return `@${domain.replace(DOT_SPELLING, '.')}`;
  });
}
