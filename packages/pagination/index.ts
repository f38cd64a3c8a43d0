/**
 * Newest-first keyset pages over (created_at, id): an opaque cursor that never skips or repeats a
 * row, whatever is inserted meanwhile. Callers fetch `limit + 1` rows ordered by
 * `created_at DESC, id DESC` and filter with `(created_at, id) < (cursor.at, cursor.id)`.
 */
import { InvalidArgumentsError } from '../errors';

export interface TimeCursor {
  at: string;
  id: string;
}

export function encodeTimeCursor(createdAt: Date | string, id: string): string {
  return Buffer.from(JSON.stringify([new Date(createdAt).toISOString(), id])).toString('base64url');
}

/** Decodes a cursor this module made; anything else is invalid_arguments with the caller's hint. */
export function decodeTimeCursor(cursor: string | undefined, hint: string): TimeCursor | null {
  if (!cursor) return null;
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && !Number.isNaN(Date.parse(v[0]))) {
      return { at: v[0], id: v[1] };
    }
  } catch {
    // fall through to the error below
  }
  throw new InvalidArgumentsError('cursor is not one this service returned.', { hint, details: { field: 'cursor' } });
}

/** The page out of `limit + 1` fetched rows, and the cursor of the next page (null on the last). */
export function timePage<R extends { created_at: Date | string; id: string }>(rows: R[], limit: number): { rows: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last ? encodeTimeCursor(last.created_at, last.id) : null };
}
