// The OpenAPI document (GET /openapi.json) is a valid OpenAPI 3.1 document, describes every route the
// server registers, and declares for each operation its success and the errors the service's rules give
// it (docs/api.md, "Errors every endpoint can give"). That the answers themselves match the document is
// checked on every request the harness sends (@flagstaff/test-harness, openapi-conformance.ts); its own tests are below.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertConforms, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import { Validator } from "@seriousme/openapi-schema-validator";

type Json = Record<string, any>;

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const PROBLEM = { $ref: "#/components/schemas/Problem" };
const PUBLIC_PATHS = new Set([
  "/healthz",
  "/readyz",
  // Signing in and out: before there is a session or a key (docs/people.md).
  "/auth/methods",
  "/auth/session",
  "/auth/login",
  "/auth/logout",
  "/auth/link",
  // The project document's JSON Schema, for editors (docs/flags-as-code.md).
  "/schemas/project-document.json",
]);
/** OFREP keeps the protocol's own error shapes for the statuses the protocol defines. */
const OFREP_OWN_ERRORS = new Set(["400", "404", "500"]);

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly op: Json;
}

function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) if (item[method] !== undefined) out.push({ method, path, op: item[method] });
  }
  return out;
}

/**
 * Every method and path the server's router knows, from Fastify's printRoutes tree (one node a line,
 * four columns per level, `(METHODS)` after each node that has handlers), with `:name` as `{name}`.
 */
function registeredRoutes(server: TestServer): string[] {
  const tree = server.service.app.printRoutes({ commonPrefix: false });
  const prefixes: string[] = [];
  const out: string[] = [];
  for (const line of tree.split("\n")) {
    const at = line.indexOf("── ");
    if (at < 0) continue;
    const depth = (at - 1) / 4;
    const match = /^(.*?)(?: \(([^)]*)\))?$/.exec(line.slice(at + 3).trimEnd());
    if (match === null) continue;
    const path = (prefixes[depth - 1] ?? "") + (match[1] ?? "");
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    for (const method of (match[2] ?? "").split(",")) {
      if (method.trim() !== "") out.push(`${method.trim()} ${path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
    }
  }
  return out;
}

/**
 * /openapi.json, the reference UI (/docs, /docs/…, /docs*) and the web console (/ redirects to /console/,
 * its static files) are not operations of the API.
 */
const isHidden = (path: string) =>
  path === "/openapi.json" || path === "/" || /^\/docs($|[/*])/.test(path) || /^\/console($|[/*])/.test(path);

describe("the OpenAPI document", () => {
  let server: TestServer;
  let doc: Json;
  let operations: Operation[];

  before(async () => {
    server = await startServer({ dialect: DIALECTS[0] ?? "sqlite" });
    const res = await fetch(`${server.url}/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    doc = (await res.json()) as Json;
    operations = operationsOf(doc);
  });
  after(() => server.close());

  test("passes an OpenAPI 3.1 validator (@seriousme/openapi-schema-validator)", async () => {
    const result = await new Validator().validate(doc);
    assert.ok(result.valid, `the document is not valid OpenAPI:\n${JSON.stringify(result.errors, null, 2)}`);
    assert.equal(doc.openapi, "3.1.0");
  });

  test("every $ref points at a component schema that exists", () => {
    const broken: string[] = [];
    const walk = (value: unknown, at: string) => {
      if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) walk(v, `${at}/${i}`);
      } else if (value !== null && typeof value === "object") {
        for (const [key, v] of Object.entries(value)) {
          if (key === "$ref") {
            const name = /^#\/components\/schemas\/([^/]+)$/.exec(String(v))?.[1];
            if (name === undefined || doc.components?.schemas?.[name] === undefined) broken.push(`${at}: ${v}`);
          } else walk(v, `${at}/${key}`);
        }
      }
    };
    walk(doc, "");
    assert.deepEqual(broken, []);
  });

  // Swagger UI's "Try it out" checks values with new RegExp(pattern), without the u flag; the server's
  // Ajv compiles the same pattern with it. A pattern that means something else without it (\p{…}, for
  // one) makes the reference UI refuse values the server takes.
  test("every pattern means the same with and without the u flag", () => {
    const patterns = new Set<string>();
    const walk = (value: unknown) => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value !== null && typeof value === "object") {
        for (const [key, v] of Object.entries(value)) {
          if (key === "pattern" && typeof v === "string") patterns.add(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    assert.ok(patterns.size >= 3, [...patterns].join(" "));
    const samples = ["alice", "alice@example.com", "p-1", "a:b.c_d", ".", "..", "...", "👍", "\uD83D", "x\uDC4Dy", ""];
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      samples.push(c, `a${c}b`);
    }
    for (const pattern of patterns) {
      const plain = new RegExp(pattern);
      const unicode = new RegExp(pattern, "u");
      const differ = samples.filter((sample) => plain.test(sample) !== unicode.test(sample));
      assert.deepEqual(differ.slice(0, 5), [], `${pattern} differs without the u flag`);
    }
  });

  test("actor ids: the pattern refuses exactly the control characters (Unicode Cc) and the ids . and ..", () => {
    const params = doc.paths["/projects/{projectId}/flags/{flagName}/check"].get.parameters as Json[];
    const pattern = params.find((p) => p.name === "actorIds")?.schema.items.pattern;
    assert.equal(typeof pattern, "string");
    const meaning = /^(?!\.{1,2}$)\P{Cc}+$/u;
    const samples = [
      "alice",
      ".",
      "..",
      "...",
      ".a",
      "👍",
      "\uD83D",
      "a\u0000",
      "a\u0085b",
      "\u00A0",
      "\u200B",
      "\uFEFF",
    ];
    for (let unit = 0; unit <= 0xffff; unit++) samples.push(`id${String.fromCharCode(unit)}`);
    for (const flags of ["", "u"]) {
      const actual = new RegExp(pattern, flags);
      const differ = samples.filter((sample) => actual.test(sample) !== meaning.test(sample));
      assert.deepEqual(differ.slice(0, 5), [], `with flags "${flags}"`);
    }
  });

  test("describes every route the server registers, and only those", () => {
    // HEAD is Fastify's automatic twin of each GET; /openapi.json and /docs are the document itself.
    const registered = registeredRoutes(server).filter((r) => {
      const [method, path] = r.split(" ") as [string, string];
      return method !== "HEAD" && !isHidden(path);
    });
    assert.ok(registered.length >= 25, `printRoutes parsed: ${registered.join(", ")}`);
    const documented = operations.map((o) => `${o.method.toUpperCase()} ${o.path}`);
    assert.deepEqual(registered.filter((r) => !documented.includes(r)).sort(), [], "registered but missing from paths");
    assert.deepEqual(documented.filter((d) => !registered.includes(d)).sort(), [], "documented but not registered");
    assert.ok(!Object.keys(doc.paths).some(isHidden), "/openapi.json and /docs are not listed");
  });

  test("every operation declares a success response (a 2xx, or the 302 that ends a browser's sign-in)", () => {
    const missing = operations
      .filter(
        ({ op, path }) =>
          !Object.keys(op.responses ?? {}).some(
            (status) => /^2(\d\d|XX)$/.test(status) || (status === "302" && path.startsWith("/auth/")),
          ),
      )
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    assert.deepEqual(missing, []);
  });

  test("every error response is problem details: application/problem+json with the Problem schema", () => {
    assert.equal(doc.components?.schemas?.Problem?.type, "object");
    assert.deepEqual([...(doc.components.schemas.Problem.required ?? [])].sort(), [
      "code",
      "detail",
      "status",
      "title",
      "type",
    ]);
    const wrong: string[] = [];
    for (const { method, path, op } of operations) {
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        if (!/^[45]/.test(status)) continue;
        // /readyz answers a plain {"status": "unavailable"} (docs/api.md, 3.7); OFREP keeps its own shapes.
        if (path === "/readyz" && status === "503") continue;
        if (path.startsWith("/ofrep/") && OFREP_OWN_ERRORS.has(status)) continue;
        const content = response.content ?? {};
        const ok = Object.keys(content).length === 1 && isProblem(content["application/problem+json"]);
        if (!ok) wrong.push(`${method.toUpperCase()} ${path} ${status}: ${JSON.stringify(content)}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test("every operation declares the errors the service's rules give it (docs/api.md)", () => {
    const missing: string[] = [];
    for (const { method, path, op } of operations) {
      const security = (op.security ?? doc.security ?? []) as Json[];
      const keyed = security.length > 0;
      const expected = new Set<string>();
      if (keyed) {
        // A key can be missing (401) or not enough (403); unknown query parameters are refused (400);
        // requests over the rate limit are refused (429); anything can fail unexpectedly (500).
        for (const status of ["400", "401", "403", "429", "500"]) expected.add(status);
        // /whoami accepts every valid key: it can never be refused with 403.
        if (path === "/whoami") expected.delete("403");
        // Everything under /projects needs the database, except the check and the stream, answered from
        // memory (a stream whose log cannot be read starts with a snapshot instead).
        if (path.startsWith("/projects") && !path.endsWith("/check") && !path.endsWith("/stream")) expected.add("503");
      }
      if (path.startsWith("/projects/{projectId}")) expected.add("404");
      if (op.requestBody !== undefined || method === "delete") {
        expected.add("413");
        expected.add("415");
      }
      const declared = Object.keys(op.responses ?? {});
      const lacking = [...expected].filter((status) => !declared.includes(status));
      if (lacking.length > 0) missing.push(`${method.toUpperCase()} ${path} lacks ${lacking.join(", ")}`);
    }
    assert.deepEqual(missing, []);
  });

  test("security: bearer on every operation except /healthz, /readyz and signing in", () => {
    assert.deepEqual(doc.components?.securitySchemes?.bearer, {
      type: "http",
      scheme: "bearer",
      description: doc.components.securitySchemes.bearer.description,
    });
    const wrong: string[] = [];
    for (const { method, path, op } of operations) {
      const security = (op.security ?? doc.security) as Json[] | undefined;
      const name = `${method.toUpperCase()} ${path}`;
      if (PUBLIC_PATHS.has(path)) {
        if (!Array.isArray(security) || security.length !== 0) wrong.push(`${name} must declare security: []`);
        continue;
      }
      if (!Array.isArray(security) || !security.some((requirement) => Object.hasOwn(requirement, "bearer"))) {
        wrong.push(`${name} does not accept bearer: ${JSON.stringify(security)}`);
      }
      for (const requirement of security ?? []) {
        for (const scheme of Object.keys(requirement)) {
          if (doc.components?.securitySchemes?.[scheme] === undefined) wrong.push(`${name}: unknown scheme ${scheme}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });
});

function isProblem(media: Json | undefined): boolean {
  if (media === undefined) return false;
  try {
    assert.deepEqual(media.schema, PROBLEM);
    return true;
  } catch {
    return false;
  }
}

describe("the conformance check the harness runs on every answer", () => {
  let server: TestServer;
  let project: string;
  const problem = (status: number, code: string) => ({
    type: `urn:flagstaff:problem:${code}`,
    title: "Title",
    status,
    detail: "Detail.",
    code,
  });

  before(async () => {
    server = await startServer({ dialect: DIALECTS[0] ?? "sqlite" });
    project = await createProject(server, "conformance");
  });
  after(() => server.close());

  test("accepts documented answers", async () => {
    await assertConforms(server.url, "GET", "/healthz", 200, "application/json; charset=utf-8", { status: "ok" });
    await assertConforms(server.url, "HEAD", "/healthz", 200, "application/json; charset=utf-8", "");
    await assertConforms(
      server.url,
      "GET",
      `/projects/${project}/flags/x?limit=5`,
      404,
      "application/problem+json; charset=utf-8",
      problem(404, "flag_not_found"),
    );
    await assertConforms(server.url, "DELETE", `/projects/${project}/flags/x`, 204, null, "");
    await assertConforms(server.url, "GET", "/metrics", 200, "text/plain; version=0.0.4; charset=utf-8", "# HELP");
  });

  test("refuses a status the operation does not declare", async () => {
    await assert.rejects(
      assertConforms(server.url, "GET", "/healthz", 418, "application/json", { status: "ok" }),
      /GET \/healthz answered 418, which the document does not declare/,
    );
    await assert.rejects(
      assertConforms(server.url, "POST", "/healthz", 200, "application/json", { status: "ok" }),
      /no POST operation at \/healthz/,
    );
  });

  test("refuses a body that does not match the schema, and a media type not declared", async () => {
    await assert.rejects(
      assertConforms(server.url, "GET", "/healthz", 200, "application/json", { status: "fine" }),
      /does not match the document[\s\S]*\/status/,
    );
    await assert.rejects(
      assertConforms(server.url, "GET", `/projects/${project}`, 200, "application/json", { id: project }),
      /must have required property 'name'/,
    );
    await assert.rejects(
      assertConforms(server.url, "GET", `/projects/${project}`, 404, "application/problem+json", { code: "x" }),
      /does not match the document/,
    );
    await assert.rejects(
      assertConforms(server.url, "GET", `/projects/${project}`, 404, "application/json", problem(404, "x")),
      /declares only application\/problem\+json/,
    );
    await assert.rejects(
      assertConforms(server.url, "DELETE", `/projects/${project}/flags/x`, 204, "application/json", { a: 1 }),
      /declares none/,
    );
    await assert.rejects(
      assertConforms(server.url, "GET", `/projects/${project}`, 200, "application/json", ""),
      /no body/,
    );
  });

  test("skips what the document cannot describe, but still checks problem details there", async () => {
    await assertConforms(server.url, "GET", "/nope", 404, "application/problem+json", problem(404, "not_found"));
    await assertConforms(server.url, "PUT", "/projects", 405, "application/problem+json", problem(405, "x"));
    await assertConforms(server.url, "GET", "/projects/%G0", 400, "application/problem+json", problem(400, "x"));
    await assertConforms(server.url, "GET", "/openapi.json", 200, "application/json", {});
    await assertConforms(server.url, "GET", "/docs/static/index.html", 200, "text/html", "<html>");
    await assert.rejects(
      assertConforms(server.url, "GET", "/nope", 404, "application/problem+json", { status: "404" }),
      /do not match the Problem schema/,
    );
  });
});
