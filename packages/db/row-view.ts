/**
 * Rows to views: the columns a view shows, under their camelCase names, each keeping its type,
 * and timestamps as ISO strings (Moleculer's JSON serializer does not carry a Date). What a view
 * computes (a sum, a renamed or a hidden field) stays beside the call, after the spread.
 */

/** `display_name` → `displayName`, at the type level. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/** A column's value in a view: a timestamp becomes its ISO string (`Date | null` → `string | null`). */
export type ViewValue<V> = V extends Date ? string : V;

/** The view of `columns` of a row of type R. */
export type RowView<R, K extends keyof R & string> = { [P in K as CamelCase<P>]: ViewValue<R[P]> };

function camelCase(column: string): string {
  return column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The named columns of a row, in that order, as a view (see the module's comment). */
export function rowView<R extends object, K extends keyof R & string>(row: R, columns: readonly K[]): RowView<R, K> {
  const view: Record<string, unknown> = {};
  for (const column of columns) {
    const value: unknown = row[column];
    view[camelCase(column)] = value instanceof Date ? value.toISOString() : value;
  }
  return view as RowView<R, K>;
}
