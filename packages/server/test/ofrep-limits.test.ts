import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { loadConfig } from "../src/kernel/config.js";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

/** A body of `bytes` bytes or a little more: a context whose one extra attribute is a long string. */
const paddedBody = (bytes: number) =>
  JSON.stringify({ context: { targetingKey: "alice", note: "x".repeat(Math.max(0, bytes - 45)) } });

/** An object nested `levels` deep below the context's attribute: {"a":{"a":…{}}}. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

for (const dialect of DIALECTS) {
  describe(`OFREP body and context limits [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let checkKey: string;
    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      await server.request("POST", `/projects/${project}/flags/on`, {});
      await server.request("PATCH", `/projects/${project}/flags/on`, { body: { status: "enabled" } });
    });
    after(() => server.close());

    const paths = ["/ofrep/v1/evaluate/flags/on", "/ofrep/v1/evaluate/flags"];
    const post = (path: string, body: unknown) => server.request("POST", path, { key: checkKey, body });
    const postRaw = (path: string, rawBody: string) =>
      server.request("POST", path, { key: checkKey, rawBody, headers: { "content-type": "application/json" } });

    test("evaluation bodies over 32 KiB are refused with 413 before they are read; other routes keep 1 MiB", async () => {
      for (const path of paths) {
        const res = await postRaw(path, paddedBody(32 * 1024 + 1));
        expectProblem(res, 413, "payload_too_large");
        assert.match(res.body.detail, /32,768 bytes/);
        // The outside probe's body: 340,000 empty objects in 0.97 MiB.
        const probe = `{"context":{"targetingKey":"a","x":[${Array.from({ length: 340_000 }, () => "{}").join(",")}]}}`;
        expectProblem(await postRaw(path, probe), 413, "payload_too_large");
      }
      // The limit is the OFREP routes' own: a 64 KiB body elsewhere is read (and refused for what it says).
      const elsewhere = await server.request("POST", `/projects/${project}/segments`, {
        body: { name: "s", description: "d".repeat(64 * 1024) },
      });
      expectProblem(elsewhere, 400, "invalid_request");
    });

    test("a context of the largest kind a check takes (100 actor ids of 256 characters) fits the limit", async () => {
      const actorIds = Array.from({ length: 100 }, (_, i) => `${"a".repeat(250)}${String(i).padStart(6, "0")}`);
      const body = { context: { targetingKey: "b".repeat(256), actorIds, plan: "pro", country: "NZ" } };
      assert.ok(JSON.stringify(body).length > 26_000);
      for (const path of paths) assert.equal((await post(path, body)).status, 200);
      assert.equal((await postRaw(paths[0] as string, paddedBody(32 * 1024 - 10))).status, 200);
    });

    test("contexts of more than 1,000 values or nested deeper than 8 levels are refused as INVALID_CONTEXT", async () => {
      for (const path of paths) {
        const single = path.endsWith("/on");
        // context, targetingKey, list and 998 items: 1,001 values.
        const tooMany = await post(path, {
          context: { targetingKey: "a", list: Array.from({ length: 998 }, () => 0) },
        });
        assert.equal(tooMany.status, 400, tooMany.text);
        assert.equal(tooMany.body.errorCode, "INVALID_CONTEXT");
        assert.match(tooMany.body.errorDetails, /more than 1,000 values/);
        if (single) assert.equal(tooMany.body.key, "on");
        // Empty objects count too: they were the probe's filler.
        const empties = await post(path, { context: { x: Array.from({ length: 1001 }, () => ({})) } });
        assert.equal(empties.body.errorCode, "INVALID_CONTEXT");
        const tooDeep = await post(path, { context: { targetingKey: "a", user: nested(9) } });
        assert.equal(tooDeep.status, 400, tooDeep.text);
        assert.equal(tooDeep.body.errorCode, "INVALID_CONTEXT");
        assert.match(tooDeep.body.errorDetails, /deeper than 8 levels/);
        // Fields beside the context count as well.
        const beside = await post(path, { context: {}, extra: Array.from({ length: 1001 }, () => 1) });
        assert.equal(beside.body.errorCode, "INVALID_CONTEXT");
        // At the limits: 1,000 values, 8 levels.
        const atCount = await post(path, {
          context: { targetingKey: "a", list: Array.from({ length: 997 }, () => 0) },
        });
        assert.equal(atCount.status, 200, atCount.text);
        const atDepth = await post(path, { context: { targetingKey: "a", user: nested(8) } });
        assert.equal(atDepth.status, 200, atDepth.text);
      }
    });
  });
}

describe("OFREP_BODY_LIMIT_BYTES", () => {
  test("defaults to 32 KiB and takes 4,096 to 1,048,576 bytes", () => {
    const base = { DATABASE_URL: "file::memory:" };
    assert.equal(loadConfig(base).ofrepBodyLimitBytes, 32 * 1024);
    assert.equal(loadConfig({ ...base, OFREP_BODY_LIMIT_BYTES: "65536" }).ofrepBodyLimitBytes, 65_536);
    for (const bad of ["4095", "1048577", "16k", "-1"])
      assert.throws(() => loadConfig({ ...base, OFREP_BODY_LIMIT_BYTES: bad }), /OFREP_BODY_LIMIT_BYTES/);
  });

  test("a raised limit is the OFREP routes' limit", async () => {
    const server = await startServer({
      dialect: DIALECTS[0] as (typeof DIALECTS)[number],
      env: { OFREP_BODY_LIMIT_BYTES: "65536" },
    });
    try {
      const project = await createProject(server);
      const key = (await createKey(server, project, "check")).key;
      const send = (bytes: number) =>
        server.request("POST", "/ofrep/v1/evaluate/flags", {
          key,
          rawBody: paddedBody(bytes),
          headers: { "content-type": "application/json" },
        });
      assert.equal((await send(60_000)).status, 200);
      const over = await send(65_537);
      expectProblem(over, 413, "payload_too_large");
      assert.match(over.body.detail, /65,536 bytes/);
    } finally {
      await server.close();
    }
  });
});
