import { CHANGE_REQUEST_CHANGES_MAX, DESCRIPTION_MAX_LENGTH } from "@flagstaff/core";
import type { ApplyResult, ProjectDocument } from "@flagstaff/core/schemas";
import { type Kysely, sql, type Transaction } from "kysely";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { AppError, environmentNotFound, projectNotFound } from "../../kernel/errors.js";
import type { DomainEvent, WriteContext } from "../../write-path/domain-events.js";
import { requireMatch } from "../../write-path/preconditions.js";
import type { WorkOutcome, WriteHooks, Writes } from "../../write-path/unit-of-work.js";
import type { ChangeRequestService } from "../change-requests/change-request.service.js";
import type { EnvironmentService } from "../environments/environment.service.js";
import type { EnvironmentStore } from "../environments/environment.store.js";
import type { FlagService } from "../flags/flag.service.js";
import type { UpdateFlagInput } from "../flags/flag.schemas.js";
import type { SegmentService } from "../segments/segment.service.js";
import { readEnvironments, readProject, readRevision } from "./project-document.repository.js";
import { documentIn } from "./project-document.service.js";
import { type Plan, type PlanStep, planApply, refuseMalformed } from "./project-plan.js";

/** A project's revision as an ETag (what export answers, and If-Match names). */
export const revisionTag = (revision: number) => `"r${revision}"`;

/** What apply is asked: only the plan, deleting what the document lacks, and the revision it was made from. */
export interface ApplyOptions {
  readonly dryRun: boolean;
  readonly prune: boolean;
  readonly ifMatch?: string;
}

/** The writes apply makes through (each feature's own, inside apply's one transaction). */
export interface ApplyWrites {
  readonly flags: Pick<FlagService, "createIn" | "patchIn" | "deleteIn">;
  readonly segments: Pick<SegmentService, "createIn" | "updateIn" | "deleteIn">;
  readonly environments: Pick<EnvironmentService, "updateIn">;
  readonly changeRequests: Pick<ChangeRequestService, "openIn">;
  readonly environmentStore: Pick<EnvironmentStore, "findEnvironment">;
}

/** Thrown out of a dry run's transaction to roll it back with the plan it made. */
class DryRunDone {
  constructor(readonly result: ApplyResult) {}
}

/** `list` in runs of at most `size`. */
function chunks<T>(list: readonly T[], size: number): T[][] {
  const runs: T[][] = [];
  for (let at = 0; at < list.length; at += size) runs.push(list.slice(at, at + size));
  return runs;
}

const NO_HOOKS: WriteHooks = { afterCommit: () => {}, afterRollback: () => {} };
const EVERY_ENVIRONMENT = { environment: null, ownOnly: false } as const;

/**
 * Applies a project's document (docs/flags-as-code.md, "Apply"): plans the changes from the project as it
 * is to the document (project-plan.ts) and makes them in one write, each through its own feature's write,
 * so each is checked and recorded as it would be by its own route (one event per change, one request id).
 * Where an environment requires approvals, its configurations' changes go into one change request instead.
 * A dry run makes the same writes in a transaction it rolls back: its plan is exactly what apply would do,
 * and it is refused exactly where apply would be.
 */
export class ProjectApply {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: Writes,
    private readonly writes: ApplyWrites,
  ) {}

  async apply(
    context: WriteContext,
    projectId: string,
    desired: ProjectDocument,
    options: ApplyOptions,
  ): Promise<ApplyResult> {
    refuseMalformed(projectId, desired);
    try {
      if (options.dryRun) return await this.dryRun(context, projectId, desired, options);
      return await this.work.write(context, projectId, async (trx, hooks) => {
        // The write took the project's next version already: the revision the plan is made from is the one before.
        const base = (await readRevision(trx, projectId)) - 1;
        const made = await this.applyIn(trx, hooks, context, projectId, desired, options, base);
        return {
          result: { ...made.result, revision: made.events.length > 0 ? base + 1 : base },
          events: made.events,
        };
      });
    } catch (error) {
      // Names and ids are checked before each insert: one taken meanwhile, by a write elsewhere, is this.
      if (isUniqueViolation(error)) {
        const segment = /segment/i.test(error instanceof Error ? error.message : "");
        throw new AppError(
          409,
          segment ? "segment_exists" : "flag_exists",
          `A ${segment ? "segment" : "flag"} the document creates was created meanwhile; nothing was applied. Export again and retry.`,
        );
      }
      throw error;
    }
  }

  /** The plan, made in a transaction that is then rolled back. */
  private async dryRun(
    context: WriteContext,
    projectId: string,
    desired: ProjectDocument,
    options: ApplyOptions,
  ): Promise<ApplyResult> {
    try {
      await this.db.transaction().execute(async (trx) => {
        const base = await readRevision(trx, projectId);
        const made = await this.applyIn(trx, NO_HOOKS, context, projectId, desired, options, base);
        throw new DryRunDone({ ...made.result, dryRun: true, changeRequests: [] });
      });
    } catch (error) {
      if (error instanceof DryRunDone) return error.result;
      throw error;
    }
    throw new Error("A dry run ended without its plan.");
  }

  private async applyIn(
    trx: Transaction<Database>,
    hooks: WriteHooks,
    context: WriteContext,
    projectId: string,
    desired: ProjectDocument,
    options: ApplyOptions,
    base: number,
  ): Promise<WorkOutcome<ApplyResult>> {
    const project = await readProject(trx, projectId);
    if (!project) throw projectNotFound(projectId);
    requireMatch(options.ifMatch, revisionTag(base), `Project "${projectId}"`);
    const environments = await readEnvironments(trx, projectId);
    const members = desired.segments.some((s) => s.members !== undefined);
    const current = await documentIn(trx, projectId, project, environments, { members });
    const plan = planApply(current, desired, options.prune);
    if (!context.mayConfigureProtected && plan.steps.some((s) => s.op === "environment")) {
      const which = plan.steps.flatMap((s) => (s.op === "environment" ? [`"${s.id}"`] : [])).join(", ");
      throw new AppError(
        403,
        "forbidden",
        `The document changes the settings of environment ${which}: only the project's admins change environments.`,
      );
    }
    const events: DomainEvent[] = [];
    const pending = new Map<string, { step: Extract<PlanStep, { op: "configure" }> }[]>();
    for (const step of plan.steps) {
      if (step.op === "configure" && step.approval) {
        const list = pending.get(step.environment) ?? [];
        list.push({ step });
        pending.set(step.environment, list);
        continue;
      }
      events.push(...(await this.madeOrExplained(trx, hooks, context, projectId, step, pending)));
    }
    const changeRequests: ApplyResult["changeRequests"] = [];
    for (const [environment, steps] of pending) {
      // A request holds at most CHANGE_REQUEST_CHANGES_MAX changes: more make several, reviewed apart.
      const parts = chunks(
        steps.map((s) => s.step),
        CHANGE_REQUEST_CHANGES_MAX,
      );
      for (const [index, part] of parts.entries()) {
        const opened = await this.openRequest(trx, context, projectId, environment, part, {
          part: index + 1,
          of: parts.length,
        });
        events.push(...opened.events);
        changeRequests.push({ id: opened.result.id, environment, title: opened.result.title });
      }
    }
    return {
      result: { dryRun: false, baseRevision: base, revision: base, changes: plan.changes, changeRequests },
      events,
    };
  }

  /**
   * Makes a step; a variant the document drops that an environment requiring approvals still serves (its
   * change waits for the request this apply opens) is explained as such.
   */
  private async madeOrExplained(
    trx: Transaction<Database>,
    hooks: WriteHooks,
    context: WriteContext,
    projectId: string,
    step: Plan["steps"][number],
    pending: ReadonlyMap<string, readonly { step: Extract<PlanStep, { op: "configure" }> }[]>,
  ): Promise<readonly DomainEvent[]> {
    try {
      return await this.make(trx, hooks, context, projectId, step);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== "variant_in_use" || step.op !== "define-flag") throw error;
      const waiting = [...pending].filter(([, steps]) => steps.some((s) => s.step.name === step.name));
      if (waiting.length === 0) throw error;
      const where = waiting.map(([environment]) => `"${environment}"`).join(", ");
      throw new AppError(
        409,
        "approval_required",
        `Flag "${step.name}": the document drops a variant that environment ${where} still serves, and its changes there wait for approval. Apply the document without dropping the variant, have the change request approved and applied, then drop it. (${error.message})`,
      );
    }
  }

  /** Makes one step of the plan through its feature's write: its events. */
  private async make(
    trx: Transaction<Database>,
    hooks: WriteHooks,
    context: WriteContext,
    projectId: string,
    step: Plan["steps"][number],
  ): Promise<readonly DomainEvent[]> {
    const { flags, segments, environments } = this.writes;
    switch (step.op) {
      case "environment":
        return (await environments.updateIn(trx, context, projectId, step.id, step.input)).events;
      case "create-segment": {
        const { segment } = step;
        const created = await segments.createIn(
          trx,
          projectId,
          { name: segment.name, description: segment.description, conditions: segment.conditions },
          segment.id,
        );
        if (segment.members === undefined || segment.members.length === 0) return created.events;
        const listed = await segments.updateIn(trx, projectId, segment.id, { addActors: segment.members });
        return [...created.events, ...listed.events];
      }
      case "update-segment":
        return (await segments.updateIn(trx, projectId, step.id, step.input)).events;
      case "create-flag":
        return (await flags.createIn(trx, projectId, EVERY_ENVIRONMENT, step.name, step.input)).events;
      case "define-flag":
        return (await flags.patchIn(trx, context, projectId, null, step.name, step.input, { ownOnly: false })).events;
      case "configure": {
        const options = { ownOnly: false, ...(step.plan === undefined ? {} : { plan: step.plan }) };
        return (await flags.patchIn(trx, context, projectId, step.environment, step.name, step.input, options)).events;
      }
      case "delete-flag":
        return (await flags.deleteIn(trx, hooks, context, projectId, EVERY_ENVIRONMENT, step.name)).events;
      case "delete-segment":
        return (await segments.deleteIn(trx, context, projectId, step.id)).events;
    }
  }

  /**
   * Opens the change request of an environment that requires approvals, with its configurations' changes.
   * Each is first made and undone (a savepoint), so a change the request could never apply (a variant or
   * segment that does not exist, targeting the validator refuses) refuses the document now.
   */
  private async openRequest(
    trx: Transaction<Database>,
    context: WriteContext,
    projectId: string,
    environment: string,
    steps: readonly Extract<PlanStep, { op: "configure" }>[],
    numbered: { part: number; of: number },
  ) {
    const trial: WriteContext = { ...context, mayConfigureProtected: true, changeRequest: "trial" };
    await sql`savepoint flagstaff_apply_trial`.execute(trx);
    for (const step of steps) {
      await this.writes.flags.patchIn(trx, trial, projectId, environment, step.name, step.input, { ownOnly: false });
    }
    await sql`rollback to savepoint flagstaff_apply_trial`.execute(trx);
    await sql`release savepoint flagstaff_apply_trial`.execute(trx);
    const found = await this.writes.environmentStore.findEnvironment(trx, projectId, environment);
    if (!found) throw environmentNotFound(environment);
    const flagsNamed = steps.map((s) => s.name);
    const title = `Apply: ${steps.length} ${steps.length === 1 ? "change" : "changes"} in ${environment}${numbered.of > 1 ? ` (${numbered.part} of ${numbered.of})` : ""}`;
    return this.writes.changeRequests.openIn(trx, context, projectId, found, {
      environment,
      title,
      description: `Opened by applying the project's document. Flags: ${flagsNamed.join(", ")}.`.slice(
        0,
        DESCRIPTION_MAX_LENGTH,
      ),
      changes: steps.map((s) => ({ flag: s.name, patch: s.input as UpdateFlagInput })),
    });
  }
}
