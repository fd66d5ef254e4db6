// A flag's targeting in words, for people: a condition, what a rule serves, a prerequisite, a variant, a
// one-line summary of what the targeting does, and the changes between two configurations (rule by rule).
// One home for them, read by the flag list, the flag page, Copy to… and the history (docs/targeting.md
// says what each field means; the wording here follows the console's own forms).
import type { ConditionOperator, Flag, FlagStatus } from "@flagstaff/sdk";

export type Rule = Flag["rules"][number];
export type Condition = Rule["conditions"][number];
export type Prerequisite = Flag["prerequisites"][number];
export type Variant = Flag["variants"][number];

/** Names a segment by its id (the console reads names from the API); the id itself by default. */
export type SegmentNamer = (id: string) => string;
const byId: SegmentNamer = (id) => id;

/** How many values a condition shows before "and N more". */
const VALUES_SHOWN = 10;

/** A number as people write it: at most three decimals, no grouping ("33.333", "1000"). */
export const decimal = (n: number) => n.toLocaleString("en", { maximumFractionDigits: 3, useGrouping: false });

/** A value as a condition shows it: a number as written, a text bare unless it holds a separator or spaces. */
function value(v: string | number): string {
  if (typeof v === "number") return decimal(v);
  return v === "" || /[\s,;"]/.test(v) || v !== v.trim() ? JSON.stringify(v) : v;
}

/** Values joined as a list of one or more: "FR, DE" or "FR, DE … and 3 more". */
function values(list: readonly (string | number)[], joiner: string, name: (v: string | number) => string = value) {
  const shown = list.slice(0, VALUES_SHOWN).map(name).join(joiner);
  return list.length > VALUES_SHOWN ? `${shown} and ${list.length - VALUES_SHOWN} more` : shown;
}

/**
 * Each operator as a phrase, held and negated, taking the values shown after it: `[one value, several]`.
 * A negated condition still fails on a missing attribute (docs/targeting.md), as the phrase "is not" does.
 */
const PHRASES: Record<ConditionOperator, { is: [string, string]; not: [string, string]; joiner: string }> = {
  in: { is: ["is", "is one of"], not: ["is not", "is none of"], joiner: ", " },
  not_in: { is: ["is not", "is none of"], not: ["is", "is one of"], joiner: ", " },
  starts_with: {
    is: ["starts with", "starts with"],
    not: ["does not start with", "starts with none of"],
    joiner: " or ",
  },
  ends_with: { is: ["ends with", "ends with"], not: ["does not end with", "ends with none of"], joiner: " or " },
  contains: { is: ["contains", "contains"], not: ["does not contain", "contains none of"], joiner: " or " },
  matches: { is: ["matches", "matches one of"], not: ["does not match", "matches none of"], joiner: ", " },
  eq: { is: ["=", "is one of"], not: ["≠", "is none of"], joiner: ", " },
  gt: { is: [">", "> one of"], not: ["is not >", "is not > any of"], joiner: ", " },
  gte: { is: ["≥", "≥ one of"], not: ["is not ≥", "is not ≥ any of"], joiner: ", " },
  lt: { is: ["<", "< one of"], not: ["is not <", "is not < any of"], joiner: ", " },
  lte: { is: ["≤", "≤ one of"], not: ["is not ≤", "is not ≤ any of"], joiner: ", " },
  semver_eq: {
    is: ["is version", "is one of the versions"],
    not: ["is not version", "is none of the versions"],
    joiner: ", ",
  },
  semver_gt: {
    is: ["is a version >", "is a version > one of"],
    not: ["is not a version >", "is not a version > any of"],
    joiner: ", ",
  },
  semver_gte: {
    is: ["is a version ≥", "is a version ≥ one of"],
    not: ["is not a version ≥", "is not a version ≥ any of"],
    joiner: ", ",
  },
  semver_lt: {
    is: ["is a version <", "is a version < one of"],
    not: ["is not a version <", "is not a version < any of"],
    joiner: ", ",
  },
  semver_lte: {
    is: ["is a version ≤", "is a version ≤ one of"],
    not: ["is not a version ≤", "is not a version ≤ any of"],
    joiner: ", ",
  },
  before: { is: ["is before", "is before one of"], not: ["is not before", "is not before any of"], joiner: ", " },
  after: { is: ["is after", "is after one of"], not: ["is not after", "is not after any of"], joiner: ", " },
  present: { is: ["is set", "is set"], not: ["is not set", "is not set"], joiner: "" },
  in_segment: {
    is: ["is in segment", "is in one of the segments"],
    not: ["is not in segment", "is in none of the segments"],
    joiner: ", ",
  },
  not_in_segment: {
    is: ["is not in segment", "is in none of the segments"],
    not: ["is in segment", "is in one of the segments"],
    joiner: ", ",
  },
};

/** One condition in words: "country is one of FR, DE", "plan is pro (any case)", "the actor is in segment Beta". */
export function conditionText(c: Condition, segmentName: SegmentNamer = byId): string {
  const phrases = PHRASES[c.operator];
  const [one, several] = c.negate ? phrases.not : phrases.is;
  const segments = c.operator === "in_segment" || c.operator === "not_in_segment";
  const subject = segments ? "the actor" : c.attribute === "$now" ? "the time ($now)" : (c.attribute ?? "?");
  const phrase = c.values.length > 1 ? several : one;
  const shown =
    c.operator === "present"
      ? ""
      : ` ${values(c.values, phrases.joiner, segments ? (id) => segmentName(String(id)) : value)}`;
  return `${subject} ${phrase}${shown}${c.caseInsensitive ? " (any case)" : ""}`;
}

/** A split's weights: "50/50", "33.333/33.333/33.334". */
const splitShape = (weights: readonly { weight: number }[]) => weights.map((w) => decimal(w.weight)).join("/");

/** What a rule serves: "serves green", "splits 50% blue, 50% green by plan". */
export function serveText(serve: Rule["serve"]): string {
  if ("variant" in serve) return `serves ${serve.variant}`;
  const { weights, bucketBy } = serve.split;
  const shares = weights.map((w) => `${decimal(w.weight)}% ${w.variant}`).join(", ");
  return `splits ${shares}${bucketBy ? ` by ${bucketBy}` : ""}`;
}

/** A rule in words: "“Europe”: if country is one of FR, DE and plan is pro → serves green". */
export function ruleText(rule: Rule, segmentName: SegmentNamer = byId): string {
  const described = rule.description ? `“${rule.description}”: ` : "";
  const when =
    rule.conditions.length === 0
      ? "everyone"
      : `if ${rule.conditions.map((c) => conditionText(c, segmentName)).join(" and ")}`;
  return `${described}${when} → ${serveText(rule.serve)}`;
}

/** A rule's name as the rule builder shows it: "Rule 2 “rule-2”". */
export const ruleName = (index: number, id: string) => `Rule ${index + 1} “${id}”`;

/** A prerequisite in words: "new-checkout must serve on", "theme must serve dark or light". */
export const prerequisiteText = (p: Prerequisite) => `${p.flag} must serve ${p.variants.join(" or ")}`;

/** A variant in words: `blue = "#1d4ed8" (“the default”)`. */
export function variantText(v: Variant): string {
  return `${v.key} = ${JSON.stringify(v.value)}${v.description ? ` (“${v.description}”)` : ""}`;
}

const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
const ONE_TO_TEN = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const inWords = (n: number) => ONE_TO_TEN[n] ?? String(n);

/** The part of a configuration that decides who gets what in one environment. */
export interface TargetingShape {
  status: FlagStatus;
  percentageActors: number;
  percentageCalls: number;
  rules?: readonly Rule[];
  prerequisites?: readonly Prerequisite[];
}

/**
 * What the targeting of one environment does, in one line, in the order the engine decides
 * (docs/targeting.md): "Needs new-checkout · 5 rules (one 50/50 split) · then 0% of actors". Attached
 * actors and segments, which come first, are counted apart (attachedSummary).
 */
export function targetingSummary(flag: TargetingShape): string {
  if (flag.status === "disabled") return "Off for everyone";
  const rules = flag.rules ?? [];
  const prerequisites = flag.prerequisites ?? [];
  const parts: string[] = [];
  if (prerequisites.length > 0) {
    const names = prerequisites.map((p) => p.flag);
    parts.push(`needs ${names.length <= 2 ? names.join(" and ") : counted(names.length, "flag")}`);
  }
  if (flag.status === "enabled") {
    parts.push(prerequisites.length > 0 ? "then on for everyone" : "on for everyone");
  } else {
    if (rules.length > 0) {
      const splits = rules.flatMap((r) => ("split" in r.serve ? [splitShape(r.serve.split.weights)] : []));
      const shapes = [...new Set(splits)];
      const splitWords =
        splits.length === 0
          ? ""
          : shapes.length === 1
            ? ` (${inWords(splits.length)} ${shapes[0]} split${splits.length === 1 ? "" : "s"})`
            : ` (${inWords(splits.length)} splits)`;
      parts.push(`${counted(rules.length, "rule")}${splitWords}`);
    }
    // A rule without conditions that serves a variant decides for everyone it reaches: nothing after it does.
    const everyone = rules.find((r) => r.conditions.length === 0 && "variant" in r.serve);
    if (everyone && "variant" in everyone.serve) {
      parts.push(`then everyone else gets ${everyone.serve.variant}`);
    } else {
      const rollout = [`${decimal(flag.percentageActors)}% of actors`];
      if (flag.percentageCalls > 0) rollout.push(`${decimal(flag.percentageCalls)}% of calls`);
      parts.push(`${rules.length > 0 || prerequisites.length > 0 ? "then " : ""}${rollout.join(", ")}`);
    }
  }
  const line = parts.join(" · ");
  return line.charAt(0).toUpperCase() + line.slice(1);
}

// ---- Changes between two configurations ----

export type ChangeKind = "added" | "removed" | "changed" | "moved";

/** One change, in words: what it is about, and its text before and after (either may be absent). */
export interface Change {
  kind: ChangeKind;
  /** What changed: "Rule 2 “rule-2”", "Prerequisite new-checkout", "Variant blue". */
  subject: string;
  before?: string;
  after?: string;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The rules' changes, rule by rule (a rule is known by its id): added, removed, changed (its conditions,
 * what it serves or its description), or moved (the same rule at another place: the first that holds
 * decides, so the order matters).
 */
export function ruleChanges(
  before: readonly Rule[],
  after: readonly Rule[],
  segmentName: SegmentNamer = byId,
): Change[] {
  const out: Change[] = [];
  const was = new Map(before.map((r, i) => [r.id, { rule: r, index: i }]));
  const kept = new Set(after.map((r) => r.id));
  before.forEach((r, i) => {
    if (!kept.has(r.id)) out.push({ kind: "removed", subject: ruleName(i, r.id), before: ruleText(r, segmentName) });
  });
  // Rules that stay keep their relative order unless they moved; a place shifted only by rules added or
  // removed before it is not a move.
  const stayingBefore = before.filter((r) => kept.has(r.id)).map((r) => r.id);
  const stayingAfter = after.filter((r) => was.has(r.id)).map((r) => r.id);
  after.forEach((r, i) => {
    const old = was.get(r.id);
    if (!old) {
      out.push({ kind: "added", subject: ruleName(i, r.id), after: ruleText(r, segmentName) });
      return;
    }
    const moved = stayingBefore.indexOf(r.id) !== stayingAfter.indexOf(r.id);
    const where = moved ? ` (was rule ${old.index + 1})` : "";
    if (!same(old.rule, r)) {
      out.push({
        kind: "changed",
        subject: `${ruleName(i, r.id)}${where}`,
        before: ruleText(old.rule, segmentName),
        after: ruleText(r, segmentName),
      });
    } else if (moved) {
      out.push({ kind: "moved", subject: `${ruleName(i, r.id)}${where}`, after: ruleText(r, segmentName) });
    }
  });
  return out;
}

/** The prerequisites' changes, one flag at a time. */
export function prerequisiteChanges(before: readonly Prerequisite[], after: readonly Prerequisite[]): Change[] {
  const out: Change[] = [];
  const was = new Map(before.map((p) => [p.flag, p]));
  const now = new Map(after.map((p) => [p.flag, p]));
  for (const p of before) {
    if (!now.has(p.flag)) out.push({ kind: "removed", subject: `Prerequisite ${p.flag}`, before: prerequisiteText(p) });
  }
  for (const p of after) {
    const old = was.get(p.flag);
    if (!old) out.push({ kind: "added", subject: `Prerequisite ${p.flag}`, after: prerequisiteText(p) });
    else if (!same(old.variants, p.variants)) {
      out.push({
        kind: "changed",
        subject: `Prerequisite ${p.flag}`,
        before: prerequisiteText(old),
        after: prerequisiteText(p),
      });
    }
  }
  return out;
}

/** The variants' changes (the flag's definition), one key at a time. */
export function variantChanges(before: readonly Variant[], after: readonly Variant[]): Change[] {
  const out: Change[] = [];
  const was = new Map(before.map((v) => [v.key, v]));
  const now = new Map(after.map((v) => [v.key, v]));
  for (const v of before) {
    if (!now.has(v.key)) out.push({ kind: "removed", subject: `Variant ${v.key}`, before: variantText(v) });
  }
  for (const v of after) {
    const old = was.get(v.key);
    if (!old) out.push({ kind: "added", subject: `Variant ${v.key}`, after: variantText(v) });
    else if (!same(old, v)) {
      out.push({ kind: "changed", subject: `Variant ${v.key}`, before: variantText(old), after: variantText(v) });
    }
  }
  return out;
}

/** Segment ids that rules' conditions name, to fetch their names. */
export function ruleSegmentIds(rules: readonly Rule[]): string[] {
  return rules.flatMap((r) =>
    r.conditions
      .filter((c) => c.operator === "in_segment" || c.operator === "not_in_segment")
      .flatMap((c) => c.values.map(String)),
  );
}

/** A list of rules or prerequisites counted: "2 rules", "none". */
export const howMany = (n: number, noun: string) => (n === 0 ? "none" : counted(n, noun));
