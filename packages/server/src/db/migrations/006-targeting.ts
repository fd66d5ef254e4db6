import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Targeting (issue 25). A flag's definition gains its `type` (fixed at creation; every existing flag is
 * boolean) and, for other types, its `variants` as JSON. A configuration gains the variants it serves
 * (`on_variant`, `off_variant`: null for a boolean flag, whose are `on` and `off`) and its `rules` and
 * `prerequisites` as JSON (null: none). A segment gains its `conditions` as JSON (null: listed members
 * only). JSON is kept as text on both databases: it is read whole and written whole, never queried into.
 */
export function targetingMigration(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("flags")
        .addColumn("type", "text", (c) => c.notNull().defaultTo("boolean"))
        .execute();
      await db.schema.alterTable("flags").addColumn("variants", "text").execute();
      for (const column of ["on_variant", "off_variant", "rules", "prerequisites"]) {
        await db.schema.alterTable("flag_configs").addColumn(column, "text").execute();
      }
      await db.schema.alterTable("segments").addColumn("conditions", "text").execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("segments").dropColumn("conditions").execute();
      for (const column of ["on_variant", "off_variant", "rules", "prerequisites"]) {
        await db.schema.alterTable("flag_configs").dropColumn(column).execute();
      }
      await db.schema.alterTable("flags").dropColumn("variants").execute();
      await db.schema.alterTable("flags").dropColumn("type").execute();
    },
  };
}
