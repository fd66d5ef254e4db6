// Property-based HTTP fuzzing of every operation: random bodies, query strings, path segments, headers and
// methods. Whatever arrives, the server never answers 5xx, every 4xx is RFC 9457 problem details whose
// `status` matches, and a refused request leaves the stored data exactly as it was (decisions §3).
import assert from "node:assert/strict";
import { API_ERROR_CODES } from "@flagstaff/core";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { ADMIN_KEY, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";

// ---------------------------------------------------------------------------------------------------------
// The operations, as the route files declare them (features/*/*.routes.ts, app.ts).

type Param = "projectId" | "flagName" | "segmentId" | "actorId" | "keyId";

interface Operation {
  readonly method: string;
  readonly template: string;
  /** Body fields the operation knows. */
  readonly fields: readonly string[];
  /** Query parameters the operation knows. */
  readonly query: readonly string[];
}

const PAGE = ["limit", "before", "after"];
const OPERATIONS: readonly Operation[] = [
  { method: "GET", template: "/healthz", fields: [], query: [] },
  { method: "GET", template: "/readyz", fields: [], query: [] },
  { method: "GET", template: "/openapi.json", fields: [], query: [] },
  { method: "POST", template: "/projects", fields: ["id", "name"], query: [] },
  { method: "GET", template: "/projects", fields: [], query: PAGE },
  { method: "GET", template: "/projects/{projectId}", fields: [], query: [] },
  { method: "DELETE", template: "/projects/{projectId}", fields: [], query: [] },
  { method: "POST", template: "/projects/{projectId}/keys", fields: ["role", "name"], query: [] },
  { method: "GET", template: "/projects/{projectId}/keys", fields: [], query: PAGE },
  { method: "DELETE", template: "/projects/{projectId}/keys/{keyId}", fields: [], query: [] },
  { method: "GET", template: "/projects/{projectId}/flags", fields: [], query: [...PAGE, "name", "q"] },
  { method: "POST", template: "/projects/{projectId}/flags/{flagName}", fields: ["description"], query: [] },
  { method: "GET", template: "/projects/{projectId}/flags/{flagName}", fields: [], query: [] },
  {
    method: "PATCH",
    template: "/projects/{projectId}/flags/{flagName}",
    fields: [
      "description",
      "status",
      "percentageActors",
      "percentageCalls",
      "addActors",
      "removeActors",
      "addSegments",
      "removeSegments",
    ],
    query: [],
  },
  { method: "DELETE", template: "/projects/{projectId}/flags/{flagName}", fields: [], query: [] },
  { method: "GET", template: "/projects/{projectId}/flags/{flagName}/check", fields: [], query: ["actorIds", "cache"] },
  { method: "GET", template: "/projects/{projectId}/flags/{flagName}/segments", fields: [], query: PAGE },
  { method: "GET", template: "/projects/{projectId}/actors/{actorId}/flags", fields: [], query: PAGE },
  { method: "GET", template: "/projects/{projectId}/actors/{actorId}/segments", fields: [], query: PAGE },
  { method: "GET", template: "/projects/{projectId}/actors/{actorId}", fields: [], query: [] },
  { method: "PUT", template: "/projects/{projectId}/actors/{actorId}", fields: ["name", "imageURL"], query: [] },
  { method: "GET", template: "/projects/{projectId}/segments", fields: [], query: PAGE },
  { method: "POST", template: "/projects/{projectId}/segments", fields: ["name", "description"], query: [] },
  { method: "GET", template: "/projects/{projectId}/segments/{segmentId}", fields: [], query: [] },
  {
    method: "PATCH",
    template: "/projects/{projectId}/segments/{segmentId}",
    fields: ["name", "description", "addActors", "removeActors"],
    query: [],
  },
  { method: "DELETE", template: "/projects/{projectId}/segments/{segmentId}", fields: [], query: [] },
  { method: "GET", template: "/projects/{projectId}/segments/{segmentId}/flags", fields: [], query: PAGE },
];

const ALL_FIELDS = [...new Set(OPERATIONS.flatMap((o) => o.fields))];
const ALL_QUERY = ["actorIds", "actorIds[]", "cache", "limit", "before", "after", "name", "q"];
/** Codes a request can get here: all but those of a rate limit, an outage or a failure (none is provoked). */
const CODES = new Set<string>(
  API_ERROR_CODES.filter((code) => code !== "rate_limited" && code !== "unavailable" && code !== "internal"),
);
/** Statuses decisions §3 allows here (no rate limit configured, database up, nothing failing on purpose). */
const STATUSES = new Set([200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 415]);

/**
 * FUZZ_RUNS scales how many requests each property sends: 1 is the full count below, which CI runs
 * (CI=true); 0.1 is a quick pass, 10 a long search. Without it a developer's machine runs LOCAL_SCALE.
 */
const LOCAL_SCALE = 0.25;
function fuzzScale(): number {
  const raw = process.env.FUZZ_RUNS;
  if (raw === undefined || raw === "") return process.env.CI === "true" ? 1 : LOCAL_SCALE;
  const scale = Number(raw);
  if (!(scale > 0))
    throw new Error(`FUZZ_RUNS must be a positive number (a multiple of the full run counts), got "${raw}"`);
  return scale;
}
const SCALE = fuzzScale();
const RUNS_PER_OPERATION = Math.max(1, Math.round(150 * SCALE));
const RUNS_CROSS = Math.max(1, Math.round(250 * SCALE));
/** Rounds of the race between reads and flushes of latestCheckedAt (1.2 s each). */
const FLUSH_RACE_ROUNDS = Math.max(1, Math.round(4 * SCALE));

// ---------------------------------------------------------------------------------------------------------
// Raw HTTP: node:http sends paths, headers and bodies exactly as given (fetch would normalise `..`).

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function rawRequest(
  agent: http.Agent,
  base: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing: Record<string, string | number> = { ...headers };
    if (body !== undefined) outgoing["content-length"] = body.length;
    const req = http.request(
      { agent, host: base.hostname, port: base.port, method, path, headers: outgoing, timeout: 15_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within 15 s to ${method} ${path}`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Percent-encodes every UTF-8 byte outside the unreserved set. */
function pct(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The fixture the fuzz runs against, and its fingerprint.

interface Fixture {
  project: string;
  other: string;
  segments: [string, string];
  keys: { write: string; read: string; check: string; otherWrite: string; revoked: string };
  readKeyId: string;
}

const FLAGS = ["alpha", "beta", "gamma"];
const ACTORS = ["u1", "u2", "u3"];

interface Symbolic {
  /** "real": a value that exists in the fixture (picked by index); "raw": text already fit for a URL. */
  kind: "real" | "raw";
  pick: number;
  text: string;
}

interface FuzzRequest {
  method: string;
  template: string;
  params: Partial<Record<Param, Symbolic>>;
  query: string;
  auth: string;
  contentType: string | null;
  accept: string | null;
  body: { kind: "none" } | { kind: "text"; text: string } | { kind: "bytes"; bytes: number[] } | { kind: "big" };
}

const AUTH_VARIANTS = [
  "none",
  "admin",
  "write",
  "read",
  "check",
  "otherWrite",
  "revoked",
  "lower-bearer",
  "extra-spaces",
  "basic",
  "bare-bearer",
  "bearer-space",
  "token-scheme",
  "key-suffix",
  "two-keys",
] as const;

class FuzzTarget {
  private agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  private base: URL;
  private generation = 0;
  fx!: Fixture;
  baseline!: string[];

  constructor(readonly server: TestServer) {
    this.base = new URL(server.url);
  }

  close(): void {
    this.agent.destroy();
  }

  send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<RawResponse> {
    return rawRequest(this.agent, this.base, method, path, headers, body);
  }

  /** A request as admin with a JSON body; must answer `expected`. */
  private async admin(method: string, path: string, body?: unknown, expected = 200): Promise<any> {
    const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}` };
    let payload: Buffer | undefined;
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = Buffer.from(JSON.stringify(body));
    }
    const res = await this.send(method, path, headers, payload);
    if (res.status !== expected) throw new Error(`fixture: ${method} ${path} → ${res.status} ${res.text}`);
    return res.text === "" ? undefined : JSON.parse(res.text);
  }

  /** Deletes every project and builds the fixture afresh, under new ids. */
  async rebuild(): Promise<void> {
    const gen = ++this.generation;
    for (;;) {
      const page = await this.admin("GET", "/projects?limit=100");
      if (page.data.length === 0) break;
      for (const p of page.data) await this.admin("DELETE", `/projects/${pct(p.id)}`, undefined, 204);
    }
    const project = `fz-${gen}`;
    const other = `fz-other-${gen}`;
    await this.admin("POST", "/projects", { id: project, name: "Fuzzed" }, 201);
    await this.admin("POST", "/projects", { id: other, name: "Bystander" }, 201);
    const key = (p: string, role: string) => this.admin("POST", `/projects/${p}/keys`, { role, name: role }, 201);
    const write = await key(project, "write");
    const read = await key(project, "read");
    const check = await key(project, "check");
    const otherWrite = await key(other, "write");
    const revoked = await key(project, "write");
    await this.admin("DELETE", `/projects/${project}/keys/${revoked.id}`, undefined, 204);
    await this.admin("POST", `/projects/${project}/flags/alpha`, { description: "first flag" }, 201);
    await this.admin("POST", `/projects/${project}/flags/beta`, {}, 201);
    await this.admin("POST", `/projects/${project}/flags/gamma`, { description: "third flag" }, 201);
    await this.admin("POST", `/projects/${other}/flags/alpha`, { description: "bystander" }, 201);
    const s1 = await this.admin("POST", `/projects/${project}/segments`, { name: "seg one", description: "1" }, 201);
    const s2 = await this.admin("POST", `/projects/${project}/segments`, { name: "seg two" }, 201);
    await this.admin("PATCH", `/projects/${project}/segments/${s1.id}`, { addActors: ["u1", "u3"] });
    await this.admin("PATCH", `/projects/${project}/flags/alpha`, {
      status: "conditional",
      percentageActors: 25,
      percentageCalls: 10,
      addActors: ["u1", "u2"],
      addSegments: [s1.id],
    });
    await this.admin("PATCH", `/projects/${project}/flags/beta`, { status: "enabled" });
    await this.admin("PUT", `/projects/${project}/actors/u1`, {
      name: "User One",
      imageURL: "https://example.com/u1.png",
    });
    this.fx = {
      project,
      other,
      segments: [s1.id, s2.id],
      keys: { write: write.key, read: read.key, check: check.key, otherWrite: otherWrite.key, revoked: revoked.key },
      readKeyId: read.id,
    };
    this.baseline = await this.fingerprint();
  }

  /**
   * After a successful check: writes the noted `latestCheckedAt` now (as the flush timer would; `flush`
   * first waits for a timer flush already under way), and takes the fingerprint again.
   */
  async settle(): Promise<void> {
    await this.server.service.recorder.flush();
    this.baseline = await this.fingerprint();
  }

  /** Everything observable about the stored data, as admin. */
  async fingerprint(): Promise<string[]> {
    const { project: p, other: o, segments } = this.fx;
    const paths = [
      "/projects?limit=100",
      `/projects/${p}`,
      `/projects/${p}/keys?limit=100`,
      `/projects/${p}/flags?limit=100`,
      `/projects/${p}/segments?limit=100`,
      `/projects/${p}/flags/alpha`,
      `/projects/${p}/flags/alpha/segments?limit=100`,
      `/projects/${p}/segments/${segments[0]}`,
      `/projects/${p}/segments/${segments[0]}/flags?limit=100`,
      `/projects/${p}/actors/u1`,
      `/projects/${p}/actors/u1/flags?limit=100`,
      `/projects/${p}/actors/u1/segments?limit=100`,
      `/projects/${o}/flags?limit=100`,
      `/projects/${o}/keys?limit=100`,
    ];
    const answers = await Promise.all(
      paths.map((path) => this.send("GET", path, { authorization: `Bearer ${ADMIN_KEY}` })),
    );
    return answers.map((a, i) => `${paths[i]} → ${a.status} ${a.text}`);
  }

  private resolveParam(param: Param, value: Symbolic): string {
    if (value.kind === "raw") return value.text;
    const { fx } = this;
    switch (param) {
      case "projectId":
        return value.pick % 4 === 3 ? fx.other : fx.project;
      case "flagName":
        return FLAGS[value.pick % FLAGS.length] as string;
      case "segmentId":
        return fx.segments[value.pick % 2] as string;
      case "actorId":
        return ACTORS[value.pick % ACTORS.length] as string;
      case "keyId":
        return fx.readKeyId;
    }
  }

  private authorization(variant: string): string | undefined {
    const { keys } = this.fx;
    switch (variant) {
      case "none":
        return undefined;
      case "admin":
        return `Bearer ${ADMIN_KEY}`;
      case "write":
      case "read":
      case "check":
      case "otherWrite":
      case "revoked":
        return `Bearer ${keys[variant]}`;
      case "lower-bearer":
        return `bearer ${keys.write}`;
      case "extra-spaces":
        return `Bearer    ${keys.write}   `;
      case "basic":
        return `Basic ${Buffer.from(`admin:${ADMIN_KEY}`).toString("base64")}`;
      case "bare-bearer":
        return "Bearer";
      case "bearer-space":
        return "Bearer ";
      case "token-scheme":
        return `Token ${ADMIN_KEY}`;
      case "key-suffix":
        return `Bearer ${ADMIN_KEY}x`;
      case "two-keys":
        return `Bearer ${keys.read} ${ADMIN_KEY}`;
      default:
        // Anything else is sent as it is.
        return variant;
    }
  }

  /** The concrete path, headers and body of a generated request. */
  materialise(req: FuzzRequest): { path: string; headers: Record<string, string>; body?: Buffer } {
    let path = req.template;
    for (const [param, value] of Object.entries(req.params) as [Param, Symbolic][]) {
      path = path.replace(`{${param}}`, this.resolveParam(param, value));
    }
    if (req.query !== "") path += `?${req.query}`;
    const headers: Record<string, string> = {};
    const auth = this.authorization(req.auth);
    if (auth !== undefined) headers.authorization = auth;
    if (req.contentType !== null) headers["content-type"] = req.contentType;
    if (req.accept !== null) headers.accept = req.accept;
    let body: Buffer | undefined;
    switch (req.body.kind) {
      case "none":
        break;
      case "text":
        body = Buffer.from(
          req.body.text.replaceAll("@seg0", this.fx.segments[0]).replaceAll("@seg1", this.fx.segments[1]),
          "utf8",
        );
        break;
      case "bytes":
        body = Buffer.from(req.body.bytes);
        break;
      case "big":
        body = Buffer.from(JSON.stringify({ description: "x".repeat(1024 * 1024 + 100) }));
        break;
    }
    return { path, headers, body };
  }

  /**
   * Sends one request and checks the invariants. After a success the fixture moves on (a write is
   * allowed to change it): a successful check or write re-takes the fingerprint, a successful delete
   * rebuilds the fixture; a successful GET must have changed nothing, like a refused request.
   */
  async run(req: FuzzRequest): Promise<void> {
    const { path, headers, body } = this.materialise(req);
    const res = await this.send(req.method, path, headers, body);
    const where = `${req.method} ${path.length > 300 ? `${path.slice(0, 300)}…` : path} ${JSON.stringify(headers)}`;
    const ok = res.status >= 200 && res.status < 300;
    try {
      assert.ok(res.status < 500, `${where} → ${res.status} ${res.text.slice(0, 500)}`);
      assert.ok(STATUSES.has(res.status), `${where} → unexpected status ${res.status} ${res.text.slice(0, 500)}`);
      if (res.status >= 400) {
        const type = res.headers["content-type"] ?? "";
        assert.match(type, /^application\/problem\+json/, `${where} → ${res.status} ${type} ${res.text.slice(0, 500)}`);
        if (req.method !== "HEAD") {
          let problem: any;
          assert.doesNotThrow(
            () => {
              problem = JSON.parse(res.text);
            },
            `${where} → ${res.status} body is not JSON: ${res.text.slice(0, 500)}`,
          );
          assert.equal(typeof problem.code, "string", `${where} → ${res.text.slice(0, 500)}`);
          assert.ok(CODES.has(problem.code), `${where} → unknown code ${problem.code}`);
          assert.equal(problem.status, res.status, `${where} → status field ${problem.status} ≠ ${res.status}`);
          assert.equal(problem.type, `urn:flagstaff:problem:${problem.code}`, `${where} → ${res.text}`);
          assert.equal(typeof problem.title, "string", `${where} → ${res.text}`);
          assert.equal(typeof problem.detail, "string", `${where} → ${res.text}`);
        }
        if (res.status === 405) assert.ok(res.headers.allow, `${where} → 405 without Allow`);
        if (res.status === 401) assert.ok(res.headers["www-authenticate"], `${where} → 401 without WWW-Authenticate`);
      }
      // No lone surrogate is ever stored, so none is ever answered (JSON escapes one as \udXXX).
      assert.doesNotMatch(res.text, /\\ud[89a-f][0-9a-f]{2}/i, `${where} → ${res.status} answered a lone surrogate`);
      if (ok && req.method === "DELETE") {
        await this.rebuild();
        return;
      }
      if (ok && req.method !== "GET" && req.method !== "HEAD") {
        this.baseline = await this.fingerprint();
        return;
      }
      if (ok && req.template.endsWith("/check")) {
        await this.settle();
        return;
      }
      const now = await this.fingerprint();
      const changed = now.flatMap((entry, i) =>
        entry === this.baseline[i] ? [] : [`  before: ${this.baseline[i]}\n  after:  ${entry}`],
      );
      assert.deepEqual(
        changed,
        [],
        `${where} → ${res.status} ${res.text.slice(0, 300)} changed the stored data:\n${changed.join("\n")}`,
      );
    } catch (error) {
      // Start the next run (or shrink step) from a clean fixture; the failure itself is what matters.
      await this.rebuild().catch(() => {});
      throw error;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Arbitraries.

const anyString = (maxLength = 40) => fc.string({ unit: "binary", maxLength });
const notJson = fc
  .oneof(
    anyString(60),
    fc.constantFrom("{", "}", '{"a":', "[1,", "{'a':1}", "{a:1}", "undefined", "NaN", "01", '"', '{"a":1}}', "tru"),
  )
  .filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  });

/** Values of every JSON type, with the allowed and nearly-allowed values of the known fields mixed in. */
const CONTROL = ["\u0000", "a\u0000b", "\u0001", "\u001f", "\u007f", "\u0085", "\u2028", "\ud800", "\ufeff"];
/** Ill-formed UTF-16: lone high and low surrogates, and a pair in the wrong order. */
const LONE_SURROGATES = ["\ud800", "x\ud800", "\udfffx", "a\udc00\ud800b", "\ud83d", "u1\udbff"];
/** Bodies nested far past any real one, bare or under a known field (a recursive walk overflows on them). */
const deepBody = fc
  .tuple(fc.integer({ min: 33, max: 25_000 }), fc.constantFrom("", '{"addActors":', '{"context":{"x":'))
  .map(([levels, prefix]) => {
    const close = prefix === "" ? "" : prefix.startsWith('{"context"') ? "}}" : "}";
    return `${prefix}${"[".repeat(levels)}${"]".repeat(levels)}${close}`;
  });
const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(...CONTROL),
  fc.array(fc.constantFrom(...CONTROL), { minLength: 1, maxLength: 2 }),
  fc.constantFrom(...LONE_SURROGATES),
  fc.array(fc.constantFrom(...LONE_SURROGATES, "u1", "u2"), { minLength: 1, maxLength: 3 }),
  fc.constantFrom(0, 1, 2, 3, 5, 10, 25, 50, 50.5, 75, 100, 101, -1, 1e308, -0, "50", "25"),
  fc.constantFrom("enabled", "disabled", "conditional", "Enabled", "", " ", "on", "write", "read", "check", "admin"),
  fc.constantFrom("https://example.com/a.png", "javascript:alert(1)", "http://", "ftp://x"),
  fc.array(fc.oneof(fc.constantFrom("u1", "u2", "u9", "@seg0", "@seg1", "", "seg_nope"), anyString(12)), {
    maxLength: 5,
  }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.integer({ min: 1000, max: 1002 }).map((n) => Array.from({ length: n }, (_, i) => `id-${i}`)),
  fc.constantFrom(1023, 1024, 1025, 5000).map((n) => "d".repeat(n)),
  anyString(),
);

const knownKeyObject = (fields: readonly string[]) =>
  fc.dictionary(fc.constantFrom(...(fields.length > 0 ? fields : ALL_FIELDS)), fieldValue, { maxKeys: 5 });
const randomKeyObject = fc.dictionary(
  fc.oneof(anyString(12), fc.constantFrom(...ALL_FIELDS, "percentActors", "Description", "__proto__", "constructor")),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 4 },
);
const pollution = fc.constantFrom(
  '{"__proto__": {"polluted": "yes"}}',
  '{"constructor": {"prototype": {"polluted": "yes"}}}',
  '{"description": "x", "__proto__": {"status": "enabled"}}',
  '{"name": "x", "constructor": {"prototype": {"polluted": "yes"}}}',
  '{"__proto__": null}',
);

const bodyArb = (op: Operation): fc.Arbitrary<FuzzRequest["body"]> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: "none" as const }) },
    {
      weight: 2,
      arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ kind: "text" as const, text: JSON.stringify(v) })),
    },
    {
      weight: 5,
      arbitrary: knownKeyObject(op.fields).map((v) => ({ kind: "text" as const, text: JSON.stringify(v) })),
    },
    { weight: 2, arbitrary: randomKeyObject.map((v) => ({ kind: "text" as const, text: JSON.stringify(v) })) },
    { weight: 1, arbitrary: pollution.map((text) => ({ kind: "text" as const, text })) },
    { weight: 2, arbitrary: notJson.map((text) => ({ kind: "text" as const, text })) },
    {
      weight: 1,
      arbitrary: fc.array(fc.nat(255), { maxLength: 40 }).map((bytes) => ({ kind: "bytes" as const, bytes })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "big" as const }) },
    { weight: 1, arbitrary: deepBody.map((text) => ({ kind: "text" as const, text })) },
  );

const contentTypeArb: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  { weight: 2, arbitrary: fc.constant(null) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "application/json;charset=UTF-8",
      "application/json; charset=latin1",
      "application/json; charset=utf-16",
      " application/json ",
      "application/json, text/plain",
      "text/plain",
      "text/plain; charset=utf-8",
      "text/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=xyz",
      "application/problem+json",
      "application/jsonx",
      "application/vnd.api+json",
      "application/octet-stream",
      "*/*",
      "",
      "json",
      "application/",
    ),
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: "binary-ascii", maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")),
  },
);

const acceptArb: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom("application/json", "application/xml", "text/html", "*/*", "", "image/png") },
);

const authArb: fc.Arbitrary<string> = fc.oneof(
  // Mostly keys that get past authentication, so that requests reach validation and storage.
  { weight: 10, arbitrary: fc.constantFrom("admin", "admin", "write") },
  { weight: 6, arbitrary: fc.constantFrom(...AUTH_VARIANTS) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: "binary-ascii", maxLength: 60 })
      .map((s) => s.replace(/[^\x20-\x7e]/g, "").trim())
      .filter((s) => !(AUTH_VARIANTS as readonly string[]).includes(s)),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: "binary-ascii", maxLength: 60 })
      .map((s) => `Bearer ${s.replace(/[^\x21-\x7e]/g, "")}`),
  },
);

/** A path segment: something real, a plausible unknown name, or hostile text (well-formed encoding). */
const wellFormedSegment: fc.Arbitrary<Symbolic> = fc.oneof(
  { weight: 6, arbitrary: fc.nat(11).map((pick) => ({ kind: "real" as const, pick, text: "" })) },
  {
    weight: 2,
    arbitrary: fc
      .stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/)
      .map((text) => ({ kind: "raw" as const, pick: 0, text })),
  },
  {
    weight: 2,
    arbitrary: fc
      .string({ unit: "binary", maxLength: 30 })
      .map((s) => ({ kind: "raw" as const, pick: 0, text: pct(s) })),
  },
  { weight: 2, arbitrary: fc.constantFrom(...CONTROL).map((s) => ({ kind: "raw" as const, pick: 0, text: pct(s) })) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        "..",
        ".",
        "%2e%2e",
        "%2E%2e",
        "%2e",
        "%00",
        "%00%00",
        "a%00b",
        "%2F",
        "..%2F..%2Fetc%2Fpasswd",
        "%5C",
        "%25",
        "%2500",
        "%EF%BB%BF",
        "%F0%9F%98%80",
        "%0A",
        "%0D%0A",
        "%7F",
        "%20",
        "+",
        "~",
        "*",
        "'",
        "%27%20OR%201%3D1",
        "%3B",
        "%3F",
        "%23",
        "%22",
        "%3C",
        "%E2%80%AE",
        "NaN",
        "null",
        "undefined",
        "__proto__",
        "constructor",
        "prototype",
        "fsk_",
        "seg_",
        "flg_",
      )
      .map((text) => ({ kind: "raw" as const, pick: 0, text })),
  },
  {
    weight: 1,
    // Long, but within the router's parameter length: 129–1000 characters once decoded.
    arbitrary: fc
      .tuple(fc.integer({ min: 129, max: 1000 }), fc.constantFrom("a", "%C3%A9", "%00", "-", "%F0%9F%98%80"))
      .map(([n, unit]) => {
        const units = unit.startsWith("%F0") ? Math.floor(n / 2) : n;
        return { kind: "raw" as const, pick: 0, text: unit.repeat(units) };
      }),
  },
);

const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }).map(pct),
  fc.constantFrom(...CONTROL).map(pct),
  fc.constantFrom(...CONTROL).map((c) => Buffer.from(JSON.stringify([c])).toString("base64url")),
  fc.constantFrom(
    "",
    "-1",
    "0",
    "1",
    "20",
    "100",
    "101",
    "86400",
    "86400.9",
    "86401",
    "1e309",
    "-1e309",
    "NaN",
    "Infinity",
    "-0",
    "0x10",
    "1.5",
    "%20",
    "null",
    "true",
    "[]",
    "%00",
    "u1",
    "u1,u2",
    "%25",
    "%",
    "%zz",
    "%C3",
    "%E2%82",
  ),
  fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? "").toString("base64url")),
  fc.array(anyString(10), { maxLength: 3 }).map((v) => pct(Buffer.from(JSON.stringify(v)).toString("base64"))),
  fc.integer({ min: 200, max: 3000 }).map((n) => "q".repeat(n)),
);

const queryArb = (op: Operation): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant("") },
    {
      weight: 6,
      arbitrary: fc
        .array(
          fc.tuple(
            fc.oneof(
              { weight: 4, arbitrary: fc.constantFrom(...(op.query.length > 0 ? op.query : ALL_QUERY)) },
              { weight: 2, arbitrary: fc.constantFrom(...ALL_QUERY) },
              {
                weight: 1,
                arbitrary: fc.constantFrom(
                  "__proto__",
                  "__proto__[x]",
                  "constructor[prototype][x]",
                  "a[b]",
                  "",
                  "%",
                  "actorIds[0]",
                ),
              },
              { weight: 1, arbitrary: anyString(10).map(pct) },
            ),
            fc.option(queryValue, { nil: undefined, freq: 8 }),
          ),
          { minLength: 1, maxLength: 6 },
        )
        .map((pairs) => pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join("&")),
    },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map(pct) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("&&&", "=", "==", "a=1&&b", "?", "a=1;b=2", "actorIds=u1&actorIds[]=u2", "#frag"),
    },
  );

const paramsOf = (template: string): Param[] => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as Param);

function requestArb(
  op: Operation,
  segment: fc.Arbitrary<Symbolic>,
  method?: fc.Arbitrary<string>,
): fc.Arbitrary<FuzzRequest> {
  const params = paramsOf(op.template);
  const paramsArb = fc
    .tuple(...params.map(() => segment))
    .map((values) => Object.fromEntries(params.map((p, i) => [p, values[i]])) as FuzzRequest["params"]);
  return fc
    .record({
      method: method ?? fc.constant(op.method),
      params: paramsArb,
      query: queryArb(op),
      auth: authArb,
      contentType: contentTypeArb,
      accept: acceptArb,
      body: bodyArb(op),
    })
    .map((r) => ({
      ...r,
      template: op.template,
      // A GET or HEAD carries no body: that is what clients send, and fetch-like clients cannot do otherwise.
      body: r.method === "GET" || r.method === "HEAD" ? { kind: "none" as const } : r.body,
    }));
}

/** Malformed percent-encoding in one path segment. */
const badEncodingSegment: fc.Arbitrary<Symbolic> = fc
  .oneof(
    fc.constantFrom(
      "%",
      "%%",
      "%G0",
      "%0",
      "a%",
      "%C3",
      "%E2%82",
      "%FF",
      "%C3%28",
      "%C0%AE",
      "%ED%A0%80",
      "%F8%88%80%80%80",
    ),
    fc
      .tuple(anyString(5).map(pct), fc.constantFrom("%", "%C3", "%ZZ", "%E2%82"), anyString(5).map(pct))
      .map((p) => p.join("")),
  )
  .map((text) => ({ kind: "raw" as const, pick: 0, text }));

/** A path segment longer than the router's 4,096-character parameter limit (and the spec's own limits). */
const overlongSegment: fc.Arbitrary<Symbolic> = fc
  .tuple(fc.integer({ min: 4097, max: 20000 }), fc.constantFrom("a", "%C3%A9", "Z9"))
  .map(([n, unit]) => ({
    kind: "raw" as const,
    pick: 0,
    text: unit.repeat(unit.startsWith("%") ? Math.ceil(n / 2) : n),
  }));

const withParams = OPERATIONS.filter((o) => paramsOf(o.template).length > 0);

/** Replaces one path parameter, picked at random, of generated requests with a value of `segment`. */
function withOneParam(requests: fc.Arbitrary<FuzzRequest>, segment: fc.Arbitrary<Symbolic>): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(requests, fc.nat(), segment).map(([req, index, value]) => {
    const names = Object.keys(req.params) as Param[];
    const name = names[index % names.length] as Param;
    return { ...req, params: { ...req.params, [name]: value } };
  });
}

// ---------------------------------------------------------------------------------------------------------

for (const dialect of DIALECTS) {
  describe(`fuzz [${dialect}], ${RUNS_PER_OPERATION} runs per operation (FUZZ_RUNS ${SCALE})`, () => {
    let server: TestServer;
    let target: FuzzTarget;
    before(async () => {
      server = await startServer({ dialect });
      target = new FuzzTarget(server);
      await target.rebuild();
    });
    after(async () => {
      target?.close();
      await server.close();
    });

    for (const op of OPERATIONS) {
      test(`${op.method} ${op.template}: random bodies, queries, path segments and headers`, async () => {
        await target.rebuild();
        await fc.assert(
          fc.asyncProperty(requestArb(op, wellFormedSegment), (req) => target.run(req)),
          { numRuns: RUNS_PER_OPERATION },
        );
      });
    }

    test("every path with a method picked at random", async () => {
      await target.rebuild();
      const method = fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...OPERATIONS).chain((op) => requestArb(op, wellFormedSegment, method)),
          (req) => target.run(req),
        ),
        { numRuns: RUNS_CROSS },
      );
    });

    test("latestCheckedAt as read back never moves backwards while checks are flushed (the fingerprint relies on it)", async () => {
      const { project } = target.fx;
      const admin = { authorization: `Bearer ${ADMIN_KEY}` };
      const backwards: string[] = [];
      for (let round = 0; round < FLUSH_RACE_ROUNDS; round++) {
        const checked = await target.send("GET", `/projects/${project}/flags/gamma/check`, admin);
        assert.equal(checked.status, 200, checked.text);
        const until = Date.now() + 1200;
        await Promise.all(
          [0, 1, 2, 3].map(async () => {
            let last = "";
            while (Date.now() < until) {
              const res = await target.send("GET", `/projects/${project}/flags/gamma`, admin);
              assert.equal(res.status, 200, res.text);
              // null (never checked) sorts before every timestamp.
              const at: string = JSON.parse(res.text).latestCheckedAt ?? "";
              if (at < last) backwards.push(`round ${round}: ${last} then ${at || "null"}`);
              last = at;
            }
          }),
        );
      }
      await target.settle();
      assert.deepEqual(backwards, [], `a read went back in time:\n${backwards.slice(0, 10).join("\n")}`);
    });

    test("every operation with malformed percent-encoding in a path segment", async () => {
      await target.rebuild();
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...withParams)
            .chain((op) => withOneParam(requestArb(op, wellFormedSegment), badEncodingSegment)),
          (req) => target.run(req),
        ),
        { numRuns: RUNS_CROSS },
      );
    });

    test("every operation with a path segment over 4,096 characters", async () => {
      await target.rebuild();
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...withParams)
            .chain((op) => withOneParam(requestArb(op, wellFormedSegment), overlongSegment)),
          (req) => target.run(req),
        ),
        { numRuns: RUNS_CROSS },
      );
    });
  });
}
