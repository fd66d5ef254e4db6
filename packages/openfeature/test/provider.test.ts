import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { type FetchLike, FlagstaffClient } from "@flagstaff/sdk";
import {
  type Client,
  ErrorCode,
  type EvaluationDetails,
  type FlagValue,
  OpenFeature,
  ProviderEvents,
  ProviderStatus,
  StandardResolutionReasons,
} from "@openfeature/server-sdk";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  startServer,
  TcpProxy,
  type TestServer,
} from "@flagstaff/test-harness";
import { FlagstaffProvider, type FlagstaffProviderOptions } from "../src/index.js";

let domains = 0;
/** A domain no other suite or test uses. */
const uniqueDomain = (label: string) => `flagstaff-of-${label}-${process.pid}-${++domains}`;

/** A fetch that counts the requests it sends. */
function countingFetch(): { fetch: FetchLike; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: (url, init) => {
      urls.push(url);
      return globalThis.fetch(url, init);
    },
  };
}

/** A base URL where nothing listens: a port that was bound and released. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${address.port}`;
}

/** A TCP server that accepts connections and never answers. */
async function blackHole(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Asserts the details of a successful evaluation. */
function assertResolved(details: EvaluationDetails<boolean>, value: boolean, reason: string): void {
  assert.equal(details.errorCode, undefined, `unexpected error ${details.errorCode}: ${details.errorMessage}`);
  assert.equal(details.value, value);
  assert.equal(details.reason, reason);
  assert.equal(details.variant, value ? "on" : "off");
}

/** Asserts the details of a failed evaluation: the default value, reason ERROR and the error code. */
function assertFailed(details: EvaluationDetails<FlagValue>, defaultValue: FlagValue, code: ErrorCode): void {
  assert.equal(details.errorCode, code, `expected ${code}, got ${details.errorCode}: ${details.errorMessage}`);
  assert.deepEqual(details.value, defaultValue);
  assert.equal(details.reason, StandardResolutionReasons.ERROR);
  assert.equal(details.variant, undefined);
  assert.equal(typeof details.errorMessage, "string");
}

describe("FlagstaffProvider without a server", () => {
  test("has the name flagstaff and runs on the server", () => {
    const provider = new FlagstaffProvider({ baseUrl: "http://127.0.0.1:1", apiKey: "k", projectId: "p" });
    assert.equal(provider.metadata.name, "flagstaff");
    assert.equal(provider.runsOn, "server");
  });

  test("refuses options it cannot work with", () => {
    const good: FlagstaffProviderOptions = { baseUrl: "http://127.0.0.1:1", apiKey: "k", projectId: "p" };
    assert.throws(() => new FlagstaffProvider(undefined as unknown as FlagstaffProviderOptions), TypeError);
    assert.throws(() => new FlagstaffProvider({ ...good, baseUrl: "" }), /baseUrl/);
    assert.throws(() => new FlagstaffProvider({ ...good, apiKey: undefined as unknown as string }), /apiKey/);
    assert.throws(() => new FlagstaffProvider({ ...good, projectId: "" }), /projectId/);
    assert.throws(() => new FlagstaffProvider({ ...good, timeoutMs: -1 }), /timeoutMs/);
  });

  test("impossible flag names and invalid actors send no request", async () => {
    const counter = countingFetch();
    const provider = new FlagstaffProvider({
      baseUrl: "http://127.0.0.1:1",
      apiKey: "k",
      projectId: "p",
      fetch: counter.fetch,
    });
    await assert.rejects(provider.resolveStringEvaluation("", "d", {}), { code: ErrorCode.FLAG_NOT_FOUND });
    await assert.rejects(provider.resolveNumberEvaluation("-x", 1, {}), { code: ErrorCode.FLAG_NOT_FOUND });
    await assert.rejects(provider.resolveBooleanEvaluation("", false, {}), { code: ErrorCode.FLAG_NOT_FOUND });
    await assert.rejects(provider.resolveBooleanEvaluation("x", false, { actorIds: "alice" }), {
      code: ErrorCode.INVALID_CONTEXT,
    });
    assert.deepEqual(counter.urls, []);
  });

  /** A provider whose fetch answers every request with the given status and body. */
  function fakeServer(status: number, body: string, contentType = "application/json") {
    const urls: string[] = [];
    const provider = new FlagstaffProvider({
      baseUrl: "http://flagstaff.invalid",
      apiKey: "k",
      projectId: "p",
      fetch: async (url) => {
        urls.push(url);
        return new Response(body, { status, headers: { "content-type": contentType } });
      },
    });
    return { provider, urls };
  }

  test("a 200 answer that is not an OFREP evaluation is a PARSE_ERROR", async () => {
    for (const body of [
      "not json",
      "{}",
      '{"value":true,"reason":"STATIC"}',
      '{"value":null,"reason":"STATIC","variant":"on"}',
      "null",
    ]) {
      const { provider } = fakeServer(200, body);
      await assert.rejects(provider.resolveBooleanEvaluation("x", false, {}), { code: ErrorCode.PARSE_ERROR });
    }
    // A well-formed answer of another type than the one asked for is the flag's type, not a parse error.
    const { provider } = fakeServer(200, '{"value":"yes","reason":"STATIC","variant":"on"}');
    await assert.rejects(provider.resolveBooleanEvaluation("x", false, {}), { code: ErrorCode.TYPE_MISMATCH });
  });

  test("a 5xx answer is GENERAL and emits PROVIDER_ERROR once", async () => {
    const { provider } = fakeServer(502, "<html>Bad gateway</html>", "text/html");
    const events: string[] = [];
    provider.events.addHandler(ProviderEvents.Error, () => events.push("error"));
    await assert.rejects(
      provider.resolveBooleanEvaluation("x", false, {}),
      (error: { code?: string; message?: string }) => {
        assert.equal(error.code, ErrorCode.GENERAL);
        assert.match(error.message ?? "", /502/);
        return true;
      },
    );
    await assert.rejects(provider.resolveBooleanEvaluation("x", false, {}), { code: ErrorCode.GENERAL });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ["error"]);
  });

  test("the failures' messages name the request and what came back (the SDK carries them)", async () => {
    const messageOf = (promise: Promise<unknown>) =>
      promise.then(
        () => assert.fail("expected a failure"),
        (error: { code?: string; message?: string }) => `${error.code} ${error.message}`,
      );
    const url = "http://flagstaff.invalid/ofrep/v1/evaluate/flags/x";
    const failing = new FlagstaffProvider({
      baseUrl: "http://flagstaff.invalid",
      apiKey: "k",
      projectId: "p",
      fetch: async () => {
        throw new Error("boom", { cause: new Error("inner") });
      },
    });
    assert.equal(
      await messageOf(failing.resolveBooleanEvaluation("x", false, {})),
      `GENERAL POST ${url} failed: boom: inner`,
    );
    assert.equal(
      await messageOf(fakeServer(200, "not json").provider.resolveBooleanEvaluation("x", false, {})),
      'PARSE_ERROR Flagstaff answered 200 with an unexpected body: "not json"',
    );
    assert.equal(
      await messageOf(fakeServer(500, '{"errorDetails":"logged"}').provider.resolveBooleanEvaluation("x", false, {})),
      "GENERAL Flagstaff answered 500: logged",
    );
    const notFound = '{"key":"x","errorCode":"FLAG_NOT_FOUND","errorDetails":"no x"}';
    assert.equal(
      await messageOf(fakeServer(404, notFound).provider.resolveBooleanEvaluation("x", false, {})),
      "FLAG_NOT_FOUND Flagstaff answered 404: no x",
    );
  });

  test("a server without the OFREP endpoint fails initialize with PROVIDER_FATAL", async () => {
    // The check answers flag_not_found, as a Flagstaff server does; the OFREP path is unknown to it.
    const provider = new FlagstaffProvider({
      baseUrl: "http://flagstaff.invalid",
      apiKey: "k",
      projectId: "p",
      fetch: async (url) => {
        const code = url.includes("/ofrep/") ? "not_found" : "flag_not_found";
        const problem = { type: `urn:flagstaff:problem:${code}`, title: "Not found", status: 404, detail: "x", code };
        return new Response(JSON.stringify(problem), {
          status: 404,
          headers: { "content-type": "application/problem+json" },
        });
      },
    });
    await assert.rejects(provider.initialize(), (error: { code?: string; message?: string }) => {
      assert.equal(error.code, ErrorCode.PROVIDER_FATAL);
      assert.match(error.message ?? "", /no OFREP endpoint/);
      return true;
    });
  });
});

for (const dialect of DIALECTS) {
  describe(`FlagstaffProvider through OpenFeature against a real server (${dialect})`, () => {
    let server: TestServer;
    let admin: FlagstaffClient;
    let projectId: string;
    let checkKey: string;
    let client: Client;
    let draw = 0.5;
    const counter = countingFetch();

    /** Options for a provider of this suite's project, with the check key. */
    const options = (extra: Partial<FlagstaffProviderOptions> = {}): FlagstaffProviderOptions => ({
      baseUrl: server.url,
      apiKey: checkKey,
      projectId,
      ...extra,
    });

    before(async () => {
      server = await startServer({ dialect, random: () => draw });
      admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      projectId = await createProject(server);
      checkKey = (await createKey(server, projectId, "check")).key;

      const segment = await admin.segments.create(projectId, { name: "Beta testers" });
      await admin.segments.update(projectId, segment.id, { addActors: ["carol", "dave"] });
      await admin.flags.create(projectId, "on");
      await admin.flags.update(projectId, "on", { status: "enabled" });
      await admin.flags.create(projectId, "off");
      await admin.flags.update(projectId, "off", { addActors: ["alice"], percentageActors: 100, percentageCalls: 100 });
      await admin.flags.create(projectId, "targeted");
      await admin.flags.update(projectId, "targeted", {
        status: "conditional",
        addActors: ["alice"],
        addSegments: [segment.id],
      });
      await admin.flags.create(projectId, "rollout");
      await admin.flags.update(projectId, "rollout", { status: "conditional", percentageActors: 100 });
      await admin.flags.create(projectId, "half");
      await admin.flags.update(projectId, "half", { status: "conditional", percentageActors: 50 });
      await admin.flags.create(projectId, "calls");
      await admin.flags.update(projectId, "calls", { status: "conditional", percentageCalls: 50 });

      const domain = uniqueDomain(`${dialect}-main`);
      await OpenFeature.setProviderAndWait(domain, new FlagstaffProvider(options({ fetch: counter.fetch })));
      client = OpenFeature.getClient(domain);
    });

    after(async () => {
      await OpenFeature.clearProviders();
      await server?.close();
    });

    test("setProviderAndWait resolves and the client is ready", () => {
      assert.equal(client.providerStatus, ProviderStatus.READY);
      assert.equal(client.metadata.providerMetadata.name, "flagstaff");
    });

    test("an enabled flag is on for everyone (STATIC)", async () => {
      assertResolved(await client.getBooleanDetails("on", false), true, "STATIC");
      assertResolved(await client.getBooleanDetails("on", false, { targetingKey: "anyone" }), true, "STATIC");
      assert.equal(await client.getBooleanValue("on", false, { targetingKey: "anyone" }), true);
    });

    test("a disabled flag is off for everyone, attached actors and rollouts included (DISABLED)", async () => {
      assertResolved(await client.getBooleanDetails("off", true), false, "DISABLED");
      assertResolved(await client.getBooleanDetails("off", true, { targetingKey: "alice" }), false, "DISABLED");
      assert.equal(await client.getBooleanValue("off", true, { targetingKey: "alice" }), false);
    });

    test("a conditional flag is on for an attached targetingKey (TARGETING_MATCH) and off otherwise (DEFAULT)", async () => {
      assertResolved(
        await client.getBooleanDetails("targeted", false, { targetingKey: "alice" }),
        true,
        "TARGETING_MATCH",
      );
      assertResolved(await client.getBooleanDetails("targeted", true, { targetingKey: "bob" }), false, "DEFAULT");
    });

    test("a conditional flag is on for a member of an attached segment (TARGETING_MATCH)", async () => {
      assertResolved(
        await client.getBooleanDetails("targeted", false, { targetingKey: "carol" }),
        true,
        "TARGETING_MATCH",
      );
      assertResolved(
        await client.getBooleanDetails("targeted", false, { targetingKey: "dave" }),
        true,
        "TARGETING_MATCH",
      );
    });

    test("a 100 % actor rollout is on for any targetingKey (SPLIT)", async () => {
      for (const actor of ["bob", "user-1", "team/a b", "ünïcødé 🚀"]) {
        assertResolved(await client.getBooleanDetails("rollout", false, { targetingKey: actor }), true, "SPLIT");
      }
    });

    test("without a targetingKey only the call rollout applies", async () => {
      assertResolved(await client.getBooleanDetails("targeted", true), false, "DEFAULT");
      assertResolved(await client.getBooleanDetails("rollout", true), false, "DEFAULT");
      assertResolved(await client.getBooleanDetails("rollout", true, { country: "NL" }), false, "DEFAULT");
      draw = 0.1;
      assertResolved(await client.getBooleanDetails("calls", false), true, "SPLIT");
      draw = 0.9;
      assertResolved(await client.getBooleanDetails("calls", true), false, "DEFAULT");
      draw = 0.5;
    });

    test("extra actorIds are added to the targetingKey: any one enables the flag", async () => {
      const extra = (targetingKey: string | undefined, actorIds: string[]) =>
        client.getBooleanDetails(
          "targeted",
          false,
          targetingKey === undefined ? { actorIds } : { targetingKey, actorIds },
        );
      assertResolved(await extra("bob", ["alice"]), true, "TARGETING_MATCH");
      assertResolved(await extra("bob", ["team-1", "carol"]), true, "TARGETING_MATCH");
      assertResolved(await extra(undefined, ["alice"]), true, "TARGETING_MATCH");
      assertResolved(await extra("alice", []), true, "TARGETING_MATCH");
      assertResolved(await extra("bob", ["erin", "bob"]), false, "DEFAULT");
      assertResolved(await extra(undefined, []), false, "DEFAULT");
    });

    test("values agree with the plain check of the SDK for every actor", async () => {
      let on = 0;
      for (let i = 0; i < 40; i++) {
        const actor = `user-${i}`;
        const expected = await admin.flags.check(projectId, "half", { actorIds: [actor] });
        const details = await client.getBooleanDetails("half", !expected, { targetingKey: actor });
        assertResolved(details, expected, expected ? "SPLIT" : "DEFAULT");
        if (expected) on++;
      }
      assert.ok(on > 0 && on < 40, `a 50 % rollout should split 40 actors, got ${on} on`);
    });

    test("a missing flag resolves to the default with FLAG_NOT_FOUND", async () => {
      for (const defaultValue of [true, false]) {
        const details = await client.getBooleanDetails("no-such-flag", defaultValue, { targetingKey: "alice" });
        assertFailed(details, defaultValue, ErrorCode.FLAG_NOT_FOUND);
        assert.match(details.errorMessage ?? "", /no-such-flag/);
        assert.equal(await client.getBooleanValue("no-such-flag", defaultValue), defaultValue);
      }
    });

    test("a key that cannot name a flag resolves to the default with FLAG_NOT_FOUND, without a request", async () => {
      const sent = counter.urls.length;
      for (const key of ["", ".", "..", "-dash", "a b", "a/b", "a\u0000b", "x".repeat(129), "\ud800"]) {
        const details = await client.getBooleanDetails(key, true);
        assertFailed(details, true, ErrorCode.FLAG_NOT_FOUND);
        assert.equal(await client.getBooleanValue(key, true), true);
      }
      assert.equal(counter.urls.length, sent);
      // The longest valid name is sent, and the server answers for it.
      assertFailed(await client.getBooleanDetails("x".repeat(128), true), true, ErrorCode.FLAG_NOT_FOUND);
      assert.equal(counter.urls.length, sent + 1);
    });

    test("flag names with every allowed character are sent intact", async () => {
      await admin.flags.create(projectId, "Ns:feature.v2_beta-1");
      await admin.flags.update(projectId, "Ns:feature.v2_beta-1", { status: "enabled" });
      assertResolved(await client.getBooleanDetails("Ns:feature.v2_beta-1", false), true, "STATIC");
    });

    test("an invalid context resolves to the default with INVALID_CONTEXT", async () => {
      const cases: Record<string, unknown>[] = [
        { targetingKey: "" },
        { targetingKey: "bad\u0001id" },
        { targetingKey: "alice", actorIds: [""] },
        { targetingKey: "alice", actorIds: Array.from({ length: 101 }, (_, i) => `a${i}`) },
        { actorIds: "alice" },
        { actorIds: ["alice", 5] },
        { targetingKey: 5 },
      ];
      for (const context of cases) {
        const details = await client.getBooleanDetails("on", false, context as never);
        assertFailed(details, false, ErrorCode.INVALID_CONTEXT);
      }
    });

    test("string, number and object evaluations of a boolean flag resolve to the default with TYPE_MISMATCH", async () => {
      assertFailed(await client.getStringDetails("on", "fallback"), "fallback", ErrorCode.TYPE_MISMATCH);
      assertFailed(await client.getNumberDetails("on", 42), 42, ErrorCode.TYPE_MISMATCH);
      assertFailed(await client.getObjectDetails("on", { a: 1 }), { a: 1 }, ErrorCode.TYPE_MISMATCH);
      assert.equal(await client.getStringValue("on", "fallback", { targetingKey: "alice" }), "fallback");
      assert.equal(await client.getNumberValue("on", 7), 7);
      assert.deepEqual(await client.getObjectValue("on", ["x"]), ["x"]);
    });

    test("the context's other members are sent as attributes (a Date as its ISO text)", async () => {
      const bodies: string[] = [];
      const domain = uniqueDomain(`${dialect}-body`);
      const provider = new FlagstaffProvider(
        options({
          fetch: (url, init) => {
            if (url.includes("/ofrep/")) bodies.push(String(init.body));
            return globalThis.fetch(url, init);
          },
        }),
      );
      await OpenFeature.setProviderAndWait(domain, provider);
      const details = await OpenFeature.getClient(domain).getBooleanDetails("targeted", false, {
        targetingKey: "alice",
        actorIds: ["team-1"],
        email: "alice@example.com",
        plan: { tier: "pro" },
        signedUp: new Date("2026-01-02T03:04:05.000Z"),
      });
      assertResolved(details, true, "TARGETING_MATCH");
      assert.deepEqual(JSON.parse(bodies.at(-1) ?? "{}"), {
        context: {
          targetingKey: "alice",
          actorIds: ["team-1"],
          email: "alice@example.com",
          plan: { tier: "pro" },
          signedUp: "2026-01-02T03:04:05.000Z",
        },
      });
    });

    test("a base URL with a trailing slash works, and any project key role is enough", async () => {
      for (const role of ["check", "read", "write"] as const) {
        const { key } = await createKey(server, projectId, role);
        const domain = uniqueDomain(`${dialect}-${role}`);
        await OpenFeature.setProviderAndWait(
          domain,
          new FlagstaffProvider(options({ baseUrl: `${server.url}/`, apiKey: key })),
        );
        assertResolved(await OpenFeature.getClient(domain).getBooleanDetails("on", false), true, "STATIC");
      }
    });

    test("initialize uses the client it is given", async () => {
      const probe = countingFetch();
      const domain = uniqueDomain(`${dialect}-client`);
      const given = new FlagstaffClient({ baseUrl: server.url, apiKey: checkKey, fetch: probe.fetch });
      await OpenFeature.setProviderAndWait(domain, new FlagstaffProvider(options({ client: given })));
      assert.equal(probe.urls.length, 1);
      assert.match(probe.urls[0] ?? "", new RegExp(`/projects/${projectId}/flags/.+/check$`));
    });

    describe("wrong keys", () => {
      /** Sets a provider with this key and answers the rejection of setProviderAndWait and the client. */
      async function withKey(apiKey: string, project = projectId) {
        const domain = uniqueDomain(`${dialect}-key`);
        const provider = new FlagstaffProvider(options({ apiKey, projectId: project }));
        const failure = await OpenFeature.setProviderAndWait(domain, provider).then(
          () => undefined,
          (error: unknown) => error as { code?: string; message?: string },
        );
        return { failure, client: OpenFeature.getClient(domain) };
      }

      test("an unknown key fails setProviderAndWait (PROVIDER_FATAL); evaluations resolve to the default", async () => {
        const { failure, client: wrong } = await withKey("fsk_not-a-real-key-at-all-0123456789");
        assert.equal(failure?.code, ErrorCode.PROVIDER_FATAL);
        assert.match(failure?.message ?? "", /refused the API key/);
        assert.equal(wrong.providerStatus, ProviderStatus.FATAL);
        assertFailed(await wrong.getBooleanDetails("on", false), false, ErrorCode.PROVIDER_FATAL);
        assert.equal(await wrong.getBooleanValue("on", false), false);
        assert.equal(await wrong.getBooleanValue("on", true), true);
      });

      test("a key of another project fails setProviderAndWait (PROVIDER_FATAL)", async () => {
        const other = await createProject(server);
        const { key } = await createKey(server, other, "check");
        const { failure, client: wrong } = await withKey(key);
        assert.equal(failure?.code, ErrorCode.PROVIDER_FATAL);
        assert.match(failure?.message ?? "", new RegExp(`does not belong to project "${projectId}"`));
        assertFailed(await wrong.getBooleanDetails("on", false), false, ErrorCode.PROVIDER_FATAL);
      });

      test("an admin key fails setProviderAndWait: remote evaluation needs a project key", async () => {
        const { failure, client: wrong } = await withKey(ADMIN_KEY);
        assert.equal(failure?.code, ErrorCode.PROVIDER_FATAL);
        assert.match(failure?.message ?? "", /remote evaluation/i);
        assertFailed(await wrong.getBooleanDetails("on", false), false, ErrorCode.PROVIDER_FATAL);
      });

      test("a project that does not exist fails setProviderAndWait (PROVIDER_FATAL)", async () => {
        const { failure } = await withKey(checkKey, "no-such-project");
        assert.equal(failure?.code, ErrorCode.PROVIDER_FATAL);
      });

      test("a key revoked after initialize resolves to the default with GENERAL, no throw", async () => {
        const { key, id } = await createKey(server, projectId, "check");
        const domain = uniqueDomain(`${dialect}-revoked`);
        await OpenFeature.setProviderAndWait(domain, new FlagstaffProvider(options({ apiKey: key })));
        const revoked = OpenFeature.getClient(domain);
        assertResolved(await revoked.getBooleanDetails("on", false), true, "STATIC");
        await admin.keys.revoke(projectId, id);
        const details = await revoked.getBooleanDetails("on", false);
        assertFailed(details, false, ErrorCode.GENERAL);
        assert.match(details.errorMessage ?? "", /401 unauthorized/);
        assert.equal(await revoked.getBooleanValue("on", false), false);
      });
    });

    test("a rate-limited evaluation resolves to the default with GENERAL", async () => {
      const limited = await startServer({ dialect, env: { RATE_LIMIT_PER_MINUTE: "3" } });
      try {
        const project = await createProject(limited);
        const { key } = await createKey(limited, project, "check");
        const domain = uniqueDomain(`${dialect}-limited`);
        // initialize() spends two requests of the budget, the first evaluation the third.
        await OpenFeature.setProviderAndWait(
          domain,
          new FlagstaffProvider({ baseUrl: limited.url, apiKey: key, projectId: project }),
        );
        const rated = OpenFeature.getClient(domain);
        assertFailed(await rated.getBooleanDetails("none", true), true, ErrorCode.FLAG_NOT_FOUND);
        const details = await rated.getBooleanDetails("none", true);
        assertFailed(details, true, ErrorCode.GENERAL);
        assert.match(details.errorMessage ?? "", /429 rate_limited/);
        assert.equal(rated.providerStatus, ProviderStatus.READY);
      } finally {
        await limited.close();
      }
    });

    describe("an unreachable server", () => {
      test("a closed port fails setProviderAndWait; evaluations resolve to the default with GENERAL, fast", async () => {
        const domain = uniqueDomain(`${dialect}-down`);
        const provider = new FlagstaffProvider(options({ baseUrl: await closedPortUrl(), timeoutMs: 1000 }));
        await assert.rejects(
          OpenFeature.setProviderAndWait(domain, provider),
          (error: { code?: string; message?: string }) => {
            assert.equal(error.code, ErrorCode.GENERAL);
            assert.match(error.message ?? "", /could not be used/);
            return true;
          },
        );
        const down = OpenFeature.getClient(domain);
        assert.equal(down.providerStatus, ProviderStatus.ERROR);
        for (const defaultValue of [true, false]) {
          const started = performance.now();
          const details = await down.getBooleanDetails("on", defaultValue, { targetingKey: "alice" });
          assert.ok(performance.now() - started < 1000, "a refused connection must not wait for the timeout");
          assertFailed(details, defaultValue, ErrorCode.GENERAL);
          assert.match(details.errorMessage ?? "", /failed/);
          assert.equal(await down.getBooleanValue("on", defaultValue), defaultValue);
        }
      });

      test("a server that never answers resolves to the default with GENERAL within the timeout", async () => {
        const hole = await blackHole();
        try {
          const domain = uniqueDomain(`${dialect}-hole`);
          const provider = new FlagstaffProvider(options({ baseUrl: hole.url, timeoutMs: 200 }));
          const started = performance.now();
          await assert.rejects(OpenFeature.setProviderAndWait(domain, provider), { code: ErrorCode.GENERAL });
          assert.ok(performance.now() - started < 2000, "initialize must give up after the timeout");
          const silent = OpenFeature.getClient(domain);
          for (const defaultValue of [true, false]) {
            const begun = performance.now();
            const details = await silent.getBooleanDetails("on", defaultValue);
            const elapsed = performance.now() - begun;
            assertFailed(details, defaultValue, ErrorCode.GENERAL);
            assert.match(details.errorMessage ?? "", /within 200 ms/);
            assert.ok(elapsed >= 150 && elapsed < 1000, `took ${elapsed} ms with a 200 ms timeout`);
          }
        } finally {
          await hole.close();
        }
      });

      test("an outage turns the provider to ERROR and back to READY, with events", async () => {
        const proxy = new TcpProxy("127.0.0.1", Number(new URL(server.url).port));
        const port = await proxy.start();
        try {
          const events: string[] = [];
          const domain = uniqueDomain(`${dialect}-outage`);
          const provider = new FlagstaffProvider(options({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 1000 }));
          await OpenFeature.setProviderAndWait(domain, provider);
          const flaky = OpenFeature.getClient(domain);
          flaky.addHandler(ProviderEvents.Error, () => events.push("error"));
          flaky.addHandler(ProviderEvents.Ready, () => events.push("ready"));
          assertResolved(await flaky.getBooleanDetails("on", false), true, "STATIC");

          proxy.cut();
          assertFailed(await flaky.getBooleanDetails("on", false), false, ErrorCode.GENERAL);
          assertFailed(await flaky.getBooleanDetails("on", false), false, ErrorCode.GENERAL);
          assert.equal(flaky.providerStatus, ProviderStatus.ERROR);

          proxy.restore();
          assertResolved(await flaky.getBooleanDetails("on", false), true, "STATIC");
          assert.equal(flaky.providerStatus, ProviderStatus.READY);
          await new Promise((resolve) => setImmediate(resolve));
          // "ready" once on attaching the handler (the provider was ready), then one error and one recovery.
          assert.deepEqual(events, ["ready", "error", "ready"]);
        } finally {
          await proxy.stop();
        }
      });

      test("a server that is down at startup: setProviderAndWait fails, the first answer makes it READY", async () => {
        const proxy = new TcpProxy("127.0.0.1", Number(new URL(server.url).port));
        const port = await proxy.start();
        try {
          proxy.cut();
          const domain = uniqueDomain(`${dialect}-late`);
          const provider = new FlagstaffProvider(options({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 1000 }));
          await assert.rejects(OpenFeature.setProviderAndWait(domain, provider), { code: ErrorCode.GENERAL });
          const late = OpenFeature.getClient(domain);
          assert.equal(late.providerStatus, ProviderStatus.ERROR);
          assertFailed(await late.getBooleanDetails("on", false), false, ErrorCode.GENERAL);
          proxy.restore();
          assertResolved(await late.getBooleanDetails("on", false), true, "STATIC");
          assert.equal(late.providerStatus, ProviderStatus.READY);
        } finally {
          await proxy.stop();
        }
      });
    });
  });
}
