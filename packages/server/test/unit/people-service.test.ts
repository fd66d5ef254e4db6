import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ManualClock } from "@flagstaff/test-harness";
import type { Kysely } from "kysely";
import type { Database } from "../../src/db/schema.js";
import type { Principal } from "../../src/access/principal.js";
import type { WriteContext } from "../../src/write-path/domain-events.js";
import { PeopleState } from "../../src/access/people-state.js";
import { PeopleService } from "../../src/features/people/people.service.js";
import type { Sessions } from "../../src/features/people/sessions.js";
import { FakeUnitOfWork, NO_DATABASE } from "./fakes/fake-unit-of-work.js";
import { MemoryStores } from "./fakes/memory-stores.js";
import { ADMIN, refused } from "./fakes/refused.js";

// The people's service's decisions, on the in-memory fakes of its store and unit of work: people, their
// grants and their personal keys. The HTTP tests (test/people*.test.ts, sessions.test.ts, …) cover the
// same service on real databases.

const adminKey = ADMIN;
const as = (id: string): WriteContext => ({
  ...adminKey,
  actor: { type: "user", id, email: `${id}@example.com`, name: id, via: "session" },
});

function setup() {
  const stores = new MemoryStores();
  stores.addProject("p", [{ id: "production" }, { id: "staging" }]);
  const work = new FakeUnitOfWork(stores);
  const state = new PeopleState();
  const ended: string[] = [];
  const sessions: Pick<Sessions, "endAll" | "endOthers"> = {
    endAll: async (userId) => void ended.push(`all of ${userId}`),
    endOthers: async (userId, keep) => void ended.push(`all of ${userId} but ${keep}`),
  };
  const people = new PeopleService(
    NO_DATABASE as unknown as Kysely<Database>,
    work,
    new ManualClock(),
    state,
    sessions as Sessions,
    stores.people,
  );
  return { stores, work, state, ended, people };
}

/** A session's principal for a person, as authentication makes it. */
const sessionOf = (userId: string): Principal => ({
  keyId: `ses_${userId}`,
  keyName: userId,
  role: "admin",
  projectId: null,
  environment: null,
  userId,
  via: "session",
});

describe("people service on fakes: people", () => {
  test("a person is added as a member by default, by their e-mail as stored; an e-mail taken is a 409", async () => {
    const { people, work } = setup();
    const ada = await people.create(adminKey, { email: "Ada@Example.com", name: "Ada" });
    assert.equal(ada.email, "ada@example.com");
    assert.equal(ada.role, "member");
    assert.equal(ada.hasPassword, false);
    await refused(people.create(adminKey, { email: "ADA@example.com", name: "Other" }), 409, "user_exists");
    assert.deepEqual(
      work.events.map((e) => e.type),
      ["user.created"],
    );
  });

  test("an admin cannot disable, demote or delete themselves", async () => {
    const { people, work } = setup();
    const root = await people.create(adminKey, { email: "root@example.com", name: "Root", role: "admin" });
    await refused(people.update(as(root.id), root.id, { disabled: true }), 409, "cannot_change_self");
    await refused(people.update(as(root.id), root.id, { role: "member" }), 409, "cannot_change_self");
    await refused(people.delete(as(root.id), root.id), 409, "cannot_change_self");
    assert.equal((await people.update(as(root.id), root.id, { name: "Groot" })).name, "Groot");
    assert.equal(work.writes.length, 2);
  });

  test("disabling signs a person out everywhere and revokes their keys; a change to nothing writes nothing", async () => {
    const { people, work, ended, state } = setup();
    const bob = await people.create(adminKey, { email: "bob@example.com", name: "Bob", role: "admin" });
    state.putPerson({ id: bob.id, email: bob.email, name: bob.name, role: "admin", disabled: false });
    const key = await people.createKey(as(bob.id), sessionOf(bob.id), { name: "laptop", role: "admin" } as never);
    await people.update(adminKey, bob.id, { name: "Bob" });
    assert.equal(work.writes.length, 2, "a PATCH that changes nothing is no write");
    const disabled = await people.update(adminKey, bob.id, { disabled: true });
    assert.equal(disabled.disabled, true);
    assert.deepEqual(ended, [`all of ${bob.id}`]);
    assert.deepEqual(
      work.writes.at(-1)?.events.map((e) => [e.type, e.target.id]),
      [
        ["user.updated", bob.id],
        ["key.revoked", key.id],
      ],
    );
    assert.deepEqual((await people.listKeys(bob.id)).data, []);
    await refused(people.update(adminKey, "usr_nobody", { name: "X" }), 404, "user_not_found");
  });

  test("deleting a person takes their grants and revokes their keys", async () => {
    const { people, work } = setup();
    const cy = await people.create(adminKey, { email: "cy@example.com", name: "Cy" });
    await people.grant(adminKey, "p", cy.id, "write");
    await people.delete(adminKey, cy.id);
    assert.deepEqual((await people.listGrants("p")).data, []);
    await refused(people.get(cy.id), 404, "user_not_found");
    assert.equal(work.events.at(-1)?.type, "user.deleted");
  });

  test("setting one's own password needs the current one when there is one, and ends one's other sessions", async () => {
    const { people, ended, stores } = setup();
    const di = await people.create(adminKey, { email: "di@example.com", name: "Di", password: "first password!" });
    await refused(
      people.setOwnPassword(as(di.id), di.id, "s1", { newPassword: "second password!" } as never, async () => ""),
      400,
      "invalid_request",
    );
    let checked = "";
    const after = await people.setOwnPassword(
      as(di.id),
      di.id,
      "s1",
      { currentPassword: "first password!", newPassword: "second password!" } as never,
      async (email, current) => {
        checked = `${email} ${current}`;
        // What a sign-in matched: the hash stored now.
        return stores.tables.users.get(di.id)?.passwordHash as string;
      },
    );
    assert.equal(checked, "di@example.com first password!");
    assert.equal(after.hasPassword, true);
    assert.deepEqual(ended, [`all of ${di.id} but s1`]);
  });
});

describe("people service on fakes: grants", () => {
  test("granting: an unknown project or person is a 404; the same role again writes nothing", async () => {
    const { people, work } = setup();
    const eve = await people.create(adminKey, { email: "eve@example.com", name: "Eve" });
    await refused(people.grant(adminKey, "nope", eve.id, "read"), 404, "project_not_found");
    await refused(people.grant(adminKey, "p", "usr_nobody", "read"), 404, "user_not_found");
    const granted = await people.grant(adminKey, "p", eve.id, "read");
    await people.grant(adminKey, "p", eve.id, "read");
    const raised = await people.grant(adminKey, "p", eve.id, "admin");
    assert.equal(raised.createdAt, granted.createdAt, "a new role keeps the grant's date");
    assert.deepEqual(
      work.events.filter((e) => e.type === "access.granted").map((e) => [e.before, e.after]),
      [
        [null, { role: "read" }],
        [{ role: "read" }, { role: "admin" }],
      ],
    );
    assert.deepEqual(
      (await people.listGrants("p")).data.map((g) => [g.email, g.role]),
      [["eve@example.com", "admin"]],
    );
  });

  test("revoking a grant held is recorded; one not held is a 404", async () => {
    const { people, work } = setup();
    const fay = await people.create(adminKey, { email: "fay@example.com", name: "Fay" });
    await refused(people.revokeGrant(adminKey, "p", fay.id), 404, "grant_not_found");
    await people.grant(adminKey, "p", fay.id, "write");
    await people.revokeGrant(adminKey, "p", fay.id);
    assert.deepEqual(work.events.at(-1)?.before, { role: "write" });
    assert.deepEqual((await people.listGrants("p")).data, []);
  });
});

describe("people service on fakes: personal keys", () => {
  test("a key never holds more than its person: on a project, their grant; with none, an admin's role", async () => {
    const { people, state } = setup();
    const gus = await people.create(adminKey, { email: "gus@example.com", name: "Gus" });
    state.putPerson({ id: gus.id, email: gus.email, name: gus.name, role: "member", disabled: false });
    const mine = sessionOf(gus.id);
    await refused(
      people.createKey(as(gus.id), mine, { name: "k", role: "read", project: "p" } as never),
      404,
      "project_not_found",
    );
    state.putGrant(gus.id, "p", "write");
    await refused(
      people.createKey(as(gus.id), mine, { name: "k", role: "admin", project: "p", environment: null } as never),
      403,
      "forbidden",
    );
    await refused(people.createKey(as(gus.id), mine, { name: "k", role: "admin" } as never), 403, "forbidden");
    const key = await people.createKey(as(gus.id), mine, { name: "k", role: "write", project: "p" } as never);
    assert.equal(key.environment, "production", "no environment named: the project's default");
    assert.equal(key.projectId, "p");
    assert.match(key.key, /./);
  });

  test("shapes refused before anything is read: an environment without its project, a read key of every environment", async () => {
    const { people, work } = setup();
    const hal = await people.create(adminKey, { email: "hal@example.com", name: "Hal" });
    const mine = sessionOf(hal.id);
    await refused(
      people.createKey(as(hal.id), mine, { name: "k", environment: "staging" } as never),
      400,
      "invalid_request",
    );
    await refused(
      people.createKey(as(hal.id), mine, { name: "k", role: "read", project: "p", environment: null } as never),
      400,
      "invalid_request",
    );
    assert.equal(work.writes.length, 1);
  });

  test("a person revokes only their own keys", async () => {
    const { people, state } = setup();
    const ivy = await people.create(adminKey, { email: "ivy@example.com", name: "Ivy", role: "admin" });
    state.putPerson({ id: ivy.id, email: ivy.email, name: ivy.name, role: "admin", disabled: false });
    const key = await people.createKey(as(ivy.id), sessionOf(ivy.id), { name: "k", role: "write" } as never);
    await refused(people.revokeKey(as("usr_other"), "usr_other", key.id), 404, "key_not_found");
    await people.revokeKey(as(ivy.id), ivy.id, key.id);
    assert.deepEqual((await people.listKeys(ivy.id)).data, []);
  });
});
