// A flag's lifecycle (issue 36; docs/lifecycle.md): its kind and permanence; the stale rules, each on its
// own, with a manual clock (outlived its kind's lifetime, unused for the window, one variant for the
// window), their `flag.stale` event and webhook fired once per time a flag becomes stale, the list's
// filter; archiving and restoring (evaluated as not found, kept out of lists, its name kept, back as it
// was), with every refusal. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
  waitFor,
  WebhookReceiver,
} from "@flagstaff/test-harness";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const QUIET = {
  JOBS_POLL_INTERVAL_MS: "60000",
  USAGE_FLUSH_INTERVAL_MS: "60000",
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
};

async function create(server: TestServer, project: string, name: string, body: object = {}) {
  const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function patch(server: TestServer, project: string, name: string, body: object) {
  const res = await server.request("PATCH", `/projects/${project}/flags/${name}`, { body });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const get = async (server: TestServer, project: string, name: string) =>
  (await server.request("GET", `/projects/${project}/flags/${name}`)).body;

async function check(server: TestServer, project: string, name: string, actor?: string) {
  const query = actor === undefined ? "" : `?actorIds=${actor}`;
  const res = await server.request("GET", `/projects/${project}/flags/${name}/check${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function staleEvents(server: TestServer, project: string) {
  const res = await server.request("GET", `/projects/${project}/events?type=flag.stale&limit=100`);
  assert.equal(res.status, 200, res.text);
  return res.body.data as any[];
}

for (const dialect of DIALECTS) {
  describe(`flag lifecycle [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock(Date.parse("2026-09-01T09:00:00.000Z"));
    /** Passes days, evaluating as told each day, then runs the stale rules. */
    const pass = async (days: number, eachDay: () => Promise<void> = async () => {}) => {
      for (let i = 0; i < days; i++) {
        clock.advance(DAY);
        await eachDay();
      }
      // The rules run at most once an hour (STALE_CHECK_INTERVAL_MS).
      if (days === 0) clock.advance(HOUR);
      await server.service.usage.flush();
      await server.service.jobs.runAll();
    };

    before(async () => {
      server = await startServer({ dialect, clock, env: QUIET });
    });
    after(() => server.close());

    test("kind and permanent: defaults, set at creation, changed by PATCH and recorded; bad values refused", async () => {
      const project = await createProject(server);
      const plain = await create(server, project, "plain");
      assert.equal(plain.kind, "release");
      assert.equal(plain.permanent, false);
      assert.equal(plain.stale, false);
      assert.equal(plain.staleReason, null);
      assert.equal(plain.archived, false);
      assert.equal(plain.archivedAt, null);
      const ops = await create(server, project, "ops", { kind: "kill-switch", permanent: true });
      assert.deepEqual([ops.kind, ops.permanent], ["kill-switch", true]);
      const changed = await patch(server, project, "plain", { kind: "experiment" });
      assert.equal(changed.kind, "experiment");
      const events = await server.request("GET", `/projects/${project}/events?flag=plain&type=flag.updated`);
      assert.deepEqual(
        events.body.data.map((e: any) => [e.before.kind, e.after.kind]),
        [["release", "experiment"]],
      );
      for (const body of [{ kind: "temporary" }, { permanent: "yes" }, { kind: null }]) {
        expectProblem(
          await server.request("PATCH", `/projects/${project}/flags/plain`, { body }),
          400,
          "invalid_request",
        );
      }
      expectProblem(
        await server.request("POST", `/projects/${project}/flags/bad`, { body: { kind: "forever" } }),
        400,
        "invalid_request",
      );
      const kills = await server.request("GET", `/projects/${project}/flags?kind=kill-switch`);
      assert.deepEqual(
        kills.body.data.map((f: any) => f.name),
        ["ops"],
      );
      expectProblem(await server.request("GET", `/projects/${project}/flags?kind=forever`), 400, "invalid_request");
    });

    test("stale: unused, whether never evaluated or not any more; evaluated again, not stale; stale again, a new event", async () => {
      const project = await createProject(server);
      await create(server, project, "never");
      await create(server, project, "once");
      await check(server, project, "once");
      await pass(29);
      assert.equal((await get(server, project, "never")).stale, false, "29 days: not yet");
      await pass(1);
      const never = await get(server, project, "never");
      assert.equal(never.stale, true);
      assert.equal(never.staleReason, "unused");
      assert.equal(never.staleSince, new Date(clock.now()).toISOString());
      assert.equal((await get(server, project, "once")).staleReason, "unused");
      let events = await staleEvents(server, project);
      assert.deepEqual(events.map((e) => [e.target.name, e.after.reason]).sort(), [
        ["never", "unused"],
        ["once", "unused"],
      ]);
      const detail = events.find((e) => e.target.name === "never").after.detail;
      assert.match(detail, /never evaluated in any environment since it was created 30 days ago/);
      assert.deepEqual(events[0].actor, { type: "system", system: "stale-rules" });
      // Run again: nothing new.
      await pass(1);
      assert.equal((await staleEvents(server, project)).length, 2, "once per time it becomes stale");
      // Evaluated again: no longer stale (without an event); unused again 30 days later: a new event.
      await check(server, project, "once", "someone");
      await check(server, project, "once", "someone-else");
      await pass(0);
      assert.equal((await get(server, project, "once")).stale, false);
      await pass(30);
      events = await staleEvents(server, project);
      assert.equal(events.filter((e) => e.target.name === "once").length, 2);
      const listed = await server.request("GET", `/projects/${project}/flags?stale=true`);
      assert.deepEqual(
        listed.body.data.map((f: any) => f.name),
        ["never", "once"],
      );
      const fresh = await server.request("GET", `/projects/${project}/flags?stale=false`);
      assert.deepEqual(fresh.body.data, []);
    });

    test("stale: one variant answered every evaluation for 30 days (release, experiment), never for a kill switch", async () => {
      const project = await createProject(server);
      await create(server, project, "steady");
      await patch(server, project, "steady", { status: "enabled" });
      await create(server, project, "kill", { kind: "kill-switch" });
      await create(server, project, "split");
      await patch(server, project, "split", { status: "conditional", addActors: ["alice"] });
      const daily = async () => {
        await check(server, project, "steady");
        await check(server, project, "kill");
        await check(server, project, "split", "alice");
        await check(server, project, "split", "bob");
      };
      await daily();
      await pass(29, daily);
      assert.equal((await get(server, project, "steady")).stale, false, "29 days: not the whole window yet");
      await pass(1, daily);
      const steady = await get(server, project, "steady");
      assert.equal(steady.staleReason, "one-variant");
      const event = (await staleEvents(server, project)).find((e) => e.target.name === "steady");
      assert.match(event.after.detail, /every evaluation in every environment answered "on" for 30 days/);
      assert.equal(
        (await get(server, project, "kill")).stale,
        false,
        "a kill switch answering one way is doing its job",
      );
      assert.equal((await get(server, project, "split")).stale, false, "two variants answered");
    });

    test("stale: outlived its kind's lifetime; a PATCH of kind or permanent decides it at once", async () => {
      const project = await createProject(server);
      await create(server, project, "release");
      await patch(server, project, "release", { status: "conditional", addActors: ["alice"] });
      await create(server, project, "ops", { kind: "operational" });
      await patch(server, project, "ops", { status: "conditional", addActors: ["alice"] });
      const both = async () => {
        for (const name of ["release", "ops"]) {
          await check(server, project, name, "alice");
          await check(server, project, name, "bob");
        }
      };
      await pass(40, both);
      assert.equal((await get(server, project, "release")).stale, false, "40 days: still within its lifetime");
      await pass(1, both);
      const release = await get(server, project, "release");
      assert.equal(release.staleReason, "lifetime");
      const event = (await staleEvents(server, project)).find((e) => e.target.name === "release");
      assert.match(event.after.detail, /a release flag 41 days old; release flags are expected to live 40 days/);
      assert.equal((await get(server, project, "ops")).stale, false, "operational flags have no lifetime");

      // Marked permanent: not stale, at once; back to temporary, stale again at once, with a new event.
      const kept = await patch(server, project, "release", { permanent: true });
      assert.deepEqual([kept.stale, kept.staleReason, kept.staleSince], [false, null, null]);
      const again = await patch(server, project, "release", { permanent: false });
      assert.equal(again.staleReason, "lifetime");
      // An operational flag made an experiment is older than an experiment's lifetime: stale in the PATCH.
      const experiment = await patch(server, project, "ops", { kind: "experiment" });
      assert.equal(experiment.staleReason, "lifetime");
      const names = (await staleEvents(server, project)).map((e) => e.target.name).sort();
      assert.deepEqual(names, ["ops", "release", "release"]);
      // The rules run again change nothing.
      await pass(0);
      assert.equal((await staleEvents(server, project)).length, 3);
    });

    test("a prerequisite of a flag in use is never unused; an archived flag is no prerequisite", async () => {
      const project = await createProject(server);
      await create(server, project, "gate");
      await create(server, project, "feature");
      await patch(server, project, "feature", { prerequisites: [{ flag: "gate", variants: ["on"] }] });
      await check(server, project, "feature");
      await pass(30, async () => {
        await check(server, project, "feature");
      });
      assert.equal((await get(server, project, "gate")).stale, false, "evaluated with feature, not by its name");
      // Archived, a flag can no longer be named as a prerequisite, and names none that counts.
      await create(server, project, "retired");
      await create(server, project, "base");
      await patch(server, project, "retired", { prerequisites: [{ flag: "base", variants: ["on"] }] });
      assert.equal((await server.request("POST", `/projects/${project}/flags/retired/archive`)).status, 200);
      const archivedBase = await server.request("POST", `/projects/${project}/flags/base/archive`);
      assert.equal(archivedBase.status, 200, "only an archived flag named it");
      const named = await server.request("PATCH", `/projects/${project}/flags/feature`, {
        body: { prerequisites: [{ flag: "base", variants: ["on"] }] },
      });
      expectProblem(named, 400, "invalid_request");
      assert.match(named.text, /base/);
    });

    test("a flag.stale webhook is sent once when a flag becomes stale", async () => {
      const receiver = await WebhookReceiver.start();
      try {
        const project = await createProject(server);
        const hook = await server.request("POST", `/projects/${project}/webhooks`, {
          body: { url: `${receiver.url}/stale`, events: ["flag.stale"] },
        });
        assert.equal(hook.status, 201, hook.text);
        await create(server, project, "old");
        await pass(30);
        await pass(1);
        await waitFor("the flag.stale delivery", () => receiver.received.find((r) => r.path === "/stale"));
        await server.service.jobs.runAll();
        // Deliveries are at least once: one message, however many attempts carried it.
        const received = receiver.received.filter((r) => r.path === "/stale");
        assert.equal(new Set(received.map((r) => r.headers["webhook-id"])).size, 1);
        const bodies = received.map((r) => JSON.parse(r.body));
        assert.equal(bodies[0].type, "flag.stale");
        assert.equal(bodies[0].target.name, "old");
        assert.equal(bodies[0].after.reason, "unused");
      } finally {
        await receiver.close();
      }
    });

    test("archive: evaluated as not found, out of lists, its name kept; restore: back as it was", async () => {
      const project = await createProject(server);
      await create(server, project, "legacy");
      await patch(server, project, "legacy", { status: "conditional", addActors: ["alice"] });
      await create(server, project, "other");
      const { key } = await createKey(server, project, "check");
      assert.equal((await check(server, project, "legacy", "alice")).enabled, true);

      const archived = await server.request("POST", `/projects/${project}/flags/legacy/archive`);
      assert.equal(archived.status, 200, archived.text);
      assert.equal(archived.body.archived, true);
      assert.equal(archived.body.archivedAt, new Date(clock.now()).toISOString());
      expectProblem(
        await server.request("GET", `/projects/${project}/flags/legacy/check?actorIds=alice`),
        404,
        "flag_not_found",
      );
      const ofrep = await server.request("POST", "/ofrep/v1/evaluate/flags/legacy", {
        key,
        body: { context: { targetingKey: "alice" } },
      });
      assert.equal(ofrep.status, 404);
      assert.equal(ofrep.body.errorCode, "FLAG_NOT_FOUND");
      const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key,
        body: { context: { targetingKey: "alice" } },
      });
      assert.deepEqual(
        bulk.body.flags.map((f: any) => f.key),
        ["other"],
      );
      const list = await server.request("GET", `/projects/${project}/flags`);
      assert.deepEqual(
        list.body.data.map((f: any) => f.name),
        ["other"],
      );
      const archivedList = await server.request("GET", `/projects/${project}/flags?archived=true`);
      assert.deepEqual(
        archivedList.body.data.map((f: any) => f.name),
        ["legacy"],
      );
      // Readable, with its history; not changeable; its name kept.
      assert.equal((await get(server, project, "legacy")).archived, true);
      expectProblem(
        await server.request("PATCH", `/projects/${project}/flags/legacy`, { body: { status: "enabled" } }),
        409,
        "flag_archived",
      );
      expectProblem(
        await server.request("POST", `/projects/${project}/flags/legacy/copy`, {
          body: { from: "production", to: "production" },
        }),
        400,
        "invalid_request",
      );
      const taken = await server.request("POST", `/projects/${project}/flags/legacy`, { body: {} });
      expectProblem(taken, 409, "flag_exists");
      assert.match(taken.body.detail, /archived/);
      expectProblem(await server.request("POST", `/projects/${project}/flags/legacy/archive`), 409, "flag_archived");
      expectProblem(await server.request("POST", `/projects/${project}/flags/other/restore`), 409, "flag_not_archived");
      const history = await server.request("GET", `/projects/${project}/events?flag=legacy&type=flag.archived`);
      assert.equal(history.body.data.length, 1);

      // Restored: evaluated as before, in the lists again.
      const restored = await server.request("POST", `/projects/${project}/flags/legacy/restore`);
      assert.equal(restored.status, 200, restored.text);
      assert.equal(restored.body.archived, false);
      assert.equal((await check(server, project, "legacy", "alice")).enabled, true);
      assert.equal((await check(server, project, "legacy", "bob")).enabled, false);
      const restoredEvents = await server.request("GET", `/projects/${project}/events?flag=legacy&type=flag.restored`);
      assert.equal(restoredEvents.body.data.length, 1);
      assert.equal(restoredEvents.body.data[0].after.archivedAt, null);

      // Archived again, then deleted for good: the name is free.
      assert.equal((await server.request("POST", `/projects/${project}/flags/legacy/archive`)).status, 200);
      assert.equal((await server.request("DELETE", `/projects/${project}/flags/legacy`)).status, 204);
      await create(server, project, "legacy");
    });

    test("archive: refused for a prerequisite of another flag, a stale If-Match, an unknown flag, a reader, a bound key, a protected environment", async () => {
      const project = await createProject(server);
      await create(server, project, "base");
      await create(server, project, "dependent");
      await patch(server, project, "dependent", { prerequisites: [{ flag: "base", variants: ["on"] }] });
      const inUse = await server.request("POST", `/projects/${project}/flags/base/archive`);
      expectProblem(inUse, 409, "flag_in_use");
      assert.match(inUse.body.detail, /"dependent" in "production"/);
      expectProblem(
        await server.request("POST", `/projects/${project}/flags/dependent/archive`, {
          headers: { "if-match": '"stale"' },
        }),
        412,
        "precondition_failed",
      );
      expectProblem(await server.request("POST", `/projects/${project}/flags/none/archive`), 404, "flag_not_found");
      expectProblem(await server.request("POST", "/projects/none/flags/base/archive"), 404, "project_not_found");
      const reader = await createKey(server, project, "read");
      expectProblem(
        await server.request("POST", `/projects/${project}/flags/dependent/archive`, { key: reader.key }),
        403,
        "forbidden",
      );
      // A second environment: a key bound to one may not archive what reaches both.
      const env = await server.request("POST", `/projects/${project}/environments`, {
        body: { id: "staging", name: "Staging" },
      });
      assert.equal(env.status, 201, env.text);
      const bound = await server.request("POST", `/projects/${project}/keys`, {
        body: { role: "write", name: "staging writer", environment: "staging" },
      });
      assert.equal(bound.status, 201, bound.text);
      expectProblem(
        await server.request("POST", `/projects/${project}/flags/dependent/archive`, { key: bound.body.key }),
        403,
        "forbidden",
      );
      // A protected environment: a writer (not a project admin) may not.
      await server.request("PATCH", `/projects/${project}/environments/production`, { body: { protected: true } });
      const writer = await server.request("POST", `/projects/${project}/keys`, {
        body: { role: "write", name: "writer", environment: null },
      });
      assert.equal(writer.status, 201, writer.text);
      expectProblem(
        await server.request("POST", `/projects/${project}/flags/dependent/archive`, { key: writer.body.key }),
        403,
        "environment_protected",
      );
      assert.equal((await get(server, project, "dependent")).archived, false, "nothing refused changed anything");
    });
  });
}
