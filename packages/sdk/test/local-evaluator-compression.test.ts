// The local evaluator asks for a compressed project stream (Flagstaff-Stream-Encoding: gzip, each event a
// gzip member; see the server's stream-compression test) on Node.js with its default fetch, and not with a
// fetch of its own unless told to; either way it follows the project.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import { createLocalEvaluator, type FetchLike } from "../src/index.js";

for (const dialect of DIALECTS) {
  describe(`the local evaluator's compressed stream [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let readKey: string;
    const write = async (name: string, body: Record<string, unknown>, method: "POST" | "PATCH" = "PATCH") => {
      const res = await server.request(method, `/projects/${project}/flags/${name}`, { body });
      assert.ok(res.status < 300, res.text);
    };

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      readKey = (await createKey(server, project, "read")).key;
      await write("flag-010", {}, "POST");
    });
    after(() => server.close());

    test("it asks for it with compressStream, not with a fetch of its own by default; the default fetch asks with its default fetch, and not with a fetch of its own", async () => {
      const asked: (string | null)[] = [];
      const encodings: (string | null)[] = [];
      const recording: FetchLike = async (url, init) => {
        const headers = new Headers(init?.headers as Record<string, string>);
        asked.push(headers.get("flagstaff-stream-encoding"));
        const res = await globalThis.fetch(url, init);
        encodings.push(res.headers.get("content-encoding"));
        return res;
      };
      for (const [compressStream, expected] of [
        [undefined, null],
        [true, "gzip"],
      ] as const) {
        asked.length = 0;
        encodings.length = 0;
        const evaluator = createLocalEvaluator({
          url: server.url,
          key: readKey,
          projectId: project,
          fetch: recording,
          ...(compressStream === undefined ? {} : { compressStream }),
        });
        try {
          await evaluator.ready(10_000);
          assert.deepEqual([asked[0], encodings[0]], [expected, expected]);
          // The compressed stream carries changes as the plain one does.
          await write("flag-010", { status: compressStream ? "enabled" : "disabled" });
          await waitFor("the change", () => evaluator.evaluate("flag-010").reason, {
            until: (reason) => reason === (compressStream ? "STATIC" : "DISABLED"),
          });
        } finally {
          evaluator.close();
        }
      }
    });

    test("with its default fetch on Node.js it asks, and reads the compressed stream", async () => {
      const original = globalThis.fetch;
      const asked: (string | null)[] = [];
      const encodings: (string | null)[] = [];
      // The global fetch, watched: the evaluator's default calls globalThis.fetch at each request.
      globalThis.fetch = (async (url: string, init?: RequestInit) => {
        asked.push(new Headers(init?.headers as Record<string, string>).get("flagstaff-stream-encoding"));
        const res = await original(url, init);
        encodings.push(res.headers.get("content-encoding"));
        return res;
      }) as typeof fetch;
      const evaluator = createLocalEvaluator({ url: server.url, key: readKey, projectId: project });
      try {
        await evaluator.ready(10_000);
        assert.deepEqual([asked[0], encodings[0]], ["gzip", "gzip"]);
        await write("flag-010", { status: "enabled" });
        await waitFor("the change", () => evaluator.evaluate("flag-010").reason, { until: (r) => r === "STATIC" });
      } finally {
        evaluator.close();
        globalThis.fetch = original;
      }
    });
  });
}
