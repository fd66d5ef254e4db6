import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { evaluate } from "@flagstaff/core";
import type { Change } from "../../src/write-path/changes.js";
import type { ProjectEnvironments } from "../../src/features/evaluation/project-environments.js";
import { Snapshot } from "../../src/features/evaluation/snapshot.js";

// A project's evaluation state per environment, in memory: the changes each environment applies, and
// what they share (segment members). No database: the snapshot applies change sets as the feed gives them.

const flag = (id: string, status: "enabled" | "disabled" | "conditional" = "disabled", percentageActors = 0) => ({
  id,
  name: id,
  status,
  percentageActors,
  percentageCalls: 0,
});

const upsert = (environment: string | undefined, f: ReturnType<typeof flag>, more: Partial<Change> = {}): Change =>
  ({
    kind: "flag.upserted",
    projectId: "p",
    ...(environment === undefined ? {} : { environment }),
    flag: f,
    addActors: [],
    removeActors: [],
    addSegments: [],
    removeSegments: [],
    ...more,
  }) as Change;

function snapshotWith(...changes: Change[][]): Snapshot {
  const snapshot = new Snapshot();
  changes.forEach((list, i) => {
    snapshot.apply({ stream: "p", version: i + 1, changes: list });
  });
  return snapshot;
}

/** A call-rollout draw that never falls in: only the deterministic rules decide. */
const never = () => 0.99;
const enabled = (project: ProjectEnvironments, environment: string | null, name: string, actors: string[] = []) => {
  const state = project.state(environment);
  const f = state?.flag(name);
  assert.ok(state && f, `${name} in ${environment ?? "the default"}`);
  return evaluate(f, actors, state.isMember, never).enabled;
};

describe("a project's environments in memory", () => {
  test("a project starts with the environments its creation names, the first the default; old change sets mean production", () => {
    const named = snapshotWith([{ kind: "project.created", projectId: "p", environments: ["dev", "prod"] }]);
    const project = named.projects.get("p") as ProjectEnvironments;
    assert.deepEqual([...project.environments.keys()], ["dev", "prod"]);
    assert.equal(project.defaultEnvironment, "dev");
    const old = snapshotWith([{ kind: "project.created", projectId: "p" }]);
    assert.deepEqual([...(old.projects.get("p") as ProjectEnvironments).environments.keys()], ["production"]);
  });

  test("a flag change of one environment leaves the others; one of no environment (a creation) reaches all", () => {
    const snapshot = snapshotWith(
      [{ kind: "project.created", projectId: "p", environments: ["production", "staging"] }],
      [upsert(undefined, flag("f"))],
      [upsert("staging", flag("f", "enabled"))],
    );
    const project = snapshot.projects.get("p") as ProjectEnvironments;
    assert.equal(enabled(project, "staging", "f"), true);
    assert.equal(enabled(project, "production", "f"), false);
    assert.equal(enabled(project, null, "f"), false, "the default is production");
    // Only staging's evaluation moved with version 3.
    assert.equal(project.state("staging")?.evaluationVersion, 3);
    assert.equal(project.state("production")?.evaluationVersion, 2);
  });

  test("segment members are the project's: one change reaches every environment, and is held once", () => {
    const snapshot = snapshotWith(
      [{ kind: "project.created", projectId: "p", environments: ["production", "staging"] }],
      [upsert(undefined, flag("f"))],
      [upsert("staging", flag("f", "conditional"), { addSegments: ["s"] } as Partial<Change>)],
      [{ kind: "segment.members", projectId: "p", segmentId: "s", add: ["ada"], remove: [] }],
    );
    const project = snapshot.projects.get("p") as ProjectEnvironments;
    assert.equal(project.state("production")?.segmentMembers, project.state("staging")?.segmentMembers);
    assert.equal(enabled(project, "staging", "f", ["ada"]), true);
    assert.equal(enabled(project, "production", "f", ["ada"]), false, "production has the segment unattached");
    assert.equal(project.state("production")?.evaluationVersion, 4, "a membership change moves every environment");
    snapshot.apply({ stream: "p", version: 5, changes: [{ kind: "segment.deleted", projectId: "p", segmentId: "s" }] });
    assert.equal(enabled(project, "staging", "f", ["ada"]), false);
    assert.equal(project.state("staging")?.flag("f")?.segments.size, 0);
  });

  test("a new environment copies another's configuration, held apart from it; without copyFrom every flag is off", () => {
    const snapshot = snapshotWith(
      [{ kind: "project.created", projectId: "p" }],
      [upsert(undefined, flag("f")), upsert(undefined, flag("g"))],
      [upsert("production", flag("f", "conditional", 100), { addActors: ["bo"] } as Partial<Change>)],
      [upsert("production", flag("g", "enabled"))],
      [{ kind: "environment.created", projectId: "p", environment: "staging", copyFrom: "production" }],
      [{ kind: "environment.created", projectId: "p", environment: "dev" }],
    );
    const project = snapshot.projects.get("p") as ProjectEnvironments;
    const staging = project.state("staging")?.flag("f");
    assert.deepEqual(
      [staging?.status, staging?.percentageActors, [...(staging?.actors ?? [])]],
      ["conditional", 100, ["bo"]],
    );
    assert.equal(enabled(project, "staging", "g"), true);
    assert.notEqual(staging, project.state("production")?.flag("f"), "a copy, not the same object");
    snapshot.apply({
      stream: "p",
      version: 7,
      changes: [upsert("staging", flag("f"), { removeActors: ["bo"] } as Partial<Change>)],
    });
    assert.deepEqual([...(project.state("production")?.flag("f")?.actors ?? [])], ["bo"], "production kept its actor");
    const dev = project.state("dev");
    assert.deepEqual(
      [...(dev?.flagsById.values() ?? [])].map((f) => [f.name, f.status, f.percentageActors, f.actors.size]),
      [
        ["f", "disabled", 0, 0],
        ["g", "disabled", 0, 0],
      ],
    );
  });

  test("the default moves; a deleted environment is gone; a deleted flag leaves every environment", () => {
    const snapshot = snapshotWith(
      [{ kind: "project.created", projectId: "p", environments: ["production", "staging"] }],
      [upsert(undefined, flag("f"))],
      [upsert("staging", flag("f", "enabled"))],
      [{ kind: "environment.default", projectId: "p", environment: "staging" }],
    );
    const project = snapshot.projects.get("p") as ProjectEnvironments;
    assert.equal(project.resolve(null), "staging");
    assert.equal(enabled(project, null, "f"), true, "a key bound to none now follows staging");
    snapshot.apply({
      stream: "p",
      version: 5,
      changes: [{ kind: "environment.deleted", projectId: "p", environment: "production" }],
    });
    assert.equal(project.state("production"), undefined);
    snapshot.apply({ stream: "p", version: 6, changes: [{ kind: "flag.deleted", projectId: "p", id: "f" }] });
    assert.equal(project.state("staging")?.flag("f"), undefined);
  });

  test("keys carry their environment; keys of change sets logged before environments are production's", () => {
    const snapshot = snapshotWith(
      [{ kind: "project.created", projectId: "p" }],
      [
        { kind: "key.created", id: "k1", hash: "h1", role: "check", projectId: "p", environment: "staging" },
        { kind: "key.created", id: "k2", hash: "h2", role: "read", projectId: "p" },
        { kind: "key.created", id: "k3", hash: "h3", role: "admin", projectId: null },
        { kind: "key.created", id: "k4", hash: "h4", role: "write", projectId: "p", environment: null },
      ],
    );
    assert.equal(snapshot.principal("h1")?.environment, "staging");
    assert.equal(snapshot.principal("h2")?.environment, "production");
    assert.equal(snapshot.principal("h3")?.environment, null);
    assert.equal(snapshot.principal("h4")?.environment, null);
  });
});
