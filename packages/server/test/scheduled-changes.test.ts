// Scheduled changes (issue 35; docs/change-requests.md, "Scheduled changes"): a change request with a time
// is applied by the job runner when a manual clock passes it: once, with approvals counted again then;
// after a restart that spans its time; exactly once with two instances polling one PostgreSQL database;
// and, when the database fails it, retried a bounded number of times and then marked failed. The schedule
// lists what is due. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import {
  createProject,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  ManualClock,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { asSession, createPerson, grant, signIn } from "./helpers/people.js";

const HOUR = 3_600_000;
/** The runner polls this often (real time), reading the manual clock each time. */
const FAST_JOBS = { JOBS_POLL_INTERVAL_MS: "25" };

const crs = (p: string) => `/projects/${p}/change-requests`;
const inAnHour = (clock: ManualClock, hours = 1) => new Date(clock.now() + hours * HOUR).toISOString();

async function flag(server: TestServer, project: string, name: string) {
  const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body: {} });
  assert.equal(res.status, 201, res.text);
}

async function schedule(server: TestServer, project: string, name: string, at: string, title = `Turn ${name} on`) {
  const res = await server.request("POST", crs(project), {
    body: {
      environment: "production",
      title,
      changes: [{ flag: name, patch: { status: "enabled" } }],
      scheduledAt: at,
    },
  });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const stateOf = async (server: TestServer, project: string, id: string) =>
  (await server.request("GET", `${crs(project)}/${id}`)).body;

const statusOf = async (server: TestServer, project: string, name: string) =>
  (await server.request("GET", `/projects/${project}/flags/${name}`)).body.status;

/** The flag events recorded for a request: one per change once applied, never more. */
async function appliedEvents(server: TestServer, project: string, id: string): Promise<any[]> {
  const res = await server.request("GET", `/projects/${project}/events?limit=100&type=flag.updated`);
  assert.equal(res.status, 200, res.text);
  return res.body.data.filter((e: any) => e.changeRequest === id);
}

for (const dialect of DIALECTS) {
  describe(`scheduled changes [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock();

    before(async () => {
      server = await startServer({ dialect, clock, env: { ...FAST_JOBS, SCHEDULED_CHANGE_MAX_ATTEMPTS: "2" } });
    });
    after(() => server.close());

    test("no approvals required: scheduled at once, applied once when its time passes, listed until then", async () => {
      const project = await createProject(server);
      await flag(server, project, "launch");
      const at = inAnHour(clock);
      const request = await schedule(server, project, "launch", at);
      assert.equal(request.state, "scheduled");
      assert.equal(request.scheduledAt, at);
      const listed = await server.request("GET", `/projects/${project}/schedule`);
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        listed.body.data.map((e: any) => [e.at, e.kind, e.environment, e.changeRequest.id]),
        [[at, "change_request", "production", request.id]],
      );

      clock.advance(HOUR - 1);
      await server.service.jobs.runAll();
      assert.equal((await stateOf(server, project, request.id)).state, "scheduled", "not before its time");
      assert.equal(await statusOf(server, project, "launch"), "disabled");

      clock.advance(1);
      const applied = await waitFor("the request applied", () => stateOf(server, project, request.id), {
        until: (r) => r.state === "applied",
      });
      assert.equal(applied.appliedBy.type, "system");
      assert.equal(await statusOf(server, project, "launch"), "enabled");
      await server.service.jobs.runAll();
      clock.advance(HOUR);
      await server.service.jobs.runAll();
      const events = await appliedEvents(server, project, request.id);
      assert.equal(events.length, 1, "applied once");
      assert.deepEqual(events[0].actor, { type: "system", system: "scheduler" });
      assert.deepEqual((await server.request("GET", `/projects/${project}/schedule`)).body.data, []);
    });

    test("approvals are counted again when its time comes: approved, then the policy raised, it fails", async () => {
      const project = await createProject(server);
      await flag(server, project, "a");
      await flag(server, project, "b");
      const [approver] = await Promise.all([createPerson(server, { name: "approver" })]);
      await grant(server, project, approver!.id, "write");
      const cookie = await signIn(server, approver!.email);
      const policy = (n: number) =>
        server.request("PATCH", `/projects/${project}/environments/production`, { body: { requiredApprovals: n } });
      assert.equal((await policy(1)).status, 200);

      const ok = await schedule(server, project, "a", inAnHour(clock));
      const late = await schedule(server, project, "b", inAnHour(clock));
      assert.equal(ok.state, "open");
      const entries = (await server.request("GET", `/projects/${project}/schedule`)).body.data;
      assert.equal(entries.length, 2);
      assert.match(entries[0].description, /once approved \(0 of 1 approvals\)/);
      for (const id of [ok.id, late.id]) {
        const res = await server.request(
          "POST",
          `${crs(project)}/${id}/reviews`,
          asSession(cookie, { body: { decision: "approve" } }),
        );
        assert.equal(res.body.state, "scheduled", res.text);
      }
      // Raised for b only: a is applied by a second approval before its time; b is not approved enough.
      assert.equal((await policy(2)).status, 200);
      const second = await createPerson(server, { name: "second" });
      await grant(server, project, second.id, "admin");
      const secondCookie = await signIn(server, second.email);
      const res = await server.request(
        "POST",
        `${crs(project)}/${ok.id}/reviews`,
        asSession(secondCookie, { body: { decision: "approve" } }),
      );
      assert.equal(res.body.state, "scheduled", res.text);

      clock.advance(HOUR);
      await server.service.jobs.runAll();
      assert.equal((await stateOf(server, project, ok.id)).state, "applied");
      const failed = await stateOf(server, project, late.id);
      assert.equal(failed.state, "failed");
      assert.match(failed.failureReason, /not approved when its time came: 1 of 2 approvals/);
      assert.equal(await statusOf(server, project, "b"), "disabled");
      const types = (await server.request("GET", `/projects/${project}/events?type=change_request.failed`)).body.data;
      assert.equal(types.length, 1);
    });

    test("an open request whose time passed waits; approved later, it is applied at once", async () => {
      const project = await createProject(server);
      await flag(server, project, "f");
      await server.request("PATCH", `/projects/${project}/environments/production`, { body: { requiredApprovals: 1 } });
      const request = await schedule(server, project, "f", inAnHour(clock));
      clock.advance(2 * HOUR);
      await server.service.jobs.runAll();
      assert.equal((await stateOf(server, project, request.id)).state, "open");
      const person = await createPerson(server);
      await grant(server, project, person.id, "write");
      const cookie = await signIn(server, person.email);
      await server.request(
        "POST",
        `${crs(project)}/${request.id}/reviews`,
        asSession(cookie, { body: { decision: "approve" } }),
      );
      await waitFor("applied", () => stateOf(server, project, request.id), { until: (r) => r.state === "applied" });
    });

    test("a cancelled or rescheduled request is not applied at its old time", async () => {
      const project = await createProject(server);
      await flag(server, project, "c");
      await flag(server, project, "r");
      const cancelled = await schedule(server, project, "c", inAnHour(clock));
      const moved = await schedule(server, project, "r", inAnHour(clock));
      assert.equal((await server.request("POST", `${crs(project)}/${cancelled.id}/cancel`, { body: {} })).status, 200);
      const patched = await server.request("PATCH", `${crs(project)}/${moved.id}`, {
        body: { scheduledAt: inAnHour(clock, 3) },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.state, "scheduled");
      clock.advance(HOUR);
      await server.service.jobs.runAll();
      assert.equal((await stateOf(server, project, cancelled.id)).state, "cancelled");
      assert.equal((await stateOf(server, project, moved.id)).state, "scheduled");
      assert.equal(await statusOf(server, project, "c"), "disabled");
      clock.advance(2 * HOUR);
      await server.service.jobs.runAll();
      assert.equal((await stateOf(server, project, moved.id)).state, "applied");
    });

    test("the database failing an attempt: tried again later, at most SCHEDULED_CHANGE_MAX_ATTEMPTS times", async () => {
      const project = await createProject(server);
      await flag(server, project, "stuck");
      const request = await schedule(server, project, "stuck", inAnHour(clock));
      const db = server.database.db;
      // Every change to a configuration fails in the database, as an outage would fail it.
      if (dialect === "sqlite") {
        await sql`create trigger fail_configs before update on flag_configs begin select raise(abort, 'injected failure'); end`.execute(
          db,
        );
      } else {
        await sql`create function fail_configs() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(
          db,
        );
        await sql`create trigger fail_configs before update on flag_configs for each row execute function fail_configs()`.execute(
          db,
        );
      }
      try {
        clock.advance(HOUR);
        await server.service.jobs.runAll();
        const retrying = await stateOf(server, project, request.id);
        assert.equal(retrying.state, "scheduled");
        assert.match(retrying.failureReason, /attempt 1 failed: .*injected failure/);
        // Not before its retry time.
        clock.advance(5_000);
        await server.service.jobs.runAll();
        assert.equal((await stateOf(server, project, request.id)).state, "scheduled");
        clock.advance(5_000);
        await server.service.jobs.runAll();
        const failed = await stateOf(server, project, request.id);
        assert.equal(failed.state, "failed");
        assert.match(failed.failureReason, /2 attempts failed; the last: .*injected failure/);
      } finally {
        if (dialect === "sqlite") await sql`drop trigger fail_configs`.execute(db);
        else {
          await sql`drop trigger fail_configs on flag_configs`.execute(db);
          await sql`drop function fail_configs()`.execute(db);
        }
      }
      assert.equal(await statusOf(server, project, "stuck"), "disabled");
      expectProblem(
        await server.request("POST", `${crs(project)}/${request.id}/apply`, { body: {} }),
        409,
        "change_request_state",
      );
    });
  });

  describe(`scheduled changes across a restart [${dialect}]`, () => {
    let database: FreshDatabase;
    before(async () => {
      database = await freshDatabase(dialect);
    });
    after(() => database.drop());

    test("a request due while the service was down is applied by the first instance that starts", async () => {
      const clock = new ManualClock();
      const first = await startServer({ dialect, database, clock, env: FAST_JOBS });
      const project = await createProject(first);
      await flag(first, project, "overnight");
      const request = await schedule(first, project, "overnight", inAnHour(clock, 8));
      await first.stop();
      clock.advance(9 * HOUR);
      const second = await startServer({ dialect, database, clock, env: FAST_JOBS });
      try {
        await waitFor("applied after the restart", () => stateOf(second, project, request.id), {
          until: (r) => r.state === "applied",
        });
        assert.equal(await statusOf(second, project, "overnight"), "enabled");
        assert.equal((await appliedEvents(second, project, request.id)).length, 1);
      } finally {
        await second.stop();
      }
    });
  });
}

describe("scheduled changes on two instances of one PostgreSQL database", {
  skip: !DIALECTS.includes("postgres"),
}, () => {
  let database: FreshDatabase;
  let a: TestServer;
  let b: TestServer;
  const clock = new ManualClock();

  before(async () => {
    database = await freshDatabase("postgres");
    a = await startServer({ dialect: "postgres", database, clock, env: FAST_JOBS });
    b = await startServer({ dialect: "postgres", database, clock, env: FAST_JOBS });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await database?.drop();
  });

  test("every request due is applied exactly once, whichever instance claims it", async () => {
    const project = await createProject(a);
    const requests = [];
    for (let i = 0; i < 12; i++) {
      await flag(a, project, `f${i}`);
      requests.push(await schedule(i % 2 === 0 ? a : b, project, `f${i}`, inAnHour(clock)));
    }
    clock.advance(HOUR);
    // Both instances run the job at once, as their polls would, several times over.
    await Promise.all([
      a.service.jobs.runAll(),
      b.service.jobs.runAll(),
      a.service.jobs.runAll(),
      b.service.jobs.runAll(),
    ]);
    for (const request of requests) {
      await waitFor(`${request.id} applied`, () => stateOf(b, project, request.id), {
        until: (r) => r.state === "applied",
      });
    }
    await Promise.all([a.service.jobs.runAll(), b.service.jobs.runAll()]);
    for (const request of requests) {
      assert.equal((await appliedEvents(a, project, request.id)).length, 1, `${request.id} applied once`);
    }
    const applied = (await a.request("GET", `/projects/${project}/events?limit=100&type=change_request.applied`)).body
      .data;
    assert.equal(applied.length, 12);
  });
});
