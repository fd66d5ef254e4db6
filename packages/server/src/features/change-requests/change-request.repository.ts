import type { ChangeRequestState, ReviewDecision } from "@flagstaff/core";
import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import type { ChangeRequestReviewsTable, ChangeRequestsTable, Database } from "../../db/schema.js";
import { beyondKey, type KeyColumn, keysetPage } from "../../db/keyset.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import type { EventActor } from "../../write-path/domain-events.js";

// The SQL of change requests: the requests, their reviews, and the scheduled ones' claim by the job runner.

type Executor = Kysely<Database> | Transaction<Database>;

/** One change of a request as stored: the flag, its PATCH, and the configuration revision it was made on. */
export interface StoredChange {
  readonly flag: string;
  readonly patch: Record<string, unknown>;
  readonly baseRevision: number;
}

/** A change request as stored. */
export interface StoredChangeRequest {
  readonly id: string;
  readonly projectId: string;
  readonly environment: string;
  readonly title: string;
  readonly description: string;
  readonly state: ChangeRequestState;
  readonly author: EventActor;
  readonly changes: readonly StoredChange[];
  readonly scheduledAt: string | null;
  readonly appliedAt: string | null;
  readonly appliedBy: EventActor | null;
  readonly overrideReason: string | null;
  readonly failureReason: string | null;
  readonly attempts: number;
  readonly nextAttemptAt: string | null;
  readonly leaseUntil: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface StoredReview {
  readonly reviewerId: string;
  readonly reviewer: EventActor;
  readonly decision: ReviewDecision;
  readonly comment: string | null;
  readonly createdAt: string;
}

export interface ChangeRequestFilter {
  readonly projectId: string;
  readonly states?: readonly ChangeRequestState[];
  readonly environment?: string;
  /** A person's id (usr_…) or a key's id. */
  readonly author?: string;
}

/** The id of the person or key behind an actor; null for the service itself. */
export const actorIdOf = (actor: EventActor): string | null =>
  actor.type === "user" ? actor.id : actor.type === "key" ? actor.keyId : null;

const toRequest = (row: Selectable<ChangeRequestsTable>): StoredChangeRequest => ({
  id: row.id,
  projectId: row.project_id,
  environment: row.environment_id,
  title: row.title,
  description: row.description,
  state: row.state as ChangeRequestState,
  author: JSON.parse(row.author) as EventActor,
  changes: JSON.parse(row.changes) as StoredChange[],
  scheduledAt: row.scheduled_at,
  appliedAt: row.applied_at,
  appliedBy: row.applied_by === null ? null : (JSON.parse(row.applied_by) as EventActor),
  overrideReason: row.override_reason,
  failureReason: row.failure_reason,
  attempts: Number(row.attempts),
  nextAttemptAt: row.next_attempt_at,
  leaseUntil: row.lease_until,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toReview = (row: Selectable<ChangeRequestReviewsTable>): StoredReview => ({
  reviewerId: row.reviewer_id,
  reviewer: JSON.parse(row.reviewer) as EventActor,
  decision: row.decision as ReviewDecision,
  comment: row.comment,
  createdAt: row.created_at,
});

const columnsOf = (request: StoredChangeRequest) => ({
  project_id: request.projectId,
  environment_id: request.environment,
  title: request.title,
  description: request.description,
  state: request.state,
  author: JSON.stringify(request.author),
  author_id: actorIdOf(request.author),
  changes: JSON.stringify(request.changes),
  scheduled_at: request.scheduledAt,
  applied_at: request.appliedAt,
  applied_by: request.appliedBy === null ? null : JSON.stringify(request.appliedBy),
  override_reason: request.overrideReason,
  failure_reason: request.failureReason,
  attempts: request.attempts,
  next_attempt_at: request.nextAttemptAt,
  lease_until: request.leaseUntil,
  created_at: request.createdAt,
  updated_at: request.updatedAt,
});

export async function insertChangeRequest(trx: Transaction<Database>, request: StoredChangeRequest): Promise<void> {
  await trx
    .insertInto("change_requests")
    .values({ id: request.id, ...columnsOf(request) })
    .execute();
}

export async function saveChangeRequest(trx: Transaction<Database>, request: StoredChangeRequest): Promise<void> {
  await trx.updateTable("change_requests").set(columnsOf(request)).where("id", "=", request.id).execute();
}

export async function findChangeRequest(
  db: Executor,
  projectId: string,
  id: string,
): Promise<StoredChangeRequest | undefined> {
  const row = await db
    .selectFrom("change_requests")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toRequest(row);
}

/** Newest first. */
const ORDER: readonly KeyColumn[] = [{ ref: "id", descending: true }];

function filtered(db: Executor, filter: ChangeRequestFilter) {
  let q = db.selectFrom("change_requests").where("project_id", "=", filter.projectId);
  if (filter.states !== undefined && filter.states.length > 0) q = q.where("state", "in", [...filter.states]);
  if (filter.environment !== undefined) q = q.where("environment_id", "=", filter.environment);
  if (filter.author !== undefined) q = q.where("author_id", "=", filter.author);
  return q;
}

export async function listChangeRequests(
  db: Executor,
  filter: ChangeRequestFilter,
  page: PageQuery,
): Promise<StoredChangeRequest[]> {
  return (await keysetPage(filtered(db, filter).selectAll(), ORDER, page).execute()).map(toRequest);
}

export async function changeRequestsBeyond(
  db: Executor,
  filter: ChangeRequestFilter,
  side: "before" | "after",
  key: SortKey,
): Promise<boolean> {
  return (await beyondKey(filtered(db, filter).select("id"), ORDER, side, key).executeTakeFirst()) !== undefined;
}

/** The reviews of these requests, by request id, oldest first. */
export async function reviewsOf(db: Executor, ids: readonly string[]): Promise<Map<string, StoredReview[]>> {
  const byRequest = new Map<string, StoredReview[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byRequest;
  const rows = await db
    .selectFrom("change_request_reviews")
    .selectAll()
    .where("change_request_id", "in", [...ids])
    .orderBy("created_at")
    .orderBy("reviewer_id")
    .execute();
  for (const row of rows) byRequest.get(row.change_request_id)?.push(toReview(row));
  return byRequest;
}

/** A reviewer's decision, replacing their earlier one on the same request. */
export async function putReview(trx: Transaction<Database>, requestId: string, review: StoredReview): Promise<void> {
  await trx
    .deleteFrom("change_request_reviews")
    .where("change_request_id", "=", requestId)
    .where("reviewer_id", "=", review.reviewerId)
    .execute();
  await trx
    .insertInto("change_request_reviews")
    .values({
      change_request_id: requestId,
      reviewer_id: review.reviewerId,
      reviewer: JSON.stringify(review.reviewer),
      decision: review.decision,
      comment: review.comment,
      created_at: review.createdAt,
    })
    .execute();
}

/** Forgets every review of a request (its author changed it: it needs a fresh review). */
export async function clearReviews(trx: Transaction<Database>, requestId: string): Promise<void> {
  await trx.deleteFrom("change_request_reviews").where("change_request_id", "=", requestId).execute();
}

/** The requests waiting for a time, per the schedule: scheduled ones, and approved or open ones with a time. */
export async function upcoming(db: Executor, projectId: string, environment?: string): Promise<StoredChangeRequest[]> {
  let q = db
    .selectFrom("change_requests")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("state", "in", ["open", "approved", "scheduled"])
    .where("scheduled_at", "is not", null);
  if (environment !== undefined) q = q.where("environment_id", "=", environment);
  return (await q.orderBy("scheduled_at").orderBy("id").limit(1000).execute()).map(toRequest);
}

/** A scheduled request claimed for applying: its id, project and the lease taken. */
export interface ClaimedRequest {
  readonly id: string;
  readonly projectId: string;
  readonly attempts: number;
  readonly lease: string;
}

/**
 * Claims scheduled requests due at `now` and not leased by a live instance (PostgreSQL: FOR UPDATE SKIP
 * LOCKED, so instances polling together never take the same one), leasing each until `leaseUntil` and
 * counting an attempt. Oldest due first, at most `limit`.
 */
export function claimDueRequests(
  db: Kysely<Database>,
  query: { now: string; leaseUntil: string; limit: number; skipLocked: boolean },
): Promise<ClaimedRequest[]> {
  return db.transaction().execute(async (trx) => {
    let due = trx
      .selectFrom("change_requests")
      .select(["id", "project_id", "attempts"])
      .where("state", "=", "scheduled")
      .where("next_attempt_at", "<=", query.now)
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", query.now)]))
      .orderBy("next_attempt_at")
      .orderBy("id")
      .limit(query.limit);
    if (query.skipLocked) due = due.forUpdate().skipLocked();
    const rows = await due.execute();
    if (rows.length === 0) return [];
    await trx
      .updateTable("change_requests")
      .set({ lease_until: query.leaseUntil, attempts: sql`attempts + 1` })
      .where(
        "id",
        "in",
        rows.map((row) => row.id),
      )
      .execute();
    return rows.map((row) => ({
      id: row.id,
      projectId: row.project_id,
      attempts: Number(row.attempts) + 1,
      lease: query.leaseUntil,
    }));
  });
}

/** Records a failed attempt of a claimed request: tried again at `nextAttemptAt`, the lease given back. */
export async function retryLater(
  db: Kysely<Database>,
  id: string,
  lease: string,
  values: { nextAttemptAt: string; reason: string; at: string },
): Promise<void> {
  await db
    .updateTable("change_requests")
    .set({
      lease_until: null,
      next_attempt_at: values.nextAttemptAt,
      failure_reason: values.reason,
      updated_at: values.at,
    })
    .where("id", "=", id)
    .where("lease_until", "=", lease)
    .execute();
}
