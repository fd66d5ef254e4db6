import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * People (issue 26).
 * - `users`: people who sign in. `email` is stored lower-cased and unique. `password_hash` is a
 *   self-describing scrypt hash (see passwords.ts), null when the person has no password. `failed_sign_ins`
 *   and `locked_until` slow password guessing per account, shared by every instance (moved to
 *   `sign_in_failures` by 008).
 * - `project_grants`: what a member may do on a project.
 * - `sessions`: server-side sessions; `id_hash` is the SHA-256 of the cookie's random id, so a leaked
 *   table signs nobody in.
 * - `sign_in_tokens`: one-time sign-in links (`admin-key user create`) and single sign-on attempts in
 *   flight (state, nonce and PKCE verifier), each used once.
 * - `api_keys.user_id`: a personal key's person (null: a service key).
 * - `environments.protected`: only project admins change its configurations.
 * - `events.actor_id`: who made a change (a person's id, or a key's), so the history lists one person's
 *   changes by index; filled in for the events already recorded (their actors are all keys or the service).
 */
export function peopleMigration(dialect: Dialect): Migration {
  const textKey = dialect === "postgres" ? sql`collate "C"` : sql``;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("users")
        .addColumn("id", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("password_hash", "text")
        .addColumn("failed_sign_ins", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("locked_until", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("last_sign_in_at", "text")
        .execute();
      await db.schema
        .createTable("project_grants")
        .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("project_grants_pk", ["project_id", "user_id"])
        .execute();
      await db.schema.createIndex("project_grants_user").on("project_grants").columns(["user_id"]).execute();
      await db.schema
        .createTable("sessions")
        .addColumn("id_hash", "text", (c) => c.primaryKey().modifyEnd(textKey))
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("last_seen_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("sessions_user").on("sessions").columns(["user_id"]).execute();
      await db.schema
        .createTable("sign_in_tokens")
        .addColumn("id_hash", "text", (c) => c.primaryKey().modifyEnd(textKey))
        // link (a one-time sign-in link) or oidc (a single sign-on attempt)
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("cascade"))
        // JSON: for oidc, the nonce, the PKCE verifier and where to return
        .addColumn("data", "text")
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable("api_keys")
        .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("cascade"))
        .execute();
      await db.schema.createIndex("api_keys_user").on("api_keys").columns(["user_id"]).execute();
      await db.schema
        .alterTable("environments")
        .addColumn("protected", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("events").addColumn("actor_id", "text").execute();
      const keyId = dialect === "postgres" ? sql`(actor::json ->> 'keyId')` : sql`json_extract(actor, '$.keyId')`;
      await sql`update events set actor_id = ${keyId}`.execute(db);
      await db.schema.createIndex("events_actor").on("events").columns(["project_id", "actor_id", "id"]).execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropIndex("events_actor").execute();
      await db.schema.alterTable("events").dropColumn("actor_id").execute();
      await db.schema.alterTable("environments").dropColumn("protected").execute();
      await db.schema.dropIndex("api_keys_user").execute();
      await db.schema.alterTable("api_keys").dropColumn("user_id").execute();
      for (const table of ["sign_in_tokens", "sessions", "project_grants", "users"]) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
