import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  type Condition,
  type EvaluationContext,
  evaluateFlag,
  type FlagEvaluation,
  splitBucket,
  type TargetedFlag,
  type TargetingResolver,
  validateConfiguration,
} from "../src/index.js";

// Runs test/rule-vectors.json (generate-rule-vectors.mjs), as a port to another language would.

type FlagJSON = Omit<TargetedFlag, "actors" | "segments"> & { actors: string[]; segments: string[] };

interface Case {
  description: string;
  flag: FlagJSON;
  flags: FlagJSON[];
  segments: Record<string, { members: string[]; conditions: Condition[] }>;
  context: EvaluationContext;
  now: string | null;
  randomDraw: number | null;
  expected: Partial<FlagEvaluation>;
}

// Compiled to packages/core/dist/test/, so the JSON in packages/core/test/ is two levels up.
const vectors = JSON.parse(readFileSync(new URL("../../test/rule-vectors.json", import.meta.url), "utf8")) as {
  cases: Case[];
  splitBuckets: { flagName: string; ruleId: string; value: string; bucket: number }[];
  invalid: { description: string; flag: FlagJSON; expected: { code: string; path: string } }[];
};

const toFlag = (json: FlagJSON): TargetedFlag => ({
  ...json,
  actors: new Set(json.actors),
  segments: new Set(json.segments),
});

function resolverOf(v: Case): TargetingResolver {
  const flags = new Map(v.flags.map((f) => [f.name, toFlag(f)]));
  return {
    isMember: (segmentId, actorId) => v.segments[segmentId]?.members.includes(actorId) === true,
    segmentConditions: (segmentId) => v.segments[segmentId]?.conditions,
    flag: (name) => flags.get(name),
    now: () => {
      if (v.now === null) throw new Error("read the clock, which this vector says no condition reads");
      return Date.parse(v.now);
    },
    random: () => {
      if (v.randomDraw === null) throw new Error("drew, which this vector says the evaluation must not");
      return v.randomDraw;
    },
  };
}

describe("rule vectors", () => {
  it("has a good number of cases, covering every reason and every operator", () => {
    assert.ok(vectors.cases.length >= 90, `only ${vectors.cases.length} cases`);
    const reasons = new Set(vectors.cases.map((v) => v.expected.reason));
    for (const reason of [
      "DISABLED",
      "STATIC",
      "TARGETING_MATCH",
      "SPLIT",
      "DEFAULT",
      "PREREQUISITE_FAILED",
      "ERROR",
    ]) {
      assert.ok(reasons.has(reason as FlagEvaluation["reason"]), reason);
    }
    const operators = new Set(
      vectors.cases.flatMap((v) => (v.flag.rules ?? []).flatMap((r) => r.conditions.map((c) => c.operator))),
    );
    assert.equal(operators.size, 21, [...operators].join(" "));
  });

  for (const v of vectors.cases) {
    it(v.description, () => {
      const result = evaluateFlag(toFlag(v.flag), v.context, resolverOf(v));
      const { errorMessage, ...answer } = result;
      if (result.reason === "ERROR") assert.ok(errorMessage, "an error says what went wrong");
      assert.deepEqual({ ...answer }, v.expected, errorMessage);
    });
  }

  it("split buckets", () => {
    for (const b of vectors.splitBuckets) assert.equal(splitBucket(b.flagName, b.ruleId, b.value), b.bucket, b.value);
  });

  for (const v of vectors.invalid) {
    it(`refused: ${v.description}`, () => {
      const problems = validateConfiguration(toFlag(v.flag)).map(({ code, path }) => ({ code, path }));
      assert.ok(
        problems.some((p) => p.code === v.expected.code && p.path === v.expected.path),
        JSON.stringify(problems),
      );
    });
  }
});
