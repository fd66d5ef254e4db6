import { DESCRIPTION_MAX_LENGTH } from "../contract/limits.js";
import type { PatternCost } from "./regex.js";
import type { PrerequisiteNode } from "./prerequisites.js";

// What validation answers (its problems, each with where it is) and what the validators of a flag's
// configuration (validate.ts) and of conditions (validate-conditions.ts) share to collect them.

/** The kinds of problem; prerequisite_cycle and prerequisite_depth are conflicts with other flags (a 409). */
export const CONFIGURATION_PROBLEM_CODES = [
  "invalid",
  "limit",
  "duplicate",
  "invalid_value",
  "invalid_regex",
  "unknown_variant",
  "weights",
  "unknown_segment",
  "unknown_flag",
  "prerequisite_cycle",
  "prerequisite_depth",
] as const;
export type ConfigurationProblemCode = (typeof CONFIGURATION_PROBLEM_CODES)[number];

export interface ConfigurationProblem {
  readonly code: ConfigurationProblemCode;
  /** A JSON Pointer into the validated object, e.g. "/rules/2/conditions/0/values/1". */
  readonly path: string;
  /** Says what is wrong, after where: `rules[2] "eu-beta", conditions[0], values[1]: gt takes finite numbers…`. */
  readonly message: string;
  /** The rule at fault: its index and its id (null when the id itself is missing). */
  readonly rule?: { readonly index: number; readonly id: string | null };
  /** The index of the condition at fault, within the rule or the segment. */
  readonly condition?: number;
}

/** What the validator may look up in the flag's project and environment; without it, references are checked for form only. */
export interface ValidationProject {
  /** Whether a segment exists (in_segment, not_in_segment). */
  segmentExists?(segmentId: string): boolean;
  /**
   * The environment's flags, with their prerequisites, for unknown flags and variants, cycles and chain
   * depth. The flag validated may be among them: its new configuration replaces the one listed.
   */
  readonly flags?: Iterable<PrerequisiteNode>;
}

/**
 * Where a problem is: its JSON Pointer, and for the message the rule and condition it is in and the rest
 * of the way (`rules[2] "eu-beta", conditions[0], values[1]`).
 */
export interface Place {
  readonly path: string;
  readonly rule?: { readonly index: number; readonly id: string | null };
  readonly condition?: number;
  /** The way from the rule or condition (or the top) to the value: "values[1]", "serve.split.weights". */
  readonly tail: string;
}

export const at = (place: Place, key: string | number): Place => ({
  ...place,
  path: `${place.path}/${key}`,
  tail: typeof key === "number" ? `${place.tail}[${key}]` : place.tail ? `${place.tail}.${key}` : key,
});

export const top = (key: string): Place => ({ path: `/${key}`, tail: key });

export class Problems {
  readonly list: ConfigurationProblem[] = [];
  /** The distinct `matches` patterns met so far (case flag and source), with their costs; null: not counted. */
  readonly patterns: Map<string, PatternCost> | null;
  /** The expanded sizes of the distinct patterns met so far (see expandedSize), and which they were. */
  patternSize = 0;
  readonly sized = new Set<string>();

  constructor(options: ValidationOptions) {
    this.patterns = options.patternCosts === false ? null : new Map();
  }

  add(code: ConfigurationProblemCode, place: Place, message: string): void {
    const { path, rule, condition, tail } = place;
    const where = [
      rule ? `rules[${rule.index}]${rule.id === null ? "" : ` ${JSON.stringify(rule.id)}`}` : "",
      condition !== undefined ? `conditions[${condition}]` : "",
      tail,
    ].filter((part) => part !== "");
    this.list.push({
      code,
      path: path || "/",
      message: where.length > 0 ? `${where.join(", ")}: ${message}` : message,
      ...(rule ? { rule } : {}),
      ...(condition !== undefined ? { condition } : {}),
    });
  }

  /** Refuses fields an object does not know. */
  fields(value: object, known: readonly string[], place: Place): void {
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) this.add("invalid", at(place, key), "is not a known field");
    }
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

export function checkDescription(value: unknown, place: Place, problems: Problems): void {
  if (value === undefined) return;
  if (typeof value !== "string") problems.add("invalid", place, "must be a string");
  else if (value.length > DESCRIPTION_MAX_LENGTH) {
    problems.add("limit", place, `is longer than ${DESCRIPTION_MAX_LENGTH} characters`);
  }
}

/** How much `validateConfiguration` and `validateSegmentConditions` check. */
export interface ValidationOptions {
  /**
   * Whether `matches` patterns are held to what they cost (PATTERN_STATES_MAX and the limits in all),
   * which takes building their automata: true (the default) where a configuration is written; false
   * where one already stored is compiled for evaluation, so that a pattern stored before these limits
   * keeps working, and loading costs nothing more.
   */
  readonly patternCosts?: boolean;
}
