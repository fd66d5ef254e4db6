import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, afterEach, before, describe, test } from "node:test";
import { type FetchLike, FlagstaffClient, FlagstaffError, type FlagstaffClientOptions } from "../src/index.js";

type Handler = (request: IncomingMessage, response: ServerResponse, attempt: number) => void;

interface Recorded {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** A tiny HTTP server whose answers each test scripts. */
class FakeServer {
  readonly requests: Recorded[] = [];
  handler: Handler = (_req, res) => json(res, 200, {});
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        this.requests.push({
          method: req.method ?? "",
          url: req.url ?? "",
          authorization: req.headers.authorization,
          contentType: req.headers["content-type"],
          body,
        });
        this.handler(req, res, this.requests.length);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(handler: Handler): void {
    this.requests.length = 0;
    this.handler = handler;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const type = status >= 400 ? "application/problem+json" : "application/json";
  res.writeHead(status, { "content-type": `${type}; charset=utf-8`, ...headers });
  res.end(JSON.stringify(body));
}

function problem(res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}): void {
  json(res, status, { type: `urn:flagstaff:problem:${code}`, title: code, status, detail: `a ${code}`, code }, headers);
}

const PROJECT = { id: "shop", name: "Shop", createdAt: "2026-11-22T12:30:33.969Z" };
const FLAG = {
  id: "flg_1",
  projectId: "shop",
  name: "f",
  description: "",
  status: "disabled",
  percentageActors: 0,
  percentageCalls: 0,
  createdAt: PROJECT.createdAt,
  updatedAt: PROJECT.createdAt,
  latestCheckedAt: null,
  statusChangedAt: PROJECT.createdAt,
};

/** 503 (Retry-After: 0) on the first `failures` attempts, then `ok`. */
const failThen =
  (failures: number, ok: (res: ServerResponse) => void, status = 503): Handler =>
  (_req, res, attempt) => {
    if (attempt <= failures)
      problem(res, status, status === 429 ? "rate_limited" : "unavailable", { "retry-after": "0" });
    else ok(res);
  };

async function caught(promise: Promise<unknown>): Promise<FlagstaffError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FlagstaffError, `expected a FlagstaffError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected the call to fail");
}

describe("transport: retries, timeouts, errors, encoding", () => {
  const fake = new FakeServer();
  const client = (options: Partial<FlagstaffClientOptions> = {}) =>
    new FlagstaffClient({ baseUrl: fake.url, apiKey: "fsk_test", retryDelayMs: 5, ...options });

  before(() => fake.start());
  after(() => fake.stop());
  afterEach(() => fake.reset((_req, res) => json(res, 200, {})));

  test("a GET answered 503 twice (Retry-After: 0) succeeds on the third attempt", async () => {
    fake.reset(failThen(2, (res) => json(res, 200, PROJECT)));
    assert.deepEqual(await client().projects.get("shop"), PROJECT);
    assert.equal(fake.requests.length, 3);
    assert.ok(fake.requests.every((r) => r.method === "GET" && r.url === "/projects/shop"));
  });

  test("429 is retried too; PUT and DELETE are retried", async () => {
    fake.reset(failThen(1, (res) => json(res, 200, PROJECT), 429));
    await client().projects.get("shop");
    assert.equal(fake.requests.length, 2);

    fake.reset(
      failThen(2, (res) => json(res, 200, { actorId: "a", name: null, imageURL: null, createdAt: PROJECT.createdAt })),
    );
    await client().actors.put("shop", "a", { name: null });
    assert.equal(fake.requests.length, 3);
    assert.ok(fake.requests.every((r) => r.method === "PUT"));

    fake.reset(
      failThen(1, (res) => {
        res.writeHead(204);
        res.end();
      }),
    );
    assert.equal(await client().flags.delete("shop", "f"), undefined);
    assert.equal(fake.requests.length, 2);
  });

  test("after the last retry the 503 is thrown with its problem details", async () => {
    fake.reset((_req, res) => problem(res, 503, "unavailable", { "retry-after": "0" }));
    const error = await caught(client().flags.get("shop", "f"));
    assert.equal(fake.requests.length, 3, "one attempt and two retries");
    assert.equal(error.status, 503);
    assert.equal(error.code, "unavailable");
    assert.equal(error.problem?.type, "urn:flagstaff:problem:unavailable");

    fake.reset((_req, res) => problem(res, 503, "unavailable"));
    await caught(client({ retries: 0 }).flags.get("shop", "f"));
    assert.equal(fake.requests.length, 1, "retries: 0 makes one attempt");
  });

  test("the error carries the wait the server asked for: Retry-After in seconds or as an HTTP date", async () => {
    fake.reset((_req, res) => problem(res, 429, "too_many_attempts", { "retry-after": "42" }));
    assert.equal((await caught(client().auth.login("a@example.com", "pw"))).retryAfterSeconds, 42);
    const inTwoMinutes = new Date(Date.now() + 120_000).toUTCString();
    fake.reset((_req, res) => problem(res, 429, "too_many_attempts", { "retry-after": inTwoMinutes }));
    const dated = (await caught(client().auth.login("a@example.com", "pw"))).retryAfterSeconds;
    assert.ok(dated !== undefined && dated > 100 && dated <= 120, `retryAfterSeconds ${dated}`);
    fake.reset((_req, res) => problem(res, 401, "invalid_credentials"));
    assert.equal((await caught(client().auth.login("a@example.com", "pw"))).retryAfterSeconds, undefined);
    // One's own password is never retried: a 429 is the answer, not a wait and a second counted attempt.
    fake.reset((_req, res) => problem(res, 429, "too_many_attempts", { "retry-after": "0" }));
    const error = await caught(client().auth.setPassword({ currentPassword: "x", newPassword: "y".repeat(12) }));
    assert.deepEqual([fake.requests.length, error.status, error.retryAfterSeconds], [1, 429, 0]);
  });

  test("POST and PATCH are never retried", async () => {
    fake.reset(failThen(2, (res) => json(res, 201, PROJECT)));
    const error = await caught(client().projects.create({ id: "shop", name: "Shop" }));
    assert.equal(fake.requests.length, 1);
    assert.equal(error.status, 503);
    assert.equal(error.code, "unavailable");
    assert.equal(error.method, "POST");

    fake.reset(failThen(2, (res) => json(res, 200, FLAG)));
    const patch = await caught(client().flags.update("shop", "f", { status: "enabled" }));
    assert.equal(fake.requests.length, 1);
    assert.equal(patch.status, 503);
  });

  test("without Retry-After the backoff grows exponentially from retryDelayMs", async () => {
    fake.reset((_req, res, attempt) => (attempt <= 2 ? problem(res, 503, "unavailable") : json(res, 200, PROJECT)));
    const started = Date.now();
    await client({ retryDelayMs: 100 }).projects.get("shop");
    const elapsed = Date.now() - started;
    assert.equal(fake.requests.length, 3);
    assert.ok(elapsed >= 280, `waited 100 + 200 ms, took ${elapsed} ms`);
  });

  test("a Retry-After is honoured, and one longer than maxRetryDelayMs is capped at it", async () => {
    fake.reset((_req, res, attempt) =>
      attempt === 1 ? problem(res, 429, "rate_limited", { "retry-after": "1" }) : json(res, 200, PROJECT),
    );
    const started = Date.now();
    await client().projects.get("shop");
    assert.ok(Date.now() - started >= 950, "waited the second Retry-After asked for");
    assert.equal(fake.requests.length, 2);

    fake.reset((_req, res) => problem(res, 429, "rate_limited", { "retry-after": "60" }));
    const quick = Date.now();
    const error = await caught(client({ maxRetryDelayMs: 200 }).projects.get("shop"));
    assert.equal(error.code, "rate_limited");
    assert.equal(error.status, 429);
    assert.equal(fake.requests.length, 3, "two retries, each after 200 ms instead of 60 s");
    const took = Date.now() - quick;
    assert.ok(took >= 380 && took < 1500, `took ${took} ms`);
  });

  test("a network error is retried for GET, then thrown as network_error; POST is tried once", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    let attempts = 0;
    const counting: FetchLike = (url, init) => {
      attempts++;
      return globalThis.fetch(url, init);
    };
    const refused = new FlagstaffClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "k",
      retryDelayMs: 5,
      fetch: counting,
    });
    const error = await caught(refused.flags.check("shop", "f"));
    assert.equal(attempts, 3);
    assert.equal(error.code, "network_error");
    assert.equal(error.status, 0);
    assert.equal(error.problem, undefined);
    assert.ok(error.cause, "the fetch failure is kept as the cause");

    attempts = 0;
    const post = await caught(refused.projects.create({ id: "x", name: "x" }));
    assert.equal(post.code, "network_error");
    assert.equal(attempts, 1);
  });

  test("a server that never answers fails with code timeout after about timeoutMs, without retries", async () => {
    fake.reset(() => {
      // never answer
    });
    const started = Date.now();
    const error = await caught(client({ timeoutMs: 300 }).projects.get("shop"));
    const elapsed = Date.now() - started;
    assert.equal(error.code, "timeout");
    assert.equal(error.status, 0);
    assert.ok(elapsed >= 290 && elapsed < 1500, `took ${elapsed} ms`);
    assert.equal(fake.requests.length, 1);
  });

  test("answers that are not problem details or not JSON", async () => {
    fake.reset((_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>Bad gateway</html>");
    });
    const gateway = await caught(client().projects.get("shop"));
    assert.equal(gateway.status, 502);
    assert.equal(gateway.code, "http_error");
    assert.equal(gateway.problem, undefined);
    assert.equal(fake.requests.length, 1, "502 is not retried");

    fake.reset((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{not json");
    });
    const garbled = await caught(client().projects.get("shop"));
    assert.equal(garbled.code, "invalid_response");
    assert.equal(garbled.status, 200);

    fake.reset((_req, res) => json(res, 200, { enabled: "yes" }));
    assert.equal((await caught(client().flags.check("shop", "f"))).code, "invalid_response");
  });

  test("requests: key, JSON body, percent-encoded paths, repeated actorIds, base URL prefix", async () => {
    fake.reset((req, res) => {
      if (req.url?.includes("/check")) return json(res, 200, { enabled: true });
      if (req.method === "POST" && req.url?.startsWith("/prefix/projects/shop/flags/")) return json(res, 201, FLAG);
      return json(res, 200, { actorId: "x", name: null, imageURL: null, createdAt: PROJECT.createdAt });
    });
    const prefixed = new FlagstaffClient({ baseUrl: `${fake.url}/prefix/`, apiKey: "fsk_secret" });
    await prefixed.actors.get("shop", "team/a b?#%ü");
    await prefixed.flags.check("shop", "f", { actorIds: ["a b", "c&d=e", "x+y", "ü/"], cache: 5 });
    await prefixed.flags.create("shop", "f");
    const [get, check, create] = fake.requests;
    assert.equal(get?.url, "/prefix/projects/shop/actors/team%2Fa%20b%3F%23%25%C3%BC");
    assert.equal(get?.authorization, "Bearer fsk_secret");
    assert.equal(get?.contentType, undefined, "no body, no content type");
    assert.equal(
      check?.url,
      "/prefix/projects/shop/flags/f/check?actorIds=a%20b&actorIds=c%26d%3De&actorIds=x%2By&actorIds=%C3%BC%2F&cache=5",
    );
    assert.equal(create?.method, "POST");
    assert.equal(create?.contentType, "application/json");
    assert.equal(create?.body, "{}", "a create without input sends {}");

    fake.reset((_req, res) => json(res, 200, { data: [], pagination: { before: null, after: null } }));
    await prefixed.flags.list("shop", { q: "a&b", name: "n" }).page({ limit: 5, after: "WyJ4Il0" });
    assert.equal(fake.requests[0]?.url, "/prefix/projects/shop/flags?name=n&q=a%26b&limit=5&after=WyJ4Il0");
  });

  test("health and ready send no key; ready reports a 503 as unavailable without retrying", async () => {
    fake.reset((req, res) =>
      req.url === "/readyz" ? json(res, 503, { status: "unavailable" }) : json(res, 200, { status: "ok" }),
    );
    const c = client();
    assert.deepEqual(await c.health(), { status: "ok" });
    assert.deepEqual(await c.ready(), { status: "unavailable" });
    assert.equal(fake.requests.length, 2);
    assert.ok(fake.requests.every((r) => r.authorization === undefined));
  });

  test("a list that iterates follows pagination.after until it is null", async () => {
    fake.reset((req, res) => {
      const after = new URL(req.url ?? "", fake.url).searchParams.get("after");
      if (after === null) return json(res, 200, { data: [PROJECT], pagination: { before: null, after: "c1" } });
      if (after === "c1") return json(res, 200, { data: [PROJECT], pagination: { before: "c0", after: "c2" } });
      return json(res, 200, { data: [], pagination: { before: null, after: null } });
    });
    assert.equal((await client().projects.list().toArray()).length, 2);
    assert.equal(fake.requests.length, 3);

    fake.reset((_req, res) => json(res, 200, { data: [PROJECT], pagination: { before: null, after: "same" } }));
    const looping = await caught(client().projects.list().toArray());
    assert.equal(looping.code, "invalid_response", "a cursor that repeats stops the walk");
  });
});
