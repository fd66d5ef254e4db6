import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { loadConfig } from "../src/kernel/config.js";
import { type DatabaseHandle, openDatabase } from "../src/db/database.js";
import { migrateToLatest } from "../src/db/migrate.js";
import { GLOBAL_STREAM } from "../src/write-path/changes.js";
import { readStreamVersion } from "../src/features/evaluation/feed.repository.js";
import { ADMIN_KEY_COMMAND, type StoredEvent, type WriteContext } from "../src/write-path/domain-events.js";
import { EventBus } from "../src/write-path/event-bus.js";
import { type CommittedWrite, UnitOfWork } from "../src/write-path/unit-of-work.js";
import { offlineKeyService } from "../src/modules/admin-keys.js";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  freshDatabase,
  type FreshDatabase,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const quiet = { warn() {} };

describe("event bus", () => {
  test("delivers to listeners in order, stops after unsubscribe, and isolates a failing listener", async () => {
    const bus = new EventBus<number>();
    const seen: string[] = [];
    const off = bus.subscribe((n) => void seen.push(`a${n}`));
    bus.subscribe(async (n) => {
      await Promise.resolve();
      seen.push(`b${n}`);
    });
    const failing = () => {
      throw new Error("boom");
    };
    bus.subscribe(failing);
    await assert.rejects(bus.publish(1), /boom/);
    assert.deepEqual(seen, ["a1", "b1"], "every listener ran despite the failure");
    off();
    bus.unsubscribe(failing);
    await bus.publish(2);
    assert.deepEqual(seen, ["a1", "b1", "b2"]);
    assert.equal(bus.size, 1);
  });
});

for (const dialect of DIALECTS) {
  describe(`unit of work [${dialect}]`, () => {
    let fresh: FreshDatabase;
    let handle: DatabaseHandle;
    let work: UnitOfWork;
    const published: CommittedWrite[] = [];
    const context: WriteContext = {
      actor: { type: "key", keyId: "key_1", keyName: "tester", role: "write" },
      requestId: "r-1",
      mayConfigureProtected: true,
      boundTo: null,
    };
    const clock = new ManualClock();
    before(async () => {
      fresh = await freshDatabase(dialect);
      handle = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
      await migrateToLatest(handle);
      work = new UnitOfWork(handle.db, clock, quiet);
      work.bus.subscribe((w) => void published.push(w));
    });
    after(async () => {
      await handle.close();
      await fresh.drop();
    });

    const event = (name: string) =>
      ({
        type: "key.created",
        projectId: null,
        target: { kind: "key", id: name, name },
        before: null,
        after: { id: name, name, role: "admin" },
        unpublished: { keyHash: `hash-of-${name}` },
      }) as const;

    test("a write with events stores them, moves the version once and publishes after commit", async () => {
      const v0 = await readStreamVersion(handle.db, GLOBAL_STREAM);
      const result = await work.write(context, GLOBAL_STREAM, async () => ({ result: 42, events: [event("k1")] }));
      assert.equal(result, 42);
      assert.equal(await readStreamVersion(handle.db, GLOBAL_STREAM), v0 + 1);
      const stored = await handle.db.selectFrom("events").selectAll().execute();
      assert.equal(stored.length, 1);
      assert.equal(stored[0]!.request_id, "r-1");
      assert.deepEqual(JSON.parse(stored[0]!.actor), context.actor);
      assert.equal(stored[0]!.created_at, "2026-11-22T10:00:00.000Z");
      assert.equal(published.length, 1);
      assert.equal(published[0]!.events[0]!.id, stored[0]!.id);
      assert.equal(published[0]!.changeSet.version, v0 + 1);
    });

    test("an event's unpublished fields reach the change set, never the history or the bus's events", async () => {
      const before = published.length;
      await work.write(context, GLOBAL_STREAM, async () => ({ result: 1, events: [event("k-private")] }));
      const write = published[before]!;
      assert.deepEqual(write.changeSet.changes, [
        {
          kind: "key.created",
          id: "k-private",
          name: "k-private",
          hash: "hash-of-k-private",
          role: "admin",
          projectId: null,
          environment: null,
        },
      ]);
      const event0 = write.events[0]!;
      assert.deepEqual(Object.keys(event0), [
        "id",
        "type",
        "projectId",
        "target",
        "before",
        "after",
        "createdAt",
        "actor",
        "requestId",
      ]);
      const row = await handle.db
        .selectFrom("events")
        .selectAll()
        .where("id", "=", event0.id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes("hash-of-k-private"), "the hash is not stored in the history");
    });

    test("a write without events stores nothing, keeps the version and publishes nothing", async () => {
      const v0 = await readStreamVersion(handle.db, GLOBAL_STREAM);
      const before = published.length;
      const result = await work.write(context, GLOBAL_STREAM, async (trx) => {
        // Even a statement the work ran is rolled back with the version.
        await trx.insertInto("projects").values({ id: "ghost", name: "g", created_at: "x" }).execute();
        return { result: "same", events: [] };
      });
      assert.equal(result, "same");
      assert.equal(await readStreamVersion(handle.db, GLOBAL_STREAM), v0);
      assert.equal(published.length, before);
      assert.equal(await handle.db.selectFrom("projects").selectAll().executeTakeFirst(), undefined);
    });

    test("a failing write rolls back and publishes nothing; ids of later writes sort after earlier ones", async () => {
      const v0 = await readStreamVersion(handle.db, GLOBAL_STREAM);
      const before = published.length;
      await assert.rejects(
        work.write(context, GLOBAL_STREAM, async () => {
          throw new Error("refused");
        }),
        /refused/,
      );
      assert.equal(await readStreamVersion(handle.db, GLOBAL_STREAM), v0);
      assert.equal(published.length, before);
      await work.write(context, GLOBAL_STREAM, async () => ({ result: 1, events: [event("k2")] }));
      await work.write(context, GLOBAL_STREAM, async () => ({ result: 1, events: [event("k3")] }));
      const ids = published.slice(-2).map((w) => (w.events[0] as StoredEvent).id);
      assert.ok(ids[0]! < ids[1]!, "same-millisecond ids still sort in write order");
    });
  });

  describe(`history [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let writer: { key: string; id: string };
    let reader: { key: string; id: string };
    const clock = new ManualClock();
    const base = () => `/projects/${project}`;

    before(async () => {
      server = await startServer({ dialect, clock });
      project = await createProject(server, "hist");
      writer = await createKey(server, project, "write");
      reader = await createKey(server, project, "read");
    });
    after(() => server.close());

    /** Every event of a project in the database, oldest first. */
    const stored = async (projectId = project) =>
      server.database.db.selectFrom("events").selectAll().where("project_id", "=", projectId).orderBy("id").execute();

    /** Runs a request and answers the events it produced, read over the API, newest first. */
    const eventsOf = async (run: () => Promise<unknown>, projectId = project) => {
      const last = (await stored(projectId)).at(-1)?.id ?? "";
      await run();
      return (await stored(projectId)).filter((e) => e.id > last);
    };
    const list = async (query = "", key: string = reader.key) => {
      const res = await server.request("GET", `${base()}/events${query}`, { key });
      assert.equal(res.status, 200, res.text);
      return res.body as { data: any[]; pagination: { before: string | null; after: string | null } };
    };
    const ok = async (method: string, path: string, body?: unknown, key = writer.key, status = 200) => {
      const res = await server.request(method, path, { key, ...(body === undefined ? {} : { body }) });
      assert.equal(res.status, status, res.text);
      return res.body;
    };
    const one = async (run: () => Promise<unknown>) => {
      const rows = await eventsOf(run);
      assert.equal(rows.length, 1, `exactly one event: ${JSON.stringify(rows)}`);
      const { data } = await list("?limit=1");
      assert.equal(data[0].id, rows[0]!.id, "the newest event is listed first");
      return data[0];
    };
    const writerActor = () => ({ type: "key", keyId: writer.id, keyName: "write key", role: "write" });

    test("every write produces exactly one event with the caller, target, before and after", async () => {
      clock.advance(1000);
      const created = await one(() =>
        ok("POST", `${base()}/flags/checkout`, { description: "new checkout" }, writer.key, 201),
      );
      const flagId = (await ok("GET", `${base()}/flags/checkout`)).id;
      assert.equal(created.type, "flag.created");
      assert.equal(created.projectId, project);
      assert.equal(created.createdAt, "2026-11-22T10:00:01.000Z");
      assert.deepEqual(created.actor, writerActor());
      assert.deepEqual(created.target, { kind: "flag", id: flagId, name: "checkout" });
      const state = {
        name: "checkout",
        description: "new checkout",
        status: "disabled",
        percentageActors: 0,
        // A boolean flag's targeting: its fixed variants, no rules, no prerequisites.
        type: "boolean",
        variants: [
          { key: "on", value: true },
          { key: "off", value: false },
        ],
        onVariant: "on",
        offVariant: "off",
        rules: [],
        prerequisites: [],
        // What it is for (the default: release) and whether it stays.
        kind: "release",
        permanent: false,
      };
      assert.equal(created.before, null);
      assert.deepEqual(created.after, { ...state, percentageCalls: 0 });
      assert.match(created.id, /^evt_[0-9A-HJKMNP-TV-Z]{26}$/);

      const segment = await one(() => ok("POST", `${base()}/segments`, { name: "beta" }, writer.key, 201));
      const segmentId = segment.target.id as string;
      assert.equal(segment.type, "segment.created");
      assert.deepEqual(segment.after, { name: "beta", description: "", conditions: [] });

      const updated = await one(() =>
        ok("PATCH", `${base()}/flags/checkout`, {
          status: "conditional",
          percentageActors: 25,
          addActors: ["u1", "u2"],
          addSegments: [segmentId],
        }),
      );
      assert.equal(updated.type, "flag.updated");
      assert.deepEqual(updated.before, { ...state, percentageCalls: 0 });
      assert.deepEqual(updated.after, {
        ...state,
        status: "conditional",
        percentageActors: 25,
        percentageCalls: 0,
        addedActors: ["u1", "u2"],
        removedActors: [],
        addedSegments: [segmentId],
        removedSegments: [],
      });
      const removed = await one(() => ok("PATCH", `${base()}/flags/checkout`, { removeActors: ["u1", "nobody"] }));
      assert.deepEqual(removed.after.removedActors, ["u1"], "only ids really removed are recorded");

      const segUpdated = await one(() =>
        ok("PATCH", `${base()}/segments/${segmentId}`, { name: "beta users", addActors: ["a1"] }),
      );
      assert.equal(segUpdated.type, "segment.updated");
      assert.deepEqual(segUpdated.before, { name: "beta", description: "", conditions: [] });
      assert.deepEqual(segUpdated.after, {
        name: "beta users",
        description: "",
        conditions: [],
        addedActors: ["a1"],
        removedActors: [],
      });
      assert.equal(segUpdated.target.name, "beta users");

      const actorCreated = await one(() => ok("PUT", `${base()}/actors/a1`, { name: "Ada" }));
      assert.equal(actorCreated.type, "actor.updated");
      assert.deepEqual(actorCreated.before, { name: null, imageURL: null });
      assert.deepEqual(actorCreated.after, { name: "Ada", imageURL: null });
      const actorNew = await one(() => ok("PUT", `${base()}/actors/a9`, { name: "Nine" }, writer.key, 201));
      assert.equal(actorNew.before, null);
      assert.deepEqual(actorNew.target, { kind: "actor", id: "a9", name: "a9" });

      const segDeleted = await one(() => ok("DELETE", `${base()}/segments/${segmentId}`, undefined, writer.key, 204));
      assert.equal(segDeleted.type, "segment.deleted");
      assert.deepEqual(segDeleted.before, { name: "beta users", description: "", conditions: [] });
      assert.equal(segDeleted.after, null);

      const flagDeleted = await one(() => ok("DELETE", `${base()}/flags/checkout`, undefined, writer.key, 204));
      assert.equal(flagDeleted.type, "flag.deleted");
      assert.equal(flagDeleted.after, null);
      assert.equal(flagDeleted.before.status, "conditional");
      assert.equal(flagDeleted.target.id, flagId);

      const keyCreated = await one(() => ok("POST", `${base()}/keys`, { role: "check", name: "edge" }, ADMIN_KEY, 201));
      assert.equal(keyCreated.type, "key.created");
      assert.equal(keyCreated.actor.keyName, "ADMIN_API_KEY");
      assert.equal(keyCreated.actor.role, "admin");
      assert.deepEqual(keyCreated.after, {
        id: keyCreated.target.id,
        name: "edge",
        role: "check",
        environment: "production",
      });
      const revoked = await one(() =>
        ok("DELETE", `${base()}/keys/${keyCreated.target.id}`, undefined, ADMIN_KEY, 204),
      );
      assert.equal(revoked.type, "key.revoked");
      assert.deepEqual(revoked.before, keyCreated.after);
      assert.equal(revoked.after, null);
      const raw = JSON.stringify(await stored());
      assert.doesNotMatch(raw, /hash|fsk_/, "no secret and no hash is ever in the history");
    });

    test("project create and delete produce one event each; the delete takes the project's history with it", async () => {
      const created = await eventsOf(
        () => ok("POST", "/projects", { id: "short-lived", name: "Short" }, ADMIN_KEY, 201),
        "short-lived",
      );
      assert.deepEqual(
        created.map((e) => [e.type, e.target_kind, e.target_id, e.before, JSON.parse(e.after!)]),
        [["project.created", "project", "short-lived", null, { id: "short-lived", name: "Short" }]],
      );
      const listed = await server.request("GET", "/projects/short-lived/events");
      assert.equal(listed.body.data.length, 1);
      const adminLevel = () =>
        server.database.db.selectFrom("events").selectAll().where("project_id", "is", null).orderBy("id").execute();
      const before = (await adminLevel()).length;
      await ok("DELETE", "/projects/short-lived", undefined, ADMIN_KEY, 204);
      assert.deepEqual(await stored("short-lived"), [], "the project's history went with it");
      // The delete is kept apart, with no project, as the admin keys' events are.
      const deleted = (await adminLevel()).slice(before);
      assert.deepEqual(
        deleted.map((e) => [e.type, e.target_id, JSON.parse(e.before!), e.after, JSON.parse(e.actor).keyName]),
        [["project.deleted", "short-lived", { id: "short-lived", name: "Short" }, null, "ADMIN_API_KEY"]],
      );
      expectProblem(await server.request("GET", "/projects/short-lived/events"), 404, "project_not_found");
    });

    test("refused requests (400, 403, 404, 409) produce no event", async () => {
      await ok("POST", `${base()}/flags/refusals`, {}, writer.key, 201);
      const refusals: [string, string, unknown, string, number][] = [
        ["PATCH", `${base()}/flags/refusals`, { percentageActors: 101 }, writer.key, 400],
        ["PATCH", `${base()}/flags/refusals`, { addActors: ["x"], removeActors: ["x"] }, writer.key, 400],
        ["PATCH", `${base()}/flags/refusals`, { status: "enabled" }, reader.key, 403],
        ["POST", `${base()}/keys`, { role: "read", name: "k" }, writer.key, 403],
        ["PATCH", `${base()}/flags/missing`, { status: "enabled" }, writer.key, 404],
        ["PATCH", `${base()}/flags/refusals`, { addSegments: ["seg_missing"] }, writer.key, 404],
        ["DELETE", `${base()}/segments/seg_missing`, undefined, writer.key, 404],
        ["DELETE", `${base()}/keys/key_missing`, undefined, "", 404],
        ["POST", `${base()}/flags/refusals`, {}, writer.key, 409],
        ["POST", "/projects", { id: project, name: "again" }, "", 409],
      ];
      for (const [method, path, body, key, status] of refusals) {
        const rows = await eventsOf(async () => {
          const res = await server.request(method, path, {
            key: key === "" ? undefined : key,
            ...(body === undefined ? {} : { body }),
          });
          assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
        });
        assert.deepEqual(rows, [], `${method} ${path} (${status}) produced no event`);
      }
    });

    test("a write that changes nothing produces no event and moves no version", async () => {
      await ok("POST", `${base()}/flags/steady`, {}, writer.key, 201);
      await ok("PUT", `${base()}/actors/still`, { name: "Still" }, writer.key, 201);
      const version = await readStreamVersion(server.database.db, project);
      const rows = await eventsOf(async () => {
        await ok("PATCH", `${base()}/flags/steady`, {});
        await ok("PATCH", `${base()}/flags/steady`, { status: "disabled", removeActors: ["never-attached"] });
        await ok("PUT", `${base()}/actors/still`, { name: "Still" });
        const segment = await ok("POST", `${base()}/segments`, { name: "steady-seg" }, writer.key, 201);
        const v = await readStreamVersion(server.database.db, project);
        await ok("PATCH", `${base()}/segments/${segment.id}`, { name: "steady-seg" });
        assert.equal(await readStreamVersion(server.database.db, project), v);
      });
      assert.deepEqual(
        rows.map((e) => e.type),
        ["segment.created"],
      );
      assert.equal(await readStreamVersion(server.database.db, project), version + 1, "only the create moved it");
      assert.equal(server.service.feed.snapshot.versions.get(project), version + 1);
    });

    test("the request id is echoed and recorded; a sane X-Request-Id is kept", async () => {
      const res = await server.request("POST", `${base()}/flags/traced`, {
        key: writer.key,
        body: {},
        headers: { "x-request-id": "trace-123" },
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("x-request-id"), "trace-123");
      const { data } = await list("?limit=1");
      assert.equal(data[0].requestId, "trace-123");
      const insane = await server.request("GET", `${base()}/flags/traced`, { headers: { "x-request-id": "a b" } });
      assert.match(insane.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
    });

    test("filters: type (repeated, prefix), flag, segment, since, until", async () => {
      const p = await createProject(server, "filters");
      clock.advance(60_000);
      const t0 = new Date(clock.now()).toISOString();
      await ok("POST", `/projects/${p}/flags/a`, {}, ADMIN_KEY, 201);
      clock.advance(1000);
      await ok("POST", `/projects/${p}/flags/b`, {}, ADMIN_KEY, 201);
      clock.advance(1000);
      const seg = await ok("POST", `/projects/${p}/segments`, { name: "s" }, ADMIN_KEY, 201);
      clock.advance(1000);
      await ok("PATCH", `/projects/${p}/flags/a`, { status: "enabled" }, ADMIN_KEY);
      await ok("PATCH", `/projects/${p}/segments/${seg.id}`, { description: "d" }, ADMIN_KEY);
      const get = async (query: string) =>
        ((await server.request("GET", `/projects/${p}/events${query}`)).body.data as any[]).map(
          (e) => `${e.type}:${e.target.name}`,
        );
      assert.deepEqual(await get(""), [
        "segment.updated:s",
        "flag.updated:a",
        "segment.created:s",
        "flag.created:b",
        "flag.created:a",
        "project.created:Project filters",
      ]);
      assert.deepEqual(await get("?type=flag.created"), ["flag.created:b", "flag.created:a"]);
      assert.deepEqual(await get("?type=flag.created&type=segment.updated"), [
        "segment.updated:s",
        "flag.created:b",
        "flag.created:a",
      ]);
      assert.deepEqual(await get("?type=segment."), ["segment.updated:s", "segment.created:s"]);
      assert.deepEqual(await get("?flag=a"), ["flag.updated:a", "flag.created:a"]);
      assert.deepEqual(await get(`?segment=${seg.id}`), ["segment.updated:s", "segment.created:s"]);
      const t1 = new Date(Date.parse(t0) + 1000).toISOString();
      assert.deepEqual(await get(`?since=${t1}`), [
        "segment.updated:s",
        "flag.updated:a",
        "segment.created:s",
        "flag.created:b",
      ]);
      assert.deepEqual(await get(`?since=${t0}&until=${t1}`), ["flag.created:a"]);
      assert.deepEqual(await get(`?until=${t0}`), ["project.created:Project filters"]);
      const bad = await server.request("GET", `/projects/${p}/events?type=flag.renamed`);
      expectProblem(bad, 400, "invalid_request");
      expectProblem(await server.request("GET", `/projects/${p}/events?since=yesterday`), 400, "invalid_request");
      expectProblem(await server.request("GET", `/projects/${p}/events?author=x`), 400, "invalid_request");
      // actor: the changes one key (or person) made; an unknown id finds none.
      const other = await createKey(server, p, "write");
      await ok("PATCH", `/projects/${p}/flags/b`, { description: "by the other key" }, other.key);
      const byOther = (await server.request("GET", `/projects/${p}/events?actor=${other.id}`)).body.data;
      assert.deepEqual(
        byOther.map((e: any) => [e.type, e.target.name, e.actor.keyId]),
        [["flag.updated", "b", other.id]],
      );
      assert.deepEqual((await server.request("GET", `/projects/${p}/events?actor=key_nobody`)).body.data, []);
    });

    test("pagination: newest first, before and after, limit bounds, bad cursors", async () => {
      const p = await createProject(server, "pages");
      for (let i = 0; i < 6; i++) await ok("POST", `/projects/${p}/flags/f${i}`, {}, ADMIN_KEY, 201);
      const page = async (query: string) => {
        const res = await server.request("GET", `/projects/${p}/events${query}`);
        assert.equal(res.status, 200, res.text);
        return res.body as { data: any[]; pagination: { before: string | null; after: string | null } };
      };
      const names = (body: { data: any[] }) => body.data.map((e) => e.target.name);
      const first = await page("?limit=3");
      assert.deepEqual(names(first), ["f5", "f4", "f3"]);
      assert.equal(first.pagination.before, null);
      const second = await page(`?limit=3&after=${first.pagination.after}`);
      assert.deepEqual(names(second), ["f2", "f1", "f0"]);
      const third = await page(`?limit=3&after=${second.pagination.after}`);
      assert.deepEqual(names(third), ["Project pages"]);
      assert.equal(third.pagination.after, null);
      const back = await page(`?limit=3&before=${third.pagination.before}`);
      assert.deepEqual(names(back), ["f2", "f1", "f0"]);
      const backAgain = await page(`?limit=3&before=${back.pagination.before}`);
      assert.deepEqual(names(backAgain), ["f5", "f4", "f3"]);
      assert.equal(backAgain.pagination.before, null);
      for (const query of [
        "?limit=0",
        "?limit=101",
        "?after=not-a-cursor",
        `?before=x&after=${first.pagination.after}`,
      ]) {
        expectProblem(await server.request("GET", `/projects/${p}/events${query}`), 400, "invalid_request");
      }
    });

    test("a flag's events span a delete and re-create, told apart by the flag id", async () => {
      const first = await ok("POST", `${base()}/flags/phoenix`, {}, writer.key, 201);
      await ok("PATCH", `${base()}/flags/phoenix`, { status: "enabled" });
      await ok("DELETE", `${base()}/flags/phoenix`, undefined, writer.key, 204);
      const deletedView = await server.request("GET", `${base()}/flags/phoenix/events`, { key: reader.key });
      assert.equal(deletedView.status, 200, "a deleted flag's history stays readable");
      const second = await ok("POST", `${base()}/flags/phoenix`, {}, writer.key, 201);
      assert.notEqual(first.id, second.id);
      const res = await server.request("GET", `${base()}/flags/phoenix/events`, { key: reader.key });
      assert.deepEqual(
        res.body.data.map((e: any) => [e.type, e.target.id]),
        [
          ["flag.created", second.id],
          ["flag.deleted", first.id],
          ["flag.updated", first.id],
          ["flag.created", first.id],
        ],
      );
      const filtered = await server.request("GET", `${base()}/flags/phoenix/events?type=flag.created&limit=1`, {
        key: reader.key,
      });
      assert.deepEqual(
        filtered.body.data.map((e: any) => e.target.id),
        [second.id],
      );
      assert.notEqual(filtered.body.pagination.after, null);
      expectProblem(
        await server.request("GET", `${base()}/flags/never-was/events`, { key: reader.key }),
        404,
        "flag_not_found",
      );
    });

    test("a key of another project may not read the history", async () => {
      const other = await createProject(server, "other-hist");
      const stranger = await createKey(server, other, "read");
      expectProblem(await server.request("GET", `${base()}/events`, { key: stranger.key }), 403, "forbidden");
      const check = await createKey(server, project, "check");
      expectProblem(await server.request("GET", `${base()}/events`, { key: check.key }), 403, "forbidden");
    });
  });

  describe(`history retention [${dialect}]`, () => {
    let server: TestServer;
    const clock = new ManualClock();
    before(async () => {
      server = await startServer({ dialect, clock, env: { HISTORY_RETENTION_DAYS: "2" } });
    });
    after(() => server.close());

    test("events older than HISTORY_RETENTION_DAYS are pruned; newer ones stay", async () => {
      const p = await createProject(server, "retained");
      await server.request("POST", `/projects/${p}/flags/old`, { body: {} });
      clock.advance(2 * 24 * 3600 * 1000 - 1000);
      await server.request("POST", `/projects/${p}/flags/new`, { body: {} });
      clock.advance(2000);
      await server.service.prune();
      const names = (await server.request("GET", `/projects/${p}/events`)).body.data.map((e: any) => e.target.name);
      assert.deepEqual(names, ["new"]);
      const startup = await server.database.db
        .selectFrom("events")
        .selectAll()
        .where("project_id", "is", null)
        .execute();
      assert.deepEqual(startup, [], "the start-up admin key event was older too");
    });
  });

  describe(`history of system writes [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    test("the start-up admin key is recorded as the service's own write, without its hash", async () => {
      const rows = await server.database.db.selectFrom("events").selectAll().where("project_id", "is", null).execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.type, "key.created");
      assert.deepEqual(JSON.parse(rows[0]!.actor), { type: "system", system: "startup" });
      assert.equal(rows[0]!.request_id, null);
      assert.deepEqual(Object.keys(JSON.parse(rows[0]!.after!)), ["id", "name", "role", "environment"]);
    });

    test("the admin-key command's writes are recorded as its own, and the bus feeds the events metric", async () => {
      const other = openDatabase(loadConfig({ DATABASE_URL: server.databaseUrl }));
      try {
        const keys = offlineKeyService(other);
        const created = await keys.createAdminKey(ADMIN_KEY_COMMAND, "recovered");
        await keys.revokeAdminKey(ADMIN_KEY_COMMAND, created.id);
      } finally {
        await other.close();
      }
      const rows = await server.database.db
        .selectFrom("events")
        .selectAll()
        .where("project_id", "is", null)
        .orderBy("id")
        .execute();
      assert.deepEqual(
        rows.slice(1).map((r) => [r.type, r.target_name, JSON.parse(r.actor)]),
        [
          ["key.created", "recovered", { type: "system", system: "admin-key-command" }],
          ["key.revoked", "recovered", { type: "system", system: "admin-key-command" }],
        ],
      );
      await createProject(server, "metered");
      const metrics = await server.request("GET", "/metrics");
      assert.match(metrics.text, /flagstaff_events_total\{type="project\.created"\} 1/);
    });
  });
}
