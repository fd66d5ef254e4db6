// A project stream's snapshot is encoded once per environment and project version, and the same bytes
// go to every stream that opens at that version (issue 34); a change set's event is encoded once per
// environment for every stream that follows it. Read over real HTTP, byte for byte.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { ProjectState, type ProjectStateJSON } from "@flagstaff/core";
import {
  createProject,
  DIALECTS,
  EventStreamClient,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { addEnvironment, bindKey, type Key, patchFlag } from "./helpers/environments.js";

/** A stream read as raw bytes; the first event (the snapshot) ends at the first blank line. */
interface RawStream {
  readonly request: http.ClientRequest;
  response: http.IncomingMessage | undefined;
  readonly bytes: Buffer[];
  /** The bytes up to and including the first event's blank line, once they have all arrived. */
  firstEvent(): Buffer | undefined;
}

function openRaw(server: TestServer, path: string, key: string, paused = false): Promise<RawStream> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const stream: RawStream = {
      request: http.get(url, { headers: { accept: "text/event-stream", authorization: `Bearer ${key}` } }),
      response: undefined,
      bytes: [],
      firstEvent() {
        const all = Buffer.concat(this.bytes);
        const end = all.indexOf("\n\n");
        return end < 0 ? undefined : all.subarray(0, end + 2);
      },
    };
    stream.request.on("error", reject);
    stream.request.on("response", (response) => {
      stream.response = response;
      response.on("data", (chunk: Buffer) => stream.bytes.push(chunk));
      response.on("error", () => {});
      if (paused) response.pause();
      resolve(stream);
    });
  });
}

const closeRaw = (stream: RawStream) => stream.request.destroy();

/** The snapshot counters of /metrics: encoded (a stream made the bytes) and shared (it reused them). */
async function snapshotCounts(server: TestServer): Promise<{ encoded: number; shared: number }> {
  const text = (await server.request("GET", "/metrics")).text;
  const count = (label: string) =>
    Number(text.match(new RegExp(`^flagstaff_stream_snapshots_total\\{bytes="${label}"\\} (\\d+)$`, "m"))?.[1] ?? 0);
  return { encoded: count("encoded"), shared: count("shared") };
}

/** The state a snapshot event's bytes carry. */
function stateOf(event: Buffer): { version: number; state: ProjectState; json: ProjectStateJSON } {
  const data = event.toString("utf8").split("\ndata: ")[1]!;
  const parsed = JSON.parse(data) as { version: number; state: ProjectStateJSON };
  return { version: parsed.version, state: ProjectState.fromJSON(parsed.state), json: parsed.state };
}

for (const dialect of DIALECTS) {
  describe(`a snapshot encoded once for every stream at its version [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let reader: Key;
    let stagingReader: Key;
    const path = () => `/projects/${project}/stream`;

    before(async () => {
      server = await startServer({ dialect, env: { STREAM_HEARTBEAT_MS: "60000" } });
      project = await createProject(server);
      await addEnvironment(server, project, "staging");
      reader = await bindKey(server, project, "read", "production");
      stagingReader = await bindKey(server, project, "read", "staging");
      await server.request("POST", `/projects/${project}/flags/banner`, { body: {} });
      await patchFlag(server, project, "banner", "staging", { status: "conditional", addActors: ["alice"] });
      // Enough segment members that the snapshot spans several of its 64 KiB chunks.
      const segment = await server.request("POST", `/projects/${project}/segments`, { body: { name: "many" } });
      for (let batch = 0; batch < 4; batch++) {
        const addActors = Array.from({ length: 1000 }, (_, i) => `member-${batch}-${String(i).padStart(40, "0")}`);
        const res = await server.request("PATCH", `/projects/${project}/segments/${segment.body.id}`, {
          body: { addActors },
        });
        assert.equal(res.status, 200);
      }
    });
    after(() => server.close());

    test("streams opening at one version get the same bytes, encoded once; a slow reader holds back no one", async () => {
      const before = await snapshotCounts(server);
      // One stream that reads nothing yet, then three that read at once.
      const slow = await openRaw(server, path(), reader.key, true);
      const fast = await Promise.all([1, 2, 3].map(() => openRaw(server, path(), reader.key)));
      try {
        const events = (await waitFor("the three fast streams' snapshots", () => {
          const firsts = fast.map((s) => s.firstEvent());
          return firsts.every((e) => e !== undefined) ? (firsts as Buffer[]) : undefined;
        }))!;
        assert.ok(events[0]!.length > 3 * 64 * 1024, `the snapshot spans several chunks (${events[0]!.length} bytes)`);
        for (const event of events.slice(1)) assert.ok(event.equals(events[0]!), "the same bytes");
        assert.equal(slow.firstEvent(), undefined, "the paused stream has not read its snapshot");
        slow.response!.resume();
        const slowEvent = (await waitFor("the slow stream's snapshot", () => slow.firstEvent()))!;
        assert.ok(slowEvent.equals(events[0]!), "the slow stream gets the same bytes too");

        const { version, state, json } = stateOf(events[0]!);
        assert.match(events[0]!.toString("utf8"), new RegExp(`^id: ${version}\nevent: snapshot\ndata: `));
        assert.deepEqual(
          Object.values(json.segments).map((members) => members.length),
          [4000],
        );
        assert.equal(state.flagsByName.get("banner")?.status, "disabled", "production's configuration");

        const after = await snapshotCounts(server);
        assert.deepEqual(
          { encoded: after.encoded - before.encoded, shared: after.shared - before.shared },
          { encoded: 1, shared: 3 },
        );
      } finally {
        for (const stream of [slow, ...fast]) closeRaw(stream);
      }
    });

    test("each environment has its own snapshot, and a new version is encoded afresh", async () => {
      const before = await snapshotCounts(server);
      const production = await openRaw(server, path(), reader.key);
      const staging = await openRaw(server, path(), stagingReader.key);
      try {
        const productionEvent = (await waitFor("production's snapshot", () => production.firstEvent()))!;
        const stagingEvent = (await waitFor("staging's snapshot", () => staging.firstEvent()))!;
        assert.equal(stateOf(productionEvent).state.flagsByName.get("banner")?.status, "disabled");
        assert.equal(stateOf(stagingEvent).state.flagsByName.get("banner")?.status, "conditional");
        const middle = await snapshotCounts(server);
        // Production's may be the one the first test encoded (same version), staging's is made now.
        assert.ok(middle.encoded - before.encoded >= 1 && middle.encoded - before.encoded <= 2);

        await patchFlag(server, project, "banner", "production", { status: "enabled" });
        const later = await openRaw(server, path(), reader.key);
        try {
          const laterEvent = (await waitFor("the snapshot after a change", () => later.firstEvent()))!;
          const { version, state } = stateOf(laterEvent);
          assert.ok(version > stateOf(productionEvent).version, "a later version");
          assert.equal(state.flagsByName.get("banner")?.status, "enabled", "the state at its version");
          const end = await snapshotCounts(server);
          assert.equal(end.encoded - middle.encoded, 1, "the new version is encoded once");
        } finally {
          closeRaw(later);
        }
      } finally {
        closeRaw(production);
        closeRaw(staging);
      }
    });

    test("a change set's event is the same bytes on every stream of an environment, and each environment sees its own", async () => {
      const streams = await Promise.all([
        EventStreamClient.open(`${server.url}${path()}`, { key: reader.key }),
        EventStreamClient.open(`${server.url}${path()}`, { key: reader.key }),
        EventStreamClient.open(`${server.url}${path()}`, { key: stagingReader.key }),
      ]);
      try {
        for (const stream of streams) await stream.next("the snapshot", (e) => e.event === "snapshot");
        await patchFlag(server, project, "banner", "staging", { addActors: ["bob"] });
        await patchFlag(server, project, "banner", "production", { status: "disabled" });
        const [first, second, staging] = await Promise.all(
          streams.map((stream) =>
            waitFor("the changes", () => {
              const changes = stream.events.filter((e) => e.event === "change");
              return changes.length >= 1 && changes.some((c) => c.data.changes.length > 0) ? changes : undefined;
            }),
          ),
        );
        await waitFor("production's streams see their change", () =>
          [first!, second!].every((changes) => changes.length === 1) ? true : undefined,
        );
        assert.deepEqual(first, second, "the same change events on both production streams");
        const productionChange = first![0]!;
        assert.ok(productionChange.data.changes.every((c: { kind: string }) => c.kind.startsWith("flag.")));
        // Staging's stream saw staging's change only (production's set moved nothing of staging's state).
        await waitFor("staging's change", () => (staging!.length >= 1 ? true : undefined));
        assert.ok(staging!.every((event) => event.id !== productionChange.id));
      } finally {
        for (const stream of streams) await stream.close();
      }
    });
  });
}
