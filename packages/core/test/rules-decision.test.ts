import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  actorBucket,
  type Condition,
  evaluate,
  evaluateFlag,
  explain,
  failedResolution,
  type FlagEvaluation,
  inActorRollout,
  inFlagRollout,
  ProjectState,
  RESOLUTION_ERROR_CODES,
  resolutionOf,
  rolloutThreshold,
  type Rule,
  type TargetedFlag,
} from "../src/index.js";
import { flag, resolver, stringFlag } from "./rules-helpers.js";

// One engine, one result, one mapping (issue 33): evaluateFlag's decision in detail (what explain reads)
// and resolutionOf, the one mapping of its answer to what the check, OFREP, explain, the local evaluator
// and the OpenFeature providers answer.

const detail = { detail: true } as const;
const inCountry = (...countries: string[]): Condition => ({ attribute: "country", operator: "in", values: countries });
const serve = (id: string, conditions: Condition[], variant: string, description?: string): Rule => ({
  id,
  conditions,
  serve: { variant },
  ...(description === undefined ? {} : { description }),
});
/** The answer's own fields, as evaluateFlag gives them without detail. */
const answerOf = (e: FlagEvaluation) => {
  const { variant, value, reason, ruleId, prerequisite, errorCode, errorMessage } = e;
  return Object.fromEntries(
    Object.entries({ variant, value, reason, ruleId, prerequisite, errorCode, errorMessage }).filter(
      ([, v]) => v !== undefined,
    ),
  );
};

describe("evaluateFlag's decision in detail", () => {
  const project = resolver({
    members: { beta: ["bob", "carol"], staff: ["carol"] },
    segmentConditions: { eu: [inCountry("FR", "DE")] },
  });

  it("the status decides a disabled or an enabled flag", () => {
    for (const [status, reason] of [
      ["disabled", "DISABLED"],
      ["enabled", "STATIC"],
    ] as const) {
      const why = evaluateFlag(
        stringFlag({ status, actors: new Set(["carol"]) }),
        { actorIds: ["carol"] },
        project,
        detail,
      );
      assert.deepEqual(
        [why.reason, why.rule, why.actorId, why.segmentId, why.ruleIndex, why.callRolloutPercentage],
        [reason, "status", null, null, null, 0],
      );
    }
  });

  it("a failed prerequisite is named, and nothing after it decided", () => {
    const gate = flag({ name: "gate", status: "disabled" });
    const f = stringFlag({ actors: new Set(["carol"]), prerequisites: [{ flag: "gate", variants: ["on"] }] });
    const why = evaluateFlag(f, { actorIds: ["carol"] }, resolver({ flags: [gate] }), detail);
    assert.deepEqual(
      [why.reason, why.rule, why.prerequisite, why.actorId, why.variant],
      ["PREREQUISITE_FAILED", "prerequisite", "gate", null, "red"],
    );
  });

  it("names the first actor attached or listed in an attached segment, in the actors' order", () => {
    const f = stringFlag({ actors: new Set(["dave"]), segments: new Set(["staff", "beta"]) });
    // bob is listed in beta; dave, after him, is attached: bob's segment is named.
    let why = evaluateFlag(f, { actorIds: ["x", "bob", "dave"] }, project, detail);
    assert.deepEqual([why.reason, why.rule, why.actorId, why.segmentId], ["TARGETING_MATCH", "segment", "bob", "beta"]);
    // carol is in both: the flag's first attached segment (staff) is named.
    why = evaluateFlag(f, { actorIds: ["carol"] }, project, detail);
    assert.deepEqual([why.rule, why.actorId, why.segmentId], ["segment", "carol", "staff"]);
    why = evaluateFlag(f, { actorIds: ["dave", "bob"] }, project, detail);
    assert.deepEqual([why.rule, why.actorId, why.segmentId], ["actor", "dave", null]);
  });

  it("a segment whose conditions hold is named without an actor", () => {
    const f = stringFlag({ segments: new Set(["beta", "eu"]) });
    const why = evaluateFlag(f, { actorIds: ["x"], attributes: { country: "DE" } }, project, detail);
    assert.deepEqual([why.reason, why.rule, why.actorId, why.segmentId], ["TARGETING_MATCH", "segment", null, "eu"]);
  });

  it("a rule is named by its index and id", () => {
    const f = stringFlag({
      rules: [serve("gb", [inCountry("GB")], "blue"), serve("fr", [inCountry("FR")], "red", "France")],
    });
    const why = evaluateFlag(f, { attributes: { country: "FR" } }, project, detail);
    assert.deepEqual(
      [why.reason, why.rule, why.ruleIndex, why.ruleId, why.variant, why.actorId],
      ["TARGETING_MATCH", "rule", 1, "fr", "red", null],
    );
  });

  it("the actor rollout names its first actor in it; nothing else: none, with the call rollout's chance", () => {
    const f = stringFlag({ percentageActors: 50, percentageCalls: 25 });
    const actors = Array.from({ length: 20 }, (_, i) => `user-${i}`);
    const first = actors.find((a) => inActorRollout("checkout", a, 50));
    let why = evaluateFlag(f, { actorIds: actors }, project, detail);
    assert.deepEqual(
      [why.reason, why.rule, why.actorId, why.callRolloutPercentage],
      ["SPLIT", "actor_rollout", first, 0],
    );
    const outside = actors.filter((a) => !inActorRollout("checkout", a, 50));
    why = evaluateFlag(f, { actorIds: outside }, project, detail);
    assert.deepEqual(
      [why.reason, why.rule, why.actorId, why.variant, why.callRolloutPercentage],
      ["DEFAULT", "none", null, "red", 25],
    );
  });

  it("draws nothing for the flag's own call rollout (the same answer every time), but its prerequisites' as always", () => {
    const counting = resolver({ random: 0 });
    const why = evaluateFlag(stringFlag({ percentageCalls: 100 }), {}, counting, detail);
    assert.deepEqual([why.reason, why.rule, why.callRolloutPercentage], ["DEFAULT", "none", 100]);
    assert.equal(counting.calls.random, 0);
    const parent = flag({ name: "parent", percentageCalls: 50 });
    const child = stringFlag({ status: "enabled", prerequisites: [{ flag: "parent", variants: ["on"] }] });
    const drawing = resolver({ flags: [parent], random: 0.1 });
    assert.equal(evaluateFlag(child, {}, drawing, detail).reason, "STATIC");
    assert.equal(drawing.calls.random, 1);
  });

  it("an error decides nothing", () => {
    const f = stringFlag({ rules: [serve("r", [], "nope")] });
    const why = evaluateFlag(f, { actorIds: ["a"] }, project, detail);
    assert.deepEqual([why.reason, why.errorCode, why.rule, why.variant], ["ERROR", "PARSE_ERROR", "none", null]);
  });

  it("tells how each actor stands: attached, listed segments in the flag's order, bucket and rollout", () => {
    const state = new ProjectState();
    state.putFlag({
      id: "1",
      name: "checkout",
      status: "conditional",
      percentageActors: 25,
      percentageCalls: 0,
      actors: new Set(["carol"]),
      segments: new Set(["staff", "beta"]),
    });
    const f = state.flag("checkout") as TargetedFlag;
    const why = evaluateFlag(f, { actorIds: ["carol", "bob", "zoe"] }, project, detail);
    assert.equal(why.threshold, 25_000);
    assert.deepEqual(
      why.actors,
      ["carol", "bob", "zoe"].map((actorId) => ({
        actorId,
        attached: actorId === "carol",
        segments: actorId === "carol" ? ["staff", "beta"] : actorId === "bob" ? ["beta"] : [],
        bucket: actorBucket("checkout", actorId),
        inRollout: actorBucket("checkout", actorId) < 25_000,
      })),
    );
  });

  it("answers what evaluateFlag answers without detail, outside the call rollout (property)", () => {
    const SEGMENTS = ["beta", "staff", "eu"];
    const pool = ["alice", "bob", "carol", "dave"];
    const arb = fc.record({
      status: fc.constantFrom("enabled", "disabled", "conditional", "conditional"),
      percentageActors: fc.constantFrom(0, 10, 50, 100),
      percentageCalls: fc.constantFrom(0, 50, 100),
      actors: fc.subarray(pool),
      segments: fc.shuffledSubarray(SEGMENTS),
      rules: fc.array(fc.subarray(["FR", "DE", "GB"], { minLength: 1 }), { maxLength: 3 }),
      actorIds: fc.array(fc.constantFrom(...pool, "x"), { maxLength: 4 }),
      country: fc.constantFrom("FR", "DE", "GB", "US"),
    });
    fc.assert(
      fc.property(arb, (s) => {
        const f = stringFlag({
          status: s.status as TargetedFlag["status"],
          percentageActors: s.percentageActors,
          percentageCalls: s.percentageCalls,
          actors: new Set(s.actors),
          segments: new Set(s.segments),
          rules: s.rules.map((countries, i) => serve(`r${i}`, [inCountry(...countries)], i % 2 ? "blue" : "green")),
        });
        const context = { actorIds: s.actorIds, attributes: { country: s.country } };
        const never = resolver({ members: { beta: ["bob"], staff: ["carol"] }, random: 0.999_999 });
        never.segmentConditions = (id) => (id === "eu" ? [inCountry("FR", "DE")] : undefined);
        const why = evaluateFlag(f, context, never, detail);
        const plain = evaluateFlag(f, context, never);
        // Outside the call rollout (the draw is never in one below 100 %), the same answer, mapped alike.
        if (s.percentageCalls < 100) {
          assert.deepEqual(answerOf(why), answerOf(plain));
          assert.equal(resolutionOf(f, why), resolutionOf(f, plain));
        }
        // What decided holds.
        if (why.rule === "actor") assert.ok(f.actors.has(why.actorId as string));
        if (why.rule === "segment" && why.actorId !== null) {
          assert.ok(never.isMember(why.segmentId as string, why.actorId));
        }
        if (why.rule === "actor_rollout") assert.ok(inFlagRollout(f, why.actorId as string));
        if (why.rule === "rule") assert.equal(f.rules?.[why.ruleIndex as number]?.id, why.ruleId);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("resolutionOf: the one mapping to OpenFeature's reasons and error codes", () => {
  it("answers enabled, the reason, the variant and its value, the rule or the prerequisite", () => {
    const f = stringFlag({
      rules: [serve("off-again", [inCountry("GB")], "red"), serve("blue", [inCountry("FR")], "blue")],
    });
    const project = resolver();
    const answer = (country: string) => resolutionOf(f, evaluateFlag(f, { attributes: { country } }, project));
    assert.deepEqual(answer("FR"), {
      enabled: true,
      reason: "TARGETING_MATCH",
      variant: "blue",
      value: "#00f",
      ruleId: "blue",
    });
    // A rule serving the offVariant is not "on".
    assert.deepEqual(answer("GB"), {
      enabled: false,
      reason: "TARGETING_MATCH",
      variant: "red",
      value: "#f00",
      ruleId: "off-again",
    });
    assert.deepEqual(answer("US"), { enabled: false, reason: "DEFAULT", variant: "red", value: "#f00" });
    const boolean = flag({ status: "enabled" });
    assert.deepEqual(resolutionOf(boolean, evaluateFlag(boolean, {}, project)), {
      enabled: true,
      reason: "STATIC",
      variant: "on",
      value: true,
    });
    const gated = stringFlag({ status: "enabled", prerequisites: [{ flag: "missing", variants: ["on"] }] });
    assert.deepEqual(resolutionOf(gated, evaluateFlag(gated, {}, project)), {
      enabled: false,
      reason: "PREREQUISITE_FAILED",
      variant: "red",
      value: "#f00",
      prerequisite: "missing",
    });
  });

  it("an evaluation in error: enabled false, variant and value null, the engine's error code and message", () => {
    const f = stringFlag({ rules: [serve("r", [], "nope")] });
    const result = evaluateFlag(f, {}, resolver());
    assert.deepEqual(resolutionOf(f, result), {
      enabled: false,
      reason: "ERROR",
      variant: null,
      value: null,
      errorCode: "PARSE_ERROR",
      errorMessage: result.errorMessage,
    });
    const throwing = evaluateFlag(flag({ segments: new Set(["s"]) }), { actorIds: ["a"] }, () => {
      throw new Error("down");
    });
    assert.deepEqual(resolutionOf(f, throwing), {
      enabled: false,
      reason: "ERROR",
      variant: null,
      value: null,
      errorCode: "GENERAL",
      errorMessage: "down",
    });
  });

  it("maps an engine's answer to one shared frozen object, a decision in detail to its answer's", () => {
    const f = stringFlag({ status: "enabled" });
    const a = resolutionOf(f, evaluateFlag(f, {}, resolver()));
    assert.equal(resolutionOf(f, evaluateFlag(f, {}, resolver())), a);
    assert.ok(Object.isFrozen(a));
    assert.equal(resolutionOf(f, evaluateFlag(f, {}, resolver(), detail)), a);
  });

  it("rides on the answer unseen: JSON, spreads and keys show the answer's own fields alone", () => {
    const f = stringFlag({ status: "enabled" });
    const result = evaluateFlag(f, {}, resolver());
    assert.equal(JSON.stringify(result), '{"variant":"green","value":"#0f0","reason":"STATIC"}');
    assert.deepEqual(Object.keys({ ...result }), ["variant", "value", "reason"]);
    assert.deepEqual(Object.keys(result), ["variant", "value", "reason"]);
  });

  it("maps an answer it did not make the same way, against the flag's offVariant", () => {
    const f = stringFlag();
    assert.deepEqual(resolutionOf(f, { variant: "green", value: "#0f0", reason: "SPLIT", ruleId: "x" }), {
      enabled: true,
      reason: "SPLIT",
      variant: "green",
      value: "#0f0",
      ruleId: "x",
    });
    assert.equal(resolutionOf(f, { variant: "red", value: "#f00", reason: "DEFAULT" }).enabled, false);
    assert.equal(resolutionOf(flag(), { variant: "off", value: false, reason: "DEFAULT" }).enabled, false);
    assert.deepEqual(resolutionOf(f, { variant: null, value: null, reason: "ERROR" }), {
      enabled: false,
      reason: "ERROR",
      variant: null,
      value: null,
      errorCode: "GENERAL",
      errorMessage: "the flag could not be evaluated",
    });
  });

  it("failedResolution: an evaluation that could not be made, in the same shape, with an OpenFeature code", () => {
    assert.deepEqual(RESOLUTION_ERROR_CODES, [
      "FLAG_NOT_FOUND",
      "PROVIDER_NOT_READY",
      "INVALID_CONTEXT",
      "PARSE_ERROR",
      "GENERAL",
    ]);
    assert.deepEqual(failedResolution("FLAG_NOT_FOUND", "no such flag"), {
      enabled: false,
      reason: "ERROR",
      variant: null,
      value: null,
      errorCode: "FLAG_NOT_FOUND",
      errorMessage: "no such flag",
    });
  });
});

describe("the seed's evaluate and explain, thin wrappers over evaluateFlag", () => {
  it("throw what the membership function throws, as they always did, where evaluateFlag answers ERROR", () => {
    const broken = new Error("membership is down");
    const isMember = () => {
      throw broken;
    };
    const f = flag({ segments: new Set(["beta"]) });
    assert.equal(evaluateFlag(f, { actorIds: ["a"] }, isMember).reason, "ERROR");
    assert.throws(
      () => evaluate(f, ["a"], isMember, Math.random),
      (error) => error === broken,
    );
    assert.throws(
      () => explain(f, ["a"], isMember),
      (error) => error === broken,
    );
    // And read a flag's seed fields alone: a typed flag with rules answers by its status, actors and rollouts.
    const typed = stringFlag({ actors: new Set(["a"]), rules: [serve("r", [], "blue")] });
    assert.deepEqual(
      evaluate(typed, ["a"], () => false, Math.random),
      { enabled: true, reason: "TARGETING_MATCH" },
    );
    assert.deepEqual(
      evaluate(typed, ["b"], () => false, Math.random),
      { enabled: false, reason: "DEFAULT" },
    );
    assert.equal(explain(typed, ["a"], () => false).rule, "actor");
  });
});

describe("the actor rollout, written once", () => {
  it("inFlagRollout reads a flag's bucket cache and agrees with inActorRollout and rolloutThreshold", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 12 }),
        fc.string({ maxLength: 12 }),
        fc.constantFrom(-5, 0, 1, 10, 50, 99.999, 100, 150),
        (name, actorId, percentage) => {
          let asked = 0;
          const cached = {
            name,
            percentageActors: percentage,
            bucketOf: (id: string) => {
              asked++;
              return actorBucket(name, id);
            },
          };
          const expected = actorBucket(name, actorId) < rolloutThreshold(percentage);
          assert.equal(inActorRollout(name, actorId, percentage), expected);
          assert.equal(inFlagRollout(cached, actorId), expected);
          assert.equal(asked, percentage > 0 && percentage < 100 ? 1 : 0, "the bucket only when it decides");
        },
      ),
      { numRuns: 500 },
    );
    assert.deepEqual(
      [rolloutThreshold(-1), rolloutThreshold(0), rolloutThreshold(25), rolloutThreshold(250)],
      [0, 0, 25_000, 100_000],
    );
  });
});
