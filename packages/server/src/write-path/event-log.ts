import type { Kysely, Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import type { EventActor, StoredEvent } from "./domain-events.js";

// The history's writes: every write's events, stored in its transaction by the unit of work; a project's
// history dropped with it; old events pruned. Reading it is the history feature's (features/history).

/**
 * Events a statement inserts at most: 15 columns a row, so 500 rows stay under every driver's bound-parameter
 * limit (SQLite's 32,766). A write may make thousands (an applied project document).
 */
const EVENTS_PER_INSERT = 500;

/** Stores events in the history, in the write's transaction. */
export async function insertEvents(trx: Transaction<Database>, events: readonly StoredEvent[]): Promise<void> {
  for (let at = 0; at < events.length; at += EVENTS_PER_INSERT) {
    await insertSome(trx, events.slice(at, at + EVENTS_PER_INSERT));
  }
}

async function insertSome(trx: Transaction<Database>, events: readonly StoredEvent[]): Promise<void> {
  await trx
    .insertInto("events")
    .values(
      events.map((e) => ({
        id: e.id,
        project_id: e.projectId,
        type: e.type,
        target_kind: e.target.kind,
        target_id: e.target.id,
        target_name: e.target.name,
        actor: JSON.stringify(e.actor),
        before: e.before === null ? null : JSON.stringify(e.before),
        after: e.after === null ? null : JSON.stringify(e.after),
        request_id: e.requestId,
        environment_id: e.environment ?? null,
        created_at: e.createdAt,
        actor_id: actorIdOf(e.actor),
        comment: e.comment ?? null,
        change_request_id: e.changeRequest ?? null,
      })),
    )
    .execute();
}

/** The id `?actor=` finds an event by: the person's, or the key's; none for the service's own writes. */
const actorIdOf = (actor: EventActor): string | null =>
  actor.type === "user" ? actor.id : actor.type === "key" ? actor.keyId : null;

/** Drops a project's whole history, in the transaction that deletes the project. */
export async function deleteProjectEvents(trx: Transaction<Database>, projectId: string): Promise<void> {
  await trx.deleteFrom("events").where("project_id", "=", projectId).execute();
}

/** Drops events created before `before`. */
export async function pruneEvents(db: Kysely<Database>, before: string): Promise<void> {
  await db.deleteFrom("events").where("created_at", "<", before).execute();
}
