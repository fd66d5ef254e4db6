import {
  defaultVariants,
  nextPlan,
  type FlagTargeting,
  type RolloutPlan,
  validateConfiguration,
  validateVariants,
  variantsOf,
} from "@flagstaff/core";
import type { Kysely, Transaction } from "kysely";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import { type Clock, isoTime } from "../../kernel/clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import {
  AppError,
  environmentNotFound,
  type FieldError,
  flagNotFound,
  invalid,
  projectNotFound,
  segmentNotFound,
} from "../../kernel/errors.js";
import { newId } from "../../kernel/ids.js";
import { assemblePage, type Page, type PageQuery, toPageQuery } from "../../kernel/pagination.js";
import { requireMatch } from "../../write-path/preconditions.js";
import type { WorkOutcome, WriteHooks, Writes } from "../../write-path/unit-of-work.js";
import type { Membership } from "../actors/member-lists.js";
import { refuseProtected, refuseUnapproved } from "../environments/environment-guard.js";
import type { DomainEvent, WriteContext } from "../../write-path/domain-events.js";
import { DEFAULT_STALE_SETTINGS, outlived, type StaleSettings } from "./stale-rules.js";
import { flagArchived } from "./flag-archive.js";
import { FlagPresenter, flagTag, type PendingChecks } from "./flag-presenter.js";
import {
  checkTargeting,
  flagState,
  refuseBoundBeyondOwn,
  sameJSON,
  saveLinks,
  servingChanged,
  target,
  updateRecord,
} from "./flag-writes.js";
import { flagOrder } from "./flag-list.repository.js";
import { configIdOf, flagRepository } from "./flag.repository.js";
import type { CreateFlagInput, Flag, FlagFilter, FlagSort, UpdateFlagInput } from "./flag.schemas.js";
import type { FlagStore } from "./flag.store.js";
import { refuseProblems } from "../../db/targeting.js";

// A flag's create, read, update, delete and lists the database decides. Its copy between environments is
// flag-copy.ts; its explanation and the lists the engine decides are the read model's
// (features/evaluation/explain.ts and flag-listing.ts); what the writes share is flag-writes.ts.

const flagExists = (name: string, projectId: string) =>
  new AppError(409, "flag_exists", `Flag "${name}" already exists in project "${projectId}".`);

const unique = (ids: readonly string[] | undefined): string[] => [...new Set(ids ?? [])];

/** An id both added and removed in one request is a contradiction, refused before anything is done. */
function contradictions(add: string[], remove: string[], field: string): FieldError[] {
  const removing = new Set(remove);
  return add
    .filter((id) => removing.has(id))
    .map((id) => ({ path: `/${field}`, message: `"${id}" is both added and removed` }));
}

/**
 * A new flag's targeting, the same in every environment: its type and variants, and the variants it
 * serves (by default the first and the second; boolean: on and off), no rules, no prerequisites.
 */
function creationTargeting(name: string, input: CreateFlagInput): FlagTargeting {
  const type = input.type ?? "boolean";
  if (type === "boolean" && input.variants !== undefined) {
    throw invalid(`Flag "${name}" is boolean: its variants are fixed (on and off).`, [
      { path: "/variants", message: "a boolean flag declares no variants" },
    ]);
  }
  refuseProblems(validateVariants(type, input.variants), `Flag "${name}" cannot be created so`);
  const variants = type === "boolean" ? variantsOf({ type }) : (input.variants as Flag["variants"]);
  const defaults = defaultVariants(type, variants);
  const targeting: FlagTargeting = {
    type,
    variants,
    onVariant: input.onVariant ?? defaults.onVariant,
    offVariant: input.offVariant ?? defaults.offVariant,
    rules: [],
    prerequisites: [],
  };
  refuseProblems(validateConfiguration({ name, ...targeting }), `Flag "${name}" cannot be created so`);
  return targeting;
}

export class FlagService {
  private readonly presenter: FlagPresenter;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: Writes,
    private readonly checks: PendingChecks,
    private readonly clock: Clock,
    private readonly store: FlagStore = flagRepository,
    /** The stale rules' settings: a PATCH of a flag's kind or permanence decides its lifetime rule at once. */
    private readonly stale: StaleSettings = DEFAULT_STALE_SETTINGS,
  ) {
    this.presenter = new FlagPresenter(checks, clock, store);
  }

  /**
   * Creates a flag: disabled in every environment. The answer shows it in `environment` (null: the
   * project's default).
   */
  async create(
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    input: CreateFlagInput,
  ): Promise<Flag> {
    try {
      return await this.work.write(context, projectId, (trx) => this.createIn(trx, projectId, scope, name, input));
    } catch (error) {
      if (isUniqueViolation(error)) throw flagExists(name, projectId);
      throw error;
    }
  }

  /**
   * A flag's create inside a write's transaction (its own route, or an applied project document): its
   * result and its event.
   */
  async createIn(
    trx: Transaction<Database>,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    input: CreateFlagInput,
  ): Promise<WorkOutcome<Flag>> {
    const { environment, ownOnly } = scope;
    const environments = await this.store.listEnvironments(trx, projectId);
    if (environments.length === 0) throw projectNotFound(projectId);
    const shown = environment ?? environments.find((e) => e.default)?.id ?? (environments[0]?.id as string);
    if (!environments.some((e) => e.id === shown)) throw environmentNotFound(shown);
    const taken = await this.store.findFlag(trx, projectId, shown, name);
    if (taken?.archived) {
      throw new AppError(
        409,
        "flag_exists",
        `Flag "${name}" is archived in project "${projectId}": it keeps its name. Restore it, or delete it for good to take the name.`,
      );
    }
    if (taken) throw flagExists(name, projectId);
    const now = isoTime(this.clock.now());
    const id = newId("flg");
    const targeting = creationTargeting(name, input);
    const flag: Flag = {
      id,
      projectId,
      name,
      description: input.description ?? "",
      status: "disabled",
      percentageActors: 0,
      percentageCalls: 0,
      createdAt: now,
      updatedAt: now,
      latestCheckedAt: null,
      statusChangedAt: now,
      actorsCount: 0,
      segmentsCount: 0,
      environment: shown,
      environments: {},
      revision: 1,
      configId: configIdOf(id, shown),
      plan: null,
      kind: input.kind ?? "release",
      permanent: input.permanent ?? false,
      stale: false,
      staleReason: null,
      staleSince: null,
      archived: false,
      archivedAt: null,
      ...(targeting as Pick<Flag, keyof FlagTargeting>),
    };
    await this.store.insertFlag(
      trx,
      flag,
      environments.map((e) => e.id),
    );
    return {
      result: await this.presenter.presentOne(trx, flag, ownOnly),
      events: [{ type: "flag.created", projectId, target: target(flag), before: null, after: flagState(flag) }],
    };
  }

  async get(projectId: string, scope: EnvironmentScope, name: string): Promise<Flag> {
    const id = await this.store.resolveEnvironment(this.db, projectId, scope.environment);
    const flag = await this.store.findFlag(this.db, projectId, id, name);
    if (!flag) throw flagNotFound(name);
    return this.presenter.presentOne(this.db, flag, scope.ownOnly);
  }

  /** Changes a flag; with `ifMatch` (an If-Match header), only if it still has one of those ETags. */
  async update(
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    input: UpdateFlagInput,
    ifMatch?: string,
  ): Promise<Flag> {
    // The caller's comment says why: it rides on the write's events into the history and webhooks.
    const commented = input.comment === undefined ? context : { ...context, comment: input.comment };
    return this.work.write(commented, projectId, (trx) =>
      this.patchIn(trx, context, projectId, scope.environment, name, input, { ifMatch, ownOnly: scope.ownOnly }),
    );
  }

  /**
   * A flag's PATCH inside a write's transaction (the flag's own route, or an applied change request, which
   * makes several in one write): its result and its events, none when it changes nothing. The environment
   * (null: the project's default) must exist; the flag too.
   */
  async patchIn(
    trx: Transaction<Database>,
    context: WriteContext,
    projectId: string,
    environment: string | null,
    name: string,
    input: UpdateFlagInput,
    options: {
      readonly ifMatch?: string;
      readonly ownOnly: boolean;
      /** The timed rollout exactly as given, its pause included (an applied project document's); null: none. */
      readonly plan?: RolloutPlan | null;
    },
  ): Promise<WorkOutcome<Flag>> {
    const { ifMatch, ownOnly } = options;
    const addActors = unique(input.addActors);
    const removeActors = unique(input.removeActors);
    const addSegments = unique(input.addSegments);
    const removeSegments = unique(input.removeSegments);
    const problems = [
      ...contradictions(addActors, removeActors, "addActors"),
      ...contradictions(addSegments, removeSegments, "addSegments"),
    ];
    if (problems.length > 0) throw invalid("An id cannot be added and removed in the same request.", problems);
    const environmentId = await this.store.resolveEnvironment(trx, projectId, environment);
    const flag = await this.store.findFlag(trx, projectId, environmentId, name);
    if (!flag) throw flagNotFound(name);
    if (flag.archived) throw flagArchived(name);
    requireMatch(ifMatch, flagTag(flag), `Flag "${name}"`);
    if (addSegments.length > 0) {
      const found = await this.store.existingSegmentIds(trx, projectId, addSegments);
      const missing = addSegments.find((id) => !found.has(id));
      if (missing !== undefined) throw segmentNotFound(missing);
    }

    const actorsNow = await this.store.attachedActors(trx, flag.configId, [...addActors, ...removeActors]);
    const segmentsNow = await this.store.attachedSegments(trx, flag.configId, [...addSegments, ...removeSegments]);
    const delta = {
      addActors: addActors.filter((id) => !actorsNow.has(id)),
      removeActors: removeActors.filter((id) => actorsNow.has(id)),
      addSegments: addSegments.filter((id) => !segmentsNow.has(id)),
      removeSegments: removeSegments.filter((id) => segmentsNow.has(id)),
    };
    const next: Flag = {
      ...flag,
      description: input.description ?? flag.description,
      status: input.status ?? flag.status,
      percentageActors: input.percentageActors ?? flag.percentageActors,
      percentageCalls: input.percentageCalls ?? flag.percentageCalls,
      variants: (input.variants as Flag["variants"] | undefined) ?? flag.variants,
      onVariant: input.onVariant ?? flag.onVariant,
      offVariant: input.offVariant ?? flag.offVariant,
      rules: (input.rules as Flag["rules"] | undefined) ?? flag.rules,
      prerequisites: (input.prerequisites as Flag["prerequisites"] | undefined) ?? flag.prerequisites,
      plan:
        options.plan !== undefined
          ? options.plan
          : input.rolloutPlan === undefined
            ? flag.plan
            : input.rolloutPlan === null
              ? null
              : nextPlan(input.rolloutPlan, flag.plan, this.clock.now()),
      kind: input.kind ?? flag.kind,
      permanent: input.permanent ?? flag.permanent,
    };
    const lifecycleChanged = next.kind !== flag.kind || next.permanent !== flag.permanent;
    const variantsChanged = !sameJSON(next.variants, flag.variants);
    // Decided once: whether the targeting changes (to check it) and whether this configuration does.
    const servingChanges = servingChanged(next, flag);
    const targetingChanged = variantsChanged || servingChanges;
    // Configurations that serve the default variants go on serving the same keys whatever the new list's order.
    if (variantsChanged) await this.store.pinDefaultVariants(trx, flag.id, defaultVariants(flag.type, flag.variants));
    if (targetingChanged) {
      await checkTargeting(
        this.store,
        trx,
        projectId,
        environmentId,
        next,
        variantsChanged ? flag.variants : undefined,
      );
    }
    const fieldsChanged =
      targetingChanged ||
      lifecycleChanged ||
      next.description !== flag.description ||
      next.status !== flag.status ||
      next.percentageActors !== flag.percentageActors ||
      next.percentageCalls !== flag.percentageCalls;
    const membershipChanged = Object.values(delta).some((ids) => ids.length > 0);
    // A request that changes nothing writes nothing: no event, updatedAt and the version stay.
    if (!fieldsChanged && !membershipChanged)
      return { result: await this.presenter.presentOne(trx, flag, ownOnly), events: [] };
    // The definition (description, variants) is every environment's; the rest is this one's configuration.
    const configurationChanged =
      membershipChanged ||
      next.status !== flag.status ||
      next.percentageActors !== flag.percentageActors ||
      next.percentageCalls !== flag.percentageCalls ||
      servingChanges;
    if (configurationChanged) {
      await refuseProtected(this.store, trx, context, projectId, environmentId);
      await refuseUnapproved(this.store, trx, context, projectId, environmentId);
    }
    if (variantsChanged) {
      // A variant's value is served wherever a configuration names it: changing it changes what those
      // environments serve (a key dropped is served nowhere: checkTargeting refused it otherwise).
      const before = new Map(flag.variants.map((v) => [v.key, JSON.stringify(v.value)]));
      const changed = next.variants.filter((v) => before.has(v.key) && before.get(v.key) !== JSON.stringify(v.value));
      const keys = new Set(changed.map((v) => v.key));
      const serving = await this.store.environmentsServing(trx, flag.id, keys);
      const what = [...keys].map((key) => `"${key}"`).join(", ");
      await refuseProtected(
        this.store,
        trx,
        context,
        projectId,
        serving,
        `Changing the value of ${keys.size === 1 ? "variant" : "variants"} ${what}`,
      );
    }

    const now = isoTime(this.clock.now());
    next.updatedAt = now;
    if (next.status !== flag.status) next.statusChangedAt = now;
    next.revision = flag.revision + 1;
    next.actorsCount = flag.actorsCount + delta.addActors.length - delta.removeActors.length;
    next.segmentsCount = flag.segmentsCount + delta.addSegments.length - delta.removeSegments.length;
    await this.store.saveConfiguration(trx, next);
    if (lifecycleChanged) await this.store.saveLifecycle(trx, next);
    if (next.description !== flag.description) await this.store.saveDescription(trx, next);
    if (variantsChanged) await this.store.saveVariants(trx, next);
    const staleEvents = lifecycleChanged ? await this.recheckLifetime(trx, next, flag) : [];
    await this.store.ensureActors(trx, projectId, delta.addActors, now);
    await saveLinks(this.store, trx, next, delta, now);
    const after = updateRecord(next, delta);
    return {
      result: await this.presenter.presentOne(trx, next, ownOnly),
      events: [
        {
          type: "flag.updated",
          projectId,
          environment: environmentId,
          target: target(next),
          before: flagState(flag),
          after,
        },
        ...staleEvents,
      ],
    };
  }

  /**
   * A flag's kind or permanence changed: its lifetime rule is decided now (stale-rules.ts), the others
   * stay as the stale-rules job last found them, unless the flag is now permanent (never stale). Found
   * stale now, it records its `flag.stale` event with the write.
   */
  private async recheckLifetime(trx: Transaction<Database>, next: Flag, flag: Flag): Promise<DomainEvent[]> {
    const now = this.clock.now();
    const lifetime = outlived(
      { kind: next.kind, permanent: next.permanent, createdAt: Date.parse(next.createdAt) },
      now,
      this.stale,
    );
    const keep = next.permanent || flag.staleReason === "lifetime" ? null : flag.staleReason;
    const reason = keep ?? lifetime?.reason ?? null;
    if (reason === flag.staleReason) return [];
    const since = reason === null ? null : (flag.staleSince ?? isoTime(now));
    await this.store.saveStale(trx, flag.id, reason, since);
    next.stale = reason !== null;
    next.staleReason = reason;
    next.staleSince = since;
    if (flag.staleReason !== null || lifetime === null || reason !== "lifetime") return [];
    return [
      {
        type: "flag.stale",
        projectId: flag.projectId,
        target: target(flag),
        before: null,
        after: { reason: "lifetime", since: since as string, detail: lifetime.detail },
      },
    ];
  }

  /**
   * Deletes a flag with its actor and segment links in every environment; a new flag of the same name
   * starts clean. A key bound to an environment may delete only while its project has no other.
   */
  async delete(
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    ifMatch?: string,
  ): Promise<void> {
    await this.work.write(context, projectId, (trx, hooks) =>
      this.deleteIn(trx, hooks, context, projectId, scope, name, ifMatch),
    );
  }

  /** A flag's delete inside a write's transaction (its own route, or an applied project document). */
  async deleteIn(
    trx: Transaction<Database>,
    hooks: WriteHooks,
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    ifMatch?: string,
  ): Promise<WorkOutcome<undefined>> {
    const environmentId = await this.store.resolveEnvironment(trx, projectId, scope.environment);
    const flag = await this.store.findFlag(trx, projectId, environmentId, name);
    if (!flag) throw flagNotFound(name);
    // Deleting a flag deletes its configuration in every environment.
    await refuseBoundBeyondOwn(this.store, trx, scope, projectId, environmentId, `Deleting flag "${name}"`);
    requireMatch(ifMatch, flagTag(flag), `Flag "${name}"`);
    // The flag stops being served in every environment, protected ones included.
    const environments = (await this.store.listEnvironments(trx, projectId)).map((e) => e.id);
    await refuseProtected(this.store, trx, context, projectId, environments, `Deleting flag "${name}"`);
    await this.store.deleteFlag(trx, flag.id);
    hooks.afterCommit(() => this.checks.forget(flag.id));
    return {
      result: undefined,
      events: [{ type: "flag.deleted", projectId, target: target(flag), before: flagState(flag), after: null }],
    };
  }

  /** The actors attached to a flag directly in an environment, by actor id, optionally searched. */
  async listActors(
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    q: string | undefined,
    page: PageQuery,
  ): Promise<Page<Membership>> {
    const id = await this.store.resolveEnvironment(this.db, projectId, scope.environment);
    const flag = await this.store.findFlag(this.db, projectId, id, name);
    if (!flag) throw flagNotFound(name);
    return this.store.listFlagActors(this.db, flag.configId, q, page);
  }

  /**
   * A page of the project's flags in the given order, filtered; with `withTotal`, also how many match.
   * The name order keeps the cursors it always had (the name alone); every other order's cursors start
   * with the order's own name, so a cursor from one order is refused by another instead of misleading it.
   * Status, sort times and counts are those of the scope's environment.
   */
  async list(
    projectId: string,
    scope: EnvironmentScope,
    filter: FlagFilter,
    paging: { limit?: number; before?: string; after?: string },
    sort: FlagSort = "name",
    withTotal = false,
  ): Promise<Page<Flag> & { total?: number }> {
    const order = flagOrder(sort);
    const tagged = sort !== "name";
    const parsed = toPageQuery(paging, order.columns.length + (tagged ? 1 : 0));
    let page = parsed;
    if (tagged && parsed.direction !== "first") {
      const [token, ...key] = parsed.key;
      if (token !== sort) {
        const parameter = parsed.direction;
        throw invalid(`The ${parameter} cursor belongs to another sort order than sort=${sort}.`, [
          { path: `/query/${parameter}`, message: "must be a cursor from a previous page of the same sort" },
        ]);
      }
      page = { ...parsed, key };
    }
    const environment = await this.store.resolveEnvironment(this.db, projectId, scope.environment);
    const rows = await this.store.listFlags(this.db, projectId, environment, filter, page, order);
    const result = await assemblePage(
      page,
      rows,
      (f) => (tagged ? [sort, ...order.keyOf(f)] : order.keyOf(f)),
      (side, key) =>
        this.store.flagsBeyond(this.db, projectId, environment, filter, side, tagged ? key.slice(1) : key, order),
    );
    const data = await this.presenter.present(this.db, result.data, scope.ownOnly);
    if (!withTotal) return { ...result, data };
    return { ...result, data, total: await this.store.countFlags(this.db, projectId, environment, filter) };
  }
}
