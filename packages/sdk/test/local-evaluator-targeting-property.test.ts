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

// Issue 25's half of the local-vs-server property: for random projects of typed flags (boolean, string,
// number, object) with random rules (every operator, negated or not, case-insensitive or not, variants
// and splits), segments with members and conditions, and prerequisites on earlier flags, and for random
// contexts (actors and attributes), the local evaluator serves the same variant and value as the server's
// check. Written through the SDK against a real server, read back through the real stream and checked
// through the SDK's `flags.evaluate` (attributes in the query). Both draw the call rollout from the same
// constant and read `$now` from the same clock, so every answer is deterministic and compared.

/** FUZZ_RUNS scales the run count as in the server's fuzz tests (1 is the full count). */
const SCALE = Number(process.env.FUZZ_RUNS ?? "1");
const RUNS = Math.max(3, Math.round(25 * SCALE));

const DRAW = 0.42; // in a call rollout of 50 % and more, out of one of 25 % and less
const PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100] as const;
const ACTORS = ["ana", "bo", "cy", "dee", "eli", "fay"];

// Attributes as a query carries them: text, or a list of two or more texts (a list of one is one text).
const ATTRIBUTE_VALUES: Record<string, readonly string[]> = {
  country: ["DE", "de", "AT", "FR", "US", "Deutschland"],
  plan: ["free", "pro", "PRO", "enterprise"],
  email: ["ana@example.com", "BO@EXAMPLE.COM", "cy@test.org", "not-an-email"],
  age: ["17", "18", "30", "65", "2.5", "-1", "1e2", "abc", " 30"],
  version: ["1.0.0", "1.2", "v2.0.0", "2.0.0-beta.1", "2.0.0", "10.1.3", "banana"],
  signup: ["2026-01-01T00:00:00Z", "2026-11-22T09:59:59.999Z", "2027-06-30T12:00:00+02:00", "yesterday"],
};
const LIST_ATTRIBUTE = "tags";
const TAGS = ["beta", "Beta", "staff", "eu", "x"];
const ATTRIBUTES = [...Object.keys(ATTRIBUTE_VALUES), LIST_ATTRIBUTE];

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
      bucketBy: fc.constantFrom(undefined, undefined, "email", "country", "age"),
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

const contextArb = fc.record({
  actorIds: fc.uniqueArray(fc.constantFrom(...ACTORS), { maxLength: 2 }),
  scalars: fc.dictionary(fc.constantFrom(...Object.keys(ATTRIBUTE_VALUES)), fc.nat(), { maxKeys: 6 }),
  tags: fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }),
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

type GeneratedContext = { actorIds: string[]; scalars: Record<string, number>; tags: string[] };

/** A context's attributes as the query carries them, and so as the server reads them. */
function attributesOf(context: GeneratedContext): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, pick] of Object.entries(context.scalars)) {
    const values = ATTRIBUTE_VALUES[name]!;
    out[name] = values[pick % values.length]!;
  }
  if (context.tags.length === 1) out[LIST_ATTRIBUTE] = context.tags[0]!;
  else if (context.tags.length > 1) out[LIST_ATTRIBUTE] = context.tags;
  return out;
}

for (const dialect of DIALECTS) {
  describe(`local evaluator serves the server's variants for random targeting [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let admin: FlagstaffClient;
    let checker: FlagstaffClient;
    let local: LocalEvaluator;
    const clock = new ManualClock();

    before(async () => {
      server = await startServer({ dialect, random: () => DRAW, clock });
      project = await createProject(server, "targeting-property");
      admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      checker = new FlagstaffClient({ baseUrl: server.url, apiKey: (await createKey(server, project, "check")).key });
      const reader = (await createKey(server, project, "read")).key;
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

    test(`${RUNS} random projects, every flag, every context`, async () => {
      let run = 0;
      let compared = 0;
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
          for (const flag of written) {
            for (const context of contexts) {
              const attributes = attributesOf(context);
              const { actorIds } = context;
              const mine = local.evaluate(flag.name, { actorIds, attributes });
              const theirs = await checker.flags.evaluate(project, flag.name, { actorIds, attributes });
              const why = `${flag.name} (${flag.type}) for ${JSON.stringify({ actorIds, attributes })}: local ${JSON.stringify(mine)}, server ${JSON.stringify(theirs)}`;
              assert.notEqual(mine.reason, "ERROR", why);
              assert.equal(mine.enabled, theirs.enabled, why);
              assert.equal(mine.variant, theirs.variant, why);
              assert.deepEqual(mine.value, theirs.value, why);
              reasons.add(mine.reason);
              if ("ruleId" in mine && mine.ruleId !== undefined) byRule++;
              compared++;
            }
          }
        }),
        { numRuns: RUNS },
      );
      assert.ok(compared > RUNS * 2, `compared ${compared} answers`);
      // The generator reaches the engine's every way of deciding, rules and prerequisites included.
      for (const reason of ["DISABLED", "STATIC", "TARGETING_MATCH", "DEFAULT"]) {
        assert.ok(reasons.has(reason), `no ${reason} among ${[...reasons].join(", ")}`);
      }
      assert.ok(byRule > 0, "no answer was decided by a rule");
    });
  });
}
