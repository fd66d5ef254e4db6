import type { EvaluationReason } from "../contract/enums.js";
import { Attributes, Conditions } from "./conditions.js";
import { withResolution } from "./resolution.js";
import { splitBounds } from "./split.js";
import type { FlagEvaluation, TargetedFlag, Variant } from "./types.js";
import { validateConfiguration } from "./validate.js";
import { BOOLEAN_VARIANTS } from "./variants.js";

// A flag's targeting compiled once (conditions prepared, values parsed, regular expressions compiled,
// every answer built and frozen), then reused by every evaluation until one of the fields it was built
// from is replaced. The seed's fields (status, rollouts, attached actors and segments) are read live:
// ProjectState changes them in place.

export interface CompiledSplit {
  readonly bucketBy: string | undefined;
  readonly bounds: Int32Array;
  /** One answer per weight, in order. */
  readonly answers: readonly FlagEvaluation[];
}

export interface CompiledRule {
  readonly id: string;
  readonly conditions: Conditions;
  /** How many first conditions it shares with the rule before (Conditions.sharedWith); 0 for the first. */
  readonly shared: number;
  readonly answer: FlagEvaluation | CompiledSplit;
}

export interface CompiledPrerequisite {
  readonly flag: string;
  readonly variants: ReadonlySet<string>;
  readonly failed: FlagEvaluation;
}

export interface CompiledFlag {
  // What it was built from, compared by identity on every evaluation.
  readonly name: string;
  readonly type: TargetedFlag["type"];
  readonly variants: TargetedFlag["variants"];
  readonly onVariant: string | undefined;
  readonly offVariant: string | undefined;
  readonly rules: TargetedFlag["rules"];
  readonly prerequisites: TargetedFlag["prerequisites"];
  /** The answer to every evaluation when the configuration is one the validator refuses. */
  readonly error: FlagEvaluation | null;
  /** onVariant with STATIC, TARGETING_MATCH and SPLIT; offVariant with DISABLED and DEFAULT. */
  readonly answers: Readonly<Record<EvaluationReason, FlagEvaluation>>;
  readonly rulesCompiled: readonly CompiledRule[];
  readonly prerequisitesCompiled: readonly CompiledPrerequisite[];
}

const cache = new WeakMap<TargetedFlag, CompiledFlag>();
let lastFlag: TargetedFlag | undefined;
let lastCompiled: CompiledFlag | undefined;

/** An answer serving `variant`, made (frozen) with its resolution (`off`: the flag's offVariant). */
const answer = (variant: Variant, reason: FlagEvaluation["reason"], off: Variant, extra?: object): FlagEvaluation =>
  withResolution({ variant: variant.key, value: variant.value, reason, ...extra }, off.key);

export const errorAnswer = (errorCode: "PARSE_ERROR" | "GENERAL", errorMessage: string): FlagEvaluation =>
  withResolution({ variant: null, value: null, reason: "ERROR", errorCode, errorMessage }, null);

const NONE: readonly never[] = Object.freeze([]);

/**
 * The answers by status and reason of flags serving `on` and `off`, made once per pair of variants: they
 * name only the variants, so every boolean flag (whose variants are BOOLEAN_VARIANTS) shares one set, and
 * a local evaluator holding 50,000 flags holds five answers rather than 250,000.
 */
const answersByVariants = new WeakMap<Variant, WeakMap<Variant, CompiledFlag["answers"]>>();

function answersOf(on: Variant, off: Variant): CompiledFlag["answers"] {
  let byOff = answersByVariants.get(on);
  if (byOff === undefined) {
    byOff = new WeakMap();
    answersByVariants.set(on, byOff);
  }
  let answers = byOff.get(off);
  if (answers === undefined) {
    answers = Object.freeze({
      STATIC: answer(on, "STATIC", off),
      TARGETING_MATCH: answer(on, "TARGETING_MATCH", off),
      SPLIT: answer(on, "SPLIT", off),
      DISABLED: answer(off, "DISABLED", off),
      DEFAULT: answer(off, "DEFAULT", off),
    }) as CompiledFlag["answers"];
    byOff.set(off, answers);
  }
  return answers;
}

function build(flag: TargetedFlag): CompiledFlag {
  const source = {
    name: flag.name,
    type: flag.type,
    variants: flag.variants,
    onVariant: flag.onVariant,
    offVariant: flag.offVariant,
    rules: flag.rules,
    prerequisites: flag.prerequisites,
  };
  // Made with the first rule: a flag without rules needs none (it holds two maps and four arrays).
  let attributes: Attributes | undefined;
  const empty = {
    error: null,
    answers: {} as CompiledFlag["answers"],
    rulesCompiled: [],
    prerequisitesCompiled: [],
  };
  // Stored configurations were held to the pattern limits when written (see ValidationOptions).
  const problem = validateConfiguration(flag, undefined, { patternCosts: false })[0];
  if (problem) {
    return { ...source, ...empty, error: errorAnswer("PARSE_ERROR", `flag ${flag.name}: ${problem.message}`) };
  }
  const boolean = flag.type === undefined || flag.type === "boolean";
  const variants = boolean ? BOOLEAN_VARIANTS : (flag.variants as readonly Variant[]);
  const byKey = new Map(variants.map((v) => [v.key, v]));
  const variant = (key: string) => byKey.get(key) as Variant;
  const on = variant(boolean ? "on" : (flag.onVariant as string));
  const off = variant(boolean ? "off" : (flag.offVariant as string));
  const answers = answersOf(on, off);
  let previous: Conditions | null = null;
  const rules = flag.rules ?? NONE;
  // Arrays of each flag's own, even when empty: the engine iterates them, and a shared frozen one beside
  // the others' made those loops polymorphic (10–15 % fewer evaluations per second).
  const rulesCompiled = rules.map((rule): CompiledRule => {
    const ruleId = { ruleId: rule.id };
    attributes ??= new Attributes();
    const conditions = new Conditions(rule.conditions, attributes);
    const shared = previous === null ? 0 : conditions.sharedWith(previous);
    previous = conditions;
    if ("variant" in rule.serve) {
      return {
        id: rule.id,
        conditions,
        shared,
        answer: answer(variant(rule.serve.variant), "TARGETING_MATCH", off, ruleId),
      };
    }
    const split = rule.serve.split;
    return {
      id: rule.id,
      conditions,
      shared,
      answer: {
        bucketBy: split.bucketBy,
        bounds: splitBounds(split),
        answers: split.weights.map((w) => answer(variant(w.variant), "SPLIT", off, ruleId)),
      },
    };
  });
  const prerequisites = flag.prerequisites ?? NONE;
  const prerequisitesCompiled = prerequisites.map((p) => ({
    flag: p.flag,
    variants: new Set(p.variants),
    failed: answer(off, "PREREQUISITE_FAILED", off, { prerequisite: p.flag }),
  }));
  // Written out rather than spread: the object then holds every field in itself.
  return {
    name: source.name,
    type: source.type,
    variants: source.variants,
    onVariant: source.onVariant,
    offVariant: source.offVariant,
    rules: source.rules,
    prerequisites: source.prerequisites,
    error: null,
    answers,
    rulesCompiled,
    prerequisitesCompiled,
  };
}

/** The flag's compiled targeting, built again only when a field it was built from was replaced. */
export function compiled(flag: TargetedFlag): CompiledFlag {
  // The flag evaluated last is looked up without hashing (a local evaluator mostly asks one flag in a row).
  const c = flag === lastFlag ? lastCompiled : cache.get(flag);
  if (
    c !== undefined &&
    c.name === flag.name &&
    c.type === flag.type &&
    c.variants === flag.variants &&
    c.onVariant === flag.onVariant &&
    c.offVariant === flag.offVariant &&
    c.rules === flag.rules &&
    c.prerequisites === flag.prerequisites
  ) {
    lastFlag = flag;
    lastCompiled = c;
    return c;
  }
  const fresh = build(flag);
  cache.set(flag, fresh);
  lastFlag = flag;
  lastCompiled = fresh;
  return fresh;
}
