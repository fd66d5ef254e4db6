import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  startServer,
  TcpProxy,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import {
  createLocalEvaluator,
  type FetchLike,
  type LocalChange,
  type LocalEvaluator,
  type LocalEvaluatorError,
  type LocalEvaluatorOptions,
  type LocalEvaluatorStatus,
} from "../src/index.js";

/** A fetch that records each request's URL and headers. */
function recordingFetch(): { fetch: FetchLike; requests: { url: string; headers: Record<string, string> }[] } {
  const requests: { url: string; headers: Record<string, string> }[] = [];
  return {
    requests,
    fetch: (url, init) => {
      requests.push({ url, headers: { ...(init.headers as Record<string, string>) } });
      return globalThis.fetch(url, init);
    },
  };
}

/** Everything an evaluator emits, in order. */
function record(evaluator: LocalEvaluator) {
  const changes: LocalChange[] = [];
  const errors: LocalEvaluatorError[] = [];
  const statuses: LocalEvaluatorStatus[] = [];
  evaluator.on("change", (change) => changes.push(change));
  evaluator.on("error", (error) => errors.push(error));
  evaluator.on("status", (status) => statuses.push(status));
  return { changes, errors, statuses };
}

/** Resources of this process that keep it alive, by type, to tell whether an evaluator left any. */
function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) out[type] = (out[type] ?? 0) + 1;
  return out;
}

for (const dialect of DIALECTS) {
  describe(`local evaluator [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let reader: { key: string; id: string };
    const open: LocalEvaluator[] = [];
    const evaluator = (options: Partial<LocalEvaluatorOptions> = {}) => {
      const made = createLocalEvaluator({ url: server.url, key: reader.key, projectId: project, ...options });
      open.push(made);
      return made;
    };

    before(async () => {
      server = await startServer({ dialect, env: { STREAM_HEARTBEAT_MS: "200" } });
      project = await createProject(server, "local");
      reader = await createKey(server, project, "read");
      const seg = await server.request("POST", `/projects/${project}/segments`, { body: { name: "vips" } });
      await server.request("PATCH", `/projects/${project}/segments/${seg.body.id}`, { body: { addActors: ["vip"] } });
      await server.request("POST", `/projects/${project}/flags/on`, { body: {} });
      await server.request("PATCH", `/projects/${project}/flags/on`, { body: { status: "enabled" } });
      await server.request("POST", `/projects/${project}/flags/off`, { body: {} });
      await server.request("POST", `/projects/${project}/flags/targeted`, { body: {} });
      await server.request("PATCH", `/projects/${project}/flags/targeted`, {
        body: { status: "conditional", addActors: ["alice"], addSegments: [seg.body.id], percentageActors: 50 },
      });
    });
    after(async () => {
      await Promise.all(open.map((e) => e.close()));
      // Aborted fetches of streams can leave a connection the server counts as busy; its shutdown cuts
      // those after a 5 s grace (app.ts). Closing them here keeps the test from waiting out that grace.
      server.service.app.server.closeAllConnections();
      await server.close();
    });

    test("ready() loads the snapshot; evaluate answers as the server does, reasons included", async () => {
      const local = evaluator();
      assert.deepEqual(local.evaluate("on").reason, "ERROR");
      assert.equal((local.evaluate("on") as { errorCode?: string }).errorCode, "PROVIDER_NOT_READY");
      await local.ready();
      assert.ok(local.version > 0);
      assert.equal(local.status, "streaming");
      assert.deepEqual(local.flagNames(), ["off", "on", "targeted"]);
      const checkKey = await createKey(server, project, "check");
      for (const flag of ["on", "off", "targeted"]) {
        for (const actors of [[], ["alice"], ["vip"], ["bob"], ["carol"], ["dave", "erin"], ["x1", "x2", "x3"]]) {
          const mine = local.evaluate(flag, actors);
          const ofrep = await server.request("POST", `/ofrep/v1/evaluate/flags/${flag}`, {
            key: checkKey.key,
            body: { context: { actorIds: actors } },
          });
          assert.equal(ofrep.status, 200, ofrep.text);
          assert.deepEqual(
            { enabled: mine.enabled, reason: mine.reason },
            { enabled: ofrep.body.value, reason: ofrep.body.reason },
          );
          assert.equal(local.isEnabled(flag, actors), mine.enabled);
        }
      }
      assert.deepEqual(local.evaluate("nope"), {
        enabled: false,
        reason: "ERROR",
        variant: null,
        value: null,
        errorCode: "FLAG_NOT_FOUND",
        errorMessage: 'Flag "nope" does not exist.',
      });
      assert.equal(local.isEnabled("nope"), false);
      for (const bad of [
        [""],
        ["a\u0007"],
        [".."],
        ["x".repeat(257)],
        Array.from({ length: 101 }, (_, i) => `a${i}`),
      ]) {
        assert.equal(
          (local.evaluate("on", bad) as { errorCode?: string }).errorCode,
          "INVALID_CONTEXT",
          JSON.stringify(bad),
        );
      }
      assert.equal(local.evaluate("on", ["é".repeat(256)]).enabled, true, "256 code points is allowed");
      await local.close();
      assert.equal(local.status, "closed");
      assert.equal(local.evaluate("on").enabled, true, "the last state still answers after close()");
    });

    test("a change on the server reaches it as a change event naming the flags", async () => {
      const local = evaluator();
      const { changes } = record(local);
      await local.ready();
      const before = local.version;
      await server.request("PATCH", `/projects/${project}/flags/off`, { body: { status: "enabled" } });
      await waitFor("the change", () => changes.find((c) => c.flags.includes("off")));
      assert.ok(local.version > before);
      assert.equal(local.evaluate("off").reason, "STATIC");
      assert.equal(changes.at(-1)?.snapshot, false);

      // Segment members: every flag with the segment attached is named.
      const segs = await server.request("GET", `/projects/${project}/segments`);
      const vips = segs.body.data.find((s: { name: string }) => s.name === "vips").id;
      await server.request("PATCH", `/projects/${project}/segments/${vips}`, { body: { addActors: ["newvip"] } });
      await waitFor("the member change", () => changes.find((c) => c.flags.includes("targeted")));
      assert.equal(local.evaluate("targeted", ["newvip"]).reason, "TARGETING_MATCH");

      // A deletion.
      await server.request("POST", `/projects/${project}/flags/short-lived`, { body: {} });
      await server.request("DELETE", `/projects/${project}/flags/short-lived`);
      await waitFor(
        "the deletion",
        () => changes.some((c) => c.flags.includes("short-lived")) && local.evaluate("short-lived").reason === "ERROR",
      );
      await server.request("PATCH", `/projects/${project}/flags/off`, { body: { status: "disabled" } });
      await waitFor("the flag back off", () => local.evaluate("off").reason, { until: (r) => r === "DISABLED" });
      await local.close();
    });

    test("a dropped connection resumes with Last-Event-ID, with no snapshot", async () => {
      const port = Number(new URL(server.url).port);
      const proxy = new TcpProxy("127.0.0.1", port);
      await proxy.start();
      const recording = recordingFetch();
      const local = evaluator({ url: `http://127.0.0.1:${proxy.port}`, fetch: recording.fetch, retryDelayMs: 100 });
      const { changes, statuses, errors } = record(local);
      await local.ready();
      const atCut = local.version;
      proxy.cut();
      await waitFor("the evaluator to notice", () => statuses.includes("reconnecting"));
      await server.request("PATCH", `/projects/${project}/flags/targeted`, { body: { addActors: ["while-away"] } });
      proxy.restore();
      await waitFor("the missed change", () => changes.find((c) => c.flags.includes("targeted")));
      assert.equal(local.evaluate("targeted", ["while-away"]).reason, "TARGETING_MATCH");
      assert.equal(local.status, "streaming");
      assert.ok(
        changes.every((c) => !c.snapshot),
        "resumed, not started over",
      );
      assert.equal(recording.requests[0]?.headers["last-event-id"], undefined);
      const resumed = recording.requests.slice(1);
      assert.ok(resumed.length >= 1);
      assert.ok(
        resumed.every((r) => r.headers["last-event-id"] === String(atCut)),
        JSON.stringify(resumed),
      );
      assert.ok(errors.every((e) => !e.fatal));
      await local.close();
      await proxy.stop();
    });

    test("a revoked key stops it with a fatal 401; a check key is refused with 403 before ready", async () => {
      const doomed = await createKey(server, project, "read");
      const local = evaluator({ key: doomed.key, retryDelayMs: 50 });
      const { errors, statuses } = record(local);
      await local.ready();
      await server.request("DELETE", `/projects/${project}/keys/${doomed.id}`);
      await waitFor("the stop", () => local.status, { until: (s) => s === "stopped" });
      assert.equal(local.error?.status, 401);
      assert.equal(local.error?.code, "unauthorized");
      assert.deepEqual(
        errors.filter((e) => e.fatal).map((e) => e.error.code),
        ["unauthorized"],
      );
      assert.equal(statuses.at(-1), "stopped");
      assert.equal(local.evaluate("on").enabled, true, "the last state still answers");

      const checkKey = await createKey(server, project, "check");
      const refused = evaluator({ key: checkKey.key });
      await assert.rejects(refused.ready(), { status: 403, code: "forbidden" });
      assert.equal(refused.status, "stopped");
      assert.equal((refused.evaluate("on") as { errorCode?: string }).errorCode, "PROVIDER_NOT_READY");
      const nowhere = evaluator({ projectId: "no-such-project" });
      await assert.rejects(
        nowhere.ready(),
        (error: { status?: number }) => error.status === 403 || error.status === 404,
      );
    });

    test("an admin key's evaluator stops with a fatal 404 when its project is deleted, and asks no more", async () => {
      // An admin key outlives the project: the reconnection after the stream ends is answered 404.
      const doomed = await createProject(server, "doomed");
      await server.request("POST", `/projects/${doomed}/flags/on`, { body: {} });
      const recording = recordingFetch();
      const local = evaluator({ key: ADMIN_KEY, projectId: doomed, fetch: recording.fetch, retryDelayMs: 20 });
      const { errors } = record(local);
      await local.ready();
      await server.request("DELETE", `/projects/${doomed}`);
      await waitFor("the stop", () => local.status, { until: (s) => s === "stopped" });
      assert.equal(local.error?.status, 404);
      assert.equal(local.error?.code, "project_not_found");
      assert.deepEqual(
        errors.map((e) => [e.error.code, e.fatal]),
        [["project_not_found", true]],
      );
      const asked = recording.requests.length;
      assert.equal(asked, 2, "the stream, then the one reconnection the 404 answered");
      assert.equal(local.evaluate("on").reason, "DISABLED", "the last state still answers");
      await local.close();
      assert.equal(recording.requests.length, asked);
    });

    test("streaming cut short again and again falls back to polling, which still brings changes", async () => {
      // A fetch that ends every stream 300 ms after it opened, as a proxy with a short timeout would.
      const cutting: FetchLike = async (url, init) => {
        const cut = new AbortController();
        init.signal?.addEventListener("abort", () => cut.abort(), { once: true });
        const response = await globalThis.fetch(url, { ...init, signal: cut.signal });
        if (!response.body) return response;
        const reader = response.body.getReader();
        const timer = setTimeout(() => cut.abort(), 300);
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            try {
              const { value, done } = await reader.read();
              if (done) controller.close();
              else controller.enqueue(value);
            } catch {
              clearTimeout(timer);
              controller.close();
            }
          },
          cancel: () => {
            clearTimeout(timer);
            cut.abort();
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      };
      const local = evaluator({
        fetch: cutting,
        retryDelayMs: 20,
        shortStreamMs: 2000,
        pollAfterFailures: 2,
        pollIntervalMs: 200,
        pollWindowMs: 500,
      });
      const { changes, statuses } = record(local);
      await local.ready();
      await waitFor("polling", () => statuses.includes("polling"));
      await server.request("PATCH", `/projects/${project}/flags/targeted`, { body: { addActors: ["polled"] } });
      await waitFor("the polled change", () => changes.find((c) => c.flags.includes("targeted")));
      assert.equal(local.evaluate("targeted", ["polled"]).reason, "TARGETING_MATCH");
      await local.close();
    });

    test("an answer that is not an event stream is reported as blocked, and ready() can time out", async () => {
      const blocked: FetchLike = async () =>
        new Response("<html>proxy says no</html>", { status: 200, headers: { "content-type": "text/html" } });
      const local = evaluator({ fetch: blocked, retryDelayMs: 10, pollAfterFailures: 2, pollIntervalMs: 50 });
      const { errors, statuses } = record(local);
      await assert.rejects(local.ready(300), { code: "timeout" });
      assert.ok(errors.some((e) => !e.fatal && e.error.code === "stream_blocked"));
      assert.ok(statuses.includes("polling"));
      await local.close();
      await assert.rejects(local.ready(), { code: "closed" });
    });

    test("close() stops cleanly: no timer or socket left, whatever it was doing", async () => {
      // Let the other tests' connections settle first.
      await waitFor("a quiet process", () => resources().TCPSocketWrap ?? 0, {
        until: (n) => n <= 10,
        timeoutMs: 2000,
      }).catch(() => {});
      const baseline = resources();
      const streaming = evaluator();
      await streaming.ready();
      const port = Number(new URL(server.url).port);
      const proxy = new TcpProxy("127.0.0.1", port);
      await proxy.start();
      const waiting = evaluator({ url: `http://127.0.0.1:${proxy.port}`, retryDelayMs: 60_000 });
      await waiting.ready();
      proxy.cut();
      await waitFor("the backoff", () => waiting.status, { until: (s) => s === "reconnecting" });
      const blocked = evaluator({
        fetch: async () => new Response("no", { status: 200, headers: { "content-type": "text/plain" } }),
        pollAfterFailures: 1,
        pollIntervalMs: 60_000,
      });
      await waitFor("polling", () => blocked.status, { until: (s) => s === "polling" });
      const started = performance.now();
      await Promise.all([streaming.close(), waiting.close(), blocked.close()]);
      assert.ok(performance.now() - started < 1000, "close() does not wait for a backoff or a poll");
      await proxy.stop();
      await waitFor("the evaluators' timers and sockets to go", () => resources(), {
        until: (now) =>
          (now.Timeout ?? 0) <= (baseline.Timeout ?? 0) && (now.TCPSocketWrap ?? 0) <= (baseline.TCPSocketWrap ?? 0),
        timeoutMs: 5000,
      });
    });
  });
}
