import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, type FreshDatabase, freshDatabase } from "@flagstaff/test-harness";
import type { Kysely, Transaction } from "kysely";
import { loadConfig } from "../../src/kernel/config.js";
import { type DatabaseHandle, isUniqueViolation, openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import type { Database } from "../../src/db/schema.js";
import type { AppError } from "../../src/kernel/errors.js";
import { environmentRepository } from "../../src/features/environments/environment.repository.js";
import type { Environment } from "../../src/features/environments/environment.schemas.js";
import type { EnvironmentStore } from "../../src/features/environments/environment.store.js";
import { flagOrder } from "../../src/features/flags/flag-list.repository.js";
import { configIdOf, flagRepository } from "../../src/features/flags/flag.repository.js";
import type { Flag } from "../../src/features/flags/flag.schemas.js";
import type { FlagStore } from "../../src/features/flags/flag.store.js";
import { peopleRepository } from "../../src/features/people/people.repository.js";
import type { PeopleStore, UserRow } from "../../src/features/people/people.store.js";
import { insertProject } from "../../src/features/projects/project.repository.js";
import { insertSegment } from "../../src/features/segments/segment.repository.js";
import { NO_DATABASE } from "./fakes/fake-unit-of-work.js";
import { MemoryStores } from "./fakes/memory-stores.js";

// The stores' contract: the same cases run on the in-memory fakes the services' unit tests use and on the
// Kysely implementations, on SQLite and (when the run has it) PostgreSQL, so that the fakes cannot drift
// from what the databases do. A case asserts what the store answers, never how it is done.

type Executor = Kysely<Database> | Transaction<Database>;

/** One implementation of the three stores, with what the cases need around them. */
interface Subject {
  readonly flags: FlagStore;
  readonly environments: EnvironmentStore;
  readonly people: PeopleStore;
  /** What reads run on outside a write. */
  readonly db: Executor;
  /** Runs `fn` as one write (a transaction on a database). */
  write<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /** A project with these environments, the first the default, as the projects' service makes it. */
  addProject(id: string, environments: readonly { id: string; protected?: boolean }[]): Promise<void>;
  addSegment(projectId: string, id: string): Promise<void>;
  close(): Promise<void>;
}

const AT = "2026-01-01T00:00:00.000Z";
const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`;

function memorySubject(): Subject {
  const stores = new MemoryStores();
  return {
    flags: stores.flags,
    environments: stores.environments,
    people: stores.people,
    db: NO_DATABASE,
    write: (fn) => fn(NO_DATABASE),
    addProject: async (id, environments) => stores.addProject(id, environments, AT),
    addSegment: async (projectId, id) => stores.addSegment(projectId, id),
    close: async () => {},
  };
}

async function databaseSubject(fresh: FreshDatabase): Promise<Subject> {
  const handle: DatabaseHandle = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
  await migrateToLatest(handle);
  const write = <T>(fn: (trx: Transaction<Database>) => Promise<T>) => handle.db.transaction().execute(fn);
  return {
    flags: flagRepository,
    environments: environmentRepository,
    people: peopleRepository,
    db: handle.db,
    write,
    addProject: (id, environments) =>
      write(async (trx) => {
        await insertProject(trx, { id, name: id, createdAt: AT });
        for (const [index, e] of environments.entries()) {
          await environmentRepository.insertEnvironment(trx, environment(id, e.id, index === 0, e.protected));
        }
      }),
    addSegment: (projectId, id) =>
      write((trx) =>
        insertSegment(trx, {
          id,
          projectId,
          name: id,
          description: "",
          createdAt: AT,
          nextActorSeq: 1,
          revision: 1,
          actorsCount: 0,
          conditions: [],
        }),
      ),
    close: async () => {
      await handle.close();
      await fresh.drop();
    },
  };
}

const environment = (projectId: string, id: string, isDefault = false, protect = false): Environment => ({
  id,
  projectId,
  name: id,
  description: "",
  default: isDefault,
  protected: protect,
  requiredApprovals: 0,
  allowSelfApproval: false,
  createdAt: AT,
  updatedAt: AT,
});

/** A new flag as the service makes it (boolean, disabled), shown in `environment`. */
function newFlag(projectId: string, name: string, environment: string, createdAt = AT, description = ""): Flag {
  const id = `flg_${projectId}_${name}`;
  return {
    id,
    projectId,
    name,
    description,
    status: "disabled",
    percentageActors: 0,
    percentageCalls: 0,
    createdAt,
    updatedAt: createdAt,
    latestCheckedAt: null,
    statusChangedAt: createdAt,
    actorsCount: 0,
    segmentsCount: 0,
    environment,
    environments: {},
    revision: 1,
    configId: configIdOf(id, environment),
    plan: null,
    kind: "release",
    permanent: false,
    stale: false,
    staleReason: null,
    staleSince: null,
    archived: false,
    archivedAt: null,
    type: "boolean",
    variants: [
      { key: "on", value: true },
      { key: "off", value: false },
    ],
    onVariant: "on",
    offVariant: "off",
    rules: [],
    prerequisites: [],
  } as Flag;
}

const user = (id: string, email: string, createdAt = AT): UserRow => ({
  id,
  email,
  name: id,
  role: "member",
  disabled: false,
  createdAt,
  lastSignInAt: null,
  hasPassword: false,
  passwordHash: null,
});

async function rejectsUnique(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (error) => isUniqueViolation(error));
}

const subjects: [string, () => Promise<Subject>][] = [
  ["in-memory fake", async () => memorySubject()],
  ...DIALECTS.map((dialect): [string, () => Promise<Subject>] => [
    `Kysely on ${dialect}`,
    async () => databaseSubject(await freshDatabase(dialect)),
  ]),
];

for (const [name, make] of subjects) {
  describe(`store contract: ${name}`, () => {
    let s: Subject;
    before(async () => {
      s = await make();
      await s.addProject("p", [{ id: "production" }, { id: "staging", protected: true }]);
      await s.addProject("q", [{ id: "main" }]);
      await s.addSegment("p", "beta");
    });
    after(async () => {
      await s.close();
    });

    test("environments: in order, the default, resolving, protection, moving and clearing the default", async () => {
      const ids = async () => (await s.environments.listPlacedEnvironments(s.db, "p")).map((e) => e.environment.id);
      assert.deepEqual(await ids(), ["production", "staging"]);
      assert.equal(await s.environments.resolveEnvironment(s.db, "p", null), "production");
      assert.equal(await s.environments.resolveEnvironment(s.db, "p", "staging"), "staging");
      await assert.rejects(
        s.environments.resolveEnvironment(s.db, "p", "qa"),
        (e: AppError) => e.code === "environment_not_found",
      );
      await assert.rejects(
        s.environments.resolveEnvironment(s.db, "x", "qa"),
        (e: AppError) => e.code === "project_not_found",
      );
      await assert.rejects(
        s.environments.resolveEnvironment(s.db, "x", null),
        (e: AppError) => e.code === "project_not_found",
      );
      assert.deepEqual(await s.environments.protectedAmong(s.db, "p", ["staging", "production", "qa"]), ["staging"]);
      assert.deepEqual(await s.environments.protectedAmong(s.db, "p", []), []);
      assert.equal(await s.environments.countEnvironments(s.db, "p"), 2);
      assert.equal((await s.environments.findProject(s.db, "p"))?.id, "p");
      assert.equal(await s.environments.findProject(s.db, "x"), undefined);

      await s.write((trx) => s.environments.insertEnvironment(trx, environment("p", "qa")));
      await rejectsUnique(s.write((trx) => s.environments.insertEnvironment(trx, environment("p", "qa"))));
      assert.deepEqual(await ids(), ["production", "staging", "qa"]);
      await s.write((trx) => s.environments.reorderEnvironments(trx, "p", ["qa", "production", "staging"]));
      assert.deepEqual(await ids(), ["qa", "production", "staging"]);
      const positions = (await s.environments.listPlacedEnvironments(s.db, "p")).map((e) => e.position);
      assert.deepEqual(positions, [4, 5, 6]);
      await s.write(async (trx) => {
        await s.environments.clearDefault(trx, "p", at(5));
        await s.environments.saveEnvironment(trx, { ...environment("p", "staging", true, true), updatedAt: at(5) });
      });
      const all = await s.environments.listEnvironments(s.db, "p");
      assert.deepEqual(
        all.map((e) => [e.id, e.default, e.updatedAt]),
        [
          ["qa", false, AT],
          ["production", false, at(5)],
          ["staging", true, at(5)],
        ],
      );
      await s.write(async (trx) => {
        await s.environments.clearDefault(trx, "p", AT);
        await s.environments.saveEnvironment(trx, environment("p", "production", true));
        await s.environments.deleteEnvironment(trx, "p", "qa");
      });
      assert.equal(await s.environments.findEnvironment(s.db, "p", "qa"), undefined);
      assert.equal((await s.environments.findEnvironment(s.db, "p", "production"))?.default, true);
    });

    test("flags: a new flag in every environment, found by name, a name taken refused", async () => {
      const flag = newFlag("p", "alpha", "production", at(1), "First");
      await s.write((trx) => s.flags.insertFlag(trx, flag, ["production", "staging"]));
      assert.deepEqual(await s.flags.findFlag(s.db, "p", "production", "alpha"), flag);
      const staged = await s.flags.findFlag(s.db, "p", "staging", "alpha");
      assert.equal(staged?.configId, configIdOf(flag.id, "staging"));
      assert.equal(await s.flags.findFlag(s.db, "q", "main", "alpha"), undefined);
      await rejectsUnique(
        s.write((trx) => s.flags.insertFlag(trx, { ...flag, id: "flg_other" }, ["production", "staging"])),
      );
      const configurations = await s.flags.configurationsOf(s.db, [flag.id, "flg_none"]);
      assert.deepEqual([...configurations.keys()], [flag.id]);
      assert.deepEqual(Object.keys(configurations.get(flag.id) ?? {}), ["production", "staging"]);
      assert.deepEqual(
        (await s.flags.findFlagsByNames(s.db, "p", "staging", ["alpha", "zeta"])).map((f) => f.name),
        ["alpha"],
      );
    });

    test("flags: a configuration saved, a description moving every other configuration, links", async () => {
      const flag = newFlag("p", "bravo", "production", at(2));
      await s.write((trx) => s.flags.insertFlag(trx, flag, ["production", "staging"]));
      const next: Flag = {
        ...flag,
        description: "Second",
        status: "conditional",
        percentageActors: 25,
        updatedAt: at(3),
        statusChangedAt: at(3),
        revision: 2,
        actorsCount: 2,
        segmentsCount: 1,
      };
      await s.write(async (trx) => {
        await s.flags.saveConfiguration(trx, next);
        await s.flags.saveDescription(trx, next);
        await s.flags.ensureActors(trx, "p", ["u1", "u2"], at(3));
        await s.flags.attachActors(trx, next, ["u1", "u2"], at(3));
        await s.flags.attachSegments(trx, next.configId, ["beta"], at(3));
      });
      assert.deepEqual(await s.flags.findFlag(s.db, "p", "production", "bravo"), next);
      const other = await s.flags.findFlag(s.db, "p", "staging", "bravo");
      assert.deepEqual(
        [other?.description, other?.revision, other?.updatedAt, other?.status],
        ["Second", 2, at(3), "disabled"],
      );
      assert.deepEqual(await s.flags.attachedActors(s.db, next.configId, ["u1", "u3"]), new Set(["u1"]));
      assert.deepEqual(await s.flags.attachedSegments(s.db, next.configId, ["beta"]), new Set(["beta"]));
      const links = await s.flags.linksOf(s.db, next.configId);
      assert.deepEqual([links.actors.sort(), links.segments], [["u1", "u2"], ["beta"]]);
      const page = await s.flags.listFlagActors(s.db, next.configId, "U2", { limit: 10, direction: "first" });
      assert.deepEqual(page.data, [{ actorId: "u2", addedAt: at(3) }]);
      await s.write(async (trx) => {
        await s.flags.detachActors(trx, next.configId, ["u1"]);
        await s.flags.detachSegments(trx, next.configId, ["beta"]);
      });
      assert.deepEqual(await s.flags.linksOf(s.db, next.configId), { actors: ["u2"], segments: [] });
      assert.deepEqual(await s.flags.existingSegmentIds(s.db, "p", ["beta", "gamma"]), new Set(["beta"]));
      assert.equal(await s.flags.segmentExists(s.db, "q", "beta"), false);
      assert.deepEqual(await s.flags.segmentNames(s.db, "p", ["beta"]), new Map([["beta", "beta"]]));
    });

    test("flags: variants pinned, changed and in use", async () => {
      const colour = {
        ...newFlag("p", "colour", "production", at(4)),
        type: "string",
        variants: [
          { key: "red", value: "r" },
          { key: "blue", value: "b" },
        ],
        onVariant: "red",
        offVariant: "blue",
      } as Flag;
      const other = newFlag("p", "other", "staging", at(4));
      await s.write(async (trx) => {
        await s.flags.insertFlag(trx, colour, ["production", "staging"]);
        await s.flags.insertFlag(trx, other, ["production", "staging"]);
        await s.flags.saveConfiguration(trx, { ...other, prerequisites: [{ flag: "colour", variants: ["blue"] }] });
        await s.flags.pinDefaultVariants(trx, colour.id, { onVariant: "red", offVariant: "blue" });
        await s.flags.saveVariants(trx, {
          ...colour,
          variants: [
            { key: "blue", value: "b" },
            { key: "red", value: "R" },
          ],
          updatedAt: at(5),
        });
      });
      const staged = await s.flags.findFlag(s.db, "p", "staging", "colour");
      assert.deepEqual([staged?.onVariant, staged?.offVariant, staged?.revision], ["red", "blue", 2]);
      assert.deepEqual(await s.flags.environmentsServing(s.db, colour.id, new Set(["red"])), ["production", "staging"]);
      assert.deepEqual(await s.flags.environmentsServing(s.db, colour.id, new Set(["green"])), []);
      const uses = await s.flags.variantUses(s.db, "p", colour, new Set(["blue"]), {
        environment: "production",
        targeting: { onVariant: "red", offVariant: "red", rules: [] },
      });
      assert.deepEqual(uses, [
        'offVariant is "blue" in environment "staging"',
        'flag "other" requires "blue" in environment "staging"',
      ]);
      const targeting = await s.flags.targetingIn(s.db, "p", "staging");
      assert.deepEqual(targeting.find((t) => t.name === "other")?.prerequisites, [
        { flag: "colour", variants: ["blue"] },
      ]);
    });

    test("flags: the list's filters, orders, pages and count", async () => {
      const names = ["d_1", "d%2", "D-3", "e"];
      await s.write(async (trx) => {
        for (const [i, n] of names.entries()) {
          await s.flags.insertFlag(trx, newFlag("q", n, "main", at(10 + i), n === "e" ? "50% off" : ""), ["main"]);
        }
      });
      const list = async (filter: object, sort = "name" as const) =>
        (await s.flags.listFlags(s.db, "q", "main", filter, { limit: 10, direction: "first" }, flagOrder(sort))).map(
          (f) => f.name,
        );
      assert.deepEqual(await list({}), ["D-3", "d%2", "d_1", "e"]);
      assert.deepEqual(await list({ name: "d_" }), ["d_1"]);
      assert.deepEqual(await list({ name: "D%" }), ["d%2"]);
      assert.deepEqual(await list({ q: "% OFF" }), ["e"]);
      assert.deepEqual(await list({ status: "enabled" }), []);
      assert.deepEqual(await list({}, "-createdAt" as never), ["e", "D-3", "d%2", "d_1"]);
      const order = flagOrder("-createdAt");
      const second = await s.flags.listFlags(
        s.db,
        "q",
        "main",
        {},
        { limit: 1, direction: "after", key: [at(12), "D-3"] },
        order,
      );
      assert.deepEqual(
        second.map((f) => f.name),
        ["d%2", "d_1"],
      );
      const back = await s.flags.listFlags(s.db, "q", "main", {}, { limit: 5, direction: "before", key: ["d_1"] });
      assert.deepEqual(
        back.map((f) => f.name),
        ["d%2", "D-3"],
      );
      assert.equal(await s.flags.flagsBeyond(s.db, "q", "main", {}, "after", ["e"]), false);
      assert.equal(await s.flags.flagsBeyond(s.db, "q", "main", {}, "before", ["d%2"]), true);
      assert.equal(await s.flags.countFlags(s.db, "q", "main", { name: "d" }), 3);
    });

    test("environments: a new one's configurations, empty or copied, and what deleting one takes", async () => {
      const flag = newFlag("q", "copied", "main", at(20));
      await s.write(async (trx) => {
        await s.flags.insertFlag(trx, flag, ["main"]);
        await s.flags.saveConfiguration(trx, { ...flag, status: "conditional", percentageActors: 50, actorsCount: 1 });
        await s.flags.ensureActors(trx, "q", ["u"], at(20));
        await s.flags.attachActors(trx, flag, ["u"], at(20));
        await s.environments.insertEnvironment(trx, environment("q", "copy"));
        await s.environments.insertEnvironmentConfigurations(trx, "q", "copy", "main", at(21));
        await s.environments.insertEnvironment(trx, environment("q", "empty"));
        await s.environments.insertEnvironmentConfigurations(trx, "q", "empty", undefined, at(21));
      });
      const copy = await s.flags.findFlag(s.db, "q", "copy", "copied");
      assert.deepEqual(
        [
          copy?.status,
          copy?.percentageActors,
          copy?.actorsCount,
          copy?.revision,
          copy?.updatedAt,
          copy?.latestCheckedAt,
        ],
        ["conditional", 50, 1, 1, at(21), null],
      );
      assert.deepEqual(
        await s.flags.listFlagActors(s.db, configIdOf(flag.id, "copy"), undefined, { limit: 5, direction: "first" }),
        {
          data: [{ actorId: "u", addedAt: at(21) }],
          pagination: { before: null, after: null },
        },
      );
      const empty = await s.flags.findFlag(s.db, "q", "empty", "copied");
      assert.deepEqual([empty?.status, empty?.actorsCount, empty?.statusChangedAt], ["disabled", 0, at(21)]);
      await s.write((trx) =>
        s.people.insertKey(
          trx,
          {
            id: "key_copy",
            name: "copy reader",
            role: "read",
            projectId: "q",
            environment: "copy",
            createdAt: AT,
          } as never,
          "hash-copy",
          null,
        ),
      );
      assert.deepEqual(await s.environments.keysOf(s.db, "q", "copy"), [
        { id: "key_copy", name: "copy reader", role: "read" },
      ]);
      await s.write(async (trx) => {
        await s.environments.deleteKeysOf(trx, "q", "copy");
        await s.environments.deleteEnvironment(trx, "q", "copy");
      });
      assert.deepEqual(await s.environments.keysOf(s.db, "q", "copy"), []);
      assert.equal(await s.flags.findFlag(s.db, "q", "copy", "copied"), undefined);
      assert.deepEqual(await s.flags.linksOf(s.db, configIdOf(flag.id, "copy")), { actors: [], segments: [] });
      assert.deepEqual(Object.keys((await s.flags.configurationsOf(s.db, [flag.id])).get(flag.id) ?? {}), [
        "main",
        "empty",
      ]);
      await s.write((trx) => s.flags.deleteFlag(trx, flag.id));
      assert.equal(await s.flags.findFlag(s.db, "q", "main", "copied"), undefined);
    });

    test("people: by e-mail, a unique e-mail, changes, grants by e-mail, keys, and what deleting takes", async () => {
      await s.write(async (trx) => {
        await s.people.insertUser(trx, user("usr_b", "bea@example.com", at(1)));
        await s.people.insertUser(trx, user("usr_a", "al@example.com", at(2)));
      });
      await rejectsUnique(s.write((trx) => s.people.insertUser(trx, user("usr_c", "bea@example.com"))));
      assert.equal((await s.people.findUserByEmail(s.db, "BEA@example.com"))?.id, "usr_b");
      await s.people.updateUser(s.db, "usr_b", { role: "admin", passwordHash: "h", lastSignInAt: at(3) });
      const bea = await s.people.findUser(s.db, "usr_b");
      assert.deepEqual(
        [bea?.role, bea?.hasPassword, bea?.passwordHash, bea?.lastSignInAt],
        ["admin", true, "h", at(3)],
      );
      await s.people.updateUser(s.db, "usr_b", {});
      const firstPage = await s.people.listUsers(s.db, { limit: 1, direction: "first" });
      assert.deepEqual(
        firstPage.map((u) => u.id),
        ["usr_b", "usr_a"],
      );
      assert.equal(await s.people.usersBeyond(s.db, "after", [at(1), "usr_b"]), true);
      assert.equal(await s.people.usersBeyond(s.db, "before", [at(1), "usr_b"]), false);

      await s.write(async (trx) => {
        await s.people.putGrant(trx, { projectId: "p", userId: "usr_b", role: "read", createdAt: at(4) }, false);
        await s.people.putGrant(trx, { projectId: "p", userId: "usr_a", role: "write", createdAt: at(4) }, false);
        await s.people.putGrant(trx, { projectId: "p", userId: "usr_b", role: "admin", createdAt: at(9) }, true);
      });
      assert.deepEqual(await s.people.findGrant(s.db, "p", "usr_b"), { role: "admin", created_at: at(4) });
      assert.deepEqual(
        (await s.people.listGrants(s.db, "p")).map((g) => [g.email, g.role]),
        [
          ["al@example.com", "write"],
          ["bea@example.com", "admin"],
        ],
      );
      const key = (id: string, createdAt: string) =>
        ({ id, name: id, role: "write", projectId: "p", environment: "production", createdAt }) as never;
      await s.write(async (trx) => {
        await s.people.insertKey(trx, key("key_2", at(6)), "hash-2", "usr_b");
        await s.people.insertKey(trx, key("key_1", at(5)), "hash-1", "usr_b");
        await s.people.insertKey(trx, key("key_3", at(5)), "hash-3", "usr_a");
      });
      assert.deepEqual(
        (await s.people.listPersonalKeys(s.db, "usr_b")).map((k) => [k.id, k.project_id, k.environment_id]),
        [
          ["key_1", "p", "production"],
          ["key_2", "p", "production"],
        ],
      );
      assert.equal(await s.write((trx) => s.people.deletePersonalKey(trx, "usr_a", "key_1")), undefined);
      assert.deepEqual(await s.write((trx) => s.people.deletePersonalKey(trx, "usr_b", "key_1")), {
        id: "key_1",
        name: "key_1",
        role: "write",
        project_id: "p",
        environment_id: "production",
      });
      await s.write(async (trx) => {
        await s.people.deleteGrant(trx, "p", "usr_a");
        await s.people.deletePersonalKeys(trx, "usr_a");
        await s.people.deleteUser(trx, "usr_b");
      });
      assert.deepEqual(
        (await s.people.listGrants(s.db, "p")).map((g) => g.userId),
        [],
      );
      assert.deepEqual(await s.people.listPersonalKeys(s.db, "usr_b"), []);
      assert.deepEqual(await s.people.listPersonalKeys(s.db, "usr_a"), []);
      assert.equal(await s.people.findUser(s.db, "usr_b"), undefined);
    });
  });
}
