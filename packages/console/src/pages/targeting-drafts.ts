// What the targeting forms hold (issue 25): conditions, rules and prerequisites as drafts, strings as typed,
// and their conversion to the API's shapes (core's, through the SDK). The operators' kinds are core's
// table (OPERATOR_KIND), the one the validator and the engine read; their labels and help are the console's.
import type { ConditionOperator, Flag, OperatorKind } from "@flagstaff/sdk";
import { OPERATOR_KIND, SPLIT_BUCKETS } from "@flagstaff/sdk";

export type Rule = Flag["rules"][number];
export type Condition = Rule["conditions"][number];
export type Variant = Flag["variants"][number];
export type Prerequisite = Flag["prerequisites"][number];

let nextKey = 1;
/** A key for React and for placing problems: stable while a rule or condition moves. */
export const newKey = () => nextKey++;

// ---- Operators ----

export type Kind = OperatorKind;

/** What each operator compares: core's table, the one the validator and the engine read. */
export const KIND = OPERATOR_KIND;

export const OPERATOR_LABELS: Record<ConditionOperator, string> = {
  in: "is one of",
  not_in: "is none of",
  starts_with: "starts with",
  ends_with: "ends with",
  contains: "contains",
  matches: "matches (RE2)",
  eq: "= (number)",
  gt: "> (number)",
  gte: "≥ (number)",
  lt: "< (number)",
  lte: "≤ (number)",
  semver_eq: "= (version)",
  semver_gt: "> (version)",
  semver_gte: "≥ (version)",
  semver_lt: "< (version)",
  semver_lte: "≤ (version)",
  before: "before (instant)",
  after: "after (instant)",
  present: "is set",
  in_segment: "in segment",
  not_in_segment: "not in segment",
};

export const VALUES_HELP: Record<Kind, string> = {
  text: "Any of these strings. Enter or a comma adds one.",
  number: "Any of these numbers. Enter adds one.",
  semver: "Versions such as 1.2.3, v2 or 1.0.0-rc.1. Enter or a comma adds one.",
  instant: "ISO 8601 instants such as 2026-12-01T09:00:00Z ($now is the evaluation time). Enter adds one.",
  present: "No values: holds when the attribute is set.",
  segment: "An actor of the context is a member of any of these segments (listed or by its conditions).",
};

// ---- Drafts: what the forms hold, strings as typed ----

export interface ConditionDraft {
  key: number;
  attribute: string;
  operator: ConditionOperator;
  values: string[];
  /** Typed in the values box but not yet added as a value: it counts as one. */
  pending: string;
  negate: boolean;
  caseInsensitive: boolean;
}

export interface RuleDraft {
  key: number;
  id: string;
  description: string;
  conditions: ConditionDraft[];
  mode: "variant" | "split";
  variant: string;
  /** Weight per variant key, as typed (percent). */
  weights: Record<string, string>;
  bucketBy: string;
}

export interface PrerequisiteDraft {
  key: number;
  flag: string;
  variants: string[];
}

export function newCondition(operator: ConditionOperator = "in"): ConditionDraft {
  return { key: newKey(), attribute: "", operator, values: [], pending: "", negate: false, caseInsensitive: false };
}

export function conditionDrafts(conditions: readonly Condition[]): ConditionDraft[] {
  return conditions.map((c) => ({
    key: newKey(),
    attribute: c.attribute ?? "",
    operator: c.operator,
    values: c.values.map(String),
    pending: "",
    negate: c.negate === true,
    caseInsensitive: c.caseInsensitive === true,
  }));
}

/** A condition as the API takes it; numbers for number operators (a value that is not one stays text, so the validator names it). */
export function toCondition(d: ConditionDraft): Condition {
  const kind = KIND[d.operator];
  const raw = d.pending.trim() === "" ? d.values : [...d.values, d.pending.trim()];
  const values =
    kind === "present"
      ? []
      : kind === "number"
        ? raw.map((v) => (v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v))
        : raw;
  return {
    ...(kind === "segment" ? {} : { attribute: d.attribute.trim() }),
    operator: d.operator,
    values,
    ...(d.negate ? { negate: true } : {}),
    ...(d.caseInsensitive && kind === "text" ? { caseInsensitive: true } : {}),
  } as Condition;
}

/** Even weights that sum to 100 (in thousandths: SPLIT_BUCKETS), the first variant taking the remainder. */
export function evenWeights(keys: readonly string[]): Record<string, string> {
  if (keys.length === 0) return {};
  const each = Math.floor(SPLIT_BUCKETS / keys.length);
  const first = SPLIT_BUCKETS - each * (keys.length - 1);
  return Object.fromEntries(keys.map((k, i) => [k, String((i === 0 ? first : each) / 1000)]));
}

export function ruleDrafts(rules: readonly Rule[]): RuleDraft[] {
  return rules.map((r) => {
    const split = "split" in r.serve ? r.serve.split : undefined;
    return {
      key: newKey(),
      id: r.id,
      description: r.description ?? "",
      conditions: conditionDrafts(r.conditions),
      mode: split ? "split" : "variant",
      variant: "variant" in r.serve ? r.serve.variant : "",
      weights: split ? Object.fromEntries(split.weights.map((w) => [w.variant, String(w.weight)])) : {},
      bucketBy: split?.bucketBy ?? "",
    };
  });
}

export function toRule(d: RuleDraft): Rule {
  const weights = Object.entries(d.weights)
    .filter(([, w]) => w.trim() !== "")
    .map(([variant, w]) => ({ variant, weight: Number(w) }));
  return {
    id: d.id.trim(),
    ...(d.description.trim() !== "" ? { description: d.description } : {}),
    conditions: d.conditions.map(toCondition),
    serve:
      d.mode === "variant"
        ? { variant: d.variant }
        : { split: { ...(d.bucketBy.trim() !== "" ? { bucketBy: d.bucketBy.trim() } : {}), weights } },
  } as Rule;
}

/** A split's total in thousandths of a percent (what the validator sums), from the weights as typed. */
export function splitTotal(d: RuleDraft): number | undefined {
  let total = 0;
  for (const w of Object.values(d.weights)) {
    if (w.trim() === "") continue;
    const n = Number(w);
    if (!Number.isFinite(n)) return undefined;
    total += Math.round(n * 1000);
  }
  return total;
}

export const percent = (thousandths: number) =>
  `${(thousandths / 1000).toLocaleString("en", { maximumFractionDigits: 3 })}%`;

/** "Rule 2 “split”". */
export const ruleName = (index: number, id: string) => `Rule ${index + 1}${id.trim() ? ` “${id.trim()}”` : ""}`;
