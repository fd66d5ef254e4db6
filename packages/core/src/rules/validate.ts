import { FLAG_TYPES, type FlagType } from "../contract/enums.js";
import { isAttributeName, isFlagName, isTargetingKey, NOW_ATTRIBUTE } from "../contract/ids.js";
import {
  ALLOWED_PERCENTAGES,
  PREREQUISITES_MAX,
  ROLLOUT_STEPS_MAX,
  RULES_MAX,
  SPLIT_BUCKETS,
  VARIANT_VALUE_MAX_BYTES,
  VARIANTS_MAX,
  VARIANTS_MIN,
} from "../contract/limits.js";
import { type PrerequisiteNode, prerequisiteGraphProblems } from "./prerequisites.js";
import {
  at,
  type ConfigurationProblem,
  checkDescription,
  isObject,
  type Place,
  Problems,
  show,
  top,
  type ValidationOptions,
  type ValidationProject,
} from "./problems.js";
import { checkConditions, checkPatternTotals } from "./validate-conditions.js";
import { isAllowedPercentage } from "./rollout-plan.js";
import { parseInstant } from "./values.js";
import { BOOLEAN_VARIANTS } from "./variants.js";

// Validation on write: everything about a flag's targeting that a schema cannot say (values against their
// operator, variant keys, weights, regular expressions, duplicate ids, prerequisite cycles), and, so that it
// stands alone (the console and SDKs call it on unchecked input), the shapes and limits the schemas say too.
// Every problem names where it is: a JSON Pointer into the validated object, and in its message the rule
// (index and id) and the condition at fault. The conditions' own checks are in validate-conditions.ts, the
// problems and where they are in problems.ts.

/** What `validateConfiguration` reads: a flag's type and variants, and one environment's configuration. */
export interface TargetingInput {
  /** The flag's name: a prerequisite on itself is a cycle. */
  readonly name: string;
  readonly type?: unknown;
  readonly variants?: unknown;
  readonly onVariant?: unknown;
  readonly offVariant?: unknown;
  readonly rules?: unknown;
  readonly prerequisites?: unknown;
  /** A timed rollout plan (rollout-plan.ts); absent or null: none. */
  readonly rolloutPlan?: unknown;
}

/** Whether a value is plain JSON: no undefined, functions, class instances, non-finite numbers or cycles. */
function isJson(value: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  if (typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).every((item) => isJson(item, depth + 1));
}

const encoder = new TextEncoder();

function valueProblemOf(type: FlagType, value: unknown): string | null {
  switch (type) {
    case "boolean":
      if (typeof value !== "boolean") return "must be a boolean";
      break;
    case "string":
      if (typeof value !== "string") return "must be a string (the flag's type)";
      break;
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a finite number (the flag's type)";
      break;
    case "object":
      if (typeof value !== "object" || value === null || !isJson(value)) {
        return "must be a JSON object or array (the flag's type)";
      }
      break;
  }
  if (encoder.encode(JSON.stringify(value)).length > VARIANT_VALUE_MAX_BYTES) {
    return `is larger than ${VARIANT_VALUE_MAX_BYTES / 1024} KiB as JSON`;
  }
  return null;
}

/** A flag's type, or null (with a problem) when it is not one. */
function flagType(value: unknown, problems: Problems): FlagType | null {
  if (value === undefined) return "boolean";
  if (typeof value === "string" && (FLAG_TYPES as readonly string[]).includes(value)) return value as FlagType;
  problems.add("invalid", top("type"), `must be one of ${FLAG_TYPES.join(", ")}`);
  return null;
}

/** Checks the variants of a flag of `type`; answers the keys of those that are valid. */
function checkVariants(type: FlagType, variants: unknown, problems: Problems): Set<string> {
  const place = top("variants");
  const keys = new Set<string>();
  if (type === "boolean") {
    // A boolean flag's variants are fixed; they may be written out, but only as they are.
    const ok =
      variants === undefined ||
      (Array.isArray(variants) &&
        variants.length === 2 &&
        BOOLEAN_VARIANTS.every((b) => variants.some((v) => isObject(v) && v.key === b.key && v.value === b.value)));
    if (!ok) problems.add("invalid", place, 'a boolean flag\'s variants are fixed: "on" (true) and "off" (false)');
    for (const b of BOOLEAN_VARIANTS) keys.add(b.key);
    return keys;
  }
  if (!Array.isArray(variants)) {
    problems.add("invalid", place, `a ${type} flag declares ${VARIANTS_MIN}–${VARIANTS_MAX} variants`);
    return keys;
  }
  if (variants.length < VARIANTS_MIN || variants.length > VARIANTS_MAX) {
    problems.add(
      "limit",
      place,
      `a ${type} flag declares ${VARIANTS_MIN}–${VARIANTS_MAX} variants, not ${variants.length}`,
    );
  }
  for (const [i, variant] of variants.entries()) {
    const vp = at(place, i);
    if (!isObject(variant)) {
      problems.add("invalid", vp, "must be an object {key, value, description?}");
      continue;
    }
    problems.fields(variant, ["key", "value", "description"], vp);
    if (!isTargetingKey(variant.key)) {
      problems.add(
        "invalid",
        at(vp, "key"),
        "must be 1–64 characters of A–Z a–z 0–9 . _ -, starting with a letter or digit",
      );
    } else if (keys.has(variant.key)) {
      problems.add("duplicate", at(vp, "key"), `the key ${show(variant.key)} is used twice`);
    } else {
      keys.add(variant.key);
    }
    if (!("value" in variant)) problems.add("invalid", at(vp, "value"), "is required");
    else {
      const problem = valueProblemOf(type, variant.value);
      if (problem) problems.add("invalid_value", at(vp, "value"), problem);
    }
    checkDescription(variant.description, at(vp, "description"), problems);
  }
  return keys;
}

/** Checks that `value` names one of the variants. */
function checkVariantKey(value: unknown, keys: ReadonlySet<string>, place: Place, problems: Problems): void {
  if (typeof value !== "string") problems.add("invalid", place, "must be a variant key");
  else if (!keys.has(value)) {
    problems.add(
      "unknown_variant",
      place,
      `${show(value)} is not one of the flag's variants (${[...keys].join(", ")})`,
    );
  }
}

/** Weights are percentages with at most three decimals: a whole number of thousandths (of 100,000 buckets). */
export const thousandths = (weight: number): number => Math.round(weight * 1000);
const hasThreeDecimals = (weight: number) => Math.abs(weight * 1000 - thousandths(weight)) < 1e-6;

function checkSplit(split: unknown, keys: ReadonlySet<string>, place: Place, problems: Problems): void {
  if (!isObject(split)) {
    problems.add("invalid", place, "must be an object {bucketBy?, weights}");
    return;
  }
  problems.fields(split, ["bucketBy", "weights"], place);
  if (split.bucketBy !== undefined && (!isAttributeName(split.bucketBy) || split.bucketBy === NOW_ATTRIBUTE)) {
    problems.add("invalid", at(place, "bucketBy"), "must be an attribute name (not $now)");
  }
  const wp = at(place, "weights");
  const weights = split.weights;
  if (!Array.isArray(weights) || weights.length === 0) {
    problems.add("invalid", wp, "must list at least one {variant, weight}");
    return;
  }
  if (weights.length > VARIANTS_MAX) problems.add("limit", wp, `holds more than ${VARIANTS_MAX} weights`);
  const seen = new Set<string>();
  let total = 0;
  let readable = true;
  for (const [i, entry] of weights.entries()) {
    const ep = at(wp, i);
    if (!isObject(entry)) {
      readable = false;
      problems.add("invalid", ep, "must be an object {variant, weight}");
      continue;
    }
    problems.fields(entry, ["variant", "weight"], ep);
    checkVariantKey(entry.variant, keys, at(ep, "variant"), problems);
    if (typeof entry.variant === "string") {
      if (seen.has(entry.variant))
        problems.add("duplicate", at(ep, "variant"), `${show(entry.variant)} has two weights`);
      seen.add(entry.variant);
    }
    const w = entry.weight;
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0 || w > 100 || !hasThreeDecimals(w)) {
      readable = false;
      problems.add(
        "weights",
        at(ep, "weight"),
        `must be a percentage from 0 to 100 with at most three decimals, not ${show(w)}`,
      );
      continue;
    }
    total += thousandths(w);
  }
  if (readable && total !== SPLIT_BUCKETS) {
    problems.add("weights", wp, `the weights sum to ${total / 1000}, not 100`);
  }
}

function checkServe(serve: unknown, keys: ReadonlySet<string>, place: Place, problems: Problems): void {
  if (!isObject(serve) || "variant" in serve === "split" in serve) {
    problems.add("invalid", place, "must be {variant} or {split: {bucketBy?, weights}}");
    return;
  }
  if ("variant" in serve) {
    problems.fields(serve, ["variant"], place);
    checkVariantKey(serve.variant, keys, at(place, "variant"), problems);
  } else {
    problems.fields(serve, ["split"], place);
    checkSplit(serve.split, keys, at(place, "split"), problems);
  }
}

function checkRules(
  rules: unknown,
  keys: ReadonlySet<string>,
  project: ValidationProject | undefined,
  problems: Problems,
): void {
  const place = top("rules");
  if (rules === undefined) return;
  if (!Array.isArray(rules)) {
    problems.add("invalid", place, "must be an array of rules");
    return;
  }
  if (rules.length > RULES_MAX) problems.add("limit", place, `holds more than ${RULES_MAX} rules`);
  const ids = new Set<string>();
  for (const [index, rule] of rules.entries()) {
    const id = isObject(rule) && typeof rule.id === "string" ? rule.id : null;
    const rp: Place = { path: `/rules/${index}`, rule: { index, id }, tail: "" };
    if (!isObject(rule)) {
      problems.add("invalid", rp, "must be an object {id, description?, conditions, serve}");
      continue;
    }
    problems.fields(rule, ["id", "description", "conditions", "serve"], rp);
    if (!isTargetingKey(rule.id)) {
      problems.add(
        "invalid",
        at(rp, "id"),
        "must be 1–64 characters of A–Z a–z 0–9 . _ -, starting with a letter or digit",
      );
    } else if (ids.has(rule.id)) {
      problems.add("duplicate", at(rp, "id"), `another rule has the id ${show(rule.id)}`);
    } else {
      ids.add(rule.id);
    }
    checkDescription(rule.description, at(rp, "description"), problems);
    checkConditions(rule.conditions, at(rp, "conditions"), { segment: false, project }, problems);
    checkServe(rule.serve, keys, at(rp, "serve"), problems);
  }
}

function checkPrerequisites(input: TargetingInput, project: ValidationProject | undefined, problems: Problems): void {
  const place = top("prerequisites");
  const prerequisites = input.prerequisites;
  if (prerequisites === undefined) return;
  if (!Array.isArray(prerequisites)) {
    problems.add("invalid", place, "must be an array of {flag, variants}");
    return;
  }
  if (prerequisites.length > PREREQUISITES_MAX)
    problems.add("limit", place, `holds more than ${PREREQUISITES_MAX} prerequisites`);
  const flags = project?.flags ? new Map(Array.from(project.flags, (f) => [f.name, f] as const)) : undefined;
  const seen = new Set<string>();
  let wellFormed = true;
  for (const [i, prerequisite] of prerequisites.entries()) {
    const pp = at(place, i);
    if (!isObject(prerequisite)) {
      wellFormed = false;
      problems.add("invalid", pp, "must be an object {flag, variants}");
      continue;
    }
    problems.fields(prerequisite, ["flag", "variants"], pp);
    const { flag, variants } = prerequisite;
    if (!isFlagName(flag)) {
      wellFormed = false;
      problems.add("invalid", at(pp, "flag"), "must be a flag name");
      continue;
    }
    if (flag === input.name) {
      wellFormed = false;
      problems.add("prerequisite_cycle", at(pp, "flag"), `a flag cannot be its own prerequisite (${flag} → ${flag})`);
      continue;
    }
    if (seen.has(flag)) problems.add("duplicate", at(pp, "flag"), `${show(flag)} is listed twice`);
    seen.add(flag);
    const target = flags?.get(flag);
    if (flags && !target) problems.add("unknown_flag", at(pp, "flag"), `there is no flag ${show(flag)}`);
    if (!Array.isArray(variants) || variants.length === 0) {
      problems.add("invalid", at(pp, "variants"), "must list at least one variant key");
      continue;
    }
    if (variants.length > VARIANTS_MAX)
      problems.add("limit", at(pp, "variants"), `holds more than ${VARIANTS_MAX} keys`);
    const targetKeys = target ? variantKeys(target) : undefined;
    for (const [j, key] of variants.entries()) {
      if (!isTargetingKey(key)) problems.add("invalid", at(at(pp, "variants"), j), "must be a variant key");
      else if (targetKeys && !targetKeys.has(key)) {
        problems.add("unknown_variant", at(at(pp, "variants"), j), `${show(key)} is not a variant of ${flag}`);
      }
    }
  }
  if (flags && wellFormed) {
    for (const problem of prerequisiteGraphProblems(input.name, prerequisites as { flag: string }[], flags)) {
      problems.add(problem.code, at(place, problem.index), problem.message);
    }
  }
}

/** The keys of a (listed) flag's variants. */
function variantKeys(flag: PrerequisiteNode): Set<string> {
  const variants = flag.type === undefined || flag.type === "boolean" ? BOOLEAN_VARIANTS : (flag.variants ?? []);
  return new Set(variants.map((v) => v.key));
}

/**
 * A timed rollout plan: at most ROLLOUT_STEPS_MAX steps, each at an instant (ISO 8601), in time order,
 * each a percentage among the allowed ones, or the weights of a rule that serves a split (checked as that
 * split's weights are); a percentage or a rule's weights stepped twice at one instant is a contradiction.
 */
function checkRolloutPlan(plan: unknown, rules: unknown, keys: ReadonlySet<string>, problems: Problems): void {
  if (plan === undefined || plan === null) return;
  const place = top("rolloutPlan");
  if (!isObject(plan)) {
    problems.add("invalid", place, "must be an object {steps, pausedAt?} or null");
    return;
  }
  problems.fields(plan, ["steps", "pausedAt"], place);
  if (plan.pausedAt !== undefined && plan.pausedAt !== null) {
    if (typeof plan.pausedAt !== "string" || Number.isNaN(parseInstant(plan.pausedAt))) {
      problems.add("invalid", at(place, "pausedAt"), "must be an ISO 8601 instant or null");
    }
  }
  const sp = at(place, "steps");
  const steps = plan.steps;
  if (!Array.isArray(steps) || steps.length === 0) {
    problems.add("invalid", sp, "must list at least one step {at, percentage} or {at, ruleId, weights}");
    return;
  }
  if (steps.length > ROLLOUT_STEPS_MAX) problems.add("limit", sp, `holds more than ${ROLLOUT_STEPS_MAX} steps`);
  const splitRules = new Map<string, unknown>();
  if (Array.isArray(rules)) {
    for (const rule of rules) {
      if (isObject(rule) && typeof rule.id === "string" && isObject(rule.serve) && "split" in rule.serve) {
        splitRules.set(rule.id, rule.serve.split);
      }
    }
  }
  let previous = Number.NEGATIVE_INFINITY;
  /** The last instant each series (the percentage, each rule's weights) stepped at. */
  const lastOf = new Map<string, number>();
  for (const [i, step] of steps.entries()) {
    const ep = at(sp, i);
    if (!isObject(step)) {
      problems.add("invalid", ep, "must be an object {at, percentage} or {at, ruleId, weights}");
      continue;
    }
    const time = typeof step.at === "string" ? parseInstant(step.at) : Number.NaN;
    if (Number.isNaN(time)) {
      problems.add("invalid", at(ep, "at"), "must be an ISO 8601 instant, such as 2026-12-01T09:00:00Z");
    } else if (time < previous) {
      problems.add("invalid", at(ep, "at"), "is before the step above it: steps are in time order");
    } else {
      previous = time;
    }
    let series: string;
    if ("ruleId" in step) {
      problems.fields(step, ["at", "ruleId", "weights"], ep);
      series = `rule:${String(step.ruleId)}`;
      if (!splitRules.has(step.ruleId as string)) {
        problems.add("invalid", at(ep, "ruleId"), `names no rule that serves a split (${show(step.ruleId)})`);
      } else {
        checkSplit({ weights: step.weights }, keys, ep, problems);
      }
    } else {
      problems.fields(step, ["at", "percentage"], ep);
      series = "percentage";
      if (!isAllowedPercentage(step.percentage)) {
        problems.add("invalid", at(ep, "percentage"), `must be one of ${ALLOWED_PERCENTAGES.join(", ")}`);
      }
    }
    if (!Number.isNaN(time)) {
      if (lastOf.get(series) === time) {
        problems.add(
          "duplicate",
          at(ep, "at"),
          `another step sets the same ${series === "percentage" ? "percentage" : "rule's weights"} at this instant`,
        );
      }
      lastOf.set(series, time);
    }
  }
}

/**
 * Everything wrong with a flag's targeting: its type and variants, and one environment's configuration
 * (onVariant, offVariant, rules, prerequisites). Empty when it may be written. With `project`, segment
 * and flag references are checked too, and prerequisite cycles and chains deeper than 5.
 */
export function validateConfiguration(
  input: TargetingInput,
  project?: ValidationProject,
  options: ValidationOptions = {},
): ConfigurationProblem[] {
  const problems = new Problems(options);
  const type = flagType(input.type, problems);
  if (type === null) return problems.list;
  const keys = checkVariants(type, input.variants, problems);
  for (const field of ["onVariant", "offVariant"] as const) {
    const place = top(field);
    const value = input[field];
    const fixed = field === "onVariant" ? "on" : "off";
    if (type === "boolean") {
      if (value !== undefined && value !== fixed)
        problems.add("invalid", place, `a boolean flag's ${field} is "${fixed}"`);
    } else if (value === undefined) {
      problems.add("invalid", place, `is required for a ${type} flag`);
    } else {
      checkVariantKey(value, keys, place, problems);
    }
  }
  checkRules(input.rules, keys, project, problems);
  checkPatternTotals(top("rules"), problems);
  checkPrerequisites(input, project, problems);
  checkRolloutPlan(input.rolloutPlan, input.rules, keys, problems);
  return problems.list;
}

/** Checks a flag's variants alone (at creation, before any configuration names them). */
export function validateVariants(type: unknown, variants: unknown): ConfigurationProblem[] {
  const problems = new Problems({});
  const t = flagType(type, problems);
  if (t !== null) checkVariants(t, variants, problems);
  return problems.list;
}
