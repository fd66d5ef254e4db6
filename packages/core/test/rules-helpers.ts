import assert from "node:assert/strict";
import {
  type Condition,
  type EvaluationContext,
  evaluateFlag,
  type FlagEvaluation,
  type Rule,
  type TargetedFlag,
  type TargetingResolver,
  validateConfiguration,
} from "../src/index.js";

// Shared by the rules-*.test.ts files: small builders for flags, resolvers and contexts.

/** A conditional boolean flag with no targeting and no rollouts, plus `extra`. */
export function flag(extra: Partial<TargetedFlag> = {}): TargetedFlag {
  return {
    name: "checkout",
    status: "conditional",
    percentageActors: 0,
    percentageCalls: 0,
    actors: new Set(),
    segments: new Set(),
    ...extra,
  };
}

/** A string flag with variants red/green/blue: onVariant green, offVariant red. */
export function stringFlag(extra: Partial<TargetedFlag> = {}): TargetedFlag {
  return flag({
    type: "string",
    variants: [
      { key: "red", value: "#f00" },
      { key: "green", value: "#0f0" },
      { key: "blue", value: "#00f" },
    ],
    onVariant: "green",
    offVariant: "red",
    ...extra,
  });
}

/** A resolver over plain data; `calls` counts what it was asked. */
export function resolver(
  options: {
    members?: Record<string, readonly string[]>;
    segmentConditions?: Record<string, readonly Condition[]>;
    flags?: readonly TargetedFlag[];
    now?: number;
    random?: number;
  } = {},
): TargetingResolver & { calls: { now: number; random: number; flag: string[] } } {
  const calls = { now: 0, random: 0, flag: [] as string[] };
  const flags = new Map((options.flags ?? []).map((f) => [f.name, f]));
  return {
    calls,
    isMember: (segmentId, actorId) => options.members?.[segmentId]?.includes(actorId) === true,
    segmentConditions: (segmentId) => options.segmentConditions?.[segmentId],
    flag: (name) => {
      calls.flag.push(name);
      return flags.get(name);
    },
    now: () => {
      calls.now++;
      return options.now ?? Date.parse("2026-11-27T12:00:00Z");
    },
    random: () => {
      calls.random++;
      return options.random ?? 0.999;
    },
  };
}

/** One rule with `conditions`, serving the boolean flag's `on`. */
export const rule = (conditions: readonly Condition[], id = "r1"): Rule => ({
  id,
  conditions,
  serve: { variant: "on" },
});

/**
 * Whether `condition` holds for `context`: a boolean flag with one rule serving on, evaluated. The
 * condition must be one the validator accepts (asserted), so no test passes on an ERROR.
 */
export function holds(
  condition: Condition,
  context: EvaluationContext | Record<string, unknown>,
  project: TargetingResolver = resolver(),
): boolean {
  const f = flag({ rules: [rule([condition])] });
  assert.deepEqual(validateConfiguration(f), [], JSON.stringify(condition));
  const ctx = "attributes" in context || "actorIds" in context ? context : { attributes: context };
  const result = evaluateFlag(f, ctx as EvaluationContext, project);
  assert.notEqual(result.reason, "ERROR", JSON.stringify(result));
  return result.variant === "on";
}

/** The plain fields of an evaluation (frozen answers compare equal to object literals this way). */
export const plain = (e: FlagEvaluation) => ({ ...e });
