import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import { beyondKey, type KeyColumn, keysetPage } from "../../db/keyset.js";
import { linkedNow, unlink } from "../../db/link-tables.js";
import type { Database, FlagsTable } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../pagination.js";
import type { Flag, FlagFilter, FlagSort } from "./flag.schemas.js";

type Executor = Kysely<Database> | Transaction<Database>;

export const toFlag = (row: Selectable<FlagsTable>): Flag => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  description: row.description,
  status: row.status as Flag["status"],
  percentageActors: Number(row.percentage_actors) as Flag["percentageActors"],
  percentageCalls: Number(row.percentage_calls) as Flag["percentageCalls"],
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  latestCheckedAt: row.latest_checked_at,
  statusChangedAt: row.status_changed_at,
  actorsCount: Number(row.actors_count),
  segmentsCount: Number(row.segments_count),
  revision: Number(row.revision),
});

export async function findFlag(db: Executor, projectId: string, name: string): Promise<Flag | undefined> {
  const row = await db
    .selectFrom("flags")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .executeTakeFirst();
  return row && toFlag(row);
}

export async function findFlagsByNames(db: Executor, projectId: string, names: readonly string[]): Promise<Flag[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom("flags")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("name", "in", names)
    .execute();
  return rows.map(toFlag);
}

export async function insertFlag(trx: Transaction<Database>, flag: Flag): Promise<void> {
  await trx
    .insertInto("flags")
    .values({
      id: flag.id,
      project_id: flag.projectId,
      name: flag.name,
      description: flag.description,
      status: flag.status,
      percentage_actors: flag.percentageActors,
      percentage_calls: flag.percentageCalls,
      created_at: flag.createdAt,
      updated_at: flag.updatedAt,
      latest_checked_at: flag.latestCheckedAt,
      status_changed_at: flag.statusChangedAt,
      revision: flag.revision,
      actors_count: flag.actorsCount,
      segments_count: flag.segmentsCount,
    })
    .execute();
}

export async function saveFlagFields(trx: Transaction<Database>, flag: Flag): Promise<void> {
  await trx
    .updateTable("flags")
    .set({
      description: flag.description,
      status: flag.status,
      percentage_actors: flag.percentageActors,
      percentage_calls: flag.percentageCalls,
      updated_at: flag.updatedAt,
      status_changed_at: flag.statusChangedAt,
      revision: flag.revision,
      actors_count: flag.actorsCount,
      segments_count: flag.segmentsCount,
    })
    .where("id", "=", flag.id)
    .execute();
}

export async function deleteFlag(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom("flags").where("id", "=", id).execute();
}

/** Which of these actors the flag has attached now. */
export const attachedActors = (trx: Executor, flagId: string, actorIds: readonly string[]) =>
  linkedNow(trx, "flagActors", flagId, actorIds);

export async function attachActors(
  trx: Transaction<Database>,
  flag: Pick<Flag, "id" | "projectId">,
  actorIds: readonly string[],
  at: string,
): Promise<void> {
  if (actorIds.length === 0) return;
  await trx
    .insertInto("flag_actors")
    .values(actorIds.map((actor_id) => ({ flag_id: flag.id, project_id: flag.projectId, actor_id, created_at: at })))
    .execute();
}

export const detachActors = (trx: Transaction<Database>, flagId: string, actorIds: readonly string[]) =>
  unlink(trx, "flagActors", flagId, actorIds);

/** Which of these segments the flag has attached now. */
export const attachedSegments = (trx: Executor, flagId: string, segmentIds: readonly string[]) =>
  linkedNow(trx, "flagSegments", flagId, segmentIds);

export async function attachSegments(
  trx: Transaction<Database>,
  flagId: string,
  segmentIds: readonly string[],
  at: string,
) {
  if (segmentIds.length === 0) return;
  await trx
    .insertInto("flag_segments")
    .values(segmentIds.map((segment_id) => ({ flag_id: flagId, segment_id, created_at: at })))
    .execute();
}

export const detachSegments = (trx: Transaction<Database>, flagId: string, segmentIds: readonly string[]) =>
  unlink(trx, "flagSegments", flagId, segmentIds);

/** `%`, `_` and `\` match themselves in a search, not as LIKE wildcards. */
const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function flagsQuery(db: Executor, projectId: string, filter: FlagFilter) {
  let query = db.selectFrom("flags").where("project_id", "=", projectId);
  if (filter.name !== undefined) {
    query = query.where(sql<boolean>`lower(name) like ${likePattern(filter.name)} escape '\\'`);
  }
  if (filter.q !== undefined) {
    const pattern = likePattern(filter.q);
    query = query.where(
      sql<boolean>`(lower(name) like ${pattern} escape '\\' or lower(description) like ${pattern} escape '\\')`,
    );
  }
  if (filter.status !== undefined) query = query.where("status", "=", filter.status);
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
  createdAt: "created_at",
  updatedAt: "updated_at",
  latestCheckedAt: "latest_checked_at",
} as const;

export function flagOrder(sort: FlagSort): FlagOrder {
  const descending = sort.startsWith("-");
  const field = (descending ? sort.slice(1) : sort) as keyof typeof TIME_COLUMNS | "name";
  if (field === "name") return { columns: [{ ref: "name", descending }], keyOf: (f) => [f.name] };
  const column = TIME_COLUMNS[field];
  const ref = field === "latestCheckedAt" ? sql<string>`coalesce(${sql.ref(column)}, '')` : column;
  return {
    columns: [{ ref, descending }, "name"],
    keyOf: (f) => [f[field] ?? "", f.name],
  };
}

const BY_NAME = flagOrder("name");

export async function listFlags(
  db: Executor,
  projectId: string,
  filter: FlagFilter,
  page: PageQuery,
  order: FlagOrder = BY_NAME,
): Promise<Flag[]> {
  const rows = await keysetPage(flagsQuery(db, projectId, filter).selectAll(), order.columns, page).execute();
  return rows.map(toFlag);
}

export async function flagsBeyond(
  db: Executor,
  projectId: string,
  filter: FlagFilter,
  side: "before" | "after",
  key: SortKey,
  order: FlagOrder = BY_NAME,
) {
  return (
    (await beyondKey(flagsQuery(db, projectId, filter).select("id"), order.columns, side, key).execute()).length > 0
  );
}

/** How many flags match the filter, whatever the page. */
export async function countFlags(db: Executor, projectId: string, filter: FlagFilter): Promise<number> {
  const row = await flagsQuery(db, projectId, filter)
    .select((eb) => eb.fn.countAll<number | string | bigint>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
