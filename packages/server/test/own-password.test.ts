// A person sets or changes their own password (docs/people.md, "Your own password"): PUT /users/me/password
// in a session, the current password checked and counted like a sign-in, the other sessions (and their
// streams) ended and this one kept, keys refused, and PASSWORD_SIGN_IN=false. GET /users/me. The one-time
// link lands on the console's Me page. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  startServer,
  type TestServer,
  waitFor,
  withDeadline,
} from "@flagstaff/test-harness";
import { runAdminKeyCommand } from "../src/admin-key-command.js";
import {
  asKey,
  asSession,
  createPerson,
  grant,
  PASSWORD,
  personalKey,
  sessionCookieOf,
  signIn,
  uniqueEmail,
} from "./helpers/people.js";

const NEW_PASSWORD = "a much longer brand new passphrase";

const setPassword = (server: TestServer, cookie: string, body: unknown, more: Record<string, string> = {}) =>
  server.request("PUT", "/users/me/password", asSession(cookie, { body, headers: more }));

const whoami = (server: TestServer, cookie: string) => server.request("GET", "/whoami", asSession(cookie));

const login = (server: TestServer, email: string, password: string) =>
  server.request("POST", "/auth/login", { key: null, body: { email, password } });

/**
 * Adds a person without a password with `admin-key user create` (in this process, on the server's
 * database) and uses their one-time link, as the person would: answers the link's redirect and the cookie.
 */
async function invitedByLink(server: TestServer, email = uniqueEmail("linked")) {
  let stdout = "";
  let stderr = "";
  const code = await runAdminKeyCommand(["user", "create", "--email", email, "--json"], {
    env: { DATABASE_URL: server.databaseUrl, PUBLIC_URL: server.url },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  assert.equal(code, 0, stderr);
  const created = JSON.parse(stdout);
  const res = await fetch(created.signInLink, { redirect: "manual" });
  assert.equal(res.status, 302);
  const cookie = res.headers
    .getSetCookie()
    .map((line) => line.split(";")[0] ?? "")
    .find((pair) => /^(__Host-)?flagstaff_session=./.test(pair));
  assert.ok(cookie, "the link signs in");
  // The person was added beside the running server: it learns of them from the database.
  await waitFor("the linked person's session", () => whoami(server, cookie), { until: (r) => r.status === 200 });
  return { id: created.id as string, email, cookie, location: res.headers.get("location") };
}

/** The user.updated events of a person, from the database (people's events belong to no project). */
async function userEvents(server: TestServer, userId: string) {
  return server.database.db
    .selectFrom("events")
    .selectAll()
    .where("type", "=", "user.updated")
    .where("target_id", "=", userId)
    .orderBy("id")
    .execute();
}

for (const dialect of DIALECTS) {
  describe(`a person's own password [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    before(async () => {
      server = await startServer({ dialect, env: { STREAM_SESSION_CHECK_MS: "60000" } });
      project = await createProject(server);
    });
    after(() => server.close());

    test("a person invited by link lands on their Me page, sets a password without a current one, and signs in with it", async () => {
      const invited = await invitedByLink(server);
      assert.equal(invited.location, "/console/me?signedInBy=link");
      const mine = await server.request("GET", "/users/me", asSession(invited.cookie));
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.body.hasPassword, false);
      assert.equal(mine.body.email, invited.email);

      const set = await setPassword(server, invited.cookie, { newPassword: NEW_PASSWORD });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.hasPassword, true);
      assert.ok(!set.text.includes(NEW_PASSWORD) && !set.text.includes("scrypt"), "nothing of the password");
      assert.equal((await whoami(server, invited.cookie)).status, 200, "this session stays signed in");
      assert.equal((await server.request("GET", "/users/me", asSession(invited.cookie))).body.hasPassword, true);
      const signedIn = await login(server, invited.email, NEW_PASSWORD);
      assert.equal(signedIn.status, 200, signedIn.text);

      // The history: one user.updated by the person in their session, hasPassword false → true, no password.
      const events = await userEvents(server, invited.id);
      assert.equal(events.length, 1);
      const event = events[0]!;
      assert.equal(JSON.parse(event.before ?? "{}").hasPassword, false);
      assert.equal(JSON.parse(event.after ?? "{}").hasPassword, true);
      assert.deepEqual(
        { type: JSON.parse(event.actor).type, id: JSON.parse(event.actor).id, via: JSON.parse(event.actor).via },
        { type: "user", id: invited.id, via: "session" },
      );
      const text = JSON.stringify(event);
      assert.ok(!text.includes(NEW_PASSWORD) && !text.includes("scrypt"), "the history holds nothing of it");
    });

    test("changing a password takes the current one: missing is 400 at currentPassword, right changes it", async () => {
      const person = await createPerson(server);
      const cookie = await signIn(server, person.email);
      const missing = await setPassword(server, cookie, { newPassword: NEW_PASSWORD });
      expectProblem(missing, 400, "invalid_request");
      assert.deepEqual(
        missing.body.errors.map((e: { path: string }) => e.path),
        ["/currentPassword"],
      );
      // The same rules as an admin's: 12 to 256 characters; unknown fields refused.
      for (const body of [
        { currentPassword: PASSWORD, newPassword: "short" },
        { currentPassword: PASSWORD, newPassword: "x".repeat(257) },
        { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, password: NEW_PASSWORD },
        {},
      ]) {
        expectProblem(await setPassword(server, cookie, body), 400, "invalid_request");
      }
      assert.equal((await login(server, person.email, PASSWORD)).status, 200, "nothing refused changed it");

      const changed = await setPassword(server, cookie, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      assert.equal(changed.status, 200, changed.text);
      expectProblem(await login(server, person.email, PASSWORD), 401, "invalid_credentials");
      assert.equal((await login(server, person.email, NEW_PASSWORD)).status, 200);
      assert.equal((await userEvents(server, person.id)).length, 1, "one user.updated");
    });

    test("a wrong current password is 401 and counts against the lockout like a failed sign-in", async () => {
      const person = await createPerson(server);
      const cookie = await signIn(server, person.email);
      for (let i = 1; i <= 5; i++) {
        const wrong = await setPassword(server, cookie, {
          currentPassword: `wrong guess ${i}!!`,
          newPassword: NEW_PASSWORD,
        });
        expectProblem(wrong, 401, "invalid_credentials");
      }
      // Five failures lock the e-mail: the route and sign-in alike answer 429, without checking the password.
      const locked = await setPassword(server, cookie, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      expectProblem(locked, 429, "too_many_attempts");
      assert.ok(Number(locked.headers.get("retry-after")) > 0, "Retry-After");
      expectProblem(await login(server, person.email, PASSWORD), 429, "too_many_attempts");
      // The 401s did not end the session, and nothing changed.
      assert.equal((await whoami(server, cookie)).status, 200);
      assert.equal((await userEvents(server, person.id)).length, 0);
      const row = await server.database.db
        .selectFrom("sign_in_failures")
        .select("failures")
        .where("email", "=", person.email)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.failures), 5);
    });

    test("a right current password forgets earlier failures, as a sign-in does", async () => {
      const person = await createPerson(server);
      const cookie = await signIn(server, person.email);
      for (let i = 0; i < 3; i++) {
        expectProblem(
          await setPassword(server, cookie, { currentPassword: "not the password", newPassword: NEW_PASSWORD }),
          401,
          "invalid_credentials",
        );
      }
      const res = await setPassword(server, cookie, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      assert.equal(res.status, 200, res.text);
      const row = await server.database.db
        .selectFrom("sign_in_failures")
        .select("failures")
        .where("email", "=", person.email)
        .executeTakeFirst();
      assert.equal(row, undefined, "no failures left");
    });

    test("the person's other sessions and their streams end; this one and its stream go on", async () => {
      const person = await createPerson(server);
      await grant(server, project, person.id, "read");
      const here = await signIn(server, person.email);
      const elsewhere = await signIn(server, person.email);
      const third = await signIn(server, person.email);
      const key = await personalKey(server, here, { project, role: "read" });
      const open = async (cookie: string) => {
        const stream = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, {
          key: null,
          headers: { cookie },
        });
        assert.equal(stream.status, 200);
        await stream.next("the snapshot", (e) => e.event === "snapshot");
        return stream;
      };
      const kept = await open(here);
      const ending = [await open(elsewhere), await open(third)];

      const res = await setPassword(server, here, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      assert.equal(res.status, 200, res.text);
      assert.equal(sessionCookieOf(res), undefined, "this session's cookie is kept as it is");
      for (const stream of ending) await withDeadline(stream.ended, 10_000, "another session's stream ending");
      assert.equal((await whoami(server, here)).status, 200, "this session goes on");
      assert.equal((await whoami(server, elsewhere)).status, 401);
      assert.equal((await whoami(server, third)).status, 401);
      // The personal key goes on (as with sign-out everywhere), and so does this session's stream.
      assert.equal((await server.request("GET", "/whoami", asKey(key.key))).status, 200);
      assert.equal(
        (await server.request("POST", `/projects/${project}/flags/after-password`, { body: {} })).status,
        201,
      );
      await kept.next("the change on the kept stream", (e) => JSON.stringify(e.data).includes("after-password"));
      kept.close();
    });

    test("a key cannot set a password: a personal key, a service admin key (403), with nothing written", async () => {
      const person = await createPerson(server, { role: "admin" });
      const cookie = await signIn(server, person.email);
      const key = await personalKey(server, cookie, { role: "admin" });
      const body = { currentPassword: PASSWORD, newPassword: NEW_PASSWORD };
      const byPersonalKey = await server.request("PUT", "/users/me/password", asKey(key.key, { body }));
      expectProblem(byPersonalKey, 403, "forbidden");
      const byAdminKey = await server.request("PUT", "/users/me/password", { body });
      expectProblem(byAdminKey, 403, "forbidden");
      const byWriteKey = await server.request(
        "PUT",
        "/users/me/password",
        asKey((await createKey(server, project, "write")).key, { body }),
      );
      expectProblem(byWriteKey, 403, "forbidden");
      const anonymous = await server.request("PUT", "/users/me/password", { key: null, body });
      expectProblem(anonymous, 401, "unauthorized");
      assert.equal((await login(server, person.email, PASSWORD)).status, 200, "the password is as it was");
      assert.equal((await userEvents(server, person.id)).length, 0);
      // A personal key may read its person (GET /users/me is a person's, not a session's only).
      const mine = await server.request("GET", "/users/me", asKey(key.key));
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.body.id, person.id);
      expectProblem(await server.request("GET", "/users/me"), 403, "forbidden");
    });

    test("from another site's page it is refused (403 cross_site_request)", async () => {
      const person = await createPerson(server);
      const cookie = await signIn(server, person.email);
      const res = await setPassword(
        server,
        cookie,
        { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
        { "sec-fetch-site": "cross-site" },
      );
      expectProblem(res, 403, "cross_site_request");
      assert.equal((await login(server, person.email, PASSWORD)).status, 200);
    });
  });

  describe(`a person's own password with PASSWORD_SIGN_IN=false [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { PASSWORD_SIGN_IN: "false" } });
    });
    after(() => server.close());

    test("setting one is refused (403): it could not be used to sign in", async () => {
      const invited = await invitedByLink(server);
      const res = await setPassword(server, invited.cookie, { newPassword: NEW_PASSWORD });
      expectProblem(res, 403, "forbidden");
      assert.match(res.body.detail, /PASSWORD_SIGN_IN=false/);
      assert.equal((await server.request("GET", "/users/me", asSession(invited.cookie))).body.hasPassword, false);
      assert.equal((await userEvents(server, invited.id)).length, 0);
    });
  });
}
