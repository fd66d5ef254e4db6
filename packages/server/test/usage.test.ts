// Usage over time (issue 36; docs/usage.md): evaluations counted per flag, environment, variant and minute
// by the check, OFREP (single and bulk) and SDKs' reports; series by minute, hour and day that keep their
// totals across roll-ups and pruning, with a manual clock; counts flushed at shutdown and added up across
// a restart and two instances of one database; every refusal of the report and the series. Real servers
// over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  freshDatabase,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The jobs poll rarely (real time): the tests run the roll-up themselves (jobs.runAll). */
const QUIET_JOBS = { JOBS_POLL_INTERVAL_MS: "60000", USAGE_FLUSH_INTERVAL_MS: "60000" };

const iso = (ms: number) => new Date(ms).toISOString();

async function flag(server: TestServer, project: string, name: string, patch: object = {}) {
  const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body: {} });
  assert.equal(res.status, 201, res.text);
  if (Object.keys(patch).length > 0) {
    const patched = await server.request("PATCH", `/projects/${project}/flags/${name}`, { body: patch });
    assert.equal(patched.status, 200, patched.text);
  }
}

async function check(server: TestServer, project: string, name: string, times: number, actor?: string) {
  for (let i = 0; i < times; i++) {
    const query = actor === undefined ? "" : `?actorIds=${actor}`;
    const res = await server.request("GET", `/projects/${project}/flags/${name}/check${query}`);
    assert.equal(res.status, 200, res.text);
  }
}

async function series(server: TestServer, project: string, name: string, query: string) {
  const res = await server.request("GET", `/projects/${project}/flags/${name}/usage?${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** The evaluations of a series' points, added up by variant. */
function sum(body: { points: { evaluations: Record<string, number> }[] }): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const point of body.points)
    for (const [variant, n] of Object.entries(point.evaluations)) totals[variant] = (totals[variant] ?? 0) + n;
  return totals;
}

for (const dialect of DIALECTS) {
  describe(`usage over time [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock(Date.parse("2026-11-22T10:00:00.000Z"));

    before(async () => {
      server = await startServer({ dialect, clock, env: QUIET_JOBS });
    });
    after(() => server.close());

    test("the check, OFREP and OFREP's bulk answers are counted per variant and minute; latestCheckedAt from them", async () => {
      const project = await createProject(server);
      await flag(server, project, "banner", { status: "enabled" });
      await flag(server, project, "beta", { status: "conditional", addActors: ["alice"] });
      const { key } = await createKey(server, project, "check");
      const start = clock.now();

      await check(server, project, "banner", 3);
      await check(server, project, "beta", 2, "alice");
      await check(server, project, "beta", 1, "bob");
      const single = await server.request("POST", "/ofrep/v1/evaluate/flags/banner", {
        key,
        body: { context: { targetingKey: "carol" } },
      });
      assert.equal(single.status, 200, single.text);
      clock.advance(MINUTE);
      // Bulk answers: banner's answer is shared (constant), beta's is decided per context.
      for (const targetingKey of ["alice", "bob"]) {
        const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", {
          key,
          body: { context: { targetingKey } },
        });
        assert.equal(bulk.status, 200, bulk.text);
      }
      await server.service.usage.flush();

      const banner = await series(
        server,
        project,
        "banner",
        `step=minute&from=${iso(start)}&to=${iso(start + 2 * MINUTE)}`,
      );
      assert.equal(banner.step, "minute");
      assert.equal(banner.environment, "production");
      assert.deepEqual(
        banner.points.map((p: any) => [p.at, p.evaluations]),
        [
          [iso(start), { on: 4 }],
          [iso(start + MINUTE), { on: 2 }],
        ],
      );
      assert.deepEqual(banner.totals, { on: 6 });
      const beta = await series(
        server,
        project,
        "beta",
        `step=minute&from=${iso(start)}&to=${iso(start + 2 * MINUTE)}`,
      );
      assert.deepEqual(
        beta.points.map((p: any) => p.evaluations),
        [
          { on: 2, off: 1 },
          { on: 1, off: 1 },
        ],
      );
      const read = await server.request("GET", `/projects/${project}/flags/beta`);
      assert.equal(read.body.latestCheckedAt, iso(start + MINUTE), "the last evaluation's time");
    });

    test("an SDK's report is added to the environment's counts; what cannot be counted is dropped and said", async () => {
      const project = await createProject(server);
      await flag(server, project, "search");
      const { key } = await createKey(server, project, "read");
      const minute = clock.now() - (clock.now() % MINUTE);
      const report = await server.request("POST", `/projects/${project}/usage`, {
        key,
        body: {
          counts: [
            { flag: "search", variant: "off", minute: iso(minute + 5000), count: 40 },
            { flag: "search", variant: "on", minute: iso(minute), count: 2 },
            { flag: "search", variant: "(error)", minute: iso(minute - MINUTE), count: 1 },
            { flag: "gone", variant: "on", minute: iso(minute), count: 9 },
            { flag: "search", variant: "on", minute: iso(minute - 49 * HOUR), count: 9 },
            { flag: "search", variant: "on", minute: iso(minute + 10 * MINUTE), count: 9 },
          ],
        },
      });
      assert.equal(report.status, 200, report.text);
      assert.deepEqual(report.body, { accepted: 3, dropped: 3, duplicate: false });
      const body = await series(
        server,
        project,
        "search",
        `step=minute&from=${iso(minute - MINUTE)}&to=${iso(minute + MINUTE)}`,
      );
      assert.deepEqual(
        body.points.map((p: any) => p.evaluations),
        [{ "(error)": 1 }, { off: 40, on: 2 }],
      );
      // Its latestCheckedAt: within the minute reported, never after now.
      await server.service.recorder.flush();
      const read = await server.request("GET", `/projects/${project}/flags/search`);
      assert.equal(read.body.latestCheckedAt, iso(Math.min(clock.now(), minute + MINUTE - 1)));
    });

    test("a report sent again under its id is counted once", async () => {
      const project = await createProject(server);
      await flag(server, project, "retried");
      const { key } = await createKey(server, project, "read");
      const body = {
        id: "report-0001",
        counts: [{ flag: "retried", variant: "on", minute: iso(clock.now()), count: 5 }],
      };
      const first = await server.request("POST", `/projects/${project}/usage`, { key, body });
      assert.deepEqual(first.body, { accepted: 1, dropped: 0, duplicate: false });
      const again = await server.request("POST", `/projects/${project}/usage`, { key, body });
      assert.deepEqual(again.body, { accepted: 0, dropped: 0, duplicate: true });
      // Another project may use the same id: ids are the project's.
      const other = await createProject(server);
      await flag(server, other, "retried");
      const otherKey = (await createKey(server, other, "read")).key;
      const elsewhere = await server.request("POST", `/projects/${other}/usage`, { key: otherKey, body });
      assert.deepEqual(elsewhere.body, { accepted: 1, dropped: 0, duplicate: false });
      assert.deepEqual((await series(server, project, "retried", "step=minute")).totals, { on: 5 });
    });

    test("the report's refusals: no key, a check key, unknown project and environment, another environment's key, bad bodies", async () => {
      const project = await createProject(server);
      await flag(server, project, "search");
      const { key } = await createKey(server, project, "read");
      // A check key sits in web pages: it may evaluate, never write counts.
      const checkKey = (await createKey(server, project, "check")).key;
      const at = iso(clock.now());
      const good = { counts: [{ flag: "search", variant: "on", minute: at, count: 1 }] };
      expectProblem(
        await server.request("POST", `/projects/${project}/usage`, { key: null, body: good }),
        401,
        "unauthorized",
      );
      expectProblem(
        await server.request("POST", `/projects/${project}/usage`, { key: "fsk_wrong", body: good }),
        401,
        "unauthorized",
      );
      expectProblem(
        await server.request("POST", `/projects/${project}/usage`, { key: checkKey, body: good }),
        403,
        "forbidden",
      );
      expectProblem(await server.request("POST", "/projects/nope/usage", { body: good }), 404, "project_not_found");
      expectProblem(
        await server.request("POST", `/projects/${project}/usage?environment=nope`, { body: good }),
        404,
        "environment_not_found",
      );
      // A check key is its environment's: it reports there only.
      expectProblem(
        await server.request("POST", `/projects/${project}/usage?environment=staging`, { key, body: good }),
        403,
        "forbidden",
      );
      const other = await createProject(server);
      const otherKey = (await createKey(server, other, "read")).key;
      expectProblem(
        await server.request("POST", `/projects/${project}/usage`, { key: otherKey, body: good }),
        403,
        "forbidden",
      );
      for (const body of [
        {},
        { counts: "many" },
        { counts: [{ flag: "search", variant: "on", minute: at, count: 0 }] },
        { counts: [{ flag: "search", variant: "on", minute: at, count: 1.5 }] },
        { counts: [{ flag: "search", variant: "", minute: at, count: 1 }] },
        { counts: [{ flag: "search", variant: "on", minute: "yesterday", count: 1 }] },
        { counts: [{ flag: "search", variant: "on", minute: at }] },
        { counts: [{ flag: "search", variant: "on", minute: at, count: 1, extra: true }] },
        { counts: Array.from({ length: 10_001 }, () => good.counts[0]) },
        { id: "short", counts: good.counts },
        { id: "has spaces in it", counts: good.counts },
      ]) {
        expectProblem(
          await server.request("POST", `/projects/${project}/usage`, { key, body }),
          400,
          "invalid_request",
        );
      }
      const raw = await server.request("POST", `/projects/${project}/usage`, {
        key,
        body: "{not json",
        headers: { "content-type": "application/json" },
      });
      expectProblem(raw, 400, "invalid_request");
      // Nothing of those was counted.
      const body = await series(server, project, "search", "step=minute");
      assert.deepEqual(body.totals, {});
    });

    test("roll-ups keep every total: minutes into hours, hours into days, old minutes dropped, late counts still added", async () => {
      const project = await createProject(server);
      await flag(server, project, "checkout");
      const { key } = await createKey(server, project, "read");
      const report = async (minute: number, variant: string, count: number) => {
        const res = await server.request("POST", `/projects/${project}/usage`, {
          key,
          body: { counts: [{ flag: "checkout", variant, minute: iso(minute), count }] },
        });
        assert.deepEqual(res.body, { accepted: 1, dropped: 0, duplicate: false }, res.text);
      };
      // Counts over three hours that cross a day's end, from the server and reported.
      const day = clock.now() - (clock.now() % DAY) + DAY;
      clock.advance(day + 23 * HOUR + 30 * MINUTE - clock.now());
      const first = clock.now();
      await check(server, project, "checkout", 2);
      await report(first, "on", 5);
      clock.advance(45 * MINUTE);
      await check(server, project, "checkout", 3);
      await report(clock.now(), "off", 7);
      clock.advance(HOUR);
      await check(server, project, "checkout", 1);
      await server.service.usage.flush();
      const expected = { off: 13, on: 5 };
      const range = `from=${iso(day)}&to=${iso(day + 3 * DAY)}`;
      const totals = async () => ({
        minute: sum(
          await series(server, project, "checkout", `step=minute&from=${iso(first)}&to=${iso(first + 24 * HOUR)}`),
        ),
        hour: sum(await series(server, project, "checkout", `step=hour&${range}`)),
        day: sum(await series(server, project, "checkout", `step=day&${range}`)),
      });
      assert.deepEqual(await totals(), { minute: expected, hour: expected, day: expected }, "before any roll-up");

      // The hours are over: rolled up into hours and the first day into a day.
      clock.advance(2 * HOUR);
      await server.service.jobs.runAll();
      assert.deepEqual(await totals(), { minute: expected, hour: expected, day: expected }, "after the roll-up");
      const hours = await series(
        server,
        project,
        "checkout",
        `step=hour&from=${iso(day + 23 * HOUR)}&to=${iso(day + 26 * HOUR)}`,
      );
      assert.deepEqual(
        hours.points.map((p: any) => p.evaluations),
        [{ on: 5, off: 2 }, { off: 10 }, { off: 1 }],
      );
      const days = await series(server, project, "checkout", `step=day&${range}`);
      assert.deepEqual(
        days.points.map((p: any) => p.evaluations),
        [{ on: 5, off: 2 }, { off: 11 }, {}],
      );

      // A late report of a minute whose hour and day are rolled up already: it reaches every series.
      await report(first + MINUTE, "on", 100);
      const late = { off: 13, on: 105 };
      assert.deepEqual(await totals(), { minute: late, hour: late, day: late }, "a late count");

      // Two days on, the minutes are dropped (kept 48 hours); hours and days keep the totals.
      clock.advance(2 * DAY);
      await server.service.jobs.runAll();
      const minutes = await server.database.db
        .selectFrom("flag_usage")
        .select("granularity")
        .where("flag_id", "=", (await server.request("GET", `/projects/${project}/flags/checkout`)).body.id)
        .where("granularity", "=", "minute")
        .execute();
      assert.equal(minutes.length, 0, "the minutes are dropped");
      const after = await totals();
      assert.deepEqual(after.minute, {});
      assert.deepEqual(after.hour, late);
      assert.deepEqual(after.day, late);
      // The roll-up run again changes nothing.
      await server.service.jobs.runAll();
      assert.deepEqual(sum(await series(server, project, "checkout", `step=day&${range}`)), late);
    });

    test("series: defaults, the buckets rounded out to the step, and every refusal", async () => {
      const project = await createProject(server);
      await flag(server, project, "nav");
      const body = await series(server, project, "nav", "");
      assert.equal(body.step, "hour");
      assert.equal(body.points.length, 24, "a day up to the hour under way");
      assert.equal(body.to, iso(clock.now() - (clock.now() % HOUR) + HOUR));
      const minute = await series(
        server,
        project,
        "nav",
        "step=minute&from=2026-11-20T10:00:30Z&to=2026-11-20T10:02:00Z",
      );
      assert.deepEqual(
        minute.points.map((p: any) => p.at),
        ["2026-11-20T10:00:00.000Z", "2026-11-20T10:01:00.000Z"],
      );
      const days = await series(server, project, "nav", "step=day&from=2026-10-01T00:00:00Z&to=2026-10-03T00:00:00Z");
      assert.equal(days.points.length, 2);
      const base = `/projects/${project}/flags/nav/usage`;
      for (const query of [
        "step=week",
        "from=yesterday",
        "from=2026-11-20T10:00:00Z&to=2026-11-20T10:00:00Z",
        "from=2026-11-21T10:00:00Z&to=2026-11-20T10:00:00Z",
        "step=minute&from=2026-11-18T00:00:00Z&to=2026-11-20T00:00:00Z",
        "bogus=1",
      ]) {
        expectProblem(await server.request("GET", `${base}?${query}`), 400, "invalid_request");
      }
      expectProblem(await server.request("GET", `/projects/${project}/flags/none/usage`), 404, "flag_not_found");
      expectProblem(await server.request("GET", "/projects/none/flags/nav/usage"), 404, "project_not_found");
      expectProblem(await server.request("GET", `${base}?environment=none`), 404, "environment_not_found");
      const { key } = await createKey(server, project, "check");
      expectProblem(await server.request("GET", base, { key }), 403, "forbidden");
      const reader = await createKey(server, project, "read");
      assert.equal((await server.request("GET", base, { key: reader.key })).status, 200);
    });

    test("several flags' series at once (the list's sparklines), every variant added up", async () => {
      const project = await createProject(server);
      await flag(server, project, "a", { status: "enabled" });
      await flag(server, project, "b");
      const start = clock.now() - (clock.now() % HOUR);
      await check(server, project, "a", 2);
      await check(server, project, "b", 3);
      await server.service.usage.flush();
      const res = await server.request(
        "GET",
        `/projects/${project}/usage?flags=a&flags=b&flags=missing&step=hour&from=${iso(start)}&to=${iso(start + HOUR)}`,
      );
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.flags, { a: [2], b: [3] });
      const many = Array.from({ length: 101 }, (_, i) => `flags=f${i}`).join("&");
      expectProblem(await server.request("GET", `/projects/${project}/usage?${many}`), 400, "invalid_request");
      expectProblem(await server.request("GET", `/projects/${project}/usage`), 400, "invalid_request");
    });

    test("counts an instance holds are written when it stops, and a restart adds to them", async () => {
      const database = await freshDatabase(dialect);
      const own = new ManualClock(Date.parse("2026-11-23T08:00:00.000Z"));
      let first: TestServer | undefined = await startServer({ dialect, clock: own, database, env: QUIET_JOBS });
      try {
        const project = await createProject(first);
        await flag(first, project, "promo", { status: "enabled" });
        await check(first, project, "promo", 4);
        await first.stop();
        first = undefined;
        const second = await startServer({ dialect, clock: own, database, env: QUIET_JOBS });
        try {
          await check(second, project, "promo", 3);
          await second.service.usage.flush();
          const body = await series(second, project, "promo", "step=minute");
          assert.deepEqual(body.totals, { on: 7 });
        } finally {
          await second.stop();
        }
      } finally {
        await first?.stop();
        await database.drop();
      }
    });
  });
}

describe("usage from two instances of one database", () => {
  const dialect = DIALECTS.includes("postgres") ? "postgres" : "sqlite";

  test(`counts of both add up, and both rolling up at once keeps the total [${dialect}]`, async () => {
    const database = await freshDatabase(dialect);
    const clock = new ManualClock(Date.parse("2026-11-24T09:00:00.000Z"));
    const a = await startServer({ dialect, clock, database, env: QUIET_JOBS });
    const b = await startServer({ dialect, clock, database, env: QUIET_JOBS });
    try {
      const project = await createProject(a);
      await flag(a, project, "shared", { status: "enabled" });
      const { key } = await createKey(a, project, "read");
      // b learns of the new flag through the feed.
      await b.service.feed.reconcile();
      for (let i = 0; i < 3; i++) {
        await check(a, project, "shared", 2);
        await check(b, project, "shared", 1);
        clock.advance(20 * MINUTE);
      }
      const minute = clock.now() - (clock.now() % MINUTE);
      await b.request("POST", `/projects/${project}/usage`, {
        key,
        body: { counts: [{ flag: "shared", variant: "on", minute: iso(minute - HOUR), count: 10 }] },
      });
      await Promise.all([a.service.usage.flush(), b.service.usage.flush()]);
      clock.advance(3 * HOUR);
      await Promise.all([a.service.jobs.runAll(), b.service.jobs.runAll()]);
      const hours = await series(
        a,
        project,
        "shared",
        `step=hour&from=${iso(clock.now() - 6 * HOUR)}&to=${iso(clock.now())}`,
      );
      const days = await series(
        b,
        project,
        "shared",
        `step=day&from=${iso(clock.now() - 2 * DAY)}&to=${iso(clock.now())}`,
      );
      assert.deepEqual(sum(hours), { on: 19 });
      assert.deepEqual(sum(days), { on: 19 });
    } finally {
      await a.stop();
      await b.stop();
      await database.drop();
    }
  });
});
