import { SqliteAdapter, sql } from "kysely";
import { beyondKey, type KeyColumn, keysetPage } from "../../db/keyset.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import { type Executor, FLAG_COLUMNS, flagsIn, toFlag } from "./flag-rows.js";
import type { Flag, FlagFilter, FlagSort } from "./flag.schemas.js";

// The list of a project's flags in one environment: its filter, its orders, its pages and its count.

/** `%`, `_` and `\` match themselves in a search, not as LIKE wildcards. */
const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * On SQLite, a search through the flags' trigram index (migration 010): the FTS5 table's LIKE finds the
 * substring in any case. A text of under three characters has no trigram to look up, and matches many
 * flags, which the scan finds at once in name order: it is searched by the scan. The FTS table's LIKE takes no
 * ESCAPE, and folds the case of ASCII letters only (the server's lower() folds all), so a text holding
 * `%`, `_`, `\` or a character beyond printable ASCII is searched as before, by a scan: an ASCII text
 * can only match ASCII characters, whose case both fold alike.
 */
function searchedOnSqlite(db: Executor, text: string, columns: readonly ("name" | "description")[]) {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter) || text.length < 3 || /[\\%_]|[^\x20-\x7e]/.test(text)) {
    return undefined;
  }
  const pattern = `%${text}%`;
  const where = columns.map((column) => sql`${sql.ref(`flags_search.${column}`)} like ${pattern}`);
  return sql<boolean>`flags.rowid in (select rowid from flags_search where ${sql.join(where, sql` or `)})`;
}

/** `scan`: search by reading each row (the probe below), never through the trigram index. */
function flagsQuery(db: Executor, projectId: string, environment: string, filter: FlagFilter, scan = false) {
  let query = flagsIn(db, projectId, environment);
  if (filter.name !== undefined) {
    query = query.where(
      (scan ? undefined : searchedOnSqlite(db, filter.name, ["name"])) ??
        sql<boolean>`lower(flags.name) like ${likePattern(filter.name)} escape '\\'`,
    );
  }
  if (filter.q !== undefined) {
    const pattern = likePattern(filter.q);
    query = query.where(
      (scan ? undefined : searchedOnSqlite(db, filter.q, ["name", "description"])) ??
        sql<boolean>`(lower(flags.name) like ${pattern} escape '\\' or lower(flags.description) like ${pattern} escape '\\')`,
    );
  }
  if (filter.status !== undefined) query = query.where("flag_configs.status", "=", filter.status);
  if (filter.kind !== undefined) query = query.where("flags.kind", "=", filter.kind);
  if (filter.stale !== undefined) query = query.where("flags.stale_reason", filter.stale ? "is not" : "is", null);
  query = query.where("flags.archived_at", filter.archived === true ? "is not" : "is", null);
  return query;
}

/**
 * How the list is ordered for each `sort`: its key columns, and an item's key in the same terms. Every
 * order but the name's breaks ties by name (unique in a project), so a key names one flag. A flag never
 * checked has the empty string as its time, which sorts before every timestamp.
 */
export interface FlagOrder {
  readonly columns: readonly KeyColumn[];
  keyOf(flag: Flag): SortKey;
}

const TIME_COLUMNS = {
  createdAt: "flags.created_at",
  updatedAt: "flag_configs.updated_at",
  latestCheckedAt: "flag_configs.latest_checked_at",
} as const;

export function flagOrder(sort: FlagSort): FlagOrder {
  const descending = sort.startsWith("-");
  const field = (descending ? sort.slice(1) : sort) as keyof typeof TIME_COLUMNS | "name";
  if (field === "name") return { columns: [{ ref: "flags.name", descending }], keyOf: (f) => [f.name] };
  const column = TIME_COLUMNS[field];
  const ref = field === "latestCheckedAt" ? sql<string>`coalesce(${sql.ref(column)}, '')` : column;
  return {
    columns: [{ ref, descending }, "flags.name"],
    keyOf: (f) => [f[field] ?? "", f.name],
  };
}

const BY_NAME = flagOrder("name");

/** Flags a probe reads in name order before it leaves a search to the trigram index (about half a millisecond). */
const PROBE_ROWS = 1000;

/**
 * On SQLite, a page in name order of a text the trigram index would look up: first the next PROBE_ROWS
 * flags in name order are read one by one. A text that matches many flags fills the page there (the
 * index would find them all, thousands, and sort them: 17 ms at 50,000 flags for a text a tenth of them
 * hold); the page is then the answer, since every match in those rows comes before any match beyond them.
 * Otherwise (a rare text) the index answers. Undefined where the probe does not apply.
 */
async function probedPage(
  db: Executor,
  projectId: string,
  environment: string,
  filter: FlagFilter,
  page: PageQuery,
  order: FlagOrder,
) {
  const text = filter.q ?? filter.name;
  const first = order.columns[0];
  const byName =
    order.columns.length === 1 &&
    (first === "flags.name" || (typeof first === "object" && first.ref === "flags.name" && !first.descending));
  if (!byName || page.direction === "before" || text === undefined) return undefined;
  if (searchedOnSqlite(db, text, filter.q !== undefined ? ["name", "description"] : ["name"]) === undefined) {
    return undefined;
  }
  // The last name of the window: the PROBE_ROWS-th after the page's start (none: the window is the rest).
  let names = db.selectFrom("flags").select("name").where("project_id", "=", projectId);
  if (page.direction === "after") names = names.where("name", ">", page.key[0] as string);
  const last = await names
    .orderBy("name")
    .limit(1)
    .offset(PROBE_ROWS - 1)
    .executeTakeFirst();
  let query = flagsQuery(db, projectId, environment, filter, true).select(FLAG_COLUMNS);
  if (last !== undefined) query = query.where("flags.name", "<=", last.name);
  const rows = await keysetPage(query, order.columns, page).execute();
  return rows.length > page.limit || last === undefined ? rows : undefined;
}

export async function listFlags(
  db: Executor,
  projectId: string,
  environment: string,
  filter: FlagFilter,
  page: PageQuery,
  order: FlagOrder = BY_NAME,
): Promise<Flag[]> {
  const probed = await probedPage(db, projectId, environment, filter, page, order);
  if (probed !== undefined) return probed.map(toFlag);
  const query = flagsQuery(db, projectId, environment, filter).select(FLAG_COLUMNS);
  const rows = await keysetPage(query, order.columns, page).execute();
  return rows.map(toFlag);
}

export async function flagsBeyond(
  db: Executor,
  projectId: string,
  environment: string,
  filter: FlagFilter,
  side: "before" | "after",
  key: SortKey,
  order: FlagOrder = BY_NAME,
) {
  const query = flagsQuery(db, projectId, environment, filter).select("flags.id");
  return (await beyondKey(query, order.columns, side, key).execute()).length > 0;
}

/** How many flags match the filter, whatever the page. */
export async function countFlags(
  db: Executor,
  projectId: string,
  environment: string,
  filter: FlagFilter,
): Promise<number> {
  const row = await flagsQuery(db, projectId, environment, filter)
    .select((eb) => eb.fn.countAll<number | string | bigint>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
