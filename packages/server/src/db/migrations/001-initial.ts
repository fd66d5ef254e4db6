import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/** The first schema. `textKey` makes sort columns compare bytewise on both engines, as the cursors assume. */
export function initialMigration(dialect: Dialect): Migration {
  const textKey = dialect === "postgres" ? sql`collate "C"` : sql``;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("projects")
        .addColumn("id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("feed_streams")
        .addColumn("stream", "text", (c) => c.primaryKey())
        .addColumn("version", "integer", (c) => c.notNull())
        .execute();
      await db.insertInto("feed_streams").values({ stream: "", version: 0 }).execute();

      await db.schema
        .createTable("feed_changes")
        .addColumn("stream", "text", (c) => c.notNull())
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("change", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("feed_changes_pk", ["stream", "version"])
        .execute();
      await db.schema.createIndex("feed_changes_created_at").on("feed_changes").column("created_at").execute();

      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("project_id", "text", (c) => c.references("projects.id").onDelete("cascade"))
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull().modifyEnd(textKey))
        .execute();
      await db.schema
        .createIndex("api_keys_project_created")
        .on("api_keys")
        .columns(["project_id", "created_at", "id"])
        .execute();

      await db.schema
        .createTable("flags")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("percentage_actors", "integer", (c) => c.notNull())
        .addColumn("percentage_calls", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("latest_checked_at", "text")
        .addColumn("status_changed_at", "text", (c) => c.notNull())
        .addUniqueConstraint("flags_project_name", ["project_id", "name"])
        .execute();

      await db.schema
        .createTable("segments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("next_actor_seq", "integer", (c) => c.notNull().defaultTo(1))
        .addUniqueConstraint("segments_project_name", ["project_id", "name"])
        .execute();

      await db.schema
        .createTable("actors")
        .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("actor_id", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("image_url", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("actors_pk", ["project_id", "actor_id"])
        .execute();

      await db.schema
        .createTable("flag_actors")
        .addColumn("flag_id", "text", (c) => c.notNull().references("flags.id").onDelete("cascade"))
        .addColumn("project_id", "text", (c) => c.notNull())
        .addColumn("actor_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("flag_actors_pk", ["flag_id", "actor_id"])
        .execute();
      await db.schema.createIndex("flag_actors_actor").on("flag_actors").columns(["project_id", "actor_id"]).execute();

      await db.schema
        .createTable("flag_segments")
        .addColumn("flag_id", "text", (c) => c.notNull().references("flags.id").onDelete("cascade"))
        .addColumn("segment_id", "text", (c) => c.notNull().references("segments.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("flag_segments_pk", ["flag_id", "segment_id"])
        .execute();
      await db.schema.createIndex("flag_segments_segment").on("flag_segments").column("segment_id").execute();

      await db.schema
        .createTable("segment_actors")
        .addColumn("segment_id", "text", (c) => c.notNull().references("segments.id").onDelete("cascade"))
        .addColumn("project_id", "text", (c) => c.notNull())
        .addColumn("actor_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("added_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("segment_actors_pk", ["segment_id", "actor_id"])
        .execute();
      await db.schema
        .createIndex("segment_actors_latest")
        .on("segment_actors")
        .columns(["segment_id", "seq"])
        .execute();
      await db.schema
        .createIndex("segment_actors_actor")
        .on("segment_actors")
        .columns(["project_id", "actor_id"])
        .execute();
    },
    async down(db: Kysely<any>) {
      for (const table of [
        "segment_actors",
        "flag_segments",
        "flag_actors",
        "actors",
        "segments",
        "flags",
        "api_keys",
        "feed_changes",
        "feed_streams",
        "projects",
      ]) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
