/**
 * The services' half of the reconciling audit: every record action (ledger.holdRecords,
 * payments.checkoutRecords, …) takes the same parameters and answers the same page shape, read in
 * the owner's primary-key order so a page is an index range scan however large the table grows.
 * The cursor is the owner's own last key: the joiner passes it back and never compares keys itself.
 */
import type { Queryable } from '../db';
import type { RecordPage, RecordQuery } from '../contracts/ledger';

export const DEFAULT_RECORD_PAGE = 500;
/** A page of 1000 compact records is ~250 kB: well under the bus's 1 MB. */
export const MAX_RECORD_PAGE = 1000;

/** fastest-validator params of every record action. */
export const RECORD_QUERY_PARAMS = {
  cursor: { type: 'string', optional: true, max: 200 },
  limit: { type: 'number', integer: true, min: 1, max: MAX_RECORD_PAGE, optional: true },
  ids: { type: 'array', items: { type: 'string', max: 255 }, max: MAX_RECORD_PAGE, optional: true },
  statuses: { type: 'array', items: { type: 'string', max: 40 }, max: 20, optional: true },
} as const;

export interface RecordSource {
  /** `SELECT … FROM … WHERE <filter>` with no ORDER BY/LIMIT; `$1` is free for the engine's parameter. */
  select: string;
  /** The key column (the table's primary key, or an indexed column for `ids`). */
  key: string;
  /** The key column that orders pages (the primary key). */
  order: string;
  /** An extra condition for pages (e.g. only the statuses asked for); `$2` is `statuses` when given. */
  pageFilter?: string;
}

/**
 * One page (`cursor`, `limit`, `statuses`) or the records of `ids`. `select` must end in a WHERE
 * clause (use `WHERE true` when it has no condition of its own).
 */
export async function recordPage<Row extends object, R>(
  db: Queryable,
  source: RecordSource,
  q: RecordQuery,
  view: (row: Row) => R,
  asOf: Date,
): Promise<RecordPage<R>> {
  if (q.ids) {
    if (q.ids.length === 0) return { items: [], nextCursor: null, asOf: asOf.toISOString() };
    const r = await db.query<Row>(`${source.select} AND ${source.key} = ANY($1::text[])`, [q.ids]);
    return { items: r.rows.map(view), nextCursor: null, asOf: asOf.toISOString() };
  }
  const limit = q.limit ?? DEFAULT_RECORD_PAGE;
  const params: unknown[] = [q.cursor ?? null];
  let filter = '';
  if (q.statuses && source.pageFilter) {
    params.push(q.statuses);
    filter = ` AND ${source.pageFilter}`;
  }
  params.push(limit + 1);
  const r = await db.query<Row>(
    `${source.select} AND ($1::text IS NULL OR ${source.order} > $1)${filter} ORDER BY ${source.order} LIMIT $${params.length}`,
    params,
  );
  const rows = r.rows.slice(0, limit);
  const more = r.rows.length > limit;
  const last = rows[rows.length - 1] as Record<string, unknown> | undefined;
  return { items: rows.map(view), nextCursor: more && last ? String(last[orderColumnName(source.order)]) : null, asOf: asOf.toISOString() };
}

/** `t.id` → `id`: the row field the order column comes back as (select it under that name). */
function orderColumnName(order: string): string {
  return order.slice(order.lastIndexOf('.') + 1);
}

export const isoOrNull = (d: Date | string | null | undefined): string | null => (d ? new Date(d).toISOString() : null);
