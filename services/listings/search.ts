/**
 * Search: PostgreSQL full-text search ranked by text relevance, quality score and seller reputation,
 * with opaque keyset cursors (sort key + id) so pages never overlap or skip.
 *
 *   reputation r ∈ [0,1] = 0.6 · bayesianRating/5 + 0.4 · min(1, ln(1+sales)/ln(51)), at least 0.75 for seed sellers
 *                          (bayesianRating = (ratingSum + 3·2) / (ratingCount + 2): two phantom 3-star ratings)
 *   with a query:          score = textRank · (0.55 + 0.30 · quality/100 + 0.15 · r)
 *                          textRank = ts_rank(tsv, query, 32) ∈ [0,1) (title weight A = 1.0, description weight B = 0.4;
 *                          the words of q are OR-ed, so matching more of them ranks higher)
 *   without a query:       score = 0.65 · quality/100 + 0.35 · r
 * The score is compared as round(score · 1e9) (a bigint), so a cursor repeats it exactly.
 */
import { createHash } from 'node:crypto';
import { InvalidArgumentsError } from '../../packages/errors';

export type SearchSort = 'relevance' | 'quality' | 'price_asc' | 'price_desc' | 'newest';

export interface SearchParams {
  q?: string;
  category?: string;
  minPriceGas?: number;
  maxPriceGas?: number;
  sellerId?: string;
  /** Only sellers with at least this many sales an evaluator accepted (issue #35). */
  minEvaluatedSales?: number;
  sort?: SearchSort;
  limit?: number;
  cursor?: string;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 50;

export const REPUTATION_SQL = `(CASE WHEN COALESCE(s.is_seed, false) THEN GREATEST(0.75, __BASE__) ELSE __BASE__ END)`.replace(
  /__BASE__/g,
  `(0.6 * ((COALESCE(s.rating_sum, 0) + 6.0) / (COALESCE(s.rating_count, 0) + 2) / 5.0)
    + 0.4 * LEAST(1.0, ln(1 + COALESCE(s.sales_count, 0)) / ln(51.0)))`,
);

interface CursorData {
  v: 1;
  s: SearchSort;
  k: string;
  i: string;
  f: string;
}

function filtersFingerprint(p: SearchParams, hasText: boolean): string {
  const key = JSON.stringify([hasText ? p.q : null, p.category ?? null, p.minPriceGas ?? null, p.maxPriceGas ?? null, p.sellerId ?? null, p.minEvaluatedSales ?? null]);
  return createHash('sha256').update(key).digest('base64url').slice(0, 12);
}

export function encodeCursor(c: Omit<CursorData, 'v'>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...c })).toString('base64url');
}

function decodeCursor(cursor: string): CursorData {
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorData;
    if (c.v !== 1 || typeof c.k !== 'string' || !/^-?\d+$/.test(c.k) || typeof c.i !== 'string' || typeof c.s !== 'string') throw new Error('bad');
    return c;
  } catch {
    throw new InvalidArgumentsError('The cursor is not one this search returned.', {
      hint: 'Pass nextCursor from the previous page unchanged, with the same q, filters and sort; or leave cursor out to start again.',
      details: { field: 'cursor' },
    });
  }
}

const ORDER: Record<SearchSort, { expr: string; dir: 'ASC' | 'DESC' }> = {
  relevance: { expr: '__RANK__', dir: 'DESC' },
  quality: { expr: 'l.quality_score', dir: 'DESC' },
  price_asc: { expr: 'l.price_gas', dir: 'ASC' },
  price_desc: { expr: 'l.price_gas', dir: 'DESC' },
  newest: { expr: 'l.seq', dir: 'DESC' },
};

export const LISTING_COLUMNS = `l.id, l.seller_id, l.title, l.description, l.price_gas, l.category, l.status, l.delivery_days,
  l.deliverable_schema, l.quality_score, l.quality_signals, l.removed_reason, l.created_at, l.updated_at,
  s.display_name, s.is_seed, s.registered_at, s.sales_count, s.rating_sum, s.rating_count, s.evaluated_sales_count`;

export interface BuiltSearch {
  sql: string;
  params: unknown[];
  limit: number;
  sort: SearchSort;
  /** Makes the next cursor from the last row of the page. */
  cursorFor(row: { sort_key: string; id: string }): string;
}

/**
 * The query people type, as a tsquery string: websearch syntax ("quoted phrases", -exclusions, or),
 * with "." and "/" read as spaces like the indexed text. Plain words are OR-ed, so a long query
 * still finds listings that match most of it; the rank rewards listings matching more of the words.
 * Returns null when the query has no searchable words (only stopwords).
 */
export const TSQUERY_SQL = `SELECT websearch_to_tsquery('english', translate($1, './', '  '))::text AS t`;

/** At most this many terms (words, phrases, exclusions) of a query reach PostgreSQL. */
export const MAX_QUERY_TERMS = 24;
const QUERY_TOKEN = /(-*)"([^"]*)"?|(\S+)/g;

/**
 * What a person typed → a websearch string PostgreSQL always parses: words, "phrases", one leading
 * "-" per exclusion and "or" between terms. Runs of operators ("--------x", which nest NOTs until
 * PostgreSQL's "tsquery stack too small"), stray quotes and tsquery syntax characters are dropped, and
 * only the first MAX_QUERY_TERMS terms count. Returns "" when nothing searchable is left.
 */
export function websearchText(q: string): string {
  const terms: string[] = [];
  const clean = (text: string) => text.replace(/[\p{Cc}"!&|():*<>\\]+/gu, ' ').replace(/-{2,}/g, '-').trim();
  for (const m of q.matchAll(QUERY_TOKEN)) {
    if (terms.length >= MAX_QUERY_TERMS) break;
    if (m[2] !== undefined) {
      const phrase = clean(m[2]).split(/\s+/).filter(Boolean).slice(0, MAX_QUERY_TERMS).join(' ');
      if (phrase) terms.push(`${m[1] ? '-' : ''}"${phrase}"`);
      continue;
    }
    const raw = m[3];
    const negated = raw.startsWith('-');
    const words = clean(raw.replace(/^-+/, '')).split(/\s+/).map((w) => w.replace(/^-+|-+$/g, '')).filter(Boolean);
    words.forEach((word, i) => {
      if (terms.length >= MAX_QUERY_TERMS) return;
      if (word.toLowerCase() === 'or') {
        if (terms.length > 0 && terms[terms.length - 1] !== 'or') terms.push('or');
        return;
      }
      terms.push(`${negated && i === 0 ? '-' : ''}${word}`);
    });
  }
  while (terms[terms.length - 1] === 'or') terms.pop();
  return terms.join(' ');
}

export function orQuery(websearchTsquery: string): string | null {
  const t = websearchTsquery.trim();
  if (!t) return null;
  // With exclusions (!) the user's AND/NOT structure is kept as written.
  return t.includes('!') ? t : t.replace(/ & /g, ' | ');
}

/**
 * websearch text → OR-ed tsquery, remembered per process: the conversion depends only on the text and
 * the 'english' configuration, so a repeated query skips its round trip. Bounded; the oldest entry goes first.
 */
const TSQUERY_CACHE_MAX = 2_000;
const tsqueryCache = new Map<string, string | null>();

export async function tsqueryFor(db: { query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }> }, text: string): Promise<string | null> {
  const hit = tsqueryCache.get(text);
  if (hit !== undefined) return hit;
  const r = await db.query<{ t: string }>(TSQUERY_SQL, [text]);
  const t = orQuery(r.rows[0]?.t ?? '');
  if (tsqueryCache.size >= TSQUERY_CACHE_MAX) tsqueryCache.delete(tsqueryCache.keys().next().value as string);
  tsqueryCache.set(text, t);
  return t;
}

/** Builds the SQL of one page. `tsquery` is null when q is absent or has no searchable words. */
export function buildSearch(p: SearchParams, tsquery: string | null): BuiltSearch {
  const hasText = tsquery !== null;
  const params: unknown[] = [];
  const arg = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = [`l.status = 'active'`];
  let rank: string;
  if (tsquery) {
    const q = arg(tsquery);
    where.push(`l.tsv @@ ${q}::tsquery`);
    rank = `(ts_rank(l.tsv, ${q}::tsquery, 32)::float8 * (0.55 + 0.30 * l.quality_score / 100.0 + 0.15 * ${REPUTATION_SQL}))`;
  } else {
    rank = `(0.65 * l.quality_score / 100.0 + 0.35 * ${REPUTATION_SQL})`;
  }
  if (p.category) where.push(`l.category = ${arg(p.category)}`);
  if (p.minPriceGas !== undefined) where.push(`l.price_gas >= ${arg(p.minPriceGas)}`);
  if (p.maxPriceGas !== undefined) where.push(`l.price_gas <= ${arg(p.maxPriceGas)}`);
  if (p.sellerId) where.push(`l.seller_id = ${arg(p.sellerId)}`);
  if (p.minEvaluatedSales) where.push(`COALESCE(s.evaluated_sales_count, 0) >= ${arg(p.minEvaluatedSales)}`);

  const sort: SearchSort = p.sort ?? 'relevance';
  const order = ORDER[sort];
  const keyExpr = order.expr === '__RANK__' ? `round(${rank} * 1e9)::bigint` : `(${order.expr})::bigint`;
  const fingerprint = filtersFingerprint(p, hasText);

  let after = '';
  if (p.cursor) {
    const c = decodeCursor(p.cursor);
    if (c.s !== sort || c.f !== fingerprint) {
      throw new InvalidArgumentsError('This cursor belongs to a search with other q, filters or sort.', {
        hint: 'Repeat the exact q, filters and sort of the search that returned the cursor, or leave cursor out to start again.',
        details: { field: 'cursor' },
      });
    }
    const k = arg(c.k);
    const i = arg(c.i);
    after = `WHERE (x.sort_key ${order.dir === 'DESC' ? '<' : '>'} ${k}::bigint OR (x.sort_key = ${k}::bigint AND x.id > ${i}))`;
  }
  const limit = Math.min(Math.max(p.limit ?? DEFAULT_LIMIT, 1), MAX_LIMIT);
  const sql = `
    SELECT * FROM (
      SELECT ${LISTING_COLUMNS}, ${keyExpr} AS sort_key
        FROM listings.listings l LEFT JOIN listings.sellers s ON s.id = l.seller_id
       WHERE ${where.join(' AND ')}
    ) x
    ${after}
    ORDER BY x.sort_key ${order.dir}, x.id ASC
    LIMIT ${arg(limit + 1)}`;
  return {
    sql,
    params,
    limit,
    sort,
    cursorFor: (row) => encodeCursor({ s: sort, k: String(row.sort_key), i: row.id, f: fingerprint }),
  };
}

/**
 * A small cache of search result rows, keyed by the built SQL and its parameters (the normalised query,
 * filters, sort, limit and cursor). This service empties it whenever it writes listings or sellers
 * (every action and channel that writes); a search that was under way across such a write does not
 * store its rows (the generation moved). Writes by another replica are not seen here, so an entry also
 * lives at most SEARCH_CACHE_TTL_MS. Rows are cached, not views: fields that depend on the clock are
 * computed per request.
 */
export const SEARCH_CACHE_TTL_MS = 1_000;
const SEARCH_CACHE_MAX = 500;

export class SearchCache<Row> {
  private entries = new Map<string, { at: number; rows: Row[] }>();
  private generation = 0;

  constructor(private readonly ttlMs = SEARCH_CACHE_TTL_MS, private readonly max = SEARCH_CACHE_MAX) {}

  key(built: BuiltSearch): string {
    return `${built.sql}\u0000${JSON.stringify(built.params)}`;
  }

  get(key: string, now = Date.now()): Row[] | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (now - e.at >= this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.rows;
  }

  /** The generation to pass to set(): taken before the query runs. */
  begin(): number {
    return this.generation;
  }

  set(key: string, rows: Row[], generation: number, now = Date.now()): void {
    if (generation !== this.generation || this.ttlMs <= 0) return;
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { at: now, rows });
  }

  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
