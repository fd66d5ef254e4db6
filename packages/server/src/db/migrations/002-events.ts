import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * The history of every write (`events`) and the delivery outbox webhooks will read (`event_outbox`).
 * Event ids are `evt_` and a ULID, so they sort by time: every history page is one range scan of an index
 * that ends in `id`, whatever the filter (project, flag name, segment id, type).
 */
export function eventsMigration(dialect: Dialect): Migration {
  const textKey = dialect === "postgres" ? sql`collate "C"` : sql``;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("events")
        .addColumn("id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        // null for admin-key events, which belong to no project (and for project.deleted). No foreign key:
        // history outlives the deletes of flags and segments; a project's delete removes its events itself.
        .addColumn("project_id", "text", (c) => c.modifyEnd(textKey))
        .addColumn("type", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("target_kind", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("target_id", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("target_name", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("actor", "text", (c) => c.notNull())
        .addColumn("before", "text")
        .addColumn("after", "text")
        .addColumn("request_id", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("events_project").on("events").columns(["project_id", "id"]).execute();
      await db.schema.createIndex("events_project_type").on("events").columns(["project_id", "type", "id"]).execute();
      await db.schema
        .createIndex("events_target_name")
        .on("events")
        .columns(["project_id", "target_kind", "target_name", "id"])
        .execute();
      await db.schema
        .createIndex("events_target_id")
        .on("events")
        .columns(["project_id", "target_kind", "target_id", "id"])
        .execute();
      await db.schema.createIndex("events_created_at").on("events").column("created_at").execute();

      // One row per event to deliver; the webhook dispatcher claims and marks them (none yet).
      await db.schema
        .createTable("event_outbox")
        .addColumn("event_id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("claimed_at", "text")
        .addColumn("sent_at", "text")
        .execute();
      await db.schema.createIndex("event_outbox_created_at").on("event_outbox").column("created_at").execute();
      // Which instance wrote a change set, so one that reads its own write back from the log (its
      // notification can arrive before the commit returns) does not count it as lag from another.
      await db.schema.alterTable("feed_changes").addColumn("origin", "text").execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("feed_changes").dropColumn("origin").execute();
      await db.schema.dropTable("event_outbox").execute();
      await db.schema.dropTable("events").execute();
    },
  };
}
