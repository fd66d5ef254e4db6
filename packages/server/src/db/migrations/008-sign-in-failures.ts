import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * Failed sign-ins counted per e-mail (issue 31).
 * - `sign_in_failures`: one row per normalised e-mail that failed to sign in lately, whether a person has
 *   it or not (so a lockout tells nobody which e-mails exist). Each attempt is counted by one upsert before
 *   its password is hashed, so parallel attempts, on one instance or many, cannot all be checked; a success
 *   deletes the row. `locked_until` is the lock's end (null: not locked); `last_attempt_at` lets pruning
 *   forget quiet rows.
 * - `users.failed_sign_ins` and `users.locked_until`, which counted by reading and writing back, are
 *   dropped; the locks they held are carried over (both engines drop a plain column: SQLite since 3.35).
 */
export function signInFailuresMigration(dialect: Dialect): Migration {
  const textKey = dialect === "postgres" ? sql`collate "C"` : sql``;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("sign_in_failures")
        .addColumn("email", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("failures", "integer", (c) => c.notNull())
        .addColumn("locked_until", "text")
        .addColumn("last_attempt_at", "text", (c) => c.notNull())
        .execute();
      const now = new Date().toISOString();
      await sql`insert into sign_in_failures (email, failures, locked_until, last_attempt_at)
        select email, failed_sign_ins, locked_until, ${now} from users where failed_sign_ins > 0`.execute(db);
      await db.schema.alterTable("users").dropColumn("failed_sign_ins").execute();
      await db.schema.alterTable("users").dropColumn("locked_until").execute();
    },
    async down(db: Kysely<any>) {
      await db.schema
        .alterTable("users")
        .addColumn("failed_sign_ins", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("users").addColumn("locked_until", "text").execute();
      await db.schema.dropTable("sign_in_failures").execute();
    },
  };
}
