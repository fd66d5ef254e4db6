import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * A write's comment (issue 32): the console's pending-changes bar saves a flag's changes with a sentence
 * saying why, which the history and webhooks show beside the change. Null for every write without one,
 * and for every event recorded before comments.
 */
export function eventCommentsMigration(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable("events").addColumn("comment", "text").execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("events").dropColumn("comment").execute();
    },
  };
}
