// Deleting a project deletes everything in it, its history and change log included: a project created
// again under the same id sees nothing of the old one, through its history, its streams or OFREP, on this
// instance or another.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  createKey,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { readStreamVersion } from "../src/features/evaluation/feed.repository.js";

/** What the old project held; none of it may reach the new project's keys. */
const OLD = {
  flag: "old-secret-flag",
  description: "Launch plan for the Q3 merger",
  actor: "old-actor-7",
  member: "old-member-9",
  keyName: "old-ci-key",
  hookUser: "hookuser",
  hookPassword: "hookpass-5f1e",
};
const OLD_TEXTS = Object.values(OLD);

function assertNothingOld(what: string, value: unknown): void {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  for (const old of OLD_TEXTS) assert.ok(!text.includes(old), `${what} holds ${JSON.stringify(old)}: ${text}`);
}

/** Fills a project with everything that leaves traces: a described flag, actors, a segment, a key, a webhook. */
async function fillOldProject(server: TestServer, id: string): Promise<{ webhookId: string; checkKey: string }> {
  const ok = async (method: string, path: string, body: unknown, status: number, key?: string) => {
    const res = await server.request(method, path, { body, ...(key ? { key } : {}) });
    assert.equal(res.status, status, res.text);
    return res.body;
  };
  await ok("POST", "/projects", { id, name: "Old name" }, 201);
  const writer = await ok("POST", `/projects/${id}/keys`, { role: "write", name: OLD.keyName }, 201);
  const check = await ok("POST", `/projects/${id}/keys`, { role: "check", name: "old check" }, 201);
  const webhook = await ok(
    "POST",
    `/projects/${id}/webhooks`,
    { url: `https://${OLD.hookUser}:${OLD.hookPassword}@8.8.8.8/hook`, events: ["*"] },
    201,
  );
  await ok("POST", `/projects/${id}/flags/${OLD.flag}`, { description: OLD.description }, 201, writer.key);
  const segment = await ok("POST", `/projects/${id}/segments`, { name: "old-segment" }, 201, writer.key);
  await ok("PATCH", `/projects/${id}/segments/${segment.id}`, { addActors: [OLD.member] }, 200, writer.key);
  await ok("PUT", `/projects/${id}/actors/${OLD.actor}`, { name: "Old Actor" }, 201, writer.key);
  await ok(
    "PATCH",
    `/projects/${id}/flags/${OLD.flag}`,
    { status: "conditional", addActors: [OLD.actor], addSegments: [segment.id] },
    200,
    writer.key,
  );
  return { webhookId: webhook.id, checkKey: check.key };
}

/** Opens a stream, takes its first event, and closes it. */
async function firstEvent(url: string, key: string, lastEventId: string) {
  const stream = await EventStreamClient.open(url, { key, lastEventId });
  assert.equal(stream.status, 200);
  const first = await stream.next(`the first event after ${lastEventId}`, () => true);
  await stream.close();
  return first;
}

for (const dialect of DIALECTS) {
  describe(`a project deleted and created again under its id [${dialect}]`, () => {
    let server: TestServer;
    const id = "reborn";
    let old: { webhookId: string; checkKey: string; lastEventId: string; etag: string; ofrepEventId: string };
    let deleteVersion: number;
    let reader: { key: string; id: string };
    let checker: { key: string; id: string };
    const bulk = (key: string, headers: Record<string, string> = {}) =>
      server.request("POST", "/ofrep/v1/evaluate/flags", { key, headers, body: { context: { targetingKey: "u" } } });

    before(async () => {
      server = await startServer({ dialect });
      // Deliveries stay queued (pending rows), and nothing is sent to the address above.
      await server.service.dispatcher.stop();
      const filled = await fillOldProject(server, id);
      const stream = await EventStreamClient.open(`${server.url}/projects/${id}/stream`);
      const snapshot = await stream.next("the old snapshot", (e) => e.event === "snapshot");
      await stream.close();
      const answer = await bulk(filled.checkKey);
      assert.equal(answer.status, 200);
      const ofrep = await EventStreamClient.open(`${server.url}/ofrep/v1/event-stream`, { key: filled.checkKey });
      const refetch = await ofrep.next("the old refetch", (e) => e.event === "message");
      await ofrep.close();
      old = {
        ...filled,
        lastEventId: snapshot.id ?? "",
        etag: answer.headers.get("etag") ?? "",
        ofrepEventId: refetch.id ?? "",
      };
      assert.ok(
        (await server.database.db.selectFrom("webhook_deliveries").select("id").execute()).length > 0,
        "the old webhook has deliveries queued",
      );

      assert.equal((await server.request("DELETE", `/projects/${id}`)).status, 204);
      deleteVersion = await readStreamVersion(server.database.db, id);
      assert.equal((await server.request("POST", "/projects", { body: { id, name: "New name" } })).status, 201);
      reader = await createKey(server, id, "read");
      checker = await createKey(server, id, "check");
      await server.request("POST", `/projects/${id}/flags/fresh`, { body: {} });
    });
    after(() => server.close());

    test("its keys read none of the old project's history; an old flag's history is 404", async () => {
      for (const key of [reader.key, ADMIN_KEY]) {
        const res = await server.request("GET", `/projects/${id}/events?limit=100`, { key });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.data.map((e: any) => [e.type, e.target.name]).reverse(), [
          ["project.created", "New name"],
          ["key.created", "read key"],
          ["key.created", "check key"],
          ["flag.created", "fresh"],
        ]);
        assertNothingOld("the new project's history", res.body);
        assert.ok(
          res.body.data.every((e: any) => e.type !== "project.deleted"),
          "the old project's delete is not in it",
        );
        for (const filter of ["?type=flag.", "?type=project.", `?flag=${OLD.flag}`]) {
          const filtered = await server.request("GET", `/projects/${id}/events${filter}`, { key });
          assertNothingOld(`the history filtered by ${filter}`, filtered.body);
        }
        expectProblem(
          await server.request("GET", `/projects/${id}/flags/${OLD.flag}/events`, { key }),
          404,
          "flag_not_found",
        );
      }
    });

    test("the old history, change log, webhook and deliveries are gone from the database; project.deleted is kept apart", async () => {
      const db = server.database.db;
      const events = await db.selectFrom("events").selectAll().where("project_id", "=", id).execute();
      assert.equal(events.length, 4, "project.created, two key.created, flag.created: the new project's only");
      assertNothingOld("the project's stored events", events);
      const changes = await db.selectFrom("feed_changes").selectAll().where("stream", "=", id).execute();
      assert.ok(
        changes.every((c) => Number(c.version) >= deleteVersion),
        "no change set from before the delete",
      );
      assertNothingOld("the project's change log", changes);
      assert.deepEqual(await db.selectFrom("webhooks").select("id").execute(), []);
      assert.deepEqual(
        await db.selectFrom("webhook_deliveries").select("id").where("webhook_id", "=", old.webhookId).execute(),
        [],
      );
      // The delete itself is recorded with no project, as the admin keys' events are: who deleted what.
      const deletes = await db.selectFrom("events").selectAll().where("type", "=", "project.deleted").execute();
      assert.equal(deletes.length, 1);
      assert.equal(deletes[0]!.project_id, null);
      assert.deepEqual(
        [deletes[0]!.target_kind, deletes[0]!.target_id, deletes[0]!.target_name, JSON.parse(deletes[0]!.before!)],
        ["project", id, "Old name", { id, name: "Old name" }],
      );
      assert.equal(JSON.parse(deletes[0]!.actor).keyName, "ADMIN_API_KEY");
      // The stream's version went on: the new project's ids are all above the old one's.
      assert.ok(deleteVersion > Number(old.lastEventId));
    });

    test("a stream resumed from 0, an old id or the delete's id gets the new project's snapshot, never old changes", async () => {
      const url = `${server.url}/projects/${id}/stream`;
      // (deleteVersion + 1 is the new project's creation: an id of the new project, which resumes.)
      const ids = ["0", "1", old.lastEventId, String(deleteVersion - 1), String(deleteVersion)];
      for (const key of [reader.key, ADMIN_KEY]) {
        for (const lastEventId of ids) {
          const first = await firstEvent(url, key, lastEventId);
          assert.equal(first.event, "snapshot", `Last-Event-ID ${lastEventId}: ${JSON.stringify(first)}`);
          assert.deepEqual(
            first.data.state.flags.map((f: any) => f.name),
            ["fresh"],
          );
          assert.deepEqual(first.data.state.segments, {});
          assert.ok(Number(first.id) > deleteVersion, `id ${first.id} is above every old id`);
          assertNothingOld(`the stream resumed from ${lastEventId}`, first);
        }
      }
      // An id of the new project still resumes from the log.
      const current = await firstEvent(url, reader.key, "0");
      const resumed = await EventStreamClient.open(url, { key: reader.key, lastEventId: current.id ?? "" });
      await server.request("PATCH", `/projects/${id}/flags/fresh`, { body: { status: "enabled" } });
      const change = await resumed.next("the change", (e) => e.event !== "message");
      assert.equal(change.event, "change", "resumed, not started over");
      await resumed.close();
    });

    test("OFREP: an old ETag gets the new project's full answer, an old Last-Event-ID a refetch", async () => {
      const answer = await bulk(checker.key, { "if-none-match": old.etag });
      assert.equal(answer.status, 200);
      assert.deepEqual(
        answer.body.flags.map((f: any) => f.key),
        ["fresh"],
      );
      assert.notEqual(answer.headers.get("etag"), old.etag);
      const stream = await EventStreamClient.open(`${server.url}/ofrep/v1/event-stream`, {
        key: checker.key,
        lastEventId: old.ofrepEventId,
      });
      const refetch = await stream.next("a refetch", (e) => e.event === "message");
      assert.equal(refetch.data.type, "refetchEvaluation");
      assert.ok(Number(refetch.id) > deleteVersion);
      await stream.close();
    });
  });

  describe(`an instance that reads a deleted and re-created project afresh [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    test("ends the streams of the old project's keys; an admin's stream gets the new project's snapshot", async () => {
      const id = "read-afresh";
      await fillOldProject(server, id);
      const oldReader = await createKey(server, id, "read");
      const url = `${server.url}/projects/${id}/stream`;
      const byOldKey = await EventStreamClient.open(url, { key: oldReader.key });
      const byAdmin = await EventStreamClient.open(url);
      await byOldKey.next("the old snapshot", (e) => e.event === "snapshot");
      await byAdmin.next("the old snapshot", (e) => e.event === "snapshot");
      // What another instance's delete and re-create leave when this one hears of neither change set (the
      // delete drops the change log, so an instance further behind finds a gap): the rows, a version ahead.
      const db = server.database.db;
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom("projects").where("id", "=", id).execute();
        await trx.deleteFrom("feed_changes").where("stream", "=", id).execute();
        await trx
          .insertInto("projects")
          .values({ id, name: "New name", created_at: new Date().toISOString() })
          .execute();
        const at = new Date().toISOString();
        await trx
          .insertInto("environments")
          .values({
            project_id: id,
            id: "production",
            name: "Production",
            description: "",
            is_default: 1,
            position: 1,
            created_at: at,
            updated_at: at,
          })
          .execute();
        await trx
          .updateTable("feed_streams")
          .set((eb) => ({ version: eb("version", "+", 2) }))
          .where("stream", "=", id)
          .execute();
      });
      await server.service.feed.catchUp(id);
      const fresh = await byAdmin.next("the new snapshot", (e) => e.event === "snapshot" && e !== byAdmin.events[0]);
      assert.deepEqual(fresh.data.state.flags, []);
      await waitFor("the old key's stream to end", () => byOldKey.isEnded);
      assert.deepEqual(
        byOldKey.events.map((e) => e.event),
        ["snapshot"],
        "the old key never saw the new project",
      );
      await byAdmin.close();
    });
  });
}

if (DIALECTS.includes("postgres")) {
  describe("a project deleted and created again, across instances [postgres]", () => {
    let fresh: FreshDatabase;
    let a: TestServer;
    let b: TestServer;
    before(async () => {
      fresh = await freshDatabase("postgres");
      a = await startServer({ dialect: "postgres", database: fresh });
      b = await startServer({ dialect: "postgres", database: fresh });
    });
    after(async () => {
      await a.stop();
      await b.stop();
      await fresh.drop();
    });

    test("B ends the old streams, and a stream resumed on B with an old id gets the new snapshot only", async () => {
      const id = "reborn-across";
      await fillOldProject(a, id);
      await waitFor("the project on B", async () => (await b.request("GET", `/projects/${id}/flags`)).status, {
        until: (s) => s === 200,
      });
      const onB = await EventStreamClient.open(`${b.url}/projects/${id}/stream`);
      const snapshot = await onB.next("the snapshot on B", (e) => e.event === "snapshot");
      assert.ok(snapshot.data.state.flags.some((f: any) => f.name === OLD.flag));

      assert.equal((await a.request("DELETE", `/projects/${id}`)).status, 204);
      await waitFor("B to end the deleted project's stream", () => onB.isEnded);
      assert.equal((await a.request("POST", "/projects", { body: { id, name: "New name" } })).status, 201);
      const reader = await createKey(a, id, "read");
      await a.request("POST", `/projects/${id}/flags/fresh`, { body: {} });
      await waitFor(
        "the new key and flag on B",
        async () => (await b.request("GET", `/projects/${id}/flags/fresh`, { key: reader.key })).status,
        { until: (s) => s === 200 },
      );
      for (const lastEventId of ["0", snapshot.id ?? ""]) {
        for (const key of [reader.key, ADMIN_KEY]) {
          const first = await firstEvent(`${b.url}/projects/${id}/stream`, key, lastEventId);
          assert.equal(first.event, "snapshot", `Last-Event-ID ${lastEventId} on B: ${JSON.stringify(first)}`);
          assert.deepEqual(
            first.data.state.flags.map((f: any) => f.name),
            ["fresh"],
          );
          assertNothingOld("B's stream", first);
        }
      }
      const history = await b.request("GET", `/projects/${id}/events`, { key: reader.key });
      assertNothingOld("the history read on B", history.body);
    });
  });
}
