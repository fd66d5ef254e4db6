import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import zlib from "node:zlib";
import fc from "fast-check";
import {
  ALLOWED_PERCENTAGES,
  type EvaluableFlag,
  type Evaluation,
  type EvaluationReason,
  evaluate,
  explain,
  FLAG_STATUSES,
  type FlagStatus,
  isEnabledForActor,
  isEnabledForSegment,
  servedToActor,
  inCallRollout,
  isTargeted,
  type SegmentMembership,
} from "../src/index.js";

interface EvaluationVector {
  description: string;
  flag: {
    name: string;
    status: FlagStatus;
    percentageActors: number;
    percentageCalls: number;
    actors: string[];
    segments: string[];
  };
  segmentMembers: Record<string, string[]>;
  actorIds: string[];
  randomDraw: number | null;
  expected: { enabled: boolean; reason: EvaluationReason };
}

// Compiled to packages/core/dist/test/, so the JSON in packages/core/test/ is two levels up.
const vectors = JSON.parse(readFileSync(new URL("../../test/vectors.json", import.meta.url), "utf8")) as {
  evaluation: EvaluationVector[];
};

/** The largest double below 1: in every call rollout below 100%, never in one of 0%. */
const BELOW_ONE = 1 - 2 ** -53;
const REASONS: readonly EvaluationReason[] = ["DISABLED", "STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT"];

/** A random source returning `value` that counts how often it is drawn. */
function countingRandom(value: number): { random: () => number; readonly calls: number } {
  let calls = 0;
  return {
    random: () => {
      calls++;
      return value;
    },
    get calls() {
      return calls;
    },
  };
}

function membership(members: Record<string, readonly string[]>): SegmentMembership {
  return (segmentId, actorId) => Object.hasOwn(members, segmentId) && (members[segmentId] ?? []).includes(actorId);
}

const plain = (e: Evaluation) => ({ enabled: e.enabled, reason: e.reason });

// ---------------------------------------------------------------------------------------------------------
// Independent model of the rules, with zlib's CRC-32 as the bucketing oracle.

const zlibBucket = (flagName: string, actorId: string): number =>
  (zlib.crc32(Buffer.from(`${flagName}:${actorId}`, "utf8")) >>> 0) % 100_000;

interface Scenario {
  flag: EvaluableFlag;
  members: Record<string, string[]>;
  isMember: SegmentMembership;
  actorIds: string[];
  draw: number;
}

function modelTargeted(s: Scenario, actorId: string): boolean {
  return s.flag.actors.has(actorId) || [...s.flag.segments].some((seg) => (s.members[seg] ?? []).includes(actorId));
}

function modelActorRule(s: Scenario): EvaluationReason | null {
  if (s.actorIds.some((a) => modelTargeted(s, a))) return "TARGETING_MATCH";
  if (s.actorIds.some((a) => zlibBucket(s.flag.name, a) < s.flag.percentageActors * 1000)) return "SPLIT";
  return null;
}

function model(s: Scenario): { enabled: boolean; reason: EvaluationReason } {
  if (s.flag.status === "disabled") return { enabled: false, reason: "DISABLED" };
  if (s.flag.status === "enabled") return { enabled: true, reason: "STATIC" };
  const byActor = modelActorRule(s);
  if (byActor) return { enabled: true, reason: byActor };
  if (s.draw < s.flag.percentageCalls / 100) return { enabled: true, reason: "SPLIT" };
  return { enabled: false, reason: "DEFAULT" };
}

// ---------------------------------------------------------------------------------------------------------
// Arbitraries.

const SEGMENTS = ["beta", "staff", "eu"] as const;
const percentage = fc.constantFrom(...ALLOWED_PERCENTAGES);
const draw = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const actorId = fc.oneof(
  fc.constantFrom("alice", "bob", "carol", "dave", "José", "日本語", "😀", "beta"),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 6 }),
);
const flagName = fc.oneof(fc.constantFrom("checkout.new-flow", "search_v2", "a:b"), fc.string({ maxLength: 16 }));

function scenarioArb(overrides: { status?: fc.Arbitrary<FlagStatus> } = {}): fc.Arbitrary<Scenario> {
  return fc.uniqueArray(actorId, { minLength: 1, maxLength: 8 }).chain((pool) =>
    fc
      .record({
        name: flagName,
        status: overrides.status ?? fc.constantFrom(...FLAG_STATUSES),
        percentageActors: percentage,
        percentageCalls: percentage,
        actors: fc.subarray(pool),
        segments: fc.subarray([...SEGMENTS]),
        members: fc.tuple(fc.subarray(pool), fc.subarray(pool), fc.subarray(pool)),
        // Any number of ids from the pool (repeats allowed), plus ids no flag or segment knows.
        actorIds: fc.array(fc.oneof(fc.constantFrom(...pool), actorId), { maxLength: 4 }),
        draw,
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
          members,
          isMember: membership(members),
          actorIds: r.actorIds,
          draw: r.draw,
        };
      }),
  );
}

const withFlag = (s: Scenario, changes: Partial<EvaluableFlag>): Scenario => ({
  ...s,
  flag: { ...s.flag, ...changes },
});

// ---------------------------------------------------------------------------------------------------------

describe("evaluation vectors", () => {
  it("has a good number of vectors, each with a known reason", () => {
    assert.ok(vectors.evaluation.length >= 40, `only ${vectors.evaluation.length} evaluation vectors`);
    for (const v of vectors.evaluation) {
      assert.ok(REASONS.includes(v.expected.reason), v.description);
      assert.equal(v.expected.enabled, v.expected.reason !== "DISABLED" && v.expected.reason !== "DEFAULT");
    }
  });

  for (const v of vectors.evaluation) {
    it(v.description, () => {
      const flag: EvaluableFlag = {
        name: v.flag.name,
        status: v.flag.status,
        percentageActors: v.flag.percentageActors,
        percentageCalls: v.flag.percentageCalls,
        actors: new Set(v.flag.actors),
        segments: new Set(v.flag.segments),
      };
      // With no draw given the outcome must not depend on one: hand out the value that would flip it.
      const value = v.randomDraw ?? (v.expected.enabled ? BELOW_ONE : 0);
      const rnd = countingRandom(value);
      const result = evaluate(flag, v.actorIds, membership(v.segmentMembers), rnd.random);
      assert.deepEqual(plain(result), v.expected);
      assert.ok(rnd.calls <= 1, `random drawn ${rnd.calls} times`);
      if (v.flag.status !== "conditional") assert.equal(rnd.calls, 0, "drew for a non-conditional flag");
      // This implementation draws only when the outcome depends on the draw.
      if (v.randomDraw === null) assert.equal(rnd.calls, 0, "drew although the outcome cannot depend on it");
    });
  }
});

describe("evaluate", () => {
  it("agrees with an independent model of the rules, reason included", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const rnd = countingRandom(s.draw);
        assert.deepEqual(plain(evaluate(s.flag, s.actorIds, s.isMember, rnd.random)), model(s));
        assert.ok(rnd.calls <= 1, `random drawn ${rnd.calls} times`);
      }),
      { numRuns: 3000 },
    );
  });

  it("agrees with the model for conditional flags with targeting and rollouts", () => {
    fc.assert(
      fc.property(scenarioArb({ status: fc.constant("conditional") }), (s) => {
        assert.deepEqual(plain(evaluate(s.flag, s.actorIds, s.isMember, () => s.draw)), model(s));
      }),
      { numRuns: 3000 },
    );
  });

  it("never draws for enabled or disabled flags", () => {
    fc.assert(
      fc.property(scenarioArb({ status: fc.constantFrom("enabled", "disabled") }), (s) => {
        const rnd = countingRandom(s.draw);
        const result = evaluate(s.flag, s.actorIds, s.isMember, rnd.random);
        assert.equal(rnd.calls, 0);
        assert.deepEqual(
          plain(result),
          s.flag.status === "enabled" ? { enabled: true, reason: "STATIC" } : { enabled: false, reason: "DISABLED" },
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("draws at most once, exactly once when the outcome depends on the draw, never when an actor rule holds", () => {
    fc.assert(
      fc.property(scenarioArb({ status: fc.constant("conditional") }), (s) => {
        const rnd = countingRandom(s.draw);
        evaluate(s.flag, s.actorIds, s.isMember, rnd.random);
        assert.ok(rnd.calls <= 1, `random drawn ${rnd.calls} times`);
        const pc = s.flag.percentageCalls;
        if (modelActorRule(s) !== null || pc === 0) assert.equal(rnd.calls, 0);
        else if (pc < 100) assert.equal(rnd.calls, 1);
      }),
      { numRuns: 2000 },
    );
  });

  it("without actor ids applies only the call rollout", () => {
    fc.assert(
      fc.property(scenarioArb({ status: fc.constant("conditional") }), (s) => {
        const result = evaluate(s.flag, [], s.isMember, () => s.draw);
        const inCalls = s.draw < s.flag.percentageCalls / 100;
        assert.deepEqual(
          plain(result),
          inCalls ? { enabled: true, reason: "SPLIT" } : { enabled: false, reason: "DEFAULT" },
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("does not depend on the order of the actor ids", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const forward = plain(evaluate(s.flag, s.actorIds, s.isMember, () => s.draw));
        const backward = plain(evaluate(s.flag, [...s.actorIds].reverse(), s.isMember, () => s.draw));
        assert.deepEqual(backward, forward);
      }),
      { numRuns: 1000 },
    );
  });

  it("is deterministic for the same actors and draw", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const first = plain(evaluate(s.flag, s.actorIds, s.isMember, () => s.draw));
        for (let i = 0; i < 3; i++) {
          assert.deepEqual(plain(evaluate(s.flag, s.actorIds, s.isMember, () => s.draw)), first);
        }
      }),
    );
  });

  it("is monotonic: enabled at a percentage implies enabled at every higher allowed percentage", () => {
    fc.assert(
      fc.property(scenarioArb({ status: fc.constant("conditional") }), (s) => {
        // Raise the actor rollout with the call rollout fixed, then the call rollout with the actor rollout fixed.
        for (const field of ["percentageActors", "percentageCalls"] as const) {
          let seenOn = false;
          for (const p of ALLOWED_PERCENTAGES) {
            const on = evaluate(withFlag(s, { [field]: p }).flag, s.actorIds, s.isMember, () => s.draw).enabled;
            if (seenOn) assert.ok(on, `${field}: enabled at a lower percentage but not at ${p}%`);
            seenOn ||= on;
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("puts each allowed share of 20,000 uniform draws in the call rollout, within 5 sigma", () => {
    // The call count is Binomial(N, p): the share's standard deviation is sqrt(p * (1 - p) / N), about
    // 0.00306 for p = 0.25 and N = 20,000, so 5 sigma is +-0.0153. The draws come from a seeded PRNG, so
    // this is reproducible; comparing against p / 1000 or p / 10 instead of p / 100 lands far outside.
    let state = 0x9e3779b9;
    const uniform = () => {
      // mulberry32
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const N = 20_000;
    for (const p of ALLOWED_PERCENTAGES) {
      const flag: EvaluableFlag = {
        name: "calls",
        status: "conditional",
        percentageActors: 100,
        percentageCalls: p,
        actors: new Set(),
        segments: new Set(),
      };
      let on = 0;
      for (let i = 0; i < N; i++) if (evaluate(flag, [], () => false, uniform).enabled) on++;
      const q = p / 100;
      const bound = 5 * Math.sqrt((q * (1 - q)) / N);
      assert.ok(Math.abs(on / N - q) <= bound, `${p}%: share ${on / N}, allowed ${q} +- ${bound.toFixed(5)}`);
    }
  });
});

describe("isTargeted", () => {
  it("holds exactly when the actor is attached or is a member of an attached segment", () => {
    fc.assert(
      fc.property(scenarioArb(), actorId, (s, extra) => {
        for (const a of [...s.actorIds, extra]) assert.equal(isTargeted(s.flag, a, s.isMember), modelTargeted(s, a));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("isEnabledForActor", () => {
  it("is status enabled, or conditional and targeted or in the actor rollout (call rollout excluded)", () => {
    fc.assert(
      fc.property(scenarioArb(), actorId, (s, extra) => {
        for (const a of [...s.actorIds, extra]) {
          const expected =
            s.flag.status === "enabled" ||
            (s.flag.status === "conditional" &&
              (modelTargeted(s, a) || zlibBucket(s.flag.name, a) < s.flag.percentageActors * 1000));
          assert.equal(isEnabledForActor(s.flag, a, s.isMember), expected, JSON.stringify(a));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("matches evaluate for that single actor when the call rollout is 0%, and ignores the call rollout", () => {
    fc.assert(
      fc.property(scenarioArb(), actorId, (s, a) => {
        const actual = isEnabledForActor(s.flag, a, s.isMember);
        const noCalls = withFlag(s, { percentageCalls: 0 }).flag;
        assert.equal(actual, evaluate(noCalls, [a], s.isMember, () => 0).enabled);
        assert.equal(actual, isEnabledForActor(noCalls, a, s.isMember));
      }),
      { numRuns: 1000 },
    );
  });

  it("is what servedToActor (evaluateFlag for that actor alone, no call rollout) answers for a seed flag", () => {
    fc.assert(
      fc.property(scenarioArb(), actorId, (s, a) => {
        assert.equal(servedToActor(s.isMember)(s.flag, a), isEnabledForActor(s.flag, a, s.isMember));
      }),
      { numRuns: 1000 },
    );
  });

  it("gives the same actor the same answer every time", () => {
    fc.assert(
      fc.property(scenarioArb(), actorId, (s, a) => {
        const first = isEnabledForActor(s.flag, a, s.isMember);
        for (let i = 0; i < 3; i++) assert.equal(isEnabledForActor(s.flag, a, s.isMember), first);
      }),
    );
  });

  it("is monotonic in the actor rollout", () => {
    fc.assert(
      fc.property(scenarioArb({ status: fc.constant("conditional") }), actorId, (s, a) => {
        let seenOn = false;
        for (const p of ALLOWED_PERCENTAGES) {
          const on = isEnabledForActor(withFlag(s, { percentageActors: p }).flag, a, s.isMember);
          if (seenOn) assert.ok(on, `enabled at a lower percentage but not at ${p}%`);
          seenOn ||= on;
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe("isEnabledForSegment", () => {
  it("is status enabled, or conditional with the segment attached", () => {
    fc.assert(
      fc.property(scenarioArb(), fc.constantFrom(...SEGMENTS, "unknown"), (s, seg) => {
        const expected = s.flag.status === "enabled" || (s.flag.status === "conditional" && s.flag.segments.has(seg));
        assert.equal(isEnabledForSegment(s.flag, seg), expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("when it holds, every member of the segment is enabled, whatever the draw", () => {
    fc.assert(
      fc.property(scenarioArb(), fc.constantFrom(...SEGMENTS), (s, seg) => {
        fc.pre(isEnabledForSegment(s.flag, seg));
        for (const m of s.members[seg] ?? []) {
          assert.ok(isEnabledForActor(s.flag, m, s.isMember), `member ${JSON.stringify(m)}`);
          assert.ok(evaluate(s.flag, [m], s.isMember, () => BELOW_ONE).enabled, `member ${JSON.stringify(m)}`);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("is false for disabled flags and for conditional flags without the segment", () => {
    const base: EvaluableFlag = {
      name: "f",
      status: "conditional",
      percentageActors: 0,
      percentageCalls: 0,
      actors: new Set(),
      segments: new Set(["beta"]),
    };
    assert.equal(isEnabledForSegment(base, "beta"), true);
    assert.equal(isEnabledForSegment(base, "staff"), false);
    assert.equal(isEnabledForSegment({ ...base, status: "disabled" }, "beta"), false);
    assert.equal(isEnabledForSegment({ ...base, status: "enabled", segments: new Set() }, "staff"), true);
  });
});

describe("explain agrees with evaluate", () => {
  it("names the reason evaluate answers: for every draw when enabled, and for every draw outside the call rollout when not", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const why = explain(s.flag, s.actorIds, s.isMember);
        const evaluated = evaluate(s.flag, s.actorIds, s.isMember, () => s.draw);
        if (why.enabled) {
          assert.deepEqual(plain(evaluated), { enabled: true, reason: why.reason });
        } else if (inCallRollout(why.callRolloutPercentage, s.draw)) {
          // Only the call rollout, which explain leaves out, can turn it on.
          assert.deepEqual(plain(evaluated), { enabled: true, reason: "SPLIT" });
        } else {
          assert.deepEqual(plain(evaluated), { enabled: false, reason: why.reason });
        }
        // The highest draw is outside every call rollout but 100%: then evaluate's answer is explain's.
        if (why.callRolloutPercentage < 100) {
          assert.deepEqual(plain(evaluate(s.flag, s.actorIds, s.isMember, () => BELOW_ONE)), {
            enabled: why.enabled,
            reason: why.reason,
          });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("the rule it names holds for the actor and segment it names, and no earlier rule held", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const why = explain(s.flag, s.actorIds, s.isMember);
        assert.equal(why.callRolloutPercentage, why.rule === "none" ? s.flag.percentageCalls : 0);
        const targeted = s.actorIds.find((id) => isTargeted(s.flag, id, s.isMember));
        switch (why.rule) {
          case "status":
            assert.notEqual(s.flag.status, "conditional");
            break;
          case "actor":
            assert.equal(why.actorId, targeted);
            assert.ok(s.flag.actors.has(why.actorId as string));
            break;
          case "segment":
            assert.equal(why.actorId, targeted);
            assert.ok(s.flag.segments.has(why.segmentId as string));
            assert.ok(s.isMember(why.segmentId as string, why.actorId as string));
            break;
          case "actor_rollout":
            assert.equal(targeted, undefined);
            assert.ok(why.actors.find((a) => a.actorId === why.actorId)?.inRollout);
            break;
          case "none":
            assert.equal(targeted, undefined);
            assert.ok(why.actors.every((a) => !a.inRollout));
            break;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
