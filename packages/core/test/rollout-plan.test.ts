import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  constantAnswer,
  evaluateFlag,
  inActorRollout,
  nextPlan,
  planStanding,
  planView,
  ProjectState,
  type RolloutPlan,
  type Rule,
  validateConfiguration,
} from "../src/index.js";
import { flag, resolver, stringFlag } from "./rules-helpers.js";

// Timed rollouts in the engine (issue 35): the step in force at the evaluation's time, pausing, resuming,
// the validator, constantAnswer, the decision's threshold, and the project state's format and change kind.

const T = Date.parse("2026-12-01T09:00:00.000Z");
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const ramp: RolloutPlan = {
  steps: [
    { at: iso(T), percentage: 5 },
    { at: iso(T + HOUR), percentage: 25 },
    { at: iso(T + 2 * HOUR), percentage: 100 },
  ],
};
const ACTORS = Array.from({ length: 2000 }, (_, i) => `user-${i}`);

const split: Rule = {
  id: "half",
  conditions: [],
  serve: {
    split: {
      weights: [
        { variant: "red", weight: 100 },
        { variant: "green", weight: 0 },
      ],
    },
  },
};

describe("timed rollouts", () => {
  it("the percentage in force is the last step whose time has passed, to the millisecond", () => {
    const f = flag({ percentageActors: 1, rolloutPlan: ramp });
    assert.equal(planView(f, T - 1).percentageActors, 1);
    assert.equal(planView(f, T - 1), f, "no step passed: the flag itself");
    assert.equal(planView(f, T).percentageActors, 5);
    assert.equal(planView(f, T + HOUR - 1).percentageActors, 5);
    assert.equal(planView(f, T + HOUR).percentageActors, 25);
    assert.equal(planView(f, T + 5 * HOUR).percentageActors, 100);
    assert.equal(planView(f, T + HOUR), planView(f, T + HOUR + 1000), "one view per step, made once");
    for (const [now, expected] of [
      [T - 1, 1],
      [T, 5],
      [T + HOUR, 25],
      [T + 2 * HOUR, 100],
    ] as const) {
      const on = ACTORS.filter(
        (actor) => evaluateFlag(f, { actorIds: [actor] }, resolver({ now })).variant === "on",
      ).length;
      assert.equal(on, ACTORS.filter((actor) => inActorRollout("checkout", actor, expected)).length, `at ${iso(now)}`);
    }
  });

  it("an actor in the rollout stays in as it grows", () => {
    const f = flag({ rolloutPlan: ramp });
    let before = new Set<string>();
    for (const now of [T, T + HOUR, T + 2 * HOUR]) {
      const on = new Set(ACTORS.filter((a) => evaluateFlag(f, { actorIds: [a] }, resolver({ now })).variant === "on"));
      for (const actor of before) assert.ok(on.has(actor), `${actor} left at ${iso(now)}`);
      assert.ok(on.size >= before.size);
      before = on;
    }
    assert.equal(before.size, ACTORS.length);
  });

  it("steps a rule's split weights the same way, reading the rest of the flag live", () => {
    const plan: RolloutPlan = {
      steps: [
        {
          at: iso(T),
          ruleId: "half",
          weights: [
            { variant: "red", weight: 50 },
            { variant: "green", weight: 50 },
          ],
        },
      ],
    };
    const f = stringFlag({ rules: [split], rolloutPlan: plan });
    const greens = (now: number) =>
      ACTORS.filter((a) => evaluateFlag(f, { actorIds: [a] }, resolver({ now })).variant === "green").length;
    assert.equal(greens(T - 1), 0);
    assert.ok(Math.abs(greens(T) - 1000) < 120, `${greens(T)} of 2000 green at 50 %`);
    const disabled = { ...f, status: "disabled" as const };
    assert.equal(evaluateFlag(disabled, { actorIds: ["x"] }, resolver({ now: T })).reason, "DISABLED");
  });

  it("a paused plan reads its time as the moment it was paused", () => {
    const f = flag({ rolloutPlan: { ...ramp, pausedAt: iso(T + 30 * 60_000) } });
    assert.equal(planView(f, T + 10 * HOUR).percentageActors, 5);
    assert.deepEqual(planStanding(f.rolloutPlan as RolloutPlan, 0, T + 10 * HOUR), {
      current: 0,
      percentageActors: 5,
      nextAt: null,
    });
    assert.deepEqual(planStanding(ramp, 0, T + 30 * 60_000), { current: 0, percentageActors: 5, nextAt: T + HOUR });
    assert.deepEqual(planStanding(ramp, 2, T - 1), { current: -1, percentageActors: 2, nextAt: T });
  });

  it("pausing keeps the steps; resuming moves the steps to come later by the pause", () => {
    const paused = nextPlan({ steps: ramp.steps, paused: true }, { steps: ramp.steps }, T + 30 * 60_000);
    assert.equal(paused.pausedAt, iso(T + 30 * 60_000));
    // Left out: as it is (still paused, at the same moment).
    assert.equal(nextPlan({ steps: ramp.steps }, paused, T + HOUR).pausedAt, iso(T + 30 * 60_000));
    const resumed = nextPlan({ steps: ramp.steps, paused: false }, paused, T + 2 * HOUR + 30 * 60_000);
    assert.equal(resumed.pausedAt, null);
    assert.deepEqual(
      resumed.steps.map((s) => s.at),
      [iso(T), iso(T + 3 * HOUR), iso(T + 4 * HOUR)],
    );
    assert.equal(nextPlan({ steps: ramp.steps }, null, T).pausedAt, null);
  });

  it("a plan the validator refuses answers its error, as a bad configuration does", () => {
    const broken = flag({ rolloutPlan: { steps: [{ at: iso(T), ruleId: "nope", weights: [] }] } });
    const answer = evaluateFlag(broken, { actorIds: ["a"] }, resolver({ now: T + HOUR }));
    assert.equal(answer.reason, "ERROR");
    assert.equal(answer.errorCode, "PARSE_ERROR");
  });

  it("between two steps, the view is the same object every time; a step passing gives the next", () => {
    const f = flag({ rolloutPlan: ramp });
    const views = [T - 5, T, T + 1, T + HOUR - 1, T + HOUR, T + 3 * HOUR].map((now) => planView(f, now));
    assert.equal(views[1], views[2]);
    assert.equal(views[2], views[3]);
    assert.notEqual(views[3], views[4]);
    assert.deepEqual(
      views.map((v) => v.percentageActors),
      [0, 5, 5, 5, 25, 100],
    );
    // Time going back (another evaluator's clock) finds the earlier step again.
    assert.equal(planView(f, T + 10).percentageActors, 5);
  });

  it("a flag with a plan is not constant while conditional", () => {
    assert.equal(constantAnswer(flag({ rolloutPlan: ramp })), undefined);
    assert.equal(constantAnswer(flag({ rolloutPlan: ramp, status: "disabled" }))?.reason, "DISABLED");
    assert.equal(constantAnswer(flag({ rolloutPlan: ramp, status: "enabled" }))?.reason, "STATIC");
  });

  it("the decision names the threshold in force", () => {
    const decision = evaluateFlag(flag({ rolloutPlan: ramp }), { actorIds: ["a"] }, resolver({ now: T + HOUR }), {
      detail: true,
    });
    assert.equal(decision.threshold, 25_000);
  });

  it("the validator refuses what a plan cannot be", () => {
    const problems = (rolloutPlan: unknown, rules: readonly Rule[] = []) =>
      validateConfiguration({
        name: "f",
        type: "string",
        variants: stringFlag().variants,
        onVariant: "green",
        offVariant: "red",
        rules,
        rolloutPlan,
      }).map((p) => `${p.path}: ${p.message}`);
    assert.deepEqual(problems(ramp), []);
    assert.deepEqual(problems(null), []);
    assert.match(problems({ steps: [] }).join(), /\/rolloutPlan\/steps: .*at least one step/);
    assert.match(problems({ steps: [{ at: "soon", percentage: 5 }] }).join(), /steps\/0\/at/);
    assert.match(
      problems({ steps: [{ at: iso(T), percentage: 33 }] }).join(),
      /steps\/0\/percentage: .*one of 0, 1, 2, 5/,
    );
    assert.match(problems({ steps: [ramp.steps[1], ramp.steps[0]] }).join(), /steps\/1\/at: .*time order/);
    assert.match(
      problems({
        steps: [
          { at: iso(T), percentage: 5 },
          { at: iso(T), percentage: 10 },
        ],
      }).join(),
      /steps\/1\/at: .*same percentage at this instant/,
    );
    assert.match(
      problems({ steps: [{ at: iso(T), ruleId: "nope", weights: [{ variant: "red", weight: 100 }] }] }).join(),
      /ruleId: names no rule that serves a split/,
    );
    assert.match(
      problems({ steps: [{ at: iso(T), ruleId: "half", weights: [{ variant: "red", weight: 60 }] }] }, [split]).join(),
      /sum to 60, not 100/,
    );
    assert.match(
      problems({ steps: [{ at: iso(T), ruleId: "half", weights: [{ variant: "pink", weight: 100 }] }] }, [
        split,
      ]).join(),
      /pink/,
    );
    assert.match(problems({ steps: [ramp.steps[0]], pausedAt: "later" }).join(), /pausedAt/);
    assert.match(problems({ steps: [ramp.steps[0]], extra: 1 }).join(), /extra: is not a known field/);
    assert.match(
      problems({ steps: Array.from({ length: 51 }, (_, i) => ({ at: iso(T + i), percentage: 5 })) }).join(),
      /more than 50 steps/,
    );
  });

  it("a state with a plan is format 3, and a plan's change is a kind of its own", () => {
    const state = new ProjectState();
    state.putFlag({ ...flag(), id: "f1", name: "checkout", actors: new Set(), segments: new Set() });
    assert.equal(state.toJSON().format, 2, "without plans: readable by older SDKs");
    assert.equal(state.apply({ kind: "flag.rollout", id: "f1", rolloutPlan: ramp }), true);
    assert.equal(state.apply({ kind: "flag.rollout", id: "f1", rolloutPlan: { ...ramp } }), false, "the same plan");
    const json = state.toJSON();
    assert.equal(json.format, 3);
    assert.deepEqual(json.flags[0]?.rolloutPlan, ramp);
    const read = ProjectState.fromJSON(json);
    assert.deepEqual(read.flag("checkout")?.rolloutPlan, ramp);
    assert.deepEqual(read.copy().flag("checkout")?.rolloutPlan, ramp, "an environment copied keeps the plan");
    assert.equal(state.apply({ kind: "flag.rollout", id: "f1", rolloutPlan: null }), true);
    assert.equal(state.toJSON().format, 2);
  });
});
