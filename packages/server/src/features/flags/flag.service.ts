import {
  defaultVariants,
  evaluateFlag,
  type FlagState,
  type FlagTargeting,
  isEnabledForSegment,
  pickTargeting,
  type ProjectState,
  referencesOf,
  resolutionOf,
  servedToActor,
  validateConfiguration,
  validateVariants,
  variantsOf,
} from "@flagstaff/core";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
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
} from "../../errors.js";
import { newId } from "../../ids.js";
import { assemblePage, type Page, type PageQuery, toPageQuery } from "../../pagination.js";
import { ensureActors } from "../actors/actor.repository.js";
import type { CheckRecorder } from "../evaluation/check-recorder.js";
import type { Snapshot } from "../evaluation/snapshot.js";
import { entityTag, requireMatch } from "../../write-path/preconditions.js";

import { listMembers, type Membership } from "../actors/member-lists.js";
import { segmentNames } from "../segments/segment.repository.js";
import type { FlagRecord, FlagUpdate, WriteContext } from "../history/domain-events.js";
import type { UnitOfWork } from "../../write-path/unit-of-work.js";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import { anyNameBeyond, pageOfNames } from "../evaluation/name-scan.js";
import { countEnvironments, listEnvironments, resolveEnvironment } from "../environments/environment.repository.js";
import { refuseProtected } from "../environments/environment-guard.js";
import { existingSegmentIds, findSegment } from "../segments/segment.repository.js";
import * as repo from "./flag.repository.js";
import { checkConfiguration, refuseProblems } from "./targeting.js";
import type { CopyFlagInput, CreateFlagInput, Flag, FlagFilter, FlagSort, UpdateFlagInput } from "./flag.schemas.js";
import type { FlagExplanation } from "@flagstaff/core/schemas";
import type { Attributes } from "../evaluation/checker.js";

/** A flag's ETag: of its configuration in the environment it is shown in (which its definition is part of). */
export const flagTag = (flag: Pick<Flag, "configId" | "revision">) => entityTag(flag.configId, flag.revision);

const unique = (ids: readonly string[] | undefined): string[] => [...new Set(ids ?? [])];

/** An id both added and removed in one request is a contradiction, refused before anything is done. */
function contradictions(add: string[], remove: string[], field: string): FieldError[] {
  const removing = new Set(remove);
  return add
    .filter((id) => removing.has(id))
    .map((id) => ({ path: `/${field}`, message: `"${id}" is both added and removed` }));
}

/** A flag's state as the history records it, before and after a write. */
const flagState = (flag: Flag): FlagRecord => ({
  name: flag.name,
  description: flag.description,
  status: flag.status,
  percentageActors: flag.percentageActors,
  percentageCalls: flag.percentageCalls,
  ...pickTargeting(flag),
});

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The actors and segments a write attaches to and detaches from a configuration. */
interface LinkDelta {
  readonly addActors: string[];
  readonly removeActors: string[];
  readonly addSegments: string[];
  readonly removeSegments: string[];
}

/** Writes a configuration's attachments that change. */
async function saveLinks(trx: Transaction<Database>, flag: Flag, delta: LinkDelta, at: string): Promise<void> {
  await repo.attachActors(trx, flag, delta.addActors, at);
  await repo.detachActors(trx, flag.configId, delta.removeActors);
  await repo.attachSegments(trx, flag.configId, delta.addSegments, at);
  await repo.detachSegments(trx, flag.configId, delta.removeSegments);
}

/** A flag after an update, as the history records it: its fields and what was attached and detached. */
const updateRecord = (flag: Flag, delta: LinkDelta): FlagUpdate => ({
  ...flagState(flag),
  addedActors: delta.addActors,
  removedActors: delta.removeActors,
  addedSegments: delta.addSegments,
  removedSegments: delta.removeSegments,
});

const target = (flag: Flag) => ({ kind: "flag", id: flag.id, name: flag.name }) as const;

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
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly snapshot: Snapshot,
    private readonly recorder: CheckRecorder,
    private readonly clock: Clock,
  ) {}

  /** A flag as answered: with a check noted on this instance but not yet flushed. */
  private withPendingCheck(flag: Flag): Flag {
    const pending = this.recorder.pendingFor(flag.environment, flag.id);
    if (pending === undefined) return flag;
    const at = isoTime(pending);
    return flag.latestCheckedAt === null || flag.latestCheckedAt < at ? { ...flag, latestCheckedAt: at } : flag;
  }

  /**
   * Flags as answered: each with its pending check and its configuration in every environment (only in
   * its own for a key bound to one).
   */
  private async present(
    db: Kysely<Database> | Transaction<Database>,
    flags: Flag[],
    ownOnly: boolean,
  ): Promise<Flag[]> {
    const configurations = await repo.configurationsOf(
      db,
      flags.map((f) => f.id),
    );
    return flags.map((f) => {
      const all = configurations.get(f.id) ?? {};
      const own = all[f.environment];
      const environments = ownOnly ? (own ? { [f.environment]: own } : {}) : all;
      return { ...this.withPendingCheck(f), environments };
    });
  }

  private async presentOne(db: Kysely<Database> | Transaction<Database>, flag: Flag, ownOnly: boolean): Promise<Flag> {
    return (await this.present(db, [flag], ownOnly))[0] as Flag;
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
    const { environment, ownOnly } = scope;
    const exists = () => new AppError(409, "flag_exists", `Flag "${name}" already exists in project "${projectId}".`);
    try {
      return await this.work.write(context, projectId, async (trx) => {
        const environments = await listEnvironments(trx, projectId);
        if (environments.length === 0) throw projectNotFound(projectId);
        const shown = environment ?? environments.find((e) => e.default)?.id ?? (environments[0]?.id as string);
        if (!environments.some((e) => e.id === shown)) throw environmentNotFound(shown);
        if (await repo.findFlag(trx, projectId, shown, name)) throw exists();
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
          configId: repo.configIdOf(id, shown),
          ...(targeting as Pick<Flag, keyof FlagTargeting>),
        };
        await repo.insertFlag(
          trx,
          flag,
          environments.map((e) => e.id),
        );
        return {
          result: await this.presentOne(trx, flag, ownOnly),
          events: [{ type: "flag.created", projectId, target: target(flag), before: null, after: flagState(flag) }],
        };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw exists();
      throw error;
    }
  }

  async get(projectId: string, scope: EnvironmentScope, name: string): Promise<Flag> {
    const id = await resolveEnvironment(this.db, projectId, scope.environment);
    const flag = await repo.findFlag(this.db, projectId, id, name);
    if (!flag) throw flagNotFound(name);
    return this.presentOne(this.db, flag, scope.ownOnly);
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
    const { environment, ownOnly } = scope;
    const addActors = unique(input.addActors);
    const removeActors = unique(input.removeActors);
    const addSegments = unique(input.addSegments);
    const removeSegments = unique(input.removeSegments);
    const problems = [
      ...contradictions(addActors, removeActors, "addActors"),
      ...contradictions(addSegments, removeSegments, "addSegments"),
    ];
    if (problems.length > 0) throw invalid("An id cannot be added and removed in the same request.", problems);
    // The caller's comment says why: it rides on the write's events into the history and webhooks.
    const commented = input.comment === undefined ? context : { ...context, comment: input.comment };

    return this.work.write(commented, projectId, async (trx) => {
      const environmentId = await resolveEnvironment(trx, projectId, environment);
      const flag = await repo.findFlag(trx, projectId, environmentId, name);
      if (!flag) throw flagNotFound(name);
      requireMatch(ifMatch, flagTag(flag), `Flag "${name}"`);
      if (addSegments.length > 0) {
        const found = await existingSegmentIds(trx, projectId, addSegments);
        const missing = addSegments.find((id) => !found.has(id));
        if (missing !== undefined) throw segmentNotFound(missing);
      }

      const actorsNow = await repo.attachedActors(trx, flag.configId, [...addActors, ...removeActors]);
      const segmentsNow = await repo.attachedSegments(trx, flag.configId, [...addSegments, ...removeSegments]);
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
      };
      const variantsChanged = !sameJSON(next.variants, flag.variants);
      const targetingChanged =
        variantsChanged ||
        next.onVariant !== flag.onVariant ||
        next.offVariant !== flag.offVariant ||
        !sameJSON(next.rules, flag.rules) ||
        !sameJSON(next.prerequisites, flag.prerequisites);
      // Configurations that serve the default variants go on serving the same keys whatever the new list's order.
      if (variantsChanged) await repo.pinDefaultVariants(trx, flag.id, defaultVariants(flag.type, flag.variants));
      if (targetingChanged) {
        await this.checkTargeting(trx, projectId, environmentId, next, variantsChanged ? flag.variants : undefined);
      }
      const fieldsChanged =
        targetingChanged ||
        next.description !== flag.description ||
        next.status !== flag.status ||
        next.percentageActors !== flag.percentageActors ||
        next.percentageCalls !== flag.percentageCalls;
      const membershipChanged = Object.values(delta).some((ids) => ids.length > 0);
      // A request that changes nothing writes nothing: no event, updatedAt and the version stay.
      if (!fieldsChanged && !membershipChanged)
        return { result: await this.presentOne(trx, flag, ownOnly), events: [] };
      // The definition (description, variants) is every environment's; the rest is this one's configuration.
      const configurationChanged =
        membershipChanged ||
        next.status !== flag.status ||
        next.percentageActors !== flag.percentageActors ||
        next.percentageCalls !== flag.percentageCalls ||
        next.onVariant !== flag.onVariant ||
        next.offVariant !== flag.offVariant ||
        !sameJSON(next.rules, flag.rules) ||
        !sameJSON(next.prerequisites, flag.prerequisites);
      if (configurationChanged) await refuseProtected(trx, context, projectId, environmentId);
      if (variantsChanged) {
        // A variant's value is served wherever a configuration names it: changing it changes what those
        // environments serve (a key dropped is served nowhere: checkTargeting refused it otherwise).
        const before = new Map(flag.variants.map((v) => [v.key, JSON.stringify(v.value)]));
        const changed = next.variants.filter((v) => before.has(v.key) && before.get(v.key) !== JSON.stringify(v.value));
        const keys = new Set(changed.map((v) => v.key));
        const serving = await repo.environmentsServing(trx, flag.id, keys);
        const what = [...keys].map((key) => `"${key}"`).join(", ");
        await refuseProtected(
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
      await repo.saveConfiguration(trx, next);
      if (next.description !== flag.description) await repo.saveDescription(trx, next);
      if (variantsChanged) await repo.saveVariants(trx, next);
      await ensureActors(trx, projectId, delta.addActors, now);
      await saveLinks(trx, next, delta, now);
      const after = updateRecord(next, delta);
      return {
        result: await this.presentOne(trx, next, ownOnly),
        events: [
          {
            type: "flag.updated",
            projectId,
            environment: environmentId,
            target: target(next),
            before: flagState(flag),
            after,
          },
        ],
      };
    });
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
    const id = await this.work.write(context, projectId, async (trx) => {
      const environmentId = await resolveEnvironment(trx, projectId, scope.environment);
      const flag = await repo.findFlag(trx, projectId, environmentId, name);
      if (!flag) throw flagNotFound(name);
      // Deleting a flag deletes its configuration in every environment: a key bound to one may do it only
      // while there is no other (so a key of one environment never changes another's configuration).
      if (scope.ownOnly && (await countEnvironments(trx, projectId)) > 1) {
        throw new AppError(
          403,
          "forbidden",
          `Deleting flag "${name}" deletes it in every environment, and this key is bound to environment "${environmentId}": use a key bound to no environment.`,
        );
      }
      requireMatch(ifMatch, flagTag(flag), `Flag "${name}"`);
      // The flag stops being served in every environment, protected ones included.
      const environments = (await listEnvironments(trx, projectId)).map((e) => e.id);
      await refuseProtected(trx, context, projectId, environments, `Deleting flag "${name}"`);
      await repo.deleteFlag(trx, flag.id);
      return {
        result: flag.id,
        events: [{ type: "flag.deleted", projectId, target: target(flag), before: flagState(flag), after: null }],
      };
    });
    this.recorder.forget(id);
  }

  /**
   * Refuses variants that drop a key a configuration still serves or a prerequisite still names (409; with
   * `previousVariants`, the variants before a write that changes them), targeting the validator refuses
   * (400), a prerequisite cycle or over-long chain (409), reading the segments and the environment's flags
   * inside the write's transaction.
   */
  private async checkTargeting(
    trx: Transaction<Database>,
    projectId: string,
    environment: string,
    flag: Flag,
    previousVariants: Flag["variants"] | undefined,
  ): Promise<void> {
    if (previousVariants !== undefined) {
      if (flag.type === "boolean") {
        throw invalid(`Flag "${flag.name}" is boolean: its variants are fixed (on and off).`, [
          { path: "/variants", message: "a boolean flag's variants cannot be changed" },
        ]);
      }
      refuseProblems(validateVariants(flag.type, flag.variants), `Flag "${flag.name}" cannot have these variants`);
      // A key dropped while a configuration uses it is one answer wherever the use is (this environment's
      // configuration as written, another's, another flag's prerequisite): 409, before the validator would
      // call this configuration's use an unknown variant.
      const keys = new Set(flag.variants.map((v) => v.key));
      const dropped = new Set(previousVariants.map((v) => v.key).filter((key) => !keys.has(key)));
      const uses = await repo.variantUses(trx, projectId, flag, dropped, { environment, targeting: flag });
      if (uses.length > 0) {
        throw new AppError(
          409,
          "variant_in_use",
          `Flag "${flag.name}" cannot drop a variant still in use: ${uses.slice(0, 5).join("; ")}${uses.length > 5 ? "; …" : ""}.`,
        );
      }
    }
    const named = referencesOf(flag).segments;
    const segments = named.length === 0 ? new Set<string>() : await existingSegmentIds(trx, projectId, named);
    const flags = flag.prerequisites.length === 0 ? [] : await repo.targetingIn(trx, projectId, environment);
    checkConfiguration(flag.name, pickTargeting(flag), { segmentExists: (id) => segments.has(id), flags });
  }

  /**
   * Why the flag answers as it does for this context, from the same snapshot and engine the check uses
   * (a read: it records no check, and draws nothing for the flag's call rollout): core's evaluateFlag
   * with the decision in detail, which names the rule and its conditions, the prerequisite, the actor or
   * the segment that decided; segments are named from the database.
   */
  async explain(
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    actorIds: readonly string[],
    attributes?: Attributes,
  ): Promise<FlagExplanation> {
    const { state } = this.snapshot.environmentState(projectId, scope.environment);
    const flag = state.flagsByName.get(name);
    if (!flag) throw flagNotFound(name);
    const resolver = {
      isMember: state.isMember,
      segmentConditions: (id: string) => state.segmentConditions(id),
      flag: (other: string) => state.flag(other),
      now: () => this.clock.now(),
    };
    const decision = evaluateFlag(flag, { actorIds, attributes }, resolver, { detail: true });
    const rule = decision.ruleIndex === null ? undefined : flag.rules[decision.ruleIndex];
    const segmentId = decision.segmentId;
    const ids = new Set([...decision.actors.flatMap((a) => a.segments), ...(segmentId === null ? [] : [segmentId])]);
    const names = await segmentNames(this.db, projectId, [...ids]);
    const named = (id: string) => ({ id, name: names.get(id) ?? id });
    return {
      enabled: resolutionOf(flag, decision).enabled,
      reason: decision.reason,
      rule: decision.rule,
      variant: decision.variant,
      value: decision.value,
      matchedRule:
        rule === undefined
          ? null
          : {
              index: decision.ruleIndex as number,
              id: rule.id,
              ...(rule.description === undefined ? {} : { description: rule.description }),
              conditions: [...rule.conditions],
            },
      prerequisite: decision.prerequisite ?? null,
      actorId: decision.actorId,
      segmentId,
      segment: segmentId === null ? null : named(segmentId),
      threshold: decision.threshold,
      callRolloutPercentage: decision.callRolloutPercentage,
      actors: decision.actors.map((a) => ({ ...a, segments: a.segments.map(named) })),
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
    const id = await resolveEnvironment(this.db, projectId, scope.environment);
    const flag = await repo.findFlag(this.db, projectId, id, name);
    if (!flag) throw flagNotFound(name);
    return listMembers(this.db, "flag", flag.configId, q, page);
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
    const order = repo.flagOrder(sort);
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
    const environment = await resolveEnvironment(this.db, projectId, scope.environment);
    const rows = await repo.listFlags(this.db, projectId, environment, filter, page, order);
    const result = await assemblePage(
      page,
      rows,
      (f) => (tagged ? [sort, ...order.keyOf(f)] : order.keyOf(f)),
      (side, key) =>
        repo.flagsBeyond(this.db, projectId, environment, filter, side, tagged ? key.slice(1) : key, order),
    );
    const data = await this.present(this.db, result.data, scope.ownOnly);
    if (!withTotal) return { ...result, data };
    return { ...result, data, total: await repo.countFlags(this.db, projectId, environment, filter) };
  }

  /**
   * Flags on for an actor in an environment by what the actor id alone decides (core's servedToActor:
   * evaluateFlag for a context of just that id, at this instant, without the random call rollout): the
   * engine decides from the snapshot, the database fills in the page.
   */
  async listForActor(
    projectId: string,
    scope: EnvironmentScope,
    actorId: string,
    page: PageQuery,
  ): Promise<Page<Flag>> {
    const environment = await resolveEnvironment(this.db, projectId, scope.environment);
    const now = this.clock.now();
    let served: ((flag: FlagState, actorId: string) => boolean) | undefined;
    return this.pageDecidedByEngine(projectId, environment, scope.ownOnly, page, (flag, state) => {
      served ??= servedToActor({
        isMember: state.isMember,
        segmentConditions: (id) => state.segmentConditions(id),
        flag: (name) => state.flag(name),
        now: () => now,
      });
      return served(flag, actorId);
    });
  }

  /**
   * A segment's flags in an environment: those enabled for it (enabled, or conditional with it attached,
   * as the seed decides) and those whose configuration's rules name it (core's referencesOf), whatever
   * their status.
   */
  async listForSegment(
    projectId: string,
    scope: EnvironmentScope,
    segmentId: string,
    page: PageQuery,
  ): Promise<Page<Flag>> {
    const environment = await resolveEnvironment(this.db, projectId, scope.environment);
    if (!(await findSegment(this.db, projectId, segmentId))) throw segmentNotFound(segmentId);
    return this.pageDecidedByEngine(
      projectId,
      environment,
      scope.ownOnly,
      page,
      (flag) => isEnabledForSegment(flag, segmentId) || referencesOf(flag).segments.includes(segmentId),
    );
  }

  /**
   * A page of the flags the evaluation rules select, in name order: the snapshot picks the names (one
   * home for the rules, no SQL copy of them), the database fills in the flags' fields.
   */
  private async pageDecidedByEngine(
    projectId: string,
    environment: string,
    ownOnly: boolean,
    page: PageQuery,
    selected: (flag: FlagState, state: ProjectState) => boolean,
  ): Promise<Page<Flag>> {
    const state = this.snapshot.projects.get(projectId)?.environments.get(environment);
    if (!state) return { data: [], pagination: { before: null, after: null } };
    const names = state.flagNamesInOrder();
    const matches = (flagName: string) => {
      const flag = state.flagsByName.get(flagName);
      return flag !== undefined && selected(flag, state);
    };
    const picked = pageOfNames(names, page, matches);
    const found = await repo.findFlagsByNames(this.db, projectId, environment, picked);
    const byName = new Map(found.map((f) => [f.name, f]));
    const rows = picked.map((n) => byName.get(n)).filter((f): f is Flag => f !== undefined);
    const result = await assemblePage(
      page,
      rows,
      (f) => [f.name],
      (side, key) => anyNameBeyond(names, side, key[0] as string, matches),
    );
    return { ...result, data: await this.present(this.db, result.data, ownOnly) };
  }

  /**
   * Copies a flag's configuration from one environment to another (status, percentages, attached actors
   * and segments, variants served, rules and prerequisites) in one write with one history event (`flag.updated` in the target environment, with
   * `copiedFrom`). With `ifMatch`, only if the target's configuration still has one of those ETags.
   */
  async copy(
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    input: CopyFlagInput,
    ifMatch?: string,
  ): Promise<Flag> {
    if (input.from === input.to) {
      throw invalid("from and to name the same environment: there is nothing to copy.", [
        { path: "/to", message: "must differ from from" },
      ]);
    }
    return this.work.write(context, projectId, async (trx) => {
      const from = await resolveEnvironment(trx, projectId, input.from);
      const to = await resolveEnvironment(trx, projectId, input.to);
      const source = await repo.findFlag(trx, projectId, from, name);
      const flag = await repo.findFlag(trx, projectId, to, name);
      if (!source || !flag) throw flagNotFound(name);
      requireMatch(ifMatch, flagTag(flag), `Flag "${name}" in environment "${to}"`);
      const wanted = await repo.linksOf(trx, source.configId);
      const current = await repo.linksOf(trx, flag.configId);
      const has = { actors: new Set(current.actors), segments: new Set(current.segments) };
      const want = { actors: new Set(wanted.actors), segments: new Set(wanted.segments) };
      const delta = {
        addActors: wanted.actors.filter((id) => !has.actors.has(id)),
        removeActors: current.actors.filter((id) => !want.actors.has(id)),
        addSegments: wanted.segments.filter((id) => !has.segments.has(id)),
        removeSegments: current.segments.filter((id) => !want.segments.has(id)),
      };
      const next: Flag = {
        ...flag,
        status: source.status,
        percentageActors: source.percentageActors,
        percentageCalls: source.percentageCalls,
        onVariant: source.onVariant,
        offVariant: source.offVariant,
        rules: source.rules,
        prerequisites: source.prerequisites,
      };
      const targetingChanged =
        next.onVariant !== flag.onVariant ||
        next.offVariant !== flag.offVariant ||
        !sameJSON(next.rules, flag.rules) ||
        !sameJSON(next.prerequisites, flag.prerequisites);
      // The target's other flags may chain differently: its prerequisites are checked there.
      if (targetingChanged) await this.checkTargeting(trx, projectId, to, next, undefined);
      const fieldsChanged =
        targetingChanged ||
        next.status !== flag.status ||
        next.percentageActors !== flag.percentageActors ||
        next.percentageCalls !== flag.percentageCalls;
      if (!fieldsChanged && Object.values(delta).every((ids) => ids.length === 0)) {
        return { result: await this.presentOne(trx, flag, scope.ownOnly), events: [] };
      }
      await refuseProtected(trx, context, projectId, to);
      const now = isoTime(this.clock.now());
      next.updatedAt = now;
      if (next.status !== flag.status) next.statusChangedAt = now;
      next.revision = flag.revision + 1;
      next.actorsCount = wanted.actors.length;
      next.segmentsCount = wanted.segments.length;
      await repo.saveConfiguration(trx, next);
      // The actors attached in the source exist already: actors belong to the project.
      await saveLinks(trx, next, delta, now);
      const after: FlagUpdate = { ...updateRecord(next, delta), copiedFrom: from };
      return {
        result: await this.presentOne(trx, next, scope.ownOnly),
        events: [
          { type: "flag.updated", projectId, environment: to, target: target(next), before: flagState(flag), after },
        ],
      };
    });
  }
}
