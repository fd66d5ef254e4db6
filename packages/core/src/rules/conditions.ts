import { NOW_ATTRIBUTE } from "../contract/ids.js";
import type { ConditionOperator } from "../contract/enums.js";
import { NEGATED_TWIN, OPERATOR_KIND } from "./operators.js";
import { compilePattern, type Pattern } from "./regex.js";
import { compareSemver, parseSemver, type SemVer } from "./semver.js";
import type { Condition, TargetingResolver } from "./types.js";
import { validateSegmentConditions } from "./validate.js";
import { toInstant, toNumber, toText } from "./values.js";

/** What one evaluation's conditions read: the context, and through the resolver segments and the clock. */
export interface Scope {
  readonly attributes: Readonly<Record<string, unknown>> | undefined;
  readonly actorIds: readonly string[];
  readonly resolver: TargetingResolver;
  /** `$now`, in milliseconds; NaN until a condition first reads it (so the clock is read once at most). */
  now: number;
}

/** A compiled condition, or all of a rule's or a segment's conditions. */
export type Test = (scope: Scope) => boolean;

/** A configuration the validator refuses, met while evaluating: the evaluation answers ERROR / PARSE_ERROR. */
export class ConfigurationError extends Error {}

/** Reads an attribute as an own property (a context named "constructor" must not find Object's). */
function attributeReader(attribute: string): (scope: Scope) => unknown {
  if (attribute === NOW_ATTRIBUTE) {
    return (scope) => {
      if (Number.isNaN(scope.now)) scope.now = scope.resolver.now ? scope.resolver.now() : Date.now();
      return scope.now;
    };
  }
  // Only names an ordinary object inherits need the slower own-property check.
  if (attribute in Object.prototype) {
    return ({ attributes }) =>
      attributes !== undefined && Object.hasOwn(attributes, attribute) ? attributes[attribute] : undefined;
  }
  return ({ attributes }) => (attributes === undefined ? undefined : attributes[attribute]);
}

/**
 * A condition on an attribute: false when the attribute is missing (null counts as missing) or, as a
 * single value, cannot be read as the operator's kind, whatever `negate` says. A list holds when any of
 * its elements (read alike) does; then `negate` applies to the list as a whole.
 */
function attributeTest<T>(
  attribute: string,
  read: (value: unknown) => T | undefined,
  holds: (operand: T) => boolean,
  negate: boolean,
): Test {
  const get = attributeReader(attribute);
  return (scope) => {
    const raw = get(scope);
    if (raw === undefined || raw === null) return false;
    if (Array.isArray(raw)) {
      let any = false;
      for (const element of raw) {
        const operand = read(element);
        if (operand !== undefined && holds(operand)) {
          any = true;
          break;
        }
      }
      return any !== negate;
    }
    const operand = read(raw);
    return operand !== undefined && holds(operand) !== negate;
  };
}

const lower = (value: unknown) => toText(value)?.toLowerCase();
const finite = (value: unknown) => {
  const n = toNumber(value);
  return Number.isNaN(n) ? undefined : n;
};
const instant = (value: unknown) => {
  const t = toInstant(value);
  return Number.isNaN(t) ? undefined : t;
};
const semver = (value: unknown) => {
  const text = toText(value);
  return text === undefined ? undefined : (parseSemver(text) ?? undefined);
};

function textHolds(operator: ConditionOperator, values: readonly string[], ci: boolean): (text: string) => boolean {
  const vs = ci && operator !== "matches" ? values.map((v) => v.toLowerCase()) : values;
  switch (operator) {
    case "starts_with":
      return (t) => vs.some((v) => t.startsWith(v));
    case "ends_with":
      return (t) => vs.some((v) => t.endsWith(v));
    case "contains":
      return (t) => vs.some((v) => t.includes(v));
    case "matches": {
      const patterns = vs.map((v) => compilePattern(v, ci) as Pattern);
      return (t) => patterns.some((p) => p(t));
    }
    default: {
      const set = new Set(vs);
      return (t) => set.has(t);
    }
  }
}

// "Greater than any of the values" is "greater than the least of them", and so on: one comparison each.
function numberHolds(operator: ConditionOperator, values: readonly number[]): (n: number) => boolean {
  const min = Math.min(...values);
  const max = Math.max(...values);
  switch (operator) {
    case "gt":
      return (n) => n > min;
    case "gte":
      return (n) => n >= min;
    case "lt":
      return (n) => n < max;
    case "lte":
      return (n) => n <= max;
    default: {
      const set = new Set(values);
      return (n) => set.has(n);
    }
  }
}

function semverHolds(operator: ConditionOperator, values: readonly string[]): (v: SemVer) => boolean {
  const versions = values.map((v) => parseSemver(v) as SemVer).sort(compareSemver);
  const min = versions[0] as SemVer;
  const max = versions[versions.length - 1] as SemVer;
  switch (operator) {
    case "semver_gt":
      return (v) => compareSemver(v, min) > 0;
    case "semver_gte":
      return (v) => compareSemver(v, min) >= 0;
    case "semver_lt":
      return (v) => compareSemver(v, max) < 0;
    case "semver_lte":
      return (v) => compareSemver(v, max) <= 0;
    default:
      return (v) => versions.some((w) => compareSemver(v, w) === 0);
  }
}

/** Compiles one condition the validator accepted. */
function compileCondition(condition: Condition): Test {
  const twin = NEGATED_TWIN[condition.operator];
  const operator = twin ?? condition.operator;
  const negate = (condition.negate === true) !== (twin !== undefined);
  const attribute = condition.attribute as string;
  const values = condition.values;
  switch (OPERATOR_KIND[operator]) {
    case "text": {
      const ci = condition.caseInsensitive === true;
      const holds = textHolds(operator, values as string[], ci);
      return attributeTest(attribute, ci && operator !== "matches" ? lower : toText, holds, negate);
    }
    case "number":
      return attributeTest(attribute, finite, numberHolds(operator, values as number[]), negate);
    case "semver":
      return attributeTest(attribute, semver, semverHolds(operator, values as string[]), negate);
    case "instant": {
      const times = (values as string[]).map(toInstant);
      const bound = operator === "before" ? Math.max(...times) : Math.min(...times);
      const holds = operator === "before" ? (t: number) => t < bound : (t: number) => t > bound;
      return attributeTest(attribute, instant, holds, negate);
    }
    case "present": {
      // The one operator negate fully inverts: "not present" is how a rule asks for a missing attribute.
      const get = attributeReader(attribute);
      return (scope) => {
        const raw = get(scope);
        return (raw !== undefined && raw !== null) !== negate;
      };
    }
    case "segment": {
      const segments = values as string[];
      return (scope) => segments.some((segmentId) => inSegment(scope, segmentId)) !== negate;
    }
  }
}

/** All of `conditions`, compiled: true when every one holds (so an empty list always holds). */
export function compileConditions(conditions: readonly Condition[]): Test {
  const tests = conditions.map(compileCondition);
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0] as Test;
  return (scope) => {
    for (let i = 0; i < tests.length; i++) if (!(tests[i] as Test)(scope)) return false;
    return true;
  };
}

/** Segment conditions compiled once per list the resolver hands out (the list is read as immutable). */
const segmentTests = new WeakMap<readonly Condition[], Test | ConfigurationError>();

function segmentTest(conditions: readonly Condition[]): Test {
  let test = segmentTests.get(conditions);
  if (test === undefined) {
    const problem = validateSegmentConditions(conditions)[0];
    test = problem ? new ConfigurationError(`segment conditions: ${problem.message}`) : compileConditions(conditions);
    segmentTests.set(conditions, test);
  }
  if (test instanceof ConfigurationError) throw test;
  return test;
}

/**
 * Whether the context is in a segment: one of its actors is a listed member, or the segment has
 * conditions and they all hold. A segment with no conditions (or an empty list) holds only its members.
 */
export function inSegment(scope: Scope, segmentId: string): boolean {
  const resolver = scope.resolver;
  for (const actorId of scope.actorIds) if (resolver.isMember(segmentId, actorId)) return true;
  const conditions = resolver.segmentConditions?.(segmentId);
  return conditions !== undefined && conditions.length > 0 && segmentTest(conditions)(scope);
}
