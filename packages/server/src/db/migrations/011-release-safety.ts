import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * Release safety (issue 35): an environment's approval policy; change requests and their reviews; the
 * request an applied change came from, in the history; a configuration's timed rollout plan.
 * `change_requests` is also the scheduled changes' queue: the job runner claims the rows due
 * (`state = 'scheduled'`, `next_attempt_at` passed, no live lease), PostgreSQL with FOR UPDATE SKIP LOCKED.
 */
export function releaseSafetyMigration(dialect: Dialect): Migration {
  const textKey = dialect === "postgres" ? sql`collate "C"` : sql``;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("environments")
        .addColumn("required_approvals", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable("environments")
        .addColumn("allow_self_approval", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("events").addColumn("change_request_id", "text").execute();
      // JSON: {steps: [{at, percentage} | {at, ruleId, weights}], pausedAt}; null: none.
      await db.schema.alterTable("flag_configs").addColumn("rollout_plan", "text").execute();

      await db.schema
        .createTable("change_requests")
        .addColumn("id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("environment_id", "text", (c) => c.notNull())
        .addColumn("title", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        // JSON: the write's actor (a person, a key); author_id is theirs, for the list's filter.
        .addColumn("author", "text", (c) => c.notNull())
        .addColumn("author_id", "text")
        // JSON: [{flag, patch, baseRevision}]
        .addColumn("changes", "text", (c) => c.notNull())
        .addColumn("scheduled_at", "text")
        .addColumn("applied_at", "text")
        .addColumn("applied_by", "text")
        .addColumn("override_reason", "text")
        .addColumn("failure_reason", "text")
        // The scheduled application's attempts, its next one, and the lease of the instance applying it.
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "text")
        .addColumn("lease_until", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("change_requests_project")
        .on("change_requests")
        .columns(["project_id", "id"])
        .execute();
      await db.schema
        .createIndex("change_requests_due")
        .on("change_requests")
        .columns(["state", "next_attempt_at"])
        .execute();

      await db.schema
        .createTable("change_request_reviews")
        .addColumn("change_request_id", "text", (c) => c.notNull().references("change_requests.id").onDelete("cascade"))
        .addColumn("reviewer_id", "text", (c) => c.notNull())
        // JSON: the reviewer as the history names them.
        .addColumn("reviewer", "text", (c) => c.notNull())
        .addColumn("decision", "text", (c) => c.notNull())
        .addColumn("comment", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("change_request_reviews_pk", ["change_request_id", "reviewer_id"])
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable("change_request_reviews").execute();
      await db.schema.dropTable("change_requests").execute();
      await db.schema.alterTable("flag_configs").dropColumn("rollout_plan").execute();
      await db.schema.alterTable("events").dropColumn("change_request_id").execute();
      await db.schema.alterTable("environments").dropColumn("allow_self_approval").execute();
      await db.schema.alterTable("environments").dropColumn("required_approvals").execute();
    },
  };
}
