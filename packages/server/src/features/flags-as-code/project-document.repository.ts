import type { Transaction } from "kysely";
import type { Condition } from "@flagstaff/core";
import type { Database } from "../../db/schema.js";
import { FLAG_COLUMNS, flagsIn, toFlag } from "../flags/flag-rows.js";
import type { Flag } from "../flags/flag.schemas.js";

// What a project's document is read from (docs/flags-as-code.md), inside one read transaction so that it
// is one revision's state.

type Trx = Transaction<Database>;

export const readProject = (trx: Trx, projectId: string) =>
  trx.selectFrom("projects").select(["id", "name"]).where("id", "=", projectId).executeTakeFirst();

/** The project's revision: its stream's version, which every write to it moves. */
export async function readRevision(trx: Trx, projectId: string): Promise<number> {
  const row = await trx.selectFrom("feed_streams").select("version").where("stream", "=", projectId).executeTakeFirst();
  return row ? Number(row.version) : 0;
}

export const readEnvironments = (trx: Trx, projectId: string) =>
  trx
    .selectFrom("environments")
    .select(["id", "name", "description", "is_default", "protected", "required_approvals", "allow_self_approval"])
    .where("project_id", "=", projectId)
    .orderBy("position")
    .execute();

export async function readSegments(trx: Trx, projectId: string) {
  const rows = await trx
    .selectFrom("segments")
    .select(["id", "name", "description", "conditions"])
    .where("project_id", "=", projectId)
    .orderBy("id")
    .execute();
  return rows.map((row) => ({
    ...row,
    conditions: (row.conditions === null ? [] : JSON.parse(row.conditions)) as Condition[],
  }));
}

/** Every segment's listed members, by segment id, each list in order. */
export async function readSegmentMembers(trx: Trx, projectId: string): Promise<Map<string, string[]>> {
  const rows = await trx
    .selectFrom("segment_actors")
    .select(["segment_id", "actor_id"])
    .where("project_id", "=", projectId)
    .orderBy("segment_id")
    .orderBy("actor_id")
    .execute();
  const members = new Map<string, string[]>();
  for (const row of rows) {
    const list = members.get(row.segment_id) ?? [];
    list.push(row.actor_id);
    members.set(row.segment_id, list);
  }
  return members;
}

/** The project's flags not archived, with their configuration in one environment, by name. */
export async function readFlagsIn(trx: Trx, projectId: string, environment: string): Promise<Flag[]> {
  const rows = await flagsIn(trx, projectId, environment)
    .select(FLAG_COLUMNS)
    .where("flags.archived_at", "is", null)
    .orderBy("flags.name")
    .execute();
  return rows.map(toFlag);
}

/** The actors and segments attached to every configuration of the project, by configuration id, in order. */
export async function readLinks(trx: Trx, projectId: string) {
  const actors = await trx
    .selectFrom("flag_actors")
    .select(["config_id", "actor_id"])
    .where("project_id", "=", projectId)
    .orderBy("config_id")
    .orderBy("actor_id")
    .execute();
  const segments = await trx
    .selectFrom("flag_segments")
    .innerJoin("flag_configs", "flag_configs.config_id", "flag_segments.config_id")
    .innerJoin("flags", "flags.id", "flag_configs.flag_id")
    .select(["flag_segments.config_id", "flag_segments.segment_id"])
    .where("flags.project_id", "=", projectId)
    .orderBy("flag_segments.config_id")
    .orderBy("flag_segments.segment_id")
    .execute();
  const byConfig = <T extends { config_id: string }>(rows: T[], value: (row: T) => string) => {
    const map = new Map<string, string[]>();
    for (const row of rows) {
      const list = map.get(row.config_id) ?? [];
      list.push(value(row));
      map.set(row.config_id, list);
    }
    return map;
  };
  return {
    actors: byConfig(actors, (row) => row.actor_id),
    segments: byConfig(segments, (row) => row.segment_id),
  };
}
