import type { Kysely, Transaction } from "kysely";
import { beyondKey, keysetPage } from "../../db/keyset.js";
import type { Database, WebhookDeliveriesTable, WebhooksTable } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import type { Backlog, Delivery, DeliveryStatus, DeliveryWithPayload, WebhookRecord } from "./webhook.schemas.js";

type Executor = Kysely<Database> | Transaction<Database>;

export interface StoredWebhook extends WebhookRecord {
  readonly secret: string;
}

export const toWebhook = (row: WebhooksTable): StoredWebhook => ({
  id: row.id,
  projectId: row.project_id,
  url: row.url,
  events: JSON.parse(row.events) as WebhookRecord["events"],
  description: row.description,
  enabled: row.enabled === 1,
  disabledReason: row.disabled_reason,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  secret: row.secret,
});

/** A webhook without its secret, as the API shows it (but for its backlog, see `backlogs`). */
export function publicWebhook(hook: StoredWebhook): WebhookRecord {
  const { secret: _secret, ...rest } = hook;
  return rest;
}

export async function insertWebhook(trx: Transaction<Database>, hook: StoredWebhook): Promise<void> {
  await trx
    .insertInto("webhooks")
    .values({
      id: hook.id,
      project_id: hook.projectId,
      url: hook.url,
      events: JSON.stringify(hook.events),
      description: hook.description,
      secret: hook.secret,
      enabled: hook.enabled ? 1 : 0,
      disabled_reason: hook.disabledReason,
      created_at: hook.createdAt,
      updated_at: hook.updatedAt,
    })
    .execute();
}

export async function updateWebhook(trx: Transaction<Database>, hook: StoredWebhook): Promise<void> {
  await trx
    .updateTable("webhooks")
    .set({
      url: hook.url,
      events: JSON.stringify(hook.events),
      description: hook.description,
      enabled: hook.enabled ? 1 : 0,
      disabled_reason: hook.disabledReason,
      updated_at: hook.updatedAt,
    })
    .where("id", "=", hook.id)
    .execute();
}

export async function findWebhook(db: Executor, projectId: string, id: string): Promise<StoredWebhook | undefined> {
  const row = await db
    .selectFrom("webhooks")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toWebhook(row);
}

export async function deleteWebhook(trx: Transaction<Database>, id: string): Promise<void> {
  // Its deliveries go with it (foreign key cascade, on in both dialects).
  await trx.deleteFrom("webhooks").where("id", "=", id).execute();
}

export async function listWebhooks(db: Executor, projectId: string, page: PageQuery): Promise<StoredWebhook[]> {
  const query = db.selectFrom("webhooks").selectAll().where("project_id", "=", projectId);
  return (await keysetPage(query, ["id"], page).execute()).map(toWebhook);
}

export async function webhooksBeyond(db: Executor, projectId: string, side: "before" | "after", key: SortKey) {
  const query = db.selectFrom("webhooks").select("id").where("project_id", "=", projectId);
  return (await beyondKey(query, ["id"], side, key).execute()).length > 0;
}

const NO_BACKLOG: Backlog = { pending: 0, failing: 0, oldestPendingAt: null };

/**
 * The backlogs of some webhooks, by id: one grouped read of their pending deliveries, whatever the
 * webhook's state (a disabled webhook's deliveries wait for it to be turned back on). Webhooks with none
 * pending get zeros.
 */
export async function backlogs(db: Executor, ids: readonly string[]): Promise<Map<string, Backlog>> {
  const found = new Map<string, Backlog>(ids.map((id) => [id, NO_BACKLOG]));
  if (ids.length === 0) return found;
  const rows = await db
    .selectFrom("webhook_deliveries")
    .select((eb) => [
      "webhook_id",
      eb.fn.countAll<number>().as("pending"),
      eb.fn.count<number>("last_error").as("failing"),
      eb.fn.min("created_at").as("oldest"),
    ])
    .where("status", "=", "pending")
    .where("webhook_id", "in", ids)
    .groupBy("webhook_id")
    .execute();
  for (const row of rows) {
    found.set(row.webhook_id, {
      pending: Number(row.pending),
      failing: Number(row.failing),
      oldestPendingAt: typeof row.oldest === "string" ? row.oldest : null,
    });
  }
  return found;
}

export const toDelivery = (row: WebhookDeliveriesTable): Delivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  eventType: row.event_type as Delivery["eventType"],
  status: row.status as DeliveryStatus,
  attempts: Number(row.attempts),
  nextAttemptAt: row.status === "pending" ? row.next_attempt_at : null,
  lastAttemptAt: row.last_attempt_at,
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  lastDurationMs: row.last_duration_ms === null ? null : Number(row.last_duration_ms),
  createdAt: row.created_at,
  finishedAt: row.finished_at,
});

export interface NewDelivery {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: string;
  readonly createdAt: string;
  /** Set when the queueing instance claims it at once (it sends it right after the commit). */
  readonly leaseUntil?: string;
}

/** Queues deliveries, due now; a (webhook, event) pair already queued is left as it is. */
export async function insertDeliveries(db: Executor, deliveries: readonly NewDelivery[]): Promise<void> {
  // 15 columns a row: 500 rows stay under every driver's bound-parameter limit.
  for (let i = 0; i < deliveries.length; i += 500) {
    await db
      .insertInto("webhook_deliveries")
      .values(
        deliveries.slice(i, i + 500).map((d) => ({
          id: d.id,
          webhook_id: d.webhookId,
          event_id: d.eventId,
          event_type: d.eventType,
          payload: d.payload,
          status: "pending",
          attempts: d.leaseUntil === undefined ? 0 : 1,
          next_attempt_at: d.createdAt,
          lease_until: d.leaseUntil ?? null,
          last_attempt_at: null,
          last_status_code: null,
          last_error: null,
          last_duration_ms: null,
          created_at: d.createdAt,
          finished_at: null,
        })),
      )
      .onConflict((oc) => oc.columns(["webhook_id", "event_id"]).doNothing())
      .execute();
  }
}

export async function findDelivery(db: Executor, id: string): Promise<Delivery | undefined> {
  const row = await db.selectFrom("webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toDelivery(row);
}

/** One of a webhook's deliveries with the body it sends, parsed. */
export async function findDeliveryWithPayload(
  db: Executor,
  webhookId: string,
  id: string,
): Promise<DeliveryWithPayload | undefined> {
  const row = await db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("webhook_id", "=", webhookId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && { ...toDelivery(row), payload: JSON.parse(row.payload) as Record<string, unknown> };
}

/** A webhook's deliveries, newest first (ids sort by time), optionally of one status. */
export async function listDeliveries(
  db: Executor,
  webhookId: string,
  status: DeliveryStatus | undefined,
  page: PageQuery,
): Promise<Delivery[]> {
  let q = db.selectFrom("webhook_deliveries").selectAll().where("webhook_id", "=", webhookId);
  if (status !== undefined) q = q.where("status", "=", status);
  if (page.direction === "before") q = q.where("id", ">", page.key[0] as string).orderBy("id", "asc");
  else {
    if (page.direction === "after") q = q.where("id", "<", page.key[0] as string);
    q = q.orderBy("id", "desc");
  }
  return (await q.limit(page.limit + 1).execute()).map(toDelivery);
}

export async function deliveriesBeyond(
  db: Executor,
  webhookId: string,
  status: DeliveryStatus | undefined,
  side: "before" | "after",
  key: SortKey,
): Promise<boolean> {
  let q = db.selectFrom("webhook_deliveries").select("id").where("webhook_id", "=", webhookId);
  if (status !== undefined) q = q.where("status", "=", status);
  const row = await q
    .where("id", side === "before" ? ">" : "<", key[0] as string)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Drops finished deliveries (succeeded or failed) that finished before `before`. */
export async function pruneDeliveries(db: Kysely<Database>, before: string): Promise<void> {
  await db.deleteFrom("webhook_deliveries").where("finished_at", "<", before).execute();
}
