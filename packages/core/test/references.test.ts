import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dependenciesOf, type FlagInput, ProjectState, type Rule, referencesOf, servedToActor } from "../src/index.js";

// "Which flags use what" (referencesOf, dependenciesOf) and "what an actor id alone is served" (servedToActor): the one
// definition of each, which the server's relation lists, its refusal to delete a segment in use and the
// SDK's local evaluator ask.

const rule = (id: string, conditions: Rule["conditions"], serve: Rule["serve"] = { variant: "on" }): Rule => ({
  id,
  conditions,
  serve,
});

describe("referencesOf", () => {
  it("names the segments of in_segment and not_in_segment conditions and the flags of prerequisites, each once", () => {
    const rules = [
      rule("a", [
        { attribute: "country", operator: "in", values: ["seg_not_a_segment"] },
        { operator: "in_segment", values: ["seg_1", "seg_2"] },
      ]),
      rule("b", [{ operator: "not_in_segment", values: ["seg_2", "seg_3"] }]),
    ];
    const prerequisites = [
      { flag: "parent", variants: ["on"] },
      { flag: "other", variants: ["on"] },
    ];
    const found = referencesOf({ rules, prerequisites });
    assert.deepEqual(found, { segments: ["seg_1", "seg_2", "seg_3"], flags: ["parent", "other"] });
    // The same arrays answer the same lists (computed once); a configuration without targeting names nothing.
    assert.equal(referencesOf({ rules, prerequisites }).segments, found.segments);
    assert.deepEqual(referencesOf({}), { segments: [], flags: [] });
    assert.deepEqual(referencesOf({ rules: [], prerequisites: [] }), { segments: [], flags: [] });
  });
});

describe("dependenciesOf", () => {
  it("is every segment a flag's evaluation reads (attached, then named by its rules) and its prerequisite flags", () => {
    const rules = [
      rule("a", [{ operator: "in_segment", values: ["seg_1", "seg_2"] }]),
      rule("b", [{ operator: "not_in_segment", values: ["seg_3"] }]),
    ];
    const prerequisites = [{ flag: "parent", variants: ["on"] }];
    assert.deepEqual(dependenciesOf({ segments: new Set(["seg_9", "seg_2"]), rules, prerequisites }), {
      segments: ["seg_9", "seg_2", "seg_1", "seg_3"],
      flags: ["parent"],
    });
    // With no attached segment it is referencesOf's answer; with no rules, the attached segments alone.
    const named = { segments: new Set<string>(), rules, prerequisites };
    assert.deepEqual(dependenciesOf(named), referencesOf(named));
    assert.deepEqual(dependenciesOf({ segments: new Set(["seg_9"]) }), { segments: ["seg_9"], flags: [] });
    assert.deepEqual(dependenciesOf({ segments: new Set() }), { segments: [], flags: [] });
  });
});

describe("servedToActor", () => {
  /** An environment with a segment `vip` (listed: alice) and the given flags. */
  function environment(...flags: FlagInput[]): ProjectState {
    const state = new ProjectState();
    for (const flag of flags) state.putFlag(flag);
    state.addMember("vip", "alice");
    return state;
  }
  const flag = (name: string, fields: Partial<FlagInput> = {}): FlagInput => ({
    id: `flg_${name}`,
    name,
    status: "conditional",
    percentageActors: 0,
    percentageCalls: 0,
    actors: new Set<string>(),
    segments: new Set<string>(),
    ...fields,
  });

  it("counts a rule that serves the actor by its id alone: in_segment of a listed member, not_in_segment", () => {
    const state = environment(
      flag("member", { rules: [rule("vip", [{ operator: "in_segment", values: ["vip"] }])] }),
      flag("outsider", { rules: [rule("rest", [{ operator: "not_in_segment", values: ["vip"] }])] }),
      flag("by-attribute", { rules: [rule("fr", [{ attribute: "country", operator: "in", values: ["FR"] }])] }),
      flag("calls", { percentageCalls: 100 }),
    );
    const served = servedToActor(state);
    const on = (name: string, actor: string) => served(state.flagsByName.get(name)!, actor);
    assert.equal(on("member", "alice"), true);
    assert.equal(on("member", "bob"), false);
    assert.equal(on("outsider", "alice"), false);
    assert.equal(on("outsider", "bob"), true);
    // An attribute the context does not have never holds; the call rollout is never drawn.
    assert.equal(on("by-attribute", "alice"), false);
    assert.equal(on("calls", "alice"), false);
  });

  it("counts a typed flag's non-off variants and prerequisites, and never a disabled flag or an answer in error", () => {
    const variants = [
      { key: "a", value: "A" },
      { key: "b", value: "B" },
      { key: "c", value: "C" },
    ];
    const typed = (name: string, fields: Partial<FlagInput>) =>
      flag(name, { type: "string", variants, onVariant: "a", offVariant: "c", ...fields });
    const state = environment(
      typed("serves-b", { rules: [rule("vip", [{ operator: "in_segment", values: ["vip"] }], { variant: "b" })] }),
      typed("serves-off", { rules: [rule("vip", [{ operator: "in_segment", values: ["vip"] }], { variant: "c" })] }),
      typed("disabled", { status: "disabled", offVariant: "a", onVariant: "b" }),
      flag("needs-member", { status: "enabled", prerequisites: [{ flag: "serves-b", variants: ["b"] }] }),
      typed("broken", { rules: [rule("x", [{ operator: "in_segment", values: ["vip"] }], { variant: "nope" })] }),
    );
    const served = servedToActor(state);
    const on = (name: string, actor: string) => served(state.flagsByName.get(name)!, actor);
    assert.equal(on("serves-b", "alice"), true);
    assert.equal(on("serves-off", "alice"), false);
    assert.equal(on("disabled", "alice"), false, "a disabled flag serves its offVariant, whatever it is");
    assert.equal(on("needs-member", "alice"), true);
    assert.equal(on("needs-member", "bob"), false, "enabled, but its prerequisite fails for bob");
    assert.equal(on("broken", "alice"), false);
  });
});
