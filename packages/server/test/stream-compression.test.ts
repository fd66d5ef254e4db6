// Compressed project streams (issue 34): a client that sends `Flagstaff-Stream-Encoding: gzip` gets
// `Content-Encoding: gzip`, each event a gzip member of its own, compressed once for every stream that
// sends the same bytes. Everyone else, browsers included (Chromium reads only a body's first member),
// gets the plain stream. Read over real HTTP as raw bytes (the SDK's side: packages/sdk/test).
import assert from "node:assert/strict";
import http from "node:http";
import { gunzipSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";

interface RawStream {
  readonly request: http.ClientRequest;
  readonly response: http.IncomingMessage;
  readonly bytes: Buffer[];
}

function openRaw(server: TestServer, path: string, key: string, headers: Record<string, string> = {}) {
  const url = new URL(path, server.url);
  return new Promise<RawStream>((resolve, reject) => {
    const request = http.get(url, {
      headers: { accept: "text/event-stream", authorization: `Bearer ${key}`, ...headers },
    });
    request.on("error", reject);
    request.on("response", (response) => {
      const stream = { request, response, bytes: [] as Buffer[] };
      response.on("data", (chunk: Buffer) => stream.bytes.push(chunk));
      response.on("error", () => {});
      resolve(stream);
    });
  });
}

/** The stream's text so far: the bytes as they came, or decompressed (every complete member). */
function textOf(stream: RawStream): string {
  const all = Buffer.concat(stream.bytes);
  if (stream.response.headers["content-encoding"] !== "gzip") return all.toString("utf8");
  return gunzipSync(all, { finishFlush: 2 /* Z_SYNC_FLUSH: a member still arriving is left out */ }).toString("utf8");
}

/** The events of a stream's text (comments left out), each with its event name and data. */
function eventsOf(text: string): { event: string; id?: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((block) => block.length > 0 && !block.startsWith(":"))
    .map((block) => {
      const field = (name: string) => block.match(new RegExp(`^${name}: (.*)$`, "m"))?.[1];
      return { event: field("event") ?? "message", id: field("id"), data: field("data") ?? "" };
    });
}

for (const dialect of DIALECTS) {
  describe(`compressed project streams [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let readKey: string;
    const streamPath = () => `/projects/${project}/stream`;
    const write = async (name: string, body: Record<string, unknown>, method: "POST" | "PATCH" = "PATCH") => {
      const res = await server.request(method, `/projects/${project}/flags/${name}`, { body });
      assert.ok(res.status < 300, res.text);
    };

    before(async () => {
      server = await startServer({ dialect, env: { STREAM_HEARTBEAT_MS: "200" } });
      project = await createProject(server);
      readKey = (await createKey(server, project, "read")).key;
      for (let i = 0; i < 50; i++) await write(`flag-${String(i).padStart(3, "0")}`, {}, "POST");
    });
    after(() => server.close());

    test("asked for, every event is a gzip member: the same events as the plain stream, a fraction of the bytes", async () => {
      const plain = await openRaw(server, streamPath(), readKey);
      const gzip = await openRaw(server, streamPath(), readKey, { "flagstaff-stream-encoding": "gzip" });
      assert.equal(plain.response.headers["content-encoding"], undefined);
      assert.equal(gzip.response.headers["content-encoding"], "gzip");
      assert.match(gzip.response.headers["content-type"] ?? "", /^text\/event-stream/);
      const snapshots = (s: RawStream) => eventsOf(textOf(s)).filter((e) => e.event === "snapshot");
      await waitFor("both snapshots", () => snapshots(plain).length + snapshots(gzip).length, {
        until: (n) => n === 2,
      });
      assert.deepEqual(snapshots(gzip), snapshots(plain));
      const plainBytes = Buffer.concat(plain.bytes).length;
      const gzipBytes = Buffer.concat(gzip.bytes).length;
      assert.ok(gzipBytes * 3 < plainBytes, `compressed ${gzipBytes} bytes, plain ${plainBytes}`);

      // A change arrives as a member of its own, readable as soon as it is in; heartbeats too.
      await write("flag-007", { status: "enabled" });
      const changes = (s: RawStream) => eventsOf(textOf(s)).filter((e) => e.event === "change");
      await waitFor("the change on both", () => changes(plain).length + changes(gzip).length, {
        until: (n) => n === 2,
      });
      assert.deepEqual(changes(gzip), changes(plain));
      await waitFor("a heartbeat on the compressed stream", () => textOf(gzip), {
        until: (text) => text.includes(": keep-alive\n\n"),
      });
      plain.request.destroy();
      gzip.request.destroy();
    });

    test("two compressed streams at one version are sent the very same bytes (compressed once)", async () => {
      await write("flag-008", { status: "enabled" });
      const a = await openRaw(server, streamPath(), readKey, { "flagstaff-stream-encoding": "gzip" });
      const b = await openRaw(server, streamPath(), readKey, { "flagstaff-stream-encoding": "gzip" });
      assert.deepEqual(
        [a, b].map((s) => s.response.headers["content-encoding"]),
        ["gzip", "gzip"],
      );
      const snapshot = (s: RawStream) => eventsOf(textOf(s)).find((e) => e.event === "snapshot");
      await waitFor("both snapshots", () => Boolean(snapshot(a) && snapshot(b)), { until: (ok) => ok });
      // Both start with the snapshot's members, then heartbeats (one shared member too).
      const first = Buffer.concat(a.bytes);
      const second = Buffer.concat(b.bytes);
      const length = Math.min(first.length, second.length);
      assert.ok(length > 0);
      assert.ok(first.subarray(0, length).equals(second.subarray(0, length)), "byte for byte");
      a.request.destroy();
      b.request.destroy();
    });

    test("a resumed compressed stream replays the changes it missed, compressed", async () => {
      const first = await openRaw(server, streamPath(), readKey, { "flagstaff-stream-encoding": "gzip" });
      const seen = (await waitFor("the snapshot", () =>
        eventsOf(textOf(first)).find((e) => e.event === "snapshot"),
      )) as { id?: string };
      first.request.destroy();
      await write("flag-009", { status: "enabled" });
      const resumed = await openRaw(server, streamPath(), readKey, {
        "flagstaff-stream-encoding": "gzip",
        "last-event-id": seen.id as string,
      });
      assert.equal(resumed.response.headers["content-encoding"], "gzip");
      const replayed = (await waitFor("the replayed change", () =>
        eventsOf(textOf(resumed)).find((e) => e.event === "change"),
      )) as { id?: string; data: string };
      assert.equal(Number(replayed.id), Number(seen.id) + 1);
      assert.match(replayed.data, /flag-009/);
      assert.equal(eventsOf(textOf(resumed)).filter((e) => e.event === "snapshot").length, 0);
      resumed.request.destroy();
    });

    test("not asked for, or asked for another encoding, the stream is plain, whatever Accept-Encoding says", async () => {
      for (const headers of <Record<string, string>[]>[
        { "accept-encoding": "gzip, deflate, br, zstd" },
        { "flagstaff-stream-encoding": "br", "accept-encoding": "gzip" },
      ]) {
        const stream = await openRaw(server, streamPath(), readKey, headers);
        assert.equal(stream.response.headers["content-encoding"], undefined, JSON.stringify(headers));
        await waitFor("the plain snapshot", () => Buffer.concat(stream.bytes).toString("utf8"), {
          until: (text) => text.startsWith("id: ") && text.includes("event: snapshot"),
        });
        stream.request.destroy();
      }
    });
  });
}
