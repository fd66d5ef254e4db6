// Flags per environment (issue 24): a flag's definition belongs to the project, its configuration to each
// environment. Every flag route and relation list acts on one environment; ETags and If-Match are per
// environment; a configuration can be copied from one environment to another.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { addEnvironment, addSegment, bindKey, checkIn, inEnvironment, patchFlag } from "./helpers/environments.js";

const iso = (clock: ManualClock) => new Date(clock.now()).toISOString();
const names = (body: any) => (body.data as { name: string }[]).map((f) => f.name);

/** The fields of a flag that belong to its configuration in one environment (but the time of its latest check). */
const configurationOf = (flag: any) => ({
  environment: flag.environment,
  status: flag.status,
  percentageActors: flag.percentageActors,
  percentageCalls: flag.percentageCalls,
  statusChangedAt: flag.statusChangedAt,
  actorsCount: flag.actorsCount,
  segmentsCount: flag.segmentsCount,
  updatedAt: flag.updatedAt,
});

for (const dialect of DIALECTS) {
  describe(`flags per environment [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const clock = new ManualClock();
    const flagPath = (name: string, environment?: string, rest = "") =>
      inEnvironment(`/projects/${project}/flags/${name}${rest}`, environment);
    const get = async (name: string, environment?: string) => {
      const res = await server.request("GET", flagPath(name, environment));
      assert.equal(res.status, 200, res.text);
      return res;
    };

    before(async () => {
      // The call rollout never draws a call in, so every answer compared is decided by the other rules.
      server = await startServer({ dialect, clock, random: () => 0.999 });
      project = await createProject(server);
      await addEnvironment(server, project, "staging");
      await addEnvironment(server, project, "dev");
    });
    after(() => server.close());

    test("a new flag is disabled in every environment; the answer shows the environment it was made in", async () => {
      clock.advance(1000);
      const res = await server.request("POST", `/projects/${project}/flags/fresh`, { body: { description: "New" } });
      assert.equal(res.status, 201, res.text);
      const flag = res.body;
      assert.equal(flag.environment, "production", "the project's default");
      const disabled = { status: "disabled", percentageActors: 0, percentageCalls: 0, statusChangedAt: iso(clock) };
      assert.deepEqual(flag.environments, { production: disabled, staging: disabled, dev: disabled });
      assert.match(res.headers.get("etag") ?? "", new RegExp(`^"${flag.id}@production\\.1"$`));
      for (const environment of ["staging", "dev"]) {
        const got = await get("fresh", environment);
        assert.deepEqual(
          { ...configurationOf(got.body), description: got.body.description, id: got.body.id },
          { ...configurationOf(flag), environment, description: "New", id: flag.id },
        );
        assert.equal(got.headers.get("etag"), `"${flag.id}@${environment}.1"`);
        assert.equal(await checkIn(server, project, "fresh", { actors: ["a"], environment }), "false");
      }
      // Made while naming an environment: the same flag everywhere, shown in that one.
      const named = await server.request("POST", flagPath("named", "staging"), { body: {} });
      assert.equal(named.status, 201, named.text);
      assert.equal(named.body.environment, "staging");
      assert.equal(named.headers.get("etag"), `"${named.body.id}@staging.1"`);
      assert.deepEqual(Object.keys(named.body.environments).sort(), ["dev", "production", "staging"]);
      expectProblem(
        await server.request("POST", flagPath("nowhere-flag", "nowhere"), { body: {} }),
        404,
        "environment_not_found",
      );
      expectProblem(await server.request("GET", flagPath("nowhere-flag")), 404, "flag_not_found");
      // A name is taken in every environment at once.
      expectProblem(await server.request("POST", flagPath("fresh", "dev"), { body: {} }), 409, "flag_exists");
    });

    test("a PATCH in staging leaves production's answers, checks and ETag as they were", async () => {
      await server.request("POST", `/projects/${project}/flags/rollout`, { body: {} });
      const segment = await addSegment(server, project, "staff", ["sam"]);
      const production = await get("rollout");
      const productionTag = production.headers.get("etag");
      const actors = ["alice", "sam", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"];
      const checks = async (environment?: string) =>
        Promise.all(actors.map((a) => checkIn(server, project, "rollout", { actors: [a], environment })));
      const productionChecks = await checks();

      clock.advance(1000);
      const patched = await patchFlag(server, project, "rollout", "staging", {
        status: "conditional",
        addActors: ["alice"],
        addSegments: [segment],
        percentageActors: 50,
        percentageCalls: 10,
      });
      assert.equal(patched.environment, "staging");
      assert.deepEqual(
        [patched.status, patched.percentageActors, patched.percentageCalls, patched.actorsCount, patched.segmentsCount],
        ["conditional", 50, 10, 1, 1],
      );
      assert.equal(patched.updatedAt, iso(clock));
      assert.deepEqual(patched.environments.staging, {
        status: "conditional",
        percentageActors: 50,
        percentageCalls: 10,
        statusChangedAt: iso(clock),
      });
      assert.equal(patched.environments.production.status, "disabled");

      const after = await get("rollout");
      assert.deepEqual(configurationOf(after.body), configurationOf(production.body));
      assert.equal(after.headers.get("etag"), productionTag, "production's ETag did not move");
      assert.deepEqual(await checks(), productionChecks);
      assert.deepEqual(await checks("production"), productionChecks);
      assert.deepEqual(after.body.environments.staging, patched.environments.staging, "the map shows staging's");
      const staging = await checks("staging");
      assert.equal(staging[0], "true", "alice is attached in staging");
      assert.equal(staging[1], "true", "sam is in the segment attached in staging");
      assert.ok(staging.slice(2).includes("true") && staging.slice(2).includes("false"), "a 50 % rollout");
      assert.deepEqual(await checks("dev"), productionChecks);
    });

    test("ETags are per environment: If-Match on PATCH and DELETE compares the named environment's", async () => {
      await server.request("POST", `/projects/${project}/flags/tagged`, { body: {} });
      const production = (await get("tagged")).headers.get("etag") as string;
      const staging = (await get("tagged", "staging")).headers.get("etag") as string;
      assert.notEqual(production, staging);
      // Another environment's tag does not match this one's.
      for (const [environment, tag] of [
        ["staging", production],
        [undefined, staging],
      ] as const) {
        expectProblem(
          await server.request("PATCH", flagPath("tagged", environment), {
            body: { status: "enabled" },
            headers: { "if-match": tag },
          }),
          412,
          "precondition_failed",
        );
        expectProblem(
          await server.request("DELETE", flagPath("tagged", environment), { headers: { "if-match": tag } }),
          412,
          "precondition_failed",
        );
      }
      const changed = await server.request("PATCH", flagPath("tagged", "staging"), {
        body: { status: "enabled" },
        headers: { "if-match": staging },
      });
      assert.equal(changed.status, 200, changed.text);
      const stagingNow = changed.headers.get("etag") as string;
      assert.notEqual(stagingNow, staging);
      assert.equal((await get("tagged", "staging")).headers.get("etag"), stagingNow);
      // Production's configuration did not change: its tag still matches.
      const untouched = await server.request("PATCH", flagPath("tagged"), {
        body: { percentageCalls: 0 },
        headers: { "if-match": production },
      });
      assert.equal(untouched.status, 200, untouched.text);
      assert.equal(untouched.headers.get("etag"), production, "a PATCH that changes nothing keeps the tag");
      // The description is the flag's, shown in every environment: changed in one, every tag moves, so a
      // client holding another environment's tag cannot overwrite it unseen.
      const dev = (await get("tagged", "dev")).headers.get("etag");
      clock.advance(1000);
      const described = await patchFlag(server, project, "tagged", "staging", { description: "Shared words" });
      for (const [environment, tag] of [
        ["production", production],
        ["dev", dev],
      ]) {
        const got = await get("tagged", environment as string);
        assert.equal(got.body.description, "Shared words");
        assert.notEqual(got.headers.get("etag"), tag, environment as string);
        assert.equal(got.body.updatedAt, iso(clock));
      }
      expectProblem(
        await server.request("PATCH", flagPath("tagged"), {
          body: { description: "Lost update" },
          headers: { "if-match": production },
        }),
        412,
        "precondition_failed",
      );
      assert.equal(described.description, "Shared words");
      // A DELETE with the current tag of the environment it names deletes the flag: from every environment.
      const current = (await get("tagged", "dev")).headers.get("etag") as string;
      const deleted = await server.request("DELETE", flagPath("tagged", "dev"), { headers: { "if-match": current } });
      assert.equal(deleted.status, 204, deleted.text);
      for (const environment of [undefined, "staging", "dev"]) {
        expectProblem(await server.request("GET", flagPath("tagged", environment)), 404, "flag_not_found");
        expectProblem(await server.request("GET", flagPath("tagged", environment, "/check")), 404, "flag_not_found");
      }
    });

    test("an unknown environment is 404 environment_not_found on every flag route and relation list", async () => {
      await server.request("POST", `/projects/${project}/flags/known`, { body: {} });
      const segment = await addSegment(server, project, "known-segment");
      const nowhere = "nowhere";
      const routes: [string, string, unknown?][] = [
        ["GET", `/projects/${project}/flags`],
        ["GET", flagPath("known")],
        ["PATCH", flagPath("known"), { status: "enabled" }],
        ["DELETE", flagPath("known")],
        ["GET", flagPath("known", undefined, "/check")],
        ["GET", flagPath("known", undefined, "/explain")],
        ["GET", flagPath("known", undefined, "/actors")],
        ["GET", flagPath("known", undefined, "/segments")],
        ["GET", `/projects/${project}/actors/alice/flags`],
        ["GET", `/projects/${project}/segments/${segment}/flags`],
        ["POST", flagPath("another"), {}],
      ];
      for (const [method, path, body] of routes) {
        const res = await server.request(method, inEnvironment(path, nowhere), body === undefined ? {} : { body });
        expectProblem(res, 404, "environment_not_found");
      }
      // Nothing was changed or made.
      assert.equal((await get("known")).body.status, "disabled");
      expectProblem(await server.request("GET", flagPath("another")), 404, "flag_not_found");
      // An empty name is no environment at all: 400.
      expectProblem(await server.request("GET", `${flagPath("known")}?environment=`), 400, "invalid_request");
      expectProblem(
        await server.request("GET", `${flagPath("known")}?environment=a&environment=b`),
        400,
        "invalid_request",
      );
    });

    test("the list filters, sorts and counts by the environment's configuration", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "staging");
      for (const name of ["l-a", "l-b", "l-c"]) {
        clock.advance(1000);
        await server.request("POST", `/projects/${p}/flags/${name}`, { body: {} });
      }
      clock.advance(1000);
      await patchFlag(server, p, "l-c", "staging", { status: "enabled" });
      clock.advance(1000);
      await patchFlag(server, p, "l-a", "staging", { status: "conditional" });
      clock.advance(1000);
      await patchFlag(server, p, "l-b", undefined, { status: "enabled" });
      const list = async (query: string) => {
        const res = await server.request("GET", `/projects/${p}/flags?${query}`);
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      assert.deepEqual(names(await list("status=enabled")), ["l-b"]);
      assert.deepEqual(names(await list("status=enabled&environment=production")), ["l-b"]);
      assert.deepEqual(names(await list("status=enabled&environment=staging")), ["l-c"]);
      assert.deepEqual(names(await list("status=conditional&environment=staging")), ["l-a"]);
      assert.deepEqual(names(await list("status=disabled&environment=staging")), ["l-b"]);
      assert.deepEqual(names(await list("status=disabled")), ["l-a", "l-c"]);
      assert.equal((await list("status=disabled&total=true")).total, 2);
      assert.equal((await list("status=disabled&total=true&environment=staging")).total, 1);
      // Sorted by the environment's updatedAt: the order of the changes made there.
      assert.deepEqual(names(await list("sort=-updatedAt&environment=staging")), ["l-a", "l-c", "l-b"]);
      assert.deepEqual(names(await list("sort=-updatedAt")), ["l-b", "l-c", "l-a"]);
      assert.deepEqual(names(await list("sort=-createdAt&environment=staging")), ["l-c", "l-b", "l-a"]);
      // Every item shows the listed environment, and the map of all of them.
      const staging = await list("environment=staging");
      for (const flag of staging.data) {
        assert.equal(flag.environment, "staging");
        assert.deepEqual(Object.keys(flag.environments).sort(), ["production", "staging"]);
        assert.equal(flag.status, flag.environments.staging.status);
      }
      // Pages of one environment's order: the cursor carries on in it.
      const first = await list("sort=-updatedAt&environment=staging&limit=2");
      assert.deepEqual(names(first), ["l-a", "l-c"]);
      const second = await list(`sort=-updatedAt&environment=staging&limit=2&after=${first.pagination.after}`);
      assert.deepEqual(names(second), ["l-b"]);

      // latestCheckedAt is the environment's: a check in staging marks staging's only.
      clock.advance(1000);
      assert.equal(await checkIn(server, p, "l-b", { environment: "staging" }), "false");
      const checked = (await server.request("GET", `/projects/${p}/flags/l-b?environment=staging`)).body;
      assert.equal(checked.latestCheckedAt, iso(clock));
      const unchecked = (await server.request("GET", `/projects/${p}/flags/l-b`)).body;
      assert.equal(unchecked.latestCheckedAt, null);
      // Once flushed, the list sorts by it too (the flush runs on the server's clock).
      await waitFor(
        "the check's time to be stored",
        async () => {
          clock.advance(1000);
          return names(await list("sort=-latestCheckedAt&environment=staging"))[0];
        },
        { until: (name) => name === "l-b" },
      );
      const production = await list("sort=-latestCheckedAt");
      assert.ok(
        production.data.every((f: any) => f.latestCheckedAt === null),
        "never checked in production",
      );
    });

    test("relation lists (a flag's actors and segments, an actor's and a segment's flags) are the environment's", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "staging");
      const beta = await addSegment(server, p, "beta", ["bea"]);
      const gamma = await addSegment(server, p, "gamma", ["gus"]);
      for (const name of ["r-1", "r-2", "r-3"])
        await server.request("POST", `/projects/${p}/flags/${name}`, { body: {} });
      await patchFlag(server, p, "r-1", undefined, { status: "conditional", addActors: ["ann"], addSegments: [beta] });
      await patchFlag(server, p, "r-1", "staging", {
        status: "conditional",
        addActors: ["ann", "bob"],
        addSegments: [gamma],
      });
      await patchFlag(server, p, "r-2", "staging", { status: "enabled" });
      await patchFlag(server, p, "r-3", undefined, { status: "enabled" });
      const list = async (path: string, environment?: string) => {
        const res = await server.request("GET", inEnvironment(`/projects/${p}${path}`, environment));
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      const actorIds = (body: any) => body.data.map((m: any) => m.actorId);
      const segmentIds = (body: any) => body.data.map((s: any) => s.id);
      assert.deepEqual(actorIds(await list("/flags/r-1/actors")), ["ann"]);
      assert.deepEqual(actorIds(await list("/flags/r-1/actors", "production")), ["ann"]);
      assert.deepEqual(actorIds(await list("/flags/r-1/actors", "staging")), ["ann", "bob"]);
      assert.deepEqual(actorIds(await list("/flags/r-1/actors?q=bo", "staging")), ["bob"]);
      assert.deepEqual(actorIds(await list("/flags/r-1/actors?limit=1", "staging")), ["ann"]);
      assert.deepEqual(segmentIds(await list("/flags/r-1/segments")), [beta]);
      assert.deepEqual(segmentIds(await list("/flags/r-1/segments", "staging")), [gamma]);

      assert.deepEqual(names(await list("/actors/ann/flags")), ["r-1", "r-3"]);
      assert.deepEqual(names(await list("/actors/ann/flags", "staging")), ["r-1", "r-2"]);
      assert.deepEqual(names(await list("/actors/bob/flags")), ["r-3"]);
      assert.deepEqual(names(await list("/actors/bob/flags", "staging")), ["r-1", "r-2"]);
      assert.deepEqual(names(await list("/actors/bea/flags")), ["r-1", "r-3"]);
      assert.deepEqual(names(await list("/actors/bea/flags", "staging")), ["r-2"]);
      assert.deepEqual(names(await list("/actors/gus/flags", "staging")), ["r-1", "r-2"]);
      const forActor = await list("/actors/ann/flags?limit=1", "staging");
      assert.deepEqual(names(forActor), ["r-1"]);
      assert.deepEqual(names(await list(`/actors/ann/flags?limit=1&after=${forActor.pagination.after}`, "staging")), [
        "r-2",
      ]);
      for (const flag of forActor.data) assert.equal(flag.environment, "staging");

      assert.deepEqual(names(await list(`/segments/${beta}/flags`)), ["r-1", "r-3"]);
      assert.deepEqual(names(await list(`/segments/${beta}/flags`, "staging")), ["r-2"]);
      assert.deepEqual(names(await list(`/segments/${gamma}/flags`)), ["r-3"]);
      assert.deepEqual(names(await list(`/segments/${gamma}/flags`, "staging")), ["r-1", "r-2"]);

      // The explanation follows the environment too.
      const explained = await list("/flags/r-1/explain?actorIds=bob", "staging");
      assert.equal(explained.enabled, true);
      assert.equal((await list("/flags/r-1/explain?actorIds=bob")).enabled, false);

      // Segments and their members stay the project's: a member added shows in every environment.
      await server.request("PATCH", `/projects/${p}/segments/${gamma}`, { body: { addActors: ["gwen"] } });
      assert.equal(await checkIn(server, p, "r-1", { actors: ["gwen"], environment: "staging" }), "true");
      assert.equal(await checkIn(server, p, "r-1", { actors: ["gwen"] }), "false");
      // A segment deleted is detached in every environment.
      assert.equal((await server.request("DELETE", `/projects/${p}/segments/${gamma}`)).status, 204);
      assert.deepEqual(segmentIds(await list("/flags/r-1/segments", "staging")), []);
      assert.equal((await list("/flags/r-1", "staging")).segmentsCount, 0);
      assert.deepEqual(segmentIds(await list("/flags/r-1/segments")), [beta]);
    });

    test("copy: from one environment to another, in one write and one event; If-Match on the target", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "staging");
      await addEnvironment(server, p, "dev");
      const beta = await addSegment(server, p, "beta", ["bea"]);
      const old = await addSegment(server, p, "old", ["olga"]);
      await server.request("POST", `/projects/${p}/flags/c`, { body: {} });
      await patchFlag(server, p, "c", "staging", {
        status: "conditional",
        addActors: ["ann", "bob"],
        addSegments: [beta],
        percentageActors: 25,
        percentageCalls: 5,
      });
      await patchFlag(server, p, "c", undefined, { status: "enabled", addActors: ["zed"], addSegments: [old] });
      const copy = (body: unknown, headers: Record<string, string> = {}, key?: string) =>
        server.request("POST", `/projects/${p}/flags/c/copy`, { body, headers, key });
      const production = await server.request("GET", `/projects/${p}/flags/c`);
      const staging = await server.request("GET", `/projects/${p}/flags/c?environment=staging`);

      // If-Match names the target's configuration: the source's tag does not match.
      expectProblem(
        await copy({ from: "staging", to: "production" }, { "if-match": staging.headers.get("etag") as string }),
        412,
        "precondition_failed",
      );
      clock.advance(1000);
      const copied = await copy(
        { from: "staging", to: "production" },
        { "if-match": production.headers.get("etag") as string },
      );
      assert.equal(copied.status, 200, copied.text);
      assert.equal(copied.body.environment, "production");
      assert.deepEqual(
        [copied.body.status, copied.body.percentageActors, copied.body.percentageCalls],
        ["conditional", 25, 5],
      );
      assert.deepEqual([copied.body.actorsCount, copied.body.segmentsCount], [2, 1]);
      assert.equal(copied.body.updatedAt, iso(clock));
      assert.equal(copied.body.statusChangedAt, iso(clock));
      assert.equal(
        copied.headers.get("etag"),
        (await server.request("GET", `/projects/${p}/flags/c`)).headers.get("etag"),
      );
      assert.notEqual(copied.headers.get("etag"), production.headers.get("etag"));
      const actors = await server.request("GET", `/projects/${p}/flags/c/actors`);
      assert.deepEqual(
        actors.body.data.map((m: any) => m.actorId),
        ["ann", "bob"],
        "the target's own attachments are replaced",
      );
      const segments = await server.request("GET", `/projects/${p}/flags/c/segments`);
      assert.deepEqual(
        segments.body.data.map((s: any) => s.id),
        [beta],
      );
      for (const actor of ["ann", "bea", "zed", "olga", "u1", "u2", "u3", "u4"]) {
        assert.equal(
          await checkIn(server, p, "c", { actors: [actor] }),
          await checkIn(server, p, "c", { actors: [actor], environment: "staging" }),
          actor,
        );
      }
      // The source is as it was.
      const source = await server.request("GET", `/projects/${p}/flags/c?environment=staging`);
      assert.deepEqual(configurationOf(source.body), configurationOf(staging.body));
      assert.equal(source.headers.get("etag"), staging.headers.get("etag"));

      // One event, in the target environment, saying where it came from.
      const history = await server.request("GET", `/projects/${p}/flags/c/events?limit=2`);
      const [event, previous] = history.body.data;
      assert.equal(event.type, "flag.updated");
      assert.equal(event.environment, "production");
      assert.equal(event.after.copiedFrom, "staging");
      assert.deepEqual(event.after.addedActors.sort(), ["ann", "bob"]);
      assert.deepEqual(event.after.removedActors, ["zed"]);
      assert.deepEqual(event.after.addedSegments, [beta]);
      assert.deepEqual(event.after.removedSegments, [old]);
      assert.equal(event.before.status, "enabled");
      assert.equal(event.after.status, "conditional");
      assert.notEqual(previous.after.copiedFrom, "staging");

      // Copying what is already there changes nothing and records nothing.
      const again = await copy({ from: "staging", to: "production" });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers.get("etag"), copied.headers.get("etag"));
      assert.equal((await server.request("GET", `/projects/${p}/flags/c/events?limit=1`)).body.data[0].id, event.id);

      // Into an environment that was never touched: dev now answers as staging does.
      const toDev = await copy({ from: "staging", to: "dev" });
      assert.equal(toDev.status, 200, toDev.text);
      assert.equal(toDev.body.environment, "dev");
      assert.equal(await checkIn(server, p, "c", { actors: ["bea"], environment: "dev" }), "true");
    });

    test("copy refuses: from = to (400), unknown environment or flag (404), bad bodies (400)", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "staging");
      await server.request("POST", `/projects/${p}/flags/c`, { body: {} });
      const copy = (body: unknown, flag = "c") => server.request("POST", `/projects/${p}/flags/${flag}/copy`, { body });
      expectProblem(await copy({ from: "staging", to: "staging" }), 400, "invalid_request");
      expectProblem(await copy({ from: "nowhere", to: "staging" }), 404, "environment_not_found");
      expectProblem(await copy({ from: "staging", to: "nowhere" }), 404, "environment_not_found");
      expectProblem(await copy({ from: "staging", to: "production" }, "no-such-flag"), 404, "flag_not_found");
      expectProblem(
        await server.request("POST", `/projects/no-such-project/flags/c/copy`, {
          body: { from: "staging", to: "production" },
        }),
        404,
        "project_not_found",
      );
      for (const body of [
        {},
        { from: "staging" },
        { to: "staging" },
        { from: "", to: "staging" },
        { from: "staging", to: "production", status: "enabled" },
        { from: 1, to: "production" },
      ]) {
        expectProblem(await copy(body), 400, "invalid_request");
      }
      expectProblem(
        await server.request("POST", `/projects/${p}/flags/c/copy?environment=staging`, {
          body: { from: "staging", to: "production" },
        }),
        400,
        "invalid_request",
      );
      const events = await server.request("GET", `/projects/${p}/events?type=flag.updated`);
      assert.deepEqual(events.body.data, [], "nothing was recorded");
    });

    test("who may copy: admin and unbound write keys; bound keys (403), read and check keys (403)", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "staging");
      await server.request("POST", `/projects/${p}/flags/c`, { body: {} });
      await patchFlag(server, p, "c", "staging", { status: "enabled" });
      const body = { from: "staging", to: "production" };
      for (const [role, environment] of [
        ["write", "staging"],
        ["write", "production"],
        ["read", "staging"],
        ["read", "production"],
        ["check", "staging"],
      ] as const) {
        const key = await bindKey(server, p, role, environment);
        const res = await server.request("POST", `/projects/${p}/flags/c/copy`, { key: key.key, body });
        expectProblem(res, 403, "forbidden");
      }
      assert.equal(await checkIn(server, p, "c"), "false", "nothing was copied");
      const unbound = await bindKey(server, p, "write", null);
      const res = await server.request("POST", `/projects/${p}/flags/c/copy`, { key: unbound.key, body });
      assert.equal(res.status, 200, res.text);
      assert.equal(await checkIn(server, p, "c"), "true");
      const [event] = (await server.request("GET", `/projects/${p}/events?limit=1`)).body.data;
      assert.equal(event.actor.keyId, unbound.id);
    });
  });
}
