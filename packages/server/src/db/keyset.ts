import type { ExpressionBuilder, Expression, SelectQueryBuilder } from "kysely";
import type { PageQuery, SortKey } from "../kernel/pagination.js";

// Kysely cannot type a helper generic over "any query with these columns", so the column references
// are untyped here; the repositories that call it pass literal column names of their own tables.
type AnyQuery = SelectQueryBuilder<any, any, any>;

/**
 * One sort column: a column name (ascending), or an expression (a never-null one, e.g. a coalesce over
 * a nullable column, so that the comparison below holds) with its own direction.
 */
export type KeyColumn = string | { readonly ref: string | Expression<unknown>; readonly descending?: boolean };

const refOf = (eb: ExpressionBuilder<any, any>, column: KeyColumn) =>
  typeof column === "string" ? eb.ref(column) : typeof column.ref === "string" ? eb.ref(column.ref) : column.ref;
const isDescending = (column: KeyColumn) => typeof column !== "string" && column.descending === true;

/**
 * Rows whose sort key lies strictly past `key` in the list's order (`forward`) or against it, over one
 * or two columns, each in its own direction.
 */
function pastKey(eb: ExpressionBuilder<any, any>, columns: readonly KeyColumn[], key: SortKey, forward: boolean) {
  const op = (column: KeyColumn) => (forward !== isDescending(column) ? ">" : "<");
  const [c1, c2] = columns as [KeyColumn, KeyColumn | undefined];
  const [k1, k2] = key as [string, string | undefined];
  const r1 = refOf(eb, c1);
  if (c2 === undefined || k2 === undefined) return eb(r1, op(c1), k1);
  return eb.or([eb(r1, op(c1), k1), eb.and([eb(r1, "=", k1), eb(refOf(eb, c2), op(c2), k2)])]);
}

/** Applies keyset pagination: the bound, the order, and `limit + 1` rows so the caller can tell "more". */
export function keysetPage<Q extends AnyQuery>(query: Q, columns: readonly KeyColumn[], page: PageQuery): Q {
  const backward = page.direction === "before";
  let q = query as AnyQuery;
  if (page.direction !== "first") {
    const key = page.key;
    q = q.where((eb) => pastKey(eb, columns, key, !backward));
  }
  for (const column of columns) {
    const descending = isDescending(column) !== backward;
    const ref = typeof column === "string" ? column : column.ref;
    q =
      typeof ref === "string"
        ? q.orderBy(ref, descending ? "desc" : "asc")
        : q.orderBy(ref, descending ? "desc" : "asc");
  }
  return q.limit(page.limit + 1) as Q;
}

/** Restricts a query to items strictly before or after a key (for `assemblePage`'s `hasBeyond`). */
export function beyondKey<Q extends AnyQuery>(
  query: Q,
  columns: readonly KeyColumn[],
  side: "before" | "after",
  key: SortKey,
): Q {
  return (query as AnyQuery).where((eb) => pastKey(eb, columns, key, side === "after")).limit(1) as Q;
}
