import type { FlagTargeting, RolloutPlan } from "@flagstaff/core";
import type { Transaction } from "kysely";
import { TARGETING_COLUMNS } from "../../db/flag-columns.js";
import { linkedNow, unlink } from "../../db/link-tables.js";
import type { Database } from "../../db/schema.js";
import { ensureActors } from "../actors/actor.repository.js";
import { listMembers } from "../actors/member-lists.js";
import { environmentRepository } from "../environments/environment.repository.js";
import { existingSegmentIds, findSegment, segmentNames } from "../segments/segment.repository.js";
import { countFlags, flagsBeyond, listFlags } from "./flag-list.repository.js";
import { configIdOf, type Executor, FLAG_COLUMNS, flagsIn, toFlag } from "./flag-rows.js";
import type { Flag, FlagEnvironmentConfiguration } from "./flag.schemas.js";
import type { FlagStore } from "./flag.store.js";
import { configurationColumns, planColumn, planOf, targetingOf, variantsColumn } from "../../db/targeting.js";

export { configIdOf };

export async function findFlag(
  db: Executor,
  projectId: string,
  environment: string,
  name: string,
): Promise<Flag | undefined> {
  const row = await flagsIn(db, projectId, environment)
    .select(FLAG_COLUMNS)
    .where("flags.name", "=", name)
    .executeTakeFirst();
  return row && toFlag(row);
}

/** Whether the project has a flag of this name (in every environment, or in none). */
export async function flagExists(db: Executor, projectId: string, name: string): Promise<boolean> {
  const row = await db
    .selectFrom("flags")
    .select("id")
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findFlagsByNames(
  db: Executor,
  projectId: string,
  environment: string,
  names: readonly string[],
): Promise<Flag[]> {
  if (names.length === 0) return [];
  const rows = await flagsIn(db, projectId, environment)
    .select(FLAG_COLUMNS)
    .where("flags.name", "in", names)
    .execute();
  return rows.map(toFlag);
}

/** Every environment's configuration of these flags, by flag id and environment id. */
export async function configurationsOf(
  db: Executor,
  flagIds: readonly string[],
): Promise<Map<string, Record<string, FlagEnvironmentConfiguration>>> {
  const byFlag = new Map<string, Record<string, FlagEnvironmentConfiguration>>();
  if (flagIds.length === 0) return byFlag;
  // In the environments' order (the list's), the same on both engines.
  const rows = await db
    .selectFrom("flag_configs")
    .innerJoin("flags", "flags.id", "flag_configs.flag_id")
    .innerJoin("environments", (join) =>
      join
        .onRef("environments.project_id", "=", "flags.project_id")
        .onRef("environments.id", "=", "flag_configs.environment_id"),
    )
    .select([
      "flag_configs.flag_id",
      "flag_configs.environment_id",
      "flag_configs.status",
      "flag_configs.percentage_actors",
      "flag_configs.percentage_calls",
      "flag_configs.status_changed_at",
    ])
    .where("flag_configs.flag_id", "in", flagIds)
    .orderBy("flag_configs.flag_id")
    .orderBy("environments.position")
    .execute();
  for (const row of rows) {
    let configurations = byFlag.get(row.flag_id);
    if (!configurations) {
      configurations = {};
      byFlag.set(row.flag_id, configurations);
    }
    configurations[row.environment_id] = {
      status: row.status as Flag["status"],
      percentageActors: Number(row.percentage_actors) as Flag["percentageActors"],
      percentageCalls: Number(row.percentage_calls) as Flag["percentageCalls"],
      statusChangedAt: row.status_changed_at,
    };
  }
  return byFlag;
}

/** A new flag's definition, and its configuration in each environment: disabled, nothing attached. */
export async function insertFlag(
  trx: Transaction<Database>,
  flag: Flag,
  environments: readonly string[],
): Promise<void> {
  await trx
    .insertInto("flags")
    .values({
      id: flag.id,
      project_id: flag.projectId,
      name: flag.name,
      description: flag.description,
      created_at: flag.createdAt,
      type: flag.type,
      variants: variantsColumn(flag.type, flag.variants),
      kind: flag.kind,
      permanent: flag.permanent ? 1 : 0,
    })
    .execute();
  await trx
    .insertInto("flag_configs")
    .values(
      environments.map((environment) => ({
        config_id: configIdOf(flag.id, environment),
        flag_id: flag.id,
        environment_id: environment,
        status: flag.status,
        percentage_actors: flag.percentageActors,
        percentage_calls: flag.percentageCalls,
        updated_at: flag.updatedAt,
        latest_checked_at: null,
        status_changed_at: flag.statusChangedAt,
        revision: flag.revision,
        actors_count: 0,
        segments_count: 0,
        ...configurationColumns(flag),
      })),
    )
    .execute();
}

/** Replaces a flag's variants (its definition's, so every environment's configuration moves on). */
export async function saveVariants(trx: Transaction<Database>, flag: Flag): Promise<void> {
  await trx
    .updateTable("flags")
    .set({ variants: variantsColumn(flag.type, flag.variants) })
    .where("id", "=", flag.id)
    .execute();
  await trx
    .updateTable("flag_configs")
    .set((eb) => ({ revision: eb("revision", "+", 1), updated_at: flag.updatedAt }))
    .where("flag_id", "=", flag.id)
    .where("config_id", "<>", flag.configId)
    .execute();
}

/**
 * Writes out the variants configurations serve by default (null: the first and the second variant) as the
 * keys they are now, before the variants change: a configuration keeps serving what it served.
 */
export async function pinDefaultVariants(
  trx: Transaction<Database>,
  flagId: string,
  defaults: { onVariant: string; offVariant: string },
): Promise<void> {
  await trx
    .updateTable("flag_configs")
    .set((eb) => ({
      on_variant: eb.fn.coalesce("on_variant", eb.val(defaults.onVariant)),
      off_variant: eb.fn.coalesce("off_variant", eb.val(defaults.offVariant)),
    }))
    .where("flag_id", "=", flagId)
    .execute();
}

/**
 * A project's flags with their targeting in one environment: what prerequisite checks read. Archived
 * flags are left out: evaluation does not see them, so no prerequisite may name one, and none depends on
 * another.
 */
export async function targetingIn(db: Executor, projectId: string, environment: string) {
  const rows = await flagsIn(db, projectId, environment)
    .where("flags.archived_at", "is", null)
    .select(["flags.name", ...TARGETING_COLUMNS])
    .execute();
  return rows.map((row) => ({ name: row.name, ...targetingOf(row) }));
}

/** The variant keys a configuration serves: its onVariant and offVariant, and every rule's variant or split's. */
export function servedKeys(t: Pick<FlagTargeting, "onVariant" | "offVariant" | "rules">): Map<string, string[]> {
  const served = new Map<string, string[]>();
  const add = (key: string, where: string) => served.set(key, [...(served.get(key) ?? []), where]);
  add(t.onVariant, "onVariant");
  add(t.offVariant, "offVariant");
  for (const rule of t.rules) {
    const keys = "variant" in rule.serve ? [rule.serve.variant] : rule.serve.split.weights.map((w) => w.variant);
    for (const key of new Set(keys)) add(key, `rule "${rule.id}"`);
  }
  return served;
}

/** One configuration's targeting, of a flag in an environment: what the variants' checks read. */
export interface ConfigurationTargeting {
  readonly flagId: string;
  readonly flag: string;
  readonly environment: string;
  readonly targeting: FlagTargeting;
}

/**
 * Every configuration, in every environment of the project, that uses a variant of `flag` that `dropped`
 * holds: its own (onVariant, offVariant, rules; in `own.environment`, the configuration the write makes
 * there) and other flags' prerequisites on it. Answers where, in words, by flag and environment.
 */
export async function variantUses(
  db: Executor,
  projectId: string,
  flag: { id: string; name: string },
  dropped: ReadonlySet<string>,
  own: { environment: string; targeting: Pick<FlagTargeting, "onVariant" | "offVariant" | "rules"> },
): Promise<string[]> {
  if (dropped.size === 0) return [];
  const rows = await db
    .selectFrom("flag_configs")
    .innerJoin("flags", "flags.id", "flag_configs.flag_id")
    .select(["flags.id", "flags.name", "flag_configs.environment_id", ...TARGETING_COLUMNS])
    .where("flags.project_id", "=", projectId)
    .where((eb) => eb.or([eb("flags.id", "=", flag.id), eb("flag_configs.prerequisites", "is not", null)]))
    .orderBy("flags.name")
    .orderBy("flag_configs.environment_id")
    .execute();
  const configurations = rows.map((row) => ({
    flagId: row.id,
    flag: row.name,
    environment: row.environment_id,
    targeting: targetingOf(row),
  }));
  return variantUsesIn(configurations, flag, dropped, own);
}

/**
 * variantUses over the project's configurations (by flag name, then environment): the uses of a dropped
 * variant of `flag`, in words.
 */
export function variantUsesIn(
  configurations: readonly ConfigurationTargeting[],
  flag: { id: string; name: string },
  dropped: ReadonlySet<string>,
  own: { environment: string; targeting: Pick<FlagTargeting, "onVariant" | "offVariant" | "rules"> },
): string[] {
  const uses: string[] = [];
  for (const row of configurations) {
    const where = `in environment "${row.environment}"`;
    if (row.flagId === flag.id) {
      const configuration = row.environment === own.environment ? own.targeting : row.targeting;
      for (const [key, places] of servedKeys(configuration)) {
        if (!dropped.has(key)) continue;
        for (const place of places) {
          uses.push(place.startsWith("rule") ? `${place} serves "${key}" ${where}` : `${place} is "${key}" ${where}`);
        }
      }
    }
    for (const p of row.targeting.prerequisites) {
      if (p.flag !== flag.name) continue;
      for (const key of p.variants) {
        if (dropped.has(key)) uses.push(`flag "${row.flag}" requires "${key}" ${where}`);
      }
    }
  }
  return uses;
}

/** The environments whose configuration of the flag serves one of `keys` (servedKeys), in id order. */
export async function environmentsServing(db: Executor, flagId: string, keys: ReadonlySet<string>): Promise<string[]> {
  if (keys.size === 0) return [];
  const rows = await db
    .selectFrom("flag_configs")
    .innerJoin("flags", "flags.id", "flag_configs.flag_id")
    .select(["flag_configs.environment_id", ...TARGETING_COLUMNS])
    .where("flags.id", "=", flagId)
    .orderBy("flag_configs.environment_id")
    .execute();
  return rows.filter((row) => serves(targetingOf(row), keys)).map((row) => row.environment_id);
}

/** Whether a configuration serves one of `keys` (servedKeys). */
export const serves = (
  targeting: Pick<FlagTargeting, "onVariant" | "offVariant" | "rules">,
  keys: ReadonlySet<string>,
) => [...servedKeys(targeting).keys()].some((key) => keys.has(key));

/** Writes a flag's configuration in its environment. */
export async function saveConfiguration(trx: Transaction<Database>, flag: Flag): Promise<void> {
  await trx
    .updateTable("flag_configs")
    .set({
      status: flag.status,
      percentage_actors: flag.percentageActors,
      percentage_calls: flag.percentageCalls,
      updated_at: flag.updatedAt,
      status_changed_at: flag.statusChangedAt,
      revision: flag.revision,
      actors_count: flag.actorsCount,
      segments_count: flag.segmentsCount,
      ...configurationColumns(flag),
      rollout_plan: planColumn(flag.plan),
    })
    .where("config_id", "=", flag.configId)
    .execute();
}

/**
 * Writes a flag's description. It shows in every environment, so every other environment's configuration
 * moves too (its revision, hence its ETag, and its updatedAt); the caller saves the flag's own.
 */
export async function saveDescription(trx: Transaction<Database>, flag: Flag): Promise<void> {
  await trx.updateTable("flags").set({ description: flag.description }).where("id", "=", flag.id).execute();
  await trx
    .updateTable("flag_configs")
    .set((eb) => ({ revision: eb("revision", "+", 1), updated_at: flag.updatedAt }))
    .where("flag_id", "=", flag.id)
    .where("config_id", "<>", flag.configId)
    .execute();
}

/** Writes what a flag is for and whether it stays (its definition's, every environment's). */
export async function saveLifecycle(trx: Transaction<Database>, flag: Flag): Promise<void> {
  await trx
    .updateTable("flags")
    .set({ kind: flag.kind, permanent: flag.permanent ? 1 : 0 })
    .where("id", "=", flag.id)
    .execute();
}

/** Marks a flag stale (with why, since when) or not (null). */
export async function saveStale(
  trx: Transaction<Database>,
  id: string,
  reason: string | null,
  since: string | null,
): Promise<void> {
  await trx.updateTable("flags").set({ stale_reason: reason, stale_since: since }).where("id", "=", id).execute();
}

/** Archives a flag (`at`) or restores it (null). */
export async function saveArchived(trx: Transaction<Database>, id: string, at: string | null): Promise<void> {
  await trx.updateTable("flags").set({ archived_at: at }).where("id", "=", id).execute();
}

export async function deleteFlag(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom("flags").where("id", "=", id).execute();
}

/** Which of these actors the configuration has attached now. */
export const attachedActors = (trx: Executor, configId: string, actorIds: readonly string[]) =>
  linkedNow(trx, "flagActors", configId, actorIds);

export async function attachActors(
  trx: Transaction<Database>,
  flag: Pick<Flag, "configId" | "projectId">,
  actorIds: readonly string[],
  at: string,
): Promise<void> {
  if (actorIds.length === 0) return;
  await trx
    .insertInto("flag_actors")
    .values(
      actorIds.map((actor_id) => ({ config_id: flag.configId, project_id: flag.projectId, actor_id, created_at: at })),
    )
    .execute();
}

export const detachActors = (trx: Transaction<Database>, configId: string, actorIds: readonly string[]) =>
  unlink(trx, "flagActors", configId, actorIds);

/** Which of these segments the configuration has attached now. */
export const attachedSegments = (trx: Executor, configId: string, segmentIds: readonly string[]) =>
  linkedNow(trx, "flagSegments", configId, segmentIds);

export async function attachSegments(
  trx: Transaction<Database>,
  configId: string,
  segmentIds: readonly string[],
  at: string,
) {
  if (segmentIds.length === 0) return;
  await trx
    .insertInto("flag_segments")
    .values(segmentIds.map((segment_id) => ({ config_id: configId, segment_id, created_at: at })))
    .execute();
}

export const detachSegments = (trx: Transaction<Database>, configId: string, segmentIds: readonly string[]) =>
  unlink(trx, "flagSegments", configId, segmentIds);

/** Every actor and segment attached to a configuration (a copy replaces them all). */
export async function linksOf(db: Executor, configId: string) {
  const actors = await db.selectFrom("flag_actors").select("actor_id").where("config_id", "=", configId).execute();
  const segments = await db
    .selectFrom("flag_segments")
    .select("segment_id")
    .where("config_id", "=", configId)
    .execute();
  return { actors: actors.map((r) => r.actor_id), segments: segments.map((r) => r.segment_id) };
}

/** The flags' store on the database: this module's queries, and what flags read of their neighbours. */
export const flagRepository: FlagStore = {
  findFlag,
  findFlagsByNames,
  configurationsOf,
  insertFlag,
  saveConfiguration,
  saveDescription,
  saveVariants,
  pinDefaultVariants,
  deleteFlag,
  saveLifecycle,
  saveArchived,
  saveStale,
  targetingIn,
  variantUses,
  environmentsServing,
  attachedActors,
  attachActors,
  detachActors,
  attachedSegments,
  attachSegments,
  detachSegments,
  linksOf,
  listFlags,
  flagsBeyond,
  countFlags,
  listEnvironments: environmentRepository.listEnvironments,
  resolveEnvironment: environmentRepository.resolveEnvironment,
  countEnvironments: environmentRepository.countEnvironments,
  protectedAmong: environmentRepository.protectedAmong,
  requiredApprovals: environmentRepository.requiredApprovals,
  existingSegmentIds,
  segmentExists: async (db, projectId, id) => (await findSegment(db, projectId, id)) !== undefined,
  segmentNames,
  ensureActors,
  listFlagActors: (db, configId, q, page) => listMembers(db, "flag", configId, q, page),
};

/** The configurations of a project's flags that have a timed rollout plan (for the schedule). */
export async function plannedConfigurations(
  db: Executor,
  projectId: string,
  environment?: string,
): Promise<{ flag: string; environment: string; plan: RolloutPlan }[]> {
  let q = db
    .selectFrom("flags")
    .innerJoin("flag_configs", "flag_configs.flag_id", "flags.id")
    .select(["flags.name", "flag_configs.environment_id", "flag_configs.rollout_plan"])
    .where("flags.project_id", "=", projectId)
    .where("flag_configs.rollout_plan", "is not", null);
  if (environment !== undefined) q = q.where("flag_configs.environment_id", "=", environment);
  const rows = await q.execute();
  return rows.map((row) => ({
    flag: row.name,
    environment: row.environment_id,
    plan: planOf(row.rollout_plan) as RolloutPlan,
  }));
}
