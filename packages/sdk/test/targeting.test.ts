import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import {
  createLocalEvaluator,
  FatalStreamError,
  FlagstaffClient,
  type FlagstaffError,
  type LocalChange,
  type LocalEvaluator,
  type LocalEvaluatorError,
} from "../src/index.js";

// Issue 25 through the SDK against a real server: typed flags, rules, rule-based segments and
// prerequisites written with the client; checked, evaluated and explained with attributes; evaluated by
// the local evaluator, which follows the new change kinds. And a stream state format the SDK cannot read
// stops the local evaluator with a clear error, over real HTTP.

for (const dialect of DIALECTS) {
  describe(`targeting through the SDK [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let admin: FlagstaffClient;
    let checker: FlagstaffClient;
    let local: LocalEvaluator;
    let segmentId: string;
    const changes: LocalChange[] = [];

    before(async () => {
      server = await startServer({ dialect, random: () => 0.999_999 });
      project = await createProject(server, "sdk-targeting");
      admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      checker = new FlagstaffClient({
        baseUrl: server.url,
        apiKey: (await createKey(server, project, "check")).key,
        checkCache: true,
      });
      const segment = await admin.segments.create(project, {
        name: "Staff",
        conditions: [{ attribute: "email", operator: "ends_with", values: ["@flagstaff.test"], caseInsensitive: true }],
      });
      segmentId = segment.id;
      assert.deepEqual(segment.conditions, [
        { attribute: "email", operator: "ends_with", values: ["@flagstaff.test"], caseInsensitive: true },
      ]);
      const created = await admin.flags.create(project, "theme", {
        type: "string",
        description: "Colour theme",
        variants: [
          { key: "light", value: "light", description: "The default" },
          { key: "dark", value: "dark" },
          { key: "contrast", value: "high-contrast" },
        ],
        onVariant: "dark",
        offVariant: "light",
      });
      assert.equal(created.type, "string");
      assert.deepEqual(
        [created.onVariant, created.offVariant, created.rules, created.prerequisites],
        ["dark", "light", [], []],
      );
      const updated = await admin.flags.update(project, "theme", {
        status: "conditional",
        rules: [
          {
            id: "nordics",
            description: "Long winters",
            conditions: [{ attribute: "country", operator: "in", values: ["NO", "SE", "FI"] }],
            serve: { variant: "dark" },
          },
          {
            id: "testers",
            conditions: [{ attribute: "tags", operator: "in", values: ["a11y"] }],
            serve: { variant: "contrast" },
          },
          { id: "staff", conditions: [{ operator: "in_segment", values: [segmentId] }], serve: { variant: "dark" } },
        ],
      });
      assert.deepEqual(
        updated.rules.map((r) => r.id),
        ["nordics", "testers", "staff"],
      );
      await admin.flags.create(project, "quota", {
        type: "number",
        variants: [
          { key: "small", value: 5 },
          { key: "large", value: 50 },
        ],
        onVariant: "large",
        offVariant: "small",
      });
      await admin.flags.update(project, "quota", {
        status: "enabled",
        prerequisites: [{ flag: "theme", variants: ["dark", "contrast"] }],
      });
      await admin.flags.create(project, "beta");
      await admin.flags.update(project, "beta", {
        status: "conditional",
        rules: [
          {
            id: "v2",
            conditions: [{ attribute: "version", operator: "semver_gte", values: ["2"] }],
            serve: { variant: "on" },
          },
        ],
      });
      const reader = (await createKey(server, project, "read")).key;
      local = createLocalEvaluator({ url: server.url, key: reader, projectId: project, random: () => 0.999_999 });
      local.on("change", (change) => changes.push(change));
      await local.ready(10_000);
    });
    after(async () => {
      await local.close();
      server.service.app.server.closeAllConnections();
      await server.close();
    });

    test("check answers a boolean for every type; evaluate the variant and value, attributes in the query", async () => {
      assert.equal(await checker.flags.check(project, "beta", { attributes: { version: "2.1.0" } }), true);
      assert.equal(await checker.flags.check(project, "beta", { attributes: { version: "1.9" } }), false);
      assert.equal(await checker.flags.check(project, "beta", { attributes: { version: 2 } }), true);
      assert.deepEqual(await checker.flags.evaluate(project, "beta", { attributes: { version: "v3" } }), {
        enabled: true,
        variant: "on",
        value: true,
      });
      assert.deepEqual(await checker.flags.evaluate(project, "theme", { attributes: { country: "SE" } }), {
        enabled: true,
        variant: "dark",
        value: "dark",
      });
      // A list is the name repeated: any of its values may match.
      assert.deepEqual(await checker.flags.evaluate(project, "theme", { attributes: { tags: ["x", "a11y"] } }), {
        enabled: true,
        variant: "contrast",
        value: "high-contrast",
      });
      // The rule-based segment: no listed member, the condition holds (case-insensitively).
      const staff = await checker.flags.evaluate(project, "theme", { attributes: { email: "Ana@FLAGSTAFF.test" } });
      assert.deepEqual(staff, { enabled: true, variant: "dark", value: "dark" });
      const nobody = await checker.flags.evaluate(project, "theme", {
        actorIds: ["ana"],
        attributes: { country: "DE" },
      });
      assert.deepEqual(nobody, { enabled: false, variant: "light", value: "light" });
      assert.equal(await checker.flags.check(project, "theme", { attributes: { country: "DE" } }), false);
      // Prerequisites: quota is enabled, but only for contexts theme serves dark or contrast to.
      assert.deepEqual(await checker.flags.evaluate(project, "quota", { attributes: { country: "FI" } }), {
        enabled: true,
        variant: "large",
        value: 50,
      });
      assert.deepEqual(await checker.flags.evaluate(project, "quota", { attributes: { country: "FR" } }), {
        enabled: false,
        variant: "small",
        value: 5,
      });
      // null and undefined attributes are left out.
      assert.equal(
        await checker.flags.check(project, "beta", { attributes: { version: null, other: undefined } }),
        false,
      );
    });

    test("the check cache keys answers by attributes too", async () => {
      const se = await checker.flags.evaluate(project, "theme", { attributes: { country: "SE" }, cache: 60 });
      const de = await checker.flags.evaluate(project, "theme", { attributes: { country: "DE" }, cache: 60 });
      assert.deepEqual([se.variant, de.variant], ["dark", "light"]);
      const again = await checker.flags.evaluate(project, "theme", { attributes: { country: "SE" }, cache: 60 });
      assert.deepEqual(again, se);
    });

    test("a list of one travels as a list (attributes[NAME][]): the check, explain, OFREP and the local evaluator agree", async () => {
      // "neg" holds for a list none of whose elements reads as a number above 10, never for a text that is
      // not a number; "by-tags" buckets by a text, not by a list.
      await admin.flags.create(project, "listy", {
        type: "string",
        variants: ["neg", "left", "right", "none"].map((key) => ({ key, value: key })),
        onVariant: "neg",
        offVariant: "none",
      });
      await admin.flags.update(project, "listy", {
        status: "conditional",
        rules: [
          {
            id: "neg",
            conditions: [{ attribute: "age", operator: "gt", values: [10], negate: true }],
            serve: { variant: "neg" },
          },
          {
            id: "by-tags",
            conditions: [],
            serve: {
              split: {
                bucketBy: "tags",
                weights: [
                  { variant: "left", weight: 50 },
                  { variant: "right", weight: 50 },
                ],
              },
            },
          },
        ],
      });
      await waitFor("listy in the local evaluator", () => local.flagNames().includes("listy"));
      // The client as any other, its requests' URLs noted on their way to the real server.
      const sent: string[] = [];
      const readKey = (await createKey(server, project, "read")).key;
      const noting = new FlagstaffClient({
        baseUrl: server.url,
        apiKey: readKey,
        checkCache: true,
        fetch: (url, init) => {
          sent.push(url);
          return globalThis.fetch(url, init);
        },
      });
      const ofrep = async (context: Record<string, unknown>) => {
        const res = await server.request("POST", "/ofrep/v1/evaluate/flags/listy", { key: readKey, body: { context } });
        assert.equal(res.status, 200, res.text);
        return res.body.variant as string;
      };
      const contexts: Record<string, string | string[]>[] = [
        { age: "abc" },
        { age: ["abc"] },
        { age: ["5"] },
        { age: ["50"] },
        { age: ["abc", "50"] },
        { age: "50", tags: "beta" },
        { age: "50", tags: ["beta"] },
        { age: ["a b&c=d"], tags: ["beta", "x"] },
      ];
      for (const attributes of contexts) {
        const why = JSON.stringify(attributes);
        const mine = local.evaluate("listy", { attributes });
        const checked = await noting.flags.evaluate(project, "listy", { attributes });
        const explained = await noting.flags.explain(project, "listy", { attributes });
        assert.deepEqual(
          [checked.variant, explained.variant, await ofrep(attributes)],
          [mine.variant, mine.variant, mine.variant],
          why,
        );
      }
      assert.equal(local.evaluate("listy", { attributes: { age: ["abc"] } }).variant, "neg");
      assert.equal(local.evaluate("listy", { attributes: { age: "abc" } }).variant, "none");
      assert.equal(local.evaluate("listy", { attributes: { age: "50", tags: ["beta"] } }).variant, "none");
      // On the wire: a text as attributes[NAME], every list's element as attributes[NAME][].
      const query = (url: string) => decodeURIComponent(new URL(url).search);
      assert.ok(
        sent.some((url) => query(url) === "?attributes[age]=abc"),
        sent.join("\n"),
      );
      assert.ok(
        sent.some((url) => query(url) === "?attributes[age][]=abc"),
        sent.join("\n"),
      );
      assert.ok(
        sent.some((url) => query(url) === "?attributes[age][]=abc&attributes[age][]=50"),
        sent.join("\n"),
      );

      // The check cache tells a text from a list of one: two answers, two requests.
      sent.length = 0;
      const text = await noting.flags.evaluate(project, "listy", { attributes: { age: "abc" }, cache: 60 });
      const list = await noting.flags.evaluate(project, "listy", { attributes: { age: ["abc"] }, cache: 60 });
      assert.deepEqual([text.variant, list.variant], ["none", "neg"]);
      assert.equal(sent.length, 2);
      await noting.flags.evaluate(project, "listy", { attributes: { age: ["abc"] }, cache: 60 });
      assert.equal(sent.length, 2, "the list's answer came from the cache");

      // An empty list cannot travel in a query: it is left out, and the server reads a missing attribute,
      // as the local evaluator does for a context without it (given [], it reads an empty list, as OFREP does).
      sent.length = 0;
      const empty = await noting.flags.evaluate(project, "listy", { attributes: { age: [] } });
      assert.equal(query(sent[0] as string), "");
      assert.equal(empty.variant, local.evaluate("listy", { attributes: {} }).variant);
      assert.equal(local.evaluate("listy", { attributes: { age: [] } }).variant, await ofrep({ age: [] }));
    });

    test("an attribute named __proto__ is an attribute: the local evaluator, the check, explain and OFREP (single and bulk) agree", async () => {
      await admin.flags.create(project, "proto", {
        type: "string",
        variants: ["hit", "miss"].map((key) => ({ key, value: key })),
      });
      await admin.flags.update(project, "proto", {
        status: "conditional",
        rules: [
          {
            id: "proto",
            conditions: [{ attribute: "__proto__", operator: "in", values: ["x"] }],
            serve: { variant: "hit" },
          },
        ],
      });
      await waitFor("proto in the local evaluator", () => local.flagNames().includes("proto"));
      const key = (await createKey(server, project, "read")).key;
      const reader = new FlagstaffClient({ baseUrl: server.url, apiKey: key });
      const headers = { "content-type": "application/json" };
      // JSON.parse makes an own member "__proto__", as a caller's parsed context has it (an object literal
      // would set the prototype instead).
      for (const [json, expected] of [
        ['{"__proto__":"x"}', "hit"],
        ['{"__proto__":["y","x"]}', "hit"],
        ['{"__proto__":["x"]}', "hit"],
        ['{"__proto__":"y"}', "miss"],
        ["{}", "miss"],
      ] as const) {
        const attributes = JSON.parse(json) as Record<string, string | string[]>;
        const body = `{"context":${json}}`;
        const single = await server.request("POST", "/ofrep/v1/evaluate/flags/proto", { key, rawBody: body, headers });
        const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", { key, rawBody: body, headers });
        assert.equal(single.status, 200, single.text);
        assert.equal(bulk.status, 200, bulk.text);
        assert.deepEqual(
          [
            local.evaluate("proto", { attributes }).variant,
            (await reader.flags.evaluate(project, "proto", { attributes })).variant,
            (await reader.flags.explain(project, "proto", { attributes })).variant,
            single.body.variant,
            (bulk.body.flags as { key: string; variant: string }[]).find((f) => f.key === "proto")?.variant,
          ],
          [expected, expected, expected, expected, expected],
          json,
        );
      }
      // An object under __proto__ is a value no rule reads, not a prototype: the local evaluator and the
      // in-process server run in this process, and nothing reaches Object.prototype.
      const hostile = JSON.parse('{"__proto__":{"polluted":"yes"}}') as Record<string, string>;
      assert.equal(local.evaluate("proto", { attributes: hostile }).variant, "miss");
      const body = '{"context":{"__proto__":{"polluted":"yes"}}}';
      const res = await server.request("POST", "/ofrep/v1/evaluate/flags/proto", { key, rawBody: body, headers });
      assert.deepEqual([res.status, res.body.variant], [200, "miss"]);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(Object.getPrototypeOf({}), Object.prototype);
    });

    test("explain takes attributes and names the rule, its conditions, or the failed prerequisite", async () => {
      const byRule = await admin.flags.explain(project, "theme", {
        actorIds: ["ana"],
        attributes: { tags: ["a11y", "b"] },
      });
      assert.deepEqual(
        [byRule.rule, byRule.variant, byRule.value, byRule.reason],
        ["rule", "contrast", "high-contrast", "TARGETING_MATCH"],
      );
      assert.equal(byRule.matchedRule?.id, "testers");
      assert.equal(byRule.matchedRule?.index, 1);
      const failed = await admin.flags.explain(project, "quota", { attributes: { country: "DE" } });
      assert.deepEqual(
        [failed.rule, failed.prerequisite, failed.reason, failed.variant],
        ["prerequisite", "theme", "PREREQUISITE_FAILED", "small"],
      );
      // The seed's form, a list of actor ids, still works.
      const seed = await admin.flags.explain(project, "beta", ["ana"]);
      assert.deepEqual([seed.enabled, seed.rule], [false, "none"]);
    });

    test("a refused rule is a 400 whose errors name the rule and condition", async () => {
      await assert.rejects(
        admin.flags.update(project, "theme", {
          rules: [
            {
              id: "bad",
              conditions: [{ attribute: "n", operator: "gt", values: ["ten"] }],
              serve: { variant: "dark" },
            },
          ],
        }),
        (error: FlagstaffError) => {
          assert.equal(error.status, 400);
          assert.ok(
            error.errors.some((e) => e.path.startsWith("/rules/0/conditions/0")),
            JSON.stringify(error.errors),
          );
          return true;
        },
      );
      await assert.rejects(
        admin.flags.update(project, "theme", { prerequisites: [{ flag: "quota", variants: ["large"] }] }),
        (error: FlagstaffError) => error.status === 409 && error.code === "prerequisite_cycle",
      );
    });

    test("the local evaluator serves typed variants for attributes, as the server does", () => {
      assert.deepEqual(local.evaluate("theme", { actorIds: ["ana"], attributes: { country: "NO" } }), {
        enabled: true,
        reason: "TARGETING_MATCH",
        variant: "dark",
        value: "dark",
        ruleId: "nordics",
      });
      const failed = local.evaluate("quota", { attributes: { country: "DE" } });
      assert.deepEqual(failed, {
        enabled: false,
        reason: "PREREQUISITE_FAILED",
        variant: "small",
        value: 5,
        prerequisite: "theme",
      });
      assert.equal(local.isEnabled("beta", { attributes: { version: "2.0.0" } }), true);
      // The seed's form: a list of actors, answering on/off for a boolean flag.
      assert.deepEqual(local.evaluate("beta", ["ana"]), {
        enabled: false,
        reason: "DEFAULT",
        variant: "off",
        value: false,
      });
      const missing = local.evaluate("nope", { actorIds: [] });
      assert.deepEqual([missing.reason, missing.variant, missing.value], ["ERROR", null, null]);
      assert.equal(missing.reason === "ERROR" && missing.errorCode, "FLAG_NOT_FOUND");
      const bad = local.evaluate("theme", { attributes: [] as never });
      assert.equal(bad.reason === "ERROR" && bad.errorCode, "INVALID_CONTEXT");
    });

    test("variants and segment conditions change: the change events name the flags, prerequisites' dependents included", async () => {
      changes.length = 0;
      await admin.flags.update(project, "theme", {
        variants: [
          { key: "light", value: "light" },
          { key: "dark", value: "midnight" },
          { key: "contrast", value: "high-contrast" },
        ],
      });
      await waitFor("the new value of dark", () => local.evaluate("theme", { attributes: { country: "SE" } }).value, {
        until: (value) => value === "midnight",
      });
      assert.deepEqual(changes.at(-1)?.flags, ["quota", "theme"]);
      changes.length = 0;
      await admin.segments.update(project, segmentId, {
        conditions: [{ attribute: "email", operator: "ends_with", values: ["@example.com"] }],
      });
      await waitFor(
        "the new segment conditions",
        () => local.evaluate("theme", { attributes: { email: "x@example.com" } }).variant,
        {
          until: (variant) => variant === "dark",
        },
      );
      assert.deepEqual(changes.at(-1)?.flags, ["quota", "theme"]);
      const server = await checker.flags.evaluate(project, "theme", { attributes: { email: "x@example.com" } });
      assert.deepEqual(server, { enabled: true, variant: "dark", value: "midnight" });
      assert.equal(local.evaluate("theme", { attributes: { email: "x@flagstaff.test" } }).variant, "light");
    });
  });
}

/** A real HTTP server that answers every stream request with one snapshot of the given state and stays open. */
async function fakeStreamServer(state: unknown): Promise<{ url: string; close(): Promise<void> }> {
  const responses = new Set<ServerResponse>();
  const server: Server = createServer((_request: IncomingMessage, response: ServerResponse) => {
    responses.add(response);
    response.on("close", () => responses.delete(response));
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
    response.write(`id: 7\nevent: snapshot\ndata: ${JSON.stringify({ version: 7, state })}\n\n`);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      for (const response of responses) response.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a stream state format this SDK cannot read", () => {
  test("stops the local evaluator with unsupported_format, naming the format and telling to upgrade", async () => {
    const stream = await fakeStreamServer({ format: 4, flags: [], segments: {} });
    try {
      const evaluator = createLocalEvaluator({ url: stream.url, key: "k", projectId: "p" });
      const errors: LocalEvaluatorError[] = [];
      evaluator.on("error", (error) => errors.push(error));
      await assert.rejects(evaluator.ready(10_000), (error: FlagstaffError) => {
        assert.equal(error.code, "unsupported_format");
        assert.match(error.message, /format 4/);
        assert.match(error.message, /reads formats 1, 2 and 3/);
        assert.match(error.message, /Upgrade @flagstaff\/sdk/);
        assert.ok(error.cause instanceof FatalStreamError);
        return true;
      });
      assert.equal(evaluator.status, "stopped");
      assert.deepEqual(
        errors.map((e) => [e.fatal, e.error.code]),
        [[true, "unsupported_format"]],
      );
      const answer = evaluator.evaluate("anything");
      assert.equal(answer.reason === "ERROR" && answer.errorCode, "PROVIDER_NOT_READY");
      await evaluator.close();
    } finally {
      await stream.close();
    }
  });

  test("a format 1 state (before targeting) is still read: boolean flags without rules", async () => {
    const stream = await fakeStreamServer({
      format: 1,
      flags: [
        {
          id: "f1",
          name: "old",
          status: "conditional",
          percentageActors: 0,
          percentageCalls: 0,
          actors: ["ana"],
          segments: [],
        },
      ],
      segments: {},
    });
    try {
      const evaluator = createLocalEvaluator({ url: stream.url, key: "k", projectId: "p" });
      await evaluator.ready(10_000);
      assert.deepEqual(evaluator.evaluate("old", ["ana"]), {
        enabled: true,
        reason: "TARGETING_MATCH",
        variant: "on",
        value: true,
      });
      await evaluator.close();
    } finally {
      await stream.close();
    }
  });
});
