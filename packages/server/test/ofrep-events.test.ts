// The OFREP event-stream extension (open-feature/protocol ADR-0008): the bulk evaluation advertises an
// event stream; the stream sends `refetchEvaluation` messages when an answer may have changed.
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  ManualClock,
  type StreamEvent,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";

const isRefetch = (e: StreamEvent) => e.event === "message" && e.data?.type === "refetchEvaluation";

for (const dialect of DIALECTS) {
  describe(`OFREP event streams [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let checkKey: { key: string; id: string };

    before(async () => {
      server = await startServer({ dialect, env: { STREAM_HEARTBEAT_MS: "200" } });
      project = await createProject(server);
      checkKey = await createKey(server, project, "check");
      await server.request("POST", `/projects/${project}/flags/banner`, {});
    });
    after(() => server.close());

    const bulk = (key = checkKey.key, headers: Record<string, string> = {}, query = "") =>
      server.request("POST", `/ofrep/v1/evaluate/flags${query}`, {
        key,
        body: { context: { targetingKey: "alice" } },
        headers,
      });

    /** The event stream URL a bulk answer advertises, joined to the server's origin as the provider does. */
    async function advertised(key = checkKey.key): Promise<string> {
      const res = await bulk(key);
      assert.equal(res.status, 200);
      const [stream] = res.body.eventStreams;
      return new URL(stream.endpoint.requestUri, server.url).href;
    }

    /** Opens the advertised stream as a browser would (no header) and reads its first message. */
    async function openAdvertised(key = checkKey.key, lastEventId?: string): Promise<EventStreamClient> {
      const stream = await EventStreamClient.open(await advertised(key), { key: null, lastEventId });
      assert.equal(stream.status, 200, JSON.stringify(stream.events));
      return stream;
    }

    test("the bulk answer advertises one sse stream, by endpoint with a token that is not the key", async () => {
      const res = await bulk();
      assert.equal(res.body.eventStreams.length, 1);
      const [stream] = res.body.eventStreams;
      assert.equal(stream.type, "sse");
      assert.equal(stream.url, undefined, "exactly one of url and endpoint");
      assert.equal(stream.endpoint.origin, undefined, "the provider uses its base URL's origin");
      assert.match(stream.endpoint.requestUri, /^\/ofrep\/v1\/event-stream\?token=[\w.-]+$/);
      assert.ok(!stream.endpoint.requestUri.includes(checkKey.key), "never the API key in a URL");
      assert.ok(!/[0-9a-f]{64}/.test(stream.endpoint.requestUri), "nor its hash");
    });

    test("a new stream says refetch at once; a flag change says it again, with the version as id", async () => {
      const stream = await openAdvertised();
      assert.match(stream.headers?.get("content-type") ?? "", /^text\/event-stream/);
      assert.equal(stream.headers?.get("cache-control"), "no-store");
      const first = await stream.next("the first refetch", isRefetch);
      assert.match(first.id ?? "", /^\d+$/);
      assert.deepEqual(first.data, { type: "refetchEvaluation", etag: first.id });

      const before = await bulk();
      assert.equal(before.body.flags[0].value, false);
      await server.request("PATCH", `/projects/${project}/flags/banner`, {
        body: { status: "conditional", addActors: ["alice"] },
      });
      const second = await stream.next("the refetch after the change", (e) => isRefetch(e) && e !== first);
      assert.ok(Number(second.id) > Number(first.id));
      assert.deepEqual(second.data, { type: "refetchEvaluation", etag: second.id, flags: ["banner"] });
      // The refetch the message asks for: the ETag moved, so the answer is the new one.
      const after = await bulk(checkKey.key, { "if-none-match": before.headers.get("etag") ?? "" });
      assert.equal(after.status, 200);
      assert.equal(after.body.flags[0].value, true);
      await waitFor("a heartbeat comment", () => stream.comments, { until: (n) => n >= 1 });
      await stream.close();
    });

    test("a change's message names the flags it changed and those gated on them; none where it cannot tell", async () => {
      const stream = await openAdvertised();
      let last = await stream.next("the first refetch", isRefetch);
      const next = async (what: string) => {
        const seen = last;
        last = await stream.next(what, (e) => isRefetch(e) && Number(e.id) > Number(seen.id));
        return last.data as { flags?: string[] };
      };
      await server.request("POST", `/projects/${project}/flags/gate`, {});
      assert.deepEqual((await next("the new gate")).flags, ["gate"]);
      await server.request("POST", `/projects/${project}/flags/gated`, {});
      await next("the new gated flag");
      const gatedOn = await server.request("PATCH", `/projects/${project}/flags/gated`, {
        body: { status: "enabled", prerequisites: [{ flag: "gate", variants: ["on"] }] },
      });
      assert.equal(gatedOn.status, 200, gatedOn.text);
      assert.deepEqual((await next("gated's prerequisite")).flags, ["gated"]);
      await server.request("PATCH", `/projects/${project}/flags/gate`, { body: { status: "enabled" } });
      assert.deepEqual((await next("the gate on")).flags, ["gate", "gated"], "the gated flag may answer anew");
      // A segment may be read by any flag; a deleted flag's name is gone: the message names none.
      const segment = await server.request("POST", `/projects/${project}/segments`, { body: { name: "beta" } });
      assert.equal(segment.status, 201, segment.text);
      await server.request("PATCH", `/projects/${project}/flags/gate`, {
        body: { status: "conditional", addSegments: [segment.body.id] },
      });
      assert.deepEqual((await next("the gate on a segment")).flags, ["gate", "gated"]);
      await server.request("PATCH", `/projects/${project}/segments/${segment.body.id}`, {
        body: { addActors: ["alice"] },
      });
      assert.equal((await next("the segment's members")).flags, undefined);
      await server.request("DELETE", `/projects/${project}/flags/gated`);
      assert.equal((await next("the deletion")).flags, undefined);
      await stream.close();
    });

    test("writes no answer depends on (a key, a description, a webhook) send nothing", async () => {
      const stream = await openAdvertised();
      const first = await stream.next("the first refetch", isRefetch);
      await server.request("POST", `/projects/${project}/keys`, { body: { role: "check", name: "another" } });
      await server.request("PATCH", `/projects/${project}/flags/banner`, { body: { description: "words" } });
      await server.request("POST", `/projects/${project}/webhooks`, {
        body: { url: "https://8.8.8.8/h", events: ["segment.deleted"] },
      });
      const unseen = await server.request("POST", `/projects/${project}/flags/marker`, {});
      assert.equal(unseen.status, 201);
      const marker = await stream.next("the refetch for the new flag", (e) => isRefetch(e) && e !== first);
      assert.deepEqual(
        stream.events.filter(isRefetch).map((e) => e.id),
        [first.id, marker.id],
        "nothing between the first message and the new flag's",
      );
      await stream.close();
    });

    test("Last-Event-ID: nothing when nothing changed since; a refetch when an answer may have", async () => {
      const first = await openAdvertised();
      const seen = await first.next("the first refetch", isRefetch);
      await first.close();
      await server.request("POST", `/projects/${project}/keys`, { body: { role: "read", name: "quiet" } });

      // A fresh stream's first message names the version now (after the key, before the flag below).
      const probe = await openAdvertised();
      const now = await probe.next("the version now", isRefetch);
      await probe.close();
      assert.ok(Number(now.id) > Number(seen.id), "the key moved the version");

      const quiet = await openAdvertised(checkKey.key, seen.id);
      await server.request("POST", `/projects/${project}/flags/after-quiet`, {});
      const next = await quiet.next("the refetch for the new flag", isRefetch);
      assert.ok(Number(next.id) > Number(now.id), "no refetch on resuming: no answer changed");
      await quiet.close();

      const missed = await openAdvertised(checkKey.key, seen.id);
      const replayed = await missed.next("the refetch for what was missed", isRefetch);
      assert.equal(replayed.id, next.id);
      await missed.close();
    });

    test("the key as a header works too (Bearer or X-API-Key), for clients that can send one", async () => {
      const bearer = await EventStreamClient.open(`${server.url}/ofrep/v1/event-stream`, { key: checkKey.key });
      await bearer.next("a refetch", isRefetch);
      const apiKey = await EventStreamClient.open(`${server.url}/ofrep/v1/event-stream`, {
        key: null,
        headers: { "x-api-key": checkKey.key },
      });
      await apiKey.next("a refetch", isRefetch);
      for (const role of ["read", "write"] as const) {
        const key = await createKey(server, project, role);
        const stream = await EventStreamClient.open(await advertised(key.key), { key: null });
        await stream.next(`a refetch for a ${role} key`, isRefetch);
        await stream.close();
      }
      await Promise.all([bearer.close(), apiKey.close()]);
    });

    test("refusals: no key, a bad or tampered token, an admin key; the token opens nothing else", async () => {
      const url = await advertised();
      const token = new URL(url).searchParams.get("token") ?? "";
      const path = "/ofrep/v1/event-stream";
      expectProblem(await server.request("GET", path, { key: null }), 401, "unauthorized");
      expectProblem(await server.request("GET", `${path}?token=nonsense`, { key: null }), 401, "unauthorized");
      const tampered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
      expectProblem(await server.request("GET", `${path}?token=${tampered}`, { key: null }), 401, "unauthorized");
      // Another key's id with this token's expiry and signature.
      const other = await createKey(server, project, "check");
      const forged = `${other.id}${token.slice(token.indexOf("."))}`;
      expectProblem(await server.request("GET", `${path}?token=${forged}`, { key: null }), 401, "unauthorized");
      expectProblem(await server.request("GET", path), 403, "forbidden");
      expectProblem(await server.request("GET", `${path}?other=1`, { key: checkKey.key }), 400, "invalid_request");
      // A stream token is not an API key, and the evaluation routes take no token.
      expectProblem(await server.request("GET", path, { key: token }), 401, "unauthorized");
      expectProblem(
        await server.request("POST", `/ofrep/v1/evaluate/flags?token=${token}`, {
          key: null,
          body: { context: { targetingKey: "alice" } },
        }),
        401,
        "unauthorized",
      );
      const head = await fetch(`${server.url}${path}?token=${token}`, { method: "HEAD" });
      assert.equal(head.status, 405);
    });

    test("a revoked key's streams close and its tokens stop working; a deleted project's streams end", async () => {
      const doomed = await createKey(server, project, "check");
      const url = await advertised(doomed.key);
      const byKey = await EventStreamClient.open(url, { key: null });
      const other = await openAdvertised();
      await byKey.next("the first refetch", isRefetch);
      await other.next("the first refetch", isRefetch);
      await server.request("DELETE", `/projects/${project}/keys/${doomed.id}`);
      await waitFor("the revoked key's stream to end", () => byKey.isEnded);
      assert.equal(other.isEnded, false, "other keys' streams go on");
      const again = await EventStreamClient.open(url, { key: null });
      assert.equal(again.status, 401, "the revoked key's token is refused");
      await other.close();

      const gone = await createProject(server);
      const goneKey = await createKey(server, gone, "check");
      const ending = await EventStreamClient.open(await advertised(goneKey.key), { key: null });
      await ending.next("the first refetch", isRefetch);
      await server.request("DELETE", `/projects/${gone}`);
      await waitFor("the deleted project's stream to end", () => ending.isEnded);
    });

    test("a refetch naming a version this instance does not have yet is answered anyway, soon", async () => {
      const started = Date.now();
      const res = await bulk(checkKey.key, {}, "?flagConfigEtag=999999999&flagConfigLastModified=1771622898");
      assert.equal(res.status, 200);
      assert.ok(Date.now() - started < 5000);
    });
  });
}

describe("OFREP stream tokens expire", () => {
  const dialect = DIALECTS[0] ?? "sqlite";
  let server: TestServer;
  const clock = new ManualClock();
  let key: string;
  let keyId: string;

  before(async () => {
    server = await startServer({ dialect, clock });
    const project = await createProject(server);
    ({ key, id: keyId } = await createKey(server, project, "check"));
  });
  after(() => server.close());

  test("a token lasts 15 to 30 minutes; the ETag moves with it, so a 304 never keeps an expired one", async () => {
    const bulk = (headers: Record<string, string> = {}) =>
      server.request("POST", "/ofrep/v1/evaluate/flags", { key, body: { context: {} }, headers });
    const first = await bulk();
    const url = new URL(first.body.eventStreams[0].endpoint.requestUri, server.url).href;
    const etag = first.headers.get("etag") ?? "";
    assert.equal((await bulk({ "if-none-match": etag })).status, 304);

    clock.advance(15 * 60_000);
    const renewed = await bulk({ "if-none-match": etag });
    assert.equal(renewed.status, 200, "a new window: a new token, so no 304");
    const open = await EventStreamClient.open(url, { key: null });
    assert.equal(open.status, 200, "the old token still opens the stream for a while");
    await open.close();

    clock.advance(15 * 60_000);
    const expired = await EventStreamClient.open(url, { key: null });
    assert.equal(expired.status, 401);
    const fresh = await EventStreamClient.open(
      new URL((await bulk()).body.eventStreams[0].endpoint.requestUri, server.url).href,
      { key: null },
    );
    assert.equal(fresh.status, 200);
    await fresh.close();
  });

  test("a token minted by a key holder with a far expiry is refused: the server caps a token's life", async () => {
    // Whoever holds a key can compute its hash, and so a token with any expiry: the server bounds its life.
    const hash = createHash("sha256").update(key, "utf8").digest("hex");
    const mint = (expires: number) => {
      const mac = createHmac("sha256", hash).update(`flagstaff ofrep event stream\0${keyId}\0${expires}`);
      return `${server.url}/ofrep/v1/event-stream?token=${keyId}.${expires}.${mac.digest("base64url")}`;
    };
    const now = Math.floor(clock.now() / 1000);
    const in2100 = await EventStreamClient.open(mint(Date.UTC(2100, 0, 1) / 1000), { key: null });
    assert.equal(in2100.status, 401, "an expiry in 2100");
    assert.match(in2100.events[0]?.data?.detail ?? "", /expired|lifetime|too far/);
    const tooFar = await EventStreamClient.open(mint(now + 36 * 60), { key: null });
    assert.equal(tooFar.status, 401, "36 minutes ahead: more than any token the server issues");
    // The longest-lived token the server issues (30 minutes, plus leeway for instances' clocks) still opens it.
    const longest = await EventStreamClient.open(mint(now + 30 * 60), { key: null });
    assert.equal(longest.status, 200);
    await longest.close();
  });
});
