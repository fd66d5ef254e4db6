import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ManualClock } from "@flagstaff/test-harness";
import type { Kysely } from "kysely";
import type { Database } from "../../src/db/schema.js";
import type { AppError } from "../../src/kernel/errors.js";
import { EnvironmentService } from "../../src/features/environments/environment.service.js";
import type { PendingChecks } from "../../src/features/flags/flag-presenter.js";
import { FlagService } from "../../src/features/flags/flag.service.js";
import type { WriteContext } from "../../src/write-path/domain-events.js";
import { FakeUnitOfWork, NO_DATABASE } from "./fakes/fake-unit-of-work.js";
import { MemoryStores } from "./fakes/memory-stores.js";
import { ADMIN, refused } from "./fakes/refused.js";

// The environments' service's decisions, on the in-memory fakes of its store and unit of work: creating
// (empty or a copy), renaming, protecting, moving, the default, deleting. The HTTP tests
// (test/environments.test.ts and others) cover the same service on real databases.

const admin = ADMIN;
const boundTo = (environment: string): WriteContext => ({ ...admin, boundTo: environment });
const everywhere = { environment: null, ownOnly: false };

function setup(maxPerProject = 5) {
  const stores = new MemoryStores();
  stores.addProject("p", [{ id: "production" }, { id: "staging" }]);
  const work = new FakeUnitOfWork(stores);
  const clock = new ManualClock();
  const db = NO_DATABASE as unknown as Kysely<Database>;
  const environments = new EnvironmentService(db, work, clock, maxPerProject, stores.environments);
  const recorder = { pendingFor: () => undefined, forget: () => {} } as PendingChecks;
  const flags = new FlagService(db, work, recorder, clock, stores.flags);
  return { stores, work, environments, flags };
}

const ids = async (environments: EnvironmentService) =>
  (await environments.list("p", { limit: 20, direction: "first" })).data.map((e) => e.id);

describe("environment service on fakes: create", () => {
  test("a new environment comes last, not the default, with every flag disabled in it", async () => {
    const { environments, flags, work } = setup();
    await flags.create(admin, "p", everywhere, "f", {});
    await flags.update(admin, "p", everywhere, "f", { status: "enabled" });
    const qa = await environments.create(admin, "p", { id: "qa", name: "QA" });
    assert.equal(qa.default, false);
    assert.equal(qa.protected, false);
    assert.deepEqual(await ids(environments), ["production", "staging", "qa"]);
    assert.equal((await flags.get("p", { environment: "qa", ownOnly: false }, "f")).status, "disabled");
    const created = work.events.at(-1);
    assert.equal(created?.type, "environment.created");
    assert.deepEqual(created?.after, {
      id: "qa",
      name: "QA",
      description: "",
      default: false,
      protected: false,
      requiredApprovals: 0,
      allowSelfApproval: false,
      copyFrom: null,
    });
  });

  test("a copy starts with the source's configurations and attached actors", async () => {
    const { environments, flags } = setup();
    await flags.create(admin, "p", everywhere, "f", {});
    await flags.update(admin, "p", everywhere, "f", { status: "conditional", percentageActors: 25, addActors: ["u"] });
    await environments.create(admin, "p", { id: "qa", name: "QA", copyFrom: "production", protected: true });
    const copied = await flags.get("p", { environment: "qa", ownOnly: false }, "f");
    assert.equal(copied.status, "conditional");
    assert.equal(copied.percentageActors, 25);
    assert.equal(copied.actorsCount, 1);
    assert.equal(copied.revision, 1);
    assert.equal((await environments.get("p", "qa")).protected, true);
  });

  test("refusals: an id taken, an unknown source or project, the project's limit", async () => {
    const { environments, work } = setup(3);
    await refused(environments.create(admin, "p", { id: "staging", name: "S" }), 409, "environment_exists");
    await refused(
      environments.create(admin, "p", { id: "qa", name: "QA", copyFrom: "dev" }),
      404,
      "environment_not_found",
    );
    await refused(environments.create(admin, "nope", { id: "qa", name: "QA" }), 404, "project_not_found");
    await environments.create(admin, "p", { id: "qa", name: "QA" });
    await refused(environments.create(admin, "p", { id: "dev", name: "Dev" }), 409, "environment_limit");
    assert.equal(work.writes.length, 1);
  });
});

describe("environment service on fakes: update", () => {
  test("renaming and protecting are recorded; a request that changes nothing writes nothing", async () => {
    const { environments, work } = setup();
    const renamed = await environments.update(admin, "p", "staging", { name: "Staging", protected: true });
    assert.equal(renamed.name, "Staging");
    assert.equal(renamed.protected, true);
    await environments.update(admin, "p", "staging", { name: "Staging" });
    assert.deepEqual(
      work.events.map((e) => [e.type, e.before && "name" in e.before ? e.before.name : null]),
      [["environment.updated", "staging"]],
    );
  });

  test("making one the default makes the previous one not the default, with an event each", async () => {
    const { environments, work } = setup();
    await environments.update(admin, "p", "staging", { default: true });
    assert.equal((await environments.get("p", "staging")).default, true);
    assert.equal((await environments.get("p", "production")).default, false);
    assert.deepEqual(
      work.events.map((e) => e.target.id),
      ["production", "staging"],
    );
    // `default: false` does not unmake the default: another is made the default instead.
    await environments.update(admin, "p", "staging", { default: false } as never);
    assert.equal((await environments.get("p", "staging")).default, true);
  });

  test("moving: the order changes and the event says from where to where; past the end is a 400", async () => {
    const { environments, work } = setup();
    await environments.create(admin, "p", { id: "qa", name: "QA" });
    await environments.update(admin, "p", "qa", { position: 1 });
    assert.deepEqual(await ids(environments), ["qa", "production", "staging"]);
    const moved = work.events.at(-1);
    assert.deepEqual(
      [moved?.before, moved?.after].map((r) => r && "position" in r && r.position),
      [3, 1],
    );
    await refused(environments.update(admin, "p", "qa", { position: 4 }), 400, "invalid_request");
  });

  test("a caller bound to an environment changes its own only, and never the default or the order", async () => {
    const { environments } = setup();
    await assert.rejects(
      environments.update(boundTo("production"), "p", "staging", { name: "S" }),
      (e: AppError) => e.status === 403,
    );
    await assert.rejects(
      environments.update(boundTo("staging"), "p", "staging", { default: true }),
      (e: AppError) => e.status === 403,
    );
    await assert.rejects(
      environments.update(boundTo("staging"), "p", "staging", { position: 1 }),
      (e: AppError) => e.status === 403,
    );
    assert.equal((await environments.update(boundTo("staging"), "p", "staging", { name: "S" })).name, "S");
    assert.deepEqual(await ids(environments), ["production", "staging"]);
  });

  test("an unknown environment or project is a 404", async () => {
    const { environments } = setup();
    await refused(environments.update(admin, "p", "qa", { name: "QA" }), 404, "environment_not_found");
    await refused(environments.update(admin, "nope", "qa", { name: "QA" }), 404, "project_not_found");
  });
});

describe("environment service on fakes: delete", () => {
  test("deleting takes its configurations and revokes the keys bound to it, each as an event", async () => {
    const { environments, flags, stores, work } = setup();
    await flags.create(admin, "p", everywhere, "f", {});
    const key = {
      id: "key_s",
      name: "staging reader",
      role: "read",
      projectId: "p",
      environment: "staging",
      createdAt: "t",
    };
    await stores.people.insertKey(NO_DATABASE, key as never, "hash", null);
    await environments.delete(admin, "p", "staging");
    assert.deepEqual(await ids(environments), ["production"]);
    assert.deepEqual(
      work.events.slice(-2).map((e) => [e.type, e.target.id]),
      [
        ["key.revoked", "key_s"],
        ["environment.deleted", "staging"],
      ],
    );
    assert.deepEqual(Object.keys((await flags.get("p", everywhere, "f")).environments), ["production"]);
    assert.equal(stores.tables.keys.length, 0);
  });

  test("the default cannot be deleted, and so neither can a project's last environment", async () => {
    const { environments, work } = setup();
    await refused(environments.delete(admin, "p", "production"), 409, "environment_is_default");
    await environments.delete(admin, "p", "staging");
    await refused(environments.delete(admin, "p", "production"), 409, "environment_is_default");
    await refused(environments.delete(admin, "p", "staging"), 404, "environment_not_found");
    await assert.rejects(environments.delete(boundTo("staging"), "p", "production"), (e: AppError) => e.status === 403);
    assert.equal(work.writes.length, 1);
  });
});
