import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * Usage and lifecycle (issue 36): evaluations counted per configuration, variant and bucket (minutes,
 * hours, days), with the roll-ups' progress; a flag's kind, whether it is permanent, whether and why it
 * is stale, and when it was archived.
 *
 * `flag_usage` rows belong to a configuration (deleting a flag or an environment deletes its counts). A
 * bucket's time is its start, ISO 8601 as every time here. `usage_rollups` holds one row: the hours
 * before `hours_until` are rolled up from minutes into hours, the days before `days_until` from hours
 * into days (docs/usage.md).
 */
export function usageLifecycleMigration(dialect: Dialect): Migration {
  // Counts of one flag in one day may pass 2^31 (25,000 evaluations a second).
  const count = dialect === "postgres" ? "bigint" : "integer";
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("flag_usage")
        .addColumn("config_id", "text", (c) => c.notNull().references("flag_configs.config_id").onDelete("cascade"))
        .addColumn("flag_id", "text", (c) => c.notNull())
        .addColumn("granularity", "text", (c) => c.notNull())
        .addColumn("bucket_at", "text", (c) => c.notNull())
        .addColumn("variant", "text", (c) => c.notNull())
        .addColumn("count", count, (c) => c.notNull())
        .addPrimaryKeyConstraint("flag_usage_pk", ["config_id", "granularity", "bucket_at", "variant"])
        .execute();
      // Roll-ups, pruning and the stale rules read buckets by time across every flag.
      await db.schema
        .createIndex("flag_usage_buckets")
        .on("flag_usage")
        .columns(["granularity", "bucket_at"])
        .execute();
      await db.schema
        .createTable("usage_rollups")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("hours_until", "text")
        .addColumn("days_until", "text")
        .execute();
      await db.insertInto("usage_rollups").values({ id: 1, hours_until: null, days_until: null }).execute();
      // The ids of SDKs' reports recorded (kept as long as minutes are): a report sent again is not counted twice.
      await db.schema
        .createTable("usage_reports")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("received_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .alterTable("flags")
        .addColumn("kind", "text", (c) => c.notNull().defaultTo("release"))
        .execute();
      await db.schema
        .alterTable("flags")
        .addColumn("permanent", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("flags").addColumn("stale_reason", "text").execute();
      await db.schema.alterTable("flags").addColumn("stale_since", "text").execute();
      await db.schema.alterTable("flags").addColumn("archived_at", "text").execute();
    },
    async down(db: Kysely<any>) {
      for (const column of ["archived_at", "stale_since", "stale_reason", "permanent", "kind"])
        await db.schema.alterTable("flags").dropColumn(column).execute();
      await db.schema.dropTable("usage_reports").execute();
      await db.schema.dropTable("usage_rollups").execute();
      await db.schema.dropTable("flag_usage").execute();
    },
  };
}
