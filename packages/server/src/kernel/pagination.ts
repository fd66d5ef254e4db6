import { invalid } from "./errors.js";

/** Values of a list's sort columns for one item: one for name-ordered lists, two for (createdAt, id). */
export type SortKey = readonly string[];

export type PageQuery =
  | { readonly limit: number; readonly direction: "first" }
  | { readonly limit: number; readonly direction: "after" | "before"; readonly key: SortKey };

export interface Pagination {
  readonly before: string | null;
  readonly after: string | null;
}

export interface Page<T> {
  readonly data: T[];
  readonly pagination: Pagination;
}

export const DEFAULT_PAGE_SIZE = 20;

/** Cursors are base64url JSON of the sort key: opaque to clients, cheap to check on the way in. */
export function encodeCursor(key: SortKey): string {
  return Buffer.from(JSON.stringify(key), "utf8").toString("base64url");
}

function decodeCursor(cursor: string, keyLength: number, parameter: string): SortKey {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = undefined;
  }
  // Sort keys never hold NUL (no stored value can), so a cursor with one was not issued here.
  const valid = (v: unknown) => typeof v === "string" && !v.includes("\u0000");
  if (!Array.isArray(key) || key.length !== keyLength || !key.every(valid)) {
    throw invalid(`The ${parameter} cursor is not one this service issued.`, [
      { path: `/query/${parameter}`, message: "must be a cursor from a previous page's pagination" },
    ]);
  }
  return key as string[];
}

/** Turns `limit`, `before` and `after` into a page query; a cursor that does not decode is a 400. */
export function toPageQuery(query: { limit?: number; before?: string; after?: string }, keyLength: number): PageQuery {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (query.before !== undefined && query.after !== undefined) {
    throw invalid("Give either before or after, not both.", [
      { path: "/query/before", message: "must not be given together with after" },
    ]);
  }
  if (query.after !== undefined)
    return { limit, direction: "after", key: decodeCursor(query.after, keyLength, "after") };
  if (query.before !== undefined) {
    return { limit, direction: "before", key: decodeCursor(query.before, keyLength, "before") };
  }
  return { limit, direction: "first" };
}

/**
 * Builds a page from rows fetched with `limit + 1` in the query's direction (ascending for first/after,
 * descending for before). `hasBeyond` answers whether any item lies strictly before or after a key,
 * so that `before` is null exactly on the first page and `after` exactly on the last.
 */
export async function assemblePage<T>(
  query: PageQuery,
  rows: T[],
  keyOf: (item: T) => SortKey,
  hasBeyond: (side: "before" | "after", key: SortKey) => Promise<boolean> | boolean,
): Promise<Page<T>> {
  const more = rows.length > query.limit;
  const data = rows.slice(0, query.limit);
  if (query.direction === "before") data.reverse();
  const first = data[0];
  const last = data[data.length - 1];
  if (first === undefined || last === undefined) return { data, pagination: { before: null, after: null } };
  let before: string | null;
  let after: string | null;
  if (query.direction === "before") {
    before = more ? encodeCursor(keyOf(first)) : null;
    after = (await hasBeyond("after", keyOf(last))) ? encodeCursor(keyOf(last)) : null;
  } else {
    after = more ? encodeCursor(keyOf(last)) : null;
    before =
      query.direction === "after" && (await hasBeyond("before", keyOf(first))) ? encodeCursor(keyOf(first)) : null;
  }
  return { data, pagination: { before, after } };
}
