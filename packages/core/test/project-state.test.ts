import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  evaluate,
  evaluateFlag,
  type FlagState,
  explain,
  isProjectChange,
  type ProjectChange,
  ProjectState,
  type ProjectStateJSON,
  STATE_FORMAT,
} from "../src/index.js";

const upsert = (id: string, name: string, extra: Partial<Extract<ProjectChange, { kind: "flag.upserted" }>> = {}) =>
  ({
    kind: "flag.upserted",
    flag: { id, name, status: "conditional", percentageActors: 0, percentageCalls: 0 },
    addActors: [],
    removeActors: [],
    addSegments: [],
    removeSegments: [],
    ...extra,
  }) as const;

describe("project state", () => {
  it("applies changes and answers whether evaluation may differ", () => {
    const state = new ProjectState();
    assert.equal(state.apply(upsert("f1", "beta")), true, "a new flag");
    assert.equal(state.apply(upsert("f1", "beta")), false, "the same again");
    assert.equal(state.apply(upsert("f1", "beta", { addActors: ["a"] })), true);
    assert.equal(state.apply({ kind: "segment.members", segmentId: "s1", add: ["m"], remove: [] }), true);
    assert.equal(state.apply({ kind: "segment.members", segmentId: "s1", add: ["m"], remove: ["nobody"] }), false);
    assert.equal(state.apply(upsert("f1", "beta", { addSegments: ["s1"] })), true);
    assert.equal(state.isMember("s1", "m"), true);
    assert.deepEqual(state.flagNamesInOrder(), ["beta"]);
    state.apply(upsert("f0", "alpha"));
    assert.deepEqual(state.flagNamesInOrder(), ["alpha", "beta"]);
    assert.equal(state.apply({ kind: "segment.deleted", segmentId: "s1" }), true);
    assert.equal(state.flagsById.get("f1")?.segments.size, 0, "a deleted segment leaves every flag");
    assert.equal(state.apply({ kind: "flag.deleted", id: "f0" }), true);
    assert.equal(state.apply({ kind: "flag.deleted", id: "f0" }), false);
    assert.deepEqual(state.flagNamesInOrder(), ["beta"]);
  });

  it("flags without actors or segments share one empty set, which a change never adds to", () => {
    const json: ProjectStateJSON = {
      format: STATE_FORMAT,
      flags: ["a", "b", "c"].map((name) => ({
        id: `f-${name}`,
        name,
        status: "conditional",
        percentageActors: 0,
        percentageCalls: 0,
        actors: [],
        segments: [],
      })),
      segments: {},
    };
    const state = ProjectState.fromJSON(json);
    const flag = (name: string) => state.flagsByName.get(name) as FlagState;
    const shared = flag("a").actors;
    assert.equal(flag("b").actors, shared, "one set for every flag with none");
    assert.equal(flag("c").segments, shared);
    state.apply(upsert("f-a", "a", { addActors: ["alice"], addSegments: ["beta"] }));
    assert.deepEqual([...flag("a").actors], ["alice"]);
    assert.deepEqual([...flag("a").segments], ["beta"]);
    assert.equal(shared.size, 0, "the shared set stays empty");
    assert.equal(flag("b").actors.size + flag("b").segments.size + flag("c").actors.size, 0);
    // A new flag, a copy and a removal from a flag with none leave it empty too.
    state.apply(upsert("f-d", "d", { removeActors: ["alice"], removeSegments: ["beta"] }));
    state.apply({ kind: "segment.deleted", segmentId: "beta" });
    const copy = state.copy();
    copy.apply(upsert("f-b", "b", { addActors: ["bob"] }));
    assert.equal(shared.size, 0);
    assert.equal(flag("b").actors.size, 0, "the copy's change is the copy's");
    assert.deepEqual([...(copy.flagsByName.get("b") as FlagState).actors], ["bob"]);
    assert.equal(evaluateFlag(flag("c"), { actorIds: ["alice", "bob"] }, state).reason, "DEFAULT");
  });

  it("tells project changes from others", () => {
    assert.equal(isProjectChange({ kind: "flag.upserted" }), true);
    assert.equal(isProjectChange({ kind: "segment.members" }), true);
    assert.equal(isProjectChange({ kind: "key.created" }), false);
    assert.equal(isProjectChange({ kind: "project.deleted" }), false);
  });

  it("round-trips through its JSON form, and refuses an unknown format", () => {
    const state = new ProjectState();
    state.apply(upsert("f1", "beta", { addActors: ["a", "b"], addSegments: ["s1"] }));
    state.apply({ kind: "segment.members", segmentId: "s1", add: ["m1", "m2"], remove: [] });
    const json = JSON.parse(JSON.stringify(state.toJSON())) as ProjectStateJSON;
    assert.equal(json.format, STATE_FORMAT);
    assert.deepEqual(ProjectState.fromJSON(json).toJSON(), state.toJSON());
    assert.throws(() => ProjectState.fromJSON({ ...json, format: 4 }), /unknown project state format 4.*upgrade/);
  });

  it("reads a state of format 1 as boolean flags with no rules", () => {
    const state = ProjectState.fromJSON({
      format: 1,
      flags: [
        {
          id: "f1",
          name: "beta",
          status: "conditional",
          percentageActors: 0,
          percentageCalls: 0,
          actors: ["a"],
          segments: [],
        },
      ],
      segments: {},
    });
    const flag = state.flag("beta");
    assert.equal(flag?.type, "boolean");
    assert.equal(flag?.onVariant, "on");
    assert.deepEqual(flag?.rules, []);
    assert.equal(evaluateFlag(flag as FlagState, { actorIds: ["a"] }, state).variant, "on");
    assert.equal(state.toJSON().format, 2);
  });

  it("carries targeting through changes, copies and its JSON form", () => {
    const state = new ProjectState();
    const variants = [
      { key: "red", value: "#f00" },
      { key: "blue", value: "#00f" },
    ];
    const rules = [
      {
        id: "eu",
        conditions: [{ attribute: "country", operator: "in" as const, values: ["FR", "DE"] }],
        serve: { variant: "blue" },
      },
    ];
    const change = upsert("f1", "colour", {});
    const flag = {
      ...change.flag,
      status: "conditional" as const,
      type: "string" as const,
      variants,
      onVariant: "red",
      offVariant: "red",
      rules,
    };
    assert.equal(state.apply({ ...change, flag }), true);
    // The same targeting again changes nothing, and keeps the arrays evaluation compiled.
    const held = state.flag("colour")?.rules;
    assert.equal(state.apply({ ...change, flag: JSON.parse(JSON.stringify(flag)) }), false);
    assert.equal(state.flag("colour")?.rules, held);
    const de = { attributes: { country: "DE" } };
    assert.equal(evaluateFlag(state.flag("colour") as FlagState, de, state).variant, "blue");

    // A segment's conditions are shared by copies (segments belong to the project).
    const copy = state.copy();
    const inSegment = [{ attribute: "plan", operator: "in" as const, values: ["pro"] }];
    assert.equal(state.apply({ kind: "segment.conditions", segmentId: "s1", conditions: inSegment }), true);
    assert.equal(state.apply({ kind: "segment.conditions", segmentId: "s1", conditions: inSegment }), false);
    assert.deepEqual(copy.segmentConditions("s1"), inSegment);

    // Variants change for the flag's every environment by their own change.
    const renamed = [variants[0], { key: "blue", value: "#0000ff" }];
    assert.equal(copy.apply({ kind: "flag.variants", id: "f1", variants: renamed as never }), true);
    assert.equal(evaluateFlag(copy.flag("colour") as FlagState, de, copy).value, "#0000ff");
    assert.equal(evaluateFlag(state.flag("colour") as FlagState, de, state).value, "#00f");
    assert.equal(copy.apply({ kind: "flag.variants", id: "nope", variants: renamed as never }), false);

    const json = JSON.parse(JSON.stringify(copy.toJSON())) as ProjectStateJSON;
    const back = ProjectState.fromJSON(json);
    assert.deepEqual(back.toJSON(), copy.toJSON());
    assert.deepEqual(back.segmentConditions("s1"), inSegment);
    assert.equal(back.apply({ kind: "segment.conditions", segmentId: "s1", conditions: [] }), true);
    assert.equal(back.segmentConditions("s1"), undefined);
    assert.equal(copy.segmentConditions("s1")?.length, 1);
  });

  it("a state rebuilt from JSON evaluates and explains exactly as the original (property)", () => {
    const id = fc.constantFrom("a", "b", "c", "d", "e", "f");
    const change: fc.Arbitrary<ProjectChange> = fc.oneof(
      fc.record({
        kind: fc.constant("flag.upserted" as const),
        flag: fc.record({
          id: fc.constantFrom("f1", "f2"),
          name: fc.constant("x"),
          status: fc.constantFrom("enabled", "disabled", "conditional"),
          percentageActors: fc.constantFrom(0, 1, 25, 50, 100),
          percentageCalls: fc.constantFrom(0, 10),
        }),
        addActors: fc.array(id, { maxLength: 3 }),
        removeActors: fc.array(id, { maxLength: 2 }),
        addSegments: fc.array(fc.constantFrom("s1", "s2"), { maxLength: 2 }),
        removeSegments: fc.array(fc.constantFrom("s1", "s2"), { maxLength: 1 }),
      }),
      fc.record({
        kind: fc.constant("segment.members" as const),
        segmentId: fc.constantFrom("s1", "s2"),
        add: fc.array(id, { maxLength: 3 }),
        remove: fc.array(id, { maxLength: 2 }),
      }),
      fc.record({ kind: fc.constant("segment.deleted" as const), segmentId: fc.constantFrom("s1", "s2") }),
    );
    fc.assert(
      fc.property(fc.array(change, { maxLength: 20 }), fc.array(id, { maxLength: 3 }), (changes, actors) => {
        const original = new ProjectState();
        // Flag names must stay unique per id: name each flag after its id.
        for (const c of changes)
          original.apply(c.kind === "flag.upserted" ? { ...c, flag: { ...c.flag, name: c.flag.id } } : c);
        const copy = ProjectState.fromJSON(JSON.parse(JSON.stringify(original.toJSON())));
        for (const flag of original.flagsById.values()) {
          const other = copy.flagsById.get(flag.id)!;
          const a = evaluate(flag, actors, original.isMember, () => 0.5);
          const b = evaluate(other, actors, copy.isMember, () => 0.5);
          assert.deepEqual(a, b);
          assert.deepEqual(explain(flag, actors, original.isMember), explain(other, actors, copy.isMember));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("a project state as the resolver evaluate takes", () => {
  it("answers like its membership function", () => {
    const state = new ProjectState();
    state.apply(upsert("f1", "beta", { addSegments: ["s1"] }));
    state.apply({ kind: "segment.members", segmentId: "s1", add: ["m"], remove: [] });
    const flag = state.flag("beta")!;
    for (const actors of [["m"], ["x"], []]) {
      assert.deepEqual(
        evaluate(flag, actors, state, () => 0.5),
        evaluate(flag, actors, state.isMember, () => 0.5),
      );
      assert.deepEqual(explain(flag, actors, state), explain(flag, actors, state.isMember));
    }
    assert.equal(state.flag("nope"), undefined);
  });
});
