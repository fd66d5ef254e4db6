// People (docs/people.md): the users API, project access, whoami for a person, and the history and webhook
// payloads naming the person who made a change. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  type ReceivedWebhook,
  startServer,
  type TestServer,
  waitFor,
  WebhookReceiver,
  withDeadline,
} from "@flagstaff/test-harness";
import {
  asKey,
  asSession,
  createPerson,
  grant,
  PASSWORD,
  personalKey,
  rowCounts,
  signIn,
  uniqueEmail,
} from "./helpers/people.js";

const USER_ID = /^usr_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The JSON payload of a webhook delivery. */
const payloadOf = (r: ReceivedWebhook) => JSON.parse(r.body) as Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`people [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
    });
    after(() => server.close());

    /** An admin person and their session. */
    async function adminPerson() {
      const person = await createPerson(server, { role: "admin" });
      return { person, cookie: await signIn(server, person.email) };
    }

    /** A member with a grant on a project (none when `role` is undefined), and their session. */
    async function member(project?: string, role?: "admin" | "write" | "read") {
      const person = await createPerson(server);
      if (project !== undefined && role !== undefined) await grant(server, project, person.id, role);
      return { person, cookie: await signIn(server, person.email) };
    }

    const whoami = (options: Parameters<TestServer["request"]>[2]) => server.request("GET", "/whoami", options);

    describe("the users API", () => {
      test("the admin key creates, reads, changes, lists and deletes a person", async () => {
        const email = uniqueEmail("crud");
        const created = await server.request("POST", "/users", { body: { email, name: "Crud Person" } });
        assert.equal(created.status, 201, created.text);
        const user = created.body;
        assert.match(user.id, USER_ID);
        assert.deepEqual(
          { ...user, id: "", createdAt: "" },
          {
            id: "",
            email,
            name: "Crud Person",
            role: "member",
            disabled: false,
            createdAt: "",
            lastSignInAt: null,
            hasPassword: false,
          },
        );
        assert.ok(!Number.isNaN(Date.parse(user.createdAt)));
        assert.ok(!("passwordHash" in user) && !created.text.includes("scrypt"), "nothing of a password is shown");

        assert.deepEqual((await server.request("GET", `/users/${user.id}`)).body, user);
        const changed = await server.request("PATCH", `/users/${user.id}`, {
          body: { name: "Renamed", role: "admin", password: PASSWORD },
        });
        assert.equal(changed.status, 200, changed.text);
        assert.deepEqual(changed.body, { ...user, name: "Renamed", role: "admin", hasPassword: true });
        assert.deepEqual((await server.request("GET", `/users/${user.id}`)).body, changed.body);
        const listed = await server.request("GET", "/users?limit=100");
        assert.equal(listed.status, 200);
        assert.deepEqual(
          listed.body.data.find((u: { id: string }) => u.id === user.id),
          changed.body,
        );

        const removed = await server.request("DELETE", `/users/${user.id}`);
        assert.equal(removed.status, 204, removed.text);
        expectProblem(await server.request("GET", `/users/${user.id}`), 404, "user_not_found");
        expectProblem(
          await server.request("PATCH", `/users/${user.id}`, { body: { name: "x" } }),
          404,
          "user_not_found",
        );
        expectProblem(await server.request("DELETE", `/users/${user.id}`), 404, "user_not_found");
        expectProblem(await server.request("GET", "/users/usr_nobody"), 404, "user_not_found");
      });

      test("an admin person manages people; a member is refused 403, by session and by personal key", async () => {
        const admin = await adminPerson();
        const created = await server.request(
          "POST",
          "/users",
          asSession(admin.cookie, { body: { email: uniqueEmail("by-admin"), name: "By Admin", role: "member" } }),
        );
        assert.equal(created.status, 201, created.text);
        const id = created.body.id;
        assert.equal((await server.request("GET", "/users", asSession(admin.cookie))).status, 200);
        assert.equal(
          (await server.request("PATCH", `/users/${id}`, asSession(admin.cookie, { body: { name: "N" } }))).status,
          200,
        );
        // An admin's key of no project holds admin: it manages people too.
        const adminKey = await personalKey(server, admin.cookie, { role: "admin" });
        assert.equal((await server.request("GET", `/users/${id}`, asKey(adminKey.key))).status, 200);
        // But sets no password, which would be a sign-in outliving the key: that takes a session.
        const byKey = uniqueEmail("by-key");
        const withPassword = await server.request(
          "POST",
          "/users",
          asKey(adminKey.key, { body: { email: byKey, name: "By Key", password: PASSWORD } }),
        );
        expectProblem(withPassword, 403, "forbidden");
        assert.match(withPassword.body.detail, /personal key cannot set a password/);
        const listed = await server.request("GET", "/users?limit=100", asSession(admin.cookie));
        assert.equal(
          listed.body.data.some((u: { email: string }) => u.email === byKey),
          false,
          "nobody was added",
        );
        expectProblem(
          await server.request("PATCH", `/users/${id}`, asKey(adminKey.key, { body: { password: PASSWORD } })),
          403,
          "forbidden",
        );
        expectProblem(
          await server.request("PATCH", `/users/${id}`, asKey(adminKey.key, { body: { password: null } })),
          403,
          "forbidden",
        );
        const renamed = await server.request("PATCH", `/users/${id}`, asKey(adminKey.key, { body: { name: "K" } }));
        assert.equal(renamed.status, 200, renamed.text);
        assert.equal(renamed.body.name, "K");

        const project = await createProject(server);
        const m = await member(project, "admin");
        const memberKey = await personalKey(server, m.cookie, { project, role: "admin" });
        for (const options of [asSession(m.cookie), asKey(memberKey.key)]) {
          expectProblem(await server.request("GET", "/users", options), 403, "forbidden");
          expectProblem(await server.request("GET", `/users/${id}`, options), 403, "forbidden");
          expectProblem(
            await server.request("POST", "/users", { ...options, body: { email: uniqueEmail(), name: "No" } }),
            403,
            "forbidden",
          );
          expectProblem(
            await server.request("PATCH", `/users/${id}`, { ...options, body: { role: "admin" } }),
            403,
            "forbidden",
          );
          expectProblem(await server.request("DELETE", `/users/${id}`, options), 403, "forbidden");
          // Nor may they make themselves admin.
          expectProblem(
            await server.request("PATCH", `/users/${m.person.id}`, { ...options, body: { role: "admin" } }),
            403,
            "forbidden",
          );
        }
        assert.equal((await server.request("GET", `/users/${m.person.id}`)).body.role, "member");
        assert.equal((await server.request("DELETE", `/users/${id}`, asSession(admin.cookie))).status, 204);
      });

      test("bodies are validated: e-mail, name, role, password length, unknown fields, JSON", async () => {
        const bad: unknown[] = [
          { email: "not-an-email", name: "X" },
          { email: "two@@example.com", name: "X" },
          { email: "spa ce@example.com", name: "X" },
          { email: `${"a".repeat(250)}@example.com`, name: "X" },
          { name: "No e-mail" },
          { email: uniqueEmail() },
          { email: uniqueEmail(), name: "" },
          { email: uniqueEmail(), name: "X", role: "owner" },
          { email: uniqueEmail(), name: "X", password: "elevenchars" },
          { email: uniqueEmail(), name: "X", password: "p".repeat(257) },
          { email: uniqueEmail(), name: "X", passwordHash: "scrypt$..." },
          { email: uniqueEmail(), name: "X", disabled: true },
        ];
        for (const body of bad) {
          expectProblem(await server.request("POST", "/users", { body }), 400, "invalid_request");
        }
        expectProblem(
          await server.request("POST", "/users", {
            rawBody: '{"email": "x@example.com",',
            headers: { "content-type": "application/json" },
            conformance: false,
          }),
          400,
          "invalid_request",
        );
        // The edges of the password's length are allowed.
        for (const password of ["p".repeat(12), "p".repeat(256)]) {
          const res = await server.request("POST", "/users", { body: { email: uniqueEmail(), name: "E", password } });
          assert.equal(res.status, 201, res.text);
          assert.equal(res.body.hasPassword, true);
        }

        const person = await createPerson(server);
        const badUpdates: unknown[] = [
          { email: "new@example.com" },
          { role: "owner" },
          { disabled: "yes" },
          { password: "short" },
          { password: "p".repeat(257) },
          { name: "" },
          { id: "usr_other" },
        ];
        for (const body of badUpdates) {
          expectProblem(await server.request("PATCH", `/users/${person.id}`, { body }), 400, "invalid_request");
        }
        expectProblem(
          await server.request("PATCH", `/users/${person.id}`, {
            rawBody: "{nope",
            headers: { "content-type": "application/json" },
            conformance: false,
          }),
          400,
          "invalid_request",
        );
        assert.deepEqual((await server.request("GET", `/users/${person.id}`)).body, person, "nothing changed");
      });

      test("PATCH with {} or no body changes nothing: 200 with the person as they were, and no event", async () => {
        const person = await createPerson(server);
        const before = await rowCounts(server, ["users", "events"]);
        for (const options of [{ body: {} }, {}]) {
          const res = await server.request("PATCH", `/users/${person.id}`, options);
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.body, person);
        }
        // A name set to the one it has is no change either.
        const same = await server.request("PATCH", `/users/${person.id}`, { body: { name: person.name } });
        assert.deepEqual(same.body, person);
        assert.deepEqual(await rowCounts(server, ["users", "events"]), before, "nothing written");
        assert.deepEqual((await server.request("GET", `/users/${person.id}`)).body, person);
        expectProblem(await server.request("PATCH", "/users/usr_nobody", { body: {} }), 404, "user_not_found");
      });

      test("an e-mail is taken case-insensitively (409 user_exists) and stored in lower case", async () => {
        const local = uniqueEmail("Case").split("@")[0];
        const first = await server.request("POST", "/users", { body: { email: `${local}@Example.COM`, name: "A" } });
        assert.equal(first.status, 201, first.text);
        assert.equal(first.body.email, `${local}@example.com`.toLowerCase());
        for (const email of [`${local}@example.com`, `${local?.toUpperCase()}@EXAMPLE.com`]) {
          expectProblem(await server.request("POST", "/users", { body: { email, name: "B" } }), 409, "user_exists");
        }
        // Signing in is case-insensitive too.
        await server.request("PATCH", `/users/${first.body.id}`, { body: { password: PASSWORD } });
        await signIn(server, `${local?.toUpperCase()}@EXAMPLE.COM`);
      });

      test("GET /users pages oldest first, with cursors both ways and bounds on limit", async () => {
        // A server of its own, so the list holds exactly these.
        const own = await startServer({ dialect });
        try {
          const ids: string[] = [];
          for (let i = 0; i < 5; i++) {
            ids.push((await createPerson(own, { email: `page-${i}@example.com`, password: null })).id);
          }
          const all = await own.request("GET", "/users");
          assert.deepEqual(
            all.body.data.map((u: { id: string }) => u.id),
            ids,
          );
          assert.deepEqual(all.body.pagination, { before: null, after: null });

          const seen: string[] = [];
          let page = await own.request("GET", "/users?limit=2");
          assert.equal(page.body.pagination.before, null);
          for (;;) {
            seen.push(...page.body.data.map((u: { id: string }) => u.id));
            if (page.body.pagination.after === null) break;
            page = await own.request("GET", `/users?limit=2&after=${encodeURIComponent(page.body.pagination.after)}`);
            assert.notEqual(page.body.pagination.before, null);
          }
          assert.deepEqual(seen, ids);
          assert.equal(page.body.data.length, 1, "the last page holds the fifth");
          const back = await own.request(
            "GET",
            `/users?limit=2&before=${encodeURIComponent(page.body.pagination.before)}`,
          );
          assert.deepEqual(
            back.body.data.map((u: { id: string }) => u.id),
            ids.slice(2, 4),
          );
          assert.deepEqual((await own.request("GET", "/users?limit=100")).body.data.length, 5);
          assert.deepEqual((await own.request("GET", "/users?limit=1")).body.data.length, 1);

          for (const query of ["limit=0", "limit=101", "limit=two", "after=garbage", "before=x&after=y", "sort=name"]) {
            expectProblem(await own.request("GET", `/users?${query}`), 400, "invalid_request");
          }
        } finally {
          await own.close();
        }
      });
    });

    describe("what changes a person's access", () => {
      test("an admin cannot disable, demote or delete themselves (409 cannot_change_self), by session or key", async () => {
        const { person, cookie } = await adminPerson();
        const key = await personalKey(server, cookie, { role: "admin" });
        for (const options of [asSession(cookie), asKey(key.key)]) {
          for (const body of [{ disabled: true }, { role: "member" }, { disabled: true, name: "x" }]) {
            expectProblem(
              await server.request("PATCH", `/users/${person.id}`, { ...options, body }),
              409,
              "cannot_change_self",
            );
          }
          expectProblem(await server.request("DELETE", `/users/${person.id}`, options), 409, "cannot_change_self");
        }
        const me = await server.request("GET", `/users/${person.id}`);
        assert.equal(me.body.role, "admin");
        assert.equal(me.body.disabled, false);
        // What is not a loss of power stays allowed.
        const renamed = await server.request(
          "PATCH",
          `/users/${person.id}`,
          asSession(cookie, { body: { name: "Still Me", role: "admin", disabled: false } }),
        );
        assert.equal(renamed.status, 200, renamed.text);
        // Another admin (or the admin key) may.
        const other = await adminPerson();
        const demoted = await server.request(
          "PATCH",
          `/users/${person.id}`,
          asSession(other.cookie, { body: { role: "member" } }),
        );
        assert.equal(demoted.status, 200, demoted.text);
      });

      test("a new or removed password ends every session of the person", async () => {
        const person = await createPerson(server);
        const first = await signIn(server, person.email);
        const second = await signIn(server, person.email);
        assert.notEqual(first, second);
        for (const cookie of [first, second]) assert.equal((await whoami(asSession(cookie))).status, 200);

        const NEW = "another long password";
        assert.equal((await server.request("PATCH", `/users/${person.id}`, { body: { password: NEW } })).status, 200);
        for (const cookie of [first, second]) expectProblem(await whoami(asSession(cookie)), 401, "unauthorized");
        expectProblem(
          await server.request("POST", "/auth/login", { key: null, body: { email: person.email, password: PASSWORD } }),
          401,
          "invalid_credentials",
        );
        const third = await signIn(server, person.email, NEW);

        const removed = await server.request("PATCH", `/users/${person.id}`, { body: { password: null } });
        assert.equal(removed.status, 200, removed.text);
        assert.equal(removed.body.hasPassword, false);
        expectProblem(await whoami(asSession(third)), 401, "unauthorized");
        expectProblem(
          await server.request("POST", "/auth/login", { key: null, body: { email: person.email, password: NEW } }),
          401,
          "invalid_credentials",
        );
        // A change of name signs no one out.
        await server.request("PATCH", `/users/${person.id}`, { body: { password: NEW } });
        const fourth = await signIn(server, person.email, NEW);
        await server.request("PATCH", `/users/${person.id}`, { body: { name: "Only Renamed" } });
        assert.equal((await whoami(asSession(fourth))).body.user.name, "Only Renamed");
      });

      test("disabling ends sessions, revokes personal keys for good and ends their streams", async () => {
        const project = await createProject(server);
        const { person, cookie } = await member(project, "write");
        const key = await personalKey(server, cookie, { project, role: "read" });
        const broadKey = await personalKey(server, cookie, { role: "write" });
        await server.request("POST", `/projects/${project}/flags/f`, { body: {} });
        const stream = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, { key: key.key });
        assert.equal(stream.status, 200);
        await waitFor("the stream's snapshot", () => stream.events.length > 0);

        const disabled = await server.request("PATCH", `/users/${person.id}`, { body: { disabled: true } });
        assert.equal(disabled.status, 200, disabled.text);
        assert.equal(disabled.body.disabled, true);
        await withDeadline(stream.ended, 10_000, "the personal key's stream ending");
        expectProblem(await whoami(asSession(cookie)), 401, "unauthorized");
        for (const k of [key, broadKey]) {
          expectProblem(await whoami(asKey(k.key)), 401, "unauthorized");
          expectProblem(await server.request("GET", `/projects/${project}/flags`, asKey(k.key)), 401, "unauthorized");
        }
        expectProblem(
          await server.request("POST", "/auth/login", { key: null, body: { email: person.email, password: PASSWORD } }),
          401,
          "invalid_credentials",
        );
        const reopened = await server.request("GET", `/projects/${project}/stream`, asKey(key.key));
        expectProblem(reopened, 401, "unauthorized");

        // Enabled again: the keys stay revoked and the old session ended; a new sign-in works.
        assert.equal((await server.request("PATCH", `/users/${person.id}`, { body: { disabled: false } })).status, 200);
        for (const k of [key, broadKey]) expectProblem(await whoami(asKey(k.key)), 401, "unauthorized");
        expectProblem(await whoami(asSession(cookie)), 401, "unauthorized");
        const again = await signIn(server, person.email);
        assert.deepEqual((await server.request("GET", "/users/me/keys", asSession(again))).body, { data: [] });
        stream.close();
      });

      test("a personal key cannot make service keys; one made in a session outlives its maker, who is named", async () => {
        const project = await createProject(server);
        assert.equal((await server.request("POST", `/projects/${project}/flags/f`, { body: {} })).status, 201);
        const owner = await member(project, "admin");
        const admin = await adminPerson();
        const minting = [
          await personalKey(server, owner.cookie, { project, role: "admin" }),
          await personalKey(server, admin.cookie, { role: "admin" }),
        ];
        for (const { key } of minting) {
          for (const body of [
            { role: "write", name: "minted" },
            { role: "write", name: "minted", environment: null },
          ]) {
            const res = await server.request("POST", `/projects/${project}/keys`, asKey(key, { body }));
            expectProblem(res, 403, "forbidden");
            assert.match(res.body.detail, /personal key cannot make keys/);
          }
        }
        const names = async () =>
          (await server.request("GET", `/projects/${project}/keys`)).body.data.map((k: { name: string }) => k.name);
        assert.deepEqual(await names(), [], "none was made");
        // Revoking mints nothing: a personal key may.
        const doomed = await createKey(server, project, "read");
        const revoked = await server.request(
          "DELETE",
          `/projects/${project}/keys/${doomed.id}`,
          asKey(minting[0]!.key),
        );
        assert.equal(revoked.status, 204, revoked.text);

        // Signed in, the project's admin makes one; it is the project's, and outlives them.
        const made = await server.request(
          "POST",
          `/projects/${project}/keys`,
          asSession(owner.cookie, { body: { role: "write", name: "ci" } }),
        );
        assert.equal(made.status, 201, made.text);
        const disabled = await server.request("PATCH", `/users/${owner.person.id}`, { body: { disabled: true } });
        assert.equal(disabled.status, 200, disabled.text);
        expectProblem(await whoami(asKey(minting[0]!.key)), 401, "unauthorized");
        const write = await server.request(
          "PATCH",
          `/projects/${project}/flags/f`,
          asKey(made.body.key, { body: { description: "after its maker left" } }),
        );
        assert.equal(write.status, 200, write.text);
        const history = await server.request(
          "GET",
          `/projects/${project}/events?type=key.created&actor=${owner.person.id}`,
        );
        const maker = {
          type: "user",
          id: owner.person.id,
          email: owner.person.email,
          name: owner.person.name,
          via: "session",
        };
        // Newest first: the service key, then their personal key of the project.
        assert.deepEqual(
          history.body.data.map((e: { after: { id: string; userId?: string }; actor: unknown }) => [
            e.after.id,
            e.after.userId,
            e.actor,
          ]),
          [
            [made.body.id, undefined, maker],
            [minting[0]!.id, owner.person.id, maker],
          ],
        );
      });

      test("deleting a person takes their grants, sessions and keys; their history stays", async () => {
        const project = await createProject(server);
        const { person, cookie } = await member(project, "write");
        const key = await personalKey(server, cookie, { project, role: "write" });
        const made = await server.request(
          "POST",
          `/projects/${project}/flags/by-doomed`,
          asSession(cookie, { body: {} }),
        );
        assert.equal(made.status, 201, made.text);

        assert.equal((await server.request("DELETE", `/users/${person.id}`)).status, 204);
        expectProblem(await whoami(asSession(cookie)), 401, "unauthorized");
        expectProblem(await whoami(asKey(key.key)), 401, "unauthorized");
        expectProblem(await server.request("GET", `/users/${person.id}`), 404, "user_not_found");
        const access = await server.request("GET", `/projects/${project}/access`);
        assert.deepEqual(access.body, { data: [] });
        const history = await server.request("GET", `/projects/${project}/events?actor=${person.id}&type=flag.`);
        assert.equal(history.status, 200, history.text);
        assert.deepEqual(
          history.body.data.map((e: { type: string; actor: { email: string } }) => [e.type, e.actor.email]),
          [["flag.created", person.email]],
        );
        // The e-mail is free again.
        await createPerson(server, { email: person.email });
      });
    });

    describe("project access", () => {
      test("the admin key grants, changes, lists and removes access", async () => {
        const project = await createProject(server);
        const a = await createPerson(server, { email: `b-${uniqueEmail()}` });
        const b = await createPerson(server, { email: `a-${uniqueEmail()}` });
        const put = await server.request("PUT", `/projects/${project}/access/${a.id}`, { body: { role: "read" } });
        assert.equal(put.status, 200, put.text);
        assert.deepEqual(
          { ...put.body, createdAt: "" },
          { userId: a.id, email: a.email, name: a.name, role: "read", createdAt: "" },
        );
        const changed = await server.request("PUT", `/projects/${project}/access/${a.id}`, { body: { role: "write" } });
        assert.equal(changed.status, 200, changed.text);
        assert.deepEqual(changed.body, { ...put.body, role: "write" }, "a change keeps when it was granted");
        const same = await server.request("PUT", `/projects/${project}/access/${a.id}`, { body: { role: "write" } });
        assert.deepEqual(same.body, changed.body, "granting the same role again is fine");
        await grant(server, project, b.id, "admin");

        const listed = await server.request("GET", `/projects/${project}/access`);
        assert.equal(listed.status, 200);
        assert.deepEqual(
          listed.body.data.map((g: { email: string; role: string }) => [g.email, g.role]),
          [
            [b.email, "admin"],
            [a.email, "write"],
          ],
          "by e-mail",
        );

        assert.equal((await server.request("DELETE", `/projects/${project}/access/${a.id}`)).status, 204);
        expectProblem(await server.request("DELETE", `/projects/${project}/access/${a.id}`), 404, "grant_not_found");
        expectProblem(
          await server.request("PUT", `/projects/${project}/access/usr_nobody`, { body: { role: "read" } }),
          404,
          "user_not_found",
        );
        expectProblem(
          await server.request("PUT", `/projects/no-such-project/access/${a.id}`, { body: { role: "read" } }),
          404,
          "project_not_found",
        );
        expectProblem(await server.request("GET", "/projects/no-such-project/access"), 404, "project_not_found");
        expectProblem(
          await server.request("DELETE", `/projects/no-such-project/access/${a.id}`),
          404,
          "project_not_found",
        );
        for (const body of [{ role: "owner" }, { role: "check" }, {}, { role: "read", extra: 1 }]) {
          expectProblem(
            await server.request("PUT", `/projects/${project}/access/${a.id}`, { body }),
            400,
            "invalid_request",
          );
        }
        // Every grant change is in the project's history.
        const events = await server.request("GET", `/projects/${project}/events?type=access.`);
        assert.deepEqual(
          events.body.data.map((e: { type: string; target: { id: string } }) => [e.type, e.target.id]),
          [
            ["access.revoked", a.id],
            ["access.granted", b.id],
            ["access.granted", a.id],
            ["access.granted", a.id],
          ],
        );
      });

      test("a project's admin member manages its access; a writer or reader may not; another project is unseen", async () => {
        const project = await createProject(server);
        const other = await createProject(server);
        const owner = await member(project, "admin");
        const writer = await member(project, "write");
        const reader = await member(project, "read");
        const newcomer = await createPerson(server);
        // Access is the whole project's: a key bound to one environment may not change it (environment-keys.test.ts).
        const ownerKey = await personalKey(server, owner.cookie, { project, environment: null, role: "admin" });

        for (const options of [asSession(owner.cookie), asKey(ownerKey.key)]) {
          const put = await server.request("PUT", `/projects/${project}/access/${newcomer.id}`, {
            ...options,
            body: { role: "read" },
          });
          assert.equal(put.status, 200, put.text);
          const listed = await server.request("GET", `/projects/${project}/access`, options);
          assert.equal(listed.status, 200);
          assert.ok(listed.body.data.some((g: { userId: string }) => g.userId === newcomer.id));
          assert.equal(
            (await server.request("DELETE", `/projects/${project}/access/${newcomer.id}`, options)).status,
            204,
          );
        }
        for (const who of [writer, reader]) {
          const options = asSession(who.cookie);
          expectProblem(await server.request("GET", `/projects/${project}/access`, options), 403, "forbidden");
          expectProblem(
            await server.request("PUT", `/projects/${project}/access/${newcomer.id}`, {
              ...options,
              body: { role: "read" },
            }),
            403,
            "forbidden",
          );
          // Not even to raise themselves.
          expectProblem(
            await server.request("PUT", `/projects/${project}/access/${who.person.id}`, {
              ...options,
              body: { role: "admin" },
            }),
            403,
            "forbidden",
          );
          expectProblem(
            await server.request("DELETE", `/projects/${project}/access/${owner.person.id}`, options),
            403,
            "forbidden",
          );
        }
        // The owner of one project sees nothing of another.
        expectProblem(
          await server.request("GET", `/projects/${other}/access`, asSession(owner.cookie)),
          404,
          "project_not_found",
        );
        expectProblem(
          await server.request("PUT", `/projects/${other}/access/${owner.person.id}`, {
            ...asSession(owner.cookie),
            body: { role: "admin" },
          }),
          404,
          "project_not_found",
        );
        const grants = await server.request("GET", `/projects/${project}/access`);
        assert.deepEqual(grants.body.data.map((g: { userId: string; role: string }) => g.role).sort(), [
          "admin",
          "read",
          "write",
        ]);
      });
    });

    describe("whoami for a person", () => {
      test("a session and a personal key say who, by which way, and the grants", async () => {
        const p1 = await createProject(server);
        const p2 = await createProject(server);
        const { person, cookie } = await member(p1, "write");
        await grant(server, p2, person.id, "read");
        const session = await whoami(asSession(cookie));
        assert.equal(session.status, 200, session.text);
        assert.equal(session.body.via, "session");
        assert.deepEqual(session.body.user, {
          id: person.id,
          email: person.email,
          name: person.name,
          role: "member",
        });
        assert.deepEqual(
          [...session.body.grants].sort((a: { projectId: string }, b: { projectId: string }) =>
            a.projectId.localeCompare(b.projectId),
          ),
          [
            { projectId: p1, role: "write" },
            { projectId: p2, role: "read" },
          ].sort((a, b) => a.projectId.localeCompare(b.projectId)),
        );

        const key = await personalKey(server, cookie, { name: "laptop", project: p1, role: "write" });
        const byKey = await whoami(asKey(key.key));
        assert.equal(byKey.status, 200, byKey.text);
        assert.equal(byKey.body.via, "key");
        assert.equal(byKey.body.keyId, key.id);
        assert.equal(byKey.body.name, "laptop");
        assert.equal(byKey.body.role, "write");
        assert.equal(byKey.body.projectId, p1);
        assert.deepEqual(byKey.body.user, session.body.user);
        assert.equal(byKey.body.grants.length, 2);

        // A service key names no person.
        const service = await whoami({});
        assert.equal(service.status, 200);
        assert.equal(service.body.user, undefined);
        assert.equal(service.body.via, undefined);
      });
    });

    describe("the history names the person", () => {
      let receiver: WebhookReceiver;
      before(async () => {
        receiver = await WebhookReceiver.start();
      });
      after(() => receiver.close());

      test("events and webhook payloads carry {type: user, id, email, name, via}; ?actor= filters", async () => {
        const project = await createProject(server);
        const hook = await server.request("POST", `/projects/${project}/webhooks`, {
          body: { url: `${receiver.url}/${project}`, events: ["*"] },
        });
        assert.equal(hook.status, 201, hook.text);
        await server.request("POST", `/projects/${project}/flags/named`, { body: {} });
        const service = await createKey(server, project, "write");
        const { person, cookie } = await member(project, "write");
        const key = await personalKey(server, cookie, { name: "ada's laptop", project, role: "write" });

        const bySession = await server.request(
          "PATCH",
          `/projects/${project}/flags/named`,
          asSession(cookie, { body: { description: "by session" } }),
        );
        assert.equal(bySession.status, 200, bySession.text);
        const byKey = await server.request(
          "PATCH",
          `/projects/${project}/flags/named`,
          asKey(key.key, { body: { description: "by key" } }),
        );
        assert.equal(byKey.status, 200, byKey.text);
        const byService = await server.request(
          "PATCH",
          `/projects/${project}/flags/named`,
          asKey(service.key, { body: { description: "by service" } }),
        );
        assert.equal(byService.status, 200, byService.text);
        // The person renamed afterwards: the history keeps the name as it was then.
        await server.request("PATCH", `/users/${person.id}`, { body: { name: "Renamed Later" } });

        const sessionActor = { type: "user", id: person.id, email: person.email, name: person.name, via: "session" };
        const keyActor = { ...sessionActor, via: "key", keyId: key.id, keyName: "ada's laptop" };
        const serviceActor = { type: "key", keyId: service.id, keyName: "write key", role: "write" };

        const all = await server.request("GET", `/projects/${project}/events?actor=${person.id}`);
        assert.deepEqual(
          all.body.data.map((e: { type: string }) => e.type),
          ["flag.updated", "flag.updated", "key.created"],
          "their key's creation is theirs too",
        );
        const mine = await server.request("GET", `/projects/${project}/events?actor=${person.id}&type=flag.`);
        assert.equal(mine.status, 200, mine.text);
        assert.deepEqual(
          mine.body.data.map((e: { after: { description: string }; actor: unknown }) => [e.after.description, e.actor]),
          [
            ["by key", keyActor],
            ["by session", sessionActor],
          ],
        );
        const theirs = await server.request("GET", `/projects/${project}/events?actor=${service.id}`);
        assert.deepEqual(
          theirs.body.data.map((e: { actor: unknown }) => e.actor),
          [serviceActor],
        );
        const flagHistory = await server.request("GET", `/projects/${project}/flags/named/events`);
        assert.deepEqual(
          flagHistory.body.data.slice(0, 3).map((e: { actor: unknown }) => e.actor),
          [serviceActor, keyActor, sessionActor],
        );
        // Someone who made nothing made nothing.
        const nobody = await server.request("GET", `/projects/${project}/events?actor=usr_nobody`);
        assert.deepEqual(nobody.body.data, []);

        // The webhook payloads say the same.
        const ids = new Set(mine.body.data.map((e: { id: string }) => e.id));
        const payloads = await waitFor(
          "the payloads of the person's changes",
          () =>
            receiver
              .at(`/${project}`)
              .map(payloadOf)
              .filter((p) => ids.has(p.id)),
          { until: (found) => new Set(found.map((p) => p.id)).size === ids.size },
        );
        const byId = new Map(payloads.map((p) => [p.id, p]));
        for (const event of mine.body.data) assert.deepEqual(byId.get(event.id)?.actor, event.actor);
      });
    });
  });
}
