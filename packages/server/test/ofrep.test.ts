import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { ErrorCode, OpenFeature } from "@openfeature/server-sdk";
import { ADMIN_KEY, createKey, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";

for (const dialect of DIALECTS) {
  describe(`OFREP [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let checkKey: string;
    let segment: string;
    before(async () => {
      // Call rollouts always miss, so answers are deterministic.
      server = await startServer({ dialect, random: () => 0.999999 });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      segment = (await server.request("POST", `/projects/${project}/segments`, { body: { name: "beta" } })).body.id;
      await server.request("PATCH", `/projects/${project}/segments/${segment}`, { body: { addActors: ["bob"] } });
      for (const name of ["on", "off", "targeted", "split"])
        await server.request("POST", `/projects/${project}/flags/${name}`, {});
      await server.request("PATCH", `/projects/${project}/flags/on`, { body: { status: "enabled" } });
      await server.request("PATCH", `/projects/${project}/flags/targeted`, {
        body: { status: "conditional", addActors: ["alice"], addSegments: [segment] },
      });
      await server.request("PATCH", `/projects/${project}/flags/split`, {
        body: { status: "conditional", percentageActors: 100 },
      });
    });
    after(() => server.close());

    const evaluate = (key: string, body: unknown, apiKey = checkKey, headers: Record<string, string> = {}) =>
      server.request("POST", `/ofrep/v1/evaluate/flags/${encodeURIComponent(key)}`, { key: apiKey, body, headers });

    test("single evaluation: value, reason and variant for every status and rule", async () => {
      const cases: [string, string | undefined, boolean, string][] = [
        ["on", undefined, true, "STATIC"],
        ["off", "alice", false, "DISABLED"],
        ["targeted", "alice", true, "TARGETING_MATCH"],
        ["targeted", "bob", true, "TARGETING_MATCH"],
        ["targeted", "carol", false, "DEFAULT"],
        ["split", "carol", true, "SPLIT"],
      ];
      for (const [key, targetingKey, value, reason] of cases) {
        const res = await evaluate(key, { context: targetingKey === undefined ? {} : { targetingKey } });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { key, value, reason, variant: value ? "on" : "off", metadata: {} });
      }
    });

    test("extra actorIds in the context count like a check's actorIds; other attributes are ignored", async () => {
      const res = await evaluate("targeted", {
        context: { targetingKey: "carol", actorIds: ["dave", "alice"], plan: "pro" },
      });
      assert.equal(res.body.value, true);
      const none = await evaluate("targeted", { context: { plan: "pro" } });
      assert.equal(none.body.value, false);
    });

    test("keys of every project role are accepted, as Bearer or X-API-Key; the key names the project", async () => {
      for (const role of ["check", "read", "write"] as const) {
        const key = (await createKey(server, project, role)).key;
        assert.equal((await evaluate("on", {}, key)).status, 200);
        const viaHeader = await server.request("POST", "/ofrep/v1/evaluate/flags/on", {
          key: null,
          headers: { "x-api-key": key },
          body: {},
        });
        assert.equal(viaHeader.status, 200);
      }
      const other = await createProject(server);
      const otherKey = (await createKey(server, other, "check")).key;
      const res = await evaluate("on", {}, otherKey);
      assert.equal(res.status, 404, "the other project has no flag named on");
      assert.equal(res.body.errorCode, "FLAG_NOT_FOUND");
    });

    test("admin keys get 403 and missing or unknown keys 401", async () => {
      assert.equal((await evaluate("on", {}, ADMIN_KEY)).status, 403);
      assert.equal((await evaluate("on", {}, null as unknown as string)).status, 401);
      assert.equal((await evaluate("on", {}, "fsk_nope")).status, 401);
    });

    test("errors keep the protocol's shapes", async () => {
      const missing = await evaluate("nope", {});
      assert.equal(missing.status, 404);
      assert.deepEqual(Object.keys(missing.body).sort(), ["errorCode", "errorDetails", "key"]);
      assert.equal(missing.body.errorCode, "FLAG_NOT_FOUND");
      assert.equal(missing.body.key, "nope");
      const parse = await server.request("POST", "/ofrep/v1/evaluate/flags/on", {
        key: checkKey,
        rawBody: "{bad",
        headers: { "content-type": "application/json" },
      });
      assert.equal(parse.status, 400);
      assert.equal(parse.body.errorCode, "PARSE_ERROR");
      const badContext = await evaluate("on", { context: { targetingKey: 5 } });
      assert.equal(badContext.status, 400);
      assert.equal(badContext.body.errorCode, "INVALID_CONTEXT");
      assert.equal(badContext.body.key, "on");
      const bulkBad = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body: { context: [] },
      });
      assert.equal(bulkBad.status, 400);
      assert.equal(bulkBad.body.errorCode, "INVALID_CONTEXT");
    });

    test("bulk evaluation answers every flag with an ETag; If-None-Match gets 304 until something changes", async () => {
      const body = { context: { targetingKey: "alice" } };
      const first = await server.request("POST", "/ofrep/v1/evaluate/flags", { key: checkKey, body });
      assert.equal(first.status, 200);
      assert.deepEqual(
        first.body.flags.map((f: { key: string; value: boolean }) => [f.key, f.value]),
        [
          ["off", false],
          ["on", true],
          ["split", true],
          ["targeted", true],
        ],
      );
      const etag = first.headers.get("etag");
      assert.ok(etag);
      const unchanged = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body,
        headers: { "if-none-match": etag },
      });
      assert.equal(unchanged.status, 304);
      const otherContext = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body: { context: { targetingKey: "carol" } },
        headers: { "if-none-match": etag },
      });
      assert.equal(otherContext.status, 200, "a different context is a different answer");
      // Writes that evaluation does not see leave the tag alone: a description, a key, a segment's name.
      await server.request("PATCH", `/projects/${project}/flags/off`, { body: { description: "touched" } });
      await createKey(server, project, "read");
      await server.request("PATCH", `/projects/${project}/segments/${segment}`, { body: { name: "beta testers" } });
      await server.request("PATCH", `/projects/${project}/flags/targeted`, { body: { addActors: ["alice"] } });
      const invisible = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body,
        headers: { "if-none-match": etag },
      });
      assert.equal(invisible.status, 304, "nothing evaluation sees changed");
      await server.request("PATCH", `/projects/${project}/flags/off`, { body: { percentageCalls: 5 } });
      const changed = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body,
        headers: { "if-none-match": etag },
      });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.get("etag"), etag);
      await server.request("PATCH", `/projects/${project}/flags/off`, { body: { percentageCalls: 0 } });
    });

    test("ETags are per project: another project's tag never earns a 304, even with the same history", async () => {
      // Two fresh projects written identically have the same stream versions.
      const [a, b] = [await createProject(server), await createProject(server)];
      const keys: string[] = [];
      for (const p of [a, b]) {
        await server.request("POST", `/projects/${p}/flags/same`, {});
        keys.push((await createKey(server, p, "check")).key);
      }
      const body = { context: { targetingKey: "alice" } };
      const fromA = await server.request("POST", "/ofrep/v1/evaluate/flags", { key: keys[0], body });
      assert.equal(fromA.status, 200);
      const tagA = fromA.headers.get("etag") as string;
      const fromB = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: keys[1],
        body,
        headers: { "if-none-match": tagA },
      });
      assert.equal(fromB.status, 200, "project B must get its own flags, not a 304 for A's tag");
      assert.notEqual(fromB.headers.get("etag"), tagA);
    });

    test("unknown query parameters are ignored on every OFREP route, as OFREP providers add their own", async () => {
      const single = await server.request("POST", "/ofrep/v1/evaluate/flags/on?flagConfigEtag=abc&future=1", {
        key: checkKey,
        body: { context: {} },
      });
      assert.equal(single.status, 200, single.text);
      const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags?flagConfigEtag=abc&x[]=1", {
        key: checkKey,
        body: { context: {} },
      });
      assert.equal(bulk.status, 200, bulk.text);
      const configuration = await server.request("GET", "/ofrep/v1/configuration?anything=else", { key: checkKey });
      assert.equal(configuration.status, 200, configuration.text);
    });

    test("the configuration endpoint describes the flag types and polling", async () => {
      const res = await server.request("GET", "/ofrep/v1/configuration", { key: checkKey });
      assert.equal(res.status, 200);
      assert.equal(res.body.name, "flagstaff");
      assert.deepEqual(res.body.capabilities.flagEvaluation.supportedTypes, ["boolean", "string", "number", "object"]);
    });

    test("the stock @openfeature/ofrep-provider evaluates against the running server", async () => {
      const domain = `ofrep-${dialect}`;
      await OpenFeature.setProviderAndWait(
        domain,
        new OFREPProvider({ baseUrl: server.url, headers: [["Authorization", `Bearer ${checkKey}`]] }),
      );
      const client = OpenFeature.getClient(domain);
      const alice = await client.getBooleanDetails("targeted", false, { targetingKey: "alice" });
      assert.equal(alice.value, true);
      assert.equal(alice.reason, "TARGETING_MATCH");
      assert.equal(alice.variant, "on");
      assert.equal(await client.getBooleanValue("targeted", true, { targetingKey: "carol" }), false);
      assert.equal(await client.getBooleanValue("on", false), true);
      const missing = await client.getBooleanDetails("does-not-exist", true, { targetingKey: "alice" });
      assert.equal(missing.value, true, "the caller's default");
      assert.equal(missing.errorCode, ErrorCode.FLAG_NOT_FOUND);
      const wrongType = await client.getStringDetails("on", "fallback");
      assert.equal(wrongType.value, "fallback");
      assert.equal(wrongType.errorCode, ErrorCode.TYPE_MISMATCH);
      await OpenFeature.clearProviders();
    });
  });
}
