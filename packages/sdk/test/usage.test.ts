// Usage reported by the SDK's local evaluators (issue 36; docs/usage.md, "Reports from SDKs"): counted per
// flag, variant and minute in memory, reported every 60 s and at close; a report that fails while the
// server is down is kept and sent once it is back. With one manual clock read by the server and by the
// evaluators, the server's own counts and two evaluators' add up exactly, across a restart of the server
// and across two instances of one database. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  freePort,
  freshDatabase,
  ManualClock,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { createLocalEvaluator, type LocalEvaluator, type LocalEvaluatorError } from "../src/index.js";

const MINUTE = 60_000;

async function totals(server: TestServer, project: string, flag: string): Promise<Record<string, number>> {
  const res = await server.request("GET", `/projects/${project}/flags/${flag}/usage?step=day`);
  assert.equal(res.status, 200, res.text);
  return res.body.totals;
}

async function check(server: TestServer, project: string, flag: string, times: number) {
  for (let i = 0; i < times; i++)
    assert.equal((await server.request("GET", `/projects/${project}/flags/${flag}/check`)).status, 200);
}

function evaluate(local: LocalEvaluator, flag: string, times: number, actor?: string) {
  for (let i = 0; i < times; i++) local.evaluate(flag, actor === undefined ? [] : [actor]);
}

for (const dialect of DIALECTS) {
  describe(`usage reported by local evaluators [${dialect}]`, () => {
    test("the server's counts and two evaluators' add up exactly, every minute and at close, across a restart", async () => {
      const clock = new ManualClock(Date.parse("2026-11-25T12:00:00.000Z"));
      const database = await freshDatabase(dialect);
      const port = String(await freePort());
      const env = { PORT: port, USAGE_FLUSH_INTERVAL_MS: "60000", JOBS_POLL_INTERVAL_MS: "60000" };
      let server: TestServer | undefined = await startServer({ dialect, clock, database, env });
      const locals: LocalEvaluator[] = [];
      const errors: LocalEvaluatorError[] = [];
      try {
        const project = await createProject(server);
        await server.request("POST", `/projects/${project}/flags/banner`, { body: {} });
        await server.request("PATCH", `/projects/${project}/flags/banner`, { body: { status: "enabled" } });
        await server.request("POST", `/projects/${project}/flags/beta`, { body: {} });
        await server.request("PATCH", `/projects/${project}/flags/beta`, {
          body: { status: "conditional", addActors: ["alice"] },
        });
        const key = (await createKey(server, project, "read")).key;
        // A reports on the manual clock's timer (every 60 s); B only when closed.
        const a = createLocalEvaluator({
          url: server.url,
          key,
          projectId: project,
          now: () => clock.now(),
          timers: clock,
          idleTimeoutMs: 3_600_000,
        });
        const b = createLocalEvaluator({
          url: server.url,
          key,
          projectId: project,
          now: () => clock.now(),
          usageIntervalMs: 3_600_000,
        });
        locals.push(a, b);
        a.on("error", (error) => errors.push(error));
        await Promise.all([a.ready(10_000), b.ready(10_000)]);

        // Minute 0: both evaluators and the server.
        evaluate(a, "banner", 5);
        evaluate(a, "beta", 3, "alice");
        evaluate(a, "beta", 2, "bob");
        evaluate(b, "banner", 4);
        // Not counted: no flag answered.
        a.evaluate("no-such-flag");
        a.evaluate("banner", { actorIds: [""] });
        await check(server, project, "banner", 2);
        const running = server;
        clock.advance(MINUTE);
        await waitFor("A's first report", async () => (await totals(running, project, "beta")).on === 3);

        // The server stops; A's next report fails, and is kept.
        await server.stop();
        server = undefined;
        evaluate(a, "banner", 7);
        clock.advance(MINUTE);
        await waitFor("A's report to fail", () => errors.some((e) => e.error.code === "usage_report_failed"));
        assert.ok(
          errors.every((e) => !e.fatal),
          "a failed report stops nothing",
        );
        assert.equal(a.evaluate("banner").enabled, true, "evaluations go on");

        // Back on the same port: the next report carries the kept counts too.
        server = await startServer({ dialect, clock, database, env });
        const restarted = server;
        evaluate(a, "banner", 1);
        await check(server, project, "banner", 1);
        clock.advance(MINUTE);
        await restarted.service.usage.flush();
        // The server's 2 and 1, A's 5, 7 and 1 (and the one evaluation above, while the server was down).
        const expected = 2 + 5 + 7 + 1 + 1 + 1;
        await waitFor(
          "A's report after the restart",
          async () => (await totals(restarted, project, "banner")).on === expected,
        );
        // B reports when it is closed.
        await b.close();
        assert.deepEqual(await totals(server, project, "banner"), { on: expected + 4 });
        assert.deepEqual(await totals(server, project, "beta"), { on: 3, off: 2 });
        // Per minute: what each minute held.
        const minutes = await server.request(
          "GET",
          `/projects/${project}/flags/banner/usage?step=minute&from=2026-11-25T12:00:00Z&to=2026-11-25T12:04:00Z`,
        );
        assert.deepEqual(
          minutes.body.points.map((p: { evaluations: Record<string, number> }) => p.evaluations.on ?? 0),
          [2 + 5 + 4, 7, 1 + 1 + 1, 0],
        );
      } finally {
        for (const local of locals) await local.close();
        await server?.stop();
        await database.drop();
      }
    });

    test("two instances of one database: each evaluator's reports reach the same counts", async () => {
      const database = await freshDatabase(dialect);
      const clock = new ManualClock(Date.parse("2026-11-26T08:00:00.000Z"));
      const one = await startServer({ dialect, clock, database });
      const two = await startServer({ dialect, clock, database });
      const locals: LocalEvaluator[] = [];
      try {
        const project = await createProject(one);
        await one.request("POST", `/projects/${project}/flags/shared`, { body: {} });
        const key = (await createKey(one, project, "read")).key;
        await two.service.feed.reconcile();
        for (const server of [one, two]) {
          const local = createLocalEvaluator({ url: server.url, key, projectId: project, now: () => clock.now() });
          locals.push(local);
          await local.ready(10_000);
        }
        evaluate(locals[0] as LocalEvaluator, "shared", 6);
        evaluate(locals[1] as LocalEvaluator, "shared", 9);
        await check(two, project, "shared", 1);
        await Promise.all(locals.map((local) => local.flushUsage()));
        await two.service.usage.flush();
        assert.deepEqual(await totals(one, project, "shared"), { off: 16 });
      } finally {
        for (const local of locals) await local.close();
        await one.stop();
        await two.stop();
        await database.drop();
      }
    });

    test("a report whose answer is lost is sent again under its id, and counted once", async () => {
      const clock = new ManualClock(Date.parse("2026-11-27T09:00:00.000Z"));
      const server = await startServer({ dialect, clock });
      let local: LocalEvaluator | undefined;
      try {
        const project = await createProject(server);
        await server.request("POST", `/projects/${project}/flags/lost`, { body: {} });
        const key = (await createKey(server, project, "read")).key;
        let lose = 1;
        const bodies: string[] = [];
        local = createLocalEvaluator({
          url: server.url,
          key,
          projectId: project,
          now: () => clock.now(),
          // The first report reaches the server, which records it; its answer never comes back.
          fetch: async (url, init) => {
            const response = await fetch(url, init);
            if (init.method === "POST") {
              bodies.push(String(init.body));
              if (lose-- > 0) {
                await response.text();
                throw new TypeError("fetch failed: the connection was reset");
              }
            }
            return response;
          },
        });
        await local.ready(10_000);
        evaluate(local, "lost", 4);
        await local.flushUsage();
        assert.deepEqual(await totals(server, project, "lost"), { off: 4 }, "recorded, though the answer was lost");
        evaluate(local, "lost", 1);
        await local.flushUsage();
        assert.equal(bodies.length, 3, "the lost report again, then the new one");
        assert.equal(JSON.parse(bodies[1] as string).id, JSON.parse(bodies[0] as string).id);
        assert.notEqual(JSON.parse(bodies[2] as string).id, JSON.parse(bodies[0] as string).id);
        assert.deepEqual(await totals(server, project, "lost"), { off: 5 }, "counted once");
      } finally {
        await local?.close();
        await server.close();
      }
    });

    test("reportUsage: false reports nothing; a report refused for good is dropped and told", async () => {
      const clock = new ManualClock(Date.parse("2026-11-27T08:00:00.000Z"));
      const server = await startServer({ dialect, clock });
      const locals: LocalEvaluator[] = [];
      try {
        const project = await createProject(server);
        await server.request("POST", `/projects/${project}/flags/quiet`, { body: {} });
        const key = await createKey(server, project, "read");
        const silent = createLocalEvaluator({
          url: server.url,
          key: key.key,
          projectId: project,
          now: () => clock.now(),
          reportUsage: false,
        });
        locals.push(silent);
        await silent.ready(10_000);
        evaluate(silent, "quiet", 3);
        await silent.flushUsage();
        await silent.close();
        assert.deepEqual(await totals(server, project, "quiet"), {});

        const errors: LocalEvaluatorError[] = [];
        const revoked = createLocalEvaluator({
          url: server.url,
          key: key.key,
          projectId: project,
          now: () => clock.now(),
        });
        locals.push(revoked);
        revoked.on("error", (error) => errors.push(error));
        await revoked.ready(10_000);
        evaluate(revoked, "quiet", 2);
        assert.equal((await server.request("DELETE", `/projects/${project}/keys/${key.id}`)).status, 204);
        await revoked.flushUsage();
        assert.ok(errors.some((e) => e.error.code === "usage_report_failed" && /401/.test(e.error.message)));
        // Dropped, not kept: nothing is sent again.
        errors.length = 0;
        await revoked.flushUsage();
        assert.equal(errors.filter((e) => e.error.code === "usage_report_failed").length, 0);
      } finally {
        for (const local of locals) await local.close();
        await server.close();
      }
    });
  });
}
