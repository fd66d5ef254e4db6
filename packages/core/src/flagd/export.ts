import { NEGATED_TWIN } from "../rules/operators.js";
import { isWeightsStep } from "../rules/rollout-plan.js";
import { parseSemver } from "../rules/semver.js";
import type { Condition, RolloutStep, SplitWeight, WeightsStep } from "../rules/types.js";
import { parseInstant } from "../rules/values.js";
import type { DocumentConfiguration, DocumentFlag, ProjectDocument } from "../schemas/project-document.js";
import {
  and,
  FLAGD_SCHEMA_URL,
  type FlagdDocument,
  type FlagdFlag,
  ifChain,
  type Logic,
  missing,
  not,
  or,
  present,
  TARGETING_KEY,
  TIMESTAMP,
  variable,
} from "./logic.js";

// A Flagstaff environment as flagd flag definitions (docs/flagd.md): each flag's configuration written as
// JsonLogic targeting that walks Flagstaff's order of evaluation (docs/targeting.md), so that flagd serves
// the variant Flagstaff's engine serves wherever no percentage decides. Segments and the flags other flags
// name as prerequisites are shared `$evaluators`; each evaluator is written out whole (it references no
// other), as flagd's implementations substitute `$ref`s in no set order.

/** The buckets of a flagd `fractional` the export writes: Flagstaff's 100,000 (weights in thousandths of a percent). */
const BUCKETS = 100_000;

/** The evaluator key of a segment's membership. */
export const segmentEvaluator = (id: string): string => `segment:${id}`;
/** The evaluator key of the variant a flag serves (for the flags that name it as a prerequisite). */
export const flagEvaluator = (name: string): string => `flag:${name}`;

/** A step of the export's timeline: a step's time in whole seconds (flagd's `$flagd.timestamp`), rounded up. */
const stepSeconds = (at: string): number => Math.ceil(parseInstant(at) / 1000);

interface Writer {
  readonly environment: string;
  readonly flags: ReadonlyMap<string, DocumentFlag>;
  readonly segments: ReadonlyMap<string, ProjectDocument["segments"][number]>;
  /** How a segment's membership or a flag's variant is written: a `$ref` in a flag's targeting, whole in an evaluator. */
  readonly inline: boolean;
  /** What the export could not write exactly, for the flag's metadata. */
  readonly notes: Set<string>;
}

const ref = (key: string): Logic => ({ $ref: key });
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A version as flagd's `sem_ver` reads it: MAJOR.MINOR.PATCH[-prerelease], no leading zeros. */
function canonicalVersion(text: string): string {
  const v = parseSemver(text);
  if (v === null) return text;
  const pre = v.prerelease.length > 0 ? `-${v.prerelease.join(".")}` : "";
  return `${v.major}.${v.minor}.${v.patch}${pre}`;
}

/** A value's spellings that a case-insensitive condition is exported with: as written, lower and upper case. */
const spellings = (values: readonly string[]): string[] => [
  ...new Set(values.flatMap((v) => [v, v.toLowerCase(), v.toUpperCase()])),
];

/** One element of an attribute (a list's elements one by one) against a condition's operator. */
function elementHolds(operator: string, condition: Condition, w: Writer): Logic {
  const element = variable("");
  const text: Logic = { cat: [element] };
  const ci = condition.caseInsensitive === true;
  if (ci) w.notes.add("caseInsensitive conditions match the values as written, in lower case and in upper case");
  const texts = ci ? spellings(condition.values.map(String)) : condition.values.map(String);
  const numbers = condition.values.map(Number);
  switch (operator) {
    case "in":
      return { in: [text, texts] };
    case "starts_with":
      return or(texts.map((t) => ({ starts_with: [text, t] })));
    case "ends_with":
      return or(texts.map((t) => ({ ends_with: [text, t] })));
    case "contains":
      return or(texts.map((t) => ({ in: [t, text] })));
    case "matches":
      w.notes.add("matches (regular expressions) has no flagd equivalent: its rules never hold");
      return false;
    case "eq":
      return or(numbers.map((n) => ({ "==": [element, n] })));
    case "gt":
      return { ">": [element, Math.min(...numbers)] };
    case "gte":
      return { ">=": [element, Math.min(...numbers)] };
    case "lt":
      return { "<": [element, Math.max(...numbers)] };
    case "lte":
      return { "<=": [element, Math.max(...numbers)] };
    case "before":
    case "after": {
      w.notes.add("before/after on an attribute compare text with the instant in UTC (…T09:00:00.000Z)");
      const instants = condition.values.map((v) => parseInstant(String(v)));
      const bound = operator === "before" ? Math.max(...instants) : Math.min(...instants);
      const iso = new Date(bound).toISOString();
      return operator === "before" ? { "<": [element, iso] } : { ">": [element, iso] };
    }
    default: {
      // semver_eq, semver_gt, …: flagd's sem_ver.
      const versions = condition.values.map((v) => canonicalVersion(String(v)));
      if (operator === "semver_eq") return or(versions.map((v) => ({ sem_ver: [element, "=", v] })));
      const sign = { semver_gt: ">", semver_gte: ">=", semver_lt: "<", semver_lte: "<=" }[operator] as string;
      // The least or the greatest version, as the engine compares (gt/gte with the least, lt/lte the greatest).
      const bound = boundVersion(condition.values.map(String), operator === "semver_gt" || operator === "semver_gte");
      return { sem_ver: [element, sign, canonicalVersion(bound)] };
    }
  }
}

/** The lowest (or highest) of some versions by SemVer precedence. */
function boundVersion(values: readonly string[], lowest: boolean): string {
  let best = values[0] as string;
  for (const value of values.slice(1)) {
    const c = compareSemverText(value, best);
    if (lowest ? c < 0 : c > 0) best = value;
  }
  return best;
}

function compareSemverText(a: string, b: string): number {
  const x = parseSemver(a);
  const y = parseSemver(b);
  if (x === null || y === null) return 0;
  const digits = (p: string, q: string) => (p.length !== q.length ? p.length - q.length : compareText(p, q));
  const core = digits(x.major, y.major) || digits(x.minor, y.minor) || digits(x.patch, y.patch);
  if (core !== 0) return core;
  if (x.prerelease.length === 0 || y.prerelease.length === 0) return y.prerelease.length - x.prerelease.length;
  for (let i = 0; i < Math.min(x.prerelease.length, y.prerelease.length); i++) {
    const p = x.prerelease[i] as string;
    const q = y.prerelease[i] as string;
    const pn = /^[0-9]+$/.test(p);
    const qn = /^[0-9]+$/.test(q);
    const c = pn && qn ? digits(p, q) : pn !== qn ? (pn ? -1 : 1) : compareText(p, q);
    if (c !== 0) return c;
  }
  return x.prerelease.length - y.prerelease.length;
}

/** Operators written with flagd's own operations, on the attribute as one value rather than element by element. */
const SINGLE_VALUE: ReadonlySet<string> = new Set([
  "starts_with",
  "ends_with",
  "semver_eq",
  "semver_gt",
  "semver_gte",
  "semver_lt",
  "semver_lte",
]);

/** The logic with the element (`{"cat": [{"var": ""}]}` as text, `{"var": ""}` as it is) replaced. */
function substitute(logic: Logic, text: Logic, value: Logic): Logic {
  if (logic === null || typeof logic !== "object") return logic;
  if (Array.isArray(logic)) return logic.map((part) => substitute(part, text, value));
  const record = logic as Record<string, Logic>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0] === "var" && record.var === "") return value;
  if (keys.length === 1 && keys[0] === "cat") {
    const parts = record.cat as readonly Logic[];
    if (parts.length === 1 && JSON.stringify(parts[0]) === '{"var":""}') return text;
  }
  return Object.fromEntries(keys.map((key) => [key, substitute(record[key] as Logic, text, value)]));
}

/**
 * The context fields that name its actors (OFREP's `targetingKey` and `actorIds`), never attributes in
 * Flagstaff: a condition or a split on an attribute of such a name finds it missing, where flagd's `var`
 * would read the field.
 */
const ACTOR_FIELDS: ReadonlySet<string> = new Set(["targetingKey", "actorIds"]);

/** A segment's membership: a listed member is the targeting key, or the segment's conditions all hold. */
function segmentLogic(id: string, w: Writer): Logic {
  const segment = w.segments.get(id);
  if (segment === undefined) return false;
  const members = segment.members ?? [];
  const parts: Logic[] = [];
  if (members.length > 0) parts.push({ in: [TARGETING_KEY, members] });
  if (segment.conditions.length > 0) parts.push(and(segment.conditions.map((c) => conditionLogic(c as Condition, w))));
  return or(parts);
}

/** A segment's membership: whole in an evaluator, else a `$ref` to its evaluator (a constant is written as it is). */
function inSegment(id: string, w: Writer): Logic {
  const whole = segmentLogic(id, w);
  return w.inline || typeof whole === "boolean" ? whole : ref(segmentEvaluator(id));
}

/**
 * A condition as JsonLogic, as the engine decides it: a missing attribute fails it (negated or not), a list
 * holds when any element does (negate applying to the list as a whole), `$now` is flagd's timestamp.
 */
function conditionLogic(condition: Condition, w: Writer): Logic {
  const twin = NEGATED_TWIN[condition.operator];
  const operator = twin ?? condition.operator;
  const negate = (condition.negate === true) !== (twin !== undefined);
  if (operator === "in_segment") {
    const any = or(condition.values.map((id) => inSegment(String(id), w)));
    return negate ? not(any) : any;
  }
  const attribute = condition.attribute as string;
  // Flagstaff finds such an attribute missing: it fails the condition, negated or not (present negated holds).
  if (ACTOR_FIELDS.has(attribute)) return operator === "present" && negate;
  if (attribute === "$now") {
    // The evaluation time in whole seconds: `before X` while now < X, `after X` once now > X.
    const instants = condition.values.map((v) => parseInstant(String(v)));
    const holds: Logic =
      operator === "before"
        ? { "<": [TIMESTAMP, Math.ceil(Math.max(...instants) / 1000)] }
        : { ">": [TIMESTAMP, Math.floor(Math.min(...instants) / 1000)] };
    return negate ? not(holds) : holds;
  }
  const value = variable(attribute);
  if (operator === "present") return negate ? missing(value) : present(value);
  let any: Logic;
  if (SINGLE_VALUE.has(operator)) {
    // flagd's own operations (starts_with, ends_with, sem_ver) cannot run inside `some` (flagd-core finds
    // no logger in an element's context): they read the attribute as one value (a list's text is its
    // elements joined by commas).
    w.notes.add("starts_with, ends_with and sem_ver read a list attribute as one value");
    any = substitute(elementHolds(operator, condition, w), { cat: [value] }, value);
  } else {
    const holds = elementHolds(operator, condition, w);
    if (holds === false) return false;
    any = { some: [{ merge: [value] }, holds] };
  }
  return and([present(value), negate ? not(any) : any]);
}

/** A `fractional` over the bucketing value (salted with `salt`) serving the weights; a single weight is its variant. */
function fractional(salt: string, by: Logic, weights: readonly (readonly [string, number])[]): Logic {
  const kept = weights.filter(([, share]) => share > 0);
  if (kept.length === 0) return null;
  if (new Set(kept.map(([variant]) => variant)).size === 1) return (kept[0] as [string, number])[0];
  return { fractional: [{ cat: [salt, by] }, ...kept.map(([variant, share]) => [variant, share])] };
}

const thousandths = (weight: number) => Math.round(weight * 1000);

/** A value that changes at the plan's steps: the last step passed decides, else the first. */
function timeline(values: readonly { readonly from: number; readonly logic: Logic }[], initial: Logic): Logic {
  // The same value at every step (a call rollout of 100 %, steps that repeat): no step changes anything.
  const same = JSON.stringify(initial);
  if (values.every((v) => JSON.stringify(v.logic) === same)) return initial;
  const branches: [Logic, Logic][] = [];
  for (let i = values.length - 1; i >= 0; i--) {
    const step = values[i] as { from: number; logic: Logic };
    branches.push([{ ">=": [TIMESTAMP, step.from] }, step.logic]);
  }
  return ifChain(branches, initial);
}

/**
 * The plan's steps as the export writes them, each a `$flagd.timestamp` condition, so that the file is the
 * same whatever the hour it is read (its ETag is the project's revision): a running plan's every step, a
 * paused plan's steps up to its pause (the rest never come). A step is in force once its time has passed
 * (for a paused plan, also one before the pause that is still to come: a pause set ahead of time).
 */
function planSteps(configuration: DocumentConfiguration): readonly RolloutStep[] {
  const plan = configuration.rolloutPlan;
  if (plan === undefined) return [];
  const steps = plan.steps as readonly RolloutStep[];
  if (plan.pausedAt === undefined || plan.pausedAt === null) return steps;
  const paused = parseInstant(plan.pausedAt);
  return steps.filter((s) => parseInstant(s.at) <= paused);
}

/** The variant a flag serves in the environment, as JsonLogic that always answers a variant key. */
function flagLogic(flag: DocumentFlag, w: Writer): Logic {
  const c = flag.environments[w.environment];
  if (c === undefined) return null;
  const boolean = flag.type === "boolean";
  const on = boolean ? "on" : c.onVariant;
  const off = boolean ? "off" : c.offVariant;
  if (c.status === "disabled") return off;
  const prerequisites = c.prerequisites.map((p) => {
    const other = w.flags.get(p.flag);
    if (other === undefined || other.environments[w.environment] === undefined) return false;
    const whole = flagLogic(other, { ...w, inline: true, notes: new Set() });
    if (typeof whole === "string") return p.variants.includes(whole);
    return { in: [w.inline ? whole : ref(flagEvaluator(p.flag)), p.variants] } as Logic;
  });
  const prerequisitesHold = and(prerequisites);
  if (c.status === "enabled") return ifChain([[prerequisitesHold, on]], off);

  const timed = planSteps(c);

  const branches: [Logic, Logic][] = [];
  if (c.actors.length > 0) branches.push([{ in: [TARGETING_KEY, c.actors] }, on]);
  if (c.segments.length > 0) branches.push([or(c.segments.map((id) => inSegment(id, w))), on]);
  for (const rule of c.rules) {
    const conditions = and(rule.conditions.map((condition) => conditionLogic(condition as Condition, w)));
    if ("variant" in rule.serve) {
      branches.push([conditions, rule.serve.variant]);
      continue;
    }
    const split = rule.serve.split;
    // Nothing to bucket on, ever: the rule never decides.
    if (split.bucketBy !== undefined && ACTOR_FIELDS.has(split.bucketBy)) continue;
    const by = split.bucketBy === undefined ? TARGETING_KEY : variable(split.bucketBy);
    if (split.bucketBy !== undefined) {
      w.notes.add("a split bucketed by an attribute holds for any value of it (Flagstaff: strings and integers)");
    }
    const salt = `${flag.name}:${rule.id}:`;
    const write = (weights: readonly SplitWeight[]) =>
      fractional(
        salt,
        by,
        weights.map((x) => [x.variant, thousandths(x.weight)]),
      );
    const steps = timed.filter((s) => isWeightsStep(s) && s.ruleId === rule.id);
    const serve = timeline(
      steps.map((s) => ({ from: stepSeconds(s.at), logic: write((s as WeightsStep).weights) })),
      write(split.weights),
    );
    // A split with nothing to bucket on does not decide: the next rule is asked.
    branches.push([and([conditions, present(by)]), serve]);
  }

  // The actor rollout, with the call rollout folded in as a share of actors (flagd draws nothing at random).
  // A call rollout of 100 % draws nothing either: every call is in it, with a targeting key or without.
  const calls = c.percentageCalls;
  if (calls > 0 && calls < 100) {
    w.notes.add(
      `the call rollout (${calls} % of calls) is exported as the same share of targeting keys, with the actor rollout`,
    );
  }
  const rollout = (actors: number): Logic => {
    if (calls >= 100) return on;
    const share = actors * 1000 + (100 - actors) * calls * 10;
    if (share <= 0) return off;
    // Every targeting key is in (an actor rollout of 100 %); without one, only a draw (0 < calls < 100) could be.
    if (share >= BUCKETS) return ifChain([[present(TARGETING_KEY), on]], off);
    return ifChain(
      [
        [
          present(TARGETING_KEY),
          fractional(`${flag.name}:`, TARGETING_KEY, [
            [on, share],
            [off, BUCKETS - share],
          ]),
        ],
      ],
      off,
    );
  };
  const percentageSteps = timed.filter((s) => !isWeightsStep(s));
  const last = timeline(
    percentageSteps.map((s) => ({ from: stepSeconds(s.at), logic: rollout((s as { percentage: number }).percentage) })),
    rollout(c.percentageActors),
  );
  return ifChain([[prerequisitesHold, ifChain(branches, last)]], off);
}

/** Every segment id and prerequisite flag a logic references, for the evaluators the file needs. */
function references(logic: Logic, into: Set<string>): void {
  if (logic === null || typeof logic !== "object") return;
  if (Array.isArray(logic)) {
    for (const part of logic) references(part, into);
    return;
  }
  const record = logic as Record<string, Logic>;
  if (typeof record.$ref === "string") into.add(record.$ref);
  for (const part of Object.values(record)) references(part, into);
}

/** A flag's variants as flagd holds them: key → value. */
function variantsOf(flag: DocumentFlag): Record<string, unknown> {
  if (flag.type === "boolean") return { on: true, off: false };
  return Object.fromEntries(flag.variants.map((v) => [v.key, v.value]));
}

/**
 * One environment of a project's document (exported with its segments' members) as a flagd file: every
 * flag of the document, `state` ENABLED (flagd's DISABLED answers the caller's default, never Flagstaff's
 * offVariant), its variants, its default variant (the offVariant, or what it always serves) and its
 * targeting; `$evaluators` for the segments and prerequisite flags the targeting references.
 */
export function toFlagd(document: ProjectDocument, environment: string): FlagdDocument {
  const base = {
    environment,
    flags: new Map(document.flags.map((f) => [f.name, f])),
    segments: new Map(document.segments.map((s) => [s.id, s])),
  };
  const flags: Record<string, FlagdFlag> = {};
  const referenced = new Set<string>();
  for (const flag of document.flags) {
    const c = flag.environments[environment];
    if (c === undefined) continue;
    const notes = new Set<string>();
    const targeting = flagLogic(flag, { ...base, inline: false, notes });
    references(targeting, referenced);
    const off = flag.type === "boolean" ? "off" : c.offVariant;
    const constant = typeof targeting === "string";
    flags[flag.name] = {
      state: "ENABLED",
      variants: variantsOf(flag),
      defaultVariant: constant ? targeting : off,
      ...(constant ? {} : { targeting }),
      ...(notes.size > 0 ? { metadata: { inexact: [...notes].join("; ") } } : {}),
    };
  }
  const evaluators: Record<string, Logic> = {};
  const whole = { ...base, inline: true, notes: new Set<string>() };
  for (const key of [...referenced].sort(compareText)) {
    if (key.startsWith("segment:")) evaluators[key] = segmentLogic(key.slice("segment:".length), whole);
    else evaluators[key] = flagLogic(base.flags.get(key.slice("flag:".length)) as DocumentFlag, whole);
  }
  return {
    $schema: FLAGD_SCHEMA_URL,
    ...(Object.keys(evaluators).length > 0 ? { $evaluators: evaluators } : {}),
    flags,
  };
}
