import type { Prerequisite, Rule } from "./types.js";

/** What one flag's configuration (in one environment) names outside itself. */
export interface ConfigurationReferences {
  /** Ids of the segments its rules name (`in_segment`, `not_in_segment`), each once, in the order named. */
  readonly segments: readonly string[];
  /** Names of the flags its prerequisites name, each once, in the order named. */
  readonly flags: readonly string[];
}

// A configuration's arrays are immutable (replaced whole on change), so what they name is computed once.
const segmentsCache = new WeakMap<readonly Rule[], readonly string[]>();
const flagsCache = new WeakMap<readonly Prerequisite[], readonly string[]>();
const NONE: readonly string[] = Object.freeze([]);

function segmentsOf(rules: readonly Rule[]): readonly string[] {
  let found = segmentsCache.get(rules);
  if (found === undefined) {
    const ids = new Set<string>();
    for (const rule of rules) {
      for (const condition of rule.conditions) {
        if (condition.operator !== "in_segment" && condition.operator !== "not_in_segment") continue;
        for (const value of condition.values) if (typeof value === "string") ids.add(value);
      }
    }
    found = ids.size === 0 ? NONE : Object.freeze([...ids]);
    segmentsCache.set(rules, found);
  }
  return found;
}

function flagsOf(prerequisites: readonly Prerequisite[]): readonly string[] {
  let found = flagsCache.get(prerequisites);
  if (found === undefined) {
    found = prerequisites.length === 0 ? NONE : Object.freeze([...new Set(prerequisites.map((p) => p.flag))]);
    flagsCache.set(prerequisites, found);
  }
  return found;
}

/**
 * Which segments and flags a flag's configuration uses by name: the segments its rules' `in_segment` and
 * `not_in_segment` conditions name, and the flags its prerequisites name. The one definition of "which
 * flags use what": the server (a segment in use, its flags), the SDK's local evaluator (which flags a
 * change reaches) and the console ask this. Segments attached to the flag (the seed's `segments`) are
 * not references: the configuration holds them itself.
 */
export function referencesOf(configuration: {
  readonly rules?: readonly Rule[];
  readonly prerequisites?: readonly Prerequisite[];
}): ConfigurationReferences {
  return {
    segments: configuration.rules ? segmentsOf(configuration.rules) : NONE,
    flags: configuration.prerequisites ? flagsOf(configuration.prerequisites) : NONE,
  };
}

/** What a flag's evaluation reads besides the flag itself (dependenciesOf). */
export interface FlagDependencies {
  /** Ids of its attached segments, then of the segments its rules name (referencesOf), each once. */
  readonly segments: readonly string[];
  /** Names of its prerequisite flags, each once, in the order named. */
  readonly flags: readonly string[];
}

/**
 * What a flag depends on: every segment its evaluation may read (attached to it, or named by its rules)
 * and the flags its prerequisites name. The one definition of "what a change to a segment or a flag
 * reaches": the SDK's local evaluator asks it (which flags a change may make answer differently, what a
 * fresh snapshot changed); referencesOf is its part written in the configuration.
 */
export function dependenciesOf(flag: {
  readonly segments: ReadonlySet<string>;
  readonly rules?: readonly Rule[];
  readonly prerequisites?: readonly Prerequisite[];
}): FlagDependencies {
  const named = referencesOf(flag);
  if (flag.segments.size === 0) return named;
  const segments =
    named.segments.length === 0 ? [...flag.segments] : [...new Set([...flag.segments, ...named.segments])];
  return { segments, flags: named.flags };
}
