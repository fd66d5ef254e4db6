import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import type { Dialect } from "../../kernel/config.js";

/**
 * An index for the flags list's search (`q=`, `name=`: a substring of the name or the description, in any
 * case), which read every flag of a project before (44 ms at 50,000 flags; issue 34). SQLite: an FTS5
 * table with the trigram tokenizer over `flags` (external content: it stores the index, not the text),
 * kept by triggers. PostgreSQL: trigram GIN indexes (pg_trgm) on the lowered name and description. Where
 * pg_trgm cannot be installed (a role without CREATE on the database), the search stays as it was, a
 * scan, and the start goes on (docs/deploy.md says how to add it later).
 */
export function flagSearchMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect === "sqlite") {
        await sql`create virtual table flags_search using fts5(name, description, content='flags', tokenize='trigram')`.execute(
          db,
        );
        await sql`create trigger flags_search_insert after insert on flags begin
          insert into flags_search(rowid, name, description) values (new.rowid, new.name, new.description);
        end`.execute(db);
        await sql`create trigger flags_search_delete after delete on flags begin
          insert into flags_search(flags_search, rowid, name, description) values ('delete', old.rowid, old.name, old.description);
        end`.execute(db);
        await sql`create trigger flags_search_update after update of name, description on flags begin
          insert into flags_search(flags_search, rowid, name, description) values ('delete', old.rowid, old.name, old.description);
          insert into flags_search(rowid, name, description) values (new.rowid, new.name, new.description);
        end`.execute(db);
        await sql`insert into flags_search(flags_search) values ('rebuild')`.execute(db);
        return;
      }
      // In a savepoint: a refused CREATE EXTENSION must not abort the migration's transaction.
      await sql`savepoint flag_search`.execute(db);
      try {
        await sql`create extension if not exists pg_trgm`.execute(db);
        await sql`release savepoint flag_search`.execute(db);
      } catch {
        await sql`rollback to savepoint flag_search`.execute(db);
        return;
      }
      // fastupdate off: new flags go into the index at once rather than into GIN's pending list, which
      // the planner must scan whole (after a bulk import it chose to scan the table instead).
      await sql`create index flags_name_trgm on flags using gin (lower(name) gin_trgm_ops) with (fastupdate = off)`.execute(
        db,
      );
      await sql`create index flags_description_trgm on flags using gin (lower(description) gin_trgm_ops) with (fastupdate = off)`.execute(
        db,
      );
    },
    async down(db: Kysely<any>) {
      if (dialect === "sqlite") {
        for (const trigger of ["flags_search_insert", "flags_search_delete", "flags_search_update"]) {
          await sql`drop trigger if exists ${sql.ref(trigger)}`.execute(db);
        }
        await sql`drop table if exists flags_search`.execute(db);
        return;
      }
      await sql`drop index if exists flags_name_trgm`.execute(db);
      await sql`drop index if exists flags_description_trgm`.execute(db);
    },
  };
}
