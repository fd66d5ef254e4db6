import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ManualClock } from "@flagstaff/test-harness";
import type { Kysely } from "kysely";
import type { Database } from "../../src/db/schema.js";
import type { AppError } from "../../src/kernel/errors.js";
import type { PendingChecks } from "../../src/features/flags/flag-presenter.js";
import { FlagCopier } from "../../src/features/flags/flag-copy.js";
import { flagTag } from "../../src/features/flags/flag-presenter.js";
import { FlagService } from "../../src/features/flags/flag.service.js";
import type { WriteContext } from "../../src/write-path/domain-events.js";
import { FakeUnitOfWork, NO_DATABASE } from "./fakes/fake-unit-of-work.js";
import { MemoryStores } from "./fakes/memory-stores.js";
import { ADMIN, refused } from "./fakes/refused.js";

// The flags' service's decisions, on the in-memory fakes of its store and unit of work (no database, no
// server): what it refuses and why, what it writes and the events it reports. The HTTP tests
// (test/flags.test.ts and others) cover the same service on real databases.

const admin = ADMIN;
/** A writer that is no admin of the project: protected environments are not theirs to change. */
const writer: WriteContext = {
  ...admin,
  actor: { ...admin.actor, keyId: "key_w", role: "write" } as WriteContext["actor"],
  mayConfigureProtected: false,
};

const everywhere = { environment: null, ownOnly: false };
const inEnvironment = (environment: string) => ({ environment, ownOnly: false });

function setup(environments: { id: string; protected?: boolean }[] = [{ id: "production" }, { id: "staging" }]) {
  const stores = new MemoryStores();
  stores.addProject("p", environments);
  const work = new FakeUnitOfWork(stores);
  const clock = new ManualClock();
  const recorder = { pendingFor: () => undefined, forget: () => {} } as PendingChecks;
  const flags = new FlagService(NO_DATABASE as unknown as Kysely<Database>, work, recorder, clock, stores.flags);
  const copier = new FlagCopier(work, recorder, clock, stores.flags);
  return { stores, work, clock, flags, copier };
}

describe("flag service on fakes: create", () => {
  test("a new flag is disabled in every environment and shown in the default one", async () => {
    const { flags, work } = setup();
    const flag = await flags.create(admin, "p", everywhere, "checkout", { description: "New checkout" });
    assert.equal(flag.environment, "production");
    assert.equal(flag.status, "disabled");
    assert.equal(flag.revision, 1);
    assert.deepEqual(Object.keys(flag.environments), ["production", "staging"]);
    assert.deepEqual(
      Object.values(flag.environments).map((c) => c.status),
      ["disabled", "disabled"],
    );
    assert.deepEqual(
      work.events.map((e) => [e.type, e.target.name]),
      [["flag.created", "checkout"]],
    );
    const staged = await flags.get("p", inEnvironment("staging"), "checkout");
    assert.equal(staged.environment, "staging");
    assert.equal(staged.id, flag.id);
  });

  test("a name taken is refused (409 flag_exists), and nothing is written", async () => {
    const { flags, work } = setup();
    await flags.create(admin, "p", everywhere, "checkout", {});
    await refused(flags.create(admin, "p", everywhere, "checkout", {}), 409, "flag_exists");
    assert.equal(work.writes.length, 1);
  });

  test("two creates of one name at once: the store's unique violation is the same 409", async () => {
    const { flags, stores } = setup();
    // The other create lands between this one's check and its insert.
    const insert = stores.flags.insertFlag;
    stores.flags.insertFlag = async (trx, flag, environments) => {
      await insert(trx, { ...flag, id: "flg_other" }, environments);
      await insert(trx, flag, environments);
    };
    await refused(flags.create(admin, "p", everywhere, "checkout", {}), 409, "flag_exists");
  });

  test("an unknown project or environment is a 404", async () => {
    const { flags } = setup();
    await refused(flags.create(admin, "nope", everywhere, "f", {}), 404, "project_not_found");
    await refused(flags.create(admin, "p", inEnvironment("qa"), "f", {}), 404, "environment_not_found");
  });

  test("a boolean flag declares no variants; a multivariate one's defaults must be among its variants", async () => {
    const { flags, work } = setup();
    await refused(
      flags.create(admin, "p", everywhere, "f", { variants: [{ key: "a", value: "a" }] } as never),
      400,
      "invalid_request",
    );
    await refused(
      flags.create(admin, "p", everywhere, "g", {
        type: "string",
        variants: [
          { key: "a", value: "a" },
          { key: "b", value: "b" },
        ],
        onVariant: "c",
      } as never),
      400,
      "invalid_request",
    );
    assert.equal(work.writes.length, 0);
  });
});

describe("flag service on fakes: update", () => {
  test("If-Match: a stale tag is refused (412) and changes nothing; the current one or * passes", async () => {
    const { flags, work } = setup();
    const flag = await flags.create(admin, "p", everywhere, "f", {});
    const stale = flagTag({ configId: flag.configId, revision: flag.revision + 1 });
    await refused(flags.update(admin, "p", everywhere, "f", { status: "enabled" }, stale), 412, "precondition_failed");
    assert.equal((await flags.get("p", everywhere, "f")).status, "disabled");
    const updated = await flags.update(admin, "p", everywhere, "f", { status: "enabled" }, flagTag(flag));
    assert.equal(updated.status, "enabled");
    assert.equal(updated.revision, 2);
    await flags.update(admin, "p", everywhere, "f", { status: "disabled" }, "*");
    assert.deepEqual(
      work.events.map((e) => e.type),
      ["flag.created", "flag.updated", "flag.updated"],
    );
  });

  test("a request that changes nothing writes nothing: no event, the revision stays", async () => {
    const { flags, work } = setup();
    await flags.create(admin, "p", everywhere, "f", { description: "d" });
    const same = await flags.update(admin, "p", everywhere, "f", { description: "d", status: "disabled" });
    assert.equal(same.revision, 1);
    assert.equal(work.writes.length, 1);
  });

  test("an id added and removed in one request is refused before anything is read", async () => {
    const { flags } = setup();
    const error = await refused(
      flags.update(admin, "p", everywhere, "f", { addActors: ["a"], removeActors: ["a"] }),
      400,
      "invalid_request",
    );
    assert.deepEqual(error.errors, [{ path: "/addActors", message: '"a" is both added and removed' }]);
  });

  test("actors attached are counted and known to the project; an unknown segment is a 404", async () => {
    const { flags, stores } = setup();
    await flags.create(admin, "p", everywhere, "f", {});
    stores.addSegment("p", "beta");
    const flag = await flags.update(admin, "p", everywhere, "f", { addActors: ["u1", "u2"], addSegments: ["beta"] });
    assert.equal(flag.actorsCount, 2);
    assert.equal(flag.segmentsCount, 1);
    assert.deepEqual(stores.actorsOf("p"), ["u1", "u2"]);
    await refused(flags.update(admin, "p", everywhere, "f", { addSegments: ["gone"] }), 404, "segment_not_found");
    const again = await flags.update(admin, "p", everywhere, "f", { addActors: ["u1"], removeActors: ["u3"] });
    assert.equal(again.revision, flag.revision, "attaching what is attached changes nothing");
  });

  test("targeting the validator refuses: a rule naming a segment that does not exist, a prerequisite cycle", async () => {
    const { flags, work } = setup();
    await flags.create(admin, "p", everywhere, "a", {});
    await flags.create(admin, "p", everywhere, "b", {});
    await refused(
      flags.update(admin, "p", everywhere, "a", {
        rules: [{ id: "r", conditions: [{ operator: "in_segment", values: ["missing"] }], serve: { variant: "on" } }],
      } as never),
      400,
      "invalid_request",
    );
    await flags.update(admin, "p", everywhere, "a", { prerequisites: [{ flag: "b", variants: ["on"] }] });
    const cycle = flags.update(admin, "p", everywhere, "b", { prerequisites: [{ flag: "a", variants: ["on"] }] });
    await assert.rejects(cycle, (error: AppError) => error.status === 409);
    assert.deepEqual((await flags.get("p", everywhere, "b")).prerequisites, []);
    assert.equal(work.writes.length, 3);
  });

  test("a variant dropped while a configuration or another flag's prerequisite uses it is refused (409)", async () => {
    const { flags } = setup();
    const variants = [
      { key: "red", value: "r" },
      { key: "blue", value: "b" },
      { key: "green", value: "g" },
    ];
    await flags.create(admin, "p", everywhere, "colour", { type: "string", variants } as never);
    await flags.create(admin, "p", everywhere, "other", {});
    await flags.update(admin, "p", inEnvironment("staging"), "other", {
      prerequisites: [{ flag: "colour", variants: ["green"] }],
    });
    const error = await refused(
      flags.update(admin, "p", everywhere, "colour", { variants: variants.slice(0, 2) } as never),
      409,
      "variant_in_use",
    );
    assert.match(error.detail, /flag "other" requires "green" in environment "staging"/);
  });

  test("a protected environment's configuration is its admins' to change; its description is anyone's", async () => {
    const { flags } = setup([{ id: "production", protected: true }, { id: "staging" }]);
    await flags.create(admin, "p", everywhere, "f", {});
    await refused(flags.update(writer, "p", everywhere, "f", { status: "enabled" }), 403, "environment_protected");
    await refused(flags.update(writer, "p", everywhere, "f", { addActors: ["u"] }), 403, "environment_protected");
    assert.equal(
      (await flags.update(writer, "p", inEnvironment("staging"), "f", { status: "enabled" })).status,
      "enabled",
    );
    const described = await flags.update(writer, "p", everywhere, "f", { description: "why" });
    assert.equal(described.description, "why");
    assert.equal((await flags.update(admin, "p", everywhere, "f", { status: "enabled" })).status, "enabled");
  });

  test("a description moves every environment's configuration on (so every ETag changes)", async () => {
    const { flags } = setup();
    await flags.create(admin, "p", everywhere, "f", {});
    await flags.update(admin, "p", everywhere, "f", { description: "new" });
    const staged = await flags.get("p", inEnvironment("staging"), "f");
    assert.equal(staged.description, "new");
    assert.equal(staged.revision, 2);
  });
});

describe("flag service on fakes: delete", () => {
  test("a key bound to an environment may delete only while the project has no other", async () => {
    const { flags } = setup();
    await flags.create(admin, "p", everywhere, "f", {});
    await refused(flags.delete(admin, "p", { environment: "staging", ownOnly: true }, "f"), 403, "forbidden");
    await flags.delete(admin, "p", everywhere, "f");
    await refused(flags.get("p", everywhere, "f"), 404, "flag_not_found");
  });

  test("deleting stops a flag in every environment, so any protected one refuses a writer", async () => {
    const { flags, work } = setup([{ id: "production" }, { id: "staging", protected: true }]);
    await flags.create(admin, "p", everywhere, "f", {});
    const error = await refused(flags.delete(writer, "p", everywhere, "f"), 403, "environment_protected");
    assert.match(error.detail, /^Deleting flag "f" changes what protected environment "staging" serves/);
    await refused(flags.delete(admin, "p", everywhere, "f", '"stale"'), 412, "precondition_failed");
    await flags.delete(admin, "p", everywhere, "f");
    assert.deepEqual(
      work.events.map((e) => e.type),
      ["flag.created", "flag.deleted"],
    );
  });
});

describe("flag service on fakes: copy between environments", () => {
  test("copies status, rollouts, actors and segments in one write with one event", async () => {
    const { flags, copier, stores, work } = setup();
    stores.addSegment("p", "beta");
    await flags.create(admin, "p", everywhere, "f", {});
    await flags.update(admin, "p", inEnvironment("staging"), "f", {
      status: "conditional",
      percentageActors: 25,
      addActors: ["u1"],
      addSegments: ["beta"],
    });
    await flags.update(admin, "p", everywhere, "f", { addActors: ["u9"] });
    const copied = await copier.copy(admin, "p", everywhere, "f", { from: "staging", to: "production" });
    assert.equal(copied.environment, "production");
    assert.equal(copied.status, "conditional");
    assert.equal(copied.percentageActors, 25);
    assert.equal(copied.actorsCount, 1);
    assert.equal(copied.segmentsCount, 1);
    assert.deepEqual(await stores.flags.linksOf(NO_DATABASE, copied.configId), { actors: ["u1"], segments: ["beta"] });
    const last = work.events.at(-1);
    assert.equal(last?.type, "flag.updated");
    assert.deepEqual(
      last?.type === "flag.updated" && {
        copiedFrom: last.after.copiedFrom,
        added: last.after.addedActors,
        removed: last.after.removedActors,
      },
      { copiedFrom: "staging", added: ["u1"], removed: ["u9"] },
    );
    const again = await copier.copy(admin, "p", everywhere, "f", { from: "staging", to: "production" });
    assert.equal(again.revision, copied.revision, "a copy onto the same configuration changes nothing");
  });

  test("from and to must differ; the target's If-Match and protection are checked", async () => {
    const { flags, copier } = setup([{ id: "production", protected: true }, { id: "staging" }]);
    await flags.create(admin, "p", everywhere, "f", {});
    await flags.update(admin, "p", inEnvironment("staging"), "f", { status: "enabled" });
    await refused(copier.copy(admin, "p", everywhere, "f", { from: "staging", to: "staging" }), 400, "invalid_request");
    await refused(
      copier.copy(admin, "p", everywhere, "f", { from: "staging", to: "production" }, '"stale"'),
      412,
      "precondition_failed",
    );
    await refused(
      copier.copy(writer, "p", everywhere, "f", { from: "staging", to: "production" }),
      403,
      "environment_protected",
    );
    await refused(
      copier.copy(admin, "p", everywhere, "f", { from: "staging", to: "qa" }),
      404,
      "environment_not_found",
    );
    assert.equal(
      (await copier.copy(admin, "p", everywhere, "f", { from: "staging", to: "production" })).status,
      "enabled",
    );
  });
});

describe("flag service on fakes: list", () => {
  test("filters, orders and pages as the list's cursors say", async () => {
    const { flags, clock } = setup();
    for (const name of ["delta", "alpha", "charlie", "bravo"]) {
      await flags.create(admin, "p", everywhere, name, { description: name === "charlie" ? "the Beta one" : "" });
      clock.advance(1000);
    }
    const first = await flags.list("p", everywhere, {}, { limit: 2 }, "name", true);
    assert.deepEqual(
      first.data.map((f) => f.name),
      ["alpha", "bravo"],
    );
    assert.equal(first.total, 4);
    const next = await flags.list("p", everywhere, {}, { limit: 2, after: first.pagination.after as string });
    assert.deepEqual(
      next.data.map((f) => f.name),
      ["charlie", "delta"],
    );
    assert.equal(next.pagination.after, null);
    const newest = await flags.list("p", everywhere, {}, { limit: 3 }, "-createdAt");
    assert.deepEqual(
      newest.data.map((f) => f.name),
      ["bravo", "charlie", "alpha"],
    );
    const searched = await flags.list("p", everywhere, { q: "beta" }, {});
    assert.deepEqual(
      searched.data.map((f) => f.name),
      ["charlie"],
    );
    await refused(
      flags.list("p", everywhere, {}, { after: newest.pagination.after as string }, "name"),
      400,
      "invalid_request",
    );
  });
});
