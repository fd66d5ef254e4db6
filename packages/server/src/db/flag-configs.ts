import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "./schema.js";

type Executor = Kysely<Database> | Transaction<Database>;

/** The columns of a configuration, in the order the inserts below select them. */
const CONFIG_COLUMNS = [
  "config_id",
  "flag_id",
  "environment_id",
  "status",
  "percentage_actors",
  "percentage_calls",
  "updated_at",
  "latest_checked_at",
  "status_changed_at",
  "revision",
  "actors_count",
  "segments_count",
  "on_variant",
  "off_variant",
  "rules",
  "prerequisites",
  "rollout_plan",
] as const;

/**
 * Gives a new environment a configuration of every flag of its project: a copy of `copyFrom`'s (status,
 * percentages, attached actors and segments), or disabled with nothing attached. Three statements,
 * whatever the number of flags.
 */
export async function insertEnvironmentConfigurations(
  trx: Transaction<Database>,
  projectId: string,
  environment: string,
  copyFrom: string | undefined,
  at: string,
): Promise<void> {
  const configId = sql<string>`flags.id || ${`@${environment}`}`;
  if (copyFrom === undefined) {
    await trx
      .insertInto("flag_configs")
      .columns(CONFIG_COLUMNS)
      .expression((eb) =>
        eb
          .selectFrom("flags")
          .select([
            configId.as("config_id"),
            "flags.id",
            sql.lit(environment).as("environment_id"),
            sql.lit("disabled").as("status"),
            sql.lit(0).as("percentage_actors"),
            sql.lit(0).as("percentage_calls"),
            sql<string>`${at}`.as("updated_at"),
            sql<null>`null`.as("latest_checked_at"),
            sql<string>`${at}`.as("status_changed_at"),
            sql.lit(1).as("revision"),
            sql.lit(0).as("actors_count"),
            sql.lit(0).as("segments_count"),
            // Null: the flag's default variants; no rules, no prerequisites.
            sql<null>`null`.as("on_variant"),
            sql<null>`null`.as("off_variant"),
            sql<null>`null`.as("rules"),
            sql<null>`null`.as("prerequisites"),
            sql<null>`null`.as("rollout_plan"),
          ])
          .where("flags.project_id", "=", projectId),
      )
      .execute();
    return;
  }
  const source = (eb: Executor) =>
    eb
      .selectFrom("flag_configs as source")
      .innerJoin("flags", "flags.id", "source.flag_id")
      .where("flags.project_id", "=", projectId)
      .where("source.environment_id", "=", copyFrom);
  await trx
    .insertInto("flag_configs")
    .columns(CONFIG_COLUMNS)
    .expression(
      source(trx).select([
        configId.as("config_id"),
        "flags.id",
        sql<string>`${environment}`.as("environment_id"),
        "source.status",
        "source.percentage_actors",
        "source.percentage_calls",
        sql<string>`${at}`.as("updated_at"),
        sql<null>`null`.as("latest_checked_at"),
        sql<string>`${at}`.as("status_changed_at"),
        sql.lit(1).as("revision"),
        "source.actors_count",
        "source.segments_count",
        "source.on_variant",
        "source.off_variant",
        "source.rules",
        "source.prerequisites",
        "source.rollout_plan",
      ]),
    )
    .execute();
  await trx
    .insertInto("flag_actors")
    .columns(["config_id", "project_id", "actor_id", "created_at"])
    .expression(
      source(trx)
        .innerJoin("flag_actors", "flag_actors.config_id", "source.config_id")
        .select([
          configId.as("config_id"),
          "flag_actors.project_id",
          "flag_actors.actor_id",
          sql<string>`${at}`.as("created_at"),
        ]),
    )
    .execute();
  await trx
    .insertInto("flag_segments")
    .columns(["config_id", "segment_id", "created_at"])
    .expression(
      source(trx)
        .innerJoin("flag_segments", "flag_segments.config_id", "source.config_id")
        .select([configId.as("config_id"), "flag_segments.segment_id", sql<string>`${at}`.as("created_at")]),
    )
    .execute();
}
