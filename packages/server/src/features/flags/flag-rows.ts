import type { Kysely, Selectable, Transaction } from "kysely";
import { FLAG_EVALUATION_COLUMNS } from "../../db/flag-columns.js";
import type { Database, FlagConfigsTable, FlagsTable } from "../../db/schema.js";
import type { Flag } from "./flag.schemas.js";
import { planOf, targetingOf } from "../../db/targeting.js";

// A flag as its repositories read it: its definition joined with one environment's configuration.

export type Executor = Kysely<Database> | Transaction<Database>;

/** A configuration's id: unique, since flag ids are, and the owner of its actor and segment links. */
export const configIdOf = (flagId: string, environment: string) => `${flagId}@${environment}`;
/** A flag's definition joined with one environment's configuration, as the queries select it. */
export const FLAG_COLUMNS = [
  ...FLAG_EVALUATION_COLUMNS,
  "flags.description",
  "flags.created_at",
  "flag_configs.updated_at",
  "flag_configs.latest_checked_at",
  "flag_configs.status_changed_at",
  "flag_configs.revision",
  "flag_configs.actors_count",
  "flag_configs.segments_count",
  "flags.kind",
  "flags.permanent",
  "flags.stale_reason",
  "flags.stale_since",
  "flags.archived_at",
] as const;

export type FlagRow = Pick<
  Selectable<FlagsTable>,
  | "id"
  | "project_id"
  | "name"
  | "description"
  | "created_at"
  | "type"
  | "variants"
  | "kind"
  | "permanent"
  | "stale_reason"
  | "stale_since"
  | "archived_at"
> &
  Omit<Selectable<FlagConfigsTable>, "flag_id">;

/** A flag in one environment; `environments` is filled in by the service (configurationsOf). */
export const toFlag = (row: FlagRow): Flag => ({
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
  environment: row.environment_id,
  environments: {},
  revision: Number(row.revision),
  configId: row.config_id,
  ...(targetingOf(row) as Pick<Flag, "type" | "variants" | "onVariant" | "offVariant" | "rules" | "prerequisites">),
  plan: planOf(row.rollout_plan),
  kind: row.kind as Flag["kind"],
  permanent: Number(row.permanent) === 1,
  stale: row.stale_reason !== null,
  staleReason: row.stale_reason as Flag["staleReason"],
  staleSince: row.stale_since,
  archived: row.archived_at !== null,
  archivedAt: row.archived_at,
});

/** A project's flags joined with their configuration in one environment. */
export const flagsIn = (db: Executor, projectId: string, environment: string) =>
  db
    .selectFrom("flags")
    .innerJoin("flag_configs", (join) =>
      join.onRef("flag_configs.flag_id", "=", "flags.id").on("flag_configs.environment_id", "=", environment),
    )
    .where("flags.project_id", "=", projectId);
