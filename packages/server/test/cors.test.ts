import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../src/kernel/config.js";
import {
  type ApiResponse,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const dialect = DIALECTS[0] ?? "sqlite";
const PAGE = "http://localhost:5173";
const OTHER_PAGE = "https://app.example.com";
const STRANGER = "http://evil.test";

/** A browser's preflight: OPTIONS with Origin and the method and headers the real request will use. */
function preflight(server: TestServer, path: string, origin: string, method = "POST"): Promise<ApiResponse> {
  return server.request("OPTIONS", path, {
    key: null,
    conformance: false,
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization,content-type,if-none-match",
    },
  });
}

const list = (value: string | null) => (value ?? "").split(",").map((item) => item.trim().toLowerCase());

/** The headers a page on an allowed origin needs to read an answer, whatever its status. */
function assertReadableBy(res: ApiResponse, origin: string): void {
  assert.equal(res.headers.get("access-control-allow-origin"), origin, `${res.status} ${res.text}`);
  assert.ok(list(res.headers.get("vary")).includes("origin"), `Vary: ${res.headers.get("vary")}`);
  const exposed = list(res.headers.get("access-control-expose-headers"));
  for (const header of ["etag", "retry-after", "www-authenticate"]) assert.ok(exposed.includes(header), header);
}

describe(`CORS [${dialect}]`, () => {
  describe("off by default", () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    test("answers carry no CORS headers, and OPTIONS stays the 405 it always was", async () => {
      const res = await server.request("GET", "/healthz", { key: null, headers: { origin: PAGE } });
      assert.equal(res.status, 200);
      for (const name of res.headers.keys()) assert.doesNotMatch(name, /^access-control-/);
      assert.doesNotMatch(res.headers.get("vary") ?? "", /origin/i);
      const options = await preflight(server, "/ofrep/v1/evaluate/flags", PAGE);
      expectProblem(options, 405, "method_not_allowed");
      assert.equal(options.headers.get("access-control-allow-origin"), null);
    });
  });

  describe("with CORS_ALLOWED_ORIGINS", () => {
    let server: TestServer;
    let project: string;
    let checkKey: string;
    before(async () => {
      server = await startServer({ dialect, env: { CORS_ALLOWED_ORIGINS: `${PAGE}, ${OTHER_PAGE}` } });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      await server.request("POST", `/projects/${project}/flags/banner`, {});
    });
    after(() => server.close());

    test("an allowed origin's preflight is 204 with the methods and headers the API uses, and needs no key", async () => {
      for (const [path, method] of [
        ["/ofrep/v1/evaluate/flags", "POST"],
        [`/projects/${project}/flags/banner`, "PATCH"],
        [`/projects/${project}/actors/alice`, "PUT"],
      ] as const) {
        for (const origin of [PAGE, OTHER_PAGE]) {
          const res = await preflight(server, path, origin, method);
          assert.equal(res.status, 204, `${method} ${path}: ${res.text}`);
          assert.equal(res.text, "");
          assert.equal(res.headers.get("access-control-allow-origin"), origin);
          assert.ok(list(res.headers.get("vary")).includes("origin"));
          const methods = list(res.headers.get("access-control-allow-methods"));
          for (const m of ["get", "head", "post", "put", "patch", "delete"]) assert.ok(methods.includes(m), m);
          const headers = list(res.headers.get("access-control-allow-headers"));
          for (const h of ["authorization", "content-type", "if-none-match", "if-match", "x-api-key"]) {
            assert.ok(headers.includes(h), h);
          }
          assert.equal(res.headers.get("access-control-allow-credentials"), null, "keys are sent, never cookies");
          assert.ok(Number(res.headers.get("access-control-max-age")) > 0);
        }
      }
    });

    test("a preflight on a path the API does not have is 204 too, so the page can read the 404 that follows", async () => {
      const res = await preflight(server, "/no/such/path", PAGE, "GET");
      assert.equal(res.status, 204);
      assert.equal(res.headers.get("access-control-allow-origin"), PAGE);
      const actual = await server.request("GET", "/no/such/path", { key: null, headers: { origin: PAGE } });
      expectProblem(actual, 404, "not_found");
      assertReadableBy(actual, PAGE);
    });

    test("real answers to an allowed origin expose ETag, also on the 304 the web provider polls for", async () => {
      const body = { context: { targetingKey: "alice" } };
      const first = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body,
        headers: { origin: PAGE },
      });
      assert.equal(first.status, 200);
      assertReadableBy(first, PAGE);
      const etag = first.headers.get("etag");
      assert.ok(etag);
      const again = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body,
        headers: { origin: PAGE, "if-none-match": etag },
      });
      assert.equal(again.status, 304);
      assertReadableBy(again, PAGE);
      assert.equal(again.headers.get("etag"), etag);
      const check = await server.request("GET", `/projects/${project}/flags/banner/check`, {
        key: checkKey,
        headers: { origin: OTHER_PAGE },
      });
      assert.equal(check.status, 200);
      assertReadableBy(check, OTHER_PAGE);
    });

    test("error answers carry the CORS headers too, so the page can read the problem", async () => {
      const unauthorized = await server.request("GET", `/projects/${project}/flags/banner/check`, {
        key: null,
        headers: { origin: PAGE },
      });
      expectProblem(unauthorized, 401, "unauthorized");
      assertReadableBy(unauthorized, PAGE);
      assert.ok(unauthorized.headers.get("www-authenticate"));
      const badKey = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: "fsk_nope",
        body: {},
        headers: { origin: PAGE },
      });
      expectProblem(badKey, 401, "unauthorized");
      assertReadableBy(badKey, PAGE);
      const forbidden = await server.request("GET", "/projects", { key: checkKey, headers: { origin: PAGE } });
      expectProblem(forbidden, 403, "forbidden");
      assertReadableBy(forbidden, PAGE);
      const missing = await server.request("GET", `/projects/${project}/flags/nope/check`, {
        key: checkKey,
        headers: { origin: PAGE },
      });
      expectProblem(missing, 404, "flag_not_found");
      assertReadableBy(missing, PAGE);
      const invalid = await server.request("GET", `/projects/${project}/flags/banner/check?actorIds=..`, {
        key: checkKey,
        headers: { origin: PAGE },
      });
      expectProblem(invalid, 400, "invalid_request");
      assertReadableBy(invalid, PAGE);
      const wrongMethod = await server.request("PUT", "/projects", { body: {}, headers: { origin: PAGE } });
      expectProblem(wrongMethod, 405, "method_not_allowed");
      assertReadableBy(wrongMethod, PAGE);
      assert.doesNotMatch(wrongMethod.headers.get("allow") ?? "", /OPTIONS/, "the preflight route is not an operation");
    });

    test("an origin not in the list gets no Access-Control-Allow-Origin; its preflight is a bare 204, not a 405 or 401", async () => {
      for (const path of ["/ofrep/v1/evaluate/flags", "/no/such/path"]) {
        const res = await preflight(server, path, STRANGER);
        assert.equal(res.status, 204, res.text);
        assert.equal(res.headers.get("access-control-allow-origin"), null);
        assert.ok(
          list(res.headers.get("vary")).includes("origin"),
          "a cache must not hand this answer to another origin",
        );
      }
      // Near misses are strangers too: origins are compared exactly, as browsers send them.
      for (const origin of ["http://localhost:5174", "https://localhost:5173", "http://app.example.com", "null"]) {
        const res = await preflight(server, "/ofrep/v1/evaluate/flags", origin);
        assert.equal(res.headers.get("access-control-allow-origin"), null, origin);
      }
      // The server still answers (a browser simply will not let the page read it).
      const actual = await server.request("GET", `/projects/${project}/flags/banner/check`, {
        key: checkKey,
        headers: { origin: STRANGER },
      });
      assert.equal(actual.status, 200);
      assert.equal(actual.headers.get("access-control-allow-origin"), null);
    });

    test("unknown paths stay 404 and requests without Origin are served as before", async () => {
      expectProblem(await server.request("GET", "/no/such/path", { key: null }), 404, "not_found");
      const check = await server.request("GET", `/projects/${project}/flags/banner/check`, { key: checkKey });
      assert.equal(check.status, 200);
      assert.equal(check.headers.get("access-control-allow-origin"), null);
      // An OPTIONS that is not a preflight gets the same empty 204, never a text/plain 400.
      const options = await server.request("OPTIONS", "/projects", { key: null, conformance: false });
      assert.equal(options.status, 204);
      assert.equal(options.headers.get("access-control-allow-origin"), null);
    });
  });

  describe("with CORS_ALLOWED_ORIGINS=* and rate limiting", () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { CORS_ALLOWED_ORIGINS: "*", RATE_LIMIT_PER_MINUTE: "2" } });
    });
    after(() => server.close());

    test("* lets every origin read answers, 429 and its Retry-After included", async () => {
      const res = await preflight(server, "/ofrep/v1/evaluate/flags", STRANGER);
      assert.equal(res.status, 204);
      assert.equal(res.headers.get("access-control-allow-origin"), "*");
      let limited: ApiResponse | undefined;
      for (let i = 0; i < 5 && limited === undefined; i++) {
        const answer = await server.request("GET", "/projects", { headers: { origin: STRANGER } });
        assert.equal(answer.headers.get("access-control-allow-origin"), "*");
        if (answer.status === 429) limited = answer;
      }
      assert.ok(limited, "the limit of 2 per minute was never reached");
      expectProblem(limited, 429, "rate_limited");
      assert.ok(limited.headers.get("retry-after"));
      assert.ok(list(limited.headers.get("access-control-expose-headers")).includes("retry-after"));
    });
  });

  describe("configuration", () => {
    const load = (value: string) => loadConfig({ DATABASE_URL: "file::memory:", CORS_ALLOWED_ORIGINS: value });

    test("a comma-separated list of origins, spaces and repeats ignored; unset or empty means off", () => {
      assert.deepEqual(loadConfig({ DATABASE_URL: "file::memory:" }).corsAllowedOrigins, []);
      assert.deepEqual(load("").corsAllowedOrigins, []);
      assert.deepEqual(
        load(" http://localhost:5173 ,https://app.example.com,http://localhost:5173").corsAllowedOrigins,
        ["http://localhost:5173", "https://app.example.com"],
      );
      assert.deepEqual(load("http://[::1]:8081,https://xn--bcher-kva.example").corsAllowedOrigins, [
        "http://[::1]:8081",
        "https://xn--bcher-kva.example",
      ]);
      assert.deepEqual(load("*").corsAllowedOrigins, ["*"]);
    });

    test("anything that is not an origin as a browser sends it is refused at start, naming the entry", () => {
      const cases: [string, RegExp][] = [
        ["localhost:5173", /"localhost:5173"/],
        ["app.example.com", /"app\.example\.com"/],
        ["http://localhost:5173/", /did you mean http:\/\/localhost:5173\?/],
        ["https://app.example.com/app", /did you mean https:\/\/app\.example\.com\?/],
        ["https://App.Example.com", /did you mean https:\/\/app\.example\.com\?/],
        ["https://app.example.com:443", /did you mean https:\/\/app\.example\.com\?/],
        ["http://user@app.example.com", /"http:\/\/user@app\.example\.com"/],
        ["ftp://files.example.com", /"ftp:\/\/files\.example\.com"/],
        ["null", /"null"/],
        ["http://localhost:5173,,https://app.example.com", /""/],
        ["*, http://localhost:5173", /\* .*alone/],
        ["*.example.com", /"\*\.example\.com"/],
      ];
      for (const [value, message] of cases) {
        assert.throws(
          () => load(value),
          (error: unknown) =>
            error instanceof ConfigError && /^CORS_ALLOWED_ORIGINS/.test(error.message) && message.test(error.message),
          value,
        );
      }
    });
  });
});
