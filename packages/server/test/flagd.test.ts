// flagd's format (issue 37; docs/flagd.md): `GET /projects/{p}/flagd.json` answers an environment's flags as
// flagd flag definitions, valid against flagd's schema, with an ETag that follows the project's revision
// (304 for flagd's HTTP sync), for the environment asked (or the key's, or the default), refused where
// export is. And a property test: random projects exported to flagd and evaluated by flagd's own evaluator
// (@openfeature/flagd-core) answer the variant the server answers (OFREP) for every random context where no
// percentage decides, and the same shares where one does. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Ajv } from "ajv";
import { evaluateFlag, type TargetedFlag, type TargetingResolver } from "@flagstaff/core";
import { FlagdCore, MemoryStorage } from "@openfeature/flagd-core";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

type Doc = Record<string, any>;

const SILENT = process.env.FLAGD_DEBUG
  ? { error: console.error, warn: console.error, info() {}, debug: console.error }
  : { error() {}, warn() {}, info() {}, debug() {} };
const SEEDS = process.env.FLAGD_SEED ? [Number(process.env.FLAGD_SEED)] : [11, 23, 37];
const CONTEXTS = 600;
const SHARE_CONTEXTS = 1400;

/** mulberry32: a small seeded generator, so that a failure reproduces with its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const chance = (p: number) => next() < p;
  const some = <T>(items: readonly T[], min: number, max: number): T[] => {
    const n = Math.min(items.length, min + int(max - min + 1));
    const copy = [...items];
    const out: T[] = [];
    while (out.length < n) out.push(copy.splice(int(copy.length), 1)[0] as T);
    return out;
  };
  return { next, int, pick, chance, some };
}
type Random = ReturnType<typeof random>;

// The attributes random contexts carry, each of one kind: the operators that read it are of its kind, so
// every answer compared is one flagd can give exactly (docs/flagd.md lists where other values differ).
// Text values are all lower or all upper case: caseInsensitive is exported with those spellings.
const TEXT = ["free", "FREE", "pro", "PRO", "team", "enterprise", "de", "fr", "us"];
const PREFIXES = ["fr", "FR", "pr", "PR", "te", "ent", "d", "u"];
const SUFFIXES = ["ee", "EE", "ro", "RO", "am", "prise", "e", "s"];
const INFIXES = ["re", "RE", "o", "ea", "terp", "u"];
const EMAILS = ["ann@example.com", "BOB@EXAMPLE.COM", "carl@test.io", "dora@example.org"];
const EMAIL_PARTS = ["ann", "BOB", "@example", "EXAMPLE", ".com", ".COM", ".io", "test"];
const VERSIONS = ["1.2.3", "1.10.0", "2.0.0", "2.0.0-rc.1", "0.9.1", "1.2", "v1.2.3", "3"];
const CONDITION_VERSIONS = ["1.2.3", "1.10.0", "2.0.0", "2.0.0-rc.1", "1.0", "v2", "0.9.1"];
const INSTANTS = [
  "2024-01-01T00:00:00.000Z",
  "2025-06-15T12:30:00.000Z",
  "2026-02-28T23:59:59.000Z",
  "2027-10-01T08:00:00.000Z",
];
const CONDITION_INSTANTS = ["2024-06-01T00:00:00Z", "2025-06-15T12:30:00Z", "2026-12-01T10:00+01:00"];
const ACTORS = Array.from({ length: 30 }, (_, i) => `u${i}`);
let SEGMENTS = ["seg-a", "seg-b", "seg-c"];
const PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100];
const PAST = "2020-01-01T00:00:00.000Z";
const FUTURE = "2099-01-01T00:00:00.000Z";

type Attribute = "plan" | "country" | "email" | "groups" | "beta" | "age" | "score" | "version" | "signup";
const ATTRIBUTES: readonly Attribute[] = [
  "plan",
  "country",
  "email",
  "groups",
  "beta",
  "age",
  "score",
  "version",
  "signup",
];

function condition(r: Random, segments: boolean): Doc {
  const negate = r.chance(0.25) ? { negate: true } : {};
  const roll = r.int(segments ? 13 : 12);
  if (roll === 12) {
    return { operator: r.pick(["in_segment", "not_in_segment"]), values: r.some(SEGMENTS, 1, 2), ...negate };
  }
  if (roll === 11) return { attribute: r.pick(ATTRIBUTES), operator: "present", values: [], ...negate };
  if (roll === 10) {
    return { attribute: "$now", operator: r.pick(["before", "after"]), values: [r.pick([PAST, FUTURE])], ...negate };
  }
  const attribute = r.pick(ATTRIBUTES);
  const ci = r.chance(0.3) ? { caseInsensitive: true } : {};
  switch (attribute) {
    case "plan":
    case "country":
    case "groups":
    case "email": {
      // starts_with and ends_with read a list as one value in flagd (docs/flagd.md): not asked of groups.
      const op = r.pick(
        attribute === "groups"
          ? ["in", "not_in", "contains"]
          : ["in", "not_in", "starts_with", "ends_with", "contains"],
      );
      const pool =
        attribute === "email"
          ? op === "in" || op === "not_in"
            ? EMAILS
            : EMAIL_PARTS
          : op === "starts_with"
            ? PREFIXES
            : op === "ends_with"
              ? SUFFIXES
              : op === "contains"
                ? INFIXES
                : TEXT;
      return { attribute, operator: op, values: r.some(pool, 1, 3), ...negate, ...ci };
    }
    case "beta":
      return { attribute, operator: r.pick(["in", "not_in"]), values: [r.pick(["true", "false"])], ...negate };
    case "age":
    case "score": {
      const op = r.pick(["eq", "gt", "gte", "lt", "lte"]);
      return { attribute, operator: op, values: Array.from({ length: 1 + r.int(2) }, () => r.int(100)), ...negate };
    }
    case "version": {
      const op = r.pick(["semver_eq", "semver_gt", "semver_gte", "semver_lt", "semver_lte"]);
      return { attribute, operator: op, values: r.some(CONDITION_VERSIONS, 1, 2), ...negate };
    }
    default:
      return { attribute, operator: r.pick(["before", "after"]), values: r.some(CONDITION_INSTANTS, 1, 2), ...negate };
  }
}

/** Weights in thousandths summing to 100 % (a weight may be 0). */
function weights(r: Random, variants: readonly string[]): Doc[] {
  const chosen = r.some(variants, 2, 3);
  let left = 100_000;
  return chosen.map((variant, i) => {
    const share = i === chosen.length - 1 ? left : r.chance(0.1) ? 0 : r.int(left + 1);
    left -= share;
    return { variant, weight: share / 1000 };
  });
}

const TYPES = ["boolean", "string", "number", "object"] as const;

/** A random project: segments with members and conditions, flags of every type with every kind of targeting. */
function randomProject(r: Random, base: Doc): Doc {
  const segments = SEGMENTS.map((id) => ({
    id,
    name: id,
    description: "",
    conditions: Array.from({ length: r.int(3) }, () => condition(r, false)),
    members: r.some(ACTORS, 0, 6).sort(),
  }));
  const flags: Doc[] = [];
  const count = 7 + r.int(4);
  for (let i = 0; i < count; i++) {
    const name = `f${i}`;
    const type = r.pick(TYPES);
    const n = 2 + r.int(3);
    const variants =
      type === "boolean"
        ? []
        : Array.from({ length: n }, (_, k) => ({
            key: `v${k}`,
            value: type === "string" ? `s${k}` : type === "number" ? k * 1.5 : { k, tags: [`t${k}`] },
          }));
    const keys = type === "boolean" ? ["on", "off"] : variants.map((v) => v.key);
    const status = r.chance(0.12) ? "disabled" : r.chance(0.12) ? "enabled" : "conditional";
    const rules = Array.from({ length: r.int(5) }, (_, k) => {
      const conditions = Array.from({ length: r.int(4) }, () => condition(r, true));
      const serve = r.chance(0.3)
        ? { split: { ...(r.chance(0.3) ? { bucketBy: "company" } : {}), weights: weights(r, keys) } }
        : { variant: r.pick(keys) };
      return { id: `r${k}`, conditions, serve };
    });
    const earlier = flags.map((f) => f.name);
    const prerequisites = r.chance(0.35)
      ? r.some(earlier, 1, 2).map((flag) => {
          const other = flags.find((f) => f.name === flag) as Doc;
          const otherKeys = other.type === "boolean" ? ["on", "off"] : other.variants.map((v: Doc) => v.key);
          return { flag, variants: r.some(otherKeys, 1, otherKeys.length) };
        })
      : [];
    const percentageActors = r.chance(0.45) ? r.pick(PERCENTAGES) : 0;
    // 0 % and 100 % too: a call rollout of 100 % draws nothing (every call is in it), and is compared exactly.
    const percentageCalls = r.chance(0.15) ? r.pick(PERCENTAGES) : 0;
    const splitRules = rules.filter((rule) => "split" in rule.serve);
    const plan = r.chance(0.25)
      ? {
          steps: [
            { at: PAST, percentage: r.pick(PERCENTAGES) },
            ...splitRules
              .slice(0, 1)
              .map((rule) => ({ at: "2021-01-01T00:00:00.000Z", ruleId: rule.id, weights: weights(r, keys) })),
            { at: FUTURE, percentage: r.pick(PERCENTAGES) },
          ],
          ...(r.chance(0.3) ? { pausedAt: "2022-01-01T00:00:00.000Z" } : {}),
        }
      : undefined;
    flags.push({
      name,
      description: "",
      type,
      variants,
      kind: "release",
      permanent: false,
      environments: {
        production: {
          status,
          percentageActors,
          percentageCalls,
          onVariant: type === "boolean" ? "on" : r.pick(keys),
          offVariant: type === "boolean" ? "off" : r.pick(keys),
          rules,
          prerequisites,
          ...(plan ? { rolloutPlan: plan } : {}),
          actors: r.some(ACTORS, 0, 4).sort(),
          segments: r.chance(0.4) ? r.some(SEGMENTS, 1, 2).sort() : [],
        },
      },
    });
  }
  return { ...base, segments, flags };
}

/** A random context: its targeting key mostly one of ACTORS (listed and attached), or (`fresh`) a new one. */
function randomContext(r: Random, fresh: boolean): Doc {
  const context: Doc = {};
  if (!r.chance(0.1)) context.targetingKey = !fresh && r.chance(0.8) ? r.pick(ACTORS) : `x${r.int(1_000_000_000)}`;
  const maybe = (name: string, value: () => unknown) => {
    if (r.chance(0.7)) context[name] = value();
  };
  maybe("plan", () => r.pick(TEXT));
  maybe("country", () => r.pick(TEXT));
  maybe("email", () => r.pick(EMAILS));
  maybe("groups", () => r.some(TEXT, 0, 3));
  maybe("beta", () => r.chance(0.5));
  maybe("age", () => (r.chance(0.2) ? String(r.int(100)) : r.int(100)));
  maybe("score", () => r.int(100));
  maybe("version", () => r.pick(VERSIONS));
  maybe("signup", () => r.pick(INSTANTS));
  maybe("company", () => (r.chance(0.3) ? r.int(1000) : `c${r.int(1000)}`));
  return context;
}

/** The environment's flags as the engine evaluates them, from the project's document (with members). */
function engineOf(doc: Doc, environment: string) {
  const flags = new Map<string, TargetedFlag>();
  for (const f of doc.flags) {
    const c = f.environments[environment];
    flags.set(f.name, {
      name: f.name,
      status: c.status,
      percentageActors: c.percentageActors,
      percentageCalls: c.percentageCalls,
      actors: new Set(c.actors),
      segments: new Set(c.segments),
      type: f.type,
      variants: f.variants,
      onVariant: c.onVariant,
      offVariant: c.offVariant,
      rules: c.rules,
      prerequisites: c.prerequisites,
      rolloutPlan: c.rolloutPlan ?? null,
    });
  }
  const members = new Map<string, Set<string>>(doc.segments.map((s: Doc) => [s.id, new Set(s.members ?? [])]));
  const conditions = new Map<string, Doc[]>(doc.segments.map((s: Doc) => [s.id, s.conditions]));
  // A draw in no call rollout but one of 100 % (which every draw is in): an answer a call rollout of less
  // would decide is told apart (percentageDecided).
  const resolver: TargetingResolver = {
    isMember: (segment, actor) => members.get(segment)?.has(actor) === true,
    segmentConditions: (segment) => conditions.get(segment) as never,
    flag: (name) => flags.get(name),
    random: () => 0.999_999,
  };
  const contextOf = (c: Doc) => {
    const { targetingKey, ...attributes } = c;
    return { actorIds: targetingKey === undefined ? [] : [targetingKey], attributes };
  };
  /** Whether a percentage (a split, the actor or call rollout, a prerequisite's) decides the flag's answer. */
  const percentageDecided = (flag: TargetedFlag, context: Doc): boolean => {
    if (flag.status === "disabled") return false;
    for (const p of flag.prerequisites ?? []) {
      const other = flags.get(p.flag);
      if (other === undefined) return false;
      if (percentageDecided(other, context)) return true;
      const answer = evaluateFlag(other, contextOf(context), resolver);
      if (answer.variant === null || !p.variants.includes(answer.variant)) return false;
    }
    if (flag.status === "enabled") return false;
    const answer = evaluateFlag(flag, contextOf(context), resolver, { detail: true });
    // A rule's split decides by its bucket.
    if (answer.reason === "SPLIT" && answer.rule !== "actor_rollout") return true;
    // A call rollout of 100 % serves onVariant to every context the rules leave to the rollouts: no
    // bucket or draw decides. Nor does an actor rollout of 100 % (every actor), nor one of 0 %.
    const calls = flag.percentageCalls;
    if (calls >= 100) return false;
    if (answer.rule === "actor_rollout") return answer.threshold < 100_000;
    // Nothing held before the rollouts: the actor rollout's bucket (in force now) or a call's draw decided.
    const rollout = answer.threshold > 0 && answer.threshold < 100_000 && context.targetingKey !== undefined;
    return answer.reason === "DEFAULT" && (rollout || calls > 0);
  };
  return {
    flags,
    percentageDecided,
    variant: (flag: TargetedFlag, context: Doc) => evaluateFlag(flag, contextOf(context), resolver).variant,
  };
}

/** flagd's evaluator holding a file, validated strictly against flagd's schema. */
function flagdOf(text: string): FlagdCore {
  const storage = new MemoryStorage(SILENT as never);
  storage.setConfigurations(text, true);
  return new FlagdCore(storage, SILENT as never);
}

function flagdAnswer(core: FlagdCore, type: string, key: string, context: Doc) {
  const ctx = context as never;
  switch (type) {
    case "boolean":
      return core.resolveBooleanEvaluation(key, false, ctx);
    case "string":
      return core.resolveStringEvaluation(key, "", ctx);
    case "number":
      return core.resolveNumberEvaluation(key, 0, ctx);
    default:
      return core.resolveObjectEvaluation(key, {}, ctx);
  }
}

/** The shape the export writes (beside flagd's own schema, which flagd-core checks). */
const SHAPE = {
  type: "object",
  required: ["$schema", "flags"],
  additionalProperties: false,
  properties: {
    $schema: { const: "https://flagd.dev/schema/v0/flags.json" },
    $evaluators: { type: "object", additionalProperties: { type: ["object", "boolean"] } },
    flags: {
      type: "object",
      additionalProperties: {
        type: "object",
        required: ["state", "variants", "defaultVariant"],
        additionalProperties: false,
        properties: {
          state: { const: "ENABLED" },
          variants: { type: "object", minProperties: 2 },
          defaultVariant: { type: "string" },
          targeting: { type: "object" },
          metadata: { type: "object", additionalProperties: { type: ["string", "number", "boolean"] } },
        },
      },
    },
  },
};
const validateShape = new Ajv({ allErrors: true, strict: false }).compile(SHAPE);

for (const dialect of DIALECTS) {
  describe(`flagd's format [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      // The property test asks OFREP's bulk evaluation for hundreds of contexts a minute.
      server = await startServer({ dialect, env: { OFREP_BULK_RATE_LIMIT_PER_MINUTE: "0" } });
    });
    after(() => server.close());

    const ok = async (method: string, path: string, body?: unknown, status = 200) => {
      const res = await server.request(method, path, { body });
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      return res.body;
    };

    test("an environment's flags as flagd definitions, valid against flagd's schema, with an ETag and 304", async () => {
      const project = await createProject(server);
      const p = `/projects/${project}`;
      await ok("POST", `${p}/environments`, { id: "staging", name: "Staging" }, 201);
      await ok("POST", `${p}/flags/checkout`, {}, 201);
      await ok("POST", `${p}/flags/archived`, {}, 201);
      await ok("POST", `${p}/flags/archived/archive`);
      await ok(
        "POST",
        `${p}/flags/theme`,
        {
          type: "string",
          variants: [
            { key: "light", value: "#fff" },
            { key: "dark", value: "#000" },
          ],
        },
        201,
      );
      await ok("PATCH", `${p}/flags/checkout?environment=staging`, {
        status: "conditional",
        addActors: ["ann"],
        percentageActors: 25,
        rules: [
          {
            id: "pros",
            conditions: [{ attribute: "plan", operator: "in", values: ["pro"], caseInsensitive: true }],
            serve: { variant: "on" },
          },
          {
            id: "mails",
            conditions: [{ attribute: "email", operator: "matches", values: ["@acme\\."] }],
            serve: { variant: "on" },
          },
        ],
      });
      await ok("PATCH", `${p}/flags/theme`, { status: "enabled", onVariant: "dark", offVariant: "light" });

      const res = await server.request("GET", `${p}/flagd.json`);
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
      const file = res.body;
      assert.equal(validateShape(file), true, JSON.stringify(validateShape.errors));
      assert.deepEqual(Object.keys(file.flags), ["checkout", "theme"], "archived flags are left out");
      // The default environment: checkout is disabled there, theme enabled.
      assert.deepEqual(file.flags.checkout, {
        state: "ENABLED",
        variants: { on: true, off: false },
        defaultVariant: "off",
      });
      assert.deepEqual(file.flags.theme, {
        state: "ENABLED",
        variants: { light: "#fff", dark: "#000" },
        defaultVariant: "dark",
      });
      const core = flagdOf(res.text);
      assert.equal(core.resolveStringEvaluation("theme", "none", {}).value, "#000");

      // ETag: the project's revision (with the environment); 304 while it has not moved.
      const etag = res.headers.get("etag") as string;
      assert.match(etag, /^"flagd-r\d+-production"$/);
      const again = await server.request("GET", `${p}/flagd.json`, { headers: { "if-none-match": etag } });
      assert.equal(again.status, 304);
      assert.equal(again.text, "");
      assert.equal(again.headers.get("etag"), etag);

      // Another environment, named.
      const staging = await server.request("GET", `${p}/flagd.json?environment=staging`);
      assert.equal(staging.status, 200, staging.text);
      assert.match(staging.headers.get("etag") ?? "", /-staging"$/);
      assert.notEqual(staging.headers.get("etag"), etag);
      const stagingFile = staging.body;
      assert.equal(validateShape(stagingFile), true, JSON.stringify(validateShape.errors));
      const checkout = stagingFile.flags.checkout;
      assert.equal(checkout.defaultVariant, "off");
      assert.match(checkout.metadata.inexact, /caseInsensitive/);
      assert.match(checkout.metadata.inexact, /matches/);
      const stagingCore = flagdOf(staging.text);
      const variant = (ctx: Doc) => stagingCore.resolveBooleanEvaluation("checkout", false, ctx as never).variant;
      assert.equal(variant({ targetingKey: "ann" }), "on", "an attached actor");
      assert.equal(variant({ targetingKey: "zed", plan: "PRO" }), "on", "caseInsensitive, upper case");
      assert.equal(variant({ plan: "free" }), "off", "no targeting key: no rollout");
      assert.equal(variant({ email: "x@acme.io" }), "off", "matches never holds in flagd");
      const onShare =
        Array.from({ length: 2000 }, (_, i) => variant({ targetingKey: `actor-${i}` })).filter((v) => v === "on")
          .length / 2000;
      assert.ok(Math.abs(onShare - 0.25) < 0.04, `the actor rollout's share: ${onShare}`);

      // A write moves the revision: the old tag gets the new file.
      await ok("PATCH", `${p}/flags/theme`, { description: "Colours" });
      const moved = await server.request("GET", `${p}/flagd.json`, { headers: { "if-none-match": etag } });
      assert.equal(moved.status, 200);
      assert.notEqual(moved.headers.get("etag"), etag);
    });

    test("refusals: no key, a check key, another environment than the key's, unknown project or environment", async () => {
      const project = await createProject(server);
      const p = `/projects/${project}`;
      await ok("POST", `${p}/environments`, { id: "staging", name: "Staging" }, 201);
      expectProblem(await server.request("GET", `${p}/flagd.json`, { key: null }), 401, "unauthorized");
      const check = await createKey(server, project, "check");
      expectProblem(await server.request("GET", `${p}/flagd.json`, { key: check.key }), 403, "forbidden");
      // A read key bound to production reads production's (named or not), never staging's.
      const bound = await createKey(server, project, "read");
      assert.equal((await server.request("GET", `${p}/flagd.json`, { key: bound.key })).status, 200);
      assert.equal(
        (await server.request("GET", `${p}/flagd.json?environment=production`, { key: bound.key })).status,
        200,
      );
      expectProblem(
        await server.request("GET", `${p}/flagd.json?environment=staging`, { key: bound.key }),
        403,
        "forbidden",
      );
      const other = await createProject(server);
      const otherKey = await createKey(server, other, "read");
      expectProblem(await server.request("GET", `${p}/flagd.json`, { key: otherKey.key }), 403, "forbidden");
      expectProblem(await server.request("GET", "/projects/none/flagd.json"), 404, "project_not_found");
      expectProblem(await server.request("GET", `${p}/flagd.json?environment=nowhere`), 404, "environment_not_found");
      expectProblem(await server.request("GET", `${p}/flagd.json?other=1`), 400, "invalid_request");
    });

    test("where no percentage decides, flagd serves what the server does: rollouts of 100 %, a pause ahead, actor fields", async () => {
      const project = await createProject(server);
      const p = `/projects/${project}`;
      const base = (await ok("GET", `${p}/export`)) as Doc;
      const flag = (name: string, configuration: Doc): Doc => ({
        name,
        description: "",
        type: "boolean",
        variants: [],
        kind: "release",
        permanent: false,
        environments: {
          production: {
            status: "conditional",
            percentageActors: 0,
            percentageCalls: 0,
            onVariant: "on",
            offVariant: "off",
            rules: [],
            prerequisites: [],
            actors: [],
            segments: [],
            ...configuration,
          },
        },
      });
      const flags = [
        // Every call is in a call rollout of 100 %, with a targeting key or without (whatever the actors').
        flag("calls-all", { percentageCalls: 100 }),
        flag("calls-all-actors-some", { percentageCalls: 100, percentageActors: 25 }),
        flag("calls-all-after-rule", {
          percentageCalls: 100,
          rules: [
            {
              id: "free",
              conditions: [{ attribute: "plan", operator: "in", values: ["free"] }],
              serve: { variant: "off" },
            },
          ],
          rolloutPlan: { steps: [{ at: "2020-01-01T00:00:00.000Z", percentage: 50 }] },
        }),
        // A prerequisite that a call rollout of 100 % turns on.
        flag("guarded", { status: "enabled", prerequisites: [{ flag: "calls-all", variants: ["on"] }] }),
        // Every actor is in an actor rollout of 100 %; a context without one is not (no call rollout).
        flag("actors-all", { percentageActors: 100 }),
        // Paused ahead of its step: the step is not in force until its time (which the pause comes after).
        flag("paused-ahead", {
          rolloutPlan: {
            steps: [{ at: "2090-01-01T00:00:00.000Z", percentage: 100 }],
            pausedAt: "2095-01-01T00:00:00.000Z",
          },
        }),
        // targetingKey and actorIds name a context's actors (OFREP), never attributes a rule reads.
        flag("actor-fields", {
          rules: [
            {
              id: "key",
              conditions: [{ attribute: "targetingKey", operator: "in", values: ["ann"] }],
              serve: { variant: "on" },
            },
            {
              id: "by-key",
              conditions: [],
              serve: {
                split: {
                  bucketBy: "targetingKey",
                  weights: [
                    { variant: "on", weight: 100 },
                    { variant: "off", weight: 0 },
                  ],
                },
              },
            },
            {
              id: "no-ids",
              conditions: [{ attribute: "actorIds", operator: "present", values: [], negate: true }],
              serve: { variant: "off" },
            },
          ],
          percentageActors: 100,
        }),
      ];
      const applied = await server.request("POST", `${p}/apply`, { body: { ...base, flags } });
      assert.equal(applied.status, 200, applied.text);
      const res = await server.request("GET", `${p}/flagd.json`);
      assert.equal(res.status, 200, res.text);
      const core = flagdOf(res.text);
      assert.equal(res.body.flags["calls-all"].defaultVariant, "on");
      assert.equal(res.body.flags["calls-all"].targeting, undefined, "a call rollout of 100 % always holds");
      const check = await createKey(server, project, "check");
      const contexts: Doc[] = [
        {},
        { plan: "pro" },
        { plan: "free" },
        { targetingKey: "ann" },
        { targetingKey: "bob", plan: "free" },
      ];
      const expected: Record<string, string[]> = {
        "calls-all": ["on", "on", "on", "on", "on"],
        "calls-all-actors-some": ["on", "on", "on", "on", "on"],
        "calls-all-after-rule": ["on", "on", "off", "on", "off"],
        guarded: ["on", "on", "on", "on", "on"],
        "actors-all": ["off", "off", "off", "on", "on"],
        "paused-ahead": ["off", "off", "off", "off", "off"],
        "actor-fields": ["off", "off", "off", "off", "off"],
      };
      for (const [i, context] of contexts.entries()) {
        const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", { key: check.key, body: { context } });
        assert.equal(bulk.status, 200, bulk.text);
        for (const answer of bulk.body.flags as Doc[]) {
          const where = `flag ${answer.key}, context ${JSON.stringify(context)}`;
          assert.equal(answer.variant, expected[answer.key]?.[i], `${where}: the server`);
          const theirs = flagdAnswer(core, "boolean", answer.key, context);
          assert.equal(
            theirs.variant,
            answer.variant,
            `${where}: flagd's file ${JSON.stringify(res.body.flags[answer.key])}`,
          );
        }
      }
    });

    for (const seed of SEEDS) {
      test(`property: flagd answers as the server does on random projects and contexts (seed ${seed})`, async (t) => {
        const r = random(seed);
        const project = await createProject(server);
        // Segment ids are unique across the service.
        SEGMENTS = ["a", "b", "c"].map((s) => `${project}-${s}`);
        const p = `/projects/${project}`;
        const base = (await ok("GET", `${p}/export`)) as Doc;
        const applied = await server.request("POST", `${p}/apply`, { body: randomProject(r, base) });
        assert.equal(applied.status, 200, `seed ${seed}: ${applied.text}`);
        const doc = (await ok("GET", `${p}/export?members=true`)) as Doc;
        const res = await server.request("GET", `${p}/flagd.json`);
        assert.equal(res.status, 200, res.text);
        assert.equal(validateShape(res.body), true, JSON.stringify(validateShape.errors));
        const core = flagdOf(res.text);
        const engine = engineOf(doc, "production");
        const check = await createKey(server, project, "check");
        const types = new Map<string, string>(doc.flags.map((f: Doc) => [f.name, f.type]));

        let exact = 0;
        const shares = new Map<string, { server: Map<string, number>; flagd: Map<string, number>; n: number }>();
        for (let i = 0; i < CONTEXTS + SHARE_CONTEXTS; i++) {
          // Shares are counted over contexts of new targeting keys only: a percentage picks among actors.
          const fresh = i >= CONTEXTS;
          const context = randomContext(r, fresh);
          const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", { key: check.key, body: { context } });
          assert.equal(bulk.status, 200, bulk.text);
          for (const answer of bulk.body.flags as Doc[]) {
            const flag = engine.flags.get(answer.key) as TargetedFlag;
            const theirs = flagdAnswer(core, types.get(answer.key) as string, answer.key, context);
            const where = `seed ${seed}, flag ${answer.key}, context ${JSON.stringify(context)}`;
            assert.equal(theirs.errorCode, undefined, `${where}: flagd: ${theirs.errorMessage}`);
            if (!engine.percentageDecided(flag, context)) {
              // The engine here agrees with the server, and flagd with both.
              assert.equal(engine.variant(flag, context), answer.variant, `${where}: the engine rebuilt`);
              assert.equal(
                theirs.variant,
                answer.variant,
                `${where}: flagd's file ${JSON.stringify(res.body.flags[answer.key])}`,
              );
              exact++;
            } else if (fresh && context.targetingKey !== undefined) {
              let tally = shares.get(answer.key);
              if (tally === undefined) {
                tally = { server: new Map(), flagd: new Map(), n: 0 };
                shares.set(answer.key, tally);
              }
              tally.n++;
              tally.server.set(answer.variant, (tally.server.get(answer.variant) ?? 0) + 1);
              tally.flagd.set(theirs.variant as string, (tally.flagd.get(theirs.variant as string) ?? 0) + 1);
            }
          }
        }
        assert.ok(exact > CONTEXTS, `seed ${seed}: ${exact} answers compared exactly`);
        t.diagnostic(
          `${exact} answers compared exactly; the shares of ${shares.size} flags where a percentage decides`,
        );
        // Where a percentage decides, the same shares within sampling error (5 standard deviations).
        for (const [flag, tally] of shares) {
          if (tally.n < 100) continue;
          for (const variant of new Set([...tally.server.keys(), ...tally.flagd.keys()])) {
            const a = (tally.server.get(variant) ?? 0) / tally.n;
            const b = (tally.flagd.get(variant) ?? 0) / tally.n;
            const pooled = (a + b) / 2;
            const bound = 5 * Math.sqrt((2 * pooled * (1 - pooled)) / tally.n) + 0.02;
            assert.ok(
              Math.abs(a - b) <= bound,
              `seed ${seed}, flag ${flag}, variant ${variant}: ${a} on the server, ${b} in flagd (n ${tally.n})`,
            );
          }
        }
      });
    }
  });
}
