// JsonLogic as flagd reads it (https://flagd.dev/reference/flag-definitions/): the shapes of a flagd file
// and the small constructors the export writes its targeting with.

/** A JsonLogic expression (or a literal: a variant key, a number, a list). */
export type Logic = null | boolean | number | string | readonly Logic[] | { readonly [operator: string]: Logic };

/** A flag as flagd defines it. */
export interface FlagdFlag {
  readonly state: "ENABLED" | "DISABLED";
  readonly variants: Readonly<Record<string, unknown>>;
  readonly defaultVariant: string;
  readonly targeting?: Logic;
  readonly metadata?: Readonly<Record<string, string | number | boolean>>;
}

/** A flagd flag-definition file: its flags, and the shared targeting they reference with `$ref`. */
export interface FlagdDocument {
  readonly $schema?: string;
  readonly $evaluators?: Readonly<Record<string, Logic>>;
  readonly flags: Readonly<Record<string, FlagdFlag>>;
  readonly metadata?: Readonly<Record<string, string | number | boolean>>;
}

/** flagd's published schema of flag-definition files. */
export const FLAGD_SCHEMA_URL = "https://flagd.dev/schema/v0/flags.json";

/** The context's targeting key: the one actor flagd knows of a context. */
export const TARGETING_KEY: Logic = { var: "targetingKey" };
/** The evaluation time flagd puts in the context, in whole seconds since the epoch. */
export const TIMESTAMP: Logic = { var: "$flagd.timestamp" };

export const variable = (name: string): Logic => ({ var: name });

/** Holds when the value is there (a missing `var` is null; `!==` compares without coercion, so 0 and "" are there). */
export const present = (value: Logic): Logic => ({ "!==": [value, null] });
export const missing = (value: Logic): Logic => ({ "===": [value, null] });

export const not = (logic: Logic): Logic => (typeof logic === "boolean" ? !logic : { "!": [logic] });

/** All of them (true when none); constants folded. */
export function and(parts: readonly Logic[]): Logic {
  const kept = parts.filter((p) => p !== true);
  if (kept.includes(false)) return false;
  if (kept.length === 0) return true;
  return kept.length === 1 ? (kept[0] as Logic) : { and: kept };
}

/** Any of them (false when none); constants folded. */
export function or(parts: readonly Logic[]): Logic {
  const kept = parts.filter((p) => p !== false);
  if (kept.includes(true)) return true;
  if (kept.length === 0) return false;
  return kept.length === 1 ? (kept[0] as Logic) : { or: kept };
}

/**
 * `if` over (condition, answer) pairs and a last answer; pairs whose condition never holds are left out, and
 * one that always holds ends the chain.
 */
export function ifChain(branches: readonly (readonly [Logic, Logic])[], otherwise: Logic): Logic {
  const args: Logic[] = [];
  for (const [condition, answer] of branches) {
    if (condition === false) continue;
    if (condition === true) {
      if (args.length === 0) return answer;
      args.push(answer);
      return { if: args };
    }
    args.push(condition, answer);
  }
  if (args.length === 0) return otherwise;
  args.push(otherwise);
  return { if: args };
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
