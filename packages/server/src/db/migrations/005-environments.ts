import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * Environments. A flag's definition (name, description, creation) stays in `flags`; its configuration
 * (status, percentages, attached actors and segments, times, revision, counts) moves to `flag_configs`,
 * one row per flag and environment. Every project gets the environment `production` as its default, and
 * every existing configuration, key and link moves into it:
 * - a configuration's id is `<flag id>@<environment id>` (unique, since flag ids are), so the links move
 *   to their owner by a plain expression;
 * - every project key is bound to `production` (admin keys stay bound to none).
 * Links (`flag_actors`, `flag_segments`) now hang off a configuration, so deleting an environment's
 * configurations takes their links with them. SQLite cannot change a column's foreign key, so both link
 * tables are rebuilt under their old names.
 */
export function environmentsMigration(dialect: Dialect): Migration {
  const textKey = dialect === "postgres" ? sql`collate "C"` : sql``;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("environments")
        .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("id", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        // 1 for the project's default environment (exactly one per project), 0 for the others.
        .addColumn("is_default", "integer", (c) => c.notNull())
        // The list's order: creation order, and a project's own order when it names its environments.
        .addColumn("position", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("environments_pk", ["project_id", "id"])
        .execute();
      await db.schema
        .createIndex("environments_position")
        .on("environments")
        .columns(["project_id", "position"])
        .unique()
        .execute();
      await sql`insert into environments (project_id, id, name, description, is_default, position, created_at, updated_at)
        select id, 'production', 'Production', '', 1, 1, created_at, created_at from projects`.execute(db);

      await db.schema
        .createTable("flag_configs")
        .addColumn("config_id", "text", (c) => c.primaryKey())
        .addColumn("flag_id", "text", (c) => c.notNull().references("flags.id").onDelete("cascade"))
        .addColumn("environment_id", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("percentage_actors", "integer", (c) => c.notNull())
        .addColumn("percentage_calls", "integer", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("latest_checked_at", "text")
        .addColumn("status_changed_at", "text", (c) => c.notNull())
        .addColumn("revision", "integer", (c) => c.notNull())
        .addColumn("actors_count", "integer", (c) => c.notNull())
        .addColumn("segments_count", "integer", (c) => c.notNull())
        .addUniqueConstraint("flag_configs_flag_environment", ["flag_id", "environment_id"])
        .execute();
      await db.schema
        .createIndex("flag_configs_environment")
        .on("flag_configs")
        .columns(["environment_id", "flag_id"])
        .execute();
      await sql`insert into flag_configs (config_id, flag_id, environment_id, status, percentage_actors,
          percentage_calls, updated_at, latest_checked_at, status_changed_at, revision, actors_count, segments_count)
        select id || '@production', id, 'production', status, percentage_actors, percentage_calls, updated_at, latest_checked_at,
          status_changed_at, revision, actors_count, segments_count from flags`.execute(db);

      await db.schema
        .createTable("flag_actors_v5")
        .addColumn("config_id", "text", (c) => c.notNull().references("flag_configs.config_id").onDelete("cascade"))
        .addColumn("project_id", "text", (c) => c.notNull())
        .addColumn("actor_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("flag_actors_v5_pk", ["config_id", "actor_id"])
        .execute();
      await sql`insert into flag_actors_v5 (config_id, project_id, actor_id, created_at)
        select flag_id || '@production', project_id, actor_id, created_at from flag_actors`.execute(db);
      await db.schema.dropTable("flag_actors").execute();
      await db.schema.alterTable("flag_actors_v5").renameTo("flag_actors").execute();
      await db.schema.createIndex("flag_actors_actor").on("flag_actors").columns(["project_id", "actor_id"]).execute();

      await db.schema
        .createTable("flag_segments_v5")
        .addColumn("config_id", "text", (c) => c.notNull().references("flag_configs.config_id").onDelete("cascade"))
        .addColumn("segment_id", "text", (c) => c.notNull().references("segments.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("flag_segments_v5_pk", ["config_id", "segment_id"])
        .execute();
      await sql`insert into flag_segments_v5 (config_id, segment_id, created_at)
        select flag_id || '@production', segment_id, created_at from flag_segments`.execute(db);
      await db.schema.dropTable("flag_segments").execute();
      await db.schema.alterTable("flag_segments_v5").renameTo("flag_segments").execute();
      await db.schema.createIndex("flag_segments_segment").on("flag_segments").column("segment_id").execute();

      for (const column of [
        "status",
        "percentage_actors",
        "percentage_calls",
        "updated_at",
        "latest_checked_at",
        "status_changed_at",
        "revision",
        "actors_count",
        "segments_count",
      ]) {
        await db.schema.alterTable("flags").dropColumn(column).execute();
      }

      // A project key acts on one environment; null: on none in particular (admin keys, unbound write keys).
      await db.schema.alterTable("api_keys").addColumn("environment_id", "text").execute();
      await sql`update api_keys set environment_id = 'production' where project_id is not null`.execute(db);

      // The environment of a configuration's change or of an environment's event; null for the rest.
      await db.schema
        .alterTable("events")
        .addColumn("environment_id", "text", (c) => c.modifyEnd(textKey))
        .execute();
      await db.schema
        .createIndex("events_project_environment")
        .on("events")
        .columns(["project_id", "environment_id", "id"])
        .execute();
    },
    async down() {
      throw new Error("005-environments cannot be undone: restore the backup taken before the upgrade");
    },
  };
}
