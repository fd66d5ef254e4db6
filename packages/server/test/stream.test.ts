import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { evaluate, ProjectState, type ProjectStateJSON } from "@flagstaff/core";
import {
  createKey,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";

/** Follows a stream the way a client would: the snapshot's state, then each change applied in order. */
function follow(stream: EventStreamClient): { state: () => ProjectState; version: () => number } {
  let state = new ProjectState();
  let version = 0;
  let seen = 0;
  const catchUp = () => {
    for (; seen < stream.events.length; seen++) {
      const event = stream.events[seen]!;
      if (event.event === "snapshot") {
        state = ProjectState.fromJSON(event.data.state as ProjectStateJSON);
        version = event.data.version;
      } else if (event.event === "change") {
        assert.ok(event.data.version > version, "versions only grow");
        for (const change of event.data.changes) state.apply(change);
        version = event.data.version;
      }
    }
  };
  return {
    state: () => {
      catchUp();
      return state;
    },
    version: () => {
      catchUp();
      return version;
    },
  };
}

for (const dialect of DIALECTS) {
  describe(`project stream [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let reader: { key: string; id: string };
    const url = () => `${server.url}/projects/${project}/stream`;

    before(async () => {
      server = await startServer({ dialect, env: { STREAM_HEARTBEAT_MS: "200" } });
      project = await createProject(server, "streamed");
      reader = await createKey(server, project, "read");
      await server.request("POST", `/projects/${project}/flags/first`, { body: {} });
    });
    after(() => server.close());

    test("starts with the whole state, then one change event per committed change, ids the version", async () => {
      const stream = await EventStreamClient.open(url(), { key: reader.key });
      assert.equal(stream.status, 200);
      assert.match(stream.headers?.get("content-type") ?? "", /^text\/event-stream/);
      assert.equal(stream.headers?.get("cache-control"), "no-store");
      const snapshot = await stream.next("the snapshot", (e) => e.event === "snapshot");
      assert.equal(snapshot.id, String(snapshot.data.version));
      assert.equal(snapshot.data.state.format, 2);
      assert.deepEqual(
        snapshot.data.state.flags.map((f: any) => f.name),
        ["first"],
      );
      const seg = await server.request("POST", `/projects/${project}/segments`, { body: { name: "streamers" } });
      await server.request("PATCH", `/projects/${project}/segments/${seg.body.id}`, { body: { addActors: ["m1"] } });
      await server.request("PATCH", `/projects/${project}/flags/first`, {
        body: { status: "conditional", addActors: ["a1"], addSegments: [seg.body.id], percentageActors: 25 },
      });
      const change = await stream.next(
        "the flag change",
        (e) => e.event === "change" && e.data.changes.some((c: any) => c.kind === "flag.upserted"),
      );
      assert.equal(change.id, String(change.data.version));
      assert.ok(change.data.version > snapshot.data.version);
      assert.deepEqual(change.data.changes[0].addActors, ["a1"]);
      assert.equal("projectId" in change.data.changes[0], false, "the stream implies the project");

      // A client following the stream holds exactly the server's state: the same answers for any actor.
      const followed = follow(stream).state();
      for (const actor of ["a1", "m1", "x", "y", "z", "zz"]) {
        const local = evaluate(followed.flagsByName.get("first")!, [actor], followed.isMember, () => 0.99);
        const res = await server.request("GET", `/projects/${project}/flags/first/check?actorIds=${actor}`);
        assert.equal(local.enabled, res.body.enabled, actor);
      }
      // Heartbeats keep it alive.
      await waitFor("a heartbeat comment", () => stream.comments, { until: (n) => n >= 1 });
      await stream.close();
    });

    test("never carries a key hash or any secret; key and description writes send nothing", async () => {
      const stream = await EventStreamClient.open(url(), { key: reader.key });
      await stream.next("the snapshot", (e) => e.event === "snapshot");
      const key = await server.request("POST", `/projects/${project}/keys`, { body: { role: "read", name: "k" } });
      await server.request("POST", `/projects/${project}/webhooks`, {
        body: { url: "https://8.8.8.8/h", events: ["segment.deleted"] },
      });
      await server.request("POST", `/projects/${project}/flags/marker`, { body: {} });
      await stream.next("the marker", (e) => e.event === "change" && JSON.stringify(e.data).includes("marker"));
      const text = JSON.stringify(stream.events);
      assert.ok(!text.includes(key.body.key), "no key secret");
      assert.ok(!/[0-9a-f]{64}/.test(text), "no hash");
      assert.ok(!text.includes("whsec_"), "no webhook secret");
      assert.ok(stream.events.every((e) => e.event !== "change" || e.data.changes.length > 0));
      await stream.close();
    });

    test("Last-Event-ID resumes from the change log; an unknown or future id gets a fresh snapshot", async () => {
      const first = await EventStreamClient.open(url(), { key: reader.key });
      const snapshot = await first.next("the snapshot", (e) => e.event === "snapshot");
      await first.close();
      await server.request("POST", `/projects/${project}/flags/while-away`, { body: {} });
      await server.request("PATCH", `/projects/${project}/flags/while-away`, { body: { status: "enabled" } });

      const resumed = await EventStreamClient.open(url(), { key: reader.key, lastEventId: snapshot.id });
      const change = await resumed.next(
        "the missed enable",
        (e) => e.event === "change" && JSON.stringify(e.data).includes('"status":"enabled"'),
      );
      assert.ok(change);
      assert.equal(
        resumed.events.some((e) => e.event === "snapshot"),
        false,
        "a resumed stream replays, it does not start over",
      );
      const ids = resumed.events.map((e) => Number(e.id));
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
      assert.ok(ids.every((id) => id > Number(snapshot.id)));
      await resumed.close();

      for (const lastEventId of ["999999", "garbage"]) {
        const fresh = await EventStreamClient.open(url(), { key: reader.key, lastEventId });
        await fresh.next(`a snapshot for ${lastEventId}`, (e) => e.event === "snapshot");
        await fresh.close();
      }
      // A version the pruned log no longer holds: the snapshot again.
      await server.database.db.deleteFrom("feed_changes").where("stream", "=", project).execute();
      const pruned = await EventStreamClient.open(url(), { key: reader.key, lastEventId: snapshot.id });
      const again = await pruned.next("a snapshot after pruning", (e) => e.event === "snapshot");
      assert.ok(again.data.state.flags.some((f: any) => f.name === "while-away"));
      await pruned.close();
    });

    test("a revoked key's streams close at once; a deleted project's streams end", async () => {
      const doomedKey = await createKey(server, project, "read");
      const byKey = await EventStreamClient.open(url(), { key: doomedKey.key });
      const other = await EventStreamClient.open(url(), { key: reader.key });
      await byKey.next("the snapshot", (e) => e.event === "snapshot");
      await other.next("the snapshot", (e) => e.event === "snapshot");
      await server.request("DELETE", `/projects/${project}/keys/${doomedKey.id}`);
      await waitFor("the revoked key's stream to end", () => byKey.isEnded);
      assert.equal(other.isEnded, false, "other keys' streams go on");
      await other.close();

      const gone = await createProject(server);
      const goneReader = await createKey(server, gone, "read");
      const ending = await EventStreamClient.open(`${server.url}/projects/${gone}/stream`, { key: goneReader.key });
      await ending.next("the snapshot", (e) => e.event === "snapshot");
      const admin = await EventStreamClient.open(`${server.url}/projects/${gone}/stream`);
      await admin.next("the admin's snapshot", (e) => e.event === "snapshot");
      await server.request("DELETE", `/projects/${gone}`);
      await waitFor("the deleted project's streams to end", () => ending.isEnded && admin.isEnded);
    });

    test("refusals: no key, a check key, another project's key, an unknown project, HEAD", async () => {
      const checkKey = await createKey(server, project, "check");
      const elsewhere = await createProject(server);
      const otherReader = await createKey(server, elsewhere, "read");
      expectProblem(await server.request("GET", `/projects/${project}/stream`, { key: null }), 401, "unauthorized");
      expectProblem(
        await server.request("GET", `/projects/${project}/stream`, { key: checkKey.key }),
        403,
        "forbidden",
      );
      expectProblem(
        await server.request("GET", `/projects/${project}/stream`, { key: otherReader.key }),
        403,
        "forbidden",
      );
      expectProblem(await server.request("GET", "/projects/nope/stream"), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${project}/stream?x=1`), 400, "invalid_request");
      const head = await fetch(`${server.url}/projects/${project}/stream`, {
        method: "HEAD",
        headers: { authorization: `Bearer ${reader.key}` },
      });
      assert.equal(head.status, 405);
    });
  });

  describe(`project stream shutdown [${dialect}]`, () => {
    let fresh: FreshDatabase;
    before(async () => {
      fresh = await freshDatabase(dialect);
    });
    after(() => fresh.drop());

    test("shutdown ends open streams and still exits promptly", async () => {
      const server = await startServer({ dialect, database: fresh });
      const project = await createProject(server);
      const streams = await Promise.all(
        [1, 2, 3].map(() => EventStreamClient.open(`${server.url}/projects/${project}/stream`)),
      );
      for (const stream of streams) await stream.next("a snapshot", (e) => e.event === "snapshot");
      const started = performance.now();
      await server.stop();
      assert.ok(performance.now() - started < 5000, `stopped in ${Math.round(performance.now() - started)} ms`);
      await Promise.all(streams.map((s) => s.ended));
    });
  });
}

if (DIALECTS.includes("postgres")) {
  describe("project stream across instances [postgres]", () => {
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

    test("a client on instance B sees a change written on instance A, and a revocation on A closes it", async () => {
      const project = await createProject(a);
      const reader = await createKey(a, project, "read");
      await waitFor(
        "the key on B",
        async () => (await b.request("GET", `/projects/${project}/flags`, { key: reader.key })).status,
        {
          until: (s) => s === 200,
        },
      );
      const stream = await EventStreamClient.open(`${b.url}/projects/${project}/stream`, { key: reader.key });
      await stream.next("the snapshot", (e) => e.event === "snapshot");
      await a.request("POST", `/projects/${project}/flags/from-a`, { body: {} });
      await stream.next(
        "A's change on B's stream",
        (e) => e.event === "change" && JSON.stringify(e.data).includes("from-a"),
      );
      await a.request("DELETE", `/projects/${project}/keys/${reader.id}`);
      await waitFor("B to close the revoked key's stream", () => stream.isEnded);
    });
  });
}
