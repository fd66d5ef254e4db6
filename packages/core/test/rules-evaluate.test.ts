import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Condition,
  evaluateFlag,
  ProjectState,
  type Rule,
  type TargetedFlag,
  type TargetingResolver,
} from "../src/index.js";
import { flag, plain, resolver, stringFlag } from "./rules-helpers.js";

// evaluateFlag: the order of evaluation, the reasons, typed values, segments with conditions,
// prerequisites, errors, and when a flag's compiled form is rebuilt.

const inCountry = (...countries: string[]): Condition => ({ attribute: "country", operator: "in", values: countries });
const serve = (id: string, conditions: Condition[], variant: string): Rule => ({ id, conditions, serve: { variant } });

describe("the order of evaluation", () => {
  const project = resolver({
    members: { beta: ["bob"] },
    segmentConditions: { eu: [inCountry("FR", "DE")] },
  });
  const f = stringFlag({
    actors: new Set(["carol"]),
    segments: new Set(["beta", "eu"]),
    percentageActors: 0,
    rules: [serve("gb", [inCountry("GB")], "blue"), serve("any", [], "red")],
  });

  it("disabled serves offVariant, whatever else holds (DISABLED)", () => {
    const result = evaluateFlag({ ...f, status: "disabled" }, { actorIds: ["carol"] }, project);
    assert.deepEqual(plain(result), { variant: "red", value: "#f00", reason: "DISABLED" });
  });

  it("enabled serves onVariant (STATIC), rules unread", () => {
    const result = evaluateFlag({ ...f, status: "enabled" }, { attributes: { country: "GB" } }, project);
    assert.deepEqual(plain(result), { variant: "green", value: "#0f0", reason: "STATIC" });
  });

  it("conditional: an attached actor first, then an attached segment (listed or by conditions), serving onVariant", () => {
    assert.deepEqual(plain(evaluateFlag(f, { actorIds: ["carol"], attributes: { country: "GB" } }, project)), {
      variant: "green",
      value: "#0f0",
      reason: "TARGETING_MATCH",
    });
    assert.equal(evaluateFlag(f, { actorIds: ["bob"], attributes: { country: "GB" } }, project).variant, "green");
    assert.equal(evaluateFlag(f, { attributes: { country: "DE" } }, project).variant, "green");
  });

  it("then the rules in order, the first that holds deciding (TARGETING_MATCH with its id)", () => {
    assert.deepEqual(plain(evaluateFlag(f, { actorIds: ["x"], attributes: { country: "GB" } }, project)), {
      variant: "blue",
      value: "#00f",
      reason: "TARGETING_MATCH",
      ruleId: "gb",
    });
    // A rule with no conditions always holds.
    assert.equal(evaluateFlag(f, { actorIds: ["x"], attributes: { country: "US" } }, project).ruleId, "any");
  });

  it("then the actor rollout and the call rollout (SPLIT), then offVariant (DEFAULT)", () => {
    const noRules = { ...f, rules: [] };
    const everyone = evaluateFlag({ ...noRules, percentageActors: 100 }, { actorIds: ["x"] }, project);
    assert.deepEqual(plain(everyone), { variant: "green", value: "#0f0", reason: "SPLIT" });
    const calls = evaluateFlag({ ...noRules, percentageCalls: 50 }, {}, resolver({ random: 0.2 }));
    assert.deepEqual(plain(calls), { variant: "green", value: "#0f0", reason: "SPLIT" });
    const none = evaluateFlag({ ...noRules, percentageCalls: 50 }, {}, resolver({ random: 0.7 }));
    assert.deepEqual(plain(none), { variant: "red", value: "#f00", reason: "DEFAULT" });
  });

  it("a rule that holds comes before the rollouts", () => {
    const result = evaluateFlag({ ...f, percentageActors: 100, percentageCalls: 100 }, { actorIds: ["x"] }, project);
    assert.equal(result.ruleId, "any");
  });

  it("draws at most once, and only when the call rollout decides", () => {
    const counting = resolver({ random: 0.1 });
    evaluateFlag({ ...f, rules: [] }, { actorIds: ["x"] }, counting);
    assert.equal(counting.calls.random, 0, "no call rollout");
    evaluateFlag({ ...f, rules: [], percentageCalls: 10 }, { actorIds: ["carol"] }, counting);
    assert.equal(counting.calls.random, 0, "decided before it");
    evaluateFlag({ ...f, rules: [], percentageCalls: 10 }, { actorIds: ["x"] }, counting);
    assert.equal(counting.calls.random, 1);
  });

  it("with no resolver clock or random, uses Date.now and Math.random", () => {
    const bare: TargetingResolver = { isMember: () => false };
    assert.equal(evaluateFlag(flag({ percentageCalls: 100 }), {}, bare).reason, "SPLIT");
    assert.equal(evaluateFlag(flag(), {}, () => false).reason, "DEFAULT", "a bare membership function is a resolver");
  });
});

describe("typed values", () => {
  it("serves booleans (on/off), strings, numbers and objects, the very values declared", () => {
    const config = { theme: "dark", limits: [1, 2] };
    const typed: [TargetedFlag, unknown][] = [
      [flag({ status: "enabled" }), true],
      [flag({ status: "disabled" }), false],
      [stringFlag({ status: "enabled" }), "#0f0"],
      [
        flag({
          status: "enabled",
          type: "number",
          variants: [
            { key: "low", value: 0.5 },
            { key: "high", value: 10 },
          ],
          onVariant: "high",
          offVariant: "low",
        }),
        10,
      ],
      [
        flag({
          status: "enabled",
          type: "object",
          variants: [
            { key: "a", value: config },
            { key: "b", value: [] },
          ],
          onVariant: "a",
          offVariant: "b",
        }),
        config,
      ],
    ];
    for (const [f, value] of typed) {
      const result = evaluateFlag(f, {}, resolver());
      assert.equal(result.value, value, f.type);
    }
  });

  it("a boolean flag's variants may be written out, and its on/off variants named", () => {
    const f = flag({
      status: "enabled",
      variants: [
        { key: "off", value: false },
        { key: "on", value: true, description: "shown" },
      ],
      onVariant: "on",
      offVariant: "off",
    });
    assert.deepEqual(plain(evaluateFlag(f, {}, resolver())), { variant: "on", value: true, reason: "STATIC" });
  });
});

describe("splits", () => {
  it("serve a weight's variant (SPLIT, with the rule's id) bucketed on the first actor id by default", () => {
    const f = stringFlag({
      rules: [{ id: "ab", conditions: [], serve: { split: { weights: [{ variant: "blue", weight: 100 }] } } }],
    });
    assert.deepEqual(plain(evaluateFlag(f, { actorIds: ["x"] }, resolver())), {
      variant: "blue",
      value: "#00f",
      reason: "SPLIT",
      ruleId: "ab",
    });
  });

  it("with nothing to bucket on, the rule does not decide and evaluation goes on", () => {
    const rules: Rule[] = [
      { id: "ab", conditions: [], serve: { split: { weights: [{ variant: "blue", weight: 100 }] } } },
      {
        id: "by-team",
        conditions: [],
        serve: { split: { bucketBy: "team", weights: [{ variant: "red", weight: 100 }] } },
      },
      serve("last", [], "green"),
    ];
    const f = stringFlag({ rules });
    assert.equal(evaluateFlag(f, { attributes: { team: "t1" } }, resolver()).ruleId, "by-team", "no actor id");
    assert.equal(evaluateFlag(f, { attributes: { team: 7 } }, resolver()).ruleId, "by-team", "an integer buckets");
    for (const team of [undefined, null, 1.5, true, ["t1"], Number.MAX_SAFE_INTEGER + 2]) {
      assert.equal(evaluateFlag(f, { attributes: { team } as never }, resolver()).ruleId, "last", String(team));
    }
  });
});

describe("segments with conditions", () => {
  const f = flag({ segments: new Set(["pro-eu"]) });

  it("a context is in an attached segment when an actor is listed or all its conditions hold", () => {
    const project = resolver({
      members: { "pro-eu": ["listed"] },
      segmentConditions: { "pro-eu": [inCountry("FR"), { attribute: "plan", operator: "in", values: ["pro"] }] },
    });
    assert.equal(evaluateFlag(f, { actorIds: ["listed"] }, project).reason, "TARGETING_MATCH");
    assert.equal(evaluateFlag(f, { attributes: { country: "FR", plan: "pro" } }, project).reason, "TARGETING_MATCH");
    assert.equal(evaluateFlag(f, { attributes: { country: "FR", plan: "free" } }, project).reason, "DEFAULT");
  });

  it("a segment with no conditions, or an empty list, holds its listed members only", () => {
    for (const segmentConditions of [{}, { "pro-eu": [] }] as Record<string, Condition[]>[]) {
      assert.equal(evaluateFlag(f, { actorIds: ["x"] }, resolver({ segmentConditions })).reason, "DEFAULT");
    }
  });

  it("segment conditions the validator refuses answer ERROR / PARSE_ERROR naming the segment", () => {
    const project = resolver({
      segmentConditions: { "pro-eu": [{ operator: "in_segment", values: ["other"] }] },
    });
    const result = evaluateFlag(f, {}, project);
    assert.equal(result.reason, "ERROR");
    assert.equal(result.errorCode, "PARSE_ERROR");
    assert.match(result.errorMessage ?? "", /segment pro-eu: conditions\[0\]/);
    assert.equal(result.variant, null);
    assert.equal(result.value, null);
  });
});

describe("prerequisites", () => {
  const base = (name: string, extra: Partial<TargetedFlag> = {}) => flag({ name, status: "enabled", ...extra });

  it("the flag is evaluated only when every prerequisite serves one of its listed variants", () => {
    const billing = base("billing");
    const theme = stringFlag({ name: "theme", status: "enabled" });
    const f = base("checkout", {
      prerequisites: [
        { flag: "billing", variants: ["on"] },
        { flag: "theme", variants: ["green", "blue"] },
      ],
    });
    const project = resolver({ flags: [billing, theme] });
    assert.equal(evaluateFlag(f, {}, project).reason, "STATIC");
    assert.deepEqual(project.calls.flag, ["billing", "theme"]);
  });

  it("otherwise it serves offVariant with PREREQUISITE_FAILED, naming the prerequisite", () => {
    const f = stringFlag({
      name: "checkout",
      status: "enabled",
      prerequisites: [{ flag: "billing", variants: ["on"] }],
    });
    for (const billing of [base("billing", { status: "disabled" }), base("billing", { status: "conditional" })]) {
      assert.deepEqual(plain(evaluateFlag(f, {}, resolver({ flags: [billing] }))), {
        variant: "red",
        value: "#f00",
        reason: "PREREQUISITE_FAILED",
        prerequisite: "billing",
      });
    }
  });

  it("a missing prerequisite flag fails it", () => {
    const f = base("checkout", { prerequisites: [{ flag: "gone", variants: ["on"] }] });
    assert.equal(evaluateFlag(f, {}, resolver()).reason, "PREREQUISITE_FAILED");
    assert.equal(evaluateFlag(f, {}, { isMember: () => false }).reason, "PREREQUISITE_FAILED", "no flag lookup");
  });

  it("are evaluated for the same context, down a chain", () => {
    const a = base("a", { prerequisites: [{ flag: "b", variants: ["on"] }] });
    const b = flag({
      name: "b",
      rules: [serve("fr", [inCountry("FR")], "on")],
      prerequisites: [{ flag: "c", variants: ["on"] }],
    });
    const c = flag({ name: "c", actors: new Set(["alice"]) });
    const project = resolver({ flags: [a, b, c] });
    assert.equal(evaluateFlag(a, { actorIds: ["alice"], attributes: { country: "FR" } }, project).reason, "STATIC");
    assert.equal(
      evaluateFlag(a, { actorIds: ["bob"], attributes: { country: "FR" } }, project).reason,
      "PREREQUISITE_FAILED",
    );
    assert.equal(
      evaluateFlag(a, { actorIds: ["alice"], attributes: { country: "DE" } }, project).reason,
      "PREREQUISITE_FAILED",
    );
  });

  it("a disabled flag does not evaluate its prerequisites", () => {
    const project = resolver({ flags: [base("billing")] });
    const f = base("checkout", { status: "disabled", prerequisites: [{ flag: "billing", variants: ["on"] }] });
    assert.equal(evaluateFlag(f, {}, project).reason, "DISABLED");
    assert.deepEqual(project.calls.flag, []);
  });

  it("prerequisites come before attached actors and rules", () => {
    const f = base("checkout", {
      status: "conditional",
      actors: new Set(["carol"]),
      prerequisites: [{ flag: "billing", variants: ["on"] }],
    });
    const result = evaluateFlag(
      f,
      { actorIds: ["carol"] },
      resolver({ flags: [base("billing", { status: "disabled" })] }),
    );
    assert.equal(result.reason, "PREREQUISITE_FAILED");
  });

  it("a chain of 5 evaluates; a 6th link or a cycle (which the validator refuses) answers ERROR, never loops", () => {
    const chain = (n: number) =>
      Array.from({ length: n + 1 }, (_, i) =>
        base(`f${i}`, i < n ? { prerequisites: [{ flag: `f${i + 1}`, variants: ["on"] }] } : {}),
      );
    const five = chain(5);
    assert.equal(evaluateFlag(five[0] as TargetedFlag, {}, resolver({ flags: five })).reason, "STATIC");
    const six = chain(6);
    const deep = evaluateFlag(six[0] as TargetedFlag, {}, resolver({ flags: six }));
    assert.equal(deep.reason, "ERROR");
    assert.equal(deep.errorCode, "PARSE_ERROR");
    const x = base("x", { prerequisites: [{ flag: "y", variants: ["on"] }] });
    const y = base("y", { prerequisites: [{ flag: "x", variants: ["on"] }] });
    assert.equal(evaluateFlag(x, {}, resolver({ flags: [x, y] })).errorCode, "PARSE_ERROR");
  });

  it("an error in a prerequisite is the flag's error", () => {
    const broken = stringFlag({ name: "broken", offVariant: "nope" });
    const f = base("checkout", { prerequisites: [{ flag: "broken", variants: ["red"] }] });
    const result = evaluateFlag(f, {}, resolver({ flags: [broken] }));
    assert.equal(result.reason, "ERROR");
    assert.match(result.errorMessage ?? "", /flag broken: offVariant/);
  });

  it("works with ProjectState as the resolver (its flags and members)", () => {
    const state = new ProjectState();
    state.putFlag({
      id: "1",
      name: "billing",
      status: "conditional",
      percentageActors: 0,
      percentageCalls: 0,
      actors: new Set(),
      segments: new Set(["beta"]),
    });
    state.addMember("beta", "alice");
    const f = base("checkout", { prerequisites: [{ flag: "billing", variants: ["on"] }] });
    assert.equal(evaluateFlag(f, { actorIds: ["alice"] }, state).reason, "STATIC");
    assert.equal(evaluateFlag(f, { actorIds: ["bob"] }, state).reason, "PREREQUISITE_FAILED");
  });
});

describe("errors", () => {
  it("a configuration the validator refuses answers ERROR / PARSE_ERROR with the validator's message, every time", () => {
    const broken: TargetedFlag[] = [
      stringFlag({ onVariant: "purple" }),
      stringFlag({ rules: [serve("r", [], "purple")] }),
      flag({ rules: [serve("r", [{ attribute: "e", operator: "matches", values: ["(a"] }], "on")] }),
      flag({ rules: [serve("r", [{ attribute: "n", operator: "gt", values: ["1"] }], "on")] }),
      flag({ rules: [serve("r", [{ attribute: "n", operator: "shiny" as never, values: [] }], "on")] }),
      flag({ type: "string" }),
      flag({ type: "date" as never }),
    ];
    for (const f of broken) {
      for (const status of ["enabled", "disabled", "conditional"] as const) {
        const result = evaluateFlag({ ...f, status }, {}, resolver());
        assert.equal(result.reason, "ERROR", JSON.stringify(f.rules ?? f.type));
        assert.equal(result.errorCode, "PARSE_ERROR");
        assert.match(result.errorMessage ?? "", /^flag checkout: /);
      }
    }
  });

  it("a resolver that throws answers ERROR / GENERAL; evaluateFlag itself never throws", () => {
    const throwing: TargetingResolver = {
      isMember: () => {
        throw new Error("membership store down");
      },
    };
    const result = evaluateFlag(flag({ segments: new Set(["s"]) }), { actorIds: ["a"] }, throwing);
    assert.deepEqual(plain(result), {
      variant: null,
      value: null,
      reason: "ERROR",
      errorCode: "GENERAL",
      errorMessage: "membership store down",
    });
    const clock: TargetingResolver = {
      isMember: () => false,
      now: () => {
        throw "no clock";
      },
    };
    const f = flag({
      rules: [serve("r", [{ attribute: "$now", operator: "after", values: ["2020-01-01T00:00:00Z"] }], "on")],
    });
    assert.equal(evaluateFlag(f, {}, clock).errorMessage, "no clock");
  });
});

describe("the compiled form", () => {
  it("is rebuilt when a field it was built from is replaced, and reads the seed's fields live", () => {
    const f: { -readonly [K in keyof TargetedFlag]: TargetedFlag[K] } = stringFlag({
      rules: [serve("gb", [inCountry("GB")], "blue")],
    });
    const gb = { attributes: { country: "GB" } };
    assert.equal(evaluateFlag(f, gb, resolver()).variant, "blue");
    f.rules = [serve("gb", [inCountry("GB")], "green")];
    assert.equal(evaluateFlag(f, gb, resolver()).variant, "green");
    f.offVariant = "blue";
    assert.equal(evaluateFlag(f, {}, resolver()).variant, "blue");
    f.variants = [
      { key: "red", value: "rouge" },
      { key: "green", value: "vert" },
      { key: "blue", value: "bleu" },
    ];
    assert.equal(evaluateFlag(f, gb, resolver()).value, "vert");
    f.status = "disabled";
    assert.equal(evaluateFlag(f, gb, resolver()).reason, "DISABLED");
  });

  it("reads each evaluation's own attributes, one evaluation after another", () => {
    const f = stringFlag({
      rules: [
        serve("gb", [inCountry("GB")], "blue"),
        serve("no", [{ attribute: "country", operator: "present", values: [], negate: true }], "green"),
      ],
    });
    const project = resolver();
    for (let i = 0; i < 3; i++) {
      assert.equal(evaluateFlag(f, { attributes: { country: "GB" } }, project).variant, "blue");
      assert.equal(evaluateFlag(f, { attributes: { country: "US" } }, project).variant, "red");
      assert.equal(evaluateFlag(f, {}, project).variant, "green");
      assert.equal(evaluateFlag(f, { attributes: { country: null } as never }, project).variant, "green");
    }
  });

  it("reads its own attributes even when an evaluation of the same flag runs inside it", () => {
    // country, then a segment lookup that evaluates the same flag for a context in FR, then country again.
    const notInS: Condition = { operator: "not_in_segment", values: ["s"] };
    const f = stringFlag({ rules: [serve("gb", [inCountry("GB"), notInS, inCountry("GB")], "blue")] });
    const inner: (string | null)[] = [];
    const project: TargetingResolver = {
      isMember: () => {
        inner.push(
          evaluateFlag(f, { actorIds: ["b"], attributes: { country: "FR" } }, { isMember: () => false }).variant,
        );
        return false;
      },
    };
    const result = evaluateFlag(f, { actorIds: ["a"], attributes: { country: "GB" } }, project);
    assert.deepEqual(inner, ["red"]);
    assert.equal(result.variant, "blue", "the second read of country is GB, not the inner evaluation's FR");
  });

  it("answers are shared and frozen (the hot path allocates no answer)", () => {
    const f = stringFlag({ status: "enabled" });
    const first = evaluateFlag(f, {}, resolver());
    assert.equal(evaluateFlag(f, {}, resolver()), first);
    assert.ok(Object.isFrozen(first));
  });
});
