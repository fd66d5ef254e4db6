import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * What the console needs to read cheaply and to edit safely: each flag's and segment's membership counts,
 * kept exact by the writes that change memberships (so a segment of a million members is counted
 * without a scan), and a revision that moves with every change, from which ETags are made (If-Match).
 */
export function countsMigration(): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const table of ["flags", "segments"]) {
        await db.schema
          .alterTable(table)
          .addColumn("revision", "integer", (c) => c.notNull().defaultTo(1))
          .execute();
        await db.schema
          .alterTable(table)
          .addColumn("actors_count", "integer", (c) => c.notNull().defaultTo(0))
          .execute();
      }
      await db.schema
        .alterTable("flags")
        .addColumn("segments_count", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`update flags set
        actors_count = (select count(*) from flag_actors where flag_actors.flag_id = flags.id),
        segments_count = (select count(*) from flag_segments where flag_segments.flag_id = flags.id)`.execute(db);
      await sql`update segments set
        actors_count = (select count(*) from segment_actors where segment_actors.segment_id = segments.id)`.execute(db);
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("flags").dropColumn("segments_count").execute();
      for (const table of ["flags", "segments"]) {
        await db.schema.alterTable(table).dropColumn("actors_count").execute();
        await db.schema.alterTable(table).dropColumn("revision").execute();
      }
    },
  };
}
