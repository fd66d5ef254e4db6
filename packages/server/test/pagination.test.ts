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
} from "@flagstaff/test-harness";

interface Page {
  data: any[];
  pagination: { before: string | null; after: string | null };
}

/** Byte order of the UTF-8 encodings: the order the spec asks for (not JavaScript's UTF-16 order). */
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
const sortedBytewise = (items: readonly string[]) => [...items].sort(bytewise);

const withQuery = (path: string, params: Record<string, string>) => {
  const query = new URLSearchParams(params).toString();
  if (query === "") return path;
  return `${path}${path.includes("?") ? "&" : "?"}${query}`;
};

async function getPage(server: TestServer, path: string, params: Record<string, string> = {}): Promise<Page> {
  const res = await server.request("GET", withQuery(path, params));
  assert.equal(res.status, 200, `GET ${withQuery(path, params)}: ${res.status} ${res.text}`);
  assert.deepEqual(Object.keys(res.body).sort(), ["data", "pagination"]);
  assert.ok(Array.isArray(res.body.data));
  assert.deepEqual(Object.keys(res.body.pagination).sort(), ["after", "before"]);
  for (const cursor of [res.body.pagination.before, res.body.pagination.after]) {
    assert.ok(cursor === null || (typeof cursor === "string" && cursor.length > 0), `cursor ${cursor}`);
  }
  return res.body as Page;
}

/**
 * Walks a list forward with `limit` following `after` until it is null, then backward from the last
 * page following `before` until it is null, and checks both walks visit exactly `expected`, in order.
 */
async function assertWalks(
  server: TestServer,
  path: string,
  expected: readonly string[],
  keyOf: (item: any) => string,
  limit = 3,
): Promise<Page[]> {
  const pageCount = Math.max(1, Math.ceil(expected.length / limit));
  const forward: Page[] = [await getPage(server, path, { limit: String(limit) })];
  assert.equal(forward[0]!.pagination.before, null, "the first page has before: null");
  for (;;) {
    const page = forward[forward.length - 1]!;
    if (page.pagination.after === null) break;
    assert.equal(page.data.length, limit, "every page but the last is full");
    assert.ok(forward.length < pageCount + 2, "the forward walk ends");
    const next = await getPage(server, path, { limit: String(limit), after: page.pagination.after });
    assert.notEqual(next.pagination.before, null, "a page after the first has a before cursor");
    forward.push(next);
  }
  assert.deepEqual(
    forward.flatMap((p) => p.data.map(keyOf)),
    [...expected],
    "forward walk visits every item once, in order",
  );
  assert.equal(forward.length, pageCount, "no trailing empty page");
  assert.equal(forward[forward.length - 1]!.pagination.after, null, "the last page has after: null");

  const backward: Page[] = [forward[forward.length - 1]!];
  for (;;) {
    const page = backward[backward.length - 1]!;
    if (page.pagination.before === null) break;
    assert.ok(backward.length < pageCount + 2, "the backward walk ends");
    const previous = await getPage(server, path, { limit: String(limit), before: page.pagination.before });
    assert.notEqual(previous.pagination.after, null, "a page before the last has an after cursor");
    backward.push(previous);
  }
  backward.reverse();
  assert.equal(backward[0]!.pagination.before, null, "walking back ends on the first page, before: null");
  assert.deepEqual(
    backward.map((p) => p.data),
    forward.map((p) => p.data),
    "the backward walk visits the same pages with the same items",
  );
  return forward;
}

const byName = (item: any) => item.name as string;
const byId = (item: any) => item.id as string;

for (const dialect of DIALECTS) {
  describe(`pagination [${dialect}]`, () => {
    let server: TestServer;
    /** A server of its own for the projects list, so that it holds exactly the projects that test makes. */
    let projectsServer: TestServer;
    const clock = new ManualClock();

    before(async () => {
      server = await startServer({ dialect, clock });
      projectsServer = await startServer({ dialect, clock: new ManualClock() });
    });
    after(async () => {
      await server?.close();
      await projectsServer?.close();
    });

    async function createFlag(project: string, name: string, description = "", patch?: object) {
      const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body: { description } });
      assert.equal(res.status, 201, `create flag ${name}: ${res.text}`);
      if (patch !== undefined) {
        const patched = await server.request("PATCH", `/projects/${project}/flags/${name}`, { body: patch });
        assert.equal(patched.status, 200, `patch flag ${name}: ${patched.text}`);
      }
    }

    async function createSegment(project: string, name: string, addActors?: string[]): Promise<string> {
      const res = await server.request("POST", `/projects/${project}/segments`, { body: { name, description: "" } });
      assert.equal(res.status, 201, `create segment ${name}: ${res.text}`);
      if (addActors !== undefined) {
        const patched = await server.request("PATCH", `/projects/${project}/segments/${res.body.id}`, {
          body: { addActors },
        });
        assert.equal(patched.status, 200, patched.text);
      }
      return res.body.id as string;
    }

    test("flags of a project: forward and backward walks, bytewise name order", async () => {
      const project = await createProject(server);
      const names = [
        "alpha",
        "Beta",
        "beta",
        "ALPHA",
        "Alpha",
        "a-b",
        "a.b",
        "a:b",
        "a_b",
        "0start",
        "Zeta",
        "zeta",
        "a",
      ];
      for (const name of names) await createFlag(project, name);
      const expected = [
        "0start",
        "ALPHA",
        "Alpha",
        "Beta",
        "Zeta",
        "a",
        "a-b",
        "a.b",
        "a:b",
        "a_b",
        "alpha",
        "beta",
        "zeta",
      ];
      assert.deepEqual(sortedBytewise(names), expected);
      const pages = await assertWalks(server, `/projects/${project}/flags`, expected, byName);
      assert.equal(pages.length, 5);
      const flag = pages[0]!.data[0];
      assert.equal(flag.projectId, project);
      assert.match(flag.id, /^flg_/);
      assert.equal(flag.status, "disabled");
    });

    test("flags of a project: a last page that is exactly full has after: null", async () => {
      const project = await createProject(server);
      const names = ["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"];
      for (const name of names) await createFlag(project, name);
      const pages = await assertWalks(server, `/projects/${project}/flags`, names, byName);
      assert.deepEqual(
        pages.map((p) => p.data.length),
        [3, 3, 3],
      );
    });

    test("segments of a project: forward and backward walks, bytewise name order", async () => {
      const project = await createProject(server);
      const names = [
        "beta testers",
        "Beta testers",
        "alpha",
        "Alpha",
        "émile",
        "Zulu",
        "zulu",
        "😀 smile",
        "Ａ fullwidth",
        "10",
        "9",
        "a b",
        "a-b",
      ];
      for (const name of names) await createSegment(project, name);
      const expected = [
        "10",
        "9",
        "Alpha",
        "Beta testers",
        "Zulu",
        "a b",
        "a-b",
        "alpha",
        "beta testers",
        "zulu",
        "émile",
        "Ａ fullwidth",
        "😀 smile",
      ];
      assert.deepEqual(sortedBytewise(names), expected);
      const pages = await assertWalks(server, `/projects/${project}/segments`, expected, byName);
      const segment = pages[0]!.data[0];
      assert.match(segment.id, /^seg_/);
      assert.deepEqual(segment.latestActors, []);
    });

    test("projects (admin): forward and backward walks, ordered by id", async () => {
      const ids = ["b-proj", "B-proj", "a-proj", "A_proj", "9nine", "0zero", "Zed", "zed", "a.dot", "a-dash", "_under"];
      for (const id of ids) await createProject(projectsServer, id);
      const expected = [
        "0zero",
        "9nine",
        "A_proj",
        "B-proj",
        "Zed",
        "_under",
        "a-dash",
        "a-proj",
        "a.dot",
        "b-proj",
        "zed",
      ];
      assert.deepEqual(sortedBytewise(ids), expected);
      const pages = await assertWalks(projectsServer, "/projects", expected, byId);
      assert.deepEqual(Object.keys(pages[0]!.data[0]).sort(), ["createdAt", "id", "name"]);
    });

    test("keys of a project (admin): forward and backward walks, ordered by creation, without secrets", async () => {
      const project = await createProject(server);
      const roles = ["write", "read", "check"] as const;
      const created: string[] = [];
      for (let i = 0; i < 10; i++) {
        clock.advance(1);
        created.push((await createKey(server, project, roles[i % 3]!)).id);
      }
      const pages = await assertWalks(server, `/projects/${project}/keys`, created, byId);
      for (const key of pages.flatMap((p) => p.data)) {
        assert.deepEqual(Object.keys(key).sort(), ["createdAt", "environment", "id", "name", "projectId", "role"]);
        assert.equal(key.projectId, project);
      }
      assert.deepEqual(
        pages.flatMap((p) => p.data.map((k: any) => k.role)),
        created.map((_, i) => roles[i % 3]),
      );
    });

    test("keys created within the same millisecond still list in creation order", async () => {
      const project = await createProject(server);
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push((await createKey(server, project, "read")).id);
      await assertWalks(server, `/projects/${project}/keys`, created, byId);
    });

    test("flags for an actor: only flags enabled for it, walked both ways", async () => {
      const project = await createProject(server);
      const segment = await createSegment(project, "walkers", ["walker", "someone"]);
      const conditional = { status: "conditional" };
      // Enabled for every actor.
      for (const name of ["Beta", "e1-enabled", "m-enabled", "zz-enabled"]) {
        await createFlag(project, name, "", { status: "enabled" });
      }
      // Conditional, the actor attached.
      for (const name of ["Cond-actor", "c-actor", "x-actor"]) {
        await createFlag(project, name, "", { ...conditional, addActors: ["walker"] });
      }
      // Conditional, a segment holding the actor attached.
      for (const name of ["Seg-flag", "s-seg", "t-seg"]) {
        await createFlag(project, name, "", { ...conditional, addSegments: [segment] });
      }
      // Conditional, every actor in the actor rollout.
      await createFlag(project, "p100-rollout", "", { ...conditional, percentageActors: 100 });
      // Not enabled for the actor.
      await createFlag(project, "A-disabled");
      await createFlag(project, "disabled-attached", "", { addActors: ["walker"], addSegments: [segment] });
      await createFlag(project, "cond-other", "", { ...conditional, addActors: ["other"] });
      await createFlag(project, "cond-none", "", conditional);
      await createFlag(project, "cond-calls-100", "", { ...conditional, percentageCalls: 100 });
      const expected = [
        "Beta",
        "Cond-actor",
        "Seg-flag",
        "c-actor",
        "e1-enabled",
        "m-enabled",
        "p100-rollout",
        "s-seg",
        "t-seg",
        "x-actor",
        "zz-enabled",
      ];
      await assertWalks(server, `/projects/${project}/actors/walker/flags`, expected, byName);
    });

    test("flags for a segment: enabled, or conditional with the segment attached, walked both ways", async () => {
      const project = await createProject(server);
      const segment = await createSegment(project, "the segment", ["m1"]);
      const other = await createSegment(project, "other segment", ["m1"]);
      const conditional = { status: "conditional" };
      for (const name of ["Enabled", "enabled-2", "zz-enabled"])
        await createFlag(project, name, "", { status: "enabled" });
      for (const name of ["C-seg", "c-seg", "k-seg", "seg:4", "y-seg", "Z-seg"]) {
        await createFlag(project, name, "", { ...conditional, addSegments: [segment, other] });
      }
      await createFlag(project, "disabled-attached", "", { addSegments: [segment] });
      await createFlag(project, "cond-other-segment", "", { ...conditional, addSegments: [other] });
      await createFlag(project, "cond-member-attached", "", { ...conditional, addActors: ["m1"] });
      await createFlag(project, "cond-rollout-100", "", { ...conditional, percentageActors: 100 });
      const expected = ["C-seg", "Enabled", "Z-seg", "c-seg", "enabled-2", "k-seg", "seg:4", "y-seg", "zz-enabled"];
      const pages = await assertWalks(server, `/projects/${project}/segments/${segment}/flags`, expected, byName);
      assert.deepEqual(
        pages.map((p) => p.data.length),
        [3, 3, 3],
      );
    });

    test("segments for a flag: the attached segments, walked both ways", async () => {
      const project = await createProject(server);
      const attachedNames = ["Gamma", "alpha", "Alpha", "delta", "émile", "Zulu", "b"];
      const ids: string[] = [];
      for (const name of attachedNames) ids.push(await createSegment(project, name));
      await createSegment(project, "not attached");
      await createSegment(project, "A not attached");
      const elsewhere = await createSegment(project, "attached elsewhere");
      await createFlag(project, "target", "", { addSegments: ids });
      await createFlag(project, "another", "", { addSegments: [elsewhere] });
      await assertWalks(server, `/projects/${project}/flags/target/segments`, sortedBytewise(attachedNames), byName);
      assert.deepEqual(sortedBytewise(attachedNames), ["Alpha", "Gamma", "Zulu", "alpha", "b", "delta", "émile"]);
    });

    test("segments for an actor: the segments it was added to, walked both ways", async () => {
      const project = await createProject(server);
      const names = ["s01", "S02", "s03", "S04", "s05", "s06", "Seg 7", "seg 8", "ß9", "10", "ELEVEN", "eleven"];
      for (const name of names) await createSegment(project, name, ["member", "x"]);
      await createSegment(project, "0-other actor only", ["x"]);
      await createSegment(project, "empty");
      const removed = await createSegment(project, "member removed", ["member"]);
      const res = await server.request("PATCH", `/projects/${project}/segments/${removed}`, {
        body: { removeActors: ["member"] },
      });
      assert.equal(res.status, 200);
      const pages = await assertWalks(
        server,
        `/projects/${project}/actors/member/segments`,
        sortedBytewise(names),
        byName,
      );
      assert.deepEqual(
        pages.map((p) => p.data.length),
        [3, 3, 3, 3],
      );
    });

    test("an empty project lists nothing: data [] and both cursors null", async () => {
      const project = await createProject(server);
      const empty = { data: [], pagination: { before: null, after: null } };
      for (const path of [
        `/projects/${project}/flags`,
        `/projects/${project}/segments`,
        `/projects/${project}/keys`,
        `/projects/${project}/actors/nobody/flags`,
        `/projects/${project}/actors/nobody/segments`,
        `/projects/${project}/flags?name=x`,
        `/projects/${project}/flags?limit=1`,
      ]) {
        const res = await server.request("GET", path);
        assert.equal(res.status, 200, path);
        assert.deepEqual(res.body, empty, path);
      }
      await createFlag(project, "lonely");
      await createSegment(project, "lonely");
      assert.deepEqual((await server.request("GET", `/projects/${project}/flags/lonely/segments`)).body, empty);
      const segments = await getPage(server, `/projects/${project}/segments`);
      const segmentId = segments.data[0].id;
      assert.deepEqual((await server.request("GET", `/projects/${project}/segments/${segmentId}/flags`)).body, empty);
    });

    test("limit: default 20, at most 100, at least 1", async () => {
      const project = await createProject(server);
      const names = Array.from({ length: 105 }, (_, i) => `flag-${String(i).padStart(3, "0")}`);
      for (const name of names) await createFlag(project, name);

      const first = await getPage(server, `/projects/${project}/flags`);
      assert.deepEqual(first.data.map(byName), names.slice(0, 20));
      assert.equal(first.pagination.before, null);
      assert.notEqual(first.pagination.after, null);
      const second = await getPage(server, `/projects/${project}/flags`, { after: first.pagination.after! });
      assert.deepEqual(second.data.map(byName), names.slice(20, 40), "the default holds on later pages too");

      const hundred = await getPage(server, `/projects/${project}/flags`, { limit: "100" });
      assert.deepEqual(hundred.data.map(byName), names.slice(0, 100));
      assert.notEqual(hundred.pagination.after, null);
      const rest = await getPage(server, `/projects/${project}/flags`, {
        limit: "100",
        after: hundred.pagination.after!,
      });
      assert.deepEqual(rest.data.map(byName), names.slice(100));
      assert.equal(rest.pagination.after, null);
      assert.notEqual(rest.pagination.before, null);

      const one = await getPage(server, `/projects/${project}/flags`, { limit: "1" });
      assert.deepEqual(one.data.map(byName), ["flag-000"]);
      const back = await getPage(server, `/projects/${project}/flags`, {
        limit: "100",
        before: rest.pagination.before!,
      });
      assert.deepEqual(back.data.map(byName), names.slice(0, 100));
      assert.equal(back.pagination.before, null);
    });

    test("limit 0, 101, -1, x, 1.5 and an empty limit are 400 invalid_request on every list", async () => {
      const project = await createProject(server);
      await createFlag(project, "f");
      const segment = await createSegment(project, "s", ["u"]);
      const paths = [
        `/projects/${project}/flags`,
        `/projects/${project}/segments`,
        "/projects",
        `/projects/${project}/keys`,
        `/projects/${project}/actors/u/flags`,
        `/projects/${project}/segments/${segment}/flags`,
        `/projects/${project}/flags/f/segments`,
        `/projects/${project}/actors/u/segments`,
      ];
      for (const path of paths) {
        assert.equal((await server.request("GET", withQuery(path, { limit: "100" }))).status, 200, path);
        for (const limit of ["0", "101", "-1", "x", "1.5", ""]) {
          const res = await server.request("GET", withQuery(path, { limit }));
          expectProblem(res, 400, "invalid_request");
        }
      }
    });

    test("before and after together are 400; cursors that do not decode are 400, on every list", async () => {
      const project = await createProject(server);
      for (const name of ["f1", "f2", "f3"]) await createFlag(project, name, "", { status: "enabled" });
      await createKey(server, project, "read");
      await createKey(server, project, "read");
      const segment = await createSegment(project, "s1", ["u"]);
      const s2 = await createSegment(project, "s2", ["u"]);
      const s3 = await createSegment(project, "s3", ["u"]);
      const patch = await server.request("PATCH", `/projects/${project}/flags/f1`, {
        body: { addSegments: [segment, s2, s3] },
      });
      assert.equal(patch.status, 200);
      const paths = [
        `/projects/${project}/flags`,
        `/projects/${project}/segments`,
        "/projects",
        `/projects/${project}/keys`,
        `/projects/${project}/actors/u/flags`,
        `/projects/${project}/segments/${segment}/flags`,
        `/projects/${project}/flags/f1/segments`,
        `/projects/${project}/actors/u/segments`,
      ];
      const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url");
      const undecodable = ["!!!", "abc", "", b64("hello world"), b64('{"a":1}'), b64("42"), b64("null"), "%%%"];
      for (const path of paths) {
        const page = await getPage(server, path, { limit: "1" });
        assert.notEqual(page.pagination.after, null, path);
        const next = await getPage(server, path, { limit: "1", after: page.pagination.after! });
        assert.notEqual(next.pagination.before, null, path);
        expectProblem(
          await server.request(
            "GET",
            withQuery(path, { limit: "1", before: next.pagination.before!, after: page.pagination.after! }),
          ),
          400,
          "invalid_request",
        );
        for (const cursor of undecodable) {
          expectProblem(await server.request("GET", withQuery(path, { after: cursor })), 400, "invalid_request");
          expectProblem(await server.request("GET", withQuery(path, { before: cursor })), 400, "invalid_request");
        }
      }
    });

    test("cursors are opaque strings", async () => {
      const project = await createProject(server);
      for (const name of ["a1", "a2", "a3"]) await createFlag(project, name);
      const first = await getPage(server, `/projects/${project}/flags`, { limit: "1" });
      assert.equal(typeof first.pagination.after, "string");
      const second = await getPage(server, `/projects/${project}/flags`, {
        limit: "1",
        after: first.pagination.after!,
      });
      assert.equal(typeof second.pagination.before, "string");
      assert.equal(typeof second.pagination.after, "string");
      assert.deepEqual(second.data.map(byName), ["a2"]);
    });

    test("walking forward while flags are created and deleted visits every surviving flag exactly once", async () => {
      const project = await createProject(server);
      const initial = Array.from({ length: 20 }, (_, i) => `f${String(i).padStart(2, "0")}`);
      for (const name of initial) await createFlag(project, name);
      const deleted = new Set<string>();
      const seen: string[] = [];
      const del = async (name: string) => {
        const res = await server.request("DELETE", `/projects/${project}/flags/${name}`);
        assert.equal(res.status, 204, `delete ${name}`);
        deleted.add(name);
      };
      // What happens between pages, by page number (1-based: after that page was read).
      const between: Record<number, () => Promise<void>> = {
        1: async () => {
          await createFlag(project, "a-new-before-everything");
          await createFlag(project, "f00a"); // sorts just after a visited one
          await del("f05"); // not yet visited
          await del("f00"); // already visited
        },
        2: async () => {
          await del("f03"); // the cursor's own item
          await createFlag(project, "f10a"); // ahead of the walk
          await del("f11");
          await del("f12");
        },
        3: async () => {
          await del("f01");
          await del("f19"); // the very last one
          await createFlag(project, "zz-new-after-everything");
          await createFlag(project, "f04a"); // behind the walk
        },
        5: async () => {
          await del("f07");
          await del("f09");
          await del("f14");
        },
      };
      let page = await getPage(server, `/projects/${project}/flags`, { limit: "2" });
      let n = 1;
      for (;;) {
        seen.push(...page.data.map(byName));
        if (page.pagination.after === null) break;
        await between[n]?.();
        assert.ok(n < 50, "the walk ends");
        page = await getPage(server, `/projects/${project}/flags`, { limit: "2", after: page.pagination.after });
        n += 1;
      }
      assert.equal(new Set(seen).size, seen.length, `no flag twice: ${seen.join(" ")}`);
      assert.deepEqual(seen, sortedBytewise(seen), "strictly ascending");
      const seenSet = new Set(seen);
      for (const name of initial) {
        if (!deleted.has(name)) assert.ok(seenSet.has(name), `survivor ${name} seen`);
      }
      for (const name of ["f00", "f01", "f03", "f07", "f09"]) {
        assert.ok(deleted.has(name) && seenSet.has(name), `${name} was seen before it was deleted`);
      }
      for (const name of ["f05", "f11", "f12", "f14", "f19"]) {
        assert.ok(deleted.has(name) && !seenSet.has(name), `${name} was deleted before the walk reached it`);
      }
      for (const name of ["a-new-before-everything", "f00a", "f04a"]) {
        assert.ok(!seenSet.has(name), `${name} was created behind the walk`);
      }
    });

    test("search by name: case-insensitive substring of the name only", async () => {
      const project = await createProject(server);
      await createFlag(project, "Checkout-New", "the new one");
      await createFlag(project, "new-checkout", "");
      await createFlag(project, "old_CHECKOUT", "legacy path");
      await createFlag(project, "payments", "checkout payments");
      await createFlag(project, "search", "");
      const names = async (query: string) =>
        (await getPage(server, `/projects/${project}/flags?${query}`)).data.map(byName);
      assert.deepEqual(await names("name=checkout"), ["Checkout-New", "new-checkout", "old_CHECKOUT"]);
      assert.deepEqual(await names("name=CHECKOUT"), ["Checkout-New", "new-checkout", "old_CHECKOUT"]);
      assert.deepEqual(await names("name=kOUt-n"), ["Checkout-New"]);
      assert.deepEqual(await names("name=payments"), ["payments"]);
      assert.deepEqual(await names("name=legacy"), [], "name does not look at the description");
      assert.deepEqual(await names("name=nothing-like-it"), []);
      assert.deepEqual(await names("name=new"), ["Checkout-New", "new-checkout"]);
    });

    test("search by q: case-insensitive substring of name or description; with name both must match", async () => {
      const project = await createProject(server);
      await createFlag(project, "Checkout-New", "the new one");
      await createFlag(project, "new-checkout", "");
      await createFlag(project, "old_CHECKOUT", "Legacy path");
      await createFlag(project, "payments", "CheckOut payments");
      await createFlag(project, "legacy-search", "");
      const names = async (query: string) =>
        (await getPage(server, `/projects/${project}/flags?${query}`)).data.map(byName);
      assert.deepEqual(await names("q=checkout"), ["Checkout-New", "new-checkout", "old_CHECKOUT", "payments"]);
      assert.deepEqual(await names("q=LEGACY"), ["legacy-search", "old_CHECKOUT"]);
      assert.deepEqual(await names("q=NEW%20ONE"), ["Checkout-New"]);
      assert.deepEqual(await names("name=checkout&q=legacy"), ["old_CHECKOUT"]);
      assert.deepEqual(await names("name=checkout&q=payments"), [], "q alone would match payments, name alone not");
      assert.deepEqual(await names("name=legacy&q=search"), ["legacy-search"]);
      assert.deepEqual(await names("name=search&q=checkout"), []);
    });

    test("search: % and _ and \\ match themselves, not as wildcards", async () => {
      const project = await createProject(server);
      await createFlag(project, "a_b", "");
      await createFlag(project, "axb", "");
      await createFlag(project, "aab", "");
      await createFlag(project, "pct", "100% off");
      await createFlag(project, "plain", "1000 off");
      await createFlag(project, "under", "snake_case");
      await createFlag(project, "under2", "snakeXcase");
      await createFlag(project, "slash", "a\\b");
      await createFlag(project, "noslash", "ab");
      const names = async (params: Record<string, string>) =>
        (await getPage(server, `/projects/${project}/flags`, params)).data.map(byName);
      assert.deepEqual(await names({ name: "a_b" }), ["a_b"]);
      assert.deepEqual(await names({ name: "A_B" }), ["a_b"]);
      assert.deepEqual(await names({ name: "_" }), ["a_b"]);
      assert.deepEqual(await names({ name: "%" }), []);
      assert.deepEqual(await names({ q: "100%" }), ["pct"]);
      assert.deepEqual(await names({ q: "%" }), ["pct"]);
      assert.deepEqual(await names({ q: "0% o" }), ["pct"]);
      assert.deepEqual(await names({ q: "e_c" }), ["under"]);
      assert.deepEqual(await names({ q: "a\\b" }), ["slash"]);
      assert.deepEqual(await names({ q: "\\" }), ["slash"]);
    });

    test("search is case-insensitive beyond ASCII in descriptions", async () => {
      const project = await createProject(server);
      await createFlag(project, "umlaut", "Über alles");
      await createFlag(project, "plain", "uber alles");
      const names = async (params: Record<string, string>) =>
        (await getPage(server, `/projects/${project}/flags`, params)).data.map(byName);
      assert.deepEqual(await names({ q: "über" }), ["umlaut"]);
      assert.deepEqual(await names({ q: "ÜBER" }), ["umlaut"]);
    });

    test("pagination works together with search, both ways", async () => {
      const project = await createProject(server);
      const matching = ["Match-1", "match-2", "xMATCHx", "a-match", "zz-match", "m:match", "Match_z", "b.match"];
      for (const name of matching) await createFlag(project, name);
      for (const name of ["a", "Mat", "m-atch", "zzz", "b", "n", "y"]) await createFlag(project, name);
      await createFlag(project, "described", "this one does Match by description");
      await assertWalks(server, `/projects/${project}/flags?name=match`, sortedBytewise(matching), byName);
      await assertWalks(
        server,
        `/projects/${project}/flags?q=MATCH`,
        sortedBytewise([...matching, "described"]),
        byName,
      );
      await assertWalks(server, `/projects/${project}/flags?name=match&q=z`, ["Match_z", "zz-match"], byName, 1);
    });

    test("flags sorted by createdAt, updatedAt, latestCheckedAt and name, each way: walks visit every flag once, ties by name", async () => {
      const project = await createProject(server);
      const checkKey = (await createKey(server, project, "check")).key;
      // Created a minute apart, two of them in the same millisecond (a tie broken by name).
      const created = ["m-first", "b-second", "z-third", "a-tied", "c-tied", "k-last"];
      for (const name of created) {
        if (name !== "c-tied") clock.advance(60_000);
        await createFlag(project, name);
      }
      // Updated later, in another order; k-last and m-first are never updated after creation.
      for (const name of ["z-third", "a-tied", "b-second", "c-tied"]) {
        clock.advance(60_000);
        const res = await server.request("PATCH", `/projects/${project}/flags/${name}`, {
          body: { percentageCalls: 5 },
        });
        assert.equal(res.status, 200, res.text);
      }
      // Checked in yet another order; a-tied and c-tied never.
      for (const name of ["k-last", "b-second", "m-first", "z-third"]) {
        clock.advance(60_000);
        const res = await server.request("GET", `/projects/${project}/flags/${name}/check`, { key: checkKey });
        assert.equal(res.status, 200, res.text);
      }
      const path = `/projects/${project}/flags`;
      const byCreated = created;
      const byUpdated = ["m-first", "k-last", "z-third", "a-tied", "b-second", "c-tied"];
      const byChecked = ["a-tied", "c-tied", "k-last", "b-second", "m-first", "z-third"];
      const byNameOrder = sortedBytewise(created);
      const reversed = (names: string[], ties: string[][] = []) => {
        // Descending keeps ties in name order (the tie-breaker is always ascending).
        const out = [...names].reverse();
        for (const tie of ties) {
          const at = out.indexOf(tie[tie.length - 1]!);
          out.splice(at, tie.length, ...tie);
        }
        return out;
      };
      await assertWalks(server, `${path}?sort=createdAt`, byCreated, byName, 2);
      await assertWalks(server, `${path}?sort=-createdAt`, reversed(byCreated, [["a-tied", "c-tied"]]), byName, 2);
      await assertWalks(server, `${path}?sort=updatedAt`, byUpdated, byName, 4);
      await assertWalks(server, `${path}?sort=-updatedAt`, reversed(byUpdated), byName, 4);
      // latestCheckedAt is written within a second of the check (CHECK_FLUSH_INTERVAL_MS): wait for it.
      await waitFor("the check times are stored", async () => {
        const page = await getPage(server, path, { sort: "latestCheckedAt" });
        return JSON.stringify(page.data.map(byName)) === JSON.stringify(byChecked);
      });
      await assertWalks(server, `${path}?sort=latestCheckedAt`, byChecked, byName, 3);
      await assertWalks(
        server,
        `${path}?sort=-latestCheckedAt`,
        reversed(byChecked, [["a-tied", "c-tied"]]),
        byName,
        3,
      );
      await assertWalks(server, `${path}?sort=name`, byNameOrder, byName, 5);
      await assertWalks(server, `${path}?sort=-name`, [...byNameOrder].reverse(), byName, 5);
      // sort=name is the default, with the very same cursors.
      const plain = await getPage(server, path, { limit: "2" });
      assert.deepEqual(await getPage(server, path, { limit: "2", sort: "name" }), plain);
    });

    test("flags filtered by status, with search, sorted; total=true counts every match on every page", async () => {
      const project = await createProject(server);
      const conditional = ["c1", "c2", "c3", "checkout"];
      for (const name of conditional) {
        clock.advance(1000);
        await createFlag(project, name, "", { status: "conditional" });
      }
      for (const name of ["e1", "e2"]) await createFlag(project, name, "", { status: "enabled" });
      for (const name of ["d1", "d2", "d3"]) await createFlag(project, name);
      const path = `/projects/${project}/flags`;
      await assertWalks(server, `${path}?status=conditional`, conditional, byName, 2);
      await assertWalks(server, `${path}?status=enabled&sort=-name`, ["e2", "e1"], byName, 1);
      await assertWalks(
        server,
        `${path}?status=conditional&name=c&sort=-createdAt`,
        [...conditional].reverse(),
        byName,
        3,
      );
      await assertWalks(server, `${path}?status=disabled&q=checkout`, [], byName);

      const withTotal = async (params: Record<string, string>) => {
        const res = await server.request("GET", withQuery(path, { ...params, total: "true" }));
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(Object.keys(res.body).sort(), ["data", "pagination", "total"]);
        return res.body as Page & { total: number };
      };
      const first = await withTotal({ limit: "2" });
      assert.equal(first.total, 9);
      const second = await withTotal({ limit: "2", after: first.pagination.after! });
      assert.equal(second.total, 9, "the total is the same on every page");
      assert.equal((await withTotal({ status: "conditional", sort: "updatedAt" })).total, 4);
      assert.equal((await withTotal({ status: "disabled", q: "d" })).total, 3);
      assert.equal((await withTotal({ name: "nothing" })).total, 0);
      // Without total=true (or with total=false) the answer is the plain page, as it always was.
      await getPage(server, path, { total: "false" });
      await getPage(server, path, { status: "enabled" });
    });

    test("flags list: an unknown sort or status, a bad total, and a cursor of another order are 400", async () => {
      const project = await createProject(server);
      for (const name of ["f1", "f2", "f3"]) await createFlag(project, name);
      const path = `/projects/${project}/flags`;
      for (const [query, at] of [
        ["sort=size", "/query/sort"],
        ["sort=-", "/query/sort"],
        ["sort=Name", "/query/sort"],
        ["status=on", "/query/status"],
        ["total=maybe", "/query/total"],
      ] as const) {
        const res = await server.request("GET", `${path}?${query}`);
        expectProblem(res, 400, "invalid_request");
        assert.ok(
          res.body.errors.some((e: { path: string }) => e.path === at),
          `${query}: ${JSON.stringify(res.body.errors)}`,
        );
      }
      const byNamePage = await getPage(server, path, { limit: "1" });
      const byCreatedPage = await getPage(server, path, { limit: "1", sort: "createdAt" });
      const byUpdatedPage = await getPage(server, path, { limit: "1", sort: "updatedAt" });
      const refused: Record<string, string>[] = [
        { sort: "createdAt", after: byNamePage.pagination.after! },
        { sort: "name", after: byCreatedPage.pagination.after! },
        { sort: "createdAt", after: byUpdatedPage.pagination.after! },
        { sort: "-createdAt", before: byCreatedPage.pagination.after! },
      ];
      for (const params of refused) {
        const res = await server.request("GET", withQuery(path, params));
        expectProblem(res, 400, "invalid_request");
        const parameter = "after" in params ? "after" : "before";
        assert.deepEqual(
          res.body.errors.map((e: { path: string }) => e.path),
          [`/query/${parameter}`],
          JSON.stringify(params),
        );
      }
    });
  });
}
