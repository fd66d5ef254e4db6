import type { ExpressionBuilder, SelectQueryBuilder } from "kysely";
import type { PageQuery, SortKey } from "../pagination.js";

// Kysely cannot type a helper generic over "any query with these columns", so the column references
// are untyped here; the repositories that call it pass literal column names of their own tables.
type AnyQuery = SelectQueryBuilder<any, any, any>;

/** Rows whose sort key lies strictly past `key` in the direction of `op`, over one or two columns. */
function pastKey(eb: ExpressionBuilder<any, any>, columns: readonly string[], key: SortKey, op: ">" | "<") {
  const [c1, c2] = columns as [string, string | undefined];
  const [k1, k2] = key as [string, string | undefined];
  if (c2 === undefined || k2 === undefined) return eb(eb.ref(c1), op, k1);
  return eb.or([eb(eb.ref(c1), op, k1), eb.and([eb(eb.ref(c1), "=", k1), eb(eb.ref(c2), op, k2)])]);
}

/** Applies keyset pagination: the bound, the order, and `limit + 1` rows so the caller can tell "more". */
export function keysetPage<Q extends AnyQuery>(query: Q, columns: readonly string[], page: PageQuery): Q {
  const descending = page.direction === "before";
  let q = query as AnyQuery;
  if (page.direction !== "first") {
    const key = page.key;
    q = q.where((eb) => pastKey(eb, columns, key, descending ? "<" : ">"));
  }
  for (const column of columns) q = q.orderBy(column, descending ? "desc" : "asc");
  return q.limit(page.limit + 1) as Q;
}

/** Restricts a query to items strictly before or after a key (for `assemblePage`'s `hasBeyond`). */
export function beyondKey<Q extends AnyQuery>(
  query: Q,
  columns: readonly string[],
  side: "before" | "after",
  key: SortKey,
): Q {
  return (query as AnyQuery).where((eb) => pastKey(eb, columns, key, side === "before" ? "<" : ">")).limit(1) as Q;
}
