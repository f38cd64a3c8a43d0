/** Small text helpers shared by the quality gate and moderation (pure functions). */

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
