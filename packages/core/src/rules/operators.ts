import { CONDITION_OPERATORS, type ConditionOperator } from "../contract/enums.js";
import { SEGMENT_ID_MAX_LENGTH } from "../contract/ids.js";
import { compilePattern } from "./regex.js";
import { parseSemver } from "./semver.js";
import { parseInstant } from "./values.js";

/**
 * What an operator reads the attribute as, which decides the values it takes: text (strings), number
 * (finite numbers), semver and instant (strings that parse as such), present (no values), segment
 * (segment ids; no attribute).
 */
export type OperatorKind = "text" | "number" | "semver" | "instant" | "present" | "segment";

export const OPERATOR_KIND: Readonly<Record<ConditionOperator, OperatorKind>> = {
  in: "text",
  not_in: "text",
  starts_with: "text",
  ends_with: "text",
  contains: "text",
  matches: "text",
  eq: "number",
  gt: "number",
  gte: "number",
  lt: "number",
  lte: "number",
  semver_eq: "semver",
  semver_gt: "semver",
  semver_gte: "semver",
  semver_lt: "semver",
  semver_lte: "semver",
  before: "instant",
  after: "instant",
  present: "present",
  in_segment: "segment",
  not_in_segment: "segment",
};

/** Operators that are their positive twin negated: not_in is in, not_in_segment is in_segment. */
export const NEGATED_TWIN: Partial<Record<ConditionOperator, ConditionOperator>> = {
  not_in: "in",
  not_in_segment: "in_segment",
};

const OPERATORS: ReadonlySet<string> = new Set(CONDITION_OPERATORS);
export const isOperator = (value: unknown): value is ConditionOperator =>
  typeof value === "string" && OPERATORS.has(value);

const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

/**
 * Why one value does not suit an operator, or null when it does. The validator asks this of every value;
 * evaluation compiles only configurations the validator accepts, so it never asks again.
 */
export function valueProblem(operator: ConditionOperator, value: unknown, caseInsensitive: boolean): string | null {
  switch (OPERATOR_KIND[operator]) {
    case "text":
      if (typeof value !== "string") return `${operator} takes strings; ${show(value)} is not one`;
      if (value === "" && operator !== "in" && operator !== "not_in") {
        return `${operator} takes non-empty strings (an empty one would always hold; use present)`;
      }
      if (operator === "matches") {
        const compiled = compilePattern(value, caseInsensitive);
        if (typeof compiled === "string") return `${show(value)} is not an RE2 regular expression: ${compiled}`;
      }
      return null;
    case "number":
      return typeof value === "number" && Number.isFinite(value)
        ? null
        : `${operator} takes finite numbers (JSON numbers, not strings); ${show(value)} is not one`;
    case "semver":
      return typeof value === "string" && parseSemver(value) !== null
        ? null
        : `${operator} takes semantic versions such as "1.2.3", "v2" or "1.0.0-rc.1"; ${show(value)} is not one`;
    case "instant":
      return typeof value === "string" && !Number.isNaN(parseInstant(value))
        ? null
        : `${operator} takes ISO 8601 instants such as "2026-12-01T09:00:00Z"; ${show(value)} is not one`;
    case "present":
      return "present takes no values";
    case "segment":
      return typeof value === "string" && value.length > 0 && value.length <= SEGMENT_ID_MAX_LENGTH
        ? null
        : `${operator} takes segment ids (1–${SEGMENT_ID_MAX_LENGTH} characters); ${show(value)} is not one`;
  }
}
