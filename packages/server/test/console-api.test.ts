import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { actorBucket } from "@flagstaff/core";
import { Migrator } from "kysely/migration";
import { loadConfig } from "../src/kernel/config.js";
import { openDatabase } from "../src/db/database.js";
import { InCodeMigrations, migrateToLatest } from "../src/db/migrate.js";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  freshDatabase,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

// The API extensions the console stands on: counts, ETags with If-Match, member lists, explain.
for (const dialect of DIALECTS) {
  describe(`console API extensions [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let reader: string;
    let checker: string;
    const base = () => `/projects/${project}`;

    before(async () => {
      server = await startServer({ dialect, env: { CHECK_FLUSH_INTERVAL_MS: "10" } });
      project = await createProject(server, "console");
      reader = (await createKey(server, project, "read")).key;
      checker = (await createKey(server, project, "check")).key;
    });
    after(() => server.close());

    const ok = async (method: string, path: string, body?: unknown, status = 200, headers?: Record<string, string>) => {
      const res = await server.request(method, path, { ...(body === undefined ? {} : { body }), headers });
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      return res;
    };
    const newSegment = async (name: string) =>
      (await ok("POST", `${base()}/segments`, { name }, 201)).body.id as string;
    const eventCount = async () =>
      (
        await server.database.db
          .selectFrom("events")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n;

    test("whoami answers each key's id, name, role and project, and 401 without a valid key", async () => {
      const admin = (await ok("GET", "/whoami")).body;
      assert.equal(admin.role, "admin");
      assert.equal(admin.projectId, null);
      assert.equal(admin.environment, null);
      assert.equal(admin.name, "ADMIN_API_KEY");
      for (const role of ["write", "read", "check"] as const) {
        const key = await createKey(server, project, role);
        const res = await server.request("GET", "/whoami", { key: key.key });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, {
          keyId: key.id,
          name: `${role} key`,
          role,
          projectId: project,
          environment: "production",
        });
      }
      expectProblem(await server.request("GET", "/whoami", { key: null }), 401, "unauthorized");
      expectProblem(await server.request("GET", "/whoami", { key: "fsk_not_a_key" }), 401, "unauthorized");
      expectProblem(await server.request("GET", "/whoami?x=1"), 400, "invalid_request");
    });

    test("counts: attached actors and segments on a flag, members on a segment, exact through every change", async () => {
      const created = await ok("POST", `${base()}/flags/counted`, {}, 201);
      assert.equal(created.body.actorsCount, 0);
      assert.equal(created.body.segmentsCount, 0);
      const a = await newSegment("count-a");
      const b = await newSegment("count-b");
      let flag = (
        await ok("PATCH", `${base()}/flags/counted`, {
          addActors: ["u1", "u2", "u3", "u3"],
          addSegments: [a, b],
        })
      ).body;
      assert.equal(flag.actorsCount, 3, "duplicates count once");
      assert.equal(flag.segmentsCount, 2);
      flag = (await ok("PATCH", `${base()}/flags/counted`, { addActors: ["u1", "u4"], removeActors: ["u2", "nobody"] }))
        .body;
      assert.equal(flag.actorsCount, 3, "re-adding and removing the absent change nothing: u1, u3, u4");
      assert.equal((await ok("GET", `${base()}/flags/counted`)).body.actorsCount, 3);
      const listed = (await ok("GET", `${base()}/flags?name=counted`)).body.data[0];
      assert.equal(listed.actorsCount, 3);
      assert.equal(listed.segmentsCount, 2);

      const segment = (await ok("PATCH", `${base()}/segments/${a}`, { addActors: ["m1", "m2", "m3"] })).body;
      assert.equal(segment.actorsCount, 3);
      assert.equal(
        (await ok("PATCH", `${base()}/segments/${a}`, { addActors: ["m1"], removeActors: ["m2", "zz"] })).body
          .actorsCount,
        2,
      );
      assert.equal((await ok("GET", `${base()}/segments/${a}`)).body.actorsCount, 2);
      assert.equal((await ok("GET", `${base()}/segments`)).body.data.find((s: any) => s.id === a).actorsCount, 2);

      // A deleted segment is detached from the flag: one fewer, and the flag's ETag moves.
      const tagBefore = (await ok("GET", `${base()}/flags/counted`)).headers.get("etag");
      await ok("DELETE", `${base()}/segments/${b}`, undefined, 204);
      const after = await ok("GET", `${base()}/flags/counted`);
      assert.equal(after.body.segmentsCount, 1);
      assert.notEqual(after.headers.get("etag"), tagBefore);

      // A refused request changes no count.
      expectProblem(
        await server.request("PATCH", `${base()}/flags/counted`, {
          body: { addActors: ["u9"], addSegments: ["seg_nope"] },
        }),
        404,
        "segment_not_found",
      );
      assert.equal((await ok("GET", `${base()}/flags/counted`)).body.actorsCount, 3);
    });

    test("ETags: create, get and patch carry one; If-Match guards PATCH and DELETE of flags; 412 changes nothing", async () => {
      const created = await ok("POST", `${base()}/flags/guarded`, {}, 201);
      const t1 = created.headers.get("etag")!;
      // The tag of the flag's configuration in the environment shown (the project's default here).
      assert.match(t1, /^"flg_[A-Za-z0-9_-]+@production\.1"$/);
      assert.equal((await ok("GET", `${base()}/flags/guarded`)).headers.get("etag"), t1);
      const patched = await ok("PATCH", `${base()}/flags/guarded`, { description: "v2" }, 200, { "if-match": t1 });
      const t2 = patched.headers.get("etag")!;
      assert.notEqual(t2, t1);
      assert.equal((await ok("GET", `${base()}/flags/guarded`)).headers.get("etag"), t2);

      const events = await eventCount();
      for (const stale of [t1, `W/${t2}`, '"something-else"', `${t1}, "x"`]) {
        const res = await server.request("PATCH", `${base()}/flags/guarded`, {
          body: { description: "lost update" },
          headers: { "if-match": stale },
        });
        expectProblem(res, 412, "precondition_failed");
        assert.match(res.body.detail, /changed since you read it/);
      }
      expectProblem(
        await server.request("DELETE", `${base()}/flags/guarded`, { headers: { "if-match": t1 } }),
        412,
        "precondition_failed",
      );
      assert.equal(await eventCount(), events, "no refused write was recorded");
      const still = await ok("GET", `${base()}/flags/guarded`);
      assert.equal(still.body.description, "v2");

      // A list with the current tag, and *, match.
      const t3 = (
        await ok("PATCH", `${base()}/flags/guarded`, { status: "enabled" }, 200, { "if-match": `"x", ${t2}` })
      ).headers.get("etag")!;
      const t4 = (
        await ok("PATCH", `${base()}/flags/guarded`, { percentageActors: 25 }, 200, { "if-match": "*" })
      ).headers.get("etag")!;
      // A PATCH that changes nothing keeps the tag.
      assert.equal(
        (await ok("PATCH", `${base()}/flags/guarded`, { percentageActors: 25 }, 200, { "if-match": t4 })).headers.get(
          "etag",
        ),
        t4,
      );
      assert.notEqual(t3, t4);
      await ok("DELETE", `${base()}/flags/guarded`, undefined, 204, { "if-match": t4 });
      // A namesake made later never matches the old flag's tags.
      const again = await ok("POST", `${base()}/flags/guarded`, {}, 201);
      assert.notEqual(again.headers.get("etag"), t1);
      expectProblem(
        await server.request("PATCH", `${base()}/flags/guarded`, {
          body: { description: "x" },
          headers: { "if-match": t1 },
        }),
        412,
        "precondition_failed",
      );
      // 404 comes before 412.
      expectProblem(
        await server.request("PATCH", `${base()}/flags/ghost`, { body: {}, headers: { "if-match": t1 } }),
        404,
        "flag_not_found",
      );
    });

    test("ETags on segments: members, rename and delete are guarded alike", async () => {
      const res = await ok("POST", `${base()}/segments`, { name: "guarded-seg" }, 201);
      const id = res.body.id;
      const t1 = res.headers.get("etag")!;
      assert.match(t1, /^"seg_[A-Za-z0-9_-]+\.1"$/);
      const t2 = (
        await ok("PATCH", `${base()}/segments/${id}`, { addActors: ["x"] }, 200, { "if-match": t1 })
      ).headers.get("etag")!;
      assert.notEqual(t2, t1);
      assert.equal((await ok("GET", `${base()}/segments/${id}`)).headers.get("etag"), t2);
      expectProblem(
        await server.request("PATCH", `${base()}/segments/${id}`, {
          body: { name: "stale" },
          headers: { "if-match": t1 },
        }),
        412,
        "precondition_failed",
      );
      expectProblem(
        await server.request("DELETE", `${base()}/segments/${id}`, { headers: { "if-match": t1 } }),
        412,
        "precondition_failed",
      );
      assert.equal((await ok("GET", `${base()}/segments/${id}`)).body.name, "guarded-seg");
      await ok("DELETE", `${base()}/segments/${id}`, undefined, 204, { "if-match": t2 });
    });

    test("member lists: by actor id, searched (case-insensitive, wildcards literal), paged both ways", async () => {
      await ok("POST", `${base()}/flags/listed`, {}, 201);
      const ids = ["alice", "Bob", "carol", "dave_1", "dave%2", "erin", "frank", "Grace"];
      await ok("PATCH", `${base()}/flags/listed`, { addActors: ids });
      const segment = await newSegment("listed-seg");
      await ok("PATCH", `${base()}/segments/${segment}`, { addActors: ids });

      for (const path of [`${base()}/flags/listed/actors`, `${base()}/segments/${segment}/actors`]) {
        const all = (await server.request("GET", `${path}?limit=100`, { key: reader })).body;
        assert.deepEqual(
          all.data.map((m: any) => m.actorId),
          [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        );
        assert.ok(all.data.every((m: any) => /^\d{4}-\d\d-\d\dT/.test(m.addedAt)));
        assert.deepEqual(all.pagination, { before: null, after: null });

        const search = async (q: string) =>
          (await ok("GET", `${path}?q=${encodeURIComponent(q)}`)).body.data.map((m: any) => m.actorId);
        assert.deepEqual(await search("A"), await search("a"), "case-insensitive");
        assert.deepEqual((await search("dave_")).sort(), ["dave_1"], "_ is literal");
        assert.deepEqual(await search("%"), ["dave%2"], "% is literal");
        assert.deepEqual(await search("race"), ["Grace"]);
        assert.deepEqual(await search("zzz"), []);

        const p1 = (await ok("GET", `${path}?limit=3`)).body;
        assert.equal(p1.data.length, 3);
        assert.equal(p1.pagination.before, null);
        const p2 = (await ok("GET", `${path}?limit=3&after=${p1.pagination.after}`)).body;
        const p3 = (await ok("GET", `${path}?limit=3&after=${p2.pagination.after}`)).body;
        assert.equal(p3.data.length, 2);
        assert.equal(p3.pagination.after, null);
        const back = (await ok("GET", `${path}?limit=3&before=${p2.pagination.before}`)).body;
        assert.deepEqual(back.data, p1.data);
        const searchedPage = (await ok("GET", `${path}?q=a&limit=2`)).body;
        const next = (await ok("GET", `${path}?q=a&limit=2&after=${searchedPage.pagination.after}`)).body;
        assert.ok(next.data.every((m: any) => m.actorId.toLowerCase().includes("a")));

        expectProblem(await server.request("GET", path, { key: checker }), 403, "forbidden");
        expectProblem(await server.request("GET", path, { key: null }), 401, "unauthorized");
        for (const query of [`?q=${"x".repeat(257)}`, "?limit=0", "?after=nope", "?sort=id"]) {
          expectProblem(await server.request("GET", `${path}${query}`), 400, "invalid_request");
        }
      }
      expectProblem(await server.request("GET", `${base()}/flags/ghost/actors`), 404, "flag_not_found");
      expectProblem(await server.request("GET", `${base()}/segments/seg_ghost/actors`), 404, "segment_not_found");
      expectProblem(await server.request("GET", "/projects/ghost/flags/x/actors"), 404, "project_not_found");
      expectProblem(await server.request("GET", "/projects/ghost/segments/s/actors"), 404, "project_not_found");
    });

    test("explain names the rule, the actor, the segment and each actor's bucket; it agrees with the check", async () => {
      const path = (flag: string, actors: string[]) =>
        `${base()}/flags/${flag}/explain${actors.length ? "?" : ""}${actors.map((a) => `actorIds=${encodeURIComponent(a)}`).join("&")}`;
      await ok("POST", `${base()}/flags/explained`, {}, 201);
      const vips = await newSegment("VIPs");
      await ok("PATCH", `${base()}/segments/${vips}`, { addActors: ["vip"] });

      let e = (await server.request("GET", path("explained", ["anyone"]), { key: reader })).body;
      assert.equal(e.enabled, false);
      assert.equal(e.reason, "DISABLED");
      assert.equal(e.rule, "status");
      assert.equal(e.actors[0].bucket, actorBucket("explained", "anyone"));

      await ok("PATCH", `${base()}/flags/explained`, {
        status: "conditional",
        addActors: ["direct"],
        addSegments: [vips],
        percentageActors: 25,
        percentageCalls: 10,
      });
      e = (await ok("GET", path("explained", ["someone", "direct", "vip"]))).body;
      assert.deepEqual(
        { enabled: e.enabled, reason: e.reason, rule: e.rule, actorId: e.actorId, segment: e.segment },
        { enabled: true, reason: "TARGETING_MATCH", rule: "actor", actorId: "direct", segment: null },
      );
      assert.equal(e.threshold, 25_000);
      e = (await ok("GET", path("explained", ["vip"]))).body;
      assert.equal(e.rule, "segment");
      assert.deepEqual(e.segment, { id: vips, name: "VIPs" });
      assert.deepEqual(e.actors[0].segments, [{ id: vips, name: "VIPs" }]);

      // Find actors on each side of the 25 % rollout by their bucket.
      const inside = Array.from({ length: 200 }, (_, i) => `r${i}`).find((a) => actorBucket("explained", a) < 25_000)!;
      const outside = Array.from({ length: 200 }, (_, i) => `r${i}`).find(
        (a) => actorBucket("explained", a) >= 25_000,
      )!;
      e = (await ok("GET", path("explained", [outside, inside]))).body;
      assert.deepEqual([e.enabled, e.reason, e.rule, e.actorId], [true, "SPLIT", "actor_rollout", inside]);
      assert.deepEqual(
        e.actors.map((a: any) => [a.actorId, a.inRollout, a.attached]),
        [
          [outside, false, false],
          [inside, true, false],
        ],
      );
      e = (await ok("GET", path("explained", [outside]))).body;
      assert.deepEqual(
        [e.enabled, e.reason, e.rule, e.actorId, e.callRolloutPercentage],
        [false, "DEFAULT", "none", null, 10],
      );
      e = (await ok("GET", path("explained", []))).body;
      assert.deepEqual([e.enabled, e.rule, e.actors], [false, "none", []]);

      // With no call rollout, the check answers exactly what explain says, for every actor.
      await ok("PATCH", `${base()}/flags/explained`, { percentageCalls: 0 });
      for (let i = 0; i < 60; i++) {
        const actors = [`p${i}`, ...(i % 7 === 0 ? ["vip"] : []), ...(i % 11 === 0 ? ["direct"] : [])];
        const explained = (await ok("GET", path("explained", actors))).body;
        const query = actors.map((a) => `actorIds=${a}`).join("&");
        const checked = (await server.request("GET", `${base()}/flags/explained/check?${query}`, { key: checker }))
          .body;
        assert.equal(explained.enabled, checked.enabled, actors.join(","));
      }
    });

    test("explain records no check and refuses what the check refuses", async () => {
      await ok("POST", `${base()}/flags/unseen`, {}, 201);
      await ok("GET", `${base()}/flags/unseen/explain?actorIds=a`);
      await server.service.recorder.flush();
      assert.equal((await ok("GET", `${base()}/flags/unseen`)).body.latestCheckedAt, null);
      expectProblem(await server.request("GET", `${base()}/flags/unseen/explain`, { key: checker }), 403, "forbidden");
      expectProblem(await server.request("GET", `${base()}/flags/ghost/explain`), 404, "flag_not_found");
      expectProblem(await server.request("GET", "/projects/ghost/flags/x/explain"), 404, "project_not_found");
      const many = Array.from({ length: 101 }, (_, i) => `actorIds=a${i}`).join("&");
      expectProblem(await server.request("GET", `${base()}/flags/unseen/explain?${many}`), 400, "invalid_request");
      expectProblem(await server.request("GET", `${base()}/flags/unseen/explain?actorId=a`), 400, "invalid_request");
      expectProblem(
        await server.request("GET", `${base()}/flags/unseen/explain?actorIds=${"x".repeat(257)}`),
        400,
        "invalid_request",
      );
    });
  });

  describe(`counts migration [${dialect}]`, () => {
    test("counts of memberships made before the migration are filled in", async () => {
      const fresh = await freshDatabase(dialect);
      const handle = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
      try {
        const migrator = new Migrator({ db: handle.db, provider: new InCodeMigrations(handle.dialect) });
        const { error } = await migrator.migrateTo("003-webhooks");
        assert.equal(error, undefined);
        const db = handle.db as any;
        const at = "2026-01-01T00:00:00.000Z";
        await db.insertInto("projects").values({ id: "p", name: "P", created_at: at }).execute();
        await db
          .insertInto("flags")
          .values({
            id: "f",
            project_id: "p",
            name: "f",
            description: "",
            status: "disabled",
            percentage_actors: 0,
            percentage_calls: 0,
            created_at: at,
            updated_at: at,
            latest_checked_at: null,
            status_changed_at: at,
          })
          .execute();
        await db
          .insertInto("segments")
          .values({
            id: "s",
            project_id: "p",
            name: "s",
            description: "",
            created_at: at,
            updated_at: at,
            next_actor_seq: 4,
          })
          .execute();
        for (const actor_id of ["a", "b", "c"]) {
          await db
            .insertInto("flag_actors")
            .values({ flag_id: "f", project_id: "p", actor_id, created_at: at })
            .execute();
          await db
            .insertInto("segment_actors")
            .values({ segment_id: "s", project_id: "p", actor_id, seq: 1, added_at: at })
            .execute();
        }
        await db.insertInto("flag_segments").values({ flag_id: "f", segment_id: "s", created_at: at }).execute();
        await migrateToLatest(handle);
        // Migration 005 then carries them into the flag's production configuration.
        const flag = await db.selectFrom("flag_configs").selectAll().executeTakeFirst();
        assert.deepEqual([flag.config_id, flag.environment_id], ["f@production", "production"]);
        assert.deepEqual([Number(flag.actors_count), Number(flag.segments_count), Number(flag.revision)], [3, 1, 1]);
        const segment = await db.selectFrom("segments").selectAll().executeTakeFirst();
        assert.deepEqual([Number(segment.actors_count), Number(segment.revision)], [3, 1]);
      } finally {
        await handle.close();
        await fresh.drop();
      }
    });
  });
}
