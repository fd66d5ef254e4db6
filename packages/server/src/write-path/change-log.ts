import { sql, type Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import type { ChangeSet } from "./changes.js";

// What a write leaves for the read model: its change set in the change log under the stream's next
// version, and (PostgreSQL) the notification that tells every instance to read it. The read model reads
// the log (features/evaluation/feed.repository.ts) and listens (postgres-notifications.ts).

export const CHANNEL = "flagstaff_changes";

/**
 * Takes the next version of a stream. Called first in every write transaction: the row lock it takes
 * serialises writes to one project, which is what makes concurrent PATCHes of one flag all land.
 */
export async function nextStreamVersion(trx: Transaction<Database>, stream: string): Promise<number> {
  const row = await trx
    .insertInto("feed_streams")
    .values({ stream, version: 1 })
    .onConflict((oc) => oc.column("stream").doUpdateSet((eb) => ({ version: eb("feed_streams.version", "+", 1) })))
    .returning("version")
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

export async function recordChangeSet(trx: Transaction<Database>, set: ChangeSet, at: string): Promise<void> {
  await trx
    .insertInto("feed_changes")
    .values({
      stream: set.stream,
      version: set.version,
      change: JSON.stringify(set.changes),
      created_at: at,
      origin: set.origin ?? null,
    })
    .execute();
}

/**
 * Drops a stream's change log, in the transaction that deletes its project (whose change set is recorded
 * after it). The stream's row in `feed_streams` stays: its version goes on from where it was, so no id
 * of the deleted project is ever an id of a project created again under the same name.
 */
export async function deleteChangeLog(trx: Transaction<Database>, stream: string): Promise<void> {
  await trx.deleteFrom("feed_changes").where("stream", "=", stream).execute();
}

/**
 * Tells every listening instance that a stream moved to a new version. Runs inside the write
 * transaction, so PostgreSQL delivers it exactly when (and only if) the transaction commits. It carries
 * no changes: a listener reads those from the change log.
 */
export async function notifyChangeSet(trx: Transaction<Database>, set: ChangeSet): Promise<void> {
  await sql`select pg_notify(${CHANNEL}, ${JSON.stringify({ stream: set.stream, version: set.version })})`.execute(trx);
}
