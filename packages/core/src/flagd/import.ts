import { isFlagName, SEGMENT_ID_MAX_LENGTH } from "../contract/ids.js";
import { NAME_MAX_LENGTH } from "../contract/limits.js";
import { crc32Utf8 } from "../rules/bucketing.js";
import { parseInstant } from "../rules/values.js";
import { parseSemver } from "../rules/semver.js";
import type { Condition, Rule, SplitWeight, VariantValue } from "../rules/types.js";
import type { DocumentConfiguration, DocumentSegment } from "../schemas/project-document.js";
import { isObject, type Logic } from "./logic.js";

// flagd flag definitions as Flagstaff flags (docs/flagd.md, "Import"): the subset Flagstaff expresses.
// `state`, `variants` and `defaultVariant`; targeting made of `if` chains (nested ones too) whose
// conditions are JsonLogic comparisons Flagstaff has (and, or, !, ==, !=, <, <=, >, >=, in, starts_with,
// ends_with, sem_ver, $flagd.timestamp), `fractional` splits, and `in` lists on the targeting key (which
// become segments of listed members). Anything else is refused, naming the flag and the construct.

/** A flag made from a flagd definition: its definition and its configuration in the environment imported into. */
export interface ImportedFlag {
  readonly name: string;
  readonly type: "boolean" | "string" | "number" | "object";
  readonly variants: readonly { readonly key: string; readonly value: VariantValue }[];
  readonly configuration: DocumentConfiguration;
}

export interface FlagdImport {
  readonly flags: readonly ImportedFlag[];
  /** Segments of listed members made for `in` lists on the targeting key (id `<segmentPrefix>.<flag>.<n>`). */
  readonly segments: readonly DocumentSegment[];
  /** What cannot be imported, one line per flag and construct: nothing is imported while there is any. */
  readonly problems: readonly string[];
  /** What is imported with a difference worth knowing (flagd's DISABLED, a split's missing bucketing value). */
  readonly notes: readonly string[];
}

class Refusal extends Error {}

/** At most this many rules a flag's targeting becomes (Flagstaff's limit per configuration). */
const RULES_MAX = 100;
const VARIANT_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const show = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** The file's `$ref`s replaced by their evaluators (as flagd does before it reads a flag). */
function resolveRefs(logic: unknown, evaluators: Record<string, unknown>, depth = 0): unknown {
  if (depth > 20) throw new Refusal("$ref nests deeper than 20 (or in a cycle)");
  if (Array.isArray(logic)) return logic.map((part) => resolveRefs(part, evaluators, depth));
  if (!isObject(logic)) return logic;
  const keys = Object.keys(logic);
  if (keys.length === 1 && keys[0] === "$ref") {
    const key = logic.$ref;
    if (typeof key !== "string" || !Object.hasOwn(evaluators, key))
      throw new Refusal(`$ref ${show(key)} names no evaluator`);
    return resolveRefs(evaluators[key], evaluators, depth + 1);
  }
  return Object.fromEntries(Object.entries(logic).map(([k, v]) => [k, resolveRefs(v, evaluators, depth)]));
}

/** One atom of a condition: a Flagstaff condition, or membership of the targeting key in a list. */
type Atom = { readonly condition: Condition } | { readonly actors: readonly string[]; readonly negate: boolean };
/** A condition in disjunctive normal form: any of these conjunctions. */
type Dnf = readonly (readonly Atom[])[];

const TRUE: Dnf = [[]];
const FALSE: Dnf = [];
const DNF_MAX = 200;

function andDnf(parts: readonly Dnf[]): Dnf {
  let result: Dnf = TRUE;
  for (const part of parts) {
    const next: Atom[][] = [];
    for (const left of result) for (const right of part) next.push([...left, ...right]);
    if (next.length > DNF_MAX) throw new Refusal(`a condition that expands to more than ${DNF_MAX} rules`);
    result = next;
  }
  return result;
}
const orDnf = (parts: readonly Dnf[]): Dnf => parts.flat();

/**
 * The variable a `{"var": …}` reads, or undefined when the logic is not one. A `var` with a default
 * (`{"var": ["plan", "free"]}`, the default read where the attribute is missing) is refused: Flagstaff's
 * conditions and splits have no default for a missing attribute.
 */
function varName(logic: unknown): string | undefined {
  if (!isObject(logic) || Object.keys(logic).length !== 1 || !("var" in logic)) return undefined;
  const list = Array.isArray(logic.var);
  const name = list ? (logic.var as unknown[])[0] : logic.var;
  if (list && (logic.var as unknown[]).length > 1 && (logic.var as unknown[])[1] !== null) {
    throw new Refusal(`a var with a default, ${show(logic)} (Flagstaff has no default for a missing attribute)`);
  }
  return typeof name === "string" ? name : undefined;
}

/** The attribute a subject reads: `{"var": a}`, or `{"cat": [{"var": a}]}` (the export's text of it). */
function subjectName(logic: unknown): string | undefined {
  if (isObject(logic) && Array.isArray(logic.cat) && logic.cat.length === 1) return varName(logic.cat[0]);
  return varName(logic);
}

/** `{"cat": [{"var": ""}]}` or `{"var": ""}`: the element `some` iterates (the export's form). */
const isElement = (logic: unknown): boolean =>
  varName(logic) === "" ||
  (isObject(logic) && Array.isArray(logic.cat) && logic.cat.length === 1 && varName(logic.cat[0]) === "");

const cond = (
  attribute: string,
  operator: Condition["operator"],
  values: (string | number)[],
  negate = false,
): Atom => ({
  condition: { attribute, operator, values, ...(negate ? { negate: true } : {}) },
});

/** A negation, as JsonLogic has it: a condition on an attribute also holds when the attribute is missing. */
function negateDnf(dnf: Dnf): Dnf {
  // not (A or B) = not A and not B; not (a and b) = not a or not b.
  return andDnf(dnf.map((conjunction) => orDnf(conjunction.map((atom) => negateAtom(atom)))));
}

function negateAtom(atom: Atom): Dnf {
  if ("actors" in atom) return [[{ actors: atom.actors, negate: !atom.negate }]];
  const c = atom.condition;
  if (c.attribute === "$now") {
    const operator = c.operator === "before" ? "after" : "before";
    // not (now < X) is now ≥ X: "after" one millisecond before.
    const instant = parseInstant(String(c.values[0]));
    const shifted = new Date(operator === "after" ? instant - 1 : instant + 1).toISOString();
    return [[cond("$now", operator, [shifted])]];
  }
  if (c.operator === "present") return [[{ condition: { ...c, negate: c.negate !== true } }]];
  const flipped: Atom = { condition: { ...c, negate: c.negate !== true } };
  // JsonLogic's negation holds for a missing attribute; Flagstaff's negated condition does not.
  return [[cond(c.attribute as string, "present", [], true)], [flipped]];
}

/** Numbers and text read as the operand of a comparison with an attribute. */
const isLiteral = (v: unknown): v is string | number | boolean =>
  typeof v === "string" || (typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean";

const TIME = "$flagd.timestamp";
const secondsIso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** A comparison of an attribute with a value, `attribute op value`. */
function comparison(attribute: string, op: string, value: unknown, where: string): Dnf {
  if (attribute === TIME) {
    if (typeof value !== "number") throw new Refusal(`${where}: $flagd.timestamp compared with ${show(value)}`);
    // now (whole seconds) < X: now < X s; > X: now ≥ X+1 s; ≤ X: now < X+1 s; ≥ X: now ≥ X s.
    const before = (s: number) => cond("$now", "before", [secondsIso(s)]);
    const from = (s: number) => cond("$now", "after", [new Date(s * 1000 - 1).toISOString()]);
    if (op === "<") return [[before(value)]];
    if (op === "<=") return [[before(value + 1)]];
    if (op === ">") return [[from(value + 1)]];
    if (op === ">=") return [[from(value)]];
    throw new Refusal(`${where}: $flagd.timestamp with ${op}`);
  }
  if (attribute === "targetingKey") {
    if ((op === "==" || op === "===" || op === "!=" || op === "!==") && typeof value === "string") {
      return [[{ actors: [value], negate: op.startsWith("!") }]];
    }
    throw new Refusal(`${where}: the targeting key compared with ${op}`);
  }
  if (attribute.startsWith("$")) throw new Refusal(`${where}: the variable ${attribute}`);
  if (!isLiteral(value)) throw new Refusal(`${where}: ${attribute} compared with ${show(value)}`);
  switch (op) {
    case "==":
    case "===":
    case "!=":
    case "!==": {
      const negate = op.startsWith("!");
      const atom =
        typeof value === "number"
          ? cond(attribute, "eq", [value])
          : cond(attribute, "in", [typeof value === "boolean" ? String(value) : value]);
      // JsonLogic's != holds for a missing attribute.
      return negate ? negateAtom(atom) : [[atom]];
    }
    case "<":
    case "<=":
    case ">":
    case ">=": {
      if (typeof value === "string" && !Number.isNaN(parseInstant(value)) && (op === "<" || op === ">")) {
        // The export's instants: compared as text in flagd, as instants here.
        return [[cond(attribute, op === "<" ? "before" : "after", [value])]];
      }
      if (typeof value !== "number") throw new Refusal(`${where}: ${attribute} ${op} ${show(value)} (not a number)`);
      const operator = ({ "<": "lt", "<=": "lte", ">": "gt", ">=": "gte" } as const)[op];
      return [[cond(attribute, operator, [value])]];
    }
    default:
      throw new Refusal(`${where}: the operator ${op}`);
  }
}

const FLIP: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

/** A condition as Flagstaff conditions (any of the conjunctions holds), or a Refusal naming what is not. */
function conditionDnf(logic: unknown, where: string): Dnf {
  if (logic === true) return TRUE;
  if (logic === false || logic === null) return FALSE;
  if (!isObject(logic) || Object.keys(logic).length !== 1) throw new Refusal(`${where}: ${show(logic)}`);
  const [operator, raw] = Object.entries(logic)[0] as [string, unknown];
  const args = Array.isArray(raw) ? raw : [raw];
  switch (operator) {
    case "and":
      return andDnf(args.map((a) => conditionDnf(a, where)));
    case "or":
      return orDnf(args.map((a) => conditionDnf(a, where)));
    case "!":
      return negateDnf(conditionDnf(args[0], where));
    case "!!":
      return conditionDnf(args[0], where);
    case "var": {
      // A bare variable: truthy. Only the export's own guard (a targeting key is there) is understood.
      if (varName(logic) === "targetingKey") return [[]];
      throw new Refusal(`${where}: a bare variable ${show(logic)} as a condition`);
    }
    case "==":
    case "===":
    case "!=":
    case "!==":
    case "<":
    case "<=":
    case ">":
    case ">=": {
      if (args.length === 3 && (operator === "<" || operator === "<=")) {
        // Between: a < x < b.
        return andDnf([
          conditionDnf({ [operator]: [args[0], args[1]] }, where),
          conditionDnf({ [operator]: [args[1], args[2]] }, where),
        ]);
      }
      if (args.length !== 2) throw new Refusal(`${where}: ${operator} with ${args.length} arguments`);
      const [left, right] = args;
      const name = varName(left);
      if (name === "targetingKey" && right === null && (operator === "!==" || operator === "!=")) {
        // The targeting key is there: what a split on it, or the actor rollout, already requires.
        return TRUE;
      }
      if (name !== undefined) {
        if (right === null && (operator === "!==" || operator === "!=")) return [[cond(name, "present", [])]];
        if (right === null && (operator === "===" || operator === "==")) return [[cond(name, "present", [], true)]];
        return comparison(name, operator, right, where);
      }
      const rightName = varName(right);
      if (rightName !== undefined) {
        if (left === null) return conditionDnf({ [operator]: [right, left] }, where);
        return comparison(rightName, FLIP[operator] ?? operator, left, where);
      }
      throw new Refusal(`${where}: ${operator} between ${show(left)} and ${show(right)}`);
    }
    case "in": {
      const [needle, haystack] = args;
      const name = varName(needle);
      if (name !== undefined && Array.isArray(haystack) && haystack.every((h) => isLiteral(h))) {
        if (name === "targetingKey") return [[{ actors: haystack.map(String), negate: false }]];
        if (name.startsWith("$")) throw new Refusal(`${where}: in on ${name}`);
        if (haystack.length === 0) return FALSE;
        const numbers = haystack.every((h) => typeof h === "number");
        return [[cond(name, numbers ? "eq" : "in", numbers ? (haystack as number[]) : haystack.map(String))]];
      }
      const inName = varName(haystack);
      if (typeof needle === "string" && inName !== undefined && !inName.startsWith("$")) {
        return [[cond(inName, "contains", [needle])]];
      }
      throw new Refusal(
        `${where}: in ${show(logic)} (Flagstaff has in on an attribute with a list of values, and contains)`,
      );
    }
    case "starts_with":
    case "ends_with": {
      const [subject, prefix] = args;
      const name = subjectName(subject);
      if (name === undefined || name.startsWith("$") || typeof prefix !== "string" || prefix === "") {
        throw new Refusal(`${where}: ${operator} ${show(args)}`);
      }
      return [[cond(name, operator, [prefix])]];
    }
    case "sem_ver": {
      const [subject, op, version] = args;
      const name = subjectName(subject);
      if (name === undefined || name.startsWith("$") || typeof version !== "string" || parseSemver(version) === null) {
        throw new Refusal(`${where}: sem_ver ${show(args)}`);
      }
      const operators: Record<string, Condition["operator"]> = {
        "=": "semver_eq",
        "!=": "semver_eq",
        "<": "semver_lt",
        "<=": "semver_lte",
        ">": "semver_gt",
        ">=": "semver_gte",
      };
      const mapped = typeof op === "string" ? operators[op] : undefined;
      if (mapped === undefined)
        throw new Refusal(`${where}: sem_ver with ${show(op)} (Flagstaff has =, !=, <, <=, >, >=)`);
      // flagd's sem_ver on a value that is not a version is null, so "!=" does not hold there either.
      return [[cond(name, mapped, [version], op === "!=")]];
    }
    case "some": {
      // The export's form for a list attribute: some of merge([var]) whose element satisfies a comparison.
      const [list, predicate] = args;
      const merged = isObject(list) && Array.isArray(list.merge) && list.merge.length === 1 ? list.merge[0] : list;
      const name = varName(merged);
      if (name === undefined || name.startsWith("$")) throw new Refusal(`${where}: some over ${show(list)}`);
      return elementCondition(name, predicate, where);
    }
    default:
      throw new Refusal(`${where}: the operation ${operator} (Flagstaff has no equivalent)`);
  }
}

/** The predicate of the export's `some` over one attribute's elements, as conditions on the attribute. */
function elementCondition(name: string, predicate: unknown, where: string): Dnf {
  if (!isObject(predicate) || Object.keys(predicate).length !== 1) throw new Refusal(`${where}: ${show(predicate)}`);
  const [operator, raw] = Object.entries(predicate)[0] as [string, unknown];
  const args = Array.isArray(raw) ? raw : [raw];
  // Rewritten with the attribute in place of the element, then read as any condition.
  const replaced = (value: unknown): unknown => (isElement(value) ? { var: name } : value);
  if (operator === "or") return orDnf(args.map((a) => elementCondition(name, a, where)));
  if (operator === "in" && typeof args[0] === "string" && isElement(args[1]))
    return [[cond(name, "contains", [args[0]])]];
  return conditionDnf({ [operator]: args.map(replaced) }, where);
}

/** Two conditions that cannot both hold (an attribute present and missing), and the presence a condition implies. */
function simplify(conjunction: readonly Atom[]): Atom[] | null {
  const conditions = conjunction.filter((a): a is { condition: Condition } => "condition" in a).map((a) => a.condition);
  const missing = new Set(
    conditions.filter((c) => c.operator === "present" && c.negate === true).map((c) => c.attribute),
  );
  const read = new Set(conditions.filter((c) => c.operator !== "present").map((c) => c.attribute));
  for (const attribute of missing) if (read.has(attribute)) return null;
  const present = new Set(
    conditions.filter((c) => c.operator === "present" && c.negate !== true).map((c) => c.attribute),
  );
  for (const attribute of present) if (missing.has(attribute)) return null;
  const seen = new Set<string>();
  return conjunction.filter((atom) => {
    if ("actors" in atom) return true;
    const c = atom.condition;
    // A condition on the attribute already requires it to be there.
    if (c.operator === "present" && c.negate !== true && read.has(c.attribute)) return false;
    const key = JSON.stringify(c);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

type Serve = { readonly variant: string | null } | { readonly split: { bucketBy?: string; weights: SplitWeight[] } };

/** A `fractional`'s bucketing value and weights as a Flagstaff split (weights in percent, three decimals). */
function splitOf(args: readonly unknown[], where: string): Serve {
  let entries = args;
  let bucketBy: string | undefined;
  const first = args[0];
  if (!Array.isArray(first)) {
    entries = args.slice(1);
    const parts = isObject(first) && Array.isArray(first.cat) ? first.cat : [first];
    const vars = parts.map(varName).filter((n): n is string => n !== undefined && n !== "$flagd.flagKey");
    const others = parts.filter((p) => varName(p) === undefined && typeof p !== "string");
    if (vars.length !== 1 || others.length > 0) {
      throw new Refusal(`${where}: fractional bucketed by ${show(first)} (Flagstaff buckets by one attribute)`);
    }
    bucketBy = vars[0] === "targetingKey" ? undefined : vars[0];
  }
  const parsed = entries.map((entry) => {
    if (!Array.isArray(entry) || entry.length < 1 || entry.length > 2 || typeof entry[0] !== "string") {
      throw new Refusal(`${where}: fractional bucket ${show(entry)}`);
    }
    const weight = entry.length === 2 ? entry[1] : 1;
    if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 0) {
      throw new Refusal(`${where}: fractional weight ${show(weight)}`);
    }
    return { variant: entry[0] as string, weight };
  });
  const total = parsed.reduce((sum, e) => sum + e.weight, 0);
  if (parsed.length === 0 || total === 0) throw new Refusal(`${where}: a fractional with no weight`);
  // Thousandths of a percent, the last weight taking what rounding leaves.
  let given = 0;
  const weights = parsed.map((e, i) => {
    const share = i === parsed.length - 1 ? 100_000 - given : Math.round((e.weight / total) * 100_000);
    given += share;
    return { variant: e.variant, weight: share / 1000 };
  });
  return { split: { ...(bucketBy === undefined ? {} : { bucketBy }), weights } };
}

/** What a targeting answer serves: a variant key, null (the default variant), or a split. */
function serveOf(logic: unknown, where: string): Serve {
  if (logic === null || logic === undefined) return { variant: null };
  if (typeof logic === "string") return { variant: logic };
  if (isObject(logic) && Object.keys(logic).length === 1 && Array.isArray(logic.fractional)) {
    return splitOf(logic.fractional, where);
  }
  throw new Refusal(`${where}: the answer ${show(logic)} (Flagstaff serves a variant key or a fractional split)`);
}

/** The targeting as ordered (conjunction, serve) pairs: `if` chains flattened, nested ones included. */
function branchesOf(logic: unknown, where: string, guard: Dnf, into: { dnf: Dnf; serve: Serve }[]): void {
  if (isObject(logic) && Object.keys(logic).length === 1 && Array.isArray(logic.if)) {
    const args = logic.if as unknown[];
    let i = 0;
    for (; i + 1 < args.length; i += 2) {
      branchesOf(args[i + 1], where, andDnf([guard, conditionDnf(args[i], where)]), into);
    }
    // The else (null when absent), reached when no condition before held: earlier branches already took those.
    branchesOf(i < args.length ? args[i] : null, where, guard, into);
    return;
  }
  into.push({ dnf: guard, serve: serveOf(logic, where) });
}

/**
 * The export's prerequisites: targeting `{"if": [P, X, default]}` where P requires, of each flag named by a
 * `$ref` to its evaluator (`flag:<name>`), one of some variants. Anything else is left to the rules.
 */
function prerequisitesOf(
  targeting: unknown,
  defaultVariant: string,
  flags: Record<string, unknown>,
  evaluators: Record<string, unknown>,
  where: string,
): { prerequisites: { flag: string; variants: string[] }[]; rest: unknown } {
  const none = { prerequisites: [], rest: targeting };
  if (!isObject(targeting) || !Array.isArray(targeting.if) || targeting.if.length !== 3) return none;
  const [test, then, otherwise] = targeting.if as unknown[];
  if (otherwise !== defaultVariant) return none;
  const parts = isObject(test) && Array.isArray(test.and) ? test.and : [test];
  const prerequisites: { flag: string; variants: string[] }[] = [];
  for (const part of parts) {
    if (!isObject(part) || !Array.isArray(part.in) || part.in.length !== 2) return none;
    const [needle, list] = part.in as unknown[];
    const key = isObject(needle) && typeof needle.$ref === "string" ? needle.$ref : undefined;
    if (key === undefined || !key.startsWith("flag:") || !Array.isArray(list)) return none;
    const flag = key.slice("flag:".length);
    const definition = flags[flag];
    if (!isObject(definition)) throw new Refusal(`${where}: a prerequisite on ${show(flag)}, which is not in the file`);
    // The guard reads the evaluator; Flagstaff evaluates the flag itself: they must be the same targeting.
    const same =
      definition.state === "ENABLED" &&
      Object.hasOwn(evaluators, key) &&
      JSON.stringify(resolveRefs(evaluators[key], evaluators)) ===
        JSON.stringify(resolveRefs(definition.targeting, evaluators));
    if (!same) {
      throw new Refusal(
        `${where}: a prerequisite on ${show(flag)} whose evaluator ${key} is not that flag's targeting (or the flag is not ENABLED)`,
      );
    }
    const v = variantsOf(flag, definition.variants);
    prerequisites.push({ flag, variants: list.map((x) => v.key(String(x))) });
  }
  return { prerequisites, rest: then };
}

interface Variants {
  readonly type: ImportedFlag["type"];
  readonly variants: ImportedFlag["variants"];
  /** flagd's key → Flagstaff's (a boolean flag's are on and off). */
  readonly key: (flagd: string) => string;
}

function variantsOf(name: string, raw: unknown): Variants {
  if (!isObject(raw) || Object.keys(raw).length === 0)
    throw new Refusal(`flag ${name}: variants must be a non-empty object`);
  const entries = Object.entries(raw);
  const kinds = new Set(
    entries.map(([, v]) =>
      v === null ? "null" : Array.isArray(v) ? "object" : typeof v === "object" ? "object" : typeof v,
    ),
  );
  if (kinds.size !== 1) throw new Refusal(`flag ${name}: variants of several types (${[...kinds].join(", ")})`);
  const kind = [...kinds][0] as string;
  if (kind === "boolean") {
    const trues = entries.filter(([, v]) => v === true).map(([k]) => k);
    const falses = entries.filter(([, v]) => v === false).map(([k]) => k);
    if (trues.length > 1 || falses.length > 1) {
      throw new Refusal(
        `flag ${name}: several variants of one boolean value (Flagstaff's boolean flags have on and off)`,
      );
    }
    const map = new Map<string, string>([
      ...trues.map((k) => [k, "on"] as const),
      ...falses.map((k) => [k, "off"] as const),
    ]);
    const variants = [
      { key: "on", value: true },
      { key: "off", value: false },
    ];
    return { type: "boolean", variants, key: (k) => map.get(k) ?? k };
  }
  if (kind !== "string" && kind !== "number" && kind !== "object") {
    throw new Refusal(`flag ${name}: variants of type ${kind}`);
  }
  if (entries.length < 2) throw new Refusal(`flag ${name}: one variant (Flagstaff's ${kind} flags have 2–50)`);
  for (const [key, value] of entries) {
    if (!VARIANT_KEY.test(key)) {
      throw new Refusal(`flag ${name}: variant key ${show(key)} (1–64 characters of A–Z a–z 0–9 . _ -)`);
    }
    if (kind === "number" && !Number.isFinite(value)) throw new Refusal(`flag ${name}: variant ${key} is not finite`);
  }
  return {
    type: kind,
    variants: entries.map(([key, value]) => ({ key, value: value as VariantValue })),
    key: (k) => k,
  };
}

/** Eight hex digits of a text's CRC-32: what tells apart names shortened to fit. */
const digest = (text: string) => crc32Utf8(text).toString(16).padStart(8, "0");

/**
 * The id of a flag's `n`th segment of listed targeting keys: `<prefix>.<flag>.<n>`; when that is longer
 * than a segment id may be, `<prefix>.<flag>` is cut short and followed by a digest of it whole
 * (`.~<8 hex digits>.<n>`), so that it fits and stays the same on every import.
 */
function listSegmentId(prefix: string, flag: string, n: number): string {
  const whole = `${prefix}.${flag}.${n}`;
  if ([...whole].length <= SEGMENT_ID_MAX_LENGTH) return whole;
  const tail = `.~${digest(`${prefix}.${flag}`)}.${n}`;
  return [...`${prefix}.${flag}`].slice(0, SEGMENT_ID_MAX_LENGTH - tail.length).join("") + tail;
}

/** Its name, `<flag> (flagd list <n>)`, likewise cut short (with a digest) to a segment name's length. */
function listSegmentName(flag: string, n: number): string {
  const whole = `${flag} (flagd list ${n})`;
  if (whole.length <= NAME_MAX_LENGTH) return whole;
  const tail = ` ~${digest(flag)} (flagd list ${n})`;
  return flag.slice(0, NAME_MAX_LENGTH - tail.length) + tail;
}

/**
 * flagd definitions (a parsed flagd file) as Flagstaff flags and the configuration each has in one
 * environment, with the segments its `in` lists on the targeting key need. `problems` names every flag
 * and construct that cannot be imported.
 */
export function fromFlagd(file: unknown, options: { readonly segmentPrefix?: string } = {}): FlagdImport {
  const prefix = options.segmentPrefix ?? "flagd";
  if (!isObject(file) || !isObject(file.flags)) {
    return { flags: [], segments: [], problems: ['not a flagd file: it has no "flags" object'], notes: [] };
  }
  const evaluators = isObject(file.$evaluators) ? file.$evaluators : {};
  const flags: ImportedFlag[] = [];
  const segments: DocumentSegment[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  for (const [name, definition] of Object.entries(file.flags)) {
    try {
      if (!isFlagName(name)) throw new Refusal(`flag ${show(name)}: not a Flagstaff flag name`);
      if (!isObject(definition)) throw new Refusal(`flag ${name}: not an object`);
      const { state, defaultVariant } = definition;
      if (state !== "ENABLED" && state !== "DISABLED") throw new Refusal(`flag ${name}: state ${show(state)}`);
      const v = variantsOf(name, definition.variants);
      const flagdKeys = Object.keys(definition.variants as object);
      if (typeof defaultVariant !== "string" || !flagdKeys.includes(defaultVariant)) {
        throw new Refusal(`flag ${name}: defaultVariant ${show(defaultVariant)} is not one of its variants`);
      }
      const known = (key: string, where: string) => {
        if (!flagdKeys.includes(key))
          throw new Refusal(`${where}: serves ${show(key)}, which is not one of its variants`);
        return v.key(key);
      };
      const fallback = v.key(defaultVariant);
      const boolean = v.type === "boolean";
      const other = boolean ? "on" : (v.variants.find((x) => x.key !== fallback)?.key as string);
      const base: DocumentConfiguration = {
        status: "conditional",
        percentageActors: 0,
        percentageCalls: 0,
        onVariant: boolean ? "on" : fallback,
        offVariant: boolean ? "off" : fallback,
        rules: [],
        prerequisites: [],
        actors: [],
        segments: [],
      };
      const targeting = definition.targeting;
      const hasTargeting = targeting !== undefined && !(isObject(targeting) && Object.keys(targeting).length === 0);
      let configuration: DocumentConfiguration;
      if (state === "DISABLED") {
        notes.push(
          `flag ${name}: flagd's DISABLED answers the caller's default; imported disabled, serving ${defaultVariant}`,
        );
        configuration = boolean
          ? { ...base, status: "disabled" }
          : { ...base, status: "disabled", onVariant: other, offVariant: fallback };
        if (boolean && fallback === "on") {
          notes.push(`flag ${name}: a boolean flag disabled serves off in Flagstaff (flagd's default variant is on)`);
        }
      } else if (!hasTargeting) {
        // What it always serves: a boolean on is enabled, off disabled; another type's default is its onVariant.
        configuration = boolean
          ? { ...base, status: fallback === "on" ? "enabled" : "disabled" }
          : { ...base, status: "enabled", onVariant: fallback, offVariant: other };
      } else {
        const where = `flag ${name}`;
        const { prerequisites, rest } = prerequisitesOf(targeting, defaultVariant, file.flags, evaluators, where);
        if (prerequisites.length > 0 && boolean && fallback === "on") {
          // flagd serves the default variant (on) where a prerequisite fails; Flagstaff's failed
          // prerequisite serves a boolean flag's offVariant, always off.
          throw new Refusal(
            `${where}: a prerequisite guard whose failure serves the default variant ${show(defaultVariant)} (true): a failed prerequisite serves off in Flagstaff`,
          );
        }
        const resolved = resolveRefs(rest, evaluators);
        const branches: { dnf: Dnf; serve: Serve }[] = [];
        branchesOf(resolved, where, TRUE, branches);
        const rules: Rule[] = [];
        let segmentCount = 0;
        const segmentOf = new Map<string, string>();
        for (const branch of branches) {
          const serve: Rule["serve"] =
            "variant" in branch.serve
              ? { variant: branch.serve.variant === null ? fallback : known(branch.serve.variant, where) }
              : {
                  split: {
                    ...(branch.serve.split.bucketBy === undefined ? {} : { bucketBy: branch.serve.split.bucketBy }),
                    weights: branch.serve.split.weights.map((w) => ({ ...w, variant: known(w.variant, where) })),
                  },
                };
          if ("split" in serve) {
            notes.push(
              `${where}: a split whose bucketing value is missing goes on to the next rule in Flagstaff (flagd serves the default variant)`,
            );
          }
          for (const conjunction of branch.dnf) {
            const atoms = simplify(conjunction);
            if (atoms === null) continue;
            const conditions: Condition[] = atoms.map((atom) => {
              if ("condition" in atom) return atom.condition;
              const members = [...new Set(atom.actors)].sort();
              const signature = JSON.stringify(members);
              let id = segmentOf.get(signature);
              if (id === undefined) {
                segmentCount += 1;
                id = listSegmentId(prefix, name, segmentCount);
                segmentOf.set(signature, id);
                segments.push({
                  id,
                  name: listSegmentName(name, segmentCount),
                  description: `Listed targeting keys of flagd flag ${name}, imported`,
                  conditions: [],
                  members,
                });
              }
              return { operator: atom.negate ? "not_in_segment" : "in_segment", values: [id] };
            });
            rules.push({ id: `r${rules.length + 1}`, conditions, serve });
          }
        }
        // Rules at the end that serve what flagd serves when nothing holds change nothing; a boolean flag
        // whose flagd default is on (Flagstaff's boolean offVariant is off) ends with a rule that serves it.
        while (rules.length > 0) {
          const last = rules[rules.length - 1] as Rule;
          if (!("variant" in last.serve) || last.serve.variant !== fallback) break;
          rules.pop();
        }
        if (fallback !== base.offVariant)
          rules.push({ id: `r${rules.length + 1}`, conditions: [], serve: { variant: fallback } });
        if (rules.length > RULES_MAX)
          throw new Refusal(`${where}: ${rules.length} rules (Flagstaff keeps at most ${RULES_MAX})`);
        configuration = {
          ...base,
          rules: rules as DocumentConfiguration["rules"],
          prerequisites: prerequisites as DocumentConfiguration["prerequisites"],
        };
      }
      flags.push({ name, type: v.type, variants: v.variants, configuration });
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      problems.push(error.message.startsWith("flag ") ? error.message : `flag ${name}: ${error.message}`);
    }
  }
  return { flags, segments, problems, notes: [...new Set(notes)] };
}

export type { Logic };
