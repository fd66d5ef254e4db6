import {
  type ConfigurationProblem,
  type Condition,
  defaultVariants,
  type FlagTargeting,
  type FlagType,
  type Prerequisite,
  type RolloutPlan,
  type PrerequisiteNode,
  type Rule,
  type Variant,
  validateConfiguration,
  validateSegmentConditions,
  variantsOf,
} from "@flagstaff/core";
import { AppError, type FieldError, invalid } from "../kernel/errors.js";

// A flag's targeting as the database keeps it and the API validates it: one home for the JSON columns'
// reading and writing, and for turning the core validator's problems into the API's 400 and 409.

const NONE: readonly never[] = Object.freeze([]);

const parsed = <T>(text: string | null): readonly T[] => (text === null ? NONE : (JSON.parse(text) as T[]));
const stored = (list: readonly unknown[]): string | null => (list.length === 0 ? null : JSON.stringify(list));

/** The definition's columns (`flags.type`, `flags.variants`) as a type and variants. */
export function definitionOf(row: { type: string; variants: string | null }): {
  type: FlagType;
  variants: readonly Variant[];
} {
  const type = row.type as FlagType;
  return { type, variants: type === "boolean" ? variantsOf({ type }) : parsed<Variant>(row.variants) };
}

/** A flag's targeting from its definition's and one configuration's columns (null variants: the defaults). */
export function targetingOf(row: {
  type: string;
  variants: string | null;
  on_variant: string | null;
  off_variant: string | null;
  rules: string | null;
  prerequisites: string | null;
}): FlagTargeting {
  const { type, variants } = definitionOf(row);
  const defaults = defaultVariants(type, variants);
  return {
    type,
    variants,
    onVariant: row.on_variant ?? defaults.onVariant,
    offVariant: row.off_variant ?? defaults.offVariant,
    rules: parsed<Rule>(row.rules),
    prerequisites: parsed<Prerequisite>(row.prerequisites),
  };
}

/** A configuration's timed rollout plan from its column (null: none). */
export const planOf = (text: string | null | undefined): RolloutPlan | null =>
  text === null || text === undefined ? null : (JSON.parse(text) as RolloutPlan);
/** A timed rollout plan to its column. */
export const planColumn = (plan: RolloutPlan | null): string | null => (plan === null ? null : JSON.stringify(plan));

/** A configuration's rules from their column. */
export const rulesOf = (text: string | null): readonly Rule[] => parsed<Rule>(text);

/** A configuration's targeting columns; a boolean flag's variants are not stored (they are fixed). */
export const configurationColumns = (t: FlagTargeting) => ({
  on_variant: t.type === "boolean" ? null : t.onVariant,
  off_variant: t.type === "boolean" ? null : t.offVariant,
  rules: stored(t.rules),
  prerequisites: stored(t.prerequisites),
});

/** The definition's variants column. */
export const variantsColumn = (type: FlagType, variants: readonly Variant[]): string | null =>
  type === "boolean" ? null : JSON.stringify(variants);

/** A segment's conditions from, and to, its column. */
export const conditionsOf = (text: string | null): readonly Condition[] => parsed<Condition>(text);
export const conditionsColumn = (conditions: readonly Condition[]): string | null => stored(conditions);

const fieldErrors = (problems: readonly ConfigurationProblem[]): FieldError[] =>
  problems.map((p) => ({ path: p.path, message: p.message }));

/**
 * Throws the API's answer to a configuration the validator refuses: a 409 `prerequisite_cycle` when what is
 * wrong is a cycle or a chain deeper than 5 through other flags, otherwise a 400 naming every rule and
 * condition at fault.
 */
export function refuseProblems(problems: readonly ConfigurationProblem[], what: string): void {
  if (problems.length === 0) return;
  const conflicts = problems.filter((p) => p.code === "prerequisite_cycle" || p.code === "prerequisite_depth");
  if (conflicts.length > 0 && conflicts.length === problems.length) {
    throw new AppError(409, "prerequisite_cycle", `${what}: ${conflicts[0]?.message}`, fieldErrors(conflicts));
  }
  const first = problems.find((p) => !conflicts.includes(p)) ?? (problems[0] as ConfigurationProblem);
  throw invalid(`${what}: ${first.message}`, fieldErrors(problems));
}

/** Validates a flag's targeting in one environment against its project (segments, the environment's flags). */
export function checkConfiguration(
  name: string,
  targeting: FlagTargeting & { readonly rolloutPlan?: RolloutPlan | null },
  project: { segmentExists(id: string): boolean; flags: Iterable<PrerequisiteNode> },
): void {
  refuseProblems(validateConfiguration({ name, ...targeting }, project), `Flag "${name}" cannot be configured so`);
}

/** Validates a segment's conditions. */
export function checkSegmentConditions(conditions: unknown): void {
  refuseProblems(validateSegmentConditions(conditions), "The segment's conditions are not valid");
}
