// What a stream may cost the server (issue 21): snapshots written with backpressure, streams that stop
// reading closed, open streams capped per key and per instance, replays bounded.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  type StreamEvent,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { eventChunks } from "../src/features/stream/snapshot-event.js";

const isRefetch = (e: StreamEvent) => e.event === "message" && e.data?.type === "refetchEvaluation";

test("a snapshot event in chunks is byte for byte the event written in one go", () => {
  const members = Array.from({ length: 5000 }, (_, i) => `member-${i}-"quoted"-\u00e9\u2028-${"x".repeat(i % 7)}`);
  const data = {
    version: 42,
    state: {
      format: 1,
      flags: [
        {
          id: "f1",
          name: "one",
          status: "conditional",
          percentageActors: 25,
          percentageCalls: 0,
          actors: members.slice(0, 3000),
          segments: ["s1"],
        },
        {
          id: "f2",
          name: "two",
          status: "enabled",
          percentageActors: 0,
          percentageCalls: 100,
          actors: [],
          segments: [],
        },
      ],
      segments: { s1: members, "2": ["numeric-looking key"], s3: [] },
    },
  };
  const chunks = [...eventChunks(42, "snapshot", data)];
  assert.ok(chunks.length > 1, "more than one chunk");
  assert.equal(chunks.join(""), `id: 42\nevent: snapshot\ndata: ${JSON.stringify(data)}\n\n`);
  assert.ok(
    chunks.every((c) => c.length < 256 * 1024),
    "no chunk is the whole text",
  );
});

/** Opens a stream on a raw socket and never reads it: what a client that stopped reading looks like. */
function openUnread(server: TestServer, path: string, key: string): Promise<Socket> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      socket.pause();
      resolve(socket);
    });
    socket.on("error", reject);
  });
}

/** Reads a paused socket to its end; resolves with the bytes it held. */
async function drain(socket: Socket): Promise<number> {
  let bytes = 0;
  let ended = false;
  socket.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
  });
  socket.on("close", () => {
    ended = true;
  });
  socket.on("error", () => {});
  socket.resume();
  await waitFor("the server to end the unread stream", () => ended, { timeoutMs: 20_000 });
  return bytes;
}

for (const dialect of DIALECTS) {
  describe(`stream limits [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const path = () => `/projects/${project}/stream`;

    before(async () => {
      server = await startServer({
        dialect,
        env: {
          STREAM_MAX_PER_KEY: "2",
          OFREP_STREAM_MAX_PER_KEY: "1",
          STREAM_MAX_PER_INSTANCE: "5",
          STREAM_REPLAY_MAX_VERSIONS: "5",
          STREAM_REPLAY_MAX_BYTES: "1024",
        },
      });
      project = await createProject(server);
      await server.request("POST", `/projects/${project}/flags/first`, { body: {} });
    });
    after(() => server.close());

    test("open streams are capped per key (429) and per instance (503), with Retry-After; a closed one frees its slot", async () => {
      const a = await createKey(server, project, "read");
      const b = await createKey(server, project, "read");
      const check = await createKey(server, project, "check");
      const first = await EventStreamClient.open(server.url + path(), { key: a.key });
      const second = await EventStreamClient.open(server.url + path(), { key: a.key });
      assert.deepEqual([first.status, second.status], [200, 200]);
      const third = await server.request("GET", path(), { key: a.key });
      expectProblem(third, 429, "rate_limited");
      assert.equal(third.headers.get("retry-after"), "10");
      assert.match(third.body.detail, /2 open project streams/);

      // Another key still gets one; the OFREP event stream has a per-key cap of its own.
      const other = await EventStreamClient.open(server.url + path(), { key: b.key });
      assert.equal(other.status, 200);
      const ofrep = await EventStreamClient.open(`${server.url}/ofrep/v1/event-stream`, { key: check.key });
      assert.equal(ofrep.status, 200);
      await ofrep.next("the first refetch", isRefetch);
      const ofrepAgain = await server.request("GET", "/ofrep/v1/event-stream", { key: check.key });
      expectProblem(ofrepAgain, 429, "rate_limited");
      assert.equal(ofrepAgain.headers.get("retry-after"), "10");

      // A fifth stream fills the instance: then it refuses every key, for both kinds.
      const fifth = await EventStreamClient.open(server.url + path(), { key: b.key });
      assert.equal(fifth.status, 200);
      const full = await server.request("GET", path(), { key: b.key });
      expectProblem(full, 503, "busy");
      assert.equal(full.headers.get("retry-after"), "10");
      const otherCheck = await createKey(server, project, "check");
      expectProblem(await server.request("GET", "/ofrep/v1/event-stream", { key: otherCheck.key }), 503, "busy");

      await first.close();
      const again = await waitFor(
        "the closed stream's slot to be free",
        () => EventStreamClient.open(server.url + path(), { key: a.key }),
        { until: (s) => s.status === 200 },
      );
      for (const stream of [second, other, ofrep, fifth, again]) await stream.close();
    });

    test("a resume further behind than the replay bound, in versions or in bytes, gets a snapshot", async () => {
      const reader = await createKey(server, project, "read");
      const url = server.url + path();
      for (let i = 0; i < 8; i++) await server.request("POST", `/projects/${project}/flags/many-${i}`, { body: {} });
      const now = await EventStreamClient.open(url, { key: reader.key });
      const current = Number((await now.next("the snapshot", (e) => e.event === "snapshot")).id);
      await now.close();

      // Last-Event-ID: 0 on a log longer than 5 versions: a snapshot, not the log from its start.
      const fromZero = await EventStreamClient.open(url, { key: reader.key, lastEventId: "0" });
      const first = await fromZero.next("the first event", () => true);
      assert.equal(first.event, "snapshot");
      assert.equal(Number(first.id), current);
      await fromZero.close();

      // Within the bound: the log, no snapshot.
      const near = await EventStreamClient.open(url, { key: reader.key, lastEventId: String(current - 3) });
      await near.next("the last missed change", (e) => e.event === "change" && Number(e.id) === current);
      assert.equal(near.events[0]?.event, "change");
      assert.ok(!near.events.some((e) => e.event === "snapshot"));
      await near.close();

      // One version behind, but that change holds more than 1,024 characters of JSON: a snapshot.
      const actors = Array.from({ length: 60 }, (_, i) => `a-rather-long-actor-id-${i}`);
      await server.request("PATCH", `/projects/${project}/flags/first`, { body: { addActors: actors } });
      const big = await EventStreamClient.open(url, { key: reader.key, lastEventId: String(current) });
      const bigFirst = await big.next("the first event", () => true);
      assert.equal(bigFirst.event, "snapshot");
      assert.deepEqual(bigFirst.data.state.flags.find((f: any) => f.name === "first").actors.length, 60);
      await big.close();
    });
  });

  describe(`a stream that stops reading [${dialect}]`, () => {
    let fresh: FreshDatabase;
    let server: TestServer;
    const project = "big";
    let reader: { key: string; id: string };
    const MEMBERS = 150_000;

    before(async () => {
      fresh = await freshDatabase(dialect);
      const seeding = await startServer({ dialect, database: fresh });
      await seeding.request("POST", "/projects", { body: { id: project, name: "big" } });
      const segment = await seeding.request("POST", `/projects/${project}/segments`, { body: { name: "everyone" } });
      await seeding.request("POST", `/projects/${project}/flags/gated`, { body: {} });
      await seeding.request("PATCH", `/projects/${project}/flags/gated`, {
        body: { status: "conditional", addSegments: [segment.body.id] },
      });
      reader = await createKey(seeding, project, "read");
      // 150,000 members with long ids: a snapshot of about 7 MB, more than loopback's socket buffers hold.
      const now = new Date().toISOString();
      await seeding.database.db.transaction().execute(async (trx) => {
        for (let start = 0; start < MEMBERS; start += 5000) {
          const rows = Array.from({ length: Math.min(5000, MEMBERS - start) }, (_, i) => ({
            segment_id: segment.body.id,
            project_id: project,
            actor_id: `member-${String(start + i).padStart(8, "0")}-with-a-long-enough-id-to-weigh`,
            seq: start + i + 1,
            added_at: now,
          }));
          await trx.insertInto("segment_actors").values(rows).execute();
        }
      });
      await seeding.stop();
      server = await startServer({
        dialect,
        database: fresh,
        env: { STREAM_STALL_TIMEOUT_MS: "300", STREAM_MAX_PER_KEY: "1", STREAM_HEARTBEAT_MS: "3600000" },
      });
    });
    after(async () => {
      await server?.stop();
      await fresh.drop();
    });

    test("its snapshot is written only as fast as it reads, and it is closed when it stops", async () => {
      const whole = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, { key: reader.key });
      const snapshot = await whole.next("the snapshot", (e) => e.event === "snapshot", 30_000);
      assert.equal(snapshot.data.state.segments[Object.keys(snapshot.data.state.segments)[0]!].length, MEMBERS);
      const size = `id: ${snapshot.id}\nevent: snapshot\ndata: ${JSON.stringify(snapshot.data)}\n\n`.length;
      assert.ok(size > 6_000_000, `a snapshot of ${size} bytes`);
      await whole.close();

      const unread = await openUnread(server, `/projects/${project}/stream`, reader.key);
      // The key may hold one stream: once the server has closed the unread one, another opens.
      const next = await waitFor(
        "the unread stream to be closed, freeing its key's slot",
        () => EventStreamClient.open(`${server.url}/projects/${project}/stream`, { key: reader.key }),
        { until: (s) => s.status === 200, timeoutMs: 20_000 },
      );
      await next.close();
      const received = await drain(unread);
      assert.ok(received < size - 1_000_000, `the server sent ${received} of ${size} bytes, not the whole snapshot`);
    });
  });
}
