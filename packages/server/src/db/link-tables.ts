import type { Kysely, Transaction } from "kysely";
import type { Database } from "./schema.js";

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * The tables that link one row to many: a flag's actors, a flag's segments, a segment's members. Reading
 * which links exist and removing links is the same over each, but for the names; adding differs (each
 * table keeps its own extra columns) and stays with its repository.
 */
export const LINKS = {
  flagActors: { table: "flag_actors", owner: "config_id", linked: "actor_id" },
  flagSegments: { table: "flag_segments", owner: "config_id", linked: "segment_id" },
  segmentMembers: { table: "segment_actors", owner: "segment_id", linked: "actor_id" },
} as const;

export type Link = keyof typeof LINKS;

// The tables differ only in names, which Kysely cannot type generically: the queries are built untyped
// over the literal names above.

/** Which of `ids` the owner is linked to now. */
export async function linkedNow(
  db: Executor,
  link: Link,
  ownerId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { table, owner, linked } = LINKS[link];
  const rows: Record<string, string>[] = await (db as Kysely<any>)
    .selectFrom(table)
    .select(linked)
    .where(owner, "=", ownerId)
    .where(linked, "in", ids)
    .execute();
  return new Set(rows.map((row) => row[linked] as string));
}

/** Removes the owner's links to `ids` (those it has). */
export async function unlink(trx: Transaction<Database>, link: Link, ownerId: string, ids: readonly string[]) {
  if (ids.length === 0) return;
  const { table, owner, linked } = LINKS[link];
  await (trx as Transaction<any>).deleteFrom(table).where(owner, "=", ownerId).where(linked, "in", ids).execute();
}
