// OFREP through the SDK (`client.ofrep`), against a real server on a real database over real HTTP: one
// flag and every flag, with actors and attributes; the bulk answer's ETag; and the failures: a wrong key,
// an unknown flag, a context the server refuses. Then, on a fake fetch, what no server here sends: a
// proxy's page, and a body that stalls past the timeout.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ADMIN_KEY, createKey, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import { type FetchLike, FlagstaffClient, FlagstaffError } from "../src/index.js";
import { rejectsWith } from "./assertions.js";

for (const dialect of DIALECTS) {
  describe(`SDK: OFREP against a real server (${dialect})`, () => {
    let server: TestServer;
    let projectId: string;
    let ofrep: FlagstaffClient["ofrep"];

    before(async () => {
      server = await startServer({ dialect });
      const admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      projectId = await createProject(server);
      await admin.flags.create(projectId, "on");
      await admin.flags.update(projectId, "on", { status: "enabled" });
      await admin.flags.create(projectId, "beta");
      await admin.flags.update(projectId, "beta", {
        status: "conditional",
        addActors: ["alice"],
        rules: [
          {
            id: "pro",
            conditions: [{ attribute: "plan", operator: "in", values: ["pro"] }],
            serve: { variant: "on" },
          },
        ],
      });
      const { key } = await createKey(server, projectId, "check");
      ofrep = new FlagstaffClient({ baseUrl: server.url, apiKey: key }).ofrep;
    });
    after(async () => {
      await server?.close();
    });

    test("evaluate: one flag for the context's actors and attributes, with OFREP's reason", async () => {
      assert.deepEqual(await ofrep.evaluate("on"), {
        key: "on",
        value: true,
        reason: "STATIC",
        variant: "on",
        metadata: {},
      });
      const byActor = await ofrep.evaluate("beta", { targetingKey: "alice" });
      assert.deepEqual([byActor.value, byActor.reason, byActor.variant], [true, "TARGETING_MATCH", "on"]);
      const byMoreActors = await ofrep.evaluate("beta", { targetingKey: "bob", actorIds: ["alice"] });
      assert.equal(byMoreActors.reason, "TARGETING_MATCH");
      const byRule = await ofrep.evaluate("beta", { targetingKey: "bob", plan: "pro" });
      assert.deepEqual([byRule.value, byRule.reason], [true, "TARGETING_MATCH"]);
      const otherwise = await ofrep.evaluate("beta", { targetingKey: "bob", plan: "free" });
      assert.deepEqual([otherwise.value, otherwise.reason, otherwise.variant], [false, "DEFAULT", "off"]);
    });

    test("evaluateAll: every flag, the event stream, and 304 (notModified) while the ETag holds", async () => {
      const answer = await ofrep.evaluateAll({ targetingKey: "alice" });
      assert.equal(answer.notModified, false);
      if (answer.notModified) return;
      assert.deepEqual(answer.flags.map((flag) => flag.key).sort(), ["beta", "on"]);
      assert.ok(answer.flags.every((flag) => "value" in flag && flag.value === true));
      assert.match(answer.eventStreams?.[0]?.endpoint?.requestUri ?? "", /^\/ofrep\/v1\/event-stream\?token=/);
      assert.ok(answer.etag);
      assert.deepEqual(await ofrep.evaluateAll({ targetingKey: "alice" }, { ifNoneMatch: answer.etag }), {
        notModified: true,
        etag: answer.etag,
      });
      const other = await ofrep.evaluateAll({ targetingKey: "bob" }, { ifNoneMatch: answer.etag });
      assert.equal(other.notModified, false);
    });

    test("an unknown flag is 404 FLAG_NOT_FOUND, OFREP's failure in `body`", async () => {
      const error = await rejectsWith(ofrep.evaluate("no-such-flag"), 404, "FLAG_NOT_FOUND");
      assert.deepEqual(Object.keys(error.body as object).sort(), ["errorCode", "errorDetails", "key"]);
      assert.equal((error.body as { key: string }).key, "no-such-flag");
      assert.equal(error.detail, (error.body as { errorDetails: string }).errorDetails);
      assert.equal(error.problem, undefined);
    });

    test("a context the server refuses is 400 INVALID_CONTEXT, for one flag and for all", async () => {
      const bad = { targetingKey: "a\u0000b" };
      const one = await rejectsWith(ofrep.evaluate("on", bad), 400, "INVALID_CONTEXT");
      assert.equal((one.body as { errorCode: string }).errorCode, "INVALID_CONTEXT");
      await rejectsWith(ofrep.evaluate("on", { actorIds: "alice" as unknown as string[] }), 400, "INVALID_CONTEXT");
      const all = await rejectsWith(ofrep.evaluateAll(bad), 400, "INVALID_CONTEXT");
      assert.deepEqual(Object.keys(all.body as object).sort(), ["errorCode", "errorDetails"]);
    });

    test("a wrong key is 401 unauthorized and an admin key 403, with the service's problem details", async () => {
      const wrong = new FlagstaffClient({ baseUrl: server.url, apiKey: "fsk_not-a-real-key-at-all-0123456789" });
      const refused = await rejectsWith(wrong.ofrep.evaluate("on"), 401, "unauthorized");
      assert.equal(refused.problem?.code, "unauthorized");
      assert.equal(refused.body, undefined);
      await rejectsWith(wrong.ofrep.evaluateAll(), 401, "unauthorized");
      const admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      const forbidden = await admin.ofrep.evaluate("on").catch((error: unknown) => error as FlagstaffError);
      assert.ok(forbidden instanceof FlagstaffError);
      assert.ok(forbidden.status === 401 || forbidden.status === 403, `${forbidden.status}`);
    });
  });
}

describe("SDK: OFREP answers no Flagstaff server gives", () => {
  const clientOn = (fetch: FetchLike, timeoutMs = 1000) =>
    new FlagstaffClient({ baseUrl: "http://flagstaff.invalid", apiKey: "k", timeoutMs, fetch });

  test("a proxy's page is http_error with its text in `body`; a 200 that is not JSON is invalid_response", async () => {
    const page = clientOn(async () => new Response("<html>Bad gateway</html>", { status: 502 }));
    const error = await rejectsWith(page.ofrep.evaluate("x"), 502, "http_error");
    assert.equal(error.body, "<html>Bad gateway</html>");
    const text = clientOn(async () => new Response("not json", { status: 200 }));
    assert.equal((await rejectsWith(text.ofrep.evaluate("x"), 200, "invalid_response")).body, "not json");
  });

  test("OFREP's 500 is http_error with {errorDetails} in `body`", async () => {
    const failing = clientOn(async () => new Response(JSON.stringify({ errorDetails: "logged" }), { status: 500 }));
    const error = await rejectsWith(failing.ofrep.evaluate("x"), 500, "http_error");
    assert.deepEqual(error.body, { errorDetails: "logged" });
  });

  test("the timeout covers a body that stalls, not only the headers", async () => {
    const stalling = clientOn(
      async (_url, init) =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"key":'));
              init.signal?.addEventListener("abort", () => controller.error(init.signal?.reason), { once: true });
            },
          }),
          { status: 200, headers: { "content-type": "application/json" } },
        ),
      200,
    );
    const started = performance.now();
    const error = await rejectsWith(stalling.ofrep.evaluate("x"), 0, "timeout");
    assert.match(error.detail, /within 200 ms/);
    assert.ok(performance.now() - started < 2000);
  });
});
