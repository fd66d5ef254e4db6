import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  ALLOWED_PERCENTAGES,
  type EvaluableFlag,
  evaluate,
  evaluateFlag,
  FLAG_STATUSES,
  type FlagStatus,
  ProjectState,
  type Rule,
  type SegmentMembership,
  type TargetedFlag,
} from "../src/index.js";

// For a boolean flag with no rules and no prerequisites, evaluateFlag is the seed's evaluate: the same
// answer (on ⇔ enabled), the same reason, and the same draws, over many generated flags and contexts.

const SEGMENTS = ["beta", "staff", "eu"] as const;
const actorId = fc.oneof(
  fc.constantFrom("alice", "bob", "carol", "dave", "José", "日本語", "😀", "beta"),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 6 }),
);
const flagName = fc.oneof(fc.constantFrom("checkout.new-flow", "search_v2", "a:b"), fc.string({ maxLength: 16 }));

interface Scenario {
  flag: EvaluableFlag;
  isMember: SegmentMembership;
  actorIds: string[];
  draw: number;
}

const scenario = (status?: fc.Arbitrary<FlagStatus>): fc.Arbitrary<Scenario> =>
  fc.uniqueArray(actorId, { minLength: 1, maxLength: 8 }).chain((pool) =>
    fc
      .record({
        name: flagName,
        status: status ?? fc.constantFrom(...FLAG_STATUSES),
        percentageActors: fc.constantFrom(...ALLOWED_PERCENTAGES),
        percentageCalls: fc.constantFrom(...ALLOWED_PERCENTAGES),
        actors: fc.subarray(pool),
        segments: fc.subarray([...SEGMENTS]),
        members: fc.tuple(fc.subarray(pool), fc.subarray(pool), fc.subarray(pool)),
        actorIds: fc.array(fc.oneof(fc.constantFrom(...pool), actorId), { maxLength: 4 }),
        draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      })
      .map((r) => {
        const members: Record<string, string[]> = { beta: r.members[0], staff: r.members[1], eu: r.members[2] };
        return {
          flag: {
            name: r.name,
            status: r.status,
            percentageActors: r.percentageActors,
            percentageCalls: r.percentageCalls,
            actors: new Set(r.actors),
            segments: new Set(r.segments),
          },
          isMember: (segmentId, actor) => members[segmentId]?.includes(actor) === true,
          actorIds: r.actorIds,
          draw: r.draw,
        };
      }),
  );

/** Both evaluations of a scenario, with how often each drew. */
function compare(s: Scenario, targeted: TargetedFlag = s.flag) {
  let seedDraws = 0;
  let targetedDraws = 0;
  const seed = evaluate(s.flag, s.actorIds, s.isMember, () => {
    seedDraws++;
    return s.draw;
  });
  const result = evaluateFlag(
    targeted,
    { actorIds: s.actorIds },
    {
      isMember: s.isMember,
      random: () => {
        targetedDraws++;
        return s.draw;
      },
    },
  );
  assert.deepEqual(
    { variant: result.variant, value: result.value, reason: result.reason },
    { variant: seed.enabled ? "on" : "off", value: seed.enabled, reason: seed.reason },
  );
  assert.equal(targetedDraws, seedDraws, "draws");
  assert.equal(result.ruleId, undefined);
}

describe("evaluateFlag on a boolean flag without rules is evaluate", () => {
  it("for every status, rollout, attached actor and segment, context and draw", () => {
    fc.assert(
      fc.property(scenario(), (s) => compare(s)),
      { numRuns: 5000 },
    );
  });

  it("for conditional flags especially", () => {
    fc.assert(
      fc.property(scenario(fc.constant("conditional")), (s) => compare(s)),
      { numRuns: 5000 },
    );
  });

  it("with the targeting fields written out as a boolean flag's defaults", () => {
    fc.assert(
      fc.property(scenario(), (s) =>
        compare(s, {
          ...s.flag,
          type: "boolean",
          variants: [
            { key: "on", value: true },
            { key: "off", value: false },
          ],
          onVariant: "on",
          offVariant: "off",
          rules: [],
          prerequisites: [],
        }),
      ),
      { numRuns: 2000 },
    );
  });

  it("with rules that never hold (on an attribute the context does not have)", () => {
    const rules: Rule[] = Array.from({ length: 5 }, (_, i) => ({
      id: `r${i}`,
      conditions: [{ attribute: "missing", operator: "in", values: ["x"], negate: i % 2 === 0 }],
      serve: { variant: "on" },
    }));
    fc.assert(
      fc.property(scenario(), (s) => compare(s, { ...s.flag, rules })),
      { numRuns: 2000 },
    );
  });

  it("on ProjectState's flags (whose buckets it caches)", () => {
    fc.assert(
      fc.property(scenario(), (s) => {
        const state = new ProjectState();
        state.putFlag({ id: "1", ...s.flag, actors: new Set(s.flag.actors), segments: new Set(s.flag.segments) });
        const flag = state.flag(s.flag.name);
        assert.ok(flag);
        compare(s, flag);
        compare(s, flag);
      }),
      { numRuns: 1000 },
    );
  });
});
