import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * Webhooks and their deliveries. `webhook_deliveries` is the outbox: a write queues one row per matching
 * webhook and event in its own transaction; the dispatcher sends and retries them. A delivery keeps its
 * own copy of the body, so it survives history pruning and needs no join to send. The per-event outbox of
 * 002 (`event_outbox`), which would have cost every write a row and the dispatcher a transaction to match
 * it later, is dropped.
 */
export function webhooksMigration(dialect: Dialect): Migration {
  const textKey = dialect === "postgres" ? sql`collate "C"` : sql``;
  return {
    async up(db: Kysely<any>) {
      await db.schema.dropTable("event_outbox").execute();
      await db.schema
        .createTable("webhooks")
        .addColumn("id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("url", "text", (c) => c.notNull())
        // JSON array of patterns: event types, "flag.*"-style prefixes, or "*".
        .addColumn("events", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        // The signing secret (whsec_…). Stored as is: an HMAC needs the key itself.
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("enabled", "integer", (c) => c.notNull())
        .addColumn("disabled_reason", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("webhooks_project").on("webhooks").columns(["project_id", "id"]).execute();

      await db.schema
        .createTable("webhook_deliveries")
        .addColumn("id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id").onDelete("cascade"))
        .addColumn("event_id", "text", (c) => c.notNull().modifyEnd(textKey))
        .addColumn("event_type", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        // pending, succeeded or failed
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull())
        .addColumn("next_attempt_at", "text")
        // While a dispatcher sends it, no other may claim it; a dispatcher that dies lets the lease lapse.
        .addColumn("lease_until", "text")
        .addColumn("last_attempt_at", "text")
        .addColumn("last_status_code", "integer")
        .addColumn("last_error", "text")
        .addColumn("last_duration_ms", "integer")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("finished_at", "text")
        .execute();
      // One delivery per webhook and event, however often the fan-out runs.
      await db.schema
        .createIndex("webhook_deliveries_event")
        .on("webhook_deliveries")
        .columns(["webhook_id", "event_id"])
        .unique()
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_due")
        .on("webhook_deliveries")
        .columns(["status", "next_attempt_at"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_webhook")
        .on("webhook_deliveries")
        .columns(["webhook_id", "id"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_finished")
        .on("webhook_deliveries")
        .column("finished_at")
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable("webhook_deliveries").execute();
      await db.schema.dropTable("webhooks").execute();
      await db.schema
        .createTable("event_outbox")
        .addColumn("event_id", "text", (c) => c.primaryKey())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("claimed_at", "text")
        .addColumn("sent_at", "text")
        .execute();
    },
  };
}
