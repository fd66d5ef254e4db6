import { type Kysely, sql, type Transaction } from "kysely";
import { FLAG_EVALUATION_COLUMNS } from "../../db/flag-columns.js";
import type { Database } from "../../db/schema.js";
import type { Change, ChangeSet } from "../../write-path/changes.js";

type Executor = Kysely<Database> | Transaction<Database>;

interface ChangeRow {
  version: number | string;
  change: string;
  created_at: string;
  origin: string | null;
}

function toChangeSet(stream: string, row: ChangeRow): ChangeSet {
  return {
    stream,
    version: Number(row.version),
    changes: JSON.parse(row.change) as Change[],
    at: Date.parse(row.created_at),
    ...(row.origin === null ? {} : { origin: row.origin }),
  };
}

export async function readChangeSetsSince(db: Executor, stream: string, version: number): Promise<ChangeSet[]> {
  const rows = await db
    .selectFrom("feed_changes")
    .select(["version", "change", "created_at", "origin"])
    .where("stream", "=", stream)
    .where("version", ">", version)
    .orderBy("version")
    .execute();
  return rows.map((row) => toChangeSet(stream, row));
}

/**
 * The change sets after `version`, if there are at most `maxSets` of them holding at most `maxChars` of
 * change JSON between them; undefined if there are more (then a snapshot is the cheaper way to catch up).
 * The sizes are read first, so a long tail of the log is never read whole.
 */
export async function readChangeSetsWithin(
  db: Executor,
  stream: string,
  version: number,
  maxSets: number,
  maxChars: number,
): Promise<ChangeSet[] | undefined> {
  const sizes = await db
    .selectFrom("feed_changes")
    .select(["version", sql<number | string>`length(change)`.as("size")])
    .where("stream", "=", stream)
    .where("version", ">", version)
    .orderBy("version")
    .limit(maxSets + 1)
    .execute();
  if (sizes.length > maxSets) return undefined;
  let chars = 0;
  for (const row of sizes) chars += Number(row.size);
  if (chars > maxChars) return undefined;
  const last = sizes.at(-1);
  if (!last) return [];
  const rows = await db
    .selectFrom("feed_changes")
    .select(["version", "change", "created_at", "origin"])
    .where("stream", "=", stream)
    .where("version", ">", version)
    .where("version", "<=", last.version)
    .orderBy("version")
    .execute();
  return rows.map((row) => toChangeSet(stream, row));
}

export async function readStreamVersion(db: Executor, stream: string): Promise<number> {
  const row = await db.selectFrom("feed_streams").select("version").where("stream", "=", stream).executeTakeFirst();
  return row ? Number(row.version) : 0;
}

export async function readStreamVersions(db: Executor): Promise<Map<string, number>> {
  const rows = await db.selectFrom("feed_streams").select(["stream", "version"]).execute();
  return new Map(rows.map((r) => [r.stream, Number(r.version)]));
}

/** Drops change sets older than `before`; replicas further behind than that reload the stream instead. */
export async function pruneChangeSets(db: Executor, before: string): Promise<void> {
  await db.deleteFrom("feed_changes").where("created_at", "<", before).execute();
}

export interface EvaluationRows {
  projects: { id: string }[];
  environments: { project_id: string; id: string; is_default: number | string }[];
  keys: {
    id: string;
    name: string;
    key_hash: string;
    role: string;
    project_id: string | null;
    environment_id: string | null;
    user_id: string | null;
  }[];
  /** Every flag's configuration in every environment, with the flag's name. */
  flags: {
    id: string;
    project_id: string;
    name: string;
    config_id: string;
    environment_id: string;
    status: string;
    percentage_actors: number;
    percentage_calls: number;
    type: string;
    variants: string | null;
    on_variant: string | null;
    off_variant: string | null;
    rules: string | null;
    prerequisites: string | null;
    rollout_plan: string | null;
  }[];
  flagActors: { config_id: string; actor_id: string }[];
  flagSegments: { config_id: string; segment_id: string }[];
  segmentActors: { project_id: string; segment_id: string; actor_id: string }[];
  /** The conditions of segments that have any (JSON). */
  segmentConditions: { project_id: string; id: string; conditions: string | null }[];
}

/** Reads the evaluation state of one project, or of all projects when `projectId` is undefined. */
export async function readEvaluationRows(db: Executor, projectId?: string): Promise<EvaluationRows> {
  const one = projectId !== undefined;
  const projects = await db
    .selectFrom("projects")
    .select("id")
    .$if(one, (q) => q.where("id", "=", projectId as string))
    .execute();
  const environments = await db
    .selectFrom("environments")
    .select(["project_id", "id", "is_default"])
    .$if(one, (q) => q.where("project_id", "=", projectId as string))
    .orderBy("project_id")
    .orderBy("position")
    .execute();
  const keys = await db
    .selectFrom("api_keys")
    .select(["id", "name", "key_hash", "role", "project_id", "environment_id", "user_id"])
    .$if(one, (q) => q.where("project_id", "=", projectId as string))
    .execute();
  const flags = await db
    .selectFrom("flags")
    .innerJoin("flag_configs", "flag_configs.flag_id", "flags.id")
    .select(FLAG_EVALUATION_COLUMNS)
    // An archived flag is evaluated as not found.
    .where("flags.archived_at", "is", null)
    .$if(one, (q) => q.where("flags.project_id", "=", projectId as string))
    .execute();
  const flagActors = await db
    .selectFrom("flag_actors")
    .select(["config_id", "actor_id"])
    .$if(one, (q) => q.where("project_id", "=", projectId as string))
    .execute();
  const flagSegments = await db
    .selectFrom("flag_segments")
    .select(["flag_segments.config_id", "flag_segments.segment_id"])
    .$if(one, (q) =>
      q
        .innerJoin("flag_configs", "flag_configs.config_id", "flag_segments.config_id")
        .innerJoin("flags", "flags.id", "flag_configs.flag_id")
        .where("flags.project_id", "=", projectId as string),
    )
    .execute();
  const segmentActors = await db
    .selectFrom("segment_actors")
    .select(["project_id", "segment_id", "actor_id"])
    .$if(one, (q) => q.where("project_id", "=", projectId as string))
    .execute();
  const segmentConditions = await db
    .selectFrom("segments")
    .select(["project_id", "id", "conditions"])
    .where("conditions", "is not", null)
    .$if(one, (q) => q.where("project_id", "=", projectId as string))
    .execute();
  return { projects, environments, keys, flags, flagActors, flagSegments, segmentActors, segmentConditions };
}

/** Every person and grant, for the global stream's part of the snapshot. */
export async function readPeopleRows(db: Kysely<Database>) {
  const users = await db.selectFrom("users").select(["id", "email", "name", "role", "disabled"]).execute();
  const grants = await db.selectFrom("project_grants").select(["user_id", "project_id", "role"]).execute();
  return { users, grants };
}
