import { NOW_ATTRIBUTE } from "../contract/ids.js";
import type { ConditionOperator } from "../contract/enums.js";
import { NEGATED_TWIN } from "./operators.js";
import { MATCHED_CHARACTERS_MAX, MATCHED_CHARACTERS_PER_TEST } from "../contract/limits.js";
import { compilePattern, type Pattern } from "./regex.js";
import { parseSemver, type SemVer } from "./semver.js";
import { ConfigurationError, MatchingBudgetExceeded, type Scope } from "./scope.js";
import type { Condition } from "./types.js";
import { validateSegmentConditions } from "./validate-conditions.js";
import { toInstant, toNumber, toText } from "./values.js";
import { compareVersions, readVersion, toVersion, type Version } from "./versions.js";

// Conditions compiled to one shape of object each (Compiled), rather than to a closure per condition, so
// that the loads of their fields stay monomorphic. Each also holds, chosen at compile time, which function
// decides it (`kind`): one per common operator (in, gt/gte/lt/lte on numbers, semver_gt/gte/lt/lte) that
// reads the attribute's slot and compares with no operator switch, falling back to the general `decide`
// for anything else (lists, values of another type, the other operators). No code is generated: `eval` and
// `new Function` stay out, for pages whose Content Security Policy forbids them.

/** How a compiled condition reads its attribute: plainly, as an own property only, or as the clock. */
const Read = { Plain: 0, Own: 1, Now: 2 } as const;

/**
 * Operators as small integers, so that the switches below jump rather than compare strings one by one.
 * not_in and not_in_segment are read as in and in_segment with `negate` flipped.
 */
const OP = {
  in: 0,
  starts_with: 1,
  ends_with: 2,
  contains: 3,
  matches: 4,
  eq: 5,
  gt: 6,
  gte: 7,
  lt: 8,
  lte: 9,
  before: 10,
  after: 11,
  semver_eq: 12,
  semver_gt: 13,
  semver_gte: 14,
  semver_lt: 15,
  semver_lte: 16,
  present: 17,
  in_segment: 18,
} as const satisfies Partial<Record<ConditionOperator, number>>;

/** How a compiled condition is decided: true when it holds (negate applied). */
type Check = (c: Compiled, scope: Scope, attributes: Attributes) => boolean;

/** A condition the validator accepted, with its values prepared for its operator. */
class Compiled {
  // The fields an evaluation reads first, declared first (so laid out together in the object).
  /** The evaluation whose result `result` is (see Conditions: identical conditions of a flag share one Compiled). */
  stamp = 0;
  result = false;
  /** Which function decides this condition: an index in CHECKS (see chooseCheck), 0 for `decide`. */
  readonly kind: number;
  /** Whether the result can be kept for the rest of the evaluation (every operator but in_segment). */
  readonly memo: boolean;
  /** Where an evaluation keeps the attribute's value once read (see Attributes); -1 for $now and segments. */
  readonly slot: number;
  readonly op: number;
  readonly negate: boolean;
  readonly read: (typeof Read)[keyof typeof Read];
  readonly attribute: string;
  /** Text operators' values, lower-cased for caseInsensitive (not for matches: RE2 folds case itself). */
  readonly texts: readonly string[];
  /** in's values, and eq's. */
  readonly set: ReadonlySet<string | number>;
  readonly lower: boolean;
  readonly patterns: readonly Pattern[];
  /** The one value an ordered comparison needs: "greater than any value" is "greater than the least". */
  readonly bound: number;
  readonly version: Version | null;
  /** version's key (see Version), -1 when it has none or there is no version. */
  readonly versionKey: number;
  readonly versions: readonly Version[];

  constructor(condition: Condition, attributes: Attributes) {
    const twin = NEGATED_TWIN[condition.operator];
    const operator = twin ?? condition.operator;
    const values = condition.values;
    const ci = condition.caseInsensitive === true;
    this.op = OP[operator as keyof typeof OP];
    this.negate = (condition.negate === true) !== (twin !== undefined);
    const attribute = condition.attribute ?? "";
    this.attribute = attribute;
    // Only names an ordinary object inherits ("constructor", "toString") need the own-property check.
    this.read = attribute === NOW_ATTRIBUTE ? Read.Now : attribute in Object.prototype ? Read.Own : Read.Plain;
    const fromContext = condition.attribute !== undefined && this.read !== Read.Now;
    this.slot = fromContext ? attributes.slot(attribute) : -1;
    this.lower = ci && operator !== "matches";
    this.texts = values.map((v) => (this.lower ? String(v).toLowerCase() : String(v)));
    this.set = new Set(operator === "eq" ? values : this.texts);
    this.patterns = operator === "matches" ? values.map((v) => compilePattern(String(v), ci) as Pattern) : [];
    const numbers =
      operator === "before" || operator === "after" ? values.map((v) => toInstant(v)) : values.map(Number);
    const least = operator === "gt" || operator === "gte" || operator === "after";
    this.bound = least ? Math.min(...numbers) : Math.max(...numbers);
    this.versions = operator.startsWith("semver_")
      ? values.map((v) => toVersion(parseSemver(String(v)) as SemVer)).sort(compareVersions)
      : [];
    const lowest = operator === "semver_gt" || operator === "semver_gte";
    this.version = (lowest ? this.versions[0] : this.versions[this.versions.length - 1]) ?? null;
    this.versionKey = this.version === null ? -1 : this.version.key;
    this.memo = operator !== "in_segment";
    this.kind = CHECKS.indexOf(chooseCheck(this));
  }
}

// One value against the operator: 1 it holds, 0 it does not, -1 it cannot be read as the operator's kind.
// One function per kind of operator, each small enough for the compiler to inline where it is called.

function textHolds(c: Compiled, value: unknown, scope: Scope): number {
  let text = toText(value);
  if (text === undefined) return -1;
  if (c.lower) text = text.toLowerCase();
  const texts = c.texts;
  switch (c.op) {
    case OP.in:
      // A short list is faster to scan than to hash into.
      if (texts.length > 8) return c.set.has(text) ? 1 : 0;
      for (let i = 0; i < texts.length; i++) if (texts[i] === text) return 1;
      return 0;
    case OP.starts_with:
      for (let i = 0; i < texts.length; i++) if (text.startsWith(texts[i] as string)) return 1;
      return 0;
    case OP.ends_with:
      for (let i = 0; i < texts.length; i++) if (text.endsWith(texts[i] as string)) return 1;
      return 0;
    case OP.contains:
      for (let i = 0; i < texts.length; i++) if (text.includes(texts[i] as string)) return 1;
      return 0;
    default: {
      const patterns = c.patterns;
      const cost = text.length > MATCHED_CHARACTERS_PER_TEST ? text.length : MATCHED_CHARACTERS_PER_TEST;
      for (let i = 0; i < patterns.length; i++) {
        // Counted before matching: no evaluation matches past its budget.
        scope.matched += cost;
        if (scope.matched > MATCHED_CHARACTERS_MAX) throw new MatchingBudgetExceeded();
        if ((patterns[i] as Pattern)(text)) return 1;
      }
      return 0;
    }
  }
}

function numberHolds(c: Compiled, value: unknown): number {
  const n = toNumber(value);
  if (Number.isNaN(n)) return -1;
  switch (c.op) {
    case OP.eq:
      return c.set.has(n) ? 1 : 0;
    case OP.gt:
      return n > c.bound ? 1 : 0;
    case OP.gte:
      return n >= c.bound ? 1 : 0;
    case OP.lt:
      return n < c.bound ? 1 : 0;
    default:
      return n <= c.bound ? 1 : 0;
  }
}

function instantHolds(c: Compiled, value: unknown): number {
  const t = toInstant(value);
  if (Number.isNaN(t)) return -1;
  return (c.op === OP.before ? t < c.bound : t > c.bound) ? 1 : 0;
}

function versionHolds(c: Compiled, v: Version): number {
  switch (c.op) {
    case OP.semver_gt:
      return compareVersions(v, c.version as Version) > 0 ? 1 : 0;
    case OP.semver_gte:
      return compareVersions(v, c.version as Version) >= 0 ? 1 : 0;
    case OP.semver_lt:
      return compareVersions(v, c.version as Version) < 0 ? 1 : 0;
    case OP.semver_lte:
      return compareVersions(v, c.version as Version) <= 0 ? 1 : 0;
    default: {
      const versions = c.versions;
      for (let i = 0; i < versions.length; i++) if (compareVersions(v, versions[i] as Version) === 0) return 1;
      return 0;
    }
  }
}

function operandHolds(c: Compiled, value: unknown, scope: Scope): number {
  const op = c.op;
  if (op <= OP.matches) return textHolds(c, value, scope);
  if (op <= OP.lte) return numberHolds(c, value);
  if (op <= OP.after) return instantHolds(c, value);
  const v = readVersion(value);
  return v === null ? -1 : versionHolds(c, v);
}

/**
 * The attributes some conditions read (a flag's rules, a segment's conditions), each given a slot: an
 * evaluation reads each attribute from the context once, however many conditions read it (a keyed read
 * of a context object costs more than the rest of most conditions). The slots are reused from one
 * evaluation to the next without being cleared: a slot holds a value for the evaluation whose number is
 * stamped beside it, and any other evaluation reads the context again. So an evaluation started inside
 * another (a resolver that evaluates) cannot see the outer one's values, nor the outer the inner's.
 *
 * It also holds the conditions compiled for those rules, one per distinct condition: a condition that
 * several rules repeat (the same attribute, operator, values and flags) is decided once per evaluation,
 * its result stamped likewise.
 */
export class Attributes {
  private readonly slots = new Map<string, number>();
  private readonly conditions = new Map<string, Compiled>();
  readonly values: unknown[] = [];
  readonly stamps: number[] = [];
  /** The attribute's value read as a version (single values only), for the evaluation stamped beside it. */
  readonly versions: (Version | null)[] = [];
  readonly versionStamps: number[] = [];
  /** The key of the version in `versions` (see Version), -1 when it has none: what most checks compare. */
  versionKeys = new Float64Array(4);

  slot(name: string): number {
    let slot = this.slots.get(name);
    if (slot === undefined) {
      slot = this.slots.size;
      this.slots.set(name, slot);
      this.values.push(undefined);
      this.stamps.push(0);
      this.versions.push(null);
      this.versionStamps.push(0);
      if (slot >= this.versionKeys.length) {
        const keys = new Float64Array(this.versionKeys.length * 2);
        keys.set(this.versionKeys);
        this.versionKeys = keys;
      }
    }
    return slot;
  }

  /** The compiled form of a condition, shared with every identical condition compiled here before. */
  compile(condition: Condition): Compiled {
    const key = JSON.stringify([
      condition.attribute ?? null,
      condition.operator,
      condition.values,
      condition.negate === true,
      condition.caseInsensitive === true,
    ]);
    let compiled = this.conditions.get(key);
    if (compiled === undefined) {
      compiled = new Compiled(condition, this);
      this.conditions.set(key, compiled);
    }
    return compiled;
  }
}

function readAttribute(c: Compiled, scope: Scope, attributes: Attributes): unknown {
  if (c.read === Read.Now) {
    if (Number.isNaN(scope.now)) scope.now = scope.resolver.now ? scope.resolver.now() : Date.now();
    return scope.now;
  }
  return slotValue(c, scope, attributes);
}

/** The attribute's value from its slot, read from the context once per evaluation (not for $now). */
function slotValue(c: Compiled, scope: Scope, attributes: Attributes): unknown {
  const slot = c.slot;
  if (attributes.stamps[slot] === scope.evaluation) return attributes.values[slot];
  const context = scope.attributes;
  const value =
    context === undefined || (c.read === Read.Own && !Object.hasOwn(context, c.attribute))
      ? undefined
      : context[c.attribute];
  attributes.values[slot] = value;
  attributes.stamps[slot] = scope.evaluation;
  return value;
}

/**
 * Whether a condition holds. On an attribute: false when the attribute is missing (null counts as
 * missing) or, as a single value, cannot be read as the operator's kind, whatever `negate` says. A list
 * holds when any of its elements (read alike) does; `negate` then applies to the list as a whole.
 * present is the exception: negated, it holds exactly when the attribute is missing.
 */
function decide(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  if (c.op === OP.in_segment) {
    for (const segmentId of c.texts) if (inSegment(scope, segmentId)) return !c.negate;
    return c.negate;
  }
  const raw = readAttribute(c, scope, attributes);
  if (c.op === OP.present) return (raw !== undefined && raw !== null) !== c.negate;
  if (raw === undefined || raw === null) return false;
  if (Array.isArray(raw)) {
    for (const element of raw) if (operandHolds(c, element, scope) === 1) return !c.negate;
    return c.negate;
  }
  let result: number;
  if (c.op >= OP.semver_eq && c.slot >= 0) {
    // Read as a version once per evaluation, however many semver conditions read the attribute.
    const slot = c.slot;
    let version: Version | null;
    if (attributes.versionStamps[slot] === scope.evaluation) version = attributes.versions[slot] as Version | null;
    else {
      version = readVersion(raw);
      attributes.versions[slot] = version;
      attributes.versionKeys[slot] = version === null ? -1 : version.key;
      attributes.versionStamps[slot] = scope.evaluation;
    }
    result = version === null ? -1 : versionHolds(c, version);
  } else result = operandHolds(c, raw, scope);
  return result >= 0 && (result === 1) !== c.negate;
}

// The checks specialised by operator, for a single value of the expected type read from a slot; anything
// else (a list, null, a value to convert) goes to `decide`, which gives the same answer for those values.

/** in, case-sensitive, on a string. */
function checkIn(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const raw = slotValue(c, scope, attributes);
  if (typeof raw !== "string") return decide(c, scope, attributes);
  const texts = c.texts;
  if (texts.length > 8) return c.set.has(raw) !== c.negate;
  for (let i = 0; i < texts.length; i++) if (texts[i] === raw) return !c.negate;
  return c.negate;
}

/** The slot's value when it is a finite number; NaN otherwise (then the check calls `decide`). */
function slotNumber(c: Compiled, scope: Scope, attributes: Attributes): number {
  const raw = slotValue(c, scope, attributes);
  return typeof raw === "number" && Number.isFinite(raw) ? raw : Number.NaN;
}

function checkGt(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const n = slotNumber(c, scope, attributes);
  return Number.isNaN(n) ? decide(c, scope, attributes) : n > c.bound !== c.negate;
}
function checkGte(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const n = slotNumber(c, scope, attributes);
  return Number.isNaN(n) ? decide(c, scope, attributes) : n >= c.bound !== c.negate;
}
function checkLt(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const n = slotNumber(c, scope, attributes);
  return Number.isNaN(n) ? decide(c, scope, attributes) : n < c.bound !== c.negate;
}
function checkLte(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const n = slotNumber(c, scope, attributes);
  return Number.isNaN(n) ? decide(c, scope, attributes) : n <= c.bound !== c.negate;
}

/**
 * The slot's value read as a version, once per evaluation (as `decide` does); null when it is missing,
 * a list or not a version (then the check calls `decide`).
 */
function slotVersion(c: Compiled, scope: Scope, attributes: Attributes): Version | null {
  const slot = c.slot;
  const evaluation = scope.evaluation;
  if (attributes.versionStamps[slot] === evaluation) return attributes.versions[slot] as Version | null;
  const raw = slotValue(c, scope, attributes);
  if (raw === undefined || raw === null || Array.isArray(raw)) return null;
  const version = readVersion(raw);
  attributes.versions[slot] = version;
  attributes.versionKeys[slot] = version === null ? -1 : version.key;
  attributes.versionStamps[slot] = evaluation;
  return version;
}

/**
 * The slot's version key when it has been read this evaluation and it and the condition's key differ
 * (then the two keys decide every ordered comparison); -1 otherwise (then the check reads the Version).
 */
function decidingKey(c: Compiled, scope: Scope, attributes: Attributes): number {
  const slot = c.slot;
  if (attributes.versionStamps[slot] !== scope.evaluation) return -1;
  const key = attributes.versionKeys[slot] as number;
  const bound = c.versionKey;
  return key >= 0 && bound >= 0 && key !== bound ? key : -1;
}

function checkSemverGt(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const key = decidingKey(c, scope, attributes);
  if (key >= 0) return key > c.versionKey !== c.negate;
  const v = slotVersion(c, scope, attributes);
  return v === null ? decide(c, scope, attributes) : compareVersions(v, c.version as Version) > 0 !== c.negate;
}
function checkSemverGte(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const key = decidingKey(c, scope, attributes);
  if (key >= 0) return key >= c.versionKey !== c.negate;
  const v = slotVersion(c, scope, attributes);
  return v === null ? decide(c, scope, attributes) : compareVersions(v, c.version as Version) >= 0 !== c.negate;
}
function checkSemverLt(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const key = decidingKey(c, scope, attributes);
  if (key >= 0) return key < c.versionKey !== c.negate;
  const v = slotVersion(c, scope, attributes);
  return v === null ? decide(c, scope, attributes) : compareVersions(v, c.version as Version) < 0 !== c.negate;
}
function checkSemverLte(c: Compiled, scope: Scope, attributes: Attributes): boolean {
  const key = decidingKey(c, scope, attributes);
  if (key >= 0) return key <= c.versionKey !== c.negate;
  const v = slotVersion(c, scope, attributes);
  return v === null ? decide(c, scope, attributes) : compareVersions(v, c.version as Version) <= 0 !== c.negate;
}

/** The specialised checks, numbered from 1 as Conditions.test's switch calls them; 0 is `decide`. */
const CHECKS: readonly Check[] = [
  decide,
  checkIn,
  checkGt,
  checkGte,
  checkLt,
  checkLte,
  checkSemverGt,
  checkSemverGte,
  checkSemverLt,
  checkSemverLte,
];

/** The check for a compiled condition: a specialised one when its operator has one, else `decide`. */
function chooseCheck(c: Compiled): Check {
  if (c.slot < 0 || c.read === Read.Now) return decide;
  switch (c.op) {
    case OP.in:
      return c.lower ? decide : checkIn;
    case OP.gt:
      return checkGt;
    case OP.gte:
      return checkGte;
    case OP.lt:
      return checkLt;
    case OP.lte:
      return checkLte;
    case OP.semver_gt:
      return checkSemverGt;
    case OP.semver_gte:
      return checkSemverGte;
    case OP.semver_lt:
      return checkSemverLt;
    case OP.semver_lte:
      return checkSemverLte;
    default:
      return decide;
  }
}

/** A rule's or a segment's conditions, compiled: they hold when every one does (so none always hold). */
export class Conditions {
  private readonly compiled: readonly Compiled[];

  /** `attributes`: the slots shared by the conditions evaluated together (a flag's rules, a segment's). */
  constructor(
    conditions: readonly Condition[],
    private readonly attributes: Attributes,
  ) {
    this.compiled = conditions.map((condition) => attributes.compile(condition));
    this.length = this.compiled.length;
  }

  /** The number of conditions. */
  readonly length: number;

  test(scope: Scope): boolean {
    return this.failure(scope, 0) === this.length;
  }

  /**
   * How many of `previous`'s first conditions are also this one's first, the same compiled objects, all
   * decided once per evaluation (no in_segment): when `previous` failed within them, this fails at the same
   * condition; when it got past them, they all hold here (see evaluateIn).
   */
  sharedWith(previous: Conditions): number {
    const n = Math.min(this.length, previous.length);
    let i = 0;
    while (i < n && this.compiled[i] === previous.compiled[i] && (this.compiled[i] as Compiled).memo) i++;
    return i;
  }

  /**
   * The index of the first condition, from `start` on, that does not hold; `length` when all hold. (The
   * ones before `start` are the caller's to know.)
   */
  failure(scope: Scope, start: number): number {
    const compiled = this.compiled;
    const evaluation = scope.evaluation;
    const attributes = this.attributes;
    for (let i = start; i < compiled.length; i++) {
      const c = compiled[i] as Compiled;
      // Decided once per evaluation: a condition repeated by several rules is shared (Attributes.compile)
      // and the later rules read its result. in_segment is decided each time (its resolver calls stay).
      if (c.stamp === evaluation) {
        if (!c.result) return i;
        continue;
      }
      // A switch of direct calls, which V8 inlines into this loop, rather than a call through a function
      // field: the two measured alike within the noise (bench/results/rules-2026-11-27.md, "Specialised
      // checks"), and the switch keeps the checks inlinable.
      let result: boolean;
      switch (c.kind) {
        case 1:
          result = checkIn(c, scope, attributes);
          break;
        case 2:
          result = checkGt(c, scope, attributes);
          break;
        case 3:
          result = checkGte(c, scope, attributes);
          break;
        case 4:
          result = checkLt(c, scope, attributes);
          break;
        case 5:
          result = checkLte(c, scope, attributes);
          break;
        case 6:
          result = checkSemverGt(c, scope, attributes);
          break;
        case 7:
          result = checkSemverGte(c, scope, attributes);
          break;
        case 8:
          result = checkSemverLt(c, scope, attributes);
          break;
        case 9:
          result = checkSemverLte(c, scope, attributes);
          break;
        default:
          result = decide(c, scope, attributes);
      }
      if (c.memo) {
        c.stamp = evaluation;
        c.result = result;
      }
      if (!result) return i;
    }
    return compiled.length;
  }
}

/** Segment conditions compiled once per list the resolver hands out (the list is read as immutable). */
const segmentTests = new WeakMap<readonly Condition[], Conditions | ConfigurationError>();

function segmentTest(segmentId: string, conditions: readonly Condition[]): Conditions {
  let compiled = segmentTests.get(conditions);
  if (compiled === undefined) {
    const problem = validateSegmentConditions(conditions, undefined, { patternCosts: false })[0];
    compiled = problem
      ? new ConfigurationError(`segment ${segmentId}: ${problem.message}`)
      : new Conditions(conditions, new Attributes());
    segmentTests.set(conditions, compiled);
  }
  if (compiled instanceof ConfigurationError) throw compiled;
  return compiled;
}

/**
 * Whether the context is in a segment: one of its actors is a listed member, or the segment has
 * conditions and they all hold. A segment with no conditions (or an empty list) holds only its members.
 */
export function inSegment(scope: Scope, segmentId: string): boolean {
  const resolver = scope.resolver;
  for (const actorId of scope.actorIds) if (resolver.isMember(segmentId, actorId)) return true;
  const conditions = resolver.segmentConditions?.(segmentId);
  if (conditions === undefined || conditions.length === 0) return false;
  return segmentTest(segmentId, conditions).test(scope);
}
