import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  type ApiResponse,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { rowCounts } from "./helpers/people.js";

// Projects and API keys (decisions.md §2, extension): creation, validation, listing, deletion of a
// project with everything in it; key creation, listing without secrets, revocation, hashed storage.

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** Every table of the schema, for scanning stored rows. */
const TABLES = [
  "projects",
  "feed_streams",
  "feed_changes",
  "api_keys",
  "flags",
  "segments",
  "actors",
  "flag_actors",
  "flag_segments",
  "segment_actors",
] as const;

function expectInvalid(res: ApiResponse, path?: string): void {
  expectProblem(res, 400, "invalid_request");
  if (path !== undefined) {
    const paths = ((res.body.errors ?? []) as Array<{ path: string }>).map((e) => e.path);
    assert.ok(paths.includes(path), `expected an error at ${path}, got ${JSON.stringify(res.body.errors)}`);
  }
}

/** Follows `after` from the first page and answers every item, in order. */
async function listAll(server: TestServer, path: string, limit: number): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const query: string = cursor === null ? `?limit=${limit}` : `?limit=${limit}&after=${encodeURIComponent(cursor)}`;
    const res = await server.request("GET", `${path}${query}`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.data.length <= limit);
    items.push(...res.body.data);
    cursor = res.body.pagination.after;
    if (cursor === null) return items;
  }
  throw new Error("pagination never ended");
}

/** Byte-wise ascending, as the service orders ids (ASCII only here, where UTF-16 order is byte order). */
const ascending = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

for (const dialect of DIALECTS) {
  describe(`projects [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock();
    before(async () => {
      server = await startServer({ dialect, clock });
    });
    after(() => server.close());

    test("POST /projects answers 201 {id, name, createdAt} with Location", async () => {
      const res = await server.request("POST", "/projects", { body: { id: "acme-web", name: "Acme web shop" } });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(res.body, { id: "acme-web", name: "Acme web shop", createdAt: "2026-11-22T10:00:00.000Z" });
      assert.equal(res.headers.get("location"), "/projects/acme-web");
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      const got = await server.request("GET", "/projects/acme-web");
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, res.body);
    });

    test("POST /projects with a taken id answers 409 project_exists and keeps the original", async () => {
      await createProject(server, "taken");
      clock.advance(1000);
      const res = await server.request("POST", "/projects", { body: { id: "taken", name: "Another name" } });
      expectProblem(res, 409, "project_exists");
      const got = await server.request("GET", "/projects/taken");
      assert.equal(got.body.name, "Project taken");
    });

    const validIds: Array<[string, string]> = [
      ["one character", "a"],
      ["64 characters", "x".repeat(64)],
      ["every allowed character", "AZaz09._-"],
      ["starting with a dot", ".hidden"],
      ["starting with a dash", "-dash"],
      ["only digits", "12345"],
    ];
    for (const [label, id] of validIds) {
      test(`project id ${label} (${JSON.stringify(id.length > 20 ? `${id.slice(0, 10)}…` : id)}) is accepted`, async () => {
        const res = await server.request("POST", "/projects", { body: { id, name: label } });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.id, id);
        const got = await server.request("GET", `/projects/${encodeURIComponent(id)}`);
        assert.equal(got.status, 200);
        assert.equal(got.body.id, id);
      });
    }

    const invalidIds: Array<[string, unknown]> = [
      ["empty", ""],
      ["65 characters", "y".repeat(65)],
      ["with a space", "has space"],
      ["with a leading space", " lead"],
      ["with a slash", "a/b"],
      ["with a backslash", "a\\b"],
      ["with unicode letters", "café"],
      ["with an emoji", "rocket🚀"],
      ["with a colon", "a:b"],
      ["with a plus", "a+b"],
      ["with a tab", "a\tb"],
      ["with a newline at the end", "abc\n"],
      ["a number", 42],
      ["null", null],
    ];
    for (const [label, id] of invalidIds) {
      test(`project id ${label} → 400 invalid_request, nothing created`, async () => {
        const res = await server.request("POST", "/projects", { body: { id, name: "Bad id" } });
        expectInvalid(res, "/id");
        if (typeof id === "string" && id !== "" && !id.includes("/")) {
          expectProblem(await server.request("GET", `/projects/${encodeURIComponent(id)}`), 404, "project_not_found");
        }
      });
    }

    test("missing id → 400", async () => {
      expectInvalid(await server.request("POST", "/projects", { body: { name: "No id" } }), "/id");
    });

    test("name is required → 400 and nothing created", async () => {
      expectInvalid(await server.request("POST", "/projects", { body: { id: "no-name" } }), "/name");
      expectInvalid(await server.request("POST", "/projects", { body: { id: "no-name", name: 7 } }), "/name");
      expectProblem(await server.request("GET", "/projects/no-name"), 404, "project_not_found");
    });

    test("an unknown body field → 400 naming it, nothing created", async () => {
      const res = await server.request("POST", "/projects", {
        body: { id: "extra-field", name: "Extra", description: "not a project field" },
      });
      expectInvalid(res, "/description");
      expectProblem(await server.request("GET", "/projects/extra-field"), 404, "project_not_found");
    });

    test("a body that is not JSON → 400, a JSON array → 400", async () => {
      expectInvalid(
        await server.request("POST", "/projects", {
          rawBody: '{"id": "broken", "name": ',
          headers: { "content-type": "application/json" },
        }),
      );
      expectInvalid(await server.request("POST", "/projects", { body: [{ id: "arr", name: "Array" }] }));
      expectProblem(await server.request("GET", "/projects/broken"), 404, "project_not_found");
    });

    test("GET /projects/{id} answers the project; an unknown id → 404 project_not_found", async () => {
      clock.advance(1000);
      const created = await server.request("POST", "/projects", { body: { id: "get-me", name: "Get me" } });
      const got = await server.request("GET", "/projects/get-me");
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, created.body);
      assert.deepEqual(Object.keys(got.body).sort(), ["createdAt", "id", "name"]);
      expectProblem(await server.request("GET", "/projects/never-made"), 404, "project_not_found");
    });

    test("DELETE of an unknown project → 404 project_not_found", async () => {
      expectProblem(await server.request("DELETE", "/projects/never-made"), 404, "project_not_found");
    });

    test("DELETE /projects/{id} → 204 and everything in it is gone", async () => {
      const id = await createProject(server, "doomed");
      const neighbour = await createProject(server, "neighbour");
      const writer = await createKey(server, id, "write");
      const reader = await createKey(server, id, "read");
      const checker = await createKey(server, id, "check");
      const neighbourKey = await createKey(server, neighbour, "read");
      const seg = await server.request("POST", `/projects/${id}/segments`, { body: { name: "beta", description: "" } });
      assert.equal(seg.status, 201);
      const segId = seg.body.id as string;
      assert.equal(
        (await server.request("PATCH", `/projects/${id}/segments/${segId}`, { body: { addActors: ["u1", "u2"] } }))
          .status,
        200,
      );
      assert.equal(
        (await server.request("POST", `/projects/${id}/flags/gone`, { body: { description: "x" } })).status,
        201,
      );
      const patched = await server.request("PATCH", `/projects/${id}/flags/gone`, {
        body: { status: "enabled", addActors: ["u3"], addSegments: [segId] },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await server.request("PUT", `/projects/${id}/actors/u4`, { body: { name: "U4" } })).status, 201);
      await server.request("POST", `/projects/${neighbour}/flags/gone`, { body: { description: "neighbour's" } });
      assert.deepEqual((await server.request("GET", `/projects/${id}/flags/gone/check`, { key: checker.key })).body, {
        enabled: true,
      });
      const flagId = patched.body.id as string;

      const res = await server.request("DELETE", `/projects/${id}`);
      assert.equal(res.status, 204);
      assert.equal(res.text, "");

      expectProblem(await server.request("GET", `/projects/${id}`), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${id}/flags`), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${id}/flags/gone`), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${id}/flags/gone/check`), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${id}/segments`), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${id}/keys`), 404, "project_not_found");
      expectProblem(await server.request("DELETE", `/projects/${id}`), 404, "project_not_found");
      const listed = await listAll(server, "/projects", 100);
      assert.ok(!listed.some((p) => p.id === id), "deleted project still listed");

      // Its keys are gone: unknown keys now, so 401, not 403.
      for (const key of [writer.key, reader.key, checker.key]) {
        const r = await server.request("GET", `/projects/${id}/flags/gone/check`, { key });
        assert.equal(r.status, 401, `key of a deleted project: ${r.status} ${r.text}`);
        expectProblem(r, 401, "unauthorized");
      }

      // Nothing of it is left in the database.
      const db = server.database.db;
      for (const table of ["flags", "segments", "api_keys", "actors", "flag_actors", "segment_actors"] as const) {
        const rows = await db.selectFrom(table).selectAll().where("project_id", "=", id).execute();
        assert.equal(rows.length, 0, `${table} still holds rows of the deleted project`);
      }
      assert.equal(
        (await db.selectFrom("flag_segments").selectAll().where("config_id", "=", `${flagId}@production`).execute())
          .length,
        0,
      );
      assert.equal(
        (await db.selectFrom("segment_actors").selectAll().where("segment_id", "=", segId).execute()).length,
        0,
      );

      // The neighbour is untouched.
      const n = await server.request("GET", `/projects/${neighbour}/flags/gone`, { key: neighbourKey.key });
      assert.equal(n.status, 200);
      assert.equal(n.body.description, "neighbour's");

      // Re-creating the id starts empty.
      assert.equal((await server.request("POST", "/projects", { body: { id, name: "Reborn" } })).status, 201);
      const flags = await server.request("GET", `/projects/${id}/flags`);
      assert.equal(flags.status, 200);
      assert.deepEqual(flags.body, { data: [], pagination: { before: null, after: null } });
      const segments = await server.request("GET", `/projects/${id}/segments`);
      assert.deepEqual(segments.body, { data: [], pagination: { before: null, after: null } });
      const keys = await server.request("GET", `/projects/${id}/keys`);
      assert.deepEqual(keys.body, { data: [], pagination: { before: null, after: null } });
      expectProblem(await server.request("GET", `/projects/${id}/flags/gone`), 404, "flag_not_found");
      expectProblem(await server.request("GET", `/projects/${id}/flags/gone/check`), 404, "flag_not_found");
      expectProblem(await server.request("GET", `/projects/${id}/segments/${segId}`), 404, "segment_not_found");
      for (const actor of ["u1", "u3", "u4"]) {
        expectProblem(await server.request("GET", `/projects/${id}/actors/${actor}`), 404, "actor_not_found");
      }
      const u1Segments = await server.request("GET", `/projects/${id}/actors/u1/segments`);
      if (u1Segments.status === 200) assert.deepEqual(u1Segments.body.data, []);
      else expectProblem(u1Segments, 404, "actor_not_found");
      // The old keys do not come back with the id.
      for (const key of [writer.key, reader.key, checker.key]) {
        expectProblem(await server.request("GET", `/projects/${id}/flags`, { key }), 401, "unauthorized");
      }
      // A flag of the same name starts clean.
      const again = await server.request("POST", `/projects/${id}/flags/gone`, { body: {} });
      assert.equal(again.status, 201);
      assert.equal(again.body.status, "disabled");
      assert.notEqual(again.body.id, flagId);
      const linked = await server.request("GET", `/projects/${id}/flags/gone/segments`);
      assert.deepEqual(linked.body.data, []);
    });
  });

  describe(`projects list [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    test("GET /projects with no projects → empty page", async () => {
      const res = await server.request("GET", "/projects");
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: [], pagination: { before: null, after: null } });
    });

    test("GET /projects answers a page of projects ordered by id", async () => {
      const ids = ["m-project", "B", "a", "Z9", "b.2", "b-1", "b_3", "0", "a.", "ab", "A"];
      const created = new Map<string, unknown>();
      for (const id of ids) {
        const res = await server.request("POST", "/projects", { body: { id, name: `Name of ${id}` } });
        assert.equal(res.status, 201);
        created.set(id, res.body);
      }
      const expected = [...ids].sort(ascending);

      const res = await server.request("GET", "/projects");
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ["data", "pagination"]);
      assert.deepEqual(
        res.body.data.map((p: { id: string }) => p.id),
        expected,
      );
      assert.deepEqual(
        res.body.data,
        expected.map((id) => created.get(id)),
      );
      assert.deepEqual(res.body.pagination, { before: null, after: null });

      // Paged, the same order, each project exactly once.
      const paged = await listAll(server, "/projects", 3);
      assert.deepEqual(
        paged.map((p) => p.id),
        expected,
      );
      const first = await server.request("GET", "/projects?limit=3");
      assert.deepEqual(
        first.body.data.map((p: { id: string }) => p.id),
        expected.slice(0, 3),
      );
      assert.equal(first.body.pagination.before, null);
      assert.equal(typeof first.body.pagination.after, "string");
    });

    test("GET /projects with a bad cursor → 400; with before and after → 400", async () => {
      expectInvalid(await server.request("GET", "/projects?after=not-a-cursor"));
      const first = await server.request("GET", "/projects?limit=1");
      const cursor = encodeURIComponent(first.body.pagination.after);
      expectInvalid(await server.request("GET", `/projects?after=${cursor}&before=${cursor}`));
    });
  });

  describe(`API keys [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock();
    before(async () => {
      server = await startServer({ dialect, clock });
    });
    after(() => server.close());

    test("POST /projects/{p}/keys answers 201 {id, name, role, projectId, environment, key, createdAt}", async () => {
      const project = await createProject(server);
      const res = await server.request("POST", `/projects/${project}/keys`, {
        body: { role: "read", name: "dashboard" },
      });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), [
        "createdAt",
        "environment",
        "id",
        "key",
        "name",
        "projectId",
        "role",
      ]);
      assert.equal(res.body.environment, "production", "bound to the project's default environment");
      assert.equal(res.body.name, "dashboard");
      assert.equal(res.body.role, "read");
      assert.equal(res.body.projectId, project);
      assert.equal(res.body.createdAt, new Date(clock.now()).toISOString());
      assert.equal(typeof res.body.id, "string");
      assert.ok(res.body.id.length > 0);
      const key = res.body.key as string;
      assert.match(key, /^fsk_\S+$/, "recognisable prefix, no whitespace");
      assert.ok(key.length >= 36, `key is long: ${key.length} characters`);
      assert.ok(!key.includes(res.body.id), "the secret is not derived from the id");
      // The secret works as a read key on this project.
      const ok = await server.request("GET", `/projects/${project}/flags`, { key });
      assert.equal(ok.status, 200);
    });

    test("every key is different", async () => {
      const project = await createProject(server);
      const secrets = new Set<string>();
      const ids = new Set<string>();
      for (let i = 0; i < 10; i++) {
        const k = await createKey(server, project, "check");
        secrets.add(k.key);
        ids.add(k.id);
      }
      assert.equal(secrets.size, 10);
      assert.equal(ids.size, 10);
    });

    for (const role of ["write", "read", "check"] as const) {
      test(`role ${role} is accepted and the key holds that role`, async () => {
        const project = await createProject(server);
        await server.request("POST", `/projects/${project}/flags/f`, { body: {} });
        const res = await server.request("POST", `/projects/${project}/keys`, { body: { role, name: `${role} key` } });
        assert.equal(res.status, 201);
        assert.equal(res.body.role, role);
        const key = res.body.key as string;
        assert.equal((await server.request("GET", `/projects/${project}/flags/f/check`, { key })).status, 200);
        const read = await server.request("GET", `/projects/${project}/flags/f`, { key });
        assert.equal(read.status, role === "check" ? 403 : 200);
        const write = await server.request("PATCH", `/projects/${project}/flags/f`, {
          key,
          body: { description: "x" },
        });
        assert.equal(write.status, role === "write" ? 200 : 403);
      });
    }

    const badBodies: Array<[string, unknown, string | undefined]> = [
      ["role admin", { role: "admin", name: "nope" }, "/role"],
      ["role owner", { role: "owner", name: "nope" }, "/role"],
      ["role in capitals", { role: "READ", name: "nope" }, "/role"],
      ["no role", { name: "nope" }, "/role"],
      ["no name", { role: "read" }, "/name"],
      ["a number as name", { role: "read", name: 3 }, "/name"],
      ["an unknown field", { role: "read", name: "nope", projectId: "elsewhere" }, "/projectId"],
      ["an empty body", {}, undefined],
    ];
    for (const [label, body, path] of badBodies) {
      test(`POST keys with ${label} → 400 invalid_request, no key created`, async () => {
        const project = await createProject(server);
        const res = await server.request("POST", `/projects/${project}/keys`, { body });
        expectInvalid(res, path);
        const list = await server.request("GET", `/projects/${project}/keys`);
        assert.deepEqual(list.body.data, []);
      });
    }

    test("POST keys on an unknown project → 404 project_not_found", async () => {
      const res = await server.request("POST", "/projects/no-such-project/keys", { body: { role: "read", name: "k" } });
      expectProblem(res, 404, "project_not_found");
    });

    test("POST keys on an unknown project with environment null or named → 404 project_not_found, nothing written", async () => {
      const before = await rowCounts(server, ["api_keys", "events"]);
      for (const environment of [null, "production", "staging"]) {
        const res = await server.request("POST", "/projects/no-such-project/keys", {
          body: { role: "write", name: "x", environment },
        });
        expectProblem(res, 404, "project_not_found");
      }
      assert.deepEqual(await rowCounts(server, ["api_keys", "events"]), before);
    });

    test("GET keys lists keys without any secret, oldest first, ties by id", async () => {
      const project = await createProject(server);
      const created: Array<{ id: string; key: string; name: string; createdAt: string; role: string }> = [];
      const make = async (name: string, role: "write" | "read" | "check") => {
        const res = await server.request("POST", `/projects/${project}/keys`, { body: { role, name } });
        assert.equal(res.status, 201);
        created.push(res.body);
      };
      // Six keys one second apart, then five in the same millisecond, then one more later.
      for (let i = 0; i < 6; i++) {
        clock.advance(1000);
        await make(`timed-${i}`, (["write", "read", "check"] as const)[i % 3] as "write" | "read" | "check");
      }
      clock.advance(1000);
      for (let i = 0; i < 5; i++) await make(`tied-${i}`, "check");
      clock.advance(1000);
      await make("last", "read");

      const expected = [...created]
        .sort((a, b) => ascending(a.createdAt, b.createdAt) || ascending(a.id, b.id))
        .map(({ key: _secret, ...rest }) => ({ ...rest, projectId: project }));

      const res = await server.request("GET", `/projects/${project}/keys?limit=100`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.pagination, { before: null, after: null });
      for (const item of res.body.data) {
        assert.deepEqual(Object.keys(item).sort(), ["createdAt", "environment", "id", "name", "projectId", "role"]);
      }
      assert.deepEqual(res.body.data, expected);
      for (const { key } of created) {
        assert.ok(!res.text.includes(key), "a secret appears in the list");
        assert.ok(!res.text.includes(sha256(key)), "a key hash appears in the list");
      }
      // The default page and paging with small pages agree.
      const firstPage = await server.request("GET", `/projects/${project}/keys`);
      assert.deepEqual(firstPage.body.data, expected);
      assert.deepEqual(await listAll(server, `/projects/${project}/keys`, 2), expected);
    });

    test("keys created on one project do not appear in another project's list", async () => {
      const a = await createProject(server);
      const b = await createProject(server);
      const ka = await createKey(server, a, "write");
      const kb = await createKey(server, b, "read");
      const listA = await server.request("GET", `/projects/${a}/keys`);
      const listB = await server.request("GET", `/projects/${b}/keys`);
      assert.deepEqual(
        listA.body.data.map((k: { id: string }) => k.id),
        [ka.id],
      );
      assert.deepEqual(
        listB.body.data.map((k: { id: string }) => k.id),
        [kb.id],
      );
      // The admin key belongs to no project and is in no project's list.
      const adminRow = await server.database.db
        .selectFrom("api_keys")
        .select("id")
        .where("key_hash", "=", sha256(ADMIN_KEY))
        .executeTakeFirstOrThrow();
      assert.ok(!listA.text.includes(adminRow.id));
    });

    test("GET keys on an unknown project → 404 project_not_found", async () => {
      expectProblem(await server.request("GET", "/projects/no-such-project/keys"), 404, "project_not_found");
    });

    test("DELETE a key → 204; it leaves the list; again → 404 key_not_found", async () => {
      const project = await createProject(server);
      const doomed = await createKey(server, project, "write");
      const kept = await createKey(server, project, "read");
      const res = await server.request("DELETE", `/projects/${project}/keys/${doomed.id}`);
      assert.equal(res.status, 204);
      assert.equal(res.text, "");
      const list = await server.request("GET", `/projects/${project}/keys`);
      assert.deepEqual(
        list.body.data.map((k: { id: string }) => k.id),
        [kept.id],
      );
      expectProblem(await server.request("DELETE", `/projects/${project}/keys/${doomed.id}`), 404, "key_not_found");
      expectProblem(
        await server.request("GET", `/projects/${project}/flags`, { key: doomed.key }),
        401,
        "unauthorized",
      );
      assert.equal((await server.request("GET", `/projects/${project}/flags`, { key: kept.key })).status, 200);
      const rows = await server.database.db.selectFrom("api_keys").selectAll().where("id", "=", doomed.id).execute();
      assert.equal(rows.length, 0);
    });

    test("DELETE of an unknown key id → 404 key_not_found", async () => {
      const project = await createProject(server);
      expectProblem(await server.request("DELETE", `/projects/${project}/keys/key_unknown`), 404, "key_not_found");
    });

    test("DELETE of another project's key through this project → 404 key_not_found; the key keeps working", async () => {
      const a = await createProject(server);
      const b = await createProject(server);
      const kb = await createKey(server, b, "read");
      expectProblem(await server.request("DELETE", `/projects/${a}/keys/${kb.id}`), 404, "key_not_found");
      assert.equal((await server.request("GET", `/projects/${b}/flags`, { key: kb.key })).status, 200);
      const listB = await server.request("GET", `/projects/${b}/keys`);
      assert.deepEqual(
        listB.body.data.map((k: { id: string }) => k.id),
        [kb.id],
      );
    });

    test("the admin key cannot be revoked through a project's keys", async () => {
      const project = await createProject(server);
      const adminRow = await server.database.db
        .selectFrom("api_keys")
        .select("id")
        .where("key_hash", "=", sha256(ADMIN_KEY))
        .executeTakeFirstOrThrow();
      expectProblem(await server.request("DELETE", `/projects/${project}/keys/${adminRow.id}`), 404, "key_not_found");
      assert.equal((await server.request("GET", "/projects")).status, 200);
    });

    test("DELETE a key on an unknown project → 404 project_not_found", async () => {
      expectProblem(await server.request("DELETE", "/projects/no-such-project/keys/key_x"), 404, "project_not_found");
    });

    test("only a SHA-256 hash of a key is stored", async () => {
      const project = await createProject(server);
      const created = await server.request("POST", `/projects/${project}/keys`, {
        body: { role: "write", name: "stored" },
      });
      assert.equal(created.status, 201);
      const secret = created.body.key as string;
      const randomPart = secret.slice("fsk_".length);
      const db = server.database.db;
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("id", "=", created.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.key_hash, sha256(secret));
      assert.equal(row.role, "write");
      assert.equal(row.project_id, project);
      assert.equal(row.name, "stored");
      for (const [column, value] of Object.entries(row)) {
        const text = String(value);
        assert.ok(!text.includes(secret), `api_keys.${column} holds the secret`);
        assert.ok(!text.includes(randomPart), `api_keys.${column} holds the secret's random part`);
      }
      // Nowhere else in the database either (change log included), nor the admin key.
      for (const table of TABLES) {
        const rows = await db.selectFrom(table).selectAll().execute();
        const dump = JSON.stringify(rows);
        assert.ok(!dump.includes(randomPart), `table ${table} holds the secret`);
        assert.ok(!dump.includes(ADMIN_KEY), `table ${table} holds the admin key`);
      }
      const adminRow = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("key_hash", "=", sha256(ADMIN_KEY))
        .executeTakeFirstOrThrow();
      assert.equal(adminRow.role, "admin");
      assert.equal(adminRow.project_id, null);
    });
  });
}
