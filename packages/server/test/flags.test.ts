import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

for (const dialect of DIALECTS) {
  describe(`flags [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const clock = new ManualClock();
    before(async () => {
      server = await startServer({ dialect, clock });
      project = await createProject(server);
    });
    after(() => server.close());

    test("create answers 201 with Location, disabled, 0 %, latestCheckedAt null, statusChangedAt = createdAt", async () => {
      const res = await server.request("POST", `/projects/${project}/flags/new-checkout`, {
        body: { description: "The new checkout" },
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("location"), `/projects/${project}/flags/new-checkout`);
      const flag = res.body;
      assert.equal(flag.name, "new-checkout");
      assert.equal(flag.projectId, project);
      assert.equal(flag.description, "The new checkout");
      assert.equal(flag.status, "disabled");
      assert.equal(flag.percentageActors, 0);
      assert.equal(flag.percentageCalls, 0);
      assert.equal(flag.latestCheckedAt, null);
      assert.equal(flag.createdAt, "2026-11-22T10:00:00.000Z");
      assert.equal(flag.updatedAt, flag.createdAt);
      assert.equal(flag.statusChangedAt, flag.createdAt);
      assert.match(flag.id, /^flg_/);
      const got = await server.request("GET", `/projects/${project}/flags/new-checkout`);
      assert.deepEqual(got.body, flag);
    });

    test("create of a taken name answers 409 flag_exists", async () => {
      await server.request("POST", `/projects/${project}/flags/dup`, { body: {} });
      expectProblem(await server.request("POST", `/projects/${project}/flags/dup`, { body: {} }), 409, "flag_exists");
    });

    test("update moves updatedAt on change, statusChangedAt only on a real status change", async () => {
      await server.request("POST", `/projects/${project}/flags/times`, { body: {} });
      clock.advance(1000);
      const a = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { description: "d" } });
      assert.equal(a.status, 200);
      assert.equal(a.body.updatedAt, "2026-11-22T10:00:01.000Z");
      assert.equal(a.body.statusChangedAt, "2026-11-22T10:00:00.000Z");
      clock.advance(1000);
      const b = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { status: "disabled" } });
      assert.equal(b.body.updatedAt, "2026-11-22T10:00:01.000Z", "same status is no change");
      const c = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { status: "enabled" } });
      assert.equal(c.body.statusChangedAt, "2026-11-22T10:00:02.000Z");
      assert.equal(c.body.updatedAt, "2026-11-22T10:00:02.000Z");
      clock.advance(1000);
      const d = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { addActors: ["u1"] } });
      assert.equal(d.body.updatedAt, "2026-11-22T10:00:03.000Z", "membership change moves updatedAt");
      assert.equal(d.body.statusChangedAt, "2026-11-22T10:00:02.000Z");
      const e = await server.request("PATCH", `/projects/${project}/flags/times`, { body: {} });
      assert.deepEqual(e.body, d.body, "{} changes nothing");
    });
  });

  describe(`flags: reads, updates, deletes, concurrency [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const clock = new ManualClock();
    const flagPath = (name: string, p = project) => `/projects/${p}/flags/${name}`;
    const check = async (name: string, actorId?: string) => {
      const res = await server.request(
        "GET",
        `${flagPath(name)}/check${actorId === undefined ? "" : `?actorIds=${encodeURIComponent(actorId)}`}`,
      );
      assert.equal(res.status, 200, res.text);
      return res.body.enabled as boolean;
    };
    const create = async (name: string, body: unknown = {}) => {
      const res = await server.request("POST", flagPath(name), { body });
      assert.equal(res.status, 201, res.text);
      return res.body;
    };
    const patch = async (name: string, body: unknown) => {
      const res = await server.request("PATCH", flagPath(name), { body });
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const createSegment = async (name: string, members: string[] = []) => {
      const res = await server.request("POST", `/projects/${project}/segments`, { body: { name, description: "" } });
      assert.equal(res.status, 201, res.text);
      if (members.length > 0) {
        const added = await server.request("PATCH", `/projects/${project}/segments/${res.body.id}`, {
          body: { addActors: members },
        });
        assert.equal(added.status, 200, added.text);
      }
      return res.body.id as string;
    };
    const segmentIdsOf = async (name: string) => {
      const res = await server.request("GET", `${flagPath(name)}/segments`);
      assert.equal(res.status, 200, res.text);
      return res.body.data.map((s: any) => s.id) as string[];
    };
    const flagNamesForActor = async (actorId: string) => {
      const res = await server.request("GET", `/projects/${project}/actors/${encodeURIComponent(actorId)}/flags`);
      assert.equal(res.status, 200, res.text);
      return res.body.data.map((f: any) => f.name) as string[];
    };

    before(async () => {
      server = await startServer({ dialect, clock });
      project = await createProject(server);
    });
    after(() => server.close());

    test("GET of an unknown flag answers 404 flag_not_found", { timeout: 30_000 }, async () => {
      expectProblem(await server.request("GET", flagPath("no-such-flag")), 404, "flag_not_found");
      expectProblem(await server.request("GET", `${flagPath("no-such-flag")}/check`), 404, "flag_not_found");
      expectProblem(
        await server.request("PATCH", flagPath("no-such-flag"), { body: { description: "x" } }),
        404,
        "flag_not_found",
      );
      expectProblem(await server.request("DELETE", flagPath("no-such-flag")), 404, "flag_not_found");
    });

    test("an unknown project answers 404 project_not_found on GET, POST, PATCH, DELETE of a flag", {
      timeout: 30_000,
    }, async () => {
      await create("exists-elsewhere");
      const ghost = "no-such-project";
      for (const name of ["exists-elsewhere", "never-made"]) {
        expectProblem(await server.request("GET", flagPath(name, ghost)), 404, "project_not_found");
        expectProblem(await server.request("POST", flagPath(name, ghost), { body: {} }), 404, "project_not_found");
        expectProblem(
          await server.request("PATCH", flagPath(name, ghost), { body: { status: "enabled" } }),
          404,
          "project_not_found",
        );
        expectProblem(await server.request("DELETE", flagPath(name, ghost)), 404, "project_not_found");
        expectProblem(await server.request("GET", `${flagPath(name, ghost)}/check`), 404, "project_not_found");
      }
      expectProblem(await server.request("GET", `/projects/${ghost}/flags`), 404, "project_not_found");
      // Nothing was created by the POST to the unknown project.
      const projects = await server.request("GET", "/projects");
      assert.ok(!projects.body.data.some((p: any) => p.id === ghost));
    });

    test("DELETE answers 204 with no body; then 404 everywhere; the same name re-created starts clean", {
      timeout: 30_000,
    }, async () => {
      const segment = await createSegment("delete-seg", ["bob"]);
      const old = await create("doomed", { description: "old one" });
      await patch("doomed", {
        status: "conditional",
        percentageActors: 0,
        percentageCalls: 0,
        addActors: ["alice"],
        addSegments: [segment],
      });
      assert.equal(await check("doomed", "alice"), true);
      assert.equal(await check("doomed", "bob"), true);
      assert.equal(await check("doomed", "carol"), false);
      assert.deepEqual(await segmentIdsOf("doomed"), [segment]);

      const deleted = await server.request("DELETE", flagPath("doomed"));
      assert.equal(deleted.status, 204);
      assert.equal(deleted.text, "");

      expectProblem(await server.request("GET", flagPath("doomed")), 404, "flag_not_found");
      expectProblem(await server.request("GET", `${flagPath("doomed")}/check?actorIds=alice`), 404, "flag_not_found");
      expectProblem(await server.request("DELETE", flagPath("doomed")), 404, "flag_not_found");
      const listed = await server.request("GET", `/projects/${project}/flags?name=doomed`);
      assert.deepEqual(listed.body.data, []);
      assert.ok(!(await flagNamesForActor("alice")).includes("doomed"));

      const again = await create("doomed");
      assert.notEqual(again.id, old.id);
      assert.equal(again.description, "");
      assert.equal(again.status, "disabled");
      assert.equal(again.percentageActors, 0);
      assert.equal(again.percentageCalls, 0);
      assert.equal(again.latestCheckedAt, null);
      assert.deepEqual(await segmentIdsOf("doomed"), []);
      assert.equal(await check("doomed", "alice"), false);
      // Conditional with 0 %: only links could make it true, and there must be none left.
      await patch("doomed", { status: "conditional" });
      assert.equal(await check("doomed", "alice"), false, "the old actor link survived the delete");
      assert.equal(await check("doomed", "bob"), false, "the old segment link survived the delete");
      assert.deepEqual(await segmentIdsOf("doomed"), []);
      assert.ok(!(await flagNamesForActor("alice")).includes("doomed"));
      const segmentFlags = await server.request("GET", `/projects/${project}/segments/${segment}/flags`);
      assert.deepEqual(segmentFlags.body.data, []);
    });

    test("PATCH of every field at once; GET answers the same", { timeout: 30_000 }, async () => {
      const segment = await createSegment("every-field-seg", ["seg-member"]);
      await create("every-field", { description: "before" });
      clock.advance(1000);
      const updated = await patch("every-field", {
        description: "after",
        status: "conditional",
        percentageActors: 50,
        percentageCalls: 0,
        addActors: ["direct-actor"],
        addSegments: [segment],
      });
      assert.equal(updated.description, "after");
      assert.equal(updated.status, "conditional");
      assert.equal(updated.percentageActors, 50);
      assert.equal(updated.percentageCalls, 0);
      assert.equal(updated.updatedAt, new Date(clock.now()).toISOString());
      assert.equal(updated.statusChangedAt, updated.updatedAt);
      const got = await server.request("GET", flagPath("every-field"));
      assert.deepEqual(got.body, updated);
      assert.deepEqual(await segmentIdsOf("every-field"), [segment]);
      assert.equal(await check("every-field", "direct-actor"), true);
      assert.equal(await check("every-field", "seg-member"), true);

      const again = await patch("every-field", { percentageCalls: 100, percentageActors: 0, status: "enabled" });
      assert.equal(again.percentageCalls, 100);
      assert.equal(again.percentageActors, 0);
      assert.equal(again.status, "enabled");
      assert.deepEqual((await server.request("GET", flagPath("every-field"))).body, again);
    });

    test("percentages can be set in every status", { timeout: 30_000 }, async () => {
      await create("any-status");
      const cases = [
        { status: "disabled", percentageActors: 10, percentageCalls: 1 },
        { status: "enabled", percentageActors: 75, percentageCalls: 2 },
        { status: "conditional", percentageActors: 5, percentageCalls: 25 },
        { status: "disabled", percentageActors: 100, percentageCalls: 50 },
      ];
      for (const { status, percentageActors, percentageCalls } of cases) {
        const first = await patch("any-status", { status });
        assert.equal(first.status, status);
        const res = await server.request("PATCH", flagPath("any-status"), {
          body: { percentageActors, percentageCalls },
        });
        assert.equal(res.status, 200, `setting percentages while ${status}: ${res.text}`);
        const got = (await server.request("GET", flagPath("any-status"))).body;
        assert.deepEqual(
          [got.status, got.percentageActors, got.percentageCalls],
          [status, percentageActors, percentageCalls],
        );
      }
    });

    test("addActors then removeActors", { timeout: 30_000 }, async () => {
      await create("actors-flag");
      await patch("actors-flag", { status: "conditional", addActors: ["act-1", "act-2", "act-3"] });
      assert.deepEqual(
        [await check("actors-flag", "act-1"), await check("actors-flag", "act-2"), await check("actors-flag", "act-3")],
        [true, true, true],
      );
      assert.equal(await check("actors-flag", "act-4"), false);
      assert.ok((await flagNamesForActor("act-2")).includes("actors-flag"));

      await patch("actors-flag", { removeActors: ["act-1", "act-2"] });
      assert.deepEqual(
        [await check("actors-flag", "act-1"), await check("actors-flag", "act-2"), await check("actors-flag", "act-3")],
        [false, false, true],
      );
      assert.ok(!(await flagNamesForActor("act-2")).includes("actors-flag"));
      assert.ok((await flagNamesForActor("act-3")).includes("actors-flag"));
      // Detaching does not delete the actor.
      assert.equal((await server.request("GET", `/projects/${project}/actors/act-1`)).status, 200);
    });

    test("addSegments then removeSegments", { timeout: 30_000 }, async () => {
      const segA = await createSegment("seg-a", ["member-a"]);
      const segB = await createSegment("seg-b", ["member-b"]);
      await create("segments-flag");
      await patch("segments-flag", { status: "conditional", addSegments: [segB, segA] });
      assert.deepEqual(await segmentIdsOf("segments-flag"), [segA, segB], "ordered by name");
      assert.equal(await check("segments-flag", "member-a"), true);
      assert.equal(await check("segments-flag", "member-b"), true);

      await patch("segments-flag", { removeSegments: [segA] });
      assert.deepEqual(await segmentIdsOf("segments-flag"), [segB]);
      assert.equal(await check("segments-flag", "member-a"), false);
      assert.equal(await check("segments-flag", "member-b"), true);
      // The segment itself is untouched.
      const seg = await server.request("GET", `/projects/${project}/segments/${segA}`);
      assert.equal(seg.status, 200);
      assert.deepEqual(
        seg.body.latestActors.map((a: any) => a.actorId),
        ["member-a"],
      );
    });

    test("removing something not attached (or adding something attached) is a no-op: updatedAt unchanged", {
      timeout: 30_000,
    }, async () => {
      const attached = await createSegment("noop-attached");
      const detached = await createSegment("noop-detached");
      await create("noop-flag");
      const base = await patch("noop-flag", { addActors: ["here"], addSegments: [attached] });
      clock.advance(5000);
      for (const body of [
        { removeActors: ["never-attached-actor"] },
        { removeSegments: [detached] },
        { addActors: ["here"] },
        { addSegments: [attached] },
        { removeActors: ["never-attached-actor"], removeSegments: [detached], addActors: ["here"] },
      ]) {
        const res = await patch("noop-flag", body);
        assert.deepEqual(res, base, `${JSON.stringify(body)} changed the flag`);
      }
      assert.deepEqual((await server.request("GET", flagPath("noop-flag"))).body, base);
      assert.deepEqual(await segmentIdsOf("noop-flag"), [attached]);
      // Removing an actor that was never seen does not bring it into being.
      expectProblem(
        await server.request("GET", `/projects/${project}/actors/never-attached-actor`),
        404,
        "actor_not_found",
      );
    });

    test("timestamps are ISO 8601 UTC with milliseconds", { timeout: 30_000 }, async () => {
      const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
      clock.advance(123);
      const created = await create("stamped");
      for (const field of ["createdAt", "updatedAt", "statusChangedAt"]) assert.match(created[field], iso, field);
      assert.equal(created.createdAt, new Date(clock.now()).toISOString());
      clock.advance(7);
      const updated = await patch("stamped", { status: "enabled" });
      for (const field of ["createdAt", "updatedAt", "statusChangedAt"]) assert.match(updated[field], iso, field);
      assert.equal(updated.updatedAt, new Date(clock.now()).toISOString());
      assert.equal(await check("stamped"), true);
      const got = (await server.request("GET", flagPath("stamped"))).body;
      assert.match(got.latestCheckedAt, iso);
      for (const field of ["createdAt", "updatedAt", "statusChangedAt"]) assert.match(got[field], iso, field);
      const listed = await server.request("GET", `/projects/${project}/flags?name=stamped`);
      assert.equal(listed.body.data.length, 1);
      for (const field of ["createdAt", "updatedAt", "statusChangedAt", "latestCheckedAt"]) {
        assert.match(listed.body.data[0][field], iso, field);
      }
    });

    test('create with no body and no Content-Type answers 201 with description ""', { timeout: 30_000 }, async () => {
      const res = await server.request("POST", flagPath("bodiless"));
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.name, "bodiless");
      assert.equal(res.body.description, "");
      assert.equal(res.body.status, "disabled");
      assert.equal((await server.request("GET", flagPath("bodiless"))).body.description, "");
    });

    test("create with Content-Type: application/json and an empty body answers 201", { timeout: 30_000 }, async () => {
      const res = await server.request("POST", flagPath("empty-json"), {
        rawBody: "",
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.name, "empty-json");
      assert.equal(res.body.description, "");
      assert.equal((await server.request("GET", flagPath("empty-json"))).status, 200);
    });

    test("50 concurrent PATCHes adding distinct actors: all 50 attached", { timeout: 60_000 }, async () => {
      await create("crowded");
      await patch("crowded", { status: "conditional" });
      const actors = Array.from({ length: 50 }, (_, i) => `crowd-${i}`);
      const results = await Promise.all(
        actors.map((actor) => server.request("PATCH", flagPath("crowded"), { body: { addActors: [actor] } })),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        actors.map(() => 200),
        results.map((r) => r.text).join("\n"),
      );
      for (const actor of actors) {
        assert.equal(await check("crowded", actor), true, `${actor} not attached`);
        const stored = await server.request("GET", `/projects/${project}/actors/${actor}`);
        assert.equal(stored.status, 200, `${actor}: ${stored.text}`);
        assert.equal(stored.body.actorId, actor);
      }
      assert.equal(await check("crowded", "crowd-50"), false);
    });

    test("20 concurrent creates of one name: exactly one 201, the rest 409 flag_exists", {
      timeout: 60_000,
    }, async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          server.request("POST", flagPath("contested"), { body: { description: `attempt ${i}` } }),
        ),
      );
      const winners = results.filter((r) => r.status === 201);
      assert.equal(winners.length, 1, results.map((r) => `${r.status} ${r.text}`).join("\n"));
      for (const res of results.filter((r) => r.status !== 201)) expectProblem(res, 409, "flag_exists");
      const got = await server.request("GET", flagPath("contested"));
      assert.deepEqual(got.body, winners[0]!.body);
      const listed = await server.request("GET", `/projects/${project}/flags?name=contested`);
      assert.equal(listed.body.data.length, 1);
    });
  });
}
