import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  evaluate,
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
    assert.throws(() => ProjectState.fromJSON({ ...json, format: 2 as never }), /unknown project state format 2/);
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
