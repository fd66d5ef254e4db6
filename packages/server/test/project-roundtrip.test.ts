// Export → apply → export round-trips on random projects (issue 37, "Done when"): a seeded property test.
// For each seed it builds a random project through the public API (environments with their settings,
// segments with conditions and listed members, flags of every type with per-environment status, rollouts,
// variants, ordered rules of every operator serving a variant or a split, in_segment conditions, acyclic
// prerequisites, attached actors and segments, timed rollout plans, some paused) and checks:
//   a. a project's own export applied to it (dry run, plain, prune; with and without members) is an empty
//      plan: no event, the revision stays;
//   b. the export applied to a project of the same id and environments on a fresh database (a second server)
//      exports the same bytes ($schema, which names the server, aside);
//   c. applying a random valid change of the export (with prune) makes the project export exactly it;
//      applying another random state's export (built on the other server, its segments partly moved onto
//      this project's ids) makes the project export exactly that state, and applying the first one back
//      returns it byte for byte;
//   d. before every real apply, its dry run answers the same changes and changes nothing (export bytes,
//      ETag, history); the apply moves the revision by one exactly when it changes something; a refused
//      dry run is a refused apply, and neither changes anything;
//   e. If-Match with a revision the project has moved past is 412 for the dry run and the apply, and nothing
//      is applied.
// A failure names its seed: ROUNDTRIP_SEED=<seed> runs that seed alone; ROUNDTRIP_CASES=<n> runs n seeds (10 by
// default, to keep the suite fast; 60 and 100 were run on SQLite while the planner was written).
// The cases the property found, shrunk, are the last tests of the file: server bugs, open while they fail.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, expectProblem, startServer, type TestServer } from "@flagstaff/test-harness";

type Doc = Record<string, any>;

const clone = <T>(value: T): T => structuredClone(value);
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ---------------------------------------------------------------------------------------------------
// A small seeded PRNG (mulberry32), so that a failing seed reproduces.

class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** 0 … n-1 */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** lo … hi, both included */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(values: readonly T[]): T {
    return values[this.int(values.length)] as T;
  }
  shuffle<T>(values: readonly T[]): T[] {
    const out = [...values];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }
  /** min … max distinct values, in random order. */
  some<T>(values: readonly T[], min: number, max: number): T[] {
    return this.shuffle(values).slice(0, Math.min(values.length, this.range(min, max)));
  }
}

// ---------------------------------------------------------------------------------------------------
// What random projects are made of.

const PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100];
const STATUSES = ["enabled", "disabled", "conditional"];
const KINDS = ["release", "experiment", "operational", "kill-switch", "permission"];
/** Each name has one type whichever project uses it: a flag's type never changes, so states can converge. */
const FLAGS: readonly [string, "boolean" | "string" | "number" | "object"][] = [
  ["checkout", "boolean"],
  ["Dark-Mode", "boolean"],
  ["kill.payments", "boolean"],
  ["9-lives", "boolean"],
  ["theme", "string"],
  ["banner:text", "string"],
  ["greeting", "string"],
  ["max-items", "number"],
  ["ratio", "number"],
  ["layout", "object"],
  ["limits", "object"],
];
const PROJECT_NAMES = ["Shop", "Boutique éphémère", "店", "Flags 🚩", "a  b"];
const ENVIRONMENT_NAMES = ["Production", "Staging", "QA", "Pré-prod", "Test 🧪", "Dev"];
const TEXTS = ["", "New checkout", "Café ünïcode", "line\nbreak", 'quote " and \\ backslash', "日本語の説明", "🚀"];
const ACTORS = ["alice", "bob", "carol", "Dave", "zoë", "日本", "user-1", "user_2", "a.b", "🙂", "x y"];
const SEGMENT_NAMES = ["beta", "staff", "vip", "eu-users", "Beta", "早期"];
const VARIANT_KEYS = ["a", "b", "control", "treatment", "v1", "V2", "x.y", "blue-1"];
const STRING_VALUES = ["", "#fff", "Bonjour ✨", "line\nbreak", '"quoted"', "null", "0", "ünïcödé"];
const NUMBER_VALUES = [0, 1, -1, 3.5, 0.1, 1e-7, 42, 1e21, -273.15, 9007199254740991];
const OBJECT_VALUES: unknown[] = [
  {},
  [],
  { a: 1, b: [true, null, "x"] },
  [1, "two", { three: 3 }],
  { nested: { deep: { k: "v" } }, é: "ü" },
  { z: 1, a: 2, m: { y: 0, b: -1.5 } },
  ["日本", { "": "" }],
];
const RULE_IDS = ["r1", "eu", "beta-users", "Split.A", "x_1", "9"];
const ATTRIBUTES = ["country", "plan", "email", "age", "seats", "version", "app.version", "tags", "Ünïcode attr"];
const TEXT_VALUES = ["FR", "DE", "pro", "free", "Ünï", "a,b", "日本"];
const PATTERNS = ["^ab+c$", "(foo|bar)", "[0-9]{2,4}", "^user-\\d+$", "é", "^[^@]+@acme\\.com$"];
const NUMBERS = [0, 1, -1.5, 42, 1e6, 0.001, 2.71, -0.25];
const VERSIONS = ["1.2.3", "v2", "1.0.0-rc.1", "2024.01.15", "0.0.1+build.5", "10"];
const INSTANTS = [
  "2026-12-01T09:00:00Z",
  "2030-01-01T00:00:00.000Z",
  "2025-06-15T10:00+02:00",
  "2027-03-03T03:03:03.333Z",
];
const TEXT_OPERATORS = ["in", "not_in", "starts_with", "ends_with", "contains", "matches"];
const NUMBER_OPERATORS = ["eq", "gt", "gte", "lt", "lte"];
const SEMVER_OPERATORS = ["semver_eq", "semver_gt", "semver_gte", "semver_lt", "semver_lte"];
/** The instants a timed rollout steps at: some past, some to come. */
const STEP_TIMES = [
  Date.UTC(2021, 0, 1),
  Date.UTC(2024, 5, 30, 12),
  Date.UTC(2029, 1, 28, 8, 30),
  Date.UTC(2031, 6, 4, 0, 0, 0, 250),
  Date.UTC(2034, 11, 31, 23, 59, 59),
];

/** A condition of a random operator; segment operators only when `segments` (their ids) are given. */
function condition(rng: Rng, segments: readonly string[] | null): Doc {
  const kinds = ["text", "text", "number", "semver", "instant", "present", ...(segments?.length ? ["segment"] : [])];
  const kind = rng.pick(kinds);
  const optional = (c: Doc, text: boolean) => {
    if (rng.chance(0.3)) c.negate = rng.chance(0.7);
    if (text && rng.chance(0.3)) c.caseInsensitive = rng.chance(0.7);
    return c;
  };
  switch (kind) {
    case "text": {
      const operator = rng.pick(TEXT_OPERATORS);
      const pool =
        operator === "matches"
          ? PATTERNS
          : operator === "in" || operator === "not_in"
            ? [...TEXT_VALUES, ""]
            : TEXT_VALUES;
      return optional({ attribute: rng.pick(ATTRIBUTES), operator, values: rng.some(pool, 1, 3) }, true);
    }
    case "number":
      return optional(
        { attribute: rng.pick(ATTRIBUTES), operator: rng.pick(NUMBER_OPERATORS), values: rng.some(NUMBERS, 1, 3) },
        false,
      );
    case "semver":
      return optional(
        { attribute: rng.pick(ATTRIBUTES), operator: rng.pick(SEMVER_OPERATORS), values: rng.some(VERSIONS, 1, 2) },
        false,
      );
    case "instant":
      return optional(
        {
          attribute: rng.pick(["$now", "created"]),
          operator: rng.pick(["before", "after"]),
          values: rng.some(INSTANTS, 1, 2),
        },
        false,
      );
    case "present":
      return optional({ attribute: rng.pick(ATTRIBUTES), operator: "present", values: [] }, false);
    default:
      return optional(
        { operator: rng.pick(["in_segment", "not_in_segment"]), values: rng.some(segments ?? [], 1, 2) },
        false,
      );
  }
}

/** Weights over some of the keys, summing to exactly 100, with up to three decimals. */
function weights(rng: Rng, keys: readonly string[]): Doc[] {
  const chosen = rng.some(keys, 1, 3);
  const cuts = chosen
    .slice(1)
    .map(() => (rng.chance(0.5) ? rng.int(101) * 1000 : rng.int(100_001)))
    .sort((a, b) => a - b);
  const bounds = [0, ...cuts, 100_000];
  return chosen.map((variant, i) => ({ variant, weight: ((bounds[i + 1] as number) - (bounds[i] as number)) / 1000 }));
}

function variantsOf(rng: Rng, type: string): Doc[] {
  if (type === "boolean") {
    return [
      { key: "on", value: true },
      { key: "off", value: false },
    ];
  }
  const pool = type === "string" ? STRING_VALUES : type === "number" ? NUMBER_VALUES : OBJECT_VALUES;
  return rng.some(VARIANT_KEYS, 2, 4).map((key) => ({
    key,
    value: clone(rng.pick(pool)),
    ...(rng.chance(0.25) ? { description: rng.pick(TEXTS) } : {}),
  }));
}

/** The longest chain of prerequisites (in edges) of a graph, or Infinity when it has a cycle. */
function longestChain(graph: ReadonlyMap<string, readonly string[]>): number {
  const memo = new Map<string, number>();
  const visiting = new Set<string>();
  const down = (flag: string): number => {
    const known = memo.get(flag);
    if (known !== undefined) return known;
    if (visiting.has(flag)) return Number.POSITIVE_INFINITY;
    visiting.add(flag);
    let best = 0;
    for (const next of graph.get(flag) ?? []) best = Math.max(best, 1 + down(next));
    visiting.delete(flag);
    memo.set(flag, best);
    return best;
  };
  return Math.max(0, ...[...graph.keys()].map(down));
}

/** The timed rollout of a configuration: steps in time order, maybe a split rule's weights among them. */
function rolloutPlan(rng: Rng, rules: readonly Doc[], keys: readonly string[]): Doc[] {
  const times = rng.some(STEP_TIMES, 1, 3).sort((a, b) => a - b);
  const splits = rules.filter((r) => "split" in r.serve);
  const format = (ms: number) => {
    const iso = new Date(ms).toISOString();
    // Written as people write them: with or without milliseconds.
    return rng.chance(0.3) ? iso.replace(".000Z", "Z") : iso;
  };
  return times.map((ms) =>
    splits.length > 0 && rng.chance(0.3)
      ? { at: format(ms), ruleId: rng.pick(splits).id, weights: weights(rng, keys) }
      : { at: format(ms), percentage: rng.pick(PERCENTAGES) },
  );
}

// ---------------------------------------------------------------------------------------------------
// Talking to a server.

interface Exported {
  readonly doc: Doc;
  readonly text: string;
  readonly etag: string;
}

async function ok(server: TestServer, method: string, path: string, body?: unknown, status = 200): Promise<any> {
  const res = await server.request(method, path, { body });
  assert.equal(res.status, status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
  return res.body;
}

async function exportOf(server: TestServer, project: string, members = true): Promise<Exported> {
  const res = await server.request("GET", `/projects/${project}/export${members ? "?members=true" : ""}`);
  assert.equal(res.status, 200, res.text);
  return { doc: res.body as Doc, text: res.text, etag: res.headers.get("etag") as string };
}

/** How many events the project's history holds, and the newest one's id. */
async function history(server: TestServer, project: string): Promise<{ count: number; newest: string | null }> {
  let count = 0;
  let newest: string | null = null;
  let after: string | null = null;
  do {
    const query: string = after === null ? "" : `&after=${encodeURIComponent(after)}`;
    const page = await ok(server, "GET", `/projects/${project}/events?limit=100${query}`);
    if (newest === null) newest = page.data[0]?.id ?? null;
    count += page.data.length;
    after = page.pagination.after;
  } while (after !== null);
  return { count, newest };
}

const apply = (server: TestServer, project: string, doc: Doc, query = "", ifMatch?: string) =>
  server.request("POST", `/projects/${project}/apply${query}`, {
    body: doc,
    ...(ifMatch === undefined ? {} : { headers: { "if-match": ifMatch } }),
  });

const withoutSchema = (doc: Doc): Doc => {
  const { $schema: _schema, ...rest } = doc;
  return rest;
};
/** The raw export with its top-level $schema (which names the server's host and port) blanked, first or last. */
const bytes = (text: string) =>
  text.replace(/^\{"\$schema":"[^"]*"/, '{"$schema":""').replace(/,"\$schema":"[^"]*"\}$/, ',"$schema":""}');

/** Where two JSON values first differ (keys' order included), as a JSON Pointer and both sides; or null. */
function difference(actual: unknown, expected: unknown, path = ""): string | null {
  const show = (v: unknown) => JSON.stringify(v)?.slice(0, 400);
  if (actual === expected) return null;
  if (typeof actual !== "object" || typeof expected !== "object" || actual === null || expected === null) {
    return `at ${path || "/"}: got ${show(actual)}, expected ${show(expected)}`;
  }
  if (Array.isArray(actual) !== Array.isArray(expected))
    return `at ${path}: got ${show(actual)}, expected ${show(expected)}`;
  const a = actual as Doc;
  const e = expected as Doc;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(e)])];
  for (const key of keys) {
    if (!(key in a)) return `at ${path}/${key}: missing, expected ${show(e[key])}`;
    if (!(key in e)) return `at ${path}/${key}: got ${show(a[key])}, expected nothing`;
    const inner = difference(a[key], e[key], `${path}/${key}`);
    if (inner) return inner;
  }
  if (JSON.stringify(Object.keys(a)) !== JSON.stringify(Object.keys(e))) {
    return `at ${path || "/"}: keys in order ${show(Object.keys(a))}, expected ${show(Object.keys(e))}`;
  }
  return null;
}

/** The same document: every value, and the same keys in the same order ($schema aside). */
function assertSameDocument(actual: Exported, expected: Doc, what: string): void {
  const found = difference(withoutSchema(actual.doc), withoutSchema(expected));
  if (found) assert.fail(`${what}: ${found}`);
}

/** The same JSON text; on a difference, where it is rather than both texts whole. */
function assertSameText(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  let i = 0;
  while (actual[i] === expected[i]) i++;
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 120), i + 120));
  assert.fail(`${what}: first differs at character ${i}: got …${around(actual)}…, expected …${around(expected)}…`);
}

/**
 * Property d around a real apply: its dry run first answers the plan and changes nothing (the export's
 * bytes, the ETag, the history), then the apply answers the same changes; the revision moves by one when
 * something changed, and not otherwise.
 */
async function applyChecked(server: TestServer, project: string, doc: Doc, prune: boolean, ifMatch?: string) {
  const before = await exportOf(server, project);
  const events = await history(server, project);
  const dry = await apply(server, project, doc, prune ? "?dryRun=true&prune=true" : "?dryRun=true", ifMatch);
  if (dry.status !== 200) {
    // Refused: the apply is refused alike, and neither changed anything.
    const refused = await apply(server, project, doc, prune ? "?prune=true" : "", ifMatch);
    assert.equal(`${refused.status} ${refused.body?.code}`, `${dry.status} ${dry.body?.code}`, "refused otherwise");
    const after = await exportOf(server, project);
    assert.equal(after.etag, before.etag, "a refused apply moved the revision");
    assertSameText(after.text, before.text, "a refused apply changed the project");
    assert.deepEqual(await history(server, project), events, "a refused apply wrote events");
    assert.fail(`dry run refused (so was the apply, and nothing changed): ${dry.text}`);
  }
  assert.equal(dry.body.dryRun, true);
  assert.deepEqual(dry.body.changeRequests, []);
  assert.equal(`"r${dry.body.baseRevision}"`, before.etag);
  const still = await exportOf(server, project);
  assert.equal(still.etag, before.etag, "a dry run moved the revision");
  assertSameText(still.text, before.text, "a dry run changed the export");
  assert.deepEqual(await history(server, project), events, "a dry run wrote events");

  const res = await apply(server, project, doc, prune ? "?prune=true" : "", ifMatch);
  assert.equal(res.status, 200, `apply (its dry run planned ${JSON.stringify(dry.body.changes)}): ${res.text}`);
  assert.equal(res.body.dryRun, false);
  assert.deepEqual(res.body.changes, dry.body.changes, "the apply's changes are not its dry run's");
  assert.equal(res.body.baseRevision, dry.body.baseRevision);
  assert.deepEqual(res.body.changeRequests, []);
  const changed = res.body.changes.length > 0;
  assert.equal(res.body.revision, res.body.baseRevision + (changed ? 1 : 0));
  assert.equal(res.headers.get("etag"), `"r${res.body.revision}"`);
  assert.equal(
    (await exportOf(server, project)).etag,
    `"r${res.body.revision}"`,
    "the export's ETag is not the apply's",
  );
  const now = await history(server, project);
  if (changed) assert.ok(now.count >= events.count + res.body.changes.length, "fewer events than changes");
  else assert.deepEqual(now, events);
  return res.body;
}

/** Property a: the project's own export, with and without members, is an empty plan however applied. */
async function assertOwnExportIsEmptyPlan(server: TestServer, project: string): Promise<void> {
  const full = await exportOf(server, project);
  const bare = await exportOf(server, project, false);
  const events = await history(server, project);
  const cases: [Doc, string, string | undefined][] = [
    [full.doc, "?dryRun=true", undefined],
    [full.doc, "", undefined],
    [full.doc, "?prune=true", full.etag],
    [bare.doc, "?dryRun=true&prune=true", undefined],
    [bare.doc, "?prune=true", full.etag],
  ];
  for (const [doc, query, ifMatch] of cases) {
    const res = await apply(server, project, doc, query, ifMatch);
    assert.equal(res.status, 200, `own export, ${query}: ${res.text}`);
    assert.deepEqual(res.body.changes, [], `own export (members ${doc === full.doc}), ${query}: not an empty plan`);
    assert.equal(`"r${res.body.revision}"`, full.etag);
    assert.equal(res.body.baseRevision, res.body.revision);
  }
  assert.deepEqual(await history(server, project), events, "an empty plan wrote events");
  const after = await exportOf(server, project);
  assert.equal(after.etag, full.etag);
  assertSameText(after.text, full.text, "an empty plan changed the export");
}

// ---------------------------------------------------------------------------------------------------
// Building a random project through the public API.

interface BuildOptions {
  /** The flags to make (default: 2 to 7 random ones). */
  readonly flags?: readonly string[];
  /** Added to every segment's name. */
  readonly segmentSuffix?: string;
  /** The longest chain of prerequisites (default 5, the most a project may have). */
  readonly maxDepth?: number;
}

async function build(
  server: TestServer,
  rng: Rng,
  project: string,
  name: string,
  environments: string[],
  options: BuildOptions = {},
) {
  const p = `/projects/${project}`;
  await ok(server, "POST", "/projects", { id: project, name }, 201);
  const settings = (): Doc => ({
    ...(rng.chance(0.5) ? { name: rng.pick(ENVIRONMENT_NAMES) } : {}),
    ...(rng.chance(0.5) ? { description: rng.pick(TEXTS) } : {}),
    ...(rng.chance(0.4) ? { protected: rng.chance(0.6) } : {}),
    ...(rng.chance(0.4) ? { allowSelfApproval: rng.chance(0.6) } : {}),
    ...(rng.chance(0.2) ? { requiredApprovals: 0 } : {}),
  });
  for (const id of rng.shuffle(environments.filter((e) => e !== "production"))) {
    await ok(server, "POST", `${p}/environments`, { id, name: rng.pick(ENVIRONMENT_NAMES), ...settings() }, 201);
  }
  const production = settings();
  if (Object.keys(production).length > 0) await ok(server, "PATCH", `${p}/environments/production`, production);
  if (rng.chance(0.3)) await ok(server, "PATCH", `${p}/environments/${rng.pick(environments)}`, { default: true });
  if (rng.chance(0.4)) {
    const position = rng.range(1, environments.length);
    await ok(server, "PATCH", `${p}/environments/${rng.pick(environments)}`, { position });
  }

  const segments: string[] = [];
  for (const segmentName of rng.some(SEGMENT_NAMES, 0, 4)) {
    const body: Doc = { name: `${segmentName}${options.segmentSuffix ?? ""}` };
    if (rng.chance(0.5)) body.description = rng.pick(TEXTS);
    if (rng.chance(0.6)) body.conditions = Array.from({ length: rng.range(1, 3) }, () => condition(rng, null));
    const segment = await ok(server, "POST", `${p}/segments`, body, 201);
    segments.push(segment.id);
    if (rng.chance(0.6)) {
      await ok(server, "PATCH", `${p}/segments/${segment.id}`, { addActors: rng.some(ACTORS, 1, 5) });
    }
  }

  const flags = options.flags ? FLAGS.filter(([f]) => options.flags?.includes(f)) : rng.some(FLAGS, 2, 7);
  const keysOf = new Map<string, string[]>();
  for (const [flag, type] of flags) {
    const variants = variantsOf(rng, type);
    keysOf.set(
      flag,
      variants.map((v) => v.key),
    );
    // A boolean flag declares no variants (they are on and off); its type may be left out.
    const body: Doc = type === "boolean" ? (rng.chance(0.5) ? { type } : {}) : { type, variants };
    if (rng.chance(0.6)) body.description = rng.pick(TEXTS);
    if (rng.chance(0.5)) body.kind = rng.pick(KINDS);
    if (rng.chance(0.3)) body.permanent = rng.chance(0.7);
    if (type !== "boolean" && rng.chance(0.3)) {
      body.onVariant = rng.pick(variants).key;
      body.offVariant = rng.pick(variants).key;
    }
    await ok(server, "POST", `${p}/flags/${encodeURIComponent(flag)}`, body, 201);
  }
  // An archived flag is left out of the document (its name is never one of FLAGS).
  if (rng.chance(0.25)) {
    await ok(server, "POST", `${p}/flags/old-banner`, { description: "retired" }, 201);
    await ok(server, "PATCH", `${p}/flags/old-banner?environment=${rng.pick(environments)}`, { status: "enabled" });
    await ok(server, "POST", `${p}/flags/old-banner/archive`, undefined);
  }

  const maxDepth = options.maxDepth ?? 5;
  for (const environment of environments) {
    // Prerequisites: acyclic and at most maxDepth deep; sometimes one long chain first.
    const graph = new Map<string, string[]>();
    const tryEdge = (from: string, to: string) => {
      const next = new Map(graph);
      next.set(from, [...(graph.get(from) ?? []), to]);
      if (from === to || graph.get(from)?.includes(to) || longestChain(next) > maxDepth) return;
      graph.set(from, next.get(from) as string[]);
    };
    if (rng.chance(0.35)) {
      const chain = rng.shuffle(flags.map(([f]) => f));
      for (let i = 0; i + 1 < chain.length; i++) tryEdge(chain[i] as string, chain[i + 1] as string);
    }
    for (const [flag] of flags) {
      for (const [other] of rng.some(flags, 0, 2)) if (rng.chance(0.5)) tryEdge(flag, other);
    }
    for (const [flag, type] of rng.shuffle(flags)) {
      const keys = keysOf.get(flag) as string[];
      const body: Doc = {};
      if (rng.chance(0.8)) body.status = rng.pick(STATUSES);
      if (rng.chance(0.5)) body.percentageActors = rng.pick(PERCENTAGES);
      if (rng.chance(0.3)) body.percentageCalls = rng.pick(PERCENTAGES);
      if (type !== "boolean" && rng.chance(0.4)) {
        body.onVariant = rng.pick(keys);
        body.offVariant = rng.pick(keys);
      }
      if (rng.chance(0.6)) {
        body.rules = rng.some(RULE_IDS, 1, 3).map((id) => ({
          id,
          ...(rng.chance(0.3) ? { description: rng.pick(TEXTS) } : {}),
          conditions: Array.from({ length: rng.range(0, 3) }, () => condition(rng, segments)),
          serve: rng.chance(0.5)
            ? { variant: rng.pick(keys) }
            : {
                split: {
                  ...(rng.chance(0.4) ? { bucketBy: rng.pick(ATTRIBUTES) } : {}),
                  weights: weights(rng, keys),
                },
              },
        }));
      }
      const prerequisites = (graph.get(flag) ?? []).map((other) => ({
        flag: other,
        variants: rng.some(keysOf.get(other) as string[], 1, 2),
      }));
      if (prerequisites.length > 0 || rng.chance(0.1)) body.prerequisites = prerequisites;
      if (rng.chance(0.4)) body.addActors = rng.some(ACTORS, 1, 4);
      if (segments.length > 0 && rng.chance(0.4)) body.addSegments = rng.some(segments, 1, 2);
      const plan = rng.chance(0.3) ? rolloutPlan(rng, (body.rules as Doc[] | undefined) ?? [], keys) : undefined;
      if (plan) body.rolloutPlan = { steps: plan };
      if (Object.keys(body).length === 0) continue;
      await ok(server, "PATCH", `${p}/flags/${encodeURIComponent(flag)}?environment=${environment}`, body);
      if (plan && rng.chance(0.4)) {
        // Paused: its pausedAt is the server's now; sometimes resumed after, which moves the steps to come.
        const path = `${p}/flags/${encodeURIComponent(flag)}?environment=${environment}`;
        await ok(server, "PATCH", path, { rolloutPlan: { steps: plan, paused: true } });
        if (rng.chance(0.3)) await ok(server, "PATCH", path, { rolloutPlan: { steps: plan, paused: false } });
      }
    }
  }
}

/** A project of that id on another server with the document's environments (ids only, in creation order). */
async function shell(server: TestServer, doc: Doc): Promise<void> {
  const { id, name } = doc.project;
  await ok(server, "POST", "/projects", { id, name }, 201);
  for (const environment of doc.environments) {
    if (environment.id === "production") continue;
    await ok(server, "POST", `/projects/${id}/environments`, { id: environment.id, name: environment.id }, 201);
  }
}

/** The variant keys of a flag that something names: a configuration, a rollout step, another flag's prerequisite. */
function keysInUse(doc: Doc, flag: Doc): Set<string> {
  const used = new Set<string>();
  for (const c of Object.values(flag.environments) as Doc[]) {
    used.add(c.onVariant);
    used.add(c.offVariant);
    for (const rule of c.rules) {
      if (rule.serve.variant !== undefined) used.add(rule.serve.variant);
      for (const w of rule.serve.split?.weights ?? []) used.add(w.variant);
    }
    for (const step of c.rolloutPlan?.steps ?? []) for (const w of step.weights ?? []) used.add(w.variant);
  }
  for (const other of doc.flags) {
    for (const c of Object.values(other.environments) as Doc[]) {
      for (const prerequisite of c.prerequisites) {
        if (prerequisite.flag === flag.name) for (const key of prerequisite.variants) used.add(key);
      }
    }
  }
  return used;
}

/**
 * A random change of a document that keeps it valid, in the order an export has (what the project exports
 * once it is applied): environments' settings and order, segments' names, conditions and members, flags'
 * definitions (variants reordered, revalued, added and dropped), configurations (status, percentages,
 * rules reordered and dropped, rollouts removed, paused or resumed, actors and segments), flags deleted.
 */
function mutate(rng: Rng, original: Doc): Doc {
  const doc = clone(original);
  if (rng.chance(0.3)) doc.environments = rng.shuffle(doc.environments);
  if (rng.chance(0.3)) {
    const chosen = rng.pick(doc.environments as Doc[]);
    for (const e of doc.environments) e.default = e === chosen;
  }
  for (const e of doc.environments) {
    if (rng.chance(0.2)) e.name = rng.pick(ENVIRONMENT_NAMES);
    if (rng.chance(0.2)) e.description = rng.pick(TEXTS);
    if (rng.chance(0.2)) e.protected = !e.protected;
    if (rng.chance(0.2)) e.allowSelfApproval = !e.allowSelfApproval;
  }
  // Segment names stay unique in the document (a segment may take a name another had before).
  for (const segment of doc.segments) {
    if (rng.chance(0.3)) {
      const names = [...SEGMENT_NAMES, ...SEGMENT_NAMES.map((n) => `${n} 2`)].filter(
        (n) => !doc.segments.some((s: Doc) => s.name === n),
      );
      if (names.length > 0) segment.name = rng.pick(names);
    }
    if (rng.chance(0.2)) segment.description = rng.pick(TEXTS);
    if (rng.chance(0.3)) segment.conditions = rng.shuffle(segment.conditions).slice(0, rng.range(0, 3));
    if (rng.chance(0.3)) segment.members = rng.some(ACTORS, 0, 5).sort(compareText);
  }
  const segmentIds: string[] = doc.segments.map((s: Doc) => s.id);
  for (const flag of doc.flags) {
    if (rng.chance(0.2)) flag.description = rng.pick(TEXTS);
    if (rng.chance(0.2)) flag.kind = rng.pick(KINDS);
    if (rng.chance(0.2)) flag.permanent = !flag.permanent;
    if (flag.type !== "boolean") {
      const pool = flag.type === "string" ? STRING_VALUES : flag.type === "number" ? NUMBER_VALUES : OBJECT_VALUES;
      if (rng.chance(0.3)) flag.variants = rng.shuffle(flag.variants);
      if (rng.chance(0.3)) rng.pick(flag.variants as Doc[]).value = clone(rng.pick(pool));
      const unused = (flag.variants as Doc[]).filter((v) => !keysInUse(original, flag).has(v.key));
      if (unused.length > 0 && flag.variants.length > 2 && rng.chance(0.4)) {
        const dropped = rng.pick(unused).key;
        flag.variants = flag.variants.filter((v: Doc) => v.key !== dropped);
      }
      const fresh = VARIANT_KEYS.filter((k) => !flag.variants.some((v: Doc) => v.key === k));
      if (fresh.length > 0 && rng.chance(0.3)) {
        flag.variants.splice(rng.int(flag.variants.length + 1), 0, {
          key: rng.pick(fresh),
          value: clone(rng.pick(pool)),
        });
      }
    }
    for (const c of Object.values(flag.environments) as Doc[]) {
      if (rng.chance(0.3)) c.status = rng.pick(STATUSES);
      if (rng.chance(0.2)) c.percentageActors = rng.pick(PERCENTAGES);
      if (rng.chance(0.2)) c.percentageCalls = rng.pick(PERCENTAGES);
      if (rng.chance(0.3)) c.rules = rng.shuffle(c.rules);
      if (c.rules.length > 0 && rng.chance(0.2)) {
        const gone = c.rules.splice(rng.int(c.rules.length), 1)[0].id;
        if (c.rolloutPlan) {
          c.rolloutPlan.steps = c.rolloutPlan.steps.filter((step: Doc) => step.ruleId !== gone);
          if (c.rolloutPlan.steps.length === 0) delete c.rolloutPlan;
        }
      }
      if (c.rolloutPlan && rng.chance(0.2)) delete c.rolloutPlan;
      else if (c.rolloutPlan && rng.chance(0.3)) {
        if (c.rolloutPlan.pausedAt === undefined) c.rolloutPlan.pausedAt = "2026-01-02T03:04:05.678Z";
        else delete c.rolloutPlan.pausedAt;
      }
      if (rng.chance(0.3)) c.actors = rng.some(ACTORS, 0, 4).sort(compareText);
      if (rng.chance(0.3)) c.segments = rng.some(segmentIds, 0, 2).sort(compareText);
    }
  }
  // Each flag's configurations in the environments' (new) order, as an export lists them.
  for (const flag of doc.flags) {
    flag.environments = Object.fromEntries(doc.environments.map((e: Doc) => [e.id, flag.environments[e.id]]));
  }
  // A flag no other flag requires, deleted (with prune).
  const required = new Set<string>();
  for (const flag of doc.flags) {
    for (const c of Object.values(flag.environments) as Doc[]) for (const q of c.prerequisites) required.add(q.flag);
  }
  const deletable = (doc.flags as Doc[]).filter((f) => !required.has(f.name));
  if (deletable.length > 0 && rng.chance(0.3)) {
    const gone = rng.pick(deletable).name;
    doc.flags = doc.flags.filter((f: Doc) => f.name !== gone);
  }
  return doc;
}

/**
 * Another state's document made this project's: its project, and some of its segments moved onto ids of
 * this project's segments (so that they are updated rather than created), renamed wherever they appear.
 */
function retarget(rng: Rng, target: Doc, current: Doc): Doc {
  const doc = clone(target);
  doc.project = clone(current.project);
  const free = rng.shuffle(current.segments.map((s: Doc) => s.id as string));
  const ids = new Map<string, string>();
  for (const segment of doc.segments) {
    if (free.length > 0 && rng.chance(0.6)) ids.set(segment.id, free.pop() as string);
  }
  const rename = (id: string) => ids.get(id) ?? id;
  for (const segment of doc.segments) segment.id = rename(segment.id);
  doc.segments.sort((a: Doc, b: Doc) => compareText(a.id, b.id));
  for (const flag of doc.flags) {
    for (const configuration of Object.values(flag.environments) as Doc[]) {
      configuration.segments = configuration.segments.map(rename).sort(compareText);
      for (const rule of configuration.rules) {
        for (const c of rule.conditions) {
          if (c.operator === "in_segment" || c.operator === "not_in_segment") c.values = c.values.map(rename);
        }
      }
    }
  }
  return doc;
}

/** An unrelated change that moves the project's revision. */
async function unrelatedChange(server: TestServer, rng: Rng, project: string, doc: Doc): Promise<void> {
  const p = `/projects/${project}`;
  const choice = rng.int(3);
  if (choice === 0 && doc.flags.length > 0) {
    const flag = rng.pick(doc.flags as Doc[]).name;
    await ok(server, "PATCH", `${p}/flags/${encodeURIComponent(flag)}`, { description: "moved meanwhile" });
  } else if (choice === 1) {
    await ok(server, "POST", `${p}/segments`, { name: "meanwhile" }, 201);
  } else {
    await ok(server, "PATCH", `${p}/environments/${rng.pick(doc.environments as Doc[]).id}`, {
      description: "changed meanwhile",
    });
  }
}

// ---------------------------------------------------------------------------------------------------

const CASES = Number(process.env.ROUNDTRIP_CASES ?? 10);
const SEEDS = process.env.ROUNDTRIP_SEED
  ? [Number(process.env.ROUNDTRIP_SEED)]
  : Array.from({ length: CASES }, (_, i) => 0x5eed0000 + i * 7919);

/** Runs one seed's properties; a failure names the seed, and how to run it alone. */
async function withSeed(seed: number, dialect: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (error instanceof Error) {
      error.message = `[seed ${seed} on ${dialect}: ROUNDTRIP_SEED=${seed} TEST_DIALECTS=${dialect}] ${error.message}`;
    }
    throw error;
  }
}

for (const dialect of DIALECTS) {
  describe(`project documents round-trip on random projects [${dialect}]`, () => {
    let server: TestServer;
    /** A second server over its own database: a fresh database for the same project id. */
    let mirror: TestServer;

    before(async () => {
      [server, mirror] = await Promise.all([startServer({ dialect }), startServer({ dialect })]);
    });
    after(async () => {
      await Promise.all([server?.close(), mirror?.close()]);
    });

    for (const seed of SEEDS) {
      test(`seed ${seed}`, () =>
        withSeed(seed, dialect, async () => {
          const rng = new Rng(seed);
          const project = `rt-${seed}`;
          const environments = ["production", "staging", ...(rng.chance(0.5) ? ["qa"] : [])];

          // State A, and (a) its own export is an empty plan.
          await build(server, rng, project, rng.pick(PROJECT_NAMES), environments, {});
          const a = await exportOf(server, project);
          await assertOwnExportIsEmptyPlan(server, project);

          // (b) Into the same project id on a fresh database: the same bytes.
          await shell(mirror, a.doc);
          await applyChecked(mirror, project, a.doc, false);
          const copy = await exportOf(mirror, project);
          assertSameDocument(copy, a.doc, "a copy on a fresh database exports another document");
          assertSameText(bytes(copy.text), bytes(a.text), "a copy on a fresh database exports other bytes");
          await assertOwnExportIsEmptyPlan(mirror, project);

          // (c, 1) A random valid change of the document, applied (prune): the project exports it.
          const changed = mutate(rng, a.doc);
          await applyChecked(mirror, project, changed, true);
          assertSameDocument(await exportOf(mirror, project), changed, "applying a changed document did not make it");
          await assertOwnExportIsEmptyPlan(mirror, project);

          // State T: another random state of the same environments, built in another project.
          const other = `${project}-t`;
          await build(mirror, rng, other, rng.pick(PROJECT_NAMES), environments, {});
          const t = retarget(rng, (await exportOf(mirror, other)).doc, a.doc);

          // (e) A stale If-Match is 412, dry run or not, and nothing is applied.
          const stale = (await exportOf(server, project)).etag;
          await unrelatedChange(server, rng, project, a.doc);
          const moved = await exportOf(server, project);
          assert.notEqual(moved.etag, stale);
          expectProblem(await apply(server, project, t, "?prune=true", stale), 412, "precondition_failed");
          expectProblem(await apply(server, project, t, "?dryRun=true&prune=true", stale), 412, "precondition_failed");
          const unmoved = await exportOf(server, project);
          assert.equal(unmoved.etag, moved.etag, "a stale apply moved the revision");
          assertSameText(unmoved.text, moved.text, "a stale apply changed the project");

          // (c, 2) Convergence: S (A, moved) → T with prune, then back to A.
          await applyChecked(server, project, t, true, moved.etag);
          assertSameDocument(await exportOf(server, project), t, "applying T's document did not make T");
          await assertOwnExportIsEmptyPlan(server, project);
          await applyChecked(server, project, a.doc, true);
          const back = await exportOf(server, project);
          assertSameDocument(back, a.doc, "applying A's document back did not make A");
          assertSameText(back.text, a.text, "A applied back exports other bytes");
          await assertOwnExportIsEmptyPlan(server, project);
        }));
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// The smallest cases the property found: server bugs, each failing until it is fixed (the plan is
// project-plan.ts's planApply; each step is made, and checked, by its feature's own write).

for (const dialect of DIALECTS) {
  describe(`project documents: shrunk cases [${dialect}]`, () => {
    let server: TestServer;
    let n = 0;
    let project: string;
    let p: string;

    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server?.close());
    const fresh = async () => {
      project = `shrunk-${++n}`;
      p = `/projects/${project}`;
      await ok(server, "POST", "/projects", { id: project, name: "Shop" }, 201);
    };

    test("prune deletes a flag whose prerequisite names a variant the document drops", async () => {
      // The variants a definition drops are dropped (finalVariants) before prune deletes the flags the
      // document lacks, while a flag about to be deleted still requires one of them: 409 variant_in_use.
      await fresh();
      await ok(
        server,
        "POST",
        `${p}/flags/theme`,
        {
          type: "string",
          variants: [
            { key: "a", value: "A" },
            { key: "b", value: "B" },
            { key: "c", value: "C" },
          ],
        },
        201,
      );
      await ok(server, "POST", `${p}/flags/checkout`, {}, 201);
      await ok(server, "PATCH", `${p}/flags/checkout`, { prerequisites: [{ flag: "theme", variants: ["c"] }] });
      const { doc } = await exportOf(server, project);
      const next = clone(doc);
      next.flags = next.flags.filter((f: Doc) => f.name !== "checkout");
      next.flags[0].variants = next.flags[0].variants.filter((v: Doc) => v.key !== "c");
      await applyChecked(server, project, next, true);
      assertSameDocument(await exportOf(server, project), next, "not the document");
    });

    test("a prerequisite chain that the document moves stays within 5 on the way", async () => {
      // Before: h1 → h2 → h3 → f (3 deep). The document: f → g1 → g2 → g3 (3 deep), h1, h2, h3 require nothing.
      // Written one flag at a time in prerequisite order alone, f's write would see h1 → h2 → h3 → f → g1 →
      // g2 → g3 (6 deep: 409); the prerequisites the document removes go first.
      await fresh();
      for (const flag of ["f", "g1", "g2", "g3", "h1", "h2", "h3"])
        await ok(server, "POST", `${p}/flags/${flag}`, {}, 201);
      const requires = (flag: string, other: string) =>
        ok(server, "PATCH", `${p}/flags/${flag}`, { prerequisites: [{ flag: other, variants: ["on"] }] });
      await requires("h3", "f");
      await requires("h2", "h3");
      await requires("h1", "h2");
      const { doc } = await exportOf(server, project);
      const next = clone(doc);
      const byName = (name: string) => next.flags.find((f: Doc) => f.name === name).environments.production;
      for (const name of ["h1", "h2", "h3"]) byName(name).prerequisites = [];
      byName("f").prerequisites = [{ flag: "g1", variants: ["on"] }];
      byName("g1").prerequisites = [{ flag: "g2", variants: ["on"] }];
      byName("g2").prerequisites = [{ flag: "g3", variants: ["on"] }];
      await applyChecked(server, project, next, false);
      assertSameDocument(await exportOf(server, project), next, "not the document");
    });

    test("a segment the document lacks gives its name to a new one (prune)", async () => {
      // Segments are created before prune deletes those the document lacks, and each write checks the name
      // against the segments as they are: the pruned one is renamed ~<id> first.
      await fresh();
      await ok(server, "POST", `${p}/segments`, { name: "beta" }, 201);
      const { doc } = await exportOf(server, project);
      const next = clone(doc);
      next.segments = [{ id: `seg_new_${project}`, name: "beta", description: "", conditions: [], members: [] }];
      await applyChecked(server, project, next, true);
      assertSameDocument(await exportOf(server, project), next, "not the document");
    });

    test("a segment name the write trims is planned against the trimmed name", async () => {
      // Found probing (a) and (d) with a document that is not an export: the segment's write trims its name,
      // so the plan compares the trimmed name, or every apply would list a change it does not make.
      await fresh();
      const { doc } = await exportOf(server, project);
      const next = clone(doc);
      next.segments = [{ id: `seg_padded_${project}`, name: "  beta  ", description: "", conditions: [], members: [] }];
      const first = await apply(server, project, next);
      if (first.status === 200) {
        const again = await apply(server, project, next);
        assert.equal(again.status, 200, again.text);
        assert.deepEqual(again.body.changes, [], "the same document applied twice: the second plan is not empty");
        assert.equal(again.body.revision, first.body.revision);
      } else expectProblem(first, 400, "invalid_request");
    });

    test("two segments swap names", async () => {
      // The first rename would find its new name still taken by the second segment: it gets ~<id> first.
      await fresh();
      await ok(server, "POST", `${p}/segments`, { name: "beta" }, 201);
      await ok(server, "POST", `${p}/segments`, { name: "staff" }, 201);
      const { doc } = await exportOf(server, project);
      const next = clone(doc);
      [next.segments[0].name, next.segments[1].name] = [next.segments[1].name, next.segments[0].name];
      await applyChecked(server, project, next, false);
      assertSameDocument(await exportOf(server, project), next, "not the document");
    });
  });
}
