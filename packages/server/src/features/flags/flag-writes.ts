import { pickTargeting, referencesOf, validateVariants } from "@flagstaff/core";
import type { Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import { AppError, invalid } from "../../kernel/errors.js";
import type { FlagRecord, FlagUpdate } from "../../write-path/domain-events.js";
import type { Flag } from "./flag.schemas.js";
import type { FlagStore } from "./flag.store.js";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import { checkConfiguration, refuseProblems } from "../../db/targeting.js";

// What the writes of a flag share (flag.service.ts: create, update, delete; flag-copy.ts: copy): the
// history's record of a flag, its attachments, and the check of targeting inside the write's transaction.

/** A flag's state as the history records it, before and after a write. */
export const flagState = (flag: Flag): FlagRecord => ({
  name: flag.name,
  description: flag.description,
  status: flag.status,
  percentageActors: flag.percentageActors,
  percentageCalls: flag.percentageCalls,
  ...pickTargeting(flag),
  ...(flag.plan === null ? {} : { rolloutPlan: flag.plan }),
  kind: flag.kind,
  permanent: flag.permanent,
});

/**
 * A write that reaches every environment of the flag (delete, archive, restore): a key bound to one
 * environment may make it only while the project has no other, so that a key of one environment never
 * changes another's configuration.
 */
export async function refuseBoundBeyondOwn(
  store: Pick<FlagStore, "countEnvironments">,
  trx: Transaction<Database>,
  scope: EnvironmentScope,
  projectId: string,
  environmentId: string,
  what: string,
): Promise<void> {
  if (!scope.ownOnly || (await store.countEnvironments(trx, projectId)) <= 1) return;
  throw new AppError(
    403,
    "forbidden",
    `${what} reaches every environment, and this key is bound to environment "${environmentId}": use a key bound to no environment.`,
  );
}

export const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Whether a write changes what a configuration serves, its variants aside: the variants it serves on and
 * off, its rules, its prerequisites.
 */
export const servingChanged = (next: Flag, flag: Flag): boolean =>
  next.onVariant !== flag.onVariant ||
  next.offVariant !== flag.offVariant ||
  !sameJSON(next.rules, flag.rules) ||
  !sameJSON(next.prerequisites, flag.prerequisites) ||
  !sameJSON(next.plan, flag.plan);

/** The actors and segments a write attaches to and detaches from a configuration. */
export interface LinkDelta {
  readonly addActors: string[];
  readonly removeActors: string[];
  readonly addSegments: string[];
  readonly removeSegments: string[];
}

/** Writes a configuration's attachments that change. */
export async function saveLinks(
  store: FlagStore,
  trx: Transaction<Database>,
  flag: Flag,
  delta: LinkDelta,
  at: string,
): Promise<void> {
  await store.attachActors(trx, flag, delta.addActors, at);
  await store.detachActors(trx, flag.configId, delta.removeActors);
  await store.attachSegments(trx, flag.configId, delta.addSegments, at);
  await store.detachSegments(trx, flag.configId, delta.removeSegments);
}

/** A flag after an update, as the history records it: its fields and what was attached and detached. */
export const updateRecord = (flag: Flag, delta: LinkDelta): FlagUpdate => ({
  ...flagState(flag),
  addedActors: delta.addActors,
  removedActors: delta.removeActors,
  addedSegments: delta.addSegments,
  removedSegments: delta.removeSegments,
});

export const target = (flag: Flag) => ({ kind: "flag", id: flag.id, name: flag.name }) as const;

/**
 * Refuses variants that drop a key a configuration still serves or a prerequisite still names (409; with
 * `previousVariants`, the variants before a write that changes them), targeting the validator refuses
 * (400), a prerequisite cycle or over-long chain (409), reading the segments and the environment's flags
 * inside the write's transaction.
 */
export async function checkTargeting(
  store: FlagStore,
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
    const uses = await store.variantUses(trx, projectId, flag, dropped, { environment, targeting: flag });
    if (uses.length > 0) {
      throw new AppError(
        409,
        "variant_in_use",
        `Flag "${flag.name}" cannot drop a variant still in use: ${uses.slice(0, 5).join("; ")}${uses.length > 5 ? "; …" : ""}.`,
      );
    }
  }
  const named = referencesOf(flag).segments;
  const segments = named.length === 0 ? new Set<string>() : await store.existingSegmentIds(trx, projectId, named);
  const flags = flag.prerequisites.length === 0 ? [] : await store.targetingIn(trx, projectId, environment);
  checkConfiguration(
    flag.name,
    { ...pickTargeting(flag), rolloutPlan: flag.plan },
    { segmentExists: (id) => segments.has(id), flags },
  );
}
