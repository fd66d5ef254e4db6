import assert from "node:assert/strict";
import { tracingChannel } from "node:diagnostics_channel";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  type FreshDatabase,
  freshDatabase,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

/**
 * The node:http adapter (http/node-adapter.ts) answers checks and OFREP evaluations in front of Fastify.
 * This suite sends the same raw requests to two servers over one database, one with the adapter and one
 * without it (RATE_LIMIT_PER_MINUTE set, with a limit never reached: then every request goes through
 * Fastify), and requires the same answers: status, body and every header but Date, a generated
 * X-Request-Id and the rate limiter's own. The requests cover what the adapter answers itself and
 * everything it must leave to Fastify (each error, each spelling it does not read); Fastify's
 * `fastify.request.handler` diagnostics channel shows which is which (a 200 that no Fastify handler
 * produced came from the adapter), so the comparison cannot pass by the adapter quietly doing nothing.
 */

/** Requests whose route handler Fastify ran, per server port (Fastify's diagnostics channel). */
const handled = new Map<number, number>();
tracingChannel("fastify.request.handler").subscribe({
  start(message) {
    const port = (message as { request: { raw: { socket?: { localPort?: number } } } }).request.raw.socket?.localPort;
    if (port !== undefined) handled.set(port, (handled.get(port) ?? 0) + 1);
  },
  end() {},
  asyncStart() {},
  asyncEnd() {},
  error() {},
});

/**
 * Headers the two servers may differ in by their configuration, not by the adapter: the rate limiter's
 * own, and connection management. An error answered while the request is still being parsed closes the
 * connection (http/problem.ts); the rate limiter's hook is asynchronous, so without it Fastify answers a
 * 401 or 404 sooner (`Connection: close`) than with it (`keep-alive`).
 */
const RATE_LIMIT_HEADER = /^(x-ratelimit-.*|connection|keep-alive)$/;
const NEVER_REACHED = { RATE_LIMIT_PER_MINUTE: "100000000" };

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request exactly as written (node:http sends the path unaltered, unlike fetch). */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | string[],
): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: { ...res.headers }, body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
    req.on("error", reject);
    if (!Array.isArray(body)) {
      req.end(body);
      return;
    }
    // A body in pieces: each written on its own turn of the event loop, so the server may read it in as many.
    const pieces = [...body];
    const next = () => {
      const piece = pieces.shift();
      if (piece === undefined) req.end();
      else req.write(piece, () => setImmediate(next));
    };
    next();
  });
}

/**
 * FUZZ_RUNS scales the property's run count as in fuzz.test.ts: 1 is the full count (CI), 0.25 without it
 * on a developer's machine.
 */
const FUZZ_SCALE = Number(process.env.FUZZ_RUNS || (process.env.CI === "true" ? 1 : 0.25));
const PROPERTY_RUNS = Math.max(1, Math.round(240 * FUZZ_SCALE));

/** Spellings of a path segment: as it is, wholly or partly percent-encoded, in other case. */
const plainMostly = <T>(plain: T, others: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(plain) }, { weight: 1, arbitrary: others });
const spelling = (name: string) =>
  plainMostly(
    name,
    fc.constantFrom(
      name,
      [...name].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`).join(""),
      `%${name.charCodeAt(0).toString(16).padStart(2, "0")}${name.slice(1)}`,
      name.toUpperCase(),
      encodeURIComponent(name),
    ),
  );
const ACTOR_VALUES = [
  "vip",
  "member-1",
  "a@b.co",
  "a%40b.co",
  "stranger",
  "user-7",
  "%76ip",
  "a+b",
  "",
  ".",
  "..",
  "x".repeat(256),
  "x".repeat(257),
  "caf%C3%A9",
  "%FF",
  "a&b",
];
const CACHE_VALUES = ["0", "60", "86400", "86401", "1.5", "abc", "-1", "007", "1e3", ""];
/** Attributes the flag "attrs" reads (a negated gt on age, a split by tags), in every spelling of the grammar. */
const ATTRIBUTE_PARAMETERS = [
  "attributes[age]",
  "attributes[age][]",
  "attributes%5Bage%5D",
  "attributes%5Bage%5D%5B%5D",
  "attributes%5bage%5d%5b%5d",
  "attributes[age]%5B%5D",
  "attributes[tags]",
  "attributes[tags][]",
  "attributes%5Btags%5D%5B%5D",
  "attributes[__proto__]",
  "attributes[__proto__][]",
  "attributes[a%20b][]",
  "attributes[]",
  "attributes[age][][]",
  "attributes",
];
const ATTRIBUTE_VALUES = ["abc", "5", "50", "beta", "x", "", "a+b", "ab%63", "%FF", "x".repeat(257), "x".repeat(1025)];
const queryPart = fc.oneof(
  fc
    .tuple(fc.constantFrom("actorIds", "actorIds[]", "actorIds%5B%5D"), fc.constantFrom(...ACTOR_VALUES))
    .map(([n, v]) => `${n}=${v}`),
  fc.constantFrom(...CACHE_VALUES).map((v) => `cache=${v}`),
  fc.constantFrom("bogus=1", "actorIds", "cache", "=x", "&", "flagConfigEtag=1", "token=abc"),
  // The environment to check in: the key's own, another, one that does not exist, odd spellings.
  fc.constantFrom(
    "environment=production",
    "environment=staging",
    "environment=nowhere",
    "environment=",
    "environment=STAGING",
    "environment=%73taging",
    "environment[]=staging",
  ),
  // Generated attribute names and values, any characters, encoded as a client would, or with & = [ ] # ?
  // left as they are (encodeURI): a request line cannot hold a space or a control character at all.
  fc
    .tuple(
      fc.string({ maxLength: 6 }),
      fc.string({ maxLength: 6 }),
      fc.boolean(),
      fc.constantFrom(encodeURIComponent, encodeURI),
    )
    .map(([name, value, list, encode]) => `attributes[${encode(name)}]${list ? "[]" : ""}=${encode(value)}`),
  // Attributes: mostly spelled as the adapter reads them, else any spelling and value.
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "attributes[age][]=abc",
        "attributes[age]=abc",
        "attributes[tags][]=x",
        "attributes[tags]=x",
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...ATTRIBUTE_PARAMETERS), fc.constantFrom(...ATTRIBUTE_VALUES))
        .map(([n, v]) => `${n}=${v}`),
    },
  ),
);
const query = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.array(queryPart, { maxLength: 5 }).map((parts) => (parts.length === 0 ? "" : `?${parts.join("&")}`)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "?",
      `?${Array.from({ length: 101 }, (_, i) => `actorIds=u${i}`).join("&")}`,
      `?${Array.from({ length: 100 }, (_, i) => `attributes[age][]=${i + 10}`).join("&")}`,
      `?${Array.from({ length: 101 }, (_, i) => `attributes[age][]=${i + 10}`).join("&")}`,
      `?${Array.from({ length: 50 }, (_, i) => `attributes[a${i}][]=v`).join("&")}`,
      `?${Array.from({ length: 51 }, (_, i) => `attributes[a${i}][]=v`).join("&")}`,
    ),
  },
);
/** OFREP bodies: plain contexts, ones the route reads differently or refuses, and ones past its limits. */
const deep = (levels: number) => `{"context":{"a":${"[".repeat(levels)}1${"]".repeat(levels)}}}`;
const ofrepBody = fc.oneof(
  fc.constantFrom(
    "{}",
    '{"context":{}}',
    '{"context":{"targetingKey":"vip"}}',
    '{"context":{"targetingKey":"stranger","actorIds":["member-1"]}}',
    '{"context":{"actorIds":["a@b.co","user-7"]}}',
    '{"context":{"targetingKey":"v\\u0069p"}}',
    '{"context":{"targetingKey":"vip","email":"e@x.co"}}',

    '{"context":{"targetingKey":""}}',
    '{"context":{"targetingKey":7}}',
    '{"context":{"actorIds":"x"}}',
    '{"flag":"x"}',
    "{",
    "[]",
    "null",
    "",
    deep(7),
    deep(9),
    `{"context":{"actorIds":${JSON.stringify(Array.from({ length: 101 }, (_, i) => `u${i}`))}}}`,
    `{"context":{"a":${JSON.stringify(Array.from({ length: 1001 }, () => 1))}}}`,
    `{"context":{"targetingKey":"vip","pad":"${"x".repeat(40_000)}"}}`,
  ),
  fc
    .array(fc.constantFrom("vip", "member-1", "stranger", "a+b", "%76ip"), { maxLength: 4 })
    .map((ids) => JSON.stringify({ context: { actorIds: ids } })),
);
/** A body cut into one to three pieces. */
const inPieces = (body: string) =>
  fc.tuple(fc.nat(body.length), fc.nat(body.length)).map(([x, y]) => {
    const [i, j] = x < y ? [x, y] : [y, x];
    return [body.slice(0, i), body.slice(i, j), body.slice(j)].filter((piece) => piece !== "");
  });

/** What must be equal: everything but the date and, unless the client sent one, the request id. */
function comparable(answer: RawAnswer, sentRequestId: boolean) {
  const { date: _date, "x-request-id": requestId, ...all } = answer.headers;
  const headers = Object.fromEntries(Object.entries(all).filter(([name]) => !RATE_LIMIT_HEADER.test(name)));
  assert.ok(typeof requestId === "string" && requestId.length > 0, "every answer carries X-Request-Id");
  let body: unknown = answer.body;
  try {
    const parsed = JSON.parse(answer.body) as Record<string, unknown>;
    // A problem's instance names the request id, which differs between the two servers.
    if (!sentRequestId && parsed && typeof parsed === "object" && "instance" in parsed) delete parsed.instance;
    body = parsed;
  } catch {}
  return { status: answer.status, headers, body, requestId: sentRequestId ? requestId : "(generated)" };
}

const long = "a".repeat(257);
const many = Array.from({ length: 101 }, (_, i) => `actorIds=u${i}`).join("&");
const hundred = Array.from({ length: 100 }, (_, i) => `actorIds=u${i}`).join("&");

for (const dialect of DIALECTS) {
  for (const cors of ["", "https://app.example.com", "*"]) {
    describe(`check fast path answers as Fastify does [${dialect}${cors ? `, CORS ${cors}` : ""}]`, () => {
      let database: FreshDatabase;
      let fast: TestServer;
      let slow: TestServer;
      let project: string;
      let other: string;
      const keys: Record<string, string> = {};
      const env = cors ? { CORS_ALLOWED_ORIGINS: cors } : undefined;

      before(async () => {
        database = await freshDatabase(dialect);
        fast = await startServer({ dialect, database, ...(env ? { env } : {}) });
        project = await createProject(fast, "fast-path");
        other = await createProject(fast, "elsewhere");
        const flag = async (name: string, body: object) => {
          const created = await fast.request("POST", `/projects/${project}/flags/${name}`, { body: {} });
          assert.equal(created.status, 201, created.text);
          const patched = await fast.request("PATCH", `/projects/${project}/flags/${name}`, { body });
          assert.equal(patched.status, 200, patched.text);
        };
        const segment = await fast.request("POST", `/projects/${project}/segments`, { body: { name: "beta" } });
        const segmentId = segment.body.id as string;
        await fast.request("PATCH", `/projects/${project}/segments/${segmentId}`, {
          body: { addActors: ["member-1", "a@b.co"] },
        });
        await flag("on", { status: "enabled" });
        await flag("off", { status: "disabled" });
        await flag("some", { status: "conditional", addActors: ["vip"], addSegments: [segmentId] });
        await flag("half", { status: "conditional", percentageActors: 50 });
        await flag("ns:dotted.name-1", { status: "enabled" });
        // "attrs" answers differently for a value and a list of one: a negated gt on age (a list of one
        // text holds, the text never does), a split by tags (a text buckets, a list does not), and a rule
        // on __proto__.
        const typed = await fast.request("POST", `/projects/${project}/flags/attrs`, {
          body: {
            type: "string",
            variants: ["neg", "proto", "left", "right", "none"].map((key) => ({ key, value: key })),
            offVariant: "none",
          },
        });
        assert.equal(typed.status, 201, typed.text);
        const rules = await fast.request("PATCH", `/projects/${project}/flags/attrs`, {
          body: {
            status: "conditional",
            rules: [
              {
                id: "neg",
                conditions: [{ attribute: "age", operator: "gt", values: [10], negate: true }],
                serve: { variant: "neg" },
              },
              {
                id: "proto",
                conditions: [{ attribute: "__proto__", operator: "in", values: ["x"] }],
                serve: { variant: "proto" },
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
          },
        });
        assert.equal(rules.status, 200, rules.text);
        // A flag behind prerequisites: "gated" serves on where "half" serves on to the actor and "attrs"
        // serves left or right.
        await flag("gated", {
          status: "enabled",
          prerequisites: [
            { flag: "half", variants: ["on"] },
            { flag: "attrs", variants: ["left", "right"] },
          ],
        });
        // A second environment where the same flags are configured otherwise.
        const staging = await fast.request("POST", `/projects/${project}/environments`, {
          body: { id: "staging", name: "Staging" },
        });
        assert.equal(staging.status, 201, staging.text);
        for (const [name, body] of [
          ["on", { status: "disabled" }],
          ["off", { status: "enabled" }],
          ["half", { status: "conditional", percentageActors: 25 }],
          ["attrs", { status: "enabled" }],
          ["gated", { status: "conditional", addActors: ["vip"], prerequisites: [{ flag: "on", variants: ["off"] }] }],
        ] as const) {
          const res = await fast.request("PATCH", `/projects/${project}/flags/${name}?environment=staging`, { body });
          assert.equal(res.status, 200, res.text);
        }
        for (const role of ["check", "read", "write"] as const) keys[role] = (await createKey(fast, project, role)).key;
        keys.elsewhere = (await createKey(fast, other, "check")).key;
        // A check key bound to staging, and a write key bound to none (check and read keys are always bound).
        const keyFor = async (role: "check" | "write", environment: string | null) => {
          const res = await fast.request("POST", `/projects/${project}/keys`, {
            body: { role, name: `${role} ${environment}`, environment },
          });
          assert.equal(res.status, 201, res.text);
          return res.body.key as string;
        };
        keys.staging = await keyFor("check", "staging");
        keys.unbound = await keyFor("write", null);
        slow = await startServer({ dialect, database, env: { ...env, ...NEVER_REACHED } });
      });
      after(async () => {
        await slow?.stop();
        await fast?.stop();
        await database?.drop();
      });

      const fastHandled = () => handled.get(Number(new URL(fast.url).port)) ?? 0;
      /** Whether the adapter answered: a 200 for which Fastify ran no handler. */
      const byAdapter = (answer: RawAnswer, handledBefore: number) =>
        answer.status === 200 && fastHandled() === handledBefore;

      /** Sends one request to both servers; answers whether the adapter answered it. */
      async function same(
        path: string,
        headers: Record<string, string> = {},
        method = "GET",
        body?: string | string[],
      ): Promise<boolean> {
        const before = fastHandled();
        const a = await raw(fast.url, method, path, headers, body);
        const taken = byAdapter(a, before);
        const b = await raw(slow.url, method, path, headers, body);
        const sentId =
          headers["x-request-id"] !== undefined && /^[A-Za-z0-9._:/+=-]{1,128}$/.test(headers["x-request-id"]);
        const what = `${method} ${path} ${JSON.stringify(headers)} ${JSON.stringify(body)}`;
        assert.equal(a.body, b.body, what);
        assert.deepEqual(comparable(a, sentId), comparable(b, sentId), what);
        return taken;
      }
      const check = (flag: string, query = "") => `/projects/${project}/flags/${flag}/check${query}`;

      /** One OFREP evaluation to both servers, bodies compared byte for byte; answers whether the fast path answered. */
      async function sameOfrep(flag: string, body: string, headers: Record<string, string>, path?: string) {
        return same(path ?? `/ofrep/v1/evaluate/flags/${flag}`, headers, "POST", body);
      }
      const withKey = (role = "check") => ({ authorization: `Bearer ${keys[role]}` });

      test("answers 200s itself, with the same body and headers", async () => {
        const cases: [string, Record<string, string>][] = [
          [check("on"), withKey()],
          [check("off"), withKey()],
          [check("some", "?actorIds=vip"), withKey()],
          [check("some", "?actorIds=stranger"), withKey()],
          [check("some", "?actorIds=stranger&actorIds=member-1"), withKey()],
          [check("some", "?actorIds[]=stranger&actorIds[]=a@b.co"), withKey()],
          [check("half", "?actorIds=user-1&actorIds=user-2&actorIds=user-3"), withKey()],
          [check("some", `?${hundred}`), withKey()],
          [check("on", "?cache=60"), withKey()],
          [check("on", "?cache=0"), withKey()],
          [check("on", "?cache=86400&actorIds=x"), withKey()],
          [check("on", "?"), withKey()],
          [check("ns:dotted.name-1"), withKey()],
          [check("on"), withKey("read")],
          [check("on"), withKey("write")],
          [check("on"), { authorization: `Bearer ${ADMIN_KEY}` }],
          [check("on"), { "x-api-key": keys.check as string }],
          [check("on"), { ...withKey(), "x-request-id": "trace-123" }],
          [check("on"), { ...withKey(), "x-request-id": "not sane!" }],
          // Attributes: a value, a name repeated, and the list spelling `[]` (so a list of one), brackets
          // plain or percent-encoded.
          [check("attrs", "?attributes[age]=abc"), withKey()],
          [check("attrs", "?attributes[age][]=abc"), withKey()],
          [check("attrs", "?attributes%5Bage%5D%5B%5D=abc"), withKey()],
          [check("attrs", "?attributes%5bage%5d%5b%5d=abc&actorIds=u"), withKey()],
          [check("attrs", "?attributes[age][]=abc&attributes[age][]=50"), withKey()],
          [check("attrs", "?attributes[age]=abc&attributes[age]=50"), withKey()],
          [check("attrs", "?attributes[age][]=5&attributes[tags]=beta"), withKey()],
          [check("attrs", "?attributes[tags]=beta"), withKey()],
          [check("attrs", "?attributes[tags][]=beta"), withKey()],
          [check("attrs", "?attributes[tags][]=beta&attributes[tags][]=x&cache=60"), withKey()],
          [check("attrs", "?attributes[__proto__]=x"), withKey()],
          [check("attrs", "?attributes[__proto__][]=x&attributes[age]=50"), withKey()],
          [
            check("attrs", `?${Array.from({ length: 100 }, (_, i) => `attributes[age][]=${i + 10}`).join("&")}`),
            withKey(),
          ],
          [check("attrs", `?${Array.from({ length: 50 }, (_, i) => `attributes[a${i}][]=v`).join("&")}`), withKey()],
        ];
        for (const [path, headers] of cases) {
          assert.equal(await same(path, headers), true, `the fast path answers ${path}`);
        }
        // The answers differ as the grammar says (the comparison above only shows the two doors agree).
        const variant = async (query: string) =>
          JSON.parse((await raw(fast.url, "GET", check("attrs", query), withKey())).body).variant;
        assert.equal(await variant("?attributes[age][]=abc"), "neg");
        assert.equal(await variant("?attributes[age]=abc"), "none");
        assert.equal(await variant("?attributes[tags][]=beta&attributes[age]=50"), "none");
        assert.match(await variant("?attributes[tags]=beta&attributes[age]=50"), /^(left|right)$/);
        assert.equal(await variant("?attributes[__proto__]=x&attributes[age]=50"), "proto");
      });

      test("leaves every error and every spelling it does not read to Fastify", async () => {
        const cases: [string, Record<string, string>, string?][] = [
          [check("on"), {}],
          [check("on"), { authorization: "Basic abc" }],
          [check("on"), { authorization: "Bearer fsk_unknown" }],
          [check("on"), withKey("elsewhere")],
          [check("missing"), withKey()],
          [`/projects/nowhere/flags/on/check`, withKey()],
          [check("on", "?bogus=1"), withKey()],
          [check("on", "?cache=86401"), withKey()],
          [check("on", "?cache=1.5"), withKey()],
          [check("on", "?cache=abc"), withKey()],
          [check("on", "?cache=1&cache=2"), withKey()],
          [check("on", "?actorIds="), withKey()],
          [check("on", "?actorIds=."), withKey()],
          [check("on", "?actorIds=.."), withKey()],
          [check("on", `?actorIds=${long}`), withKey()],
          [check("on", `?${many}`), withKey()],
          [check("some", "?actorIds=%76ip"), withKey()],
          [check("some", "?actorIds=a+b"), withKey()],
          [check("some", "?actorIds=a&actorIds[]=vip"), withKey()],
          [check("some", "?actorIds=a&"), withKey()],
          [check("on", "?actorIds"), withKey()],
          [`${check("on")}/`, withKey()],
          [`/projects/${project}/flags/%6Fn/check`, withKey()],
          [check("on"), withKey(), "HEAD"],
          [check("on"), withKey(), "POST"],
          // Attributes it does not read: a name written both ways (Fastify's 400), values that need decoding,
          // past the limits, and spellings the grammar does not have.
          [check("attrs", "?attributes[age]=abc&attributes[age][]=def"), withKey()],
          [check("attrs", "?attributes[age][]=def&attributes[age]=abc"), withKey()],
          [check("attrs", "?attributes%5Bage%5D%5B%5D=def&attributes[age]=abc"), withKey()],
          [check("attrs", "?attributes[age][]=ab%63"), withKey()],
          [check("attrs", "?attributes[age][]=a+b"), withKey()],
          [check("attrs", "?attributes[age][]="), withKey()],
          [check("attrs", "?attributes[a%20b][]=x"), withKey()],
          [check("attrs", `?attributes[age][]=${"x".repeat(1025)}`), withKey()],
          [
            check("attrs", `?${Array.from({ length: 101 }, (_, i) => `attributes[age][]=${i + 10}`).join("&")}`),
            withKey(),
          ],
          [check("attrs", `?${Array.from({ length: 51 }, (_, i) => `attributes[a${i}][]=v`).join("&")}`), withKey()],
          [check("attrs", "?attributes[]=x"), withKey()],
          [check("attrs", "?attributes[age][][]=x"), withKey()],
          [check("attrs", "?attributes=x"), withKey()],
        ];
        if (cors) cases.push([check("on"), { ...withKey(), origin: "https://app.example.com" }]);
        if (cors) cases.push([check("on"), { ...withKey(), origin: "https://evil.example.com" }]);
        for (const [path, headers, method] of cases) {
          assert.equal(await same(path, headers, method), false, `Fastify answers ${method ?? "GET"} ${path}`);
        }
      });

      test("OFREP evaluations: plain ones answered in front, the rest by Fastify (bodies read first are given back)", async () => {
        const json = { ...withKey(), "content-type": "application/json" };
        const ours: [string, string, Record<string, string>][] = [
          ["some", '{"context":{"targetingKey":"vip"}}', json],
          ["some", '{"context":{"targetingKey":"stranger"}}', json],
          ["some", '{"context":{"targetingKey":"x","actorIds":["member-1"]}}', json],
          ["some", '{"context":{"actorIds":["a@b.co"]}}', json],
          ["half", '{"context":{"targetingKey":"user-7"}}', json],
          ["on", "{}", json],
          ["off", '{"context":{}}', json],
          ["ns:dotted.name-1", '{"context":{"targetingKey":"x"}}', json],
          ["on", '{"context":{"targetingKey":"x"}}', { ...json, ...withKey("read") }],
          ["on", "{}", { "content-type": "application/json", "x-api-key": keys.check as string }],
          // JSON escapes are read as JSON reads them: the same value Fastify's parser gives.
          ["some", '{"context":{"targetingKey":"v\\u0069p"}}', json],
        ];
        for (const [flag, body, headers] of ours) {
          assert.equal(await sameOfrep(flag, body, headers), true, `the fast path answers ${flag} ${body}`);
        }
        const theirs: [string, string, Record<string, string>, string?][] = [
          ["missing", '{"context":{"targetingKey":"x"}}', json],
          ["on", "{", json],
          ["on", "[]", json],
          ["on", "null", json],
          ["on", '{"context":{"targetingKey":""}}', json],
          ["on", '{"context":{"targetingKey":"."}}', json],
          ["on", '{"context":{"targetingKey":7}}', json],
          ["some", '{"context":{"targetingKey":"vip","email":"e@x.co"}}', json],
          ["some", '{"context":{"targetingKey":"a+b"}}', json],
          ["on", '{"context":{"actorIds":"x"}}', json],
          ["on", '{"flag":"x"}', json],
          ["on", "{}", { ...withKey(), "content-type": "text/plain" }],
          ["on", "{}", { ...withKey(), "content-type": "application/json; charset=utf-8" }],
          ["on", "{}", { "content-type": "application/json" }],
          ["on", "{}", { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" }],
          ["on", "{}", json, "/ofrep/v1/evaluate/flags/on?flagConfigEtag=1"],
          // Members named __proto__ are attributes like any other (the route reads them, not the adapter).
          ["attrs", '{"context":{"targetingKey":"vip","__proto__":"x"}}', json],
          ["attrs", '{"context":{"__proto__":["x"]}}', json],
          ["attrs", '{"__proto__":{"context":{}},"context":{"__proto__":"x","age":["abc"]}}', json],
        ];
        if (cors) theirs.push(["on", "{}", { ...json, origin: "https://app.example.com" }]);
        for (const [flag, body, headers, path] of theirs) {
          assert.equal(await sameOfrep(flag, body, headers, path), false, `Fastify answers ${flag} ${body}`);
        }
        const ofrepVariant = async (body: string) =>
          JSON.parse((await raw(fast.url, "POST", "/ofrep/v1/evaluate/flags/attrs", json, body)).body).variant;
        assert.equal(await ofrepVariant('{"context":{"targetingKey":"vip","__proto__":"x","age":"50"}}'), "proto");
        assert.equal(await ofrepVariant('{"context":{"__proto__":["x"],"age":["abc"]}}'), "neg");
        assert.equal(({} as Record<string, unknown>).polluted, undefined, "nothing was polluted");
      });

      test("OFREP: a body that arrives in pieces is read whole; a client that leaves mid-body changes nothing", async () => {
        const { hostname, port } = new URL(fast.url);
        const body = '{"context":{"targetingKey":"vip"}}';
        const head = (length: number) =>
          `POST /ofrep/v1/evaluate/flags/some HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.check}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
        const before = fastHandled();
        const answer = await new Promise<string>((resolve, reject) => {
          const socket = connect(Number(port), hostname);
          let text = "";
          socket.setEncoding("utf8");
          socket.on("data", (chunk: string) => {
            text += chunk;
          });
          socket.on("end", () => resolve(text));
          socket.on("error", reject);
          // The rest of the body is sent once the server has the head (and the first half with it), so it reads the body in two pieces.
          fast.service.app.server.once("request", () => setImmediate(() => socket.end(body.slice(10))));
          socket.write(head(body.length) + body.slice(0, 10));
        });
        assert.match(answer, /^HTTP\/1\.1 200 /);
        assert.match(answer, /\{"key":"some","value":true,"reason":"TARGETING_MATCH"/);
        assert.equal(fastHandled(), before, "the adapter answered it");

        // A client that sends half its body and goes away gets nothing and leaves nothing behind.
        await new Promise<void>((resolve) => {
          const socket = connect(Number(port), hostname, () =>
            socket.write(head(100) + body.slice(0, 10), () => socket.destroy()),
          );
          socket.on("close", () => resolve());
          socket.on("error", () => resolve());
        });
        assert.equal(await sameOfrep("some", body, { ...withKey(), "content-type": "application/json" }), true);
      });

      test("generated requests: the same answer with the adapter and without it", async () => {
        const keyHeader = plainMostly<Record<string, string>>(
          { authorization: `Bearer ${keys.check}` },
          fc.constantFrom<Record<string, string>>(
            {},
            { authorization: `Bearer ${keys.check}` },
            { authorization: `bearer  ${keys.read}` },
            { authorization: `Bearer ${keys.write}` },
            { authorization: `Bearer ${keys.elsewhere}` },
            { authorization: `Bearer ${keys.staging}` },
            { authorization: `Bearer ${keys.staging}` },
            { authorization: `Bearer ${keys.unbound}` },
            { authorization: `Bearer ${keys.unbound}` },
            { authorization: `Bearer ${ADMIN_KEY}` },
            { authorization: "Bearer fsk_unknown" },
            { authorization: "Basic abc" },
            { "x-api-key": keys.check as string },
            { "x-api-key": "" },
          ),
        );
        const otherHeaders = plainMostly<Record<string, string>>(
          {},
          fc.record(
            {
              origin: fc.constantFrom("https://app.example.com", "https://evil.example.com"),
              "x-request-id": fc.constantFrom("trace-1", "not sane!"),
              "content-type": fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain"),
              "access-control-request-method": fc.constant("GET"),
            },
            { requiredKeys: [] },
          ),
        );
        const flag = fc
          .constantFrom("on", "off", "some", "half", "attrs", "gated", "ns:dotted.name-1", "missing")
          .chain(spelling);
        const checkPath = fc
          .tuple(
            plainMostly(project, fc.constantFrom(other, "nowhere")).chain(spelling),
            flag,
            plainMostly("", fc.constant("/")),
            plainMostly("", query),
          )
          .map(([p, f, slash, q]) => `/projects/${p}/flags/${f}/check${slash}${q}`);
        const ofrepPath = fc
          .tuple(flag, plainMostly("", fc.constantFrom("?flagConfigEtag=1", "/")))
          .map(([f, tail]) => `/ofrep/v1/evaluate/flags/${f}${tail}`);
        const request = fc.oneof(
          fc.record({
            method: fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "DELETE"),
            path: checkPath,
            key: keyHeader,
            headers: otherHeaders,
            body: fc.constant(undefined),
          }),
          fc.record({
            method: fc.constantFrom("POST", "POST", "POST", "GET", "PUT"),
            path: ofrepPath,
            key: keyHeader,
            headers: otherHeaders,
            body: ofrepBody.chain((body) => fc.oneof(fc.constant<string | string[]>(body), inPieces(body))),
          }),
        );
        let taken = 0;
        await fc.assert(
          fc.asyncProperty(request, async ({ method, path, key, headers, body }) => {
            const sent: Record<string, string> = { ...key, ...headers };
            if (method === "POST" && typeof body === "string" && sent["content-type"] === undefined) {
              sent["content-type"] = "application/json";
            }
            // A body in pieces is announced by its length, as clients do (without it node:http sends it chunked).
            if (Array.isArray(body)) sent["content-length"] = String(Buffer.byteLength(body.join("")));
            if (await same(path, sent, method, method === "GET" || method === "HEAD" ? undefined : body)) taken++;
          }),
          {
            numRuns: PROPERTY_RUNS,
            // A request the adapter takes, whatever else is drawn: the count below cannot fail by chance.
            examples: [
              [
                {
                  method: "GET",
                  path: `/projects/${project}/flags/on/check`,
                  key: { authorization: `Bearer ${keys.check}` },
                  headers: {},
                  body: undefined,
                },
              ],
            ],
          },
        );
        // The generators reach the adapter, or the comparison would prove nothing.
        assert.ok(taken > 0, "the adapter answered some of the generated requests");
      });

      test("counts what it answers in the same metrics", async () => {
        const scrape = async (server: TestServer) => (await server.request("GET", "/metrics")).text;
        const count = (text: string) =>
          Number(
            /flagstaff_http_request_duration_seconds_count\{method="GET",route="\/projects\/:projectId\/flags\/:flagName\/check",status="200"\} (\d+)/.exec(
              text,
            )?.[1] ?? 0,
          );
        const enabled = (text: string) =>
          Number(/flagstaff_checks_total\{result="enabled"\} (\d+)/.exec(text)?.[1] ?? 0);
        const ofrepCount = (text: string) =>
          Number(
            /flagstaff_http_request_duration_seconds_count\{method="POST",route="\/ofrep\/v1\/evaluate\/flags\/:key",status="200"\} (\d+)/.exec(
              text,
            )?.[1] ?? 0,
          );
        const [fastBefore, slowBefore] = [await scrape(fast), await scrape(slow)];
        for (let i = 0; i < 5; i++) await same(check("on"), withKey());
        const json = { ...withKey(), "content-type": "application/json" };
        for (let i = 0; i < 3; i++) assert.equal(await sameOfrep("on", "{}", json), true);
        const [fastAfter, slowAfter] = [await scrape(fast), await scrape(slow)];
        assert.equal(count(fastAfter) - count(fastBefore), 5);
        assert.equal(count(slowAfter) - count(slowBefore), 5);
        assert.equal(ofrepCount(fastAfter) - ofrepCount(fastBefore), 3);
        assert.equal(ofrepCount(slowAfter) - ofrepCount(slowBefore), 3);
        assert.equal(enabled(fastAfter) - enabled(fastBefore), 8);
        assert.equal(enabled(slowAfter) - enabled(slowBefore), 8);
        assert.match(
          fastAfter,
          /flagstaff_http_request_duration_seconds_bucket\{le="0.0005",method="GET",route="\/projects\/:projectId\/flags\/:flagName\/check",status="200"\} \d+/,
        );
      });
    });
  }
}

describe("check fast path: off under rate limiting", () => {
  test("with RATE_LIMIT_PER_MINUTE every check goes through Fastify and carries the rate-limit headers", async () => {
    const server = await startServer({ dialect: "sqlite", env: { RATE_LIMIT_PER_MINUTE: "1000" } });
    try {
      const project = await createProject(server);
      await server.request("POST", `/projects/${project}/flags/on`, { body: {} });
      await server.request("PATCH", `/projects/${project}/flags/on`, { body: { status: "enabled" } });
      const res = await server.request("GET", `/projects/${project}/flags/on/check`);
      assert.equal(res.status, 200);
      assert.ok(res.headers.get("x-ratelimit-limit"));
    } finally {
      await server.close();
    }
  });
});
