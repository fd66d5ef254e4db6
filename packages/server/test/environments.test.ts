// The environments API (issue 24): list, get, create (empty or copied), update (name, description, the
// default), delete (configurations gone, bound keys revoked, recorded), its limits, its errors, and who may
// call it; and projects created with their own environments.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ApiResponse,
  createProject,
  DIALECTS,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import {
  addEnvironment,
  addSegment,
  bindKey,
  checkIn,
  inEnvironment,
  type Key,
  patchFlag,
} from "./helpers/environments.js";

function expectInvalid(res: ApiResponse, path?: string): void {
  expectProblem(res, 400, "invalid_request");
  if (path !== undefined) {
    const paths = ((res.body.errors ?? []) as { path: string }[]).map((e) => e.path);
    assert.ok(paths.includes(path), `expected an error at ${path}, got ${res.text}`);
  }
}

const iso = (clock: ManualClock) => new Date(clock.now()).toISOString();

const ids = (res: ApiResponse) => (res.body.data as { id: string }[]).map((e) => e.id);

for (const dialect of DIALECTS) {
  describe(`environments API [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock();
    const envs = (p: string) => `/projects/${p}/environments`;

    before(async () => {
      // The call rollout never draws a call in: every answer compared here is decided by the other rules.
      server = await startServer({ dialect, clock, random: () => 0.999 });
    });
    after(() => server.close());

    test("a new project has one environment, production, its default; list and get show it", async () => {
      const project = await createProject(server);
      const list = await server.request("GET", envs(project));
      assert.equal(list.status, 200, list.text);
      const production = {
        id: "production",
        projectId: project,
        name: "Production",
        description: "",
        default: true,
        protected: false,
        requiredApprovals: 0,
        allowSelfApproval: false,
        createdAt: iso(clock),
        updatedAt: iso(clock),
      };
      assert.deepEqual(list.body, { data: [production], pagination: { before: null, after: null } });
      const got = await server.request("GET", `${envs(project)}/production`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, production);
    });

    test("create answers 201 with Location; the list keeps creation order; every flag starts disabled there", async () => {
      const project = await createProject(server);
      await server.request("POST", `/projects/${project}/flags/banner`, { body: { description: "A banner" } });
      const segment = await addSegment(server, project, "beta", ["sam"]);
      await patchFlag(server, project, "banner", undefined, {
        status: "conditional",
        addActors: ["alice"],
        addSegments: [segment],
        percentageActors: 50,
        percentageCalls: 10,
      });
      clock.advance(1000);
      const res = await server.request("POST", envs(project), {
        body: { id: "staging", name: "Staging", description: "Pre-production" },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers.get("location"), `/projects/${project}/environments/staging`);
      assert.deepEqual(res.body, {
        id: "staging",
        projectId: project,
        name: "Staging",
        description: "Pre-production",
        default: false,
        protected: false,
        requiredApprovals: 0,
        allowSelfApproval: false,
        createdAt: iso(clock),
        updatedAt: iso(clock),
      });
      await addEnvironment(server, project, "dev");
      await addEnvironment(server, project, "a-first-by-name");
      assert.deepEqual(ids(await server.request("GET", envs(project))), [
        "production",
        "staging",
        "dev",
        "a-first-by-name",
      ]);

      const flag = await server.request("GET", `/projects/${project}/flags/banner?environment=staging`);
      assert.equal(flag.status, 200, flag.text);
      assert.equal(flag.body.environment, "staging");
      assert.equal(flag.body.description, "A banner", "the definition is the project's");
      assert.deepEqual([flag.body.status, flag.body.percentageActors, flag.body.percentageCalls], ["disabled", 0, 0]);
      assert.deepEqual([flag.body.actorsCount, flag.body.segmentsCount], [0, 0]);
      assert.equal(flag.body.statusChangedAt, iso(clock));
      assert.equal(flag.body.latestCheckedAt, null);
      const actors = await server.request("GET", `/projects/${project}/flags/banner/actors?environment=staging`);
      assert.deepEqual(actors.body.data, []);
      const segments = await server.request("GET", `/projects/${project}/flags/banner/segments?environment=staging`);
      assert.deepEqual(segments.body.data, []);
      for (const actor of ["alice", "sam", "zed"]) {
        assert.equal(await checkIn(server, project, "banner", { actors: [actor], environment: "staging" }), "false");
      }
      // Production is as it was.
      assert.equal(await checkIn(server, project, "banner", { actors: ["alice"] }), "true");
      assert.equal(await checkIn(server, project, "banner", { actors: ["sam"], environment: "production" }), "true");
      const production = await server.request("GET", `/projects/${project}/flags/banner`);
      assert.equal(production.body.environment, "production");
      assert.deepEqual(Object.keys(production.body.environments).sort(), [
        "a-first-by-name",
        "dev",
        "production",
        "staging",
      ]);
      assert.deepEqual(production.body.environments.production, {
        status: "conditional",
        percentageActors: 50,
        percentageCalls: 10,
        statusChangedAt: production.body.statusChangedAt,
      });
    });

    test("create with copyFrom copies every flag's status, percentages, actors and segments", async () => {
      const project = await createProject(server);
      const segment = await addSegment(server, project, "testers", ["tess"]);
      await server.request("POST", `/projects/${project}/flags/on`, { body: {} });
      await server.request("POST", `/projects/${project}/flags/off`, { body: {} });
      await server.request("POST", `/projects/${project}/flags/targeted`, { body: {} });
      await patchFlag(server, project, "on", undefined, { status: "enabled" });
      await patchFlag(server, project, "targeted", undefined, {
        status: "conditional",
        addActors: ["alice", "bob"],
        addSegments: [segment],
        percentageActors: 25,
        percentageCalls: 5,
      });
      clock.advance(1000);
      await addEnvironment(server, project, "qa", { copyFrom: "production" });
      const names = ["on", "off", "targeted"];
      for (const name of names) {
        const [from, to] = await Promise.all(
          ["production", "qa"].map(
            async (e) => (await server.request("GET", inEnvironment(`/projects/${project}/flags/${name}`, e))).body,
          ),
        );
        for (const field of ["status", "percentageActors", "percentageCalls", "actorsCount", "segmentsCount"]) {
          assert.deepEqual(to[field], from[field], `${name}.${field}`);
        }
        assert.equal(to.environment, "qa");
        // A copy's times are its own: made now, never checked there.
        assert.equal(to.statusChangedAt, iso(clock));
        assert.equal(to.latestCheckedAt, null);
        for (const list of ["actors", "segments"]) {
          const ofEnv = async (e: string) =>
            (await server.request("GET", `/projects/${project}/flags/${name}/${list}?environment=${e}`)).body.data.map(
              (m: any) => m.actorId ?? m.id,
            );
          assert.deepEqual(await ofEnv("qa"), await ofEnv("production"), `${name} ${list}`);
        }
        for (const actor of ["alice", "bob", "tess", "u1", "u2", "u3", "u4", "u5", "u6", "u7"]) {
          assert.equal(
            await checkIn(server, project, name, { actors: [actor], environment: "qa" }),
            await checkIn(server, project, name, { actors: [actor], environment: "production" }),
            `${name} for ${actor}`,
          );
        }
      }
      // A copy, not a link: a change in qa leaves production alone.
      await patchFlag(server, project, "targeted", "qa", { removeActors: ["alice"], status: "disabled" });
      assert.equal(await checkIn(server, project, "targeted", { actors: ["alice"] }), "true");
      assert.equal(await checkIn(server, project, "targeted", { actors: ["alice"], environment: "qa" }), "false");
      const segments = await server.request("GET", `/projects/${project}/segments/${segment}/flags?environment=qa`);
      assert.deepEqual(
        segments.body.data.map((f: any) => f.name),
        ["on"],
      );
    });

    test("PATCH renames and describes; default: true moves the default; exactly one default after", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "staging");
      await server.request("POST", `/projects/${project}/flags/f`, { body: {} });
      await patchFlag(server, project, "f", "staging", { status: "enabled" });
      const unbound = await bindKey(server, project, "write", null);
      assert.equal(await checkIn(server, project, "f", { key: unbound.key }), "false", "the default: production");

      clock.advance(1000);
      const renamed = await server.request("PATCH", `${envs(project)}/staging`, {
        body: { name: "Pre-prod", description: "Where we try things" },
      });
      assert.equal(renamed.status, 200, renamed.text);
      assert.deepEqual(
        [renamed.body.name, renamed.body.description, renamed.body.default, renamed.body.updatedAt],
        ["Pre-prod", "Where we try things", false, iso(clock)],
      );
      assert.notEqual(renamed.body.createdAt, renamed.body.updatedAt);
      // Nothing to change: nothing changes, not even updatedAt.
      clock.advance(1000);
      for (const body of [{}, { name: "Pre-prod" }, { description: "Where we try things", name: "Pre-prod" }]) {
        const same = await server.request("PATCH", `${envs(project)}/staging`, { body });
        assert.equal(same.status, 200, same.text);
        assert.deepEqual(same.body, renamed.body);
      }

      const moved = await server.request("PATCH", `${envs(project)}/staging`, { body: { default: true } });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.body.default, true);
      const defaults = async () =>
        (await server.request("GET", envs(project))).body.data.filter((e: any) => e.default).map((e: any) => e.id);
      assert.deepEqual(await defaults(), ["staging"]);
      const production = await server.request("GET", `${envs(project)}/production`);
      assert.equal(production.body.default, false);
      assert.equal(production.body.updatedAt, iso(clock));
      // Whatever follows the default follows it now: a flag read without naming one, a key bound to none.
      const flag = await server.request("GET", `/projects/${project}/flags/f`);
      assert.deepEqual([flag.body.environment, flag.body.status], ["staging", "enabled"]);
      assert.equal(await checkIn(server, project, "f", { key: unbound.key }), "true");
      assert.equal(await checkIn(server, project, "f"), "true");
      // New keys are bound to the new default.
      assert.equal((await bindKey(server, project, "check")).environment, "staging");
      // Making the default the default again changes nothing; moving it back leaves one default again.
      const again = await server.request("PATCH", `${envs(project)}/staging`, { body: { default: true } });
      assert.deepEqual(again.body, moved.body);
      await server.request("PATCH", `${envs(project)}/production`, { body: { default: true } });
      assert.deepEqual(await defaults(), ["production"]);
      assert.equal(await checkIn(server, project, "f", { key: unbound.key }), "false");
    });

    test("DELETE removes the configurations, revokes the bound keys (401), records it; the default is refused", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "doomed", { copyFrom: "production" });
      await server.request("POST", `/projects/${project}/flags/f`, { body: {} });
      const segment = await addSegment(server, project, "s", ["m"]);
      await patchFlag(server, project, "f", "doomed", {
        status: "conditional",
        addActors: ["alice"],
        addSegments: [segment],
      });
      const bound: Key[] = [];
      for (const role of ["write", "read", "check"] as const)
        bound.push(await bindKey(server, project, role, "doomed"));
      const survivors = [
        await bindKey(server, project, "write", null),
        await bindKey(server, project, "read", "production"),
      ];
      for (const key of bound) assert.equal(await checkIn(server, project, "f", { key: key.key }), "false");

      expectProblem(await server.request("DELETE", `${envs(project)}/production`), 409, "environment_is_default");
      const refused = await server.request("DELETE", `${envs(project)}/production`);
      assert.match(refused.body.detail, /default/);
      clock.advance(1000);
      const deleted = await server.request("DELETE", `${envs(project)}/doomed`);
      assert.equal(deleted.status, 204, deleted.text);
      assert.equal(deleted.text, "");

      expectProblem(await server.request("GET", `${envs(project)}/doomed`), 404, "environment_not_found");
      expectProblem(await server.request("DELETE", `${envs(project)}/doomed`), 404, "environment_not_found");
      assert.deepEqual(ids(await server.request("GET", envs(project))), ["production"]);
      expectProblem(
        await server.request("GET", `/projects/${project}/flags/f?environment=doomed`),
        404,
        "environment_not_found",
      );
      const flag = await server.request("GET", `/projects/${project}/flags/f`);
      assert.deepEqual(Object.keys(flag.body.environments), ["production"]);
      for (const key of bound) {
        expectProblem(
          await server.request("GET", `/projects/${project}/flags/f/check`, { key: key.key }),
          401,
          "unauthorized",
        );
      }
      for (const key of survivors) assert.equal(await checkIn(server, project, "f", { key: key.key }), "false");
      const keys = await server.request("GET", `/projects/${project}/keys`);
      assert.deepEqual(keys.body.data.map((k: any) => k.id).sort(), survivors.map((k) => k.id).sort());

      // No configuration row, and no link of one, is left behind.
      const db = server.database.db as any;
      const configs = await db
        .selectFrom("flag_configs")
        .select("config_id")
        .where("environment_id", "=", "doomed")
        .execute();
      const flagIds = (await db.selectFrom("flags").select("id").where("project_id", "=", project).execute()).map(
        (r: any) => `${r.id}@doomed`,
      );
      assert.deepEqual(
        configs.filter((c: any) => flagIds.includes(c.config_id)),
        [],
      );
      for (const table of ["flag_actors", "flag_segments"]) {
        const rows = await db.selectFrom(table).select("config_id").where("config_id", "in", flagIds).execute();
        assert.deepEqual(rows, [], table);
      }

      const history = await server.request("GET", `/projects/${project}/events?limit=4`);
      const [first, ...revocations] = history.body.data;
      assert.equal(first.type, "environment.deleted");
      assert.equal(first.environment, "doomed");
      assert.deepEqual(first.target, { kind: "environment", id: "doomed", name: "Doomed" });
      assert.deepEqual(first.before, {
        id: "doomed",
        name: "Doomed",
        description: "",
        default: false,
        protected: false,
        requiredApprovals: 0,
        allowSelfApproval: false,
      });
      assert.equal(first.after, null);
      assert.equal(first.createdAt, iso(clock));
      assert.deepEqual(
        revocations.map((e: any) => [e.type, e.target.id, e.before.environment]).sort(),
        bound.map((k) => ["key.revoked", k.id, "doomed"]).sort(),
      );

      // The id may be used again, and starts clean: nothing of the deleted configurations comes back.
      await addEnvironment(server, project, "doomed");
      const reborn = await server.request("GET", `/projects/${project}/flags/f?environment=doomed`);
      assert.deepEqual([reborn.body.status, reborn.body.actorsCount, reborn.body.segmentsCount], ["disabled", 0, 0]);
      assert.equal(await checkIn(server, project, "f", { actors: ["alice"], environment: "doomed" }), "false");
      assert.equal(await checkIn(server, project, "f", { actors: ["m"], environment: "doomed" }), "false");
    });

    test("a taken id answers 409 environment_exists; nothing is changed", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "staging");
      for (const id of ["staging", "production"]) {
        const res = await server.request("POST", envs(project), { body: { id, name: "Again" } });
        expectProblem(res, 409, "environment_exists");
      }
      assert.deepEqual(
        (await server.request("GET", envs(project))).body.data.map((e: any) => [e.id, e.name]),
        [
          ["production", "Production"],
          ["staging", "Staging"],
        ],
      );
      // Ids are the same only when they are equal: case matters, as it does for projects.
      await addEnvironment(server, project, "Staging");
    });

    test("400 for bad ids and bodies, on create and update", async () => {
      const project = await createProject(server);
      for (const id of [".", "..", "", "a b", "x/y", "é", "x".repeat(65), 7, null]) {
        expectInvalid(await server.request("POST", envs(project), { body: { id, name: "N" } }), "/id");
      }
      await addEnvironment(server, project, "x".repeat(64));
      await addEnvironment(server, project, "A.b_c-9");
      expectInvalid(await server.request("POST", envs(project), { body: { name: "N" } }));
      expectInvalid(await server.request("POST", envs(project), { body: { id: "n" } }));
      expectInvalid(await server.request("POST", envs(project), { body: { id: "n", name: "" } }), "/name");
      expectInvalid(await server.request("POST", envs(project), { body: { id: "n", name: "x".repeat(129) } }), "/name");
      expectInvalid(await server.request("POST", envs(project), { body: { id: "n", name: "N", color: "red" } }));
      expectInvalid(await server.request("POST", envs(project), { body: { id: "n", name: "N", copyFrom: "" } }));
      expectInvalid(await server.request("POST", envs(project), { body: { id: "n", name: "N", description: 1 } }));
      expectInvalid(
        await server.request("POST", `${envs(project)}?environment=production`, { body: { id: "n", name: "N" } }),
      );
      expectProblem(
        await server.request("POST", envs(project), { body: { id: "n", name: "N", copyFrom: "nowhere" } }),
        404,
        "environment_not_found",
      );
      expectProblem(
        await server.request("POST", envs(project), { rawBody: "{", headers: { "content-type": "application/json" } }),
        400,
        "invalid_request",
      );
      for (const body of [{ default: false }, { default: "yes" }, { name: "" }, { id: "renamed" }, { color: "red" }]) {
        expectInvalid(await server.request("PATCH", `${envs(project)}/production`, { body }));
      }
      expectInvalid(await server.request("GET", `${envs(project)}?limit=0`));
      expectInvalid(await server.request("GET", `${envs(project)}?limit=101`));
      expectInvalid(await server.request("GET", `${envs(project)}?after=garbage`));
      // Well-formed cursors that no page of this list gave: an id where a position belongs, two keys.
      for (const key of [["production"], ["1", "2"], ["-1"]]) {
        const cursor = Buffer.from(JSON.stringify(key)).toString("base64url");
        expectInvalid(await server.request("GET", `${envs(project)}?after=${cursor}`));
        expectInvalid(await server.request("GET", `${envs(project)}?before=${cursor}`));
      }
      expectInvalid(await server.request("GET", `${envs(project)}?sort=name`));
      // Nothing of it was made.
      assert.deepEqual(ids(await server.request("GET", envs(project))), ["production", "x".repeat(64), "A.b_c-9"]);
    });

    test("404 for an unknown project (admin) or environment; 403 for another project's key", async () => {
      const project = await createProject(server);
      const other = await createProject(server);
      const ghost = "no-such-project";
      expectProblem(await server.request("GET", envs(ghost)), 404, "project_not_found");
      expectProblem(
        await server.request("POST", envs(ghost), { body: { id: "s", name: "S" } }),
        404,
        "project_not_found",
      );
      for (const method of ["GET", "DELETE"]) {
        expectProblem(await server.request(method, `${envs(ghost)}/production`), 404, "project_not_found");
        expectProblem(await server.request(method, `${envs(project)}/nowhere`), 404, "environment_not_found");
      }
      expectProblem(
        await server.request("PATCH", `${envs(ghost)}/production`, { body: { name: "P" } }),
        404,
        "project_not_found",
      );
      expectProblem(
        await server.request("PATCH", `${envs(project)}/nowhere`, { body: { name: "P" } }),
        404,
        "environment_not_found",
      );
      const stranger = await bindKey(server, other, "write", null);
      for (const p of [project, ghost]) {
        expectProblem(await server.request("GET", envs(p), { key: stranger.key }), 403, "forbidden");
        expectProblem(await server.request("GET", `${envs(p)}/production`, { key: stranger.key }), 403, "forbidden");
      }
      expectProblem(await server.request("GET", envs(project), { key: "fsk_unknown" }), 401, "unauthorized");
      expectProblem(await server.request("GET", envs(project), { key: null }), 401, "unauthorized");
    });

    test("project keys read the environments (any binding) but never change them: 403", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "staging");
      const readers: Key[] = [
        await bindKey(server, project, "write", null),
        await bindKey(server, project, "write", "staging"),
        await bindKey(server, project, "read", "staging"),
        await bindKey(server, project, "read", "production"),
      ];
      const check = await bindKey(server, project, "check", "staging");
      for (const key of readers) {
        const list = await server.request("GET", envs(project), { key: key.key });
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(ids(list), ["production", "staging"], "a bound key still sees which environments exist");
        assert.equal((await server.request("GET", `${envs(project)}/production`, { key: key.key })).status, 200);
      }
      expectProblem(await server.request("GET", envs(project), { key: check.key }), 403, "forbidden");
      for (const key of [...readers, check]) {
        const as = { key: key.key };
        expectProblem(
          await server.request("POST", envs(project), { ...as, body: { id: "mine", name: "Mine" } }),
          403,
          "forbidden",
        );
        for (const env of ["staging", "production"]) {
          expectProblem(
            await server.request("PATCH", `${envs(project)}/${env}`, { ...as, body: { name: "Renamed" } }),
            403,
            "forbidden",
          );
          expectProblem(
            await server.request("PATCH", `${envs(project)}/${env}`, { ...as, body: { default: true } }),
            403,
            "forbidden",
          );
          expectProblem(await server.request("DELETE", `${envs(project)}/${env}`, as), 403, "forbidden");
        }
      }
      const list = await server.request("GET", envs(project));
      assert.deepEqual(
        list.body.data.map((e: any) => [e.id, e.name, e.default]),
        [
          ["production", "Production", true],
          ["staging", "Staging", false],
        ],
      );
    });

    test("pagination: limit, after and before walk the order both ways; edges have null cursors", async () => {
      const project = await createProject(server);
      const all = ["production", "e1", "e2", "e3", "e4"];
      for (const id of all.slice(1)) await addEnvironment(server, project, id);
      const page = async (query: string) => {
        const res = await server.request("GET", `${envs(project)}?${query}`);
        assert.equal(res.status, 200, res.text);
        return res.body as { data: { id: string }[]; pagination: { before: string | null; after: string | null } };
      };
      const first = await page("limit=2");
      assert.deepEqual(
        first.data.map((e) => e.id),
        ["production", "e1"],
      );
      assert.equal(first.pagination.before, null);
      assert.ok(first.pagination.after);
      const second = await page(`limit=2&after=${first.pagination.after}`);
      assert.deepEqual(
        second.data.map((e) => e.id),
        ["e2", "e3"],
      );
      assert.ok(second.pagination.before && second.pagination.after);
      const last = await page(`limit=2&after=${second.pagination.after}`);
      assert.deepEqual(
        last.data.map((e) => e.id),
        ["e4"],
      );
      assert.equal(last.pagination.after, null);
      assert.ok(last.pagination.before);
      const back = await page(`limit=2&before=${last.pagination.before}`);
      assert.deepEqual(
        back.data.map((e) => e.id),
        ["e2", "e3"],
      );
      const start = await page(`limit=2&before=${back.pagination.before}`);
      assert.deepEqual(
        start.data.map((e) => e.id),
        ["production", "e1"],
      );
      assert.equal(start.pagination.before, null);
      const whole = await page("limit=100");
      assert.deepEqual(
        whole.data.map((e) => e.id),
        all,
      );
      assert.deepEqual(whole.pagination, { before: null, after: null });
      const exact = await page("limit=5");
      assert.deepEqual(exact.pagination, { before: null, after: null });
    });

    test("pagination: a walk sees every environment that exists throughout, even when the one its cursor names is deleted", async () => {
      const project = await createProject(server);
      for (const id of ["e1", "e2", "e3", "e4"]) await addEnvironment(server, project, id);
      const first = await server.request("GET", `${envs(project)}?limit=2`);
      assert.deepEqual(ids(first), ["production", "e1"]);
      // The environment the cursor names goes, and one is added at the end.
      assert.equal((await server.request("DELETE", `${envs(project)}/e1`)).status, 204);
      await addEnvironment(server, project, "e5");
      const next = await server.request("GET", `${envs(project)}?limit=2&after=${first.body.pagination.after}`);
      assert.equal(next.status, 200, next.text);
      assert.deepEqual(ids(next), ["e2", "e3"]);
      const rest = await server.request("GET", `${envs(project)}?limit=5&after=${next.body.pagination.after}`);
      assert.deepEqual(ids(rest), ["e4", "e5"]);
      // And backwards from a deleted one.
      assert.equal((await server.request("DELETE", `${envs(project)}/e4`)).status, 204);
      const back = await server.request("GET", `${envs(project)}?limit=5&before=${rest.body.pagination.before}`);
      assert.deepEqual(ids(back), ["production", "e2", "e3"]);
    });
  });

  describe(`environment limit [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { ENVIRONMENTS_MAX_PER_PROJECT: "3" } });
    });
    after(() => server.close());

    test("past ENVIRONMENTS_MAX_PER_PROJECT: 409 environment_limit; a delete makes room", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "two");
      await addEnvironment(server, project, "three", { copyFrom: "two" });
      const res = await server.request("POST", `/projects/${project}/environments`, {
        body: { id: "four", name: "4" },
      });
      expectProblem(res, 409, "environment_limit");
      assert.match(res.body.detail, /3/);
      expectProblem(
        await server.request("GET", `/projects/${project}/environments/four`),
        404,
        "environment_not_found",
      );
      assert.equal((await server.request("DELETE", `/projects/${project}/environments/two`)).status, 204);
      await addEnvironment(server, project, "four");
      // A duplicate is still a duplicate at the limit.
      expectProblem(
        await server.request("POST", `/projects/${project}/environments`, { body: { id: "four", name: "4" } }),
        409,
        "environment_exists",
      );
    });

    test("POST /projects with more environments than the limit: 400", async () => {
      const environments = ["a", "b", "c", "d"].map((id) => ({ id, name: id }));
      expectInvalid(await server.request("POST", "/projects", { body: { id: "too-many", name: "T", environments } }));
      expectProblem(await server.request("GET", "/projects/too-many"), 404, "project_not_found");
      const ok = await server.request("POST", "/projects", {
        body: { id: "just-right", name: "J", environments: environments.slice(0, 3) },
      });
      assert.equal(ok.status, 201, ok.text);
    });
  });

  describe(`projects created with their environments [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock();
    before(async () => {
      server = await startServer({ dialect, clock });
    });
    after(() => server.close());

    test("POST /projects with environments: in that order, the first the default; flags and keys follow it", async () => {
      const res = await server.request("POST", "/projects", {
        body: {
          id: "named-envs",
          name: "Named",
          environments: [
            { id: "dev", name: "Development", description: "Laptops" },
            { id: "prod", name: "Prod" },
          ],
        },
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body, { id: "named-envs", name: "Named", createdAt: iso(clock) });
      const list = await server.request("GET", "/projects/named-envs/environments");
      assert.deepEqual(
        list.body.data.map((e: any) => [e.id, e.name, e.description, e.default, e.createdAt]),
        [
          ["dev", "Development", "Laptops", true, iso(clock)],
          ["prod", "Prod", "", false, iso(clock)],
        ],
      );
      expectProblem(
        await server.request("GET", "/projects/named-envs/environments/production"),
        404,
        "environment_not_found",
      );
      const flag = await server.request("POST", "/projects/named-envs/flags/f", { body: {} });
      assert.equal(flag.status, 201, flag.text);
      assert.equal(flag.body.environment, "dev");
      assert.deepEqual(Object.keys(flag.body.environments).sort(), ["dev", "prod"]);
      assert.equal((await bindKey(server, "named-envs", "check")).environment, "dev");
      assert.equal((await bindKey(server, "named-envs", "read", "prod")).environment, "prod");
      // The project's history records the project; its environments came with it.
      const history = await server.request("GET", "/projects/named-envs/events?type=environment.");
      assert.deepEqual(history.body.data, []);
    });

    test("a project deleted and made again under its id starts with its own environments only", async () => {
      const body = {
        id: "again",
        name: "Again",
        environments: [
          { id: "dev", name: "Dev" },
          { id: "live", name: "Live" },
        ],
      };
      assert.equal((await server.request("POST", "/projects", { body })).status, 201);
      await server.request("POST", "/projects/again/flags/f", { body: {} });
      const devKey = await bindKey(server, "again", "check", "dev");
      assert.equal((await server.request("DELETE", "/projects/again")).status, 204);
      assert.equal((await server.request("POST", "/projects", { body: { id: "again", name: "Again" } })).status, 201);
      assert.deepEqual(
        (await server.request("GET", "/projects/again/environments")).body.data.map((e: any) => [e.id, e.default]),
        [["production", true]],
      );
      const flag = await server.request("POST", "/projects/again/flags/f", { body: {} });
      assert.equal(flag.status, 201, flag.text);
      assert.deepEqual(Object.keys(flag.body.environments), ["production"]);
      expectProblem(
        await server.request("GET", "/projects/again/flags/f?environment=dev"),
        404,
        "environment_not_found",
      );
      expectProblem(await server.request("GET", "/whoami", { key: devKey.key }), 401, "unauthorized");
    });

    test("POST /projects: environments must be a non-empty list of valid, distinct environments", async () => {
      const bad: unknown[] = [
        [],
        [
          { id: "dup", name: "A" },
          { id: "dup", name: "B" },
        ],
        [{ id: "..", name: "Dots" }],
        [{ id: "ok" }],
        [{ id: "ok", name: "" }],
        [{ id: "ok", name: "Ok", default: true }],
        [{ id: "ok", name: "Ok", copyFrom: "x" }],
        "production",
        null,
      ];
      for (const environments of bad) {
        const res = await server.request("POST", "/projects", { body: { id: "refused", name: "R", environments } });
        expectInvalid(res);
      }
      const dup = await server.request("POST", "/projects", {
        body: {
          id: "refused",
          name: "R",
          environments: [
            { id: "a", name: "A" },
            { id: "b", name: "B" },
            { id: "a", name: "C" },
          ],
        },
      });
      expectInvalid(dup, "/environments/2/id");
      expectProblem(await server.request("GET", "/projects/refused"), 404, "project_not_found");
      // Non-admin keys cannot create projects at all.
      const p = await createProject(server);
      const writer = await bindKey(server, p, "write", null);
      expectProblem(
        await server.request("POST", "/projects", {
          key: writer.key,
          body: { id: "nope", name: "N", environments: [{ id: "e", name: "E" }] },
        }),
        403,
        "forbidden",
      );
    });
  });
}
