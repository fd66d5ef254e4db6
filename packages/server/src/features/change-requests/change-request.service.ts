import type { ChangeRequestState } from "@flagstaff/core";
import type {
  ChangeRequest,
  ChangeRequestPerson,
  CreateChangeRequestInput,
  NewChange,
  Review,
  ReviewInput,
  UpdateChangeRequestInput,
} from "@flagstaff/core/schemas";
import type { Kysely, Transaction } from "kysely";
import { refuseBeyond } from "../../access/environment-scope.js";
import type { PeopleDirectory } from "../../access/roles.js";
import type { Database } from "../../db/schema.js";
import { type Clock, isoTime } from "../../kernel/clock.js";
import { AppError, environmentNotFound, flagNotFound, invalid, projectNotFound } from "../../kernel/errors.js";
import { newChangeRequestId } from "../../kernel/ids.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import type {
  ChangeRequestEventType,
  ChangeRequestRecord,
  DomainEvent,
  EventActor,
  WriteContext,
} from "../../write-path/domain-events.js";
import { requireMatch } from "../../write-path/preconditions.js";
import type { WorkOutcome, Writes } from "../../write-path/unit-of-work.js";
import type { Environment } from "../environments/environment.schemas.js";
import type { EnvironmentStore } from "../environments/environment.store.js";
import { flagTag } from "../flags/flag-presenter.js";
import type { Flag, UpdateFlagInput } from "../flags/flag.schemas.js";
import type { FlagService } from "../flags/flag.service.js";
import {
  type ApprovalPolicy,
  approvalRefusal,
  approvalsOf,
  counts,
  PENDING_STATES,
  reviewedState,
} from "./approvals.js";
import * as repo from "./change-request.repository.js";
import type {
  ChangeRequestFilter,
  StoredChange,
  StoredChangeRequest,
  StoredReview,
} from "./change-request.repository.js";

/** What change requests need of flags: read one in an environment, and PATCH one inside a write (FlagService's). */
export interface FlagChanges extends Pick<FlagService, "patchIn"> {
  find(
    db: Kysely<Database> | Transaction<Database>,
    projectId: string,
    environment: string,
    name: string,
  ): Promise<Flag | undefined>;
}

export const changeRequestNotFound = (id: string) =>
  new AppError(404, "change_request_not_found", `Change request "${id}" does not exist in this project.`);

const wrongState = (request: StoredChangeRequest, what: string) =>
  new AppError(409, "change_request_state", `Change request "${request.id}" is ${request.state}: it cannot ${what}.`);

/** Errors that refuse the caller before anything is tried: they say nothing of the request's changes. */
const REFUSALS = new Set<string>([
  "change_request_state",
  "approval_required",
  "change_request_not_found",
  "project_not_found",
  "forbidden",
]);

/** Thrown out of a dry run's transaction to roll it back once every change was checked. */
class DryRunDone {}

const policyOf = (environment: Environment): ApprovalPolicy => ({
  requiredApprovals: environment.requiredApprovals,
  allowSelfApproval: environment.allowSelfApproval,
  protected: environment.protected,
});

/** A person, key or the service as a change request names them. */
export function personOf(actor: EventActor): ChangeRequestPerson {
  if (actor.type === "user") return { type: "user", id: actor.id, name: actor.name, email: actor.email };
  if (actor.type === "key") return { type: "key", id: actor.keyId, name: actor.keyName };
  return { type: "system", id: null, name: actor.system };
}

const recordOf = (
  request: StoredChangeRequest,
  approvals: number,
  extra: Partial<ChangeRequestRecord> = {},
): ChangeRequestRecord => ({
  title: request.title,
  state: request.state,
  flags: request.changes.map((c) => c.flag),
  scheduledAt: request.scheduledAt,
  approvals,
  ...extra,
});

/** The fields of a flag a PATCH body names, and the flag's current value of each (for the diff). */
function currentValue(flag: Flag, field: string): unknown {
  switch (field) {
    case "addActors":
    case "removeActors":
    case "addSegments":
    case "removeSegments":
      return null;
    default:
      return (flag as unknown as Record<string, unknown>)[field] ?? null;
  }
}

/**
 * Change requests (docs/change-requests.md): changes to flags' configurations in one environment, reviewed
 * by the project's people, and applied together in one write: by hand, at their scheduled time by the
 * job runner (ScheduledChanges), or by a project admin's override. Applying is optimistic: a flag that
 * moved since its change was made puts the request in `conflict`, and nothing changes.
 */
export class ChangeRequestService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: Writes,
    private readonly clock: Clock,
    private readonly people: PeopleDirectory,
    private readonly environments: Pick<EnvironmentStore, "findEnvironment" | "findProject">,
    private readonly flags: FlagChanges,
  ) {}

  async list(filter: ChangeRequestFilter, page: PageQuery): Promise<Page<ChangeRequest>> {
    if (!(await this.environments.findProject(this.db, filter.projectId))) throw projectNotFound(filter.projectId);
    const rows = await repo.listChangeRequests(this.db, filter, page);
    const result = await assemblePage(
      page,
      rows,
      (r) => [r.id],
      (side, key) => repo.changeRequestsBeyond(this.db, filter, side, key),
    );
    return { ...result, data: await this.present(this.db, result.data, false) };
  }

  async get(projectId: string, id: string): Promise<ChangeRequest> {
    const request = await this.find(this.db, projectId, id);
    return (await this.present(this.db, [request], true))[0] as ChangeRequest;
  }

  async create(context: WriteContext, projectId: string, input: CreateChangeRequestInput): Promise<ChangeRequest> {
    refuseBeyond(context.boundTo, input.environment);
    this.refuseBadSchedule(input.scheduledAt);
    refuseDuplicates(input.changes);
    const environment = await this.environmentOf(this.db, projectId, input.environment);
    await this.dryRun(projectId, input.environment, input.changes);
    const request = await this.work.write(context, projectId, (trx) =>
      this.openIn(trx, context, projectId, environment, input),
    );
    return this.get(projectId, request.id);
  }

  /**
   * Opens a request inside a write's transaction, its changes checked already (create's dry run, or an
   * applied project document's own write): its stored form and its event.
   */
  async openIn(
    trx: Transaction<Database>,
    context: WriteContext,
    projectId: string,
    environment: Environment,
    input: CreateChangeRequestInput,
  ): Promise<WorkOutcome<StoredChangeRequest>> {
    const now = isoTime(this.clock.now());
    const changes = await this.based(trx, projectId, input.environment, input.changes);
    const scheduledAt = input.scheduledAt ?? null;
    const state = reviewedState(0, false, policyOf(environment), scheduledAt);
    const request: StoredChangeRequest = {
      id: newChangeRequestId(this.clock.now()),
      projectId,
      environment: input.environment,
      title: input.title,
      description: input.description ?? "",
      state,
      author: context.actor,
      changes,
      scheduledAt,
      appliedAt: null,
      appliedBy: null,
      overrideReason: null,
      failureReason: null,
      attempts: 0,
      nextAttemptAt: state === "scheduled" ? scheduledAt : null,
      leaseUntil: null,
      createdAt: now,
      updatedAt: now,
    };
    await repo.insertChangeRequest(trx, request);
    return { result: request, events: [this.event("change_request.created", null, request, 0)] };
  }

  /** The author changes their request: its reviews are cleared, and it is reviewed afresh. */
  async update(
    context: WriteContext,
    projectId: string,
    id: string,
    input: UpdateChangeRequestInput,
  ): Promise<ChangeRequest> {
    if (input.scheduledAt !== undefined && input.scheduledAt !== null) this.refuseBadSchedule(input.scheduledAt);
    if (input.changes !== undefined) refuseDuplicates(input.changes);
    const current = await this.find(this.db, projectId, id);
    if (input.changes !== undefined) await this.dryRun(projectId, current.environment, input.changes);
    await this.work.write({ ...context, changeRequest: id }, projectId, async (trx) => {
      const request = await this.find(trx, projectId, id);
      refuseBeyond(context.boundTo, request.environment);
      if (repo.actorIdOf(request.author) !== repo.actorIdOf(context.actor) || repo.actorIdOf(context.actor) === null) {
        throw new AppError(403, "forbidden", `Only the author of change request "${id}" changes it.`);
      }
      if (!PENDING_STATES.includes(request.state)) throw wrongState(request, "be changed");
      const environment = await this.environmentOf(trx, projectId, request.environment);
      const reviews = (await repo.reviewsOf(trx, [id])).get(id) ?? [];
      const approvals = approvalsOf(this.people, projectId, request, policyOf(environment), reviews);
      const scheduledAt = input.scheduledAt === undefined ? request.scheduledAt : input.scheduledAt;
      const state = reviewedState(0, false, policyOf(environment), scheduledAt);
      const next: StoredChangeRequest = {
        ...request,
        title: input.title ?? request.title,
        description: input.description ?? request.description,
        changes:
          input.changes === undefined
            ? request.changes
            : await this.based(trx, projectId, request.environment, input.changes),
        scheduledAt,
        state,
        nextAttemptAt: state === "scheduled" ? scheduledAt : null,
        attempts: 0,
        failureReason: null,
        updatedAt: isoTime(this.clock.now()),
      };
      // A changed request is a new one to its reviewers: no approval of the old one carries over.
      await repo.clearReviews(trx, id);
      await repo.saveChangeRequest(trx, next);
      return { result: undefined, events: [this.event("change_request.updated", request, next, 0, approvals)] };
    });
    return this.get(projectId, id);
  }

  /** A person approves or rejects a request; their latest decision is the one that counts. */
  async review(context: WriteContext, projectId: string, id: string, input: ReviewInput): Promise<ChangeRequest> {
    const actor = context.actor;
    if (actor.type !== "user") {
      throw new AppError(403, "forbidden", "Only people review change requests: sign in, or use a personal key.");
    }
    await this.work.write({ ...context, changeRequest: id }, projectId, async (trx) => {
      const request = await this.find(trx, projectId, id);
      refuseBeyond(context.boundTo, request.environment);
      if (!PENDING_STATES.includes(request.state)) throw wrongState(request, "be reviewed");
      const environment = await this.environmentOf(trx, projectId, request.environment);
      const policy = policyOf(environment);
      const refusal = approvalRefusal(this.people, projectId, request, policy, actor.id);
      if (refusal !== undefined) throw new AppError(403, "forbidden", `You may not review this request: ${refusal}.`);
      const review: StoredReview = {
        reviewerId: actor.id,
        reviewer: actor,
        decision: input.decision,
        comment: input.comment ?? null,
        createdAt: isoTime(this.clock.now()),
      };
      const before = (await repo.reviewsOf(trx, [id])).get(id) ?? [];
      const approvalsBefore = approvalsOf(this.people, projectId, request, policy, before);
      await repo.putReview(trx, id, review);
      const reviews = [...before.filter((r) => r.reviewerId !== actor.id), review];
      const approvals = approvalsOf(this.people, projectId, request, policy, reviews);
      const state = reviewedState(
        approvals,
        reviews.some((r) => r.decision === "reject"),
        policy,
        request.scheduledAt,
      );
      const next: StoredChangeRequest = {
        ...request,
        state,
        nextAttemptAt: state === "scheduled" ? request.scheduledAt : null,
        updatedAt: review.createdAt,
      };
      await repo.saveChangeRequest(trx, next);
      return {
        result: undefined,
        events: [
          this.event("change_request.reviewed", request, next, approvals, approvalsBefore, {
            review: { decision: review.decision, comment: review.comment },
          }),
        ],
      };
    });
    return this.get(projectId, id);
  }

  async cancel(context: WriteContext, projectId: string, id: string): Promise<ChangeRequest> {
    await this.work.write({ ...context, changeRequest: id }, projectId, async (trx) => {
      const request = await this.find(trx, projectId, id);
      refuseBeyond(context.boundTo, request.environment);
      const mine = repo.actorIdOf(request.author) === repo.actorIdOf(context.actor);
      if (!mine && !context.mayConfigureProtected) {
        throw new AppError(403, "forbidden", `Only its author or a project admin cancels change request "${id}".`);
      }
      if (!PENDING_STATES.includes(request.state)) throw wrongState(request, "be cancelled");
      const next: StoredChangeRequest = {
        ...request,
        state: "cancelled",
        nextAttemptAt: null,
        updatedAt: isoTime(this.clock.now()),
      };
      await repo.saveChangeRequest(trx, next);
      return { result: undefined, events: [this.event("change_request.cancelled", request, next, 0)] };
    });
    return this.get(projectId, id);
  }

  /**
   * Applies a request now: an approved or scheduled one by anyone who may write to the project; one that is
   * not approved only by a project admin with an override's reason. Answers the applied request; throws
   * (after recording the request's new state) when a flag moved since (409 change_request_conflict) or a
   * change can no longer be made (its error; the request is then failed).
   */
  async apply(
    context: WriteContext,
    projectId: string,
    id: string,
    override?: { readonly reason: string },
  ): Promise<ChangeRequest> {
    const outcome = await this.applyOnce(
      context,
      projectId,
      id,
      (request, approved) => {
        refuseBeyond(context.boundTo, request.environment);
        if (!PENDING_STATES.includes(request.state)) throw wrongState(request, "be applied");
        if (approved) return override === undefined ? "approved" : "override";
        if (override === undefined) {
          throw new AppError(
            409,
            "approval_required",
            `Change request "${id}" is ${request.state}, not approved: it needs its approvals, or a project admin's override ({"override": {"reason": "…"}}).`,
          );
        }
        if (!context.mayConfigureProtected) {
          throw new AppError(403, "forbidden", "Only a project admin applies a change request that is not approved.");
        }
        return "override";
      },
      override?.reason,
    );
    if (outcome.error) throw outcome.error;
    return this.get(projectId, id);
  }

  /**
   * Applies a scheduled request the job runner claimed under `lease`, if it is still scheduled under that
   * lease and still approved by the environment's policy now. Conflicts and failures are recorded on the
   * request; only an error of the database itself is thrown (the job tries again later).
   */
  async applyScheduled(context: WriteContext, projectId: string, id: string, lease: string): Promise<void> {
    try {
      await this.applyOnce(context, projectId, id, (request, approved) => {
        if (request.state !== "scheduled" || request.leaseUntil !== lease) return "skip";
        return approved ? "approved" : "unapproved";
      });
    } catch (error) {
      // Recorded on the request (failed) already; nothing to try again.
      if (error instanceof AppError && error.status < 500) return;
      throw error;
    }
  }

  /** Marks a claimed scheduled request failed after its last attempt (the database kept failing it). */
  async giveUp(context: WriteContext, projectId: string, id: string, lease: string, reason: string): Promise<void> {
    await this.work.write({ ...context, changeRequest: id }, projectId, async (trx) => {
      const request = await repo.findChangeRequest(trx, projectId, id);
      if (request?.state !== "scheduled" || request.leaseUntil !== lease) return { result: undefined, events: [] };
      return this.failIn(trx, request, reason);
    });
  }

  /**
   * The schedule's change requests: those with a time that are still waiting (open, approved or
   * scheduled), soonest first.
   */
  async upcoming(projectId: string, environment?: string): Promise<ChangeRequest[]> {
    if (!(await this.environments.findProject(this.db, projectId))) throw projectNotFound(projectId);
    return this.present(this.db, await repo.upcoming(this.db, projectId, environment), false);
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * Applies a request in one write. `decide` sees the request (read in the write, after the project's
   * lock) and whether it is approved now, and says what to do: apply it (approved, or by override),
   * record that its time came unapproved, or nothing. A change that cannot be made rolls the write back;
   * the request is then marked failed in a second write, and the error answered.
   */
  private async applyOnce(
    context: WriteContext,
    projectId: string,
    id: string,
    decide: (request: StoredChangeRequest, approved: boolean) => "approved" | "override" | "unapproved" | "skip",
    overrideReason?: string,
  ): Promise<{ error?: AppError }> {
    const ctx: WriteContext = { ...context, changeRequest: id };
    try {
      return await this.work.write<{ error?: AppError }>(ctx, projectId, async (trx) => {
        const request = await this.find(trx, projectId, id);
        const environment = await this.environmentOf(trx, projectId, request.environment);
        const policy = policyOf(environment);
        const reviews = (await repo.reviewsOf(trx, [id])).get(id) ?? [];
        const approvals = approvalsOf(this.people, projectId, request, policy, reviews);
        const approved = approvals >= policy.requiredApprovals && !reviews.some((r) => r.decision === "reject");
        const decision = decide(request, approved);
        if (decision === "skip") return { result: {}, events: [] };
        if (decision === "unapproved") {
          const outcome = await this.failIn(
            trx,
            request,
            `not approved when its time came: ${approvals} of ${policy.requiredApprovals} approvals`,
          );
          return { result: {}, events: outcome.events };
        }
        // Every flag as the request found it, or the request is in conflict: checked before any change.
        for (const change of request.changes) {
          const flag = await this.flags.find(trx, projectId, request.environment, change.flag);
          if (flag === undefined) {
            const outcome = await this.failIn(trx, request, `flag "${change.flag}" no longer exists`);
            return { result: { error: flagNotFound(change.flag) }, events: outcome.events };
          }
          if (flag.revision !== change.baseRevision) {
            const next = this.settled(request, "conflict", {
              failureReason: `flag "${change.flag}" changed since the request was made (revision ${change.baseRevision}, now ${flag.revision})`,
            });
            await repo.saveChangeRequest(trx, next);
            const error = new AppError(
              409,
              "change_request_conflict",
              `Flag "${change.flag}" changed since change request "${id}" was made; nothing was applied, and the request is now in conflict. Open a new request against the flag as it is.`,
            );
            return {
              result: { error },
              events: [this.event("change_request.conflict", request, next, approvals, approvals)],
            };
          }
        }
        // Approved by the environment's policy (or overridden by a project admin): the changes pass its
        // approval gate, and a protected environment's guard (its approvals were its admins').
        const applying: WriteContext = { ...ctx, mayConfigureProtected: true };
        const events: DomainEvent[] = [];
        for (const change of request.changes) {
          const outcome = await this.flags.patchIn(
            trx,
            applying,
            projectId,
            request.environment,
            change.flag,
            change.patch as UpdateFlagInput,
            { ownOnly: false },
          );
          events.push(...outcome.events);
        }
        const overridden = decision === "override";
        const next = this.settled(request, "applied", {
          appliedAt: isoTime(this.clock.now()),
          appliedBy: context.actor,
          overrideReason: overridden ? (overrideReason ?? null) : null,
          failureReason: null,
        });
        await repo.saveChangeRequest(trx, next);
        const extra = overridden && overrideReason !== undefined ? { overrideReason } : {};
        events.push(this.event("change_request.applied", request, next, approvals, approvals, extra));
        if (overridden)
          events.push(this.event("change_request.overridden", request, next, approvals, approvals, extra));
        return { result: {}, events };
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      // The change can no longer be made (a variant gone, a segment deleted, targeting now refused): the
      // write rolled back; the request records why, in a write of its own.
      if (!REFUSALS.has(error.code)) {
        await this.work.write(ctx, projectId, async (trx) => {
          const request = await repo.findChangeRequest(trx, projectId, id);
          if (!request || !PENDING_STATES.includes(request.state)) return { result: undefined, events: [] };
          return this.failIn(trx, request, error.message);
        });
      }
      throw error;
    }
  }

  private async failIn(
    trx: Transaction<Database>,
    request: StoredChangeRequest,
    reason: string,
  ): Promise<WorkOutcome<undefined>> {
    const next = this.settled(request, "failed", { failureReason: reason });
    await repo.saveChangeRequest(trx, next);
    return {
      result: undefined,
      events: [this.event("change_request.failed", request, next, 0, 0, { failureReason: reason })],
    };
  }

  /** A request in a final state: no longer due, its lease given back. */
  private settled(
    request: StoredChangeRequest,
    state: ChangeRequestState,
    fields: Partial<StoredChangeRequest>,
  ): StoredChangeRequest {
    return {
      ...request,
      ...fields,
      state,
      nextAttemptAt: null,
      leaseUntil: null,
      updatedAt: isoTime(this.clock.now()),
    };
  }

  private event(
    type: "change_request.created",
    before: null,
    after: StoredChangeRequest,
    approvals: number,
  ): DomainEvent;
  private event(
    type: ChangeRequestEventType,
    before: StoredChangeRequest,
    after: StoredChangeRequest,
    approvals: number,
    approvalsBefore?: number,
    extra?: Partial<ChangeRequestRecord>,
  ): DomainEvent;
  private event(
    type: "change_request.created" | ChangeRequestEventType,
    before: StoredChangeRequest | null,
    after: StoredChangeRequest,
    approvals: number,
    approvalsBefore = approvals,
    extra: Partial<ChangeRequestRecord> = {},
  ): DomainEvent {
    const target = { kind: "change_request", id: after.id, name: after.title } as const;
    const common = { projectId: after.projectId, environment: after.environment, target };
    if (type === "change_request.created" || before === null) {
      return { type: "change_request.created", ...common, before: null, after: recordOf(after, approvals) };
    }
    return {
      type,
      ...common,
      before: recordOf(before, approvalsBefore),
      after: recordOf(after, approvals, extra),
    };
  }

  private async find(
    db: Kysely<Database> | Transaction<Database>,
    projectId: string,
    id: string,
  ): Promise<StoredChangeRequest> {
    const request = await repo.findChangeRequest(db, projectId, id);
    if (request) return request;
    if (!(await this.environments.findProject(db, projectId))) throw projectNotFound(projectId);
    throw changeRequestNotFound(id);
  }

  private async environmentOf(
    db: Kysely<Database> | Transaction<Database>,
    projectId: string,
    id: string,
  ): Promise<Environment> {
    const environment = await this.environments.findEnvironment(db, projectId, id);
    if (environment) return environment;
    if (!(await this.environments.findProject(db, projectId))) throw projectNotFound(projectId);
    throw environmentNotFound(id);
  }

  private refuseBadSchedule(at: string | undefined): void {
    if (at === undefined) return;
    if (Date.parse(at) <= this.clock.now()) {
      throw invalid("scheduledAt must be in the future.", [{ path: "/scheduledAt", message: "must be in the future" }]);
    }
  }

  /** The changes with the revision of each flag now (checked against `ifMatch` where given). */
  private async based(
    trx: Transaction<Database>,
    projectId: string,
    environment: string,
    changes: readonly NewChange[],
  ): Promise<StoredChange[]> {
    const based: StoredChange[] = [];
    for (const change of changes) {
      const flag = await this.flags.find(trx, projectId, environment, change.flag);
      if (!flag) throw flagNotFound(change.flag);
      requireMatch(change.ifMatch, flagTag(flag), `Flag "${change.flag}"`);
      based.push({ flag: change.flag, patch: change.patch as Record<string, unknown>, baseRevision: flag.revision });
    }
    return based;
  }

  /**
   * Makes every change in a transaction that is then rolled back: a request whose changes could not be
   * applied now (an unknown flag, segment or variant, targeting the validator refuses) is refused at once,
   * with the error its PATCH would answer, rather than found to fail when it is applied.
   */
  private async dryRun(projectId: string, environment: string, changes: readonly NewChange[]): Promise<void> {
    const context: WriteContext = {
      actor: { type: "system", system: "scheduler" },
      requestId: null,
      mayConfigureProtected: true,
      boundTo: null,
      changeRequest: "dry-run",
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const change of changes) {
          await this.flags.patchIn(trx, context, projectId, environment, change.flag, change.patch as UpdateFlagInput, {
            ownOnly: false,
          });
        }
        throw new DryRunDone();
      });
    } catch (error) {
      if (error instanceof DryRunDone) return;
      throw error;
    }
  }

  /** Requests as the API answers them: reviews and approvals counted now, and (in detail) each change's diff. */
  private async present(
    db: Kysely<Database> | Transaction<Database>,
    requests: readonly StoredChangeRequest[],
    detailed: boolean,
  ): Promise<ChangeRequest[]> {
    const reviews = await repo.reviewsOf(
      db,
      requests.map((r) => r.id),
    );
    const environments = new Map<string, Environment | undefined>();
    const out: ChangeRequest[] = [];
    for (const request of requests) {
      const key = `${request.projectId}\u0000${request.environment}`;
      if (!environments.has(key))
        environments.set(key, await this.environments.findEnvironment(db, request.projectId, request.environment));
      const environment = environments.get(key);
      const policy: ApprovalPolicy = environment
        ? policyOf(environment)
        : { requiredApprovals: 0, allowSelfApproval: false, protected: false };
      const mine = reviews.get(request.id) ?? [];
      const presentedReviews: Review[] = mine.map((review) => ({
        reviewer: personOf(review.reviewer),
        decision: review.decision,
        comment: review.comment,
        createdAt: review.createdAt,
        counts: counts(this.people, request.projectId, request, policy, review),
      }));
      const changes = [];
      for (const change of request.changes) {
        if (!detailed) {
          changes.push({ flag: change.flag, patch: change.patch, baseRevision: change.baseRevision });
          continue;
        }
        const flag = await this.flags.find(db, request.projectId, request.environment, change.flag);
        const diff = flag
          ? Object.entries(change.patch)
              .map(([field, proposed]) => ({ field, current: currentValue(flag, field), proposed }))
              .filter((d) => JSON.stringify(d.current) !== JSON.stringify(d.proposed))
          : [];
        changes.push({
          flag: change.flag,
          patch: change.patch,
          baseRevision: change.baseRevision,
          diff,
          stale: flag === undefined || flag.revision !== change.baseRevision,
        });
      }
      out.push({
        id: request.id,
        projectId: request.projectId,
        environment: request.environment,
        title: request.title,
        description: request.description,
        state: request.state,
        author: personOf(request.author),
        changes,
        scheduledAt: request.scheduledAt,
        requiredApprovals: policy.requiredApprovals,
        approvals: presentedReviews.filter((r) => r.counts).length,
        reviews: presentedReviews,
        appliedAt: request.appliedAt,
        appliedBy: request.appliedBy === null ? null : personOf(request.appliedBy),
        overrideReason: request.overrideReason,
        failureReason: request.failureReason,
        createdAt: request.createdAt,
        updatedAt: request.updatedAt,
      });
    }
    return out;
  }
}

/** One change per flag: two for one flag would make the second's base revision a lie. */
function refuseDuplicates(changes: readonly NewChange[]): void {
  const seen = new Set<string>();
  const problems = [];
  for (const [index, change] of changes.entries()) {
    if (seen.has(change.flag))
      problems.push({ path: `/changes/${index}/flag`, message: `flag "${change.flag}" is changed twice` });
    seen.add(change.flag);
  }
  if (problems.length > 0) throw invalid("A change request changes each flag at most once.", problems);
}
