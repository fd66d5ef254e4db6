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

const EMPTY_PAGE = { data: [], pagination: { before: null, after: null } };
const enc = encodeURIComponent;

for (const dialect of DIALECTS) {
  describe(`segments and actors [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const clock = new ManualClock();
    const now = () => new Date(clock.now()).toISOString();

    before(async () => {
      server = await startServer({ dialect, clock });
      project = await createProject(server);
    });
    after(() => server.close());

    async function newSegment(name: string, description = "", inProject = project): Promise<any> {
      const res = await server.request("POST", `/projects/${inProject}/segments`, { body: { name, description } });
      assert.equal(res.status, 201, `create segment ${name}: ${res.text}`);
      return res.body;
    }

    async function patchSegment(id: string, body: object, inProject = project): Promise<any> {
      const res = await server.request("PATCH", `/projects/${inProject}/segments/${id}`, { body });
      assert.equal(res.status, 200, `patch segment ${id}: ${res.text}`);
      return res.body;
    }

    async function getSegment(id: string, inProject = project): Promise<any> {
      const res = await server.request("GET", `/projects/${inProject}/segments/${id}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    }

    async function newFlag(name: string, patch?: object, inProject = project): Promise<void> {
      const res = await server.request("POST", `/projects/${inProject}/flags/${name}`, { body: {} });
      assert.equal(res.status, 201, `create flag ${name}: ${res.text}`);
      if (patch !== undefined) await patchFlag(name, patch, inProject);
    }

    async function patchFlag(name: string, body: object, inProject = project): Promise<any> {
      const res = await server.request("PATCH", `/projects/${inProject}/flags/${name}`, { body });
      assert.equal(res.status, 200, `patch flag ${name}: ${res.text}`);
      return res.body;
    }

    async function check(flag: string, actorId: string, inProject = project): Promise<boolean> {
      const res = await server.request("GET", `/projects/${inProject}/flags/${flag}/check?actorIds=${enc(actorId)}`);
      assert.equal(res.status, 200, res.text);
      return res.body.enabled;
    }

    async function list(path: string): Promise<any> {
      const res = await server.request("GET", path);
      assert.equal(res.status, 200, `GET ${path}: ${res.text}`);
      return res.body;
    }

    const names = (page: any) => page.data.map((item: any) => item.name);
    const actorIds = (segment: any) => segment.latestActors.map((a: any) => a.actorId);
    const bare = (actorId: string, createdAt: string) => ({ actorId, name: null, imageURL: null, createdAt });

    // ---------------------------------------------------------------- segments

    test("create answers 201 with Location, a server-generated seg_ id and no actors", async () => {
      clock.advance(1000);
      const createdAt = now();
      const res = await server.request("POST", `/projects/${project}/segments`, {
        body: { name: "Beta testers", description: "People who try things first" },
      });
      assert.equal(res.status, 201);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      const segment = res.body;
      assert.match(segment.id, /^seg_[A-Za-z0-9_-]+$/);
      assert.deepEqual(segment, {
        id: segment.id,
        name: "Beta testers",
        description: "People who try things first",
        createdAt,
        latestActors: [],
        actorsCount: 0,
        conditions: [],
      });
      assert.equal(res.headers.get("location"), `/projects/${project}/segments/${segment.id}`);
      const got = await server.request("GET", res.headers.get("location")!);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, segment);
      const other = await newSegment("Beta testers 2");
      assert.notEqual(other.id, segment.id);
      assert.match(other.id, /^seg_/);
    });

    test("create trims the name; empty, whitespace-only and 129-character names are 400, 128 is fine", async () => {
      assert.equal((await newSegment("  Trimmed  ")).name, "Trimmed");
      assert.equal((await newSegment("\t Tabbed \n")).name, "Tabbed");
      const long128 = "y".repeat(128);
      const created = await newSegment(`  ${long128}  `);
      assert.equal(created.name, long128);
      assert.deepEqual((await getSegment(created.id)).name, long128);
      const bad = [
        { name: "" },
        { name: "   " },
        { name: " \t\n " },
        { name: `  ${"z".repeat(129)}  ` },
        { name: "z".repeat(129) },
        { description: "no name" },
        { name: null },
        { name: 42 },
        { name: ["a"] },
      ];
      for (const body of bad) {
        expectProblem(await server.request("POST", `/projects/${project}/segments`, { body }), 400, "invalid_request");
      }
      const all = await list(`/projects/${project}/segments?limit=100`);
      assert.ok(!names(all).includes("z".repeat(129)), "a refused create stores nothing");
    });

    test("description at most 1024 characters; unknown fields are 400; the id cannot be chosen", async () => {
      const ok = await newSegment("Long description", "d".repeat(1024));
      assert.equal(ok.description, "d".repeat(1024));
      const bad = [
        { name: "too long description", description: "d".repeat(1025) },
        { name: "unknown field", description: "", colour: "red" },
        { name: "chosen id", id: "seg_mine" },
        { name: "typo", descripton: "x" },
        { name: "actors on create", addActors: ["a"] },
        { name: "description type", description: 5 },
      ];
      for (const body of bad) {
        expectProblem(await server.request("POST", `/projects/${project}/segments`, { body }), 400, "invalid_request");
      }
      const all = names(await list(`/projects/${project}/segments?limit=100`));
      for (const body of bad) assert.ok(!all.includes(body.name), `${body.name} was not stored`);
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${ok.id}`, {
          body: { description: "d".repeat(1025) },
        }),
        400,
        "invalid_request",
      );
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${ok.id}`, { body: { actors: ["a"] } }),
        400,
        "invalid_request",
      );
      assert.deepEqual(await getSegment(ok.id), ok);
    });

    test("a taken name is 409 segment_exists on create and on rename; renaming to its own name is fine", async () => {
      const taken = await newSegment("Taken");
      expectProblem(
        await server.request("POST", `/projects/${project}/segments`, { body: { name: "Taken", description: "" } }),
        409,
        "segment_exists",
      );
      expectProblem(
        await server.request("POST", `/projects/${project}/segments`, { body: { name: "  Taken  " } }),
        409,
        "segment_exists",
      );
      const other = await newSegment("Other");
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${other.id}`, {
          body: { name: "Taken", description: "changed", addActors: ["renamer"] },
        }),
        409,
        "segment_exists",
      );
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${other.id}`, { body: { name: " Taken " } }),
        409,
        "segment_exists",
      );
      assert.deepEqual(await getSegment(other.id), other, "a refused rename changes nothing");
      expectProblem(await server.request("GET", `/projects/${project}/actors/renamer`), 404, "actor_not_found");
      assert.deepEqual(await patchSegment(taken.id, { name: "Taken" }), taken);
      assert.deepEqual(await patchSegment(taken.id, { name: "  Taken " }), taken);
      const renamed = await patchSegment(other.id, { name: "Other renamed" });
      assert.equal(renamed.name, "Other renamed");
      assert.equal((await newSegment("Other")).name, "Other", "the old name is free again");
      for (const name of ["", "   ", "q".repeat(129)]) {
        expectProblem(
          await server.request("PATCH", `/projects/${project}/segments/${taken.id}`, { body: { name } }),
          400,
          "invalid_request",
        );
      }
      assert.deepEqual(await getSegment(taken.id), taken);
    });

    test("unknown segment is 404 segment_not_found, unknown project 404 project_not_found", async () => {
      const segment = await newSegment("Known");
      const otherProject = await createProject(server);
      const missing = "seg_doesnotexist000000";
      expectProblem(await server.request("GET", `/projects/${project}/segments/${missing}`), 404, "segment_not_found");
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${missing}`, { body: { name: "x" } }),
        404,
        "segment_not_found",
      );
      expectProblem(
        await server.request("DELETE", `/projects/${project}/segments/${missing}`),
        404,
        "segment_not_found",
      );
      expectProblem(
        await server.request("GET", `/projects/${project}/segments/${missing}/flags`),
        404,
        "segment_not_found",
      );
      // Another project's segment is not found here.
      expectProblem(
        await server.request("GET", `/projects/${otherProject}/segments/${segment.id}`),
        404,
        "segment_not_found",
      );
      expectProblem(
        await server.request("PATCH", `/projects/${otherProject}/segments/${segment.id}`, { body: { name: "stolen" } }),
        404,
        "segment_not_found",
      );
      expectProblem(
        await server.request("DELETE", `/projects/${otherProject}/segments/${segment.id}`),
        404,
        "segment_not_found",
      );
      await newFlag("cross", undefined, otherProject);
      expectProblem(
        await server.request("PATCH", `/projects/${otherProject}/flags/cross`, { body: { addSegments: [segment.id] } }),
        404,
        "segment_not_found",
      );
      assert.deepEqual(await getSegment(segment.id), segment);
      const nope = "no-such-project";
      expectProblem(await server.request("GET", `/projects/${nope}/segments/${segment.id}`), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${nope}/segments`), 404, "project_not_found");
      expectProblem(
        await server.request("POST", `/projects/${nope}/segments`, { body: { name: "x" } }),
        404,
        "project_not_found",
      );
      expectProblem(
        await server.request("PATCH", `/projects/${nope}/segments/${segment.id}`, { body: { name: "x" } }),
        404,
        "project_not_found",
      );
      expectProblem(
        await server.request("DELETE", `/projects/${nope}/segments/${segment.id}`),
        404,
        "project_not_found",
      );
      expectProblem(await server.request("GET", `/projects/${nope}/actors/a/segments`), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${nope}/flags/f/segments`), 404, "project_not_found");
    });

    test("patch changes name, description and members in one request; {} changes nothing", async () => {
      const segment = await newSegment("Patchable", "before");
      clock.advance(1000);
      const at = now();
      const patched = await patchSegment(segment.id, {
        name: "Patched",
        description: "after",
        addActors: ["pm1", "pm2"],
      });
      assert.deepEqual(patched, {
        id: segment.id,
        name: "Patched",
        description: "after",
        createdAt: segment.createdAt,
        latestActors: [bare("pm2", at), bare("pm1", at)],
        actorsCount: 2,
        conditions: [],
      });
      assert.deepEqual(await getSegment(segment.id), patched);
      clock.advance(1000);
      assert.deepEqual(await patchSegment(segment.id, {}), patched);
      const removed = await patchSegment(segment.id, { description: "", removeActors: ["pm2"] });
      assert.deepEqual(removed, { ...patched, description: "", latestActors: [bare("pm1", at)], actorsCount: 1 });
      assert.deepEqual(await getSegment(segment.id), removed);
    });

    test("latestActors: the 10 most recently added, newest first; later entries of one request are newer", async () => {
      const segment = await newSegment("Latest");
      const id = (i: number) => `a${String(i).padStart(2, "0")}`;
      const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => id(from + i));
      const times: string[] = [];
      const batches = [range(1, 5), range(6, 10), range(11, 15)];
      const createdAt = new Map<string, string>();
      for (const batch of batches) {
        clock.advance(1000);
        times.push(now());
        for (const actor of batch) createdAt.set(actor, now());
        const res = await patchSegment(segment.id, { addActors: batch });
        if (times.length === 1) {
          assert.deepEqual(
            res.latestActors,
            ["a05", "a04", "a03", "a02", "a01"].map((a) => bare(a, times[0]!)),
          );
        }
      }
      const expect = (ids: string[]) => ids.map((a) => bare(a, createdAt.get(a)!));
      const top = ["a15", "a14", "a13", "a12", "a11", "a10", "a09", "a08", "a07", "a06"];
      assert.deepEqual((await getSegment(segment.id)).latestActors, expect(top));

      clock.advance(1000);
      assert.deepEqual(
        (await patchSegment(segment.id, { addActors: ["a07", "a12", "a01"] })).latestActors,
        expect(top),
        "re-adding members does not change the order",
      );
      assert.deepEqual((await getSegment(segment.id)).latestActors, expect(top));

      createdAt.set("a16", now());
      const withNew = await patchSegment(segment.id, { addActors: ["a16", "a08"] });
      assert.deepEqual(
        withNew.latestActors,
        expect(["a16", "a15", "a14", "a13", "a12", "a11", "a10", "a09", "a08", "a07"]),
      );

      const afterRemove = await patchSegment(segment.id, { removeActors: ["a15", "a12"] });
      assert.deepEqual(
        afterRemove.latestActors,
        expect(["a16", "a14", "a13", "a11", "a10", "a09", "a08", "a07", "a06", "a05"]),
      );

      clock.advance(1000);
      await patchSegment(segment.id, { removeActors: ["a03"] });
      const readded = await patchSegment(segment.id, { addActors: ["a03"] });
      assert.deepEqual(
        readded.latestActors,
        expect(["a03", "a16", "a14", "a13", "a11", "a10", "a09", "a08", "a07", "a06"]),
        "removed and added again counts as newest; createdAt stays the first sighting",
      );
      assert.deepEqual((await getSegment(segment.id)).latestActors, readded.latestActors);
      const inList = (await list(`/projects/${project}/segments?limit=100`)).data.find((s: any) => s.id === segment.id);
      assert.deepEqual(inList.latestActors, readded.latestActors);
    });

    test("latestActors shows an actor's own createdAt: when first seen anywhere, not when it joined", async () => {
      clock.advance(1000);
      const seenAt = now();
      await newFlag("first-sighting", { addActors: ["early-bird"] });
      clock.advance(5000);
      const segment = await newSegment("Late joiners");
      const res = await patchSegment(segment.id, { addActors: ["early-bird", "newcomer"] });
      assert.deepEqual(res.latestActors, [bare("newcomer", now()), bare("early-bird", seenAt)]);
    });

    test("an id both added and removed is 400 and nothing changes", async () => {
      const segment = await newSegment("Contradiction", "as it was");
      const before = await patchSegment(segment.id, { addActors: ["c1", "both"] });
      clock.advance(1000);
      for (const body of [
        { addActors: ["both"], removeActors: ["both"] },
        { name: "Changed", description: "changed", addActors: ["c-new", "both"], removeActors: ["c1", "both"] },
        { addActors: ["c-new", "x"], removeActors: ["x"] },
      ]) {
        expectProblem(
          await server.request("PATCH", `/projects/${project}/segments/${segment.id}`, { body }),
          400,
          "invalid_request",
        );
      }
      assert.deepEqual(await getSegment(segment.id), before);
      expectProblem(await server.request("GET", `/projects/${project}/actors/c-new`), 404, "actor_not_found");
      expectProblem(await server.request("GET", `/projects/${project}/actors/x`), 404, "actor_not_found");
    });

    test("duplicate ids collapse", async () => {
      const segment = await newSegment("Duplicates");
      const added = await patchSegment(segment.id, { addActors: ["d1", "d2", "d1", "d2", "d1"] });
      assert.equal(added.latestActors.length, 2);
      assert.deepEqual([...actorIds(added)].sort(), ["d1", "d2"]);
      const removed = await patchSegment(segment.id, { removeActors: ["d1", "d1"] });
      assert.deepEqual(actorIds(removed), ["d2"]);
      const page = await list(`/projects/${project}/actors/d2/segments`);
      assert.deepEqual(
        page.data.map((s: any) => s.id),
        [segment.id],
      );
    });

    test("more than 1000 ids is 400; exactly 1000 is fine; bad actor ids in the lists are 400", async () => {
      const segment = await newSegment("Thousand");
      const ids = (n: number, prefix: string) =>
        Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, "0")}`);
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${segment.id}`, {
          body: { addActors: ids(1001, "t") },
        }),
        400,
        "invalid_request",
      );
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${segment.id}`, {
          body: { removeActors: ids(1001, "t") },
        }),
        400,
        "invalid_request",
      );
      assert.deepEqual((await getSegment(segment.id)).latestActors, []);
      expectProblem(await server.request("GET", `/projects/${project}/actors/t0000`), 404, "actor_not_found");

      clock.advance(1000);
      const thousand = ids(1000, "k");
      const res = await patchSegment(segment.id, { addActors: thousand });
      assert.deepEqual(
        res.latestActors,
        thousand
          .slice(990)
          .reverse()
          .map((a) => bare(a, now())),
      );
      assert.deepEqual(
        (await list(`/projects/${project}/actors/k0000/segments`)).data.map((s: any) => s.id),
        [segment.id],
      );
      assert.equal((await patchSegment(segment.id, { removeActors: thousand })).latestActors.length, 0);

      for (const bad of ["", "x".repeat(257), "a\u0001b", "tab\there", "new\nline", "del\u007f"]) {
        for (const field of ["addActors", "removeActors"]) {
          expectProblem(
            await server.request("PATCH", `/projects/${project}/segments/${segment.id}`, { body: { [field]: [bad] } }),
            400,
            "invalid_request",
          );
        }
      }
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${segment.id}`, { body: { addActors: "solo" } }),
        400,
        "invalid_request",
      );
      expectProblem(
        await server.request("PATCH", `/projects/${project}/segments/${segment.id}`, { body: { addActors: [7] } }),
        400,
        "invalid_request",
      );
      const ok256 = "x".repeat(256);
      assert.deepEqual(actorIds(await patchSegment(segment.id, { addActors: [ok256] })), [ok256]);
    });

    test("delete: 204, gone, detached from every flag; checks for its members turn false", async () => {
      const doomed = await newSegment("Doomed");
      const kept = await newSegment("Kept");
      await patchSegment(doomed.id, { addActors: ["dm1", "dm2"] });
      await patchSegment(kept.id, { addActors: ["km1"] });
      await newFlag("del-a", { status: "conditional", addSegments: [doomed.id, kept.id] });
      await newFlag("del-b", { status: "conditional", addSegments: [doomed.id] });
      await newFlag("del-c", { status: "enabled", addSegments: [doomed.id] });

      assert.deepEqual(names(await list(`/projects/${project}/flags/del-a/segments`)), ["Doomed", "Kept"]);
      assert.deepEqual(names(await list(`/projects/${project}/flags/del-b/segments`)), ["Doomed"]);
      assert.equal(await check("del-a", "dm1"), true);
      assert.equal(await check("del-b", "dm2"), true);
      const actorFlagsBefore = names(await list(`/projects/${project}/actors/dm1/flags?limit=100`));
      assert.ok(actorFlagsBefore.includes("del-a") && actorFlagsBefore.includes("del-b"));
      assert.deepEqual(names(await list(`/projects/${project}/actors/dm1/segments`)), ["Doomed"]);
      assert.deepEqual(
        names(await list(`/projects/${project}/segments/${doomed.id}/flags?limit=100`)).filter((n: string) =>
          n.startsWith("del-"),
        ),
        ["del-a", "del-b", "del-c"],
      );

      const res = await server.request("DELETE", `/projects/${project}/segments/${doomed.id}`);
      assert.equal(res.status, 204);
      assert.equal(res.text, "");

      expectProblem(
        await server.request("GET", `/projects/${project}/segments/${doomed.id}`),
        404,
        "segment_not_found",
      );
      expectProblem(
        await server.request("DELETE", `/projects/${project}/segments/${doomed.id}`),
        404,
        "segment_not_found",
      );
      expectProblem(
        await server.request("GET", `/projects/${project}/segments/${doomed.id}/flags`),
        404,
        "segment_not_found",
      );
      assert.deepEqual(names(await list(`/projects/${project}/flags/del-a/segments`)), ["Kept"]);
      assert.deepEqual(await list(`/projects/${project}/flags/del-b/segments`), EMPTY_PAGE);
      assert.deepEqual(await list(`/projects/${project}/flags/del-c/segments`), EMPTY_PAGE);
      assert.equal(await check("del-a", "dm1"), false);
      assert.equal(await check("del-b", "dm2"), false);
      assert.equal(await check("del-a", "km1"), true, "the other segment still counts");
      const actorFlagsAfter = names(await list(`/projects/${project}/actors/dm1/flags?limit=100`));
      assert.ok(!actorFlagsAfter.includes("del-a") && !actorFlagsAfter.includes("del-b"));
      assert.ok(actorFlagsAfter.includes("del-c"), "an enabled flag is still on for everyone");
      assert.deepEqual(await list(`/projects/${project}/actors/dm1/segments`), EMPTY_PAGE);
      assert.ok(!names(await list(`/projects/${project}/segments?limit=100`)).includes("Doomed"));
      expectProblem(
        await server.request("PATCH", `/projects/${project}/flags/del-b`, { body: { addSegments: [doomed.id] } }),
        404,
        "segment_not_found",
      );

      const again = await newSegment("Doomed");
      assert.notEqual(again.id, doomed.id);
      assert.deepEqual(again.latestActors, [], "a new segment of the same name starts clean");
      assert.deepEqual(await list(`/projects/${project}/flags/del-b/segments`), EMPTY_PAGE);
      const againFlags = names(await list(`/projects/${project}/segments/${again.id}/flags?limit=100`));
      assert.ok(againFlags.includes("del-c"), "enabled flags are on for every segment");
      assert.ok(!againFlags.includes("del-a") && !againFlags.includes("del-b"), "old links do not come back");
    });

    test("segments for a flag and for an actor; flags for a segment; unknown ones", async () => {
      const p = await createProject(server);
      const s1 = await newSegment("Zed", "", p);
      const s2 = await newSegment("alpha", "", p);
      const s3 = await newSegment("Not attached", "", p);
      await patchSegment(s1.id, { addActors: ["fa"] }, p);
      await patchSegment(s3.id, { addActors: ["fa", "fb"] }, p);
      await newFlag("target", { addSegments: [s2.id, s1.id] }, p);
      await newFlag("on", { status: "enabled" }, p);
      await newFlag("off", { addActors: ["fa"] }, p);
      await newFlag("cond", { status: "conditional", addActors: ["fa"] }, p);
      await newFlag("cond-seg", { status: "conditional", addSegments: [s1.id] }, p);

      const forFlag = await list(`/projects/${p}/flags/target/segments`);
      assert.deepEqual(forFlag.pagination, { before: null, after: null });
      assert.deepEqual(
        forFlag.data,
        [await getSegment(s1.id, p), await getSegment(s2.id, p)],
        "the segments, whole, in name order (status disabled does not matter)",
      );
      assert.deepEqual(names(await list(`/projects/${p}/actors/fa/segments`)), ["Not attached", "Zed"]);
      assert.deepEqual(names(await list(`/projects/${p}/actors/fb/segments`)), ["Not attached"]);
      assert.deepEqual(await list(`/projects/${p}/actors/never-seen/segments`), EMPTY_PAGE);
      assert.deepEqual(names(await list(`/projects/${p}/actors/fa/flags`)), ["cond", "cond-seg", "on"]);
      assert.deepEqual(names(await list(`/projects/${p}/actors/never-seen/flags`)), ["on"]);
      assert.deepEqual(names(await list(`/projects/${p}/segments/${s1.id}/flags`)), ["cond-seg", "on"]);
      assert.deepEqual(names(await list(`/projects/${p}/segments/${s3.id}/flags`)), ["on"]);
      expectProblem(await server.request("GET", `/projects/${p}/flags/no-flag/segments`), 404, "flag_not_found");
      expectProblem(await server.request("GET", `/projects/${p}/segments/seg_none/flags`), 404, "segment_not_found");
    });

    // ------------------------------------------------------------------ actors

    test("an actor comes into being when first attached to a flag; its createdAt never changes", async () => {
      expectProblem(await server.request("GET", `/projects/${project}/actors/via-flag`), 404, "actor_not_found");
      await newFlag("birth", { status: "conditional" });
      clock.advance(1000);
      const born = now();
      await patchFlag("birth", { addActors: ["via-flag"] });
      const actor = await server.request("GET", `/projects/${project}/actors/via-flag`);
      assert.equal(actor.status, 200);
      assert.deepEqual(actor.body, bare("via-flag", born));

      clock.advance(1000);
      await patchFlag("birth", { removeActors: ["via-flag"] });
      clock.advance(1000);
      await patchFlag("birth", { addActors: ["via-flag"] });
      const segment = await newSegment("Birth segment");
      clock.advance(1000);
      const res = await patchSegment(segment.id, { addActors: ["via-flag"] });
      assert.deepEqual(res.latestActors, [bare("via-flag", born)]);
      await patchFlag("birth", { removeActors: ["via-flag"] });
      await patchSegment(segment.id, { removeActors: ["via-flag"] });
      assert.deepEqual(
        (await server.request("GET", `/projects/${project}/actors/via-flag`)).body,
        bare("via-flag", born),
        "an actor once seen stays, with its first createdAt",
      );
    });

    test("an actor comes into being when first added to a segment", async () => {
      const segment = await newSegment("Cradle");
      clock.advance(1000);
      const born = now();
      await patchSegment(segment.id, { addActors: ["via-segment"] });
      assert.deepEqual(
        (await server.request("GET", `/projects/${project}/actors/via-segment`)).body,
        bare("via-segment", born),
      );
      clock.advance(1000);
      await newFlag("later", { addActors: ["via-segment"] });
      assert.deepEqual(
        (await server.request("GET", `/projects/${project}/actors/via-segment`)).body,
        bare("via-segment", born),
      );
    });

    test("a check, a refused patch or another project never create an actor", async () => {
      await newFlag("ghost-check", { status: "conditional" });
      assert.equal(await check("ghost-check", "ghost"), false);
      expectProblem(await server.request("GET", `/projects/${project}/actors/ghost`), 404, "actor_not_found");
      expectProblem(
        await server.request("PATCH", `/projects/${project}/flags/ghost-check`, {
          body: { addActors: ["failed-add"], addSegments: ["seg_missing"] },
        }),
        404,
        "segment_not_found",
      );
      expectProblem(await server.request("GET", `/projects/${project}/actors/failed-add`), 404, "actor_not_found");
      const other = await createProject(server);
      await newFlag("elsewhere", { addActors: ["only-there"] }, other);
      assert.equal((await server.request("GET", `/projects/${other}/actors/only-there`)).status, 200);
      expectProblem(await server.request("GET", `/projects/${project}/actors/only-there`), 404, "actor_not_found");
      expectProblem(
        await server.request("GET", `/projects/no-such-project/actors/only-there`),
        404,
        "project_not_found",
      );
    });

    test("PUT creates (201) or replaces (200) a profile; fields left out become null", async () => {
      clock.advance(1000);
      const born = now();
      const created = await server.request("PUT", `/projects/${project}/actors/profiled`, {
        body: { name: "Ann", imageURL: "https://example.com/ann.png" },
      });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body, {
        actorId: "profiled",
        name: "Ann",
        imageURL: "https://example.com/ann.png",
        createdAt: born,
      });
      assert.deepEqual((await server.request("GET", `/projects/${project}/actors/profiled`)).body, created.body);

      clock.advance(1000);
      const renamed = await server.request("PUT", `/projects/${project}/actors/profiled`, { body: { name: "Ann B" } });
      assert.equal(renamed.status, 200);
      assert.deepEqual(renamed.body, { actorId: "profiled", name: "Ann B", imageURL: null, createdAt: born });
      const pictured = await server.request("PUT", `/projects/${project}/actors/profiled`, {
        body: { name: null, imageURL: "http://img.test/a" },
      });
      assert.equal(pictured.status, 200);
      assert.deepEqual(pictured.body, {
        actorId: "profiled",
        name: null,
        imageURL: "http://img.test/a",
        createdAt: born,
      });
      const cleared = await server.request("PUT", `/projects/${project}/actors/profiled`, { body: {} });
      assert.equal(cleared.status, 200);
      assert.deepEqual(cleared.body, bare("profiled", born));
      assert.deepEqual(
        (await server.request("GET", `/projects/${project}/actors/profiled`)).body,
        bare("profiled", born),
      );

      // An actor first seen on a flag: the PUT finds it (200) and keeps its createdAt.
      const seenAt = now();
      await newFlag("profile-flag", { addActors: ["seen-first"] });
      clock.advance(1000);
      const put = await server.request("PUT", `/projects/${project}/actors/seen-first`, { body: { name: "Seen" } });
      assert.equal(put.status, 200);
      assert.deepEqual(put.body, { actorId: "seen-first", name: "Seen", imageURL: null, createdAt: seenAt });

      // An actor first made by a PUT keeps that createdAt when it is later attached.
      clock.advance(1000);
      await patchFlag("profile-flag", { addActors: ["profiled"] });
      assert.deepEqual(
        (await server.request("GET", `/projects/${project}/actors/profiled`)).body,
        bare("profiled", born),
      );

      expectProblem(
        await server.request("PUT", `/projects/no-such-project/actors/x`, { body: { name: "x" } }),
        404,
        "project_not_found",
      );
    });

    test("PUT refuses a non-http(s) imageURL, unknown fields and wrong types with 400", async () => {
      const path = `/projects/${project}/actors/refused`;
      const bad = [
        { imageURL: "ftp://example.com/a.png" },
        { imageURL: "javascript:alert(1)" },
        { imageURL: "example.com/a.png" },
        { imageURL: "https://" },
        { imageURL: "http://exa mple.com/a.png" },
        { imageURL: "" },
        { imageURL: 42 },
        { name: 42 },
        { name: ["Ann"] },
        { name: "Ann", imageUrl: "https://example.com/a.png" },
        { nickname: "x" },
        { actorId: "refused" },
        { name: "Ann", createdAt: "2026-11-22T10:00:00.000Z" },
      ];
      for (const body of bad) expectProblem(await server.request("PUT", path, { body }), 400, "invalid_request");
      expectProblem(
        await server.request("PUT", path, { rawBody: "{not json", headers: { "content-type": "application/json" } }),
        400,
        "invalid_request",
      );
      expectProblem(await server.request("GET", path), 404, "actor_not_found");
      // Refusals on an existing actor leave it as it was.
      const ok = await server.request("PUT", path, { body: { name: "Kept", imageURL: "https://example.com/k.png" } });
      assert.equal(ok.status, 201);
      for (const body of bad) expectProblem(await server.request("PUT", path, { body }), 400, "invalid_request");
      assert.deepEqual((await server.request("GET", path)).body, ok.body);
    });

    test("actor ids with spaces, slashes and unicode work in paths", async () => {
      const p = await createProject(server);
      await newFlag("odd-ids", { status: "conditional" }, p);
      const segment = await newSegment("Odd ids", "", p);
      const odd = ["john doe", "team/alice", "jürgen 東京 😀", "a+b?c#d&e=f%g", "trailing/", "semi;colon,comma"];
      clock.advance(1000);
      const born = now();
      await patchFlag("odd-ids", { addActors: odd }, p);
      for (const id of odd) {
        const path = `/projects/${p}/actors/${enc(id)}`;
        const got = await server.request("GET", path);
        assert.equal(got.status, 200, `GET ${path}: ${got.text}`);
        assert.deepEqual(got.body, bare(id, born));
        assert.deepEqual(names(await list(`${path}/flags`)), ["odd-ids"], id);
        assert.equal(await check("odd-ids", id, p), true, id);
        const put = await server.request("PUT", path, { body: { name: `name of ${id}` } });
        assert.equal(put.status, 200, `PUT ${path}: ${put.text}`);
        assert.deepEqual(put.body, { actorId: id, name: `name of ${id}`, imageURL: null, createdAt: born });
      }
      await patchSegment(segment.id, { addActors: odd }, p);
      for (const id of odd) {
        assert.deepEqual(
          (await list(`/projects/${p}/actors/${enc(id)}/segments`)).data.map((s: any) => s.id),
          [segment.id],
          id,
        );
      }
      assert.deepEqual(actorIds(await getSegment(segment.id, p)), [...odd].reverse());
      assert.equal(await check("odd-ids", "team", p), false, "team/alice is not team");
      expectProblem(await server.request("GET", `/projects/${p}/actors/team`), 404, "actor_not_found");

      const fresh = "new/one two ü";
      const created = await server.request("PUT", `/projects/${p}/actors/${enc(fresh)}`, { body: {} });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body, bare(fresh, born));
      assert.deepEqual((await server.request("GET", `/projects/${p}/actors/${enc(fresh)}`)).body, bare(fresh, born));
    });

    test("actor ids: 256 characters are fine, 257 are 400; control characters are 400", async () => {
      const id256 = "a".repeat(256);
      const put = await server.request("PUT", `/projects/${project}/actors/${id256}`, { body: {} });
      assert.equal(put.status, 201, put.text);
      assert.equal(put.body.actorId, id256);
      assert.equal((await server.request("GET", `/projects/${project}/actors/${id256}`)).status, 200);
      const wide256 = "é".repeat(256);
      const wide = await server.request("PUT", `/projects/${project}/actors/${enc(wide256)}`, { body: {} });
      assert.equal(wide.status, 201, wide.text);
      assert.equal(wide.body.actorId, wide256);

      const id257 = "a".repeat(257);
      const bads = [id257, enc("é".repeat(257)), "a%01b", "%0A", "line%0Abreak", "del%7F", "unit%1Fsep", "%00"];
      for (const bad of bads) {
        const base = `/projects/${project}/actors/${bad}`;
        expectProblem(await server.request("GET", base), 400, "invalid_request");
        expectProblem(await server.request("PUT", base, { body: {} }), 400, "invalid_request");
        expectProblem(await server.request("GET", `${base}/flags`), 400, "invalid_request");
        expectProblem(await server.request("GET", `${base}/segments`), 400, "invalid_request");
      }
      await newFlag("id-lengths");
      for (const bad of ["x".repeat(257), "a\u0001b", "", "\u0000"]) {
        expectProblem(
          await server.request("PATCH", `/projects/${project}/flags/id-lengths`, { body: { addActors: [bad] } }),
          400,
          "invalid_request",
        );
      }
      const ok = await patchFlag("id-lengths", { addActors: ["x".repeat(256)] });
      assert.equal(ok.name, "id-lengths");
      assert.equal((await server.request("GET", `/projects/${project}/actors/${"x".repeat(256)}`)).status, 200);
    });

    test("profiles show up in latestActors of segments", async () => {
      clock.advance(1000);
      const born = now();
      const segment = await newSegment("Faces");
      await patchSegment(segment.id, { addActors: ["face-a", "face-b"] });
      const put = await server.request("PUT", `/projects/${project}/actors/face-a`, {
        body: { name: "Pat", imageURL: "https://i.test/pat.png" },
      });
      assert.equal(put.status, 200);
      const expected = [
        bare("face-b", born),
        { actorId: "face-a", name: "Pat", imageURL: "https://i.test/pat.png", createdAt: born },
      ];
      assert.deepEqual((await getSegment(segment.id)).latestActors, expected);
      const inList = (await list(`/projects/${project}/segments?limit=100`)).data.find((s: any) => s.id === segment.id);
      assert.deepEqual(inList.latestActors, expected);
      assert.deepEqual((await list(`/projects/${project}/actors/face-a/segments`)).data[0].latestActors, expected);
      await server.request("PUT", `/projects/${project}/actors/face-a`, { body: { name: "Pat 2" } });
      assert.deepEqual((await getSegment(segment.id)).latestActors, [
        bare("face-b", born),
        { actorId: "face-a", name: "Pat 2", imageURL: null, createdAt: born },
      ]);
    });
  });
}
