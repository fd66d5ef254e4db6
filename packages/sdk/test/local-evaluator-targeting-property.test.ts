import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  ManualClock,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import {
  type ConditionInput as Condition,
  type ConditionOperator,
  createLocalEvaluator,
  FlagstaffClient,
  type FlagType,
  type LocalEvaluator,
  type RuleInput as Rule,
  type Variant,
} from "../src/index.js";

// Issue 25's half of the local-vs-server property, and issue 31's differential: for random projects of
// typed flags (boolean, string, number, object) with random rules (every operator, negated or not,
// case-insensitive or not, variants and splits), segments with members and conditions, and prerequisites
// on earlier flags, and for random contexts (actors, and attributes, one of them named __proto__, as texts
// or as lists of every length, 0 and 1 included), the local evaluator, the server's check and OFREP (single
// and bulk) serve the same variant and value. Written through the SDK against a real server, read back
// through the real stream, checked through the SDK's `flags.evaluate` (attributes in the query, a list as
// attributes[NAME][]) and evaluated over OFREP with the context as JSON. The query cannot carry an empty
// list (the SDK leaves it out), so the check is compared with the local evaluator's answer for the
// context without it; OFREP and the local evaluator read the empty list itself. All draw the call rollout
// from the same constant and read `$now` from the same clock, so every answer is deterministic and compared.

/** FUZZ_RUNS scales the run count as in the server's fuzz tests (1 is the full count). */
const SCALE = Number(process.env.FUZZ_RUNS ?? "1");
const RUNS = Math.max(3, Math.round(25 * SCALE));

const DRAW = 0.42; // in a call rollout of 50 % and more, out of one of 25 % and less
const PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100] as const;
const ACTORS = ["ana", "bo", "cy", "dee", "eli", "fay"];

// Attributes and the values a context gives them, each as a text or as a list of any of them. A Map, not an
// object literal: in a literal, a member "__proto__" would set the object's prototype.
const ATTRIBUTE_VALUES = new Map<string, readonly string[]>([
  ["country", ["DE", "de", "AT", "FR", "US", "Deutschland"]],
  ["plan", ["free", "pro", "PRO", "enterprise"]],
  ["email", ["ana@example.com", "BO@EXAMPLE.COM", "cy@test.org", "not-an-email"]],
  ["age", ["17", "18", "30", "65", "2.5", "-1", "1e2", "abc", " 30"]],
  ["version", ["1.0.0", "1.2", "v2.0.0", "2.0.0-beta.1", "2.0.0", "10.1.3", "banana"]],
  ["signup", ["2026-01-01T00:00:00Z", "2026-11-22T09:59:59.999Z", "2027-06-30T12:00:00+02:00", "yesterday"]],
  ["__proto__", ["DE", "beta", "30", "x"]],
]);
const LIST_ATTRIBUTE = "tags";
const TAGS = ["beta", "Beta", "staff", "eu", "x"];
const ATTRIBUTES = [...ATTRIBUTE_VALUES.keys(), LIST_ATTRIBUTE];

const TEXTS = ["DE", "de", "at", "pro", "ent", "example.com", "@test", "beta", "staff", "a", "Deutsch", "x"];
const PATTERNS = ["^de$", "^[A-Z]{2}$", "example\\.(com|org)$", "^v?2\\.", "(a+)+$", "[0-9]"];
const NUMBERS = [0, 2.5, 17, 18, 30, 64.9, 100];
const VERSIONS = ["1", "1.2", "v2.0.0", "2.0.0-beta", "2.0.0", "10.0.0"];
const INSTANTS = ["2026-01-01T00:00:00Z", "2026-11-22T10:00:00Z", "2026-11-22T10:00:00.001Z", "2027-01-01T00:00+01:00"];

const STRING_OPERATORS = ["in", "not_in", "starts_with", "ends_with", "contains"] as const;

/** A condition on an attribute (segment conditions may hold no in_segment), fitting its operator's values. */
const attributeCondition: fc.Arbitrary<Condition> = fc
  .record({
    attribute: fc.constantFrom(...ATTRIBUTES),
    kind: fc.constantFrom("string", "string", "matches", "number", "semver", "instant", "present"),
    negate: fc.boolean(),
    caseInsensitive: fc.boolean(),
    pick: fc.nat(),
    stringOp: fc.constantFrom(...STRING_OPERATORS),
    numberOp: fc.constantFrom("eq", "gt", "gte", "lt", "lte" as const),
    semverOp: fc.constantFrom("semver_eq", "semver_gt", "semver_gte", "semver_lt", "semver_lte" as const),
    instantOp: fc.constantFrom("before", "after" as const),
    now: fc.boolean(),
    texts: fc.uniqueArray(fc.constantFrom(...TEXTS), { minLength: 1, maxLength: 3 }),
    numbers: fc.uniqueArray(fc.constantFrom(...NUMBERS), { minLength: 1, maxLength: 2 }),
    versions: fc.uniqueArray(fc.constantFrom(...VERSIONS), { minLength: 1, maxLength: 2 }),
    instants: fc.uniqueArray(fc.constantFrom(...INSTANTS), { minLength: 1, maxLength: 2 }),
  })
  .map((c): Condition => {
    const negate = c.negate ? { negate: true } : {};
    switch (c.kind) {
      case "string":
        return {
          attribute: c.attribute,
          operator: c.stringOp,
          values: c.texts,
          ...negate,
          ...(c.caseInsensitive ? { caseInsensitive: true } : {}),
        };
      case "matches":
        return {
          attribute: c.attribute,
          operator: "matches",
          values: [PATTERNS[c.pick % PATTERNS.length]!],
          ...negate,
          ...(c.caseInsensitive ? { caseInsensitive: true } : {}),
        };
      case "number":
        return { attribute: c.attribute, operator: c.numberOp, values: c.numbers, ...negate };
      case "semver":
        return { attribute: c.attribute, operator: c.semverOp, values: c.versions, ...negate };
      case "instant":
        return { attribute: c.now ? "$now" : "signup", operator: c.instantOp, values: c.instants, ...negate };
      default:
        return { attribute: c.attribute, operator: "present" as ConditionOperator, values: [], ...negate };
    }
  });

/** A flag rule's condition: an attribute condition, or in_segment / not_in_segment of the run's segments. */
const ruleCondition = fc.oneof(
  { weight: 5, arbitrary: attributeCondition },
  {
    weight: 1,
    arbitrary: fc.record({
      operator: fc.constantFrom("in_segment", "not_in_segment" as const),
      segments: fc.uniqueArray(fc.integer({ min: 0, max: 1 }), { minLength: 1, maxLength: 2 }),
      negate: fc.boolean(),
    }),
  },
);

const VALUES_BY_TYPE: Record<Exclude<FlagType, "boolean">, readonly Variant["value"][]> = {
  string: ["red", "green", "blue", ""],
  number: [0, 1, -2.5, 1000],
  object: [{ a: 1 }, { a: 2, list: [1, "x"] }, [1, 2], { nested: { deep: true } }],
};

const flagArb = fc.record({
  type: fc.constantFrom<FlagType>("boolean", "string", "number", "object"),
  variantCount: fc.integer({ min: 2, max: 4 }),
  on: fc.nat(),
  offShift: fc.integer({ min: 1, max: 3 }),
  status: fc.constantFrom("enabled", "disabled", "conditional", "conditional", "conditional"),
  percentageActors: fc.constantFrom(...PERCENTAGES),
  percentageCalls: fc.constantFrom(0, 0, 25, 50, 100),
  actors: fc.uniqueArray(fc.constantFrom(...ACTORS), { maxLength: 2 }),
  segments: fc.uniqueArray(fc.integer({ min: 0, max: 1 }), { maxLength: 2 }),
  rules: fc.array(
    fc.record({
      conditions: fc.array(ruleCondition, { maxLength: 3 }),
      split: fc.boolean(),
      variant: fc.nat(),
      other: fc.nat(),
      weight: fc.integer({ min: 0, max: 100 }),
      bucketBy: fc.constantFrom(undefined, undefined, "email", "country", "age", LIST_ATTRIBUTE),
    }),
    { maxLength: 4 },
  ),
  prerequisites: fc.array(
    fc.record({ on: fc.nat(), variants: fc.uniqueArray(fc.nat({ max: 3 }), { minLength: 1, maxLength: 2 }) }),
    {
      maxLength: 2,
    },
  ),
});

/** An attribute of a context: a text (the first pick; none, and it is absent) or a list of the picks, 0 to 3. */
const attributeArb = fc.record({
  name: fc.constantFrom(...ATTRIBUTE_VALUES.keys()),
  picks: fc.array(fc.nat(), { maxLength: 3 }),
  list: fc.boolean(),
});
const contextArb = fc.record({
  actorIds: fc.uniqueArray(fc.constantFrom(...ACTORS), { maxLength: 2 }),
  attributes: fc.uniqueArray(attributeArb, { selector: (a) => a.name, maxLength: 7 }),
  tags: fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }),
  // tags as a list (of any length), as a text (the first tag), or absent.
  tagsAs: fc.constantFrom("list", "list", "text", "absent"),
});

const projectArb = fc.record({
  flags: fc.array(flagArb, { minLength: 1, maxLength: 4 }),
  members: fc.tuple(
    fc.uniqueArray(fc.constantFrom(...ACTORS), { maxLength: 3 }),
    fc.uniqueArray(fc.constantFrom(...ACTORS), { maxLength: 3 }),
  ),
  segmentConditions: fc.tuple(
    fc.array(attributeCondition, { maxLength: 2 }),
    fc.array(attributeCondition, { maxLength: 2 }),
  ),
  contexts: fc.array(contextArb, { minLength: 2, maxLength: 6 }),
});

type GeneratedContext = {
  actorIds: string[];
  attributes: { name: string; picks: number[]; list: boolean }[];
  tags: string[];
  tagsAs: string;
};
type ContextAttributes = Record<string, string | string[]>;

/** Sets an own member, whatever its name: assignment to "__proto__" would set the prototype instead. */
const define = (object: ContextAttributes, name: string, value: string | string[]) =>
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });

/** A context's attributes: texts and lists (of every length) as the caller gives them to each evaluator. */
function attributesOf(context: GeneratedContext): ContextAttributes {
  const out: ContextAttributes = {};
  for (const { name, picks, list } of context.attributes) {
    const values = ATTRIBUTE_VALUES.get(name) as readonly string[];
    const texts = picks.map((pick) => values[pick % values.length] as string);
    if (list) define(out, name, texts);
    else if (texts.length > 0) define(out, name, texts[0] as string);
  }
  if (context.tagsAs === "list") define(out, LIST_ATTRIBUTE, context.tags);
  else if (context.tagsAs === "text" && context.tags.length > 0) define(out, LIST_ATTRIBUTE, context.tags[0] as string);
  return out;
}

/** The attributes a query carries: an empty list has no parameter, so it is left out (and reads as missing). */
function queryCarried(attributes: ContextAttributes): ContextAttributes {
  const out: ContextAttributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (!Array.isArray(value) || value.length > 0) define(out, name, value);
  }
  return out;
}

type GeneratedProject = typeof projectArb extends fc.Arbitrary<infer T> ? T : never;

/** A boolean flag of a status, with no targeting: what answers STATIC, DISABLED or DEFAULT. */
const plainFlag = (status: "enabled" | "disabled" | "conditional"): GeneratedProject["flags"][number] => ({
  type: "boolean",
  variantCount: 2,
  on: 0,
  offShift: 1,
  status,
  percentageActors: 0,
  percentageCalls: 0,
  actors: [],
  segments: [],
  rules: [],
  prerequisites: [],
});

/**
 * A project run first, whatever the seed: the two ways a list of one answers otherwise than its one text
 * (a negated gt on ["abc"], a split by ["beta"]), empty lists, and an attribute named __proto__.
 */
const LISTS_OF_ONE: GeneratedProject = {
  flags: [
    {
      type: "string",
      variantCount: 3,
      on: 0,
      offShift: 1,
      status: "conditional",
      percentageActors: 0,
      percentageCalls: 0,
      actors: [],
      segments: [],
      rules: [
        {
          conditions: [{ attribute: "age", operator: "gt", values: [10], negate: true }],
          split: false,
          variant: 2,
          other: 0,
          weight: 0,
          bucketBy: undefined,
        },
        { conditions: [], split: true, variant: 2, other: 0, weight: 50, bucketBy: LIST_ATTRIBUTE },
      ],
      prerequisites: [],
    },
    // One plain flag of each status, so that every run reaches STATIC, DISABLED and DEFAULT (the random
    // projects reach them too, but 13 of them may by chance not).
    plainFlag("enabled"),
    plainFlag("disabled"),
    plainFlag("conditional"),
  ],
  members: [[], []],
  segmentConditions: [[], []],
  contexts: [
    { actorIds: [], attributes: [{ name: "age", picks: [7], list: true }], tags: [], tagsAs: "absent" },
    { actorIds: [], attributes: [{ name: "age", picks: [7], list: false }], tags: ["beta"], tagsAs: "list" },
    { actorIds: [], attributes: [], tags: ["beta"], tagsAs: "text" },
    { actorIds: ["ana"], attributes: [{ name: "age", picks: [], list: true }], tags: [], tagsAs: "list" },
    { actorIds: [], attributes: [{ name: "__proto__", picks: [3], list: false }], tags: [], tagsAs: "absent" },
  ],
};

for (const dialect of DIALECTS) {
  describe(`local evaluator serves the server's variants for random targeting [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let admin: FlagstaffClient;
    let checker: FlagstaffClient;
    let local: LocalEvaluator;
    let ofrepKey: string;
    const clock = new ManualClock();

    before(async () => {
      // Hundreds of bulk evaluations a minute with one check key from one address: past the default limit.
      server = await startServer({
        dialect,
        random: () => DRAW,
        clock,
        env: { OFREP_BULK_RATE_LIMIT_PER_MINUTE: "0" },
      });
      project = await createProject(server, "targeting-property");
      admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      checker = new FlagstaffClient({ baseUrl: server.url, apiKey: (await createKey(server, project, "check")).key });
      const reader = (await createKey(server, project, "read")).key;
      ofrepKey = (await createKey(server, project, "check")).key;
      local = createLocalEvaluator({
        url: server.url,
        key: reader,
        projectId: project,
        random: () => DRAW,
        now: () => clock.now(),
      });
      await local.ready(10_000);
    });
    after(async () => {
      await local.close();
      server.service.app.server.closeAllConnections();
      await server.close();
    });

    /** OFREP's body for a context, as JSON text (so __proto__ is a member like any other, as JSON.parse reads it). */
    const ofrepBody = (actorIds: string[], attributes: ContextAttributes) => {
      const context: ContextAttributes = {};
      for (const [name, value] of Object.entries(attributes)) define(context, name, value);
      if (actorIds.length > 0) define(context, "actorIds", actorIds);
      return JSON.stringify({ context });
    };

    test(`${RUNS} random projects, every flag, every context`, async () => {
      let run = 0;
      let compared = 0;
      const lists = new Map<number, number>();
      const reasons = new Set<string>();
      let byRule = 0;
      await fc.assert(
        fc.asyncProperty(projectArb, async ({ flags, members, segmentConditions, contexts }) => {
          const prefix = `r${run++}`;
          const segments: string[] = [];
          for (const [i, list] of members.entries()) {
            const segment = await admin.segments.create(project, {
              name: `${prefix}-s${i}`,
              conditions: segmentConditions[i],
            });
            if (list.length > 0) await admin.segments.update(project, segment.id, { addActors: list });
            segments.push(segment.id);
          }
          const written: { name: string; type: FlagType; keys: string[] }[] = [];
          for (const [i, flag] of flags.entries()) {
            const name = `${prefix}-f${i}`;
            const keys =
              flag.type === "boolean" ? ["on", "off"] : Array.from({ length: flag.variantCount }, (_, k) => `v${k}`);
            const variants =
              flag.type === "boolean"
                ? undefined
                : keys.map((key, k) => ({ key, value: VALUES_BY_TYPE[flag.type as "string"][k]! }));
            const onVariant = keys[flag.on % keys.length]!;
            const offVariant = keys[(flag.on + flag.offShift) % keys.length]!;
            const typed = flag.type === "boolean" ? {} : { variants, onVariant, offVariant };
            await admin.flags.create(project, name, { type: flag.type, ...typed });
            const rules: Rule[] = flag.rules.map((rule, r) => {
              const conditions = rule.conditions.map((c) =>
                "segments" in c
                  ? {
                      operator: c.operator,
                      values: c.segments.map((s) => segments[s]!),
                      ...(c.negate ? { negate: true } : {}),
                    }
                  : c,
              );
              const first = keys[rule.variant % keys.length]!;
              const second = keys[(rule.variant + 1 + (rule.other % (keys.length - 1))) % keys.length]!;
              const serve = rule.split
                ? {
                    split: {
                      ...(rule.bucketBy ? { bucketBy: rule.bucketBy } : {}),
                      weights: [
                        { variant: first, weight: rule.weight },
                        { variant: second, weight: 100 - rule.weight },
                      ],
                    },
                  }
                : { variant: first };
              return { id: `rule-${r}`, conditions, serve };
            });
            const prerequisites =
              i === 0
                ? []
                : [
                    ...new Map(
                      flag.prerequisites.map((p) => {
                        const target = written[p.on % written.length]!;
                        const listed = [...new Set(p.variants.map((v) => target.keys[v % target.keys.length]!))];
                        return [target.name, { flag: target.name, variants: listed }] as const;
                      }),
                    ).values(),
                  ];
            await admin.flags.update(project, name, {
              status: flag.status as "enabled",
              percentageActors: flag.percentageActors,
              percentageCalls: flag.percentageCalls as 0,
              addActors: flag.actors,
              addSegments: flag.segments.map((n) => segments[n]!),
              rules,
              prerequisites,
            });
            written.push({ name, type: flag.type, keys });
          }
          // Changes arrive in order: once the marker is here, so is everything before it.
          await admin.flags.create(project, `${prefix}-marker`);
          await waitFor(`the marker of ${prefix}`, () => local.flagNames().includes(`${prefix}-marker`));
          for (const context of contexts) {
            const attributes = attributesOf(context);
            const { actorIds } = context;
            const body = ofrepBody(actorIds, attributes);
            const headers = { "content-type": "application/json" };
            const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", {
              key: ofrepKey,
              rawBody: body,
              headers,
            });
            assert.equal(bulk.status, 200, bulk.text);
            const inBulk = new Map(
              (bulk.body.flags as { key: string; variant: string; value: unknown }[]).map((f) => [f.key, f]),
            );
            for (const value of Object.values(attributes)) {
              if (Array.isArray(value)) lists.set(value.length, (lists.get(value.length) ?? 0) + 1);
            }
            for (const flag of written) {
              const mine = local.evaluate(flag.name, { actorIds, attributes });
              // What the query can say: the same context less its empty lists.
              const carried = queryCarried(attributes);
              const mineCarried = local.evaluate(flag.name, { actorIds, attributes: carried });
              const theirs = await checker.flags.evaluate(project, flag.name, { actorIds, attributes });
              const single = await server.request("POST", `/ofrep/v1/evaluate/flags/${flag.name}`, {
                key: ofrepKey,
                rawBody: body,
                headers,
              });
              const why = `${flag.name} (${flag.type}) for ${body}: local ${JSON.stringify(mine)}, check ${JSON.stringify(theirs)}, OFREP ${single.text}`;
              assert.notEqual(mine.reason, "ERROR", why);
              assert.equal(mineCarried.enabled, theirs.enabled, why);
              assert.equal(mineCarried.variant, theirs.variant, why);
              assert.deepEqual(mineCarried.value, theirs.value, why);
              assert.equal(single.status, 200, why);
              assert.deepEqual([single.body.variant, single.body.value], [mine.variant, mine.value], why);
              const fromBulk = inBulk.get(flag.name);
              assert.deepEqual([fromBulk?.variant, fromBulk?.value], [mine.variant, mine.value], `bulk: ${why}`);
              reasons.add(mine.reason);
              if ("ruleId" in mine && mine.ruleId !== undefined) byRule++;
              compared++;
            }
          }
        }),
        { numRuns: RUNS, examples: [[LISTS_OF_ONE]] },
      );
      assert.ok(compared > RUNS * 2, `compared ${compared} answers`);
      // Lists of every length reached the evaluators: empty, of one, and longer.
      for (const length of [0, 1, 2]) assert.ok((lists.get(length) ?? 0) > 0, `no list of ${length}: ${[...lists]}`);
      // The runs reach the engine's every way of deciding, rules and prerequisites included (the fixed
      // example holds a plain flag of each status).
      for (const reason of ["DISABLED", "STATIC", "TARGETING_MATCH", "DEFAULT"]) {
        assert.ok(reasons.has(reason), `no ${reason} among ${[...reasons].join(", ")}`);
      }
      assert.ok(byRule > 0, "no answer was decided by a rule");
    });
  });
}
