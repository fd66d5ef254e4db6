import type { Kysely, Selectable, SelectQueryBuilder, Transaction } from "kysely";
import type { Database, EventsTable } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import { redactState, redactUrl } from "../../write-path/redacted-url.js";
import type { EventActor, EventType, StoredEvent, TargetKind } from "../../write-path/domain-events.js";

type Executor = Kysely<Database> | Transaction<Database>;

export interface EventFilter {
  readonly projectId: string;
  /** Any of these types (already expanded from prefixes); undefined for all. */
  readonly types?: readonly EventType[];
  /** Events of flags of this name (every flag that had it). */
  readonly flagName?: string;
  readonly segmentId?: string;
  /** createdAt at or after this ISO time. */
  readonly since?: string;
  /** createdAt strictly before this ISO time. */
  readonly until?: string;
  /** Leaves out webhook events, for keys that may not see webhooks. */
  readonly hideWebhooks?: boolean;
  /** Only events of this environment (a configuration's changes and the environment's own events). */
  readonly environment?: string;
  /** Leaves out the events of every other environment (for keys bound to this one); the rest stay. */
  readonly withinEnvironment?: string;
  /** Only the changes of this person (usr_…) or key. */
  readonly actorId?: string;
}

/** An actor as stored; those recorded before people existed have no `type`, which is added here. */
function readActor(text: string): EventActor {
  const actor = JSON.parse(text) as Record<string, unknown>;
  if (actor.type !== undefined) return actor as EventActor;
  return (actor.keyId !== undefined ? { type: "key", ...actor } : { type: "system", ...actor }) as EventActor;
}

const parse = (text: string | null) => (text === null ? null : (JSON.parse(text) as Record<string, unknown>));

/**
 * A stored event as read. Webhook URLs are redacted again on the way out: events recorded before the
 * service redacted them at recording still hold the URL as given.
 */
export function toEvent(row: Selectable<EventsTable>): StoredEvent {
  if (row.target_kind === "webhook") {
    const event = readEvent(row);
    return {
      ...event,
      target: { ...event.target, name: redactUrl(event.target.name) },
      before: redactState(event.before),
      after: redactState(event.after),
    };
  }
  return readEvent(row);
}

function readEvent(row: Selectable<EventsTable>): StoredEvent {
  return {
    id: row.id,
    type: row.type as EventType,
    projectId: row.project_id,
    ...(row.environment_id === null ? {} : { environment: row.environment_id }),
    createdAt: row.created_at,
    actor: readActor(row.actor),
    target: { kind: row.target_kind as TargetKind, id: row.target_id, name: row.target_name },
    before: parse(row.before),
    after: parse(row.after),
    requestId: row.request_id,
    ...(row.comment === null ? {} : { comment: row.comment }),
    ...(row.change_request_id === null ? {} : { changeRequest: row.change_request_id }),
  };
}

function filtered(db: Executor, filter: EventFilter): SelectQueryBuilder<Database, "events", object> {
  let q = db.selectFrom("events").where("project_id", "=", filter.projectId);
  if (filter.types !== undefined) q = q.where("type", "in", [...filter.types]);
  if (filter.hideWebhooks === true) q = q.where("target_kind", "<>", "webhook");
  if (filter.flagName !== undefined) {
    q = q.where("target_kind", "=", "flag").where("target_name", "=", filter.flagName);
  }
  if (filter.segmentId !== undefined) {
    q = q.where("target_kind", "=", "segment").where("target_id", "=", filter.segmentId);
  }
  if (filter.environment !== undefined) q = q.where("environment_id", "=", filter.environment);
  if (filter.actorId !== undefined) q = q.where("actor_id", "=", filter.actorId);
  if (filter.withinEnvironment !== undefined) {
    const own = filter.withinEnvironment;
    q = q.where((eb) => eb.or([eb("environment_id", "is", null), eb("environment_id", "=", own)]));
  }
  if (filter.since !== undefined) q = q.where("created_at", ">=", filter.since);
  if (filter.until !== undefined) q = q.where("created_at", "<", filter.until);
  return q;
}

/**
 * One page of a project's history, newest first: `limit + 1` rows in the page's direction (older for
 * first and after, newer, ascending, for before), as `assemblePage` expects. Ids sort by time.
 */
export async function listEvents(db: Executor, filter: EventFilter, page: PageQuery): Promise<StoredEvent[]> {
  let q = filtered(db, filter).selectAll();
  if (page.direction === "before") q = q.where("id", ">", page.key[0] as string).orderBy("id", "asc");
  else {
    if (page.direction === "after") q = q.where("id", "<", page.key[0] as string);
    q = q.orderBy("id", "desc");
  }
  const rows = await q.limit(page.limit + 1).execute();
  return rows.map(toEvent);
}

/** Whether any event lies before (newer than) or after (older than) a key in the newest-first order. */
export async function eventsBeyond(
  db: Executor,
  filter: EventFilter,
  side: "before" | "after",
  key: SortKey,
): Promise<boolean> {
  const row = await filtered(db, filter)
    .select("id")
    .where("id", side === "before" ? ">" : "<", key[0] as string)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
