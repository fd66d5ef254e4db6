// Sessions and password sign-in (docs/people.md, "Signing in"): the cookie and its attributes, the one
// answer for every refused password, lockout and the per-address limit, fixation, cross-site requests,
// sign-out, expiry (a ManualClock moves the server's time), personal keys made only in a session,
// PASSWORD_SIGN_IN=false, the one-time link of `admin-key user create`, and the project streams a session
// opened, which end with it. Real servers, every dialect.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  type ApiResponse,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  freshDatabase,
  ManualClock,
  type RequestOptions,
  startServer,
  type TestServer,
  waitFor,
  withDeadline,
} from "@flagstaff/test-harness";
import { Migrator } from "kysely/migration";
import { sql } from "kysely";
import { runAdminKeyCommand } from "../src/admin-key-command.js";
import { isoTime } from "../src/kernel/clock.js";
import { loadConfig } from "../src/kernel/config.js";
import { openDatabase } from "../src/db/database.js";
import { InCodeMigrations } from "../src/db/migrate.js";
import { hashPassword } from "../src/features/people/passwords.js";
import {
  asKey,
  asSession,
  createPerson,
  grant,
  PASSWORD,
  personalKey,
  rowCounts,
  sessionCookieOf,
  signIn,
  uniqueEmail,
} from "./helpers/people.js";

const login = (server: TestServer, email: string, password: string, more: RequestOptions = {}) =>
  server.request("POST", "/auth/login", { ...more, key: null, body: { email, password } });

type Headers = Record<string, string | undefined>;
/** Only the headers given (a list of header sets mixes them). */
const only = (headers: Headers): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined));

/** An answer's status, body and headers, without what differs from request to request. */
const answerOf = (res: ApiResponse) => ({
  status: res.status,
  body: { ...res.body, instance: undefined, requestId: undefined },
  headers: [...res.headers].filter(([name]) => !["date", "x-request-id"].includes(name)),
});

const whoami = (server: TestServer, cookie: string) => server.request("GET", "/whoami", asSession(cookie));

/** Moves a server's ManualClock on by minutes. */
const minutes = (clock: ManualClock, n: number) => clock.advance(n * 60_000);

/** Opens a project's stream with a session cookie, as the console does, and waits for its snapshot. */
async function sessionStream(server: TestServer, project: string, cookie: string): Promise<EventStreamClient> {
  const stream = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, {
    key: null,
    headers: { cookie },
  });
  assert.equal(stream.status, 200, JSON.stringify(stream.events));
  await stream.next("the stream's snapshot", (e) => e.event === "snapshot");
  return stream;
}

/** Changes flag `streamed` (as admin) and waits until every stream given has received that change. */
async function changeReaches(server: TestServer, project: string, streams: readonly EventStreamClient[]) {
  const actor = `seen-${randomBytes(4).toString("hex")}`;
  const res = await server.request("PATCH", `/projects/${project}/flags/streamed`, { body: { addActors: [actor] } });
  assert.equal(res.status, 200, res.text);
  for (const stream of streams) {
    await stream.next(`the change attaching ${actor} on a stream that goes on`, (e) =>
      e.event === "change"
        ? e.data.changes.some((c: any) => c.kind === "flag.upserted" && c.addActors.includes(actor))
        : false,
    );
  }
}

/** A problem's answer without what differs from request to request. */
const problemOf = (res: ApiResponse) => ({
  status: res.status,
  type: res.headers.get("content-type"),
  body: { ...res.body, instance: undefined, requestId: undefined },
  setCookie: res.headers.getSetCookie(),
});

for (const dialect of DIALECTS) {
  describe(`sessions [${dialect}]`, () => {
    let server: TestServer;
    let clock: ManualClock;
    before(async () => {
      clock = new ManualClock();
      server = await startServer({ dialect, clock, env: { SESSION_IDLE_MINUTES: "5", SESSION_MAX_HOURS: "1" } });
    });
    after(() => server.close());

    test("sign-in answers the person and sets the cookie: HttpOnly, SameSite=Lax, Path=/, Max-Age, not Secure", async () => {
      const person = await createPerson(server);
      const res = await login(server, person.email, PASSWORD);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.user.id, person.id);
      assert.equal(res.body.user.lastSignInAt, new Date(clock.now()).toISOString());
      assert.ok(!res.text.includes(PASSWORD));
      const lines = res.headers.getSetCookie();
      assert.equal(lines.length, 1, JSON.stringify(lines));
      const [pair, ...attributes] = lines[0]!.split(";").map((a) => a.trim());
      assert.match(pair!, /^flagstaff_session=[A-Za-z0-9_-]{43}$/, "256 random bits");
      const lower = attributes.map((a) => a.toLowerCase());
      for (const wanted of ["httponly", "samesite=lax", "path=/", `max-age=${3600}`]) {
        assert.ok(lower.includes(wanted), `${wanted} in ${lines[0]}`);
      }
      assert.ok(!lower.includes("secure"), "plain HTTP: not Secure");
      assert.ok(!lower.some((a) => a.startsWith("domain")), "no Domain: this host only");
      assert.equal((await whoami(server, pair!)).body.user.id, person.id);
      assert.equal((await server.request("GET", `/users/${person.id}`)).body.lastSignInAt, res.body.user.lastSignInAt);
    });

    test("a wrong password, an unknown e-mail, a disabled person and one without a password: one same 401", async () => {
      const right = await createPerson(server);
      const disabled = await createPerson(server);
      await server.request("PATCH", `/users/${disabled.id}`, { body: { disabled: true } });
      const passwordless = await createPerson(server, { password: null });
      const answers = [
        await login(server, right.email, "not the password at all"),
        await login(server, uniqueEmail("nobody"), PASSWORD),
        await login(server, disabled.email, PASSWORD),
        await login(server, passwordless.email, PASSWORD),
        await login(server, passwordless.email, ""),
      ];
      expectProblem(answers[0]!, 401, "invalid_credentials");
      for (const res of answers.slice(1, 4)) assert.deepEqual(problemOf(res), problemOf(answers[0]!));
      expectProblem(answers[4]!, 400, "invalid_request");
      for (const res of answers) assert.equal(sessionCookieOf(res), undefined);
      // The right one still signs in: three failures lock nothing.
      await signIn(server, right.email);
      for (const body of [
        { email: right.email },
        { password: PASSWORD },
        { email: right.email, password: PASSWORD, x: 1 },
      ]) {
        expectProblem(await server.request("POST", "/auth/login", { key: null, body }), 400, "invalid_request");
      }
    });

    test("five failures lock the account for a minute, then two…; a success resets; a new password lifts it", async () => {
      minutes(clock, 16); // a fresh window for the address: its own limit is tested apart
      const person = await createPerson(server);
      for (let i = 1; i <= 5; i++)
        expectProblem(await login(server, person.email, `wrong ${i}`), 401, "invalid_credentials");
      // Locked: even the right password is refused, with when to come back.
      let res = await login(server, person.email, PASSWORD);
      expectProblem(res, 429, "too_many_attempts");
      assert.equal(res.headers.get("retry-after"), "60");
      minutes(clock, 0.5);
      res = await login(server, person.email, PASSWORD);
      expectProblem(res, 429, "too_many_attempts");
      assert.equal(res.headers.get("retry-after"), "30");
      // Other people are not locked with it.
      await signIn(server, (await createPerson(server)).email);

      minutes(clock, 0.5);
      expectProblem(await login(server, person.email, "wrong 6"), 401, "invalid_credentials");
      res = await login(server, person.email, PASSWORD);
      expectProblem(res, 429, "too_many_attempts");
      assert.equal(res.headers.get("retry-after"), "120", "the second lock is twice as long");
      minutes(clock, 2);
      await signIn(server, person.email);
      // Reset: four failures lock nothing.
      for (let i = 1; i <= 4; i++)
        expectProblem(await login(server, person.email, `wrong ${i}`), 401, "invalid_credentials");
      await signIn(server, person.email);

      for (let i = 1; i <= 5; i++) await login(server, person.email, `again ${i}`);
      expectProblem(await login(server, person.email, PASSWORD), 429, "too_many_attempts");
      const NEW = "a brand new long password";
      assert.equal((await server.request("PATCH", `/users/${person.id}`, { body: { password: NEW } })).status, 200);
      await signIn(server, person.email, NEW);
      minutes(clock, 16); // past the address's window, for the tests that follow
    });

    test("an address may fail 20 times in 15 minutes across accounts, then gets 429 until the window ends", async () => {
      // A server of its own: the address's counter is the instance's.
      const own = await startServer({ dialect, clock });
      try {
        const person = await createPerson(own);
        // Five on one account (its fifth locks it), fifteen on e-mails that do not exist.
        for (let i = 0; i < 20; i++) {
          const res = await login(own, i % 4 === 0 ? person.email : uniqueEmail("guess"), `guess ${i}`);
          expectProblem(res, 401, "invalid_credentials");
        }
        const other = await createPerson(own);
        const res = await login(own, other.email, PASSWORD);
        expectProblem(res, 429, "too_many_attempts");
        assert.equal(res.headers.get("retry-after"), "900");
        minutes(clock, 15);
        await signIn(own, other.email);
      } finally {
        await own.close();
      }
    });

    test("forty wrong passwords at once from one address: twenty are checked, the rest 429; then the right one is 429", async () => {
      // A server of its own: the address's counter is the instance's.
      const own = await startServer({ dialect, clock });
      try {
        const person = await createPerson(own);
        // Four on the person (a lock takes five), the rest on e-mails that do not exist.
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, i) => login(own, i < 4 ? person.email : uniqueEmail("swarm"), `guess ${i}`)),
        );
        const checked = answers.filter((res) => res.status === 401);
        const refused = answers.filter((res) => res.status === 429);
        assert.equal(checked.length, 20, answers.map((res) => res.status).join(" "));
        assert.equal(refused.length, 20);
        for (const res of checked) expectProblem(res, 401, "invalid_credentials");
        for (const res of refused) {
          expectProblem(res, 429, "too_many_attempts");
          assert.equal(res.headers.get("retry-after"), "900");
        }
        const res = await login(own, person.email, PASSWORD);
        expectProblem(res, 429, "too_many_attempts");
        assert.equal(res.headers.get("retry-after"), "900");
        assert.equal(sessionCookieOf(res), undefined);
        minutes(clock, 15);
        await signIn(own, person.email);
      } finally {
        await own.close();
      }
    });

    test("forty wrong passwords at once on one account: five are checked, the rest 429; then the right one is 429", async () => {
      const own = await startServer({ dialect, clock });
      try {
        const person = await createPerson(own);
        const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => login(own, person.email, `guess ${i}`)));
        const statuses = answers.map((res) => res.status);
        assert.equal(statuses.filter((status) => status === 401).length, 5, statuses.join(" "));
        assert.equal(statuses.filter((status) => status === 429).length, 35, statuses.join(" "));
        // Locked by the account's count (a minute), not by the address's (fifteen).
        const res = await login(own, person.email, PASSWORD);
        expectProblem(res, 429, "too_many_attempts");
        assert.equal(res.headers.get("retry-after"), "60");
        // The refused attempts were no guesses: the address keeps the rest of its budget.
        await signIn(own, (await createPerson(own)).email);
        minutes(clock, 1);
        await signIn(own, person.email);
        minutes(clock, 16);
      } finally {
        await own.close();
      }
    });

    test("a locked e-mail that exists and one that does not answer alike: the same 429, body and headers", async () => {
      const own = await startServer({ dialect, clock });
      try {
        const person = await createPerson(own);
        const nobody = uniqueEmail("nobody");
        for (let i = 1; i <= 5; i++) {
          const known = await login(own, person.email, `wrong ${i}`);
          const unknown = await login(own, nobody, `wrong ${i}`);
          expectProblem(known, 401, "invalid_credentials");
          assert.deepEqual(answerOf(unknown), answerOf(known), `failure ${i}`);
        }
        const known = await login(own, person.email, PASSWORD);
        const unknown = await login(own, nobody, PASSWORD);
        expectProblem(known, 429, "too_many_attempts");
        assert.equal(known.headers.get("retry-after"), "60");
        assert.deepEqual(answerOf(unknown), answerOf(known));
        // Both locks end alike too.
        minutes(clock, 1);
        await signIn(own, person.email);
        expectProblem(await login(own, nobody, PASSWORD), 401, "invalid_credentials");
        // A person created with a password for a locked e-mail signs in at once: the admin vouches for them.
        const newcomer = uniqueEmail("newcomer");
        for (let i = 1; i <= 5; i++) await login(own, newcomer, `wrong ${i}`);
        expectProblem(await login(own, newcomer, PASSWORD), 429, "too_many_attempts");
        await createPerson(own, { email: newcomer });
        await signIn(own, newcomer);
        minutes(clock, 16);
      } finally {
        await own.close();
      }
    });

    test("NUL or a lone surrogate in the e-mail or the password: 400 invalid_request, and nothing written", async () => {
      const own = await startServer({ dialect, clock });
      try {
        const person = await createPerson(own);
        const before = await rowCounts(own);
        const cases: [email: string, password: string, path: string][] = [
          [`${person.email}\u0000`, PASSWORD, "/email"],
          ["\u0000", PASSWORD, "/email"],
          [`a\u0000@example.com`, "wrong", "/email"],
          [person.email, `${PASSWORD}\u0000`, "/password"],
          [`\uD800${person.email}`, PASSWORD, "/email"],
        ];
        for (const [email, password, path] of cases) {
          const res = await login(own, email, password);
          expectProblem(res, 400, "invalid_request");
          assert.equal(res.body.errors[0].path, path, JSON.stringify(email));
          assert.equal(sessionCookieOf(res), undefined);
        }
        assert.deepEqual(await rowCounts(own), before, "nothing counted, nothing stored");
        await signIn(own, person.email);
      } finally {
        await own.close();
      }
    });

    test("no fixation: a cookie sent before sign-in is not the one set after; a made-up one is 401", async () => {
      const person = await createPerson(server);
      const planted = `flagstaff_session=${randomBytes(32).toString("base64url")}`;
      const res = await login(server, person.email, PASSWORD, { headers: { cookie: planted } });
      assert.equal(res.status, 200, res.text);
      const set = sessionCookieOf(res);
      assert.ok(set && set !== planted);
      expectProblem(await whoami(server, planted), 401, "unauthorized");
      assert.equal((await whoami(server, set)).status, 200);
      // Signing in again with a valid session makes yet another.
      const again = await login(server, person.email, PASSWORD, { headers: { cookie: set } });
      assert.notEqual(sessionCookieOf(again), set);
      for (const junk of ["flagstaff_session=", "flagstaff_session=x", `flagstaff_session=${"A".repeat(43)}`]) {
        const answer = await whoami(server, junk);
        assert.equal(answer.status, 401, `${junk}: ${answer.text}`);
      }
    });

    describe("cross-site requests", () => {
      let project: string;
      let cookie: string;
      before(async () => {
        project = await createProject(server);
        await server.request("POST", `/projects/${project}/flags/csrf`, { body: {} });
        const person = await createPerson(server);
        await grant(server, project, person.id, "write");
        cookie = await signIn(server, person.email);
      });
      const patch = (headers: Headers, key?: string) =>
        server.request("PATCH", `/projects/${project}/flags/csrf`, {
          key: key ?? null,
          headers: key === undefined ? { cookie, ...only(headers) } : only(headers),
          body: { description: `from ${JSON.stringify(headers)}` },
        });

      test("a change with the cookie from another site, or from who knows where, is 403 cross_site_request", async () => {
        for (const headers of [
          { "sec-fetch-site": "cross-site" },
          { "sec-fetch-site": "same-site" },
          { "sec-fetch-site": "cross-site", origin: server.url },
          { origin: "https://evil.example" },
          { origin: "null" },
          { origin: server.url.replace("127.0.0.1", "localhost") },
          {},
        ]) {
          expectProblem(await patch(headers), 403, "cross_site_request");
        }
        const flag = await server.request("GET", `/projects/${project}/flags/csrf`);
        assert.equal(flag.body.description, "", "nothing changed");
        // Other changes too: creating, deleting, signing out everywhere, making a key.
        const cross = { cookie, "sec-fetch-site": "cross-site" };
        for (const [method, path] of [
          ["POST", `/projects/${project}/flags/other`],
          ["DELETE", `/projects/${project}/flags/csrf`],
          ["DELETE", "/users/me/sessions"],
          ["POST", "/users/me/keys"],
          ["POST", "/auth/logout"],
        ] as const) {
          const body = method === "POST" ? (path === "/users/me/keys" ? { name: "k" } : {}) : undefined;
          const res = await server.request(method, path, { key: null, headers: cross, ...(body && { body }) });
          expectProblem(res, 403, "cross_site_request");
        }
        assert.equal((await whoami(server, cookie)).status, 200, "the session lives on");
      });

      test("from the console's own origin it is fine; reads from anywhere are; keys are never affected", async () => {
        for (const headers of [
          { "sec-fetch-site": "same-origin" },
          { "sec-fetch-site": "none" },
          { "sec-fetch-site": "same-origin", origin: server.url },
          { origin: server.url },
        ]) {
          const res = await patch(headers);
          assert.equal(res.status, 200, `${JSON.stringify(headers)}: ${res.text}`);
        }
        const read = await server.request("GET", `/projects/${project}/flags/csrf`, {
          key: null,
          headers: { cookie, "sec-fetch-site": "cross-site", origin: "https://evil.example" },
        });
        assert.equal(read.status, 200, read.text);
        const writeKey = (
          await server.request("POST", `/projects/${project}/keys`, { body: { role: "write", name: "w" } })
        ).body.key as string;
        for (const headers of [{ "sec-fetch-site": "cross-site" }, { origin: "https://evil.example" }, {}]) {
          assert.equal((await patch(headers, writeKey)).status, 200);
        }
      });

      test("signing in from another site's page is refused; a program's sign-in (no such headers) is not", async () => {
        const person = await createPerson(server);
        for (const headers of [{ "sec-fetch-site": "cross-site" }, { origin: "https://evil.example" }]) {
          expectProblem(
            await login(server, person.email, PASSWORD, { headers: only(headers) }),
            403,
            "cross_site_request",
          );
        }
        assert.equal((await login(server, person.email, PASSWORD, { headers: { origin: server.url } })).status, 200);
      });
    });

    test("logout ends this session and clears the cookie; without a cookie it is fine too", async () => {
      const person = await createPerson(server);
      const cookie = await signIn(server, person.email);
      const other = await signIn(server, person.email);
      const res = await server.request("POST", "/auth/logout", asSession(cookie));
      assert.equal(res.status, 204, res.text);
      const cleared = res.headers.getSetCookie()[0] ?? "";
      assert.match(cleared, /^flagstaff_session=;/);
      assert.match(cleared, /Max-Age=0/i);
      expectProblem(await whoami(server, cookie), 401, "unauthorized");
      assert.equal((await whoami(server, other)).status, 200, "only this session ended");
      assert.equal((await server.request("POST", "/auth/logout", { key: null })).status, 204);
    });

    test("DELETE /users/me/sessions ends every session of the person, by session or by personal key", async () => {
      const person = await createPerson(server);
      const a = await signIn(server, person.email);
      const b = await signIn(server, person.email);
      const bystander = await signIn(server, (await createPerson(server)).email);
      const res = await server.request("DELETE", "/users/me/sessions", asSession(a));
      assert.equal(res.status, 204, res.text);
      assert.match(res.headers.getSetCookie()[0] ?? "", /Max-Age=0/i);
      for (const cookie of [a, b]) expectProblem(await whoami(server, cookie), 401, "unauthorized");
      assert.equal((await whoami(server, bystander)).status, 200);

      const c = await signIn(server, person.email);
      const key = await personalKey(server, c, { role: "read" });
      assert.equal((await server.request("DELETE", "/users/me/sessions", asKey(key.key))).status, 204);
      expectProblem(await whoami(server, c), 401, "unauthorized");
      assert.equal((await server.request("GET", "/whoami", asKey(key.key))).status, 200, "the key is not a session");
      // A service key is no person.
      expectProblem(await server.request("DELETE", "/users/me/sessions"), 403, "forbidden");
    });

    test("a session ends after SESSION_IDLE_MINUTES unused, and SESSION_MAX_HOURS after sign-in", async () => {
      const person = await createPerson(server);
      const idle = await signIn(server, person.email);
      minutes(clock, 4);
      assert.equal((await whoami(server, idle)).status, 200);
      minutes(clock, 4);
      assert.equal((await whoami(server, idle)).status, 200, "8 minutes old, but used 4 minutes ago");
      minutes(clock, 5);
      expectProblem(await whoami(server, idle), 401, "unauthorized");

      const busy = await signIn(server, person.email);
      for (let elapsed = 0; elapsed < 56; elapsed += 4) {
        minutes(clock, 4);
        assert.equal((await whoami(server, busy)).status, 200, `at ${elapsed + 4} minutes`);
      }
      minutes(clock, 4);
      expectProblem(await whoami(server, busy), 401, "unauthorized");
    });

    test("pruning deletes ended sessions, stale single sign-on attempts and old failures, and keeps live sessions", async () => {
      const person = await createPerson(server);
      const stale = await signIn(server, person.email);
      const rows = async () =>
        (await server.database.db.selectFrom("sessions").select("user_id").where("user_id", "=", person.id).execute())
          .length;
      minutes(clock, 20);
      const live = await signIn(server, person.email);
      // No request presents the stale session, so only pruning can delete its row: this call, or the
      // server's own periodic one, which the clock's jump may have set off already.
      await server.service.prune();
      assert.equal(await rows(), 1, "the session idle past SESSION_IDLE_MINUTES is gone");
      assert.equal((await whoami(server, live)).status, 200);
      expectProblem(await whoami(server, stale), 401, "unauthorized");
      await server.database.db
        .insertInto("sign_in_tokens")
        .values({
          id_hash: `stale-${person.id}`,
          kind: "oidc",
          user_id: null,
          data: "{}",
          expires_at: "2000-01-01T00:00:00.000Z",
        })
        .execute();
      await server.service.prune();
      const left = await server.database.db
        .selectFrom("sign_in_tokens")
        .select("id_hash")
        .where("id_hash", "=", `stale-${person.id}`)
        .execute();
      assert.deepEqual(left, []);

      // An e-mail's failed sign-ins (of a person or not) are forgotten after a day without an attempt.
      const quiet = uniqueEmail("quiet");
      expectProblem(await login(server, quiet, "a wrong password"), 401, "invalid_credentials");
      const failures = async () =>
        (
          await server.database.db
            .selectFrom("sign_in_failures")
            .select("failures")
            .where("email", "=", quiet)
            .execute()
        ).length;
      assert.equal(await failures(), 1);
      minutes(clock, 23 * 60);
      await server.service.prune();
      assert.equal(await failures(), 1, "kept for a day");
      minutes(clock, 61);
      await server.service.prune();
      assert.equal(await failures(), 0, "forgotten after a day");
    });

    test("only a session makes a personal key: a personal key and a service key are refused", async () => {
      const person = await createPerson(server, { role: "admin" });
      const cookie = await signIn(server, person.email);
      const key = await personalKey(server, cookie, { role: "admin" });
      for (const options of [asKey(key.key), {}]) {
        expectProblem(
          await server.request("POST", "/users/me/keys", { ...options, body: { name: "minted" } }),
          403,
          "forbidden",
        );
      }
      const listed = await server.request("GET", "/users/me/keys", asKey(key.key));
      assert.deepEqual(
        listed.body.data.map((k: { id: string }) => k.id),
        [key.id],
      );
      expectProblem(await server.request("GET", "/users/me/keys"), 403, "forbidden");
      // Revoking: one's own only.
      const other = await createPerson(server, { role: "admin" });
      const otherCookie = await signIn(server, other.email);
      expectProblem(
        await server.request("DELETE", `/users/me/keys/${key.id}`, asSession(otherCookie)),
        404,
        "key_not_found",
      );
      assert.equal((await server.request("DELETE", `/users/me/keys/${key.id}`, asSession(cookie))).status, 204);
      expectProblem(await server.request("GET", "/whoami", asKey(key.key)), 401, "unauthorized");
    });

    test("/auth/session says whether the cookie signs someone in, 200 either way (no 401 for a browser to log)", async () => {
      const session = (cookie?: string) =>
        server.request("GET", "/auth/session", cookie === undefined ? { key: null } : asSession(cookie));
      const none = await session();
      assert.equal(none.status, 200);
      assert.deepEqual(none.body, { signedIn: false });
      const person = await createPerson(server);
      const cookie = await signIn(server, person.email);
      assert.deepEqual((await session(cookie)).body, { signedIn: true });
      assert.deepEqual((await session("flagstaff_session=not-a-session")).body, { signedIn: false });
      await server.request("POST", "/auth/logout", asSession(cookie));
      const ended = await session(cookie);
      assert.equal(ended.status, 200);
      assert.deepEqual(ended.body, { signedIn: false });
    });

    test("/auth/methods offers the password", async () => {
      const res = await server.request("GET", "/auth/methods", { key: null });
      assert.deepEqual(res.body, { password: true, oidc: null });
    });
  });

  describe(`failed sign-ins from before migration 008 [${dialect}]`, () => {
    test("a lock held in the users table is carried over, and its columns are gone", async () => {
      const clock = new ManualClock();
      const fresh = await freshDatabase(dialect);
      const handle = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
      let server: TestServer | undefined;
      try {
        const migrator = new Migrator({ db: handle.db, provider: new InCodeMigrations(handle.dialect) });
        assert.equal((await migrator.migrateTo("007-people")).error, undefined);
        const row = (email: string, failed_sign_ins: number, locked_until: string | null) => ({
          id: `usr_${email.slice(0, 6)}`,
          email,
          name: email,
          role: "member",
          password_hash: passwordHash,
          failed_sign_ins,
          locked_until,
          created_at: isoTime(clock.now()),
        });
        const passwordHash = await hashPassword(PASSWORD);
        await (handle.db as any)
          .insertInto("users")
          .values([
            row("locked@example.com", 6, isoTime(clock.now() + 5 * 60_000)),
            row("counted@example.com", 4, null),
            row("clean1@example.com", 0, null),
          ])
          .execute();
        await handle.close();
        server = await startServer({ dialect, database: fresh, clock });
        const locked = await login(server, "locked@example.com", PASSWORD);
        expectProblem(locked, 429, "too_many_attempts");
        assert.equal(locked.headers.get("retry-after"), "300");
        // Four failures counted before: the fifth locks.
        expectProblem(await login(server, "counted@example.com", "wrong"), 401, "invalid_credentials");
        expectProblem(await login(server, "counted@example.com", PASSWORD), 429, "too_many_attempts");
        await signIn(server, "clean1@example.com");
        minutes(clock, 5);
        await signIn(server, "locked@example.com");
        const columns = server.database.db.selectFrom("users").select(sql`failed_sign_ins`.as("x"));
        await assert.rejects(columns.execute(), "users.failed_sign_ins is dropped");
      } finally {
        await server?.close();
        await handle.close().catch(() => {});
        if (!server) await fresh.drop();
      }
    });
  });

  describe(`streams end with the session that opened them [${dialect}]`, () => {
    // A check interval far longer than any test: what ends a stream here is the instance that ended its
    // session, at once.
    let server: TestServer;
    let project: string;
    before(async () => {
      server = await startServer({ dialect, env: { STREAM_SESSION_CHECK_MS: "60000" } });
      project = await createProject(server);
      assert.equal((await server.request("POST", `/projects/${project}/flags/streamed`, { body: {} })).status, 201);
    });
    after(() => server.close());

    /** A member who reads the project, signed in `sessions` times. */
    async function reader(sessions = 1) {
      const person = await createPerson(server);
      await grant(server, project, person.id, "read");
      const cookies: string[] = [];
      for (let i = 0; i < sessions; i++) cookies.push(await signIn(server, person.email));
      return { person, cookies };
    }

    test("logout ends the streams its session opened, at once; another session's stream goes on", async () => {
      const { cookies } = await reader(2);
      const [mine, other] = cookies as [string, string];
      const ending = [await sessionStream(server, project, mine), await sessionStream(server, project, mine)];
      const going = await sessionStream(server, project, other);
      assert.equal((await server.request("POST", "/auth/logout", asSession(mine))).status, 204);
      for (const stream of ending) await withDeadline(stream.ended, 10_000, "the logged-out session's stream ending");
      await changeReaches(server, project, [going]);
      // Reconnecting with the ended session is refused.
      const again = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, {
        key: null,
        headers: { cookie: mine },
      });
      assert.equal(again.status, 401);
      // A session cannot open an OFREP event stream at all: OFREP takes its project from a project key.
      const ofrep = await server.request("GET", "/ofrep/v1/event-stream", asSession(other));
      expectProblem(ofrep, 403, "forbidden");
    });

    test("signing out everywhere ends every session's streams; the person's key and others' sessions go on", async () => {
      const { cookies } = await reader(2);
      const [a, b] = cookies as [string, string];
      const key = await personalKey(server, a, { project, role: "read" });
      const ending = [await sessionStream(server, project, a), await sessionStream(server, project, b)];
      const byKey = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, { key: key.key });
      await byKey.next("the key stream's snapshot", (e) => e.event === "snapshot");
      const bystander = await sessionStream(server, project, (await reader()).cookies[0] as string);
      assert.equal((await server.request("DELETE", "/users/me/sessions", asSession(a))).status, 204);
      for (const stream of ending) await withDeadline(stream.ended, 10_000, "a signed-out session's stream ending");
      await changeReaches(server, project, [byKey, bystander]);
    });

    test("signing out everywhere with a personal key ends the person's session streams too", async () => {
      const { cookies } = await reader(1);
      const cookie = cookies[0] as string;
      const key = await personalKey(server, cookie, { project, role: "read" });
      const stream = await sessionStream(server, project, cookie);
      assert.equal((await server.request("DELETE", "/users/me/sessions", asKey(key.key))).status, 204);
      await withDeadline(stream.ended, 10_000, "the session's stream ending");
    });

    test("a new password (or none) ends the person's session streams once the change is committed", async () => {
      const { person, cookies } = await reader(1);
      const bystander = await sessionStream(server, project, (await reader()).cookies[0] as string);
      for (const password of ["a brand new long password", null]) {
        const cookie =
          password === null ? await signIn(server, person.email, "a brand new long password") : cookies[0]!;
        const stream = await sessionStream(server, project, cookie);
        const res = await server.request("PATCH", `/users/${person.id}`, { body: { password } });
        assert.equal(res.status, 200, res.text);
        await withDeadline(
          stream.ended,
          10_000,
          `the session's stream ending (password ${password === null ? "removed" : "changed"})`,
        );
      }
      // A change of the person that keeps their sessions (a new name) ends nothing.
      const renamed = await reader();
      const kept = await sessionStream(server, project, renamed.cookies[0] as string);
      const res = await server.request("PATCH", `/users/${renamed.person.id}`, { body: { name: "Renamed" } });
      assert.equal(res.status, 200, res.text);
      await changeReaches(server, project, [bystander, kept]);
    });
  });

  describe(`streams end when their session expires [${dialect}]`, () => {
    // A short check interval: nothing tells the streams that time ran out, the check finds it.
    let server: TestServer;
    let clock: ManualClock;
    let project: string;
    before(async () => {
      clock = new ManualClock();
      server = await startServer({
        dialect,
        clock,
        env: { SESSION_IDLE_MINUTES: "5", SESSION_MAX_HOURS: "1", STREAM_SESSION_CHECK_MS: "100" },
      });
      project = await createProject(server);
      assert.equal((await server.request("POST", `/projects/${project}/flags/streamed`, { body: {} })).status, 201);
    });
    after(() => server.close());

    test("idle past SESSION_IDLE_MINUTES, then SESSION_MAX_HOURS after sign-in; the check is no use", async () => {
      const person = await createPerson(server);
      await grant(server, project, person.id, "read");
      const idle = await signIn(server, person.email);
      const busy = await signIn(server, person.email);
      const idleStream = await sessionStream(server, project, idle);
      const busyStream = await sessionStream(server, project, busy);
      const lastSeen = async () =>
        (
          await server.database.db
            .selectFrom("sessions")
            .select(["last_seen_at"])
            .where("user_id", "=", person.id)
            .orderBy("last_seen_at", "desc")
            .execute()
        ).map((r) => r.last_seen_at);

      minutes(clock, 4);
      assert.equal((await whoami(server, busy)).status, 200, "a request is a use");
      const touched = new Date(clock.now()).toISOString();
      minutes(clock, 2);
      // Idle 6 minutes: its stream ends at the next check. Used 2 minutes ago: the other goes on.
      await withDeadline(idleStream.ended, 10_000, "the idle session's stream ending");
      await changeReaches(server, project, [busyStream]);
      assert.equal(busyStream.isEnded, false);
      // The checks read the session, and do not count as its use.
      assert.equal((await lastSeen())[0], touched);
      assert.equal((await whoami(server, busy)).status, 200);

      // Used every 4 minutes, the session still ends an hour after sign-in, and its stream with it.
      for (let elapsed = 6; elapsed + 4 < 60; elapsed += 4) {
        minutes(clock, 4);
        assert.equal((await whoami(server, busy)).status, 200, `at ${elapsed + 4} minutes`);
      }
      await changeReaches(server, project, [busyStream]);
      minutes(clock, 4);
      await withDeadline(busyStream.ended, 10_000, "the stream of the session past SESSION_MAX_HOURS ending");
      expectProblem(await whoami(server, busy), 401, "unauthorized");
    });
  });

  describe(`sessions over https [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { PUBLIC_URL: "https://flags.example.com" } });
    });
    after(() => server.close());

    test("the cookie is Secure and named __Host-flagstaff_session; the own origin is PUBLIC_URL's", async () => {
      const person = await createPerson(server);
      const res = await login(server, person.email, PASSWORD);
      assert.equal(res.status, 200, res.text);
      const line = res.headers.getSetCookie()[0] ?? "";
      assert.match(line, /^__Host-flagstaff_session=[A-Za-z0-9_-]{43};/);
      const attributes = line.split(";").map((a) => a.trim().toLowerCase());
      for (const wanted of ["secure", "httponly", "path=/", "samesite=lax", `max-age=${7 * 24 * 3600}`]) {
        assert.ok(attributes.includes(wanted), `${wanted} in ${line}`);
      }
      assert.ok(!attributes.some((a) => a.startsWith("domain")), "__Host- cookies have no Domain");
      const cookie = sessionCookieOf(res) as string;
      assert.equal((await whoami(server, cookie)).status, 200);
      // The plain name is not this server's cookie.
      expectProblem(await whoami(server, cookie.replace("__Host-", "")), 401, "unauthorized");

      const change = (origin: string) =>
        server.request("PATCH", `/users/${person.id}`, {
          key: null,
          headers: { cookie, origin },
          body: { name: "x" },
        });
      // The origin is checked first; past it, a member may not change people anyway.
      expectProblem(await change(server.url), 403, "cross_site_request");
      expectProblem(await change("https://flags.example.com"), 403, "forbidden");
      const logout = await server.request("POST", "/auth/logout", {
        key: null,
        headers: { cookie, origin: "https://flags.example.com" },
      });
      assert.equal(logout.status, 204);
      assert.match(logout.headers.getSetCookie()[0] ?? "", /^__Host-flagstaff_session=;.*Secure/i);
    });
  });

  describe(`without password sign-in [${dialect}]`, () => {
    test("PASSWORD_SIGN_IN=false: /auth/login is 404 and /auth/methods says so", async () => {
      const server = await startServer({ dialect, env: { PASSWORD_SIGN_IN: "false" } });
      try {
        const person = await createPerson(server);
        const res = await login(server, person.email, PASSWORD);
        expectProblem(res, 404, "not_found");
        assert.equal(sessionCookieOf(res), undefined);
        assert.deepEqual((await server.request("GET", "/auth/methods", { key: null })).body, {
          password: false,
          oidc: null,
        });
      } finally {
        await server.close();
      }
    });
  });

  describe(`one-time sign-in links [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    /** Runs `admin-key user create` in this process on the server's database; answers its JSON. */
    async function userCreate(email: string, ...more: string[]) {
      let stdout = "";
      let stderr = "";
      const code = await runAdminKeyCommand(["user", "create", "--email", email, "--json", ...more], {
        env: { DATABASE_URL: server.databaseUrl, PUBLIC_URL: server.url },
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
      });
      assert.equal(code, 0, stderr);
      return JSON.parse(stdout);
    }

    test("the link of `user create` signs in once; its second use, or a made-up one, redirects with link_invalid", async () => {
      const email = uniqueEmail("linked");
      const created = await userCreate(email, "--name", "Linked Admin", "--admin");
      assert.equal(created.role, "admin");
      assert.equal(created.hasPassword, false);
      const link = new URL(created.signInLink);
      assert.equal(link.origin, server.url);
      assert.equal(link.pathname, "/auth/link");

      const first = await fetch(link, { redirect: "manual" });
      assert.equal(first.status, 302);
      // It lands on the Me page, which asks for a password: the link works once.
      assert.equal(first.headers.get("location"), "/console/me?signedInBy=link");
      const cookie = first.headers
        .getSetCookie()
        .map((l) => l.split(";")[0])
        .find((p) => p?.startsWith("flagstaff_session="));
      assert.ok(cookie, "a session cookie");
      // The person was added beside the running server: it learns of them from the database.
      const me = await waitFor("the linked person's session", () => whoami(server, cookie), {
        until: (res) => res.status === 200,
      });
      assert.equal(me.body.user.email, email);
      assert.equal(me.body.user.role, "admin");
      assert.equal(me.body.via, "session");

      for (const url of [link.href, `${server.url}/auth/link?token=${randomBytes(32).toString("base64url")}`]) {
        const again = await fetch(url, { redirect: "manual" });
        assert.equal(again.status, 302);
        assert.equal(again.headers.get("location"), "/console/?signInError=link_invalid");
        assert.ok(!again.headers.getSetCookie().some((l) => l.startsWith("flagstaff_session=")), "no session");
      }
      const noToken = await server.request("GET", "/auth/link", { key: null, conformance: false });
      expectProblem(noToken, 400, "invalid_request");
    });

    test("with --password-stdin there is no link, and the password signs in", async () => {
      const email = uniqueEmail("stdin");
      let stdout = "";
      const code = await runAdminKeyCommand(["user", "create", "--email", email, "--json", "--password-stdin"], {
        env: { DATABASE_URL: server.databaseUrl },
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: () => true },
        readStdin: async () => `${PASSWORD}\n`,
      });
      assert.equal(code, 0);
      const created = JSON.parse(stdout);
      assert.equal(created.signInLink, undefined);
      assert.equal(created.hasPassword, true);
      assert.equal(created.role, "member");
      const cookie = await signIn(server, email);
      await waitFor("the person's session", () => whoami(server, cookie), { until: (res) => res.status === 200 });
    });
  });
}
