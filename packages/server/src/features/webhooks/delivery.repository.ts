import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import type { NewDelivery } from "./webhook.repository.js";

/** The SQL of the webhook dispatcher: what it queues, claims, hands back and records. */

/** An enabled webhook, as a write's transaction matches its events against it. */
export interface HookToMatch {
  readonly id: string;
  readonly project_id: string;
  readonly events: string;
  readonly url: string;
  readonly secret: string;
}

/** A delivery taken under a lease, with what sending it needs. */
export interface Claimed extends Omit<NewDelivery, "leaseUntil"> {
  /** Attempts so far, this one included. */
  readonly attempts: number;
  /** The lease this dispatcher holds; an outcome is stored only while it still does. */
  readonly leaseUntil: string | null;
  readonly url: string;
  readonly secret: string;
  readonly projectId: string;
}

/** A due delivery as the claim's query finds it, before the choice. */
export interface DueRow {
  readonly id: string;
  readonly webhook_id: string;
}

/** The columns an attempt's outcome sets. */
export interface Outcome {
  readonly lease_until: null;
  readonly last_attempt_at: string;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  readonly last_duration_ms: number;
  readonly next_attempt_at: string | null;
  readonly status?: "succeeded" | "failed";
  readonly finished_at?: string;
}

/** An outcome to store under the lease it was sent with. */
export interface LeasedOutcome {
  readonly id: string;
  readonly lease: string | null;
  readonly values: Outcome;
}

export interface ClaimQuery {
  readonly now: string;
  readonly leaseUntil: string;
  /** The most rows the query reads to choose from. */
  readonly limit: number;
  /** Webhooks left out of the query (at their share here already). */
  readonly excluding: readonly string[];
  /** PostgreSQL: FOR UPDATE SKIP LOCKED, so instances never take the same row. */
  readonly skipLocked: boolean;
}

/** The enabled webhooks of these projects, in a write's transaction: one indexed read. */
export function enabledHooksOf(trx: Transaction<Database>, projects: readonly string[]): Promise<HookToMatch[]> {
  return trx
    .selectFrom("webhooks")
    .select(["id", "project_id", "events", "url", "secret"])
    .where("project_id", "in", projects)
    .where("enabled", "=", 1)
    .execute();
}

/**
 * In one transaction: reads due, unleased deliveries (oldest due first), lets `choose` pick which to take
 * (in the same turn as the read, so it sees the slots as they are now), and leases those, one attempt
 * more each. Answers the leased deliveries.
 */
export function claimDue(
  db: Kysely<Database>,
  query: ClaimQuery,
  choose: (rows: readonly DueRow[]) => readonly string[],
): Promise<Claimed[]> {
  return db.transaction().execute(async (trx) => {
    let due = trx
      .selectFrom("webhook_deliveries")
      .select(["id", "webhook_id"])
      .where("status", "=", "pending")
      .where("next_attempt_at", "<=", query.now)
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", query.now)]))
      // Pings are sent to disabled webhooks too: they are how one checks a receiver is back.
      .where((eb) =>
        eb.or([
          eb("event_type", "=", "ping"),
          eb("webhook_id", "in", eb.selectFrom("webhooks").select("id").where("enabled", "=", 1)),
        ]),
      )
      .orderBy("next_attempt_at")
      .limit(query.limit);
    if (query.excluding.length > 0) due = due.where("webhook_id", "not in", query.excluding);
    if (query.skipLocked) due = due.forUpdate().skipLocked();
    const chosen = choose(await due.execute());
    if (chosen.length === 0) return [];
    await trx
      .updateTable("webhook_deliveries")
      .set({ lease_until: query.leaseUntil, attempts: sql`attempts + 1` })
      .where("id", "in", chosen)
      .execute();
    const rows = await trx
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhooks as w", "w.id", "d.webhook_id")
      .select([
        "d.id",
        "d.webhook_id as webhookId",
        "d.event_id as eventId",
        "d.event_type as eventType",
        "d.payload",
        "d.created_at as createdAt",
        "d.attempts",
        "d.lease_until as leaseUntil",
        "w.url",
        "w.secret",
        "w.project_id as projectId",
      ])
      .where("d.id", "in", chosen)
      .execute();
    return rows.map((row) => ({ ...row, attempts: Number(row.attempts) }));
  });
}

/** Gives a leased delivery back untried (its attempt does not count), if the lease is still ours. */
export async function handBack(db: Kysely<Database>, id: string, lease: string | null): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ lease_until: null, attempts: sql`attempts - 1` })
    .where("id", "=", id)
    .where("lease_until", "=", lease)
    .execute();
}

/**
 * Stores outcomes in one transaction, each only under its own lease: one that lapsed (a stalled process)
 * may have been taken over by another dispatcher, whose outcome must not be overwritten by this late one.
 */
export async function storeOutcomes(db: Kysely<Database>, batch: readonly LeasedOutcome[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const { id, lease, values } of batch) {
      await trx
        .updateTable("webhook_deliveries")
        .set(values)
        .where("id", "=", id)
        .where("lease_until", "=", lease)
        .execute();
    }
  });
}

/** Whether any delivery of the webhook succeeded at or after `since`. */
export async function succeededSince(db: Kysely<Database>, webhookId: string, since: string): Promise<boolean> {
  const success = await db
    .selectFrom("webhook_deliveries")
    .select("id")
    .where("webhook_id", "=", webhookId)
    .where("status", "=", "succeeded")
    .where("finished_at", ">=", since)
    .limit(1)
    .executeTakeFirst();
  return success !== undefined;
}

/** The delivery queue as the metrics show it. */
export interface WebhookQueueState {
  /** Deliveries of enabled webhooks not yet succeeded or given up. */
  readonly pending: number;
  /** When the oldest of them was queued (ms since the epoch); undefined when none waits. */
  readonly oldestPendingAt: number | undefined;
  /** Pending deliveries by webhook id, of the enabled webhooks that have any. */
  readonly pendingByWebhook: ReadonlyMap<string, number>;
}

/** Pending deliveries of enabled webhooks, by webhook, and the oldest one's time (for the gauges). */
export async function queueState(db: Kysely<Database>): Promise<WebhookQueueState> {
  const rows = await db
    .selectFrom("webhook_deliveries")
    .select((eb) => ["webhook_id", eb.fn.countAll<number>().as("count"), eb.fn.min("created_at").as("oldest")])
    .where("status", "=", "pending")
    // A disabled webhook's deliveries wait for it to be turned back on; they are not a backlog.
    .where("webhook_id", "in", (eb) => eb.selectFrom("webhooks").select("id").where("enabled", "=", 1))
    .groupBy("webhook_id")
    .execute();
  const pendingByWebhook = new Map(rows.map((row) => [row.webhook_id, Number(row.count)]));
  const oldest = rows.flatMap((row) => (typeof row.oldest === "string" ? [Date.parse(row.oldest)] : []));
  return {
    pending: [...pendingByWebhook.values()].reduce((sum, n) => sum + n, 0),
    oldestPendingAt: oldest.length > 0 ? Math.min(...oldest) : undefined,
    pendingByWebhook,
  };
}
