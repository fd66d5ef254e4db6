import { type Kysely, sql, type Transaction } from "kysely";
import { beyondKey, keysetPage } from "../../db/keyset.js";
import { linkedNow, unlink } from "../../db/link-tables.js";
import type { Selectable } from "kysely";
import type { Database, SegmentsTable } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import type { Actor } from "../actors/actor.schemas.js";
import { toActor } from "../actors/actor.repository.js";
import { type Condition, referencesOf } from "@flagstaff/core";
import { conditionsColumn, conditionsOf, rulesOf } from "../../db/targeting.js";

type Executor = Kysely<Database> | Transaction<Database>;

/** A segment without its latest actors, as stored. */
export interface SegmentRow {
  id: string;
  projectId: string;
  name: string;
  description: string;
  createdAt: string;
  nextActorSeq: number;
  /** Moves with every change; the ETag is made of it. */
  revision: number;
  actorsCount: number;
  /** Rule-based membership; empty: listed members only. */
  conditions: readonly Condition[];
}

const toRow = (row: Selectable<SegmentsTable>): SegmentRow => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  description: row.description,
  createdAt: row.created_at,
  nextActorSeq: Number(row.next_actor_seq),
  revision: Number(row.revision),
  actorsCount: Number(row.actors_count),
  conditions: conditionsOf(row.conditions),
});

export const LATEST_ACTORS = 10;

export async function findSegment(db: Executor, projectId: string, id: string): Promise<SegmentRow | undefined> {
  const row = await db
    .selectFrom("segments")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toRow(row);
}

/** Whether a segment of any project has this id (ids are unique across the service). */
export async function segmentIdTaken(db: Executor, id: string): Promise<boolean> {
  return (await db.selectFrom("segments").select("id").where("id", "=", id).executeTakeFirst()) !== undefined;
}

export async function segmentNameTaken(db: Executor, projectId: string, name: string): Promise<boolean> {
  const row = await db
    .selectFrom("segments")
    .select("id")
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .executeTakeFirst();
  return row !== undefined;
}

export async function existingSegmentIds(
  db: Executor,
  projectId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom("segments")
    .select("id")
    .where("project_id", "=", projectId)
    .where("id", "in", ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

export async function insertSegment(trx: Transaction<Database>, segment: SegmentRow): Promise<void> {
  await trx
    .insertInto("segments")
    .values({
      id: segment.id,
      project_id: segment.projectId,
      name: segment.name,
      description: segment.description,
      created_at: segment.createdAt,
      updated_at: segment.createdAt,
      next_actor_seq: segment.nextActorSeq,
      revision: segment.revision,
      actors_count: segment.actorsCount,
      conditions: conditionsColumn(segment.conditions),
    })
    .execute();
}

export async function saveSegment(trx: Transaction<Database>, segment: SegmentRow, at: string): Promise<void> {
  await trx
    .updateTable("segments")
    .set({
      name: segment.name,
      description: segment.description,
      next_actor_seq: segment.nextActorSeq,
      revision: segment.revision,
      actors_count: segment.actorsCount,
      conditions: conditionsColumn(segment.conditions),
      updated_at: at,
    })
    .where("id", "=", segment.id)
    .execute();
}

/**
 * Records on every flag configuration a segment is attached to (in any environment) that it is being
 * detached (the segment is deleted): `updatedAt` and the revision move, and one fewer segment is attached.
 */
export async function detachFromEveryFlag(trx: Transaction<Database>, segmentId: string, at: string): Promise<void> {
  await trx
    .updateTable("flag_configs")
    .set({ updated_at: at, revision: sql`revision + 1`, segments_count: sql`segments_count - 1` })
    .where("config_id", "in", (eb) =>
      eb.selectFrom("flag_segments").select("config_id").where("segment_id", "=", segmentId),
    )
    .execute();
}

/** The environments where the segment is attached to a flag's configuration, in id order. */
export async function environmentsAttached(db: Executor, segmentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("flag_segments")
    .innerJoin("flag_configs", "flag_configs.config_id", "flag_segments.config_id")
    .select("flag_configs.environment_id")
    .distinct()
    .where("flag_segments.segment_id", "=", segmentId)
    .orderBy("flag_configs.environment_id")
    .execute();
  return rows.map((row) => row.environment_id);
}

export async function deleteSegment(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom("segments").where("id", "=", id).execute();
}

/** Which of these actors are members of the segment now. */
export const currentMembers = (db: Executor, segmentId: string, actorIds: readonly string[]) =>
  linkedNow(db, "segmentMembers", segmentId, actorIds);

/** Adds members in the given order; later ones count as more recently added. */
export async function addMembers(
  trx: Transaction<Database>,
  segment: SegmentRow,
  actorIds: readonly string[],
  at: string,
): Promise<void> {
  if (actorIds.length === 0) return;
  await trx
    .insertInto("segment_actors")
    .values(
      actorIds.map((actor_id, i) => ({
        segment_id: segment.id,
        project_id: segment.projectId,
        actor_id,
        seq: segment.nextActorSeq + i,
        added_at: at,
      })),
    )
    .execute();
}

export const removeMembers = (trx: Transaction<Database>, segmentId: string, actorIds: readonly string[]) =>
  unlink(trx, "segmentMembers", segmentId, actorIds);

/** The latest actors of several segments in one query, newest first. */
export async function latestActors(db: Executor, segmentIds: readonly string[]): Promise<Map<string, Actor[]>> {
  const out = new Map<string, Actor[]>(segmentIds.map((id) => [id, []]));
  // One query per segment, each a backward scan of (segment_id, seq) that stops after LATEST_ACTORS rows:
  // a segment of a million members costs what one of ten does. (A window function over every member, as
  // before, read the whole segment.)
  for (const segmentId of new Set(segmentIds)) {
    const rows = await db
      .selectFrom("segment_actors")
      .innerJoin("actors", (join) =>
        join
          .onRef("actors.project_id", "=", "segment_actors.project_id")
          .onRef("actors.actor_id", "=", "segment_actors.actor_id"),
      )
      .select(["actors.actor_id", "actors.name", "actors.image_url", "actors.created_at"])
      .where("segment_actors.segment_id", "=", segmentId)
      .orderBy("segment_actors.seq", "desc")
      .limit(LATEST_ACTORS)
      .execute();
    out.set(segmentId, rows.map(toActor));
  }
  return out;
}

const SEGMENT_COLUMNS = [
  "segments.id",
  "segments.project_id",
  "segments.name",
  "segments.description",
  "segments.created_at",
  "segments.updated_at",
  "segments.next_actor_seq",
  "segments.revision",
  "segments.actors_count",
  "segments.conditions",
] as const;

export async function listSegments(db: Executor, projectId: string, page: PageQuery): Promise<SegmentRow[]> {
  const query = db.selectFrom("segments").select(SEGMENT_COLUMNS).where("segments.project_id", "=", projectId);
  return (await keysetPage(query, ["segments.name"], page).execute()).map((r) => toRow(r));
}

export async function segmentsBeyond(db: Executor, projectId: string, side: "before" | "after", key: SortKey) {
  const query = db.selectFrom("segments").select("segments.id").where("segments.project_id", "=", projectId);
  return (await beyondKey(query, ["segments.name"], side, key).execute()).length > 0;
}

/** The segments attached to a flag's configuration (in one environment). */
function forFlagQuery(db: Executor, configId: string) {
  return db
    .selectFrom("segments")
    .innerJoin("flag_segments", "flag_segments.segment_id", "segments.id")
    .where("flag_segments.config_id", "=", configId);
}

export async function listSegmentsForFlag(db: Executor, configId: string, page: PageQuery): Promise<SegmentRow[]> {
  const rows = await keysetPage(forFlagQuery(db, configId).select(SEGMENT_COLUMNS), ["segments.name"], page).execute();
  return rows.map((r) => toRow(r));
}

export async function segmentsForFlagBeyond(db: Executor, configId: string, side: "before" | "after", key: SortKey) {
  return (
    (await beyondKey(forFlagQuery(db, configId).select("segments.id"), ["segments.name"], side, key).execute()).length >
    0
  );
}

function forActorQuery(db: Executor, projectId: string, actorId: string) {
  return db
    .selectFrom("segments")
    .innerJoin("segment_actors", "segment_actors.segment_id", "segments.id")
    .where("segment_actors.project_id", "=", projectId)
    .where("segment_actors.actor_id", "=", actorId);
}

export async function listSegmentsForActor(db: Executor, projectId: string, actorId: string, page: PageQuery) {
  const rows = await keysetPage(
    forActorQuery(db, projectId, actorId).select(SEGMENT_COLUMNS),
    ["segments.name"],
    page,
  ).execute();
  return rows.map((r) => toRow(r));
}

export async function segmentsForActorBeyond(
  db: Executor,
  projectId: string,
  actorId: string,
  side: "before" | "after",
  key: SortKey,
) {
  const query = forActorQuery(db, projectId, actorId).select("segments.id");
  return (await beyondKey(query, ["segments.name"], side, key).execute()).length > 0;
}

/** The names of some segments of a project, by id (ids not found are left out). */
export async function segmentNames(
  db: Executor,
  projectId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom("segments")
    .select(["id", "name"])
    .where("project_id", "=", projectId)
    .where("id", "in", ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * Every configuration of the project, in every environment, whose rules name the segment (in_segment,
 * not_in_segment: core's referencesOf), by flag name and then environment.
 */
export async function rulesNamingSegment(
  db: Executor,
  projectId: string,
  segmentId: string,
): Promise<{ flag: string; environment: string }[]> {
  const rows = await db
    .selectFrom("flag_configs")
    .innerJoin("flags", "flags.id", "flag_configs.flag_id")
    .select(["flags.name", "flag_configs.environment_id", "flag_configs.rules"])
    .where("flags.project_id", "=", projectId)
    .where("flag_configs.rules", "is not", null)
    .orderBy("flags.name")
    .orderBy("flag_configs.environment_id")
    .execute();
  return rows
    .filter((row) => referencesOf({ rules: rulesOf(row.rules) }).segments.includes(segmentId))
    .map((row) => ({ flag: row.name, environment: row.environment_id }));
}

/** A flag's configuration id in an environment (undefined: the project has no flag of that name). */
export async function flagConfigId(
  db: Executor,
  projectId: string,
  environment: string,
  name: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("flags")
    .innerJoin("flag_configs", (join) =>
      join.onRef("flag_configs.flag_id", "=", "flags.id").on("flag_configs.environment_id", "=", environment),
    )
    .select("flag_configs.config_id")
    .where("flags.project_id", "=", projectId)
    .where("flags.name", "=", name)
    .executeTakeFirst();
  return row?.config_id;
}
