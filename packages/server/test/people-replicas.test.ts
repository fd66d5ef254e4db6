// Two instances on one database (docs/people.md): disabling a person on one instance ends their sessions
// and personal keys on the other within the propagation window (at once on PostgreSQL, by notification;
// within FEED_POLL_INTERVAL_MS on SQLite), a grant given on one is honoured by the other, failed
// sign-ins are counted together, and a session ended on one ends the streams it opened on the other
// within STREAM_SESSION_CHECK_MS.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  EventStreamClient,
  type FreshDatabase,
  freshDatabase,
  startServer,
  type TestServer,
  waitFor,
  withDeadline,
} from "@flagstaff/test-harness";
import { asKey, asSession, createPerson, grant, outcome, PASSWORD, personalKey, signIn } from "./helpers/people.js";

for (const dialect of DIALECTS) {
  describe(`people across instances [${dialect}]`, () => {
    let database: FreshDatabase;
    let a: TestServer;
    let b: TestServer;

    before(async () => {
      database = await freshDatabase(dialect);
      // The safety-net poll is how SQLite instances learn of each other's writes; PostgreSQL notifies.
      // Sessions are rows, not changes: an instance finds one ended elsewhere at its streams' next check.
      const env = { FEED_POLL_INTERVAL_MS: "100", STREAM_SESSION_CHECK_MS: "200" };
      a = await startServer({ dialect, database, env });
      b = await startServer({ dialect, database, env });
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await database?.drop();
    });

    test("a grant made on one instance opens the project on the other; disabling there shuts it everywhere", async () => {
      const project = await createProject(a);
      const person = await createPerson(a);
      const cookie = await signIn(b, person.email);
      // No grant yet: the project is invisible on B.
      assert.equal(
        outcome(await b.request("GET", `/projects/${project}/flags`, asSession(cookie))),
        "404 project_not_found",
      );

      await grant(a, project, person.id, "write");
      await waitFor(
        "B to honour the grant made on A",
        async () => outcome(await b.request("GET", `/projects/${project}/flags`, asSession(cookie))),
        { until: (o) => o === "200" },
      );
      const { key } = await personalKey(b, cookie, { project, role: "write" });
      await waitFor(
        "A to know the key made on B",
        async () => outcome(await a.request("GET", `/projects/${project}/flags`, asKey(key))),
        { until: (o) => o === "200" },
      );
      // The check's fast path takes the key too, once the flag made on A has reached B.
      assert.equal((await a.request("POST", `/projects/${project}/flags/f`, asKey(key, { body: {} }))).status, 201);
      await waitFor(
        "B to answer the check of the flag made on A",
        async () => (await b.request("GET", `/projects/${project}/flags/f/check?actorIds=x`, asKey(key))).status,
        { until: (status) => status === 200 },
      );

      const disabled = await a.request("PATCH", `/users/${person.id}`, { body: { disabled: true } });
      assert.equal(disabled.status, 200, disabled.text);
      // Sessions live in the database: the session made on B ends at once, everywhere.
      assert.equal(outcome(await b.request("GET", "/whoami", asSession(cookie))), "401 unauthorized");
      await waitFor(
        "B to refuse the disabled person's key",
        async () => outcome(await b.request("GET", `/projects/${project}/flags/f/check?actorIds=x`, asKey(key))),
        { until: (o) => o === "401 unauthorized" },
      );
      assert.equal(outcome(await a.request("GET", `/projects/${project}/flags`, asKey(key))), "401 unauthorized");
    });

    test("the lockout holds across instances: parallel wrong passwords on both are checked five times in all", async () => {
      const person = await createPerson(a);
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? a : b).request("POST", "/auth/login", {
            key: null,
            body: { email: person.email, password: `guess ${i}` },
          }),
        ),
      );
      const statuses = answers.map((res) => res.status);
      assert.equal(statuses.filter((status) => status === 401).length, 5, statuses.join(" "));
      assert.equal(statuses.filter((status) => status === 429).length, 25, statuses.join(" "));
      for (const server of [a, b]) {
        const res = await server.request("POST", "/auth/login", {
          key: null,
          body: { email: person.email, password: PASSWORD },
        });
        assert.equal(outcome(res), "429 too_many_attempts");
        assert.ok(Number(res.headers.get("retry-after")) > 0);
      }
    });

    test("signing out on one instance ends the session's streams on the other within the check's window", async () => {
      const project = await createProject(a);
      assert.equal((await a.request("POST", `/projects/${project}/flags/f`, { body: {} })).status, 201);
      const person = await createPerson(a);
      await grant(a, project, person.id, "read");
      const cookie = await signIn(a, person.email);
      const other = await signIn(a, person.email);
      const open = async (session: string) => {
        const stream = await waitFor(
          "B to open a stream for the session made on A",
          () =>
            EventStreamClient.open(`${b.url}/projects/${project}/stream`, { key: null, headers: { cookie: session } }),
          { until: (s) => s.status === 200 },
        );
        await stream.next("the snapshot on B", (e) => e.event === "snapshot");
        return stream;
      };
      const ending = await open(cookie);
      const going = await open(other);
      assert.equal((await a.request("POST", "/auth/logout", asSession(cookie))).status, 204);
      await withDeadline(ending.ended, 10_000, "B's stream of the session ended on A ending");
      // The other session's stream on B goes on, and gets the next change.
      const changed = await a.request("PATCH", `/projects/${project}/flags/f`, { body: { addActors: ["after"] } });
      assert.equal(changed.status, 200, changed.text);
      await going.next("the change on the other session's stream", (e) => e.event === "change");
      assert.equal(going.isEnded, false);
      // Sign-out everywhere on A ends it too.
      assert.equal((await a.request("DELETE", "/users/me/sessions", asSession(other))).status, 204);
      await withDeadline(going.ended, 10_000, "B's stream of a session signed out everywhere on A ending");
    });
  });
}
