import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Static } from "typebox";
import { Value } from "typebox/value";
import {
  type ConfigurationProblem,
  type PrerequisiteNode,
  type Rule,
  type TargetingInput,
  validateConfiguration,
  validateSegmentConditions,
  validateVariants,
} from "../src/index.js";
import {
  ConditionsSchema,
  type RuleSchema,
  TargetingConfigurationSchema,
  VariantsSchema,
} from "../src/schemas/index.js";

// validateConfiguration, validateVariants and validateSegmentConditions: every kind of problem, where
// it is named, and that the validator alone refuses everything the schemas refuse.

// The schemas' static types are the engine's types (a compile-time check).
const _ruleFromSchema: Rule = {} as Static<typeof RuleSchema>;
void _ruleFromSchema;

const VARIANTS = [
  { key: "red", value: "#f00" },
  { key: "green", value: "#0f0" },
  { key: "blue", value: "#00f" },
];

/** A valid string flag's targeting, with `extra` over it. */
const input = (extra: Partial<Record<Exclude<keyof TargetingInput, "name">, unknown>> = {}): TargetingInput => ({
  name: "checkout",
  type: "string",
  variants: VARIANTS,
  onVariant: "green",
  offVariant: "red",
  rules: [
    {
      id: "eu-beta",
      description: "EU beta testers",
      conditions: [
        { attribute: "country", operator: "in", values: ["FR", "DE"], caseInsensitive: true },
        { attribute: "appVersion", operator: "semver_gte", values: ["2.1"] },
        { attribute: "signup", operator: "after", values: ["2026-01-01T00:00:00Z"] },
        { attribute: "email", operator: "matches", values: ["@example\\.com$"], negate: true },
        { attribute: "seats", operator: "gte", values: [10] },
        { attribute: "email", operator: "present", values: [] },
        { operator: "in_segment", values: ["beta"] },
      ],
      serve: { variant: "blue" },
    },
    {
      id: "ab",
      conditions: [],
      serve: {
        split: {
          bucketBy: "company",
          weights: [
            { variant: "red", weight: 33.333 },
            { variant: "blue", weight: 66.667 },
          ],
        },
      },
    },
  ],
  prerequisites: [{ flag: "billing", variants: ["on"] }],
  ...extra,
});

/** The rules of `input()` with rule 0's condition `i` replaced. */
const withCondition = (i: number, condition: unknown) => {
  const rules = structuredClone(input().rules) as { conditions: unknown[] }[];
  (rules[0] as { conditions: unknown[] }).conditions[i] = condition;
  return input({ rules });
};

const only = (problems: ConfigurationProblem[]): ConfigurationProblem => {
  assert.equal(problems.length, 1, JSON.stringify(problems, null, 2));
  return problems[0] as ConfigurationProblem;
};

describe("validateConfiguration", () => {
  it("accepts a valid configuration, and a seed flag (boolean, nothing else)", () => {
    assert.deepEqual(validateConfiguration(input()), []);
    assert.deepEqual(validateConfiguration({ name: "f" }), []);
    assert.deepEqual(validateConfiguration({ name: "f", type: "boolean", onVariant: "on", offVariant: "off" }), []);
  });

  it("names the rule (index and id) and the condition at fault, with a JSON Pointer", () => {
    const problem = only(
      validateConfiguration(withCondition(4, { attribute: "seats", operator: "gte", values: ["10"] })),
    );
    assert.deepEqual(problem, {
      code: "invalid_value",
      path: "/rules/0/conditions/4/values/0",
      message:
        'rules[0] "eu-beta", conditions[4], values[0]: gte takes finite numbers (JSON numbers, not strings); "10" is not one',
      rule: { index: 0, id: "eu-beta" },
      condition: 4,
    });
  });

  describe("operators against their values", () => {
    const cases: [string, unknown, string, RegExp][] = [
      ["numbers for eq", { attribute: "n", operator: "eq", values: ["1"] }, "invalid_value", /eq takes finite numbers/],
      [
        "no strings for in",
        { attribute: "n", operator: "in", values: [1] },
        "invalid_value",
        /in takes strings; 1 is not one/,
      ],
      ["semvers", { attribute: "v", operator: "semver_lt", values: ["latest"] }, "invalid_value", /semantic versions/],
      [
        "instants",
        { attribute: "t", operator: "before", values: ["2026-01-01"] },
        "invalid_value",
        /ISO 8601 instants/,
      ],
      [
        "no values for present",
        { attribute: "e", operator: "present", values: ["x"] },
        "invalid_value",
        /present takes no values/,
      ],
      ["some values for in", { attribute: "e", operator: "in", values: [] }, "invalid_value", /at least one value/],
      ["no empty prefix", { attribute: "e", operator: "starts_with", values: [""] }, "invalid_value", /non-empty/],
      ["segment ids", { operator: "in_segment", values: [""] }, "invalid_value", /segment ids/],
      [
        "no attribute for segments",
        { attribute: "a", operator: "not_in_segment", values: ["s"] },
        "invalid",
        /takes no attribute/,
      ],
      ["an attribute otherwise", { operator: "in", values: ["x"] }, "invalid", /must be an attribute name/],
      ["no reserved names", { attribute: "$user", operator: "in", values: ["x"] }, "invalid", /not starting with "\$"/],
      ["$now for instants", { attribute: "$now", operator: "gt", values: [1] }, "invalid", /only before and after/],
      [
        "a known operator",
        { attribute: "a", operator: "regex", values: ["x"] },
        "invalid",
        /"regex" is not an operator/,
      ],
      [
        "caseInsensitive on strings",
        { attribute: "n", operator: "gt", values: [1], caseInsensitive: true },
        "invalid",
        /string operators only/,
      ],
      ["booleans", { attribute: "n", operator: "in", values: ["x"], negate: "yes" }, "invalid", /must be a boolean/],
      ["an array of values", { attribute: "n", operator: "in", values: "x" }, "invalid", /must be an array/],
      ["known fields", { attribute: "n", operator: "in", values: ["x"], not: true }, "invalid", /is not a known field/],
      ["an object", "country == FR", "invalid", /must be an object/],
      [
        "invalid patterns",
        { attribute: "e", operator: "matches", values: ["(a"] },
        "invalid_regex",
        /missing closing \)/,
      ],
      [
        "no lookarounds",
        { attribute: "e", operator: "matches", values: ["a(?=b)"] },
        "invalid_regex",
        /not an RE2 regular expression/,
      ],
      [
        "no backreferences",
        { attribute: "e", operator: "matches", values: ["(a)\\1"] },
        "invalid_regex",
        /invalid escape/,
      ],
      [
        "at most 100 values",
        { attribute: "e", operator: "in", values: Array(101).fill("x") },
        "limit",
        /more than 100 values/,
      ],
      [
        "values up to 1,024 characters",
        { attribute: "e", operator: "in", values: ["x".repeat(1025)] },
        "limit",
        /longer than 1024/,
      ],
    ];
    for (const [what, condition, code, message] of cases) {
      it(what, () => {
        const problem = only(validateConfiguration(withCondition(0, condition)));
        assert.equal(problem.code, code);
        assert.match(problem.message, message);
        assert.match(problem.message, /^rules\[0\] "eu-beta", conditions\[0\]/);
        assert.equal(problem.condition, 0);
        assert.match(problem.path, /^\/rules\/0\/conditions\/0/);
      });
    }

    it("checks segment ids exist when the project is given", () => {
      const problem = only(validateConfiguration(input(), { segmentExists: (id) => id !== "beta" }));
      assert.equal(problem.code, "unknown_segment");
      assert.equal(problem.path, "/rules/0/conditions/6/values/0");
      assert.deepEqual(validateConfiguration(input(), { segmentExists: () => true }), []);
    });

    it("at most 20 conditions per rule", () => {
      const rules = [
        {
          id: "r",
          conditions: Array(21).fill({ attribute: "a", operator: "present", values: [] }),
          serve: { variant: "red" },
        },
      ];
      assert.equal(only(validateConfiguration(input({ rules }))).code, "limit");
    });
  });

  describe("rules and what they serve", () => {
    const rules = (...list: unknown[]) => input({ rules: list });
    const ok = { id: "ok", conditions: [], serve: { variant: "red" } };

    it("refuses unknown variant keys, in serve, in splits, as onVariant and offVariant", () => {
      assert.match(
        only(validateConfiguration(rules({ ...ok, serve: { variant: "purple" } }))).message,
        /"purple" is not one of the flag's variants \(red, green, blue\)/,
      );
      const split = { split: { weights: [{ variant: "purple", weight: 100 }] } };
      assert.equal(
        only(validateConfiguration(rules({ ...ok, serve: split }))).path,
        "/rules/0/serve/split/weights/0/variant",
      );
      assert.equal(only(validateConfiguration(input({ onVariant: "purple" }))).path, "/onVariant");
      assert.equal(only(validateConfiguration(input({ offVariant: 7 }))).path, "/offVariant");
      assert.equal(
        only(validateConfiguration(input({ offVariant: undefined }))).message,
        "offVariant: is required for a string flag",
      );
    });

    it("refuses weights that do not sum to 100, with more than three decimals, out of range, or repeated", () => {
      const split = (...w: [string, unknown][]) => ({
        ...ok,
        serve: { split: { weights: w.map(([variant, weight]) => ({ variant, weight })) } },
      });
      const cases: [unknown, string, RegExp][] = [
        [split(["red", 50], ["blue", 49.999]), "/rules/0/serve/split/weights", /sum to 99.999, not 100/],
        [split(["red", 50.0001], ["blue", 50]), "/rules/0/serve/split/weights/0/weight", /at most three decimals/],
        [split(["red", -10], ["blue", 100]), "/rules/0/serve/split/weights/0/weight", /from 0 to 100/],
        [split(["red", 110]), "/rules/0/serve/split/weights/0/weight", /from 0 to 100/],
        [split(["red", "50"], ["blue", 50]), "/rules/0/serve/split/weights/0/weight", /not "50"/],
        [split(["red", 50], ["red", 50]), "/rules/0/serve/split/weights/1/variant", /has two weights/],
        [{ ...ok, serve: { split: { weights: [] } } }, "/rules/0/serve/split/weights", /at least one/],
        [
          { ...ok, serve: { split: { bucketBy: "$now", weights: [{ variant: "red", weight: 100 }] } } },
          "/rules/0/serve/split/bucketBy",
          /not \$now/,
        ],
        [{ ...ok, serve: { variant: "red", split: {} } }, "/rules/0/serve", /must be \{variant\} or \{split/],
        [{ ...ok, serve: {} }, "/rules/0/serve", /must be \{variant\} or \{split/],
      ];
      for (const [rule, path, message] of cases) {
        const problem = only(validateConfiguration(rules(rule)));
        assert.equal(problem.path, path, JSON.stringify(rule));
        assert.match(problem.message, message);
      }
      assert.deepEqual(
        validateConfiguration(rules(split(["red", 0.1], ["green", 0.2], ["blue", 99.7]))),
        [],
        "0.1 + 0.2 sums exactly",
      );
      assert.deepEqual(validateConfiguration(rules(split(["red", 0], ["blue", 100]))), []);
    });

    it("refuses duplicate, missing and malformed rule ids, naming the rule by index", () => {
      const dup = only(validateConfiguration(rules(ok, { ...ok })));
      assert.equal(dup.code, "duplicate");
      assert.deepEqual(dup.rule, { index: 1, id: "ok" });
      const missing = only(validateConfiguration(rules({ conditions: [], serve: { variant: "red" } })));
      assert.deepEqual(
        [missing.path, missing.rule, missing.message.startsWith("rules[0], id:")],
        ["/rules/0/id", { index: 0, id: null }, true],
      );
      assert.equal(only(validateConfiguration(rules({ ...ok, id: "a:b" }))).path, "/rules/0/id");
      assert.equal(only(validateConfiguration(rules({ ...ok, id: "x".repeat(65) }))).path, "/rules/0/id");
    });

    it("refuses more than 100 rules, unknown fields, and what is not a rule", () => {
      const many = Array.from({ length: 101 }, (_, i) => ({ ...ok, id: `r${i}` }));
      assert.equal(only(validateConfiguration(input({ rules: many }))).code, "limit");
      assert.equal(only(validateConfiguration(rules({ ...ok, priority: 1 }))).path, "/rules/0/priority");
      assert.equal(only(validateConfiguration(rules(null))).path, "/rules/0");
      assert.equal(only(validateConfiguration(input({ rules: {} }))).path, "/rules");
      assert.equal(only(validateConfiguration(rules({ ...ok, conditions: null }))).path, "/rules/0/conditions");
      assert.equal(only(validateConfiguration(rules({ ...ok, description: "x".repeat(1025) }))).code, "limit");
    });
  });

  describe("the flag's type and variants", () => {
    it("a boolean flag's variants are on (true) and off (false), and its on/off variants too", () => {
      assert.match(
        only(
          validateConfiguration({
            name: "f",
            variants: [
              { key: "yes", value: true },
              { key: "no", value: false },
            ],
          }),
        ).message,
        /fixed/,
      );
      assert.deepEqual(
        validateConfiguration({
          name: "f",
          variants: [
            { key: "on", value: true },
            { key: "off", value: false },
          ],
        }),
        [],
      );
      assert.equal(only(validateConfiguration({ name: "f", onVariant: "off" })).path, "/onVariant");
    });

    it("2–50 variants with distinct keys and values of the flag's type", () => {
      const v = (type: string, variants: unknown) => validateVariants(type, variants);
      assert.deepEqual(v("string", VARIANTS), []);
      assert.equal(only(v("string", [VARIANTS[0]])).code, "limit");
      assert.equal(
        only(
          v(
            "string",
            Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: "x" })),
          ),
        ).code,
        "limit",
      );
      assert.equal(only(v("string", [VARIANTS[0], { key: "red", value: "x" }])).path, "/variants/1/key");
      assert.equal(only(v("string", [VARIANTS[0], { key: "b", value: 1 }])).path, "/variants/1/value");
      assert.equal(
        only(
          v("number", [
            { key: "a", value: 1 },
            { key: "b", value: Number.NaN },
          ]),
        ).code,
        "invalid_value",
      );
      assert.equal(
        only(
          v("number", [
            { key: "a", value: 1 },
            { key: "b", value: "2" },
          ]),
        ).code,
        "invalid_value",
      );
      assert.deepEqual(
        v("object", [
          { key: "a", value: { x: [1, { y: null }] } },
          { key: "b", value: [] },
        ]),
        [],
      );
      for (const bad of [
        null,
        "x",
        1,
        { d: new Date(0) },
        { f: () => 1 },
        { u: undefined },
        { n: Number.POSITIVE_INFINITY },
      ]) {
        assert.equal(
          only(
            v("object", [
              { key: "a", value: {} },
              { key: "b", value: bad },
            ]),
          ).code,
          "invalid_value",
          String(bad),
        );
      }
      const big = { text: "x".repeat(32 * 1024) };
      assert.match(
        only(
          v("object", [
            { key: "a", value: {} },
            { key: "b", value: big },
          ]),
        ).message,
        /larger than 32 KiB/,
      );
      assert.deepEqual(
        v("object", [
          { key: "a", value: {} },
          { key: "b", value: { t: "x".repeat(32 * 1024 - 8) } },
        ]),
        [],
      );
      assert.equal(only(v("string", [VARIANTS[0], { key: "b", value: "x", extra: 1 }])).path, "/variants/1/extra");
      assert.equal(only(v("string", [VARIANTS[0], { key: "b" }])).path, "/variants/1/value");
      assert.equal(
        only(v("string", [VARIANTS[0], { key: "b", value: "x", description: 5 }])).path,
        "/variants/1/description",
      );
      assert.equal(only(v("string", undefined)).path, "/variants");
    });

    it("a known type", () => {
      assert.deepEqual(only(validateConfiguration({ name: "f", type: "date" })).path, "/type");
    });
  });

  describe("prerequisites", () => {
    const node = (
      name: string,
      prerequisites: string[] = [],
      extra: Partial<PrerequisiteNode> = {},
    ): PrerequisiteNode => ({
      name,
      prerequisites: prerequisites.map((flag) => ({ flag, variants: ["on"] })),
      ...extra,
    });
    const pre = (...flags: string[]) => ({ prerequisites: flags.map((flag) => ({ flag, variants: ["on"] })) });

    it("checks form alone without the project, and flags and variant keys with it", () => {
      assert.equal(
        only(validateConfiguration(input({ prerequisites: [{ flag: "bad name!", variants: ["on"] }] }))).path,
        "/prerequisites/0/flag",
      );
      assert.equal(
        only(validateConfiguration(input({ prerequisites: [{ flag: "billing", variants: [] }] }))).path,
        "/prerequisites/0/variants",
      );
      assert.equal(only(validateConfiguration(input(pre("billing", "billing")))).code, "duplicate");
      const flags = [node("billing"), node("theme", [], { type: "string", variants: VARIANTS })];
      assert.deepEqual(validateConfiguration(input(), { flags }), []);
      assert.equal(only(validateConfiguration(input(pre("gone")), { flags })).code, "unknown_flag");
      const wrong = input({ prerequisites: [{ flag: "theme", variants: ["green", "on"] }] });
      assert.deepEqual(only(validateConfiguration(wrong, { flags })).path, "/prerequisites/0/variants/1");
    });

    it("refuses a flag as its own prerequisite, and cycles through other flags, naming the cycle", () => {
      assert.match(only(validateConfiguration(input(pre("checkout")))).message, /checkout → checkout/);
      const flags = [node("a", ["b"]), node("b", ["checkout"]), node("checkout"), node("other")];
      const problem = only(validateConfiguration(input(pre("other", "a")), { flags }));
      assert.equal(problem.code, "prerequisite_cycle");
      assert.equal(problem.path, "/prerequisites/1");
      assert.match(problem.message, /prerequisites form a cycle: checkout → a → b → checkout/);
    });

    it("refuses a cycle further down the chain too (evaluation would run into it)", () => {
      const flags = [node("a", ["b"]), node("b", ["a"])];
      assert.match(only(validateConfiguration(input(pre("a")), { flags })).message, /a → b → a/);
    });

    it("allows chains of 5 and refuses 6, counting the flags that lead to this one", () => {
      // checkout → f1 → … → f5 is 5 deep (chain(n) lists f1 … fn).
      const chain = (n: number) =>
        Array.from({ length: n }, (_, i) => node(`f${i + 1}`, i + 1 < n ? [`f${i + 2}`] : []));
      assert.deepEqual(validateConfiguration(input(pre("f1")), { flags: chain(5) }), []);
      const tooDeep = only(validateConfiguration(input(pre("f1")), { flags: chain(6) }));
      assert.equal(tooDeep.code, "prerequisite_depth");
      assert.equal(tooDeep.path, "/prerequisites/0");
      assert.match(tooDeep.message, /the chain checkout → f1 → f2 → f3 → f4 → f5 → f6 is 6 prerequisites deep/);
      // top → up → checkout → f1 → f2 → f3 is 5; one more link below checkout is 6.
      const above = [node("top", ["up"]), node("up", ["checkout"])];
      assert.deepEqual(validateConfiguration(input(pre("f1")), { flags: [...above, ...chain(3)] }), []);
      const through = only(validateConfiguration(input(pre("f1")), { flags: [...above, ...chain(4)] }));
      assert.match(
        through.message,
        /the chain top → up → checkout → f1 → f2 → f3 → f4 is 6 prerequisites deep; at most 5/,
      );
    });

    it("takes the project's own listing of the flag as replaced by the configuration validated", () => {
      const flags = [node("checkout", ["a"]), node("a", ["checkout"])];
      assert.deepEqual(validateConfiguration(input({ prerequisites: [] }), { flags }), []);
    });
  });
});

describe("validateSegmentConditions", () => {
  it("checks conditions as in rules, under /conditions, and refuses segment operators", () => {
    assert.deepEqual(validateSegmentConditions([{ attribute: "plan", operator: "in", values: ["pro"] }]), []);
    assert.deepEqual(validateSegmentConditions([]), []);
    const problem = only(validateSegmentConditions([{ attribute: "n", operator: "gt", values: ["1"] }]));
    assert.deepEqual(
      [problem.path, problem.message.startsWith("conditions[0], values[0]: ")],
      ["/conditions/0/values/0", true],
    );
    assert.match(
      only(validateSegmentConditions([{ operator: "in_segment", values: ["s"] }])).message,
      /cannot be used in a segment/,
    );
    assert.equal(only(validateSegmentConditions("x")).path, "/conditions");
    assert.equal(
      only(validateSegmentConditions(Array(21).fill({ attribute: "a", operator: "present", values: [] }))).code,
      "limit",
    );
  });
});

describe("the validator refuses everything the schemas refuse", () => {
  const junk = fc.constantFrom<unknown>(
    undefined,
    null,
    "",
    "x",
    "red",
    "$x",
    1.5,
    -1,
    101,
    Number.POSITIVE_INFINITY,
    [],
    {},
    true,
    ["x"],
    "x".repeat(1100),
    { extra: 1 },
  );

  /** Every path into a JSON value, as arrays of keys. */
  function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
    const out = [prefix];
    if (Array.isArray(value)) for (const [i, v] of value.entries()) out.push(...paths(v, [...prefix, i]));
    else if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
    return out;
  }

  /** `value` with the thing at `path` replaced (undefined deletes it), or a field added beside it. */
  function mutate(value: unknown, path: (string | number)[], replacement: unknown, addField: boolean): unknown {
    const copy = structuredClone(value);
    if (path.length === 0) return replacement;
    let parent = copy as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const last = path[path.length - 1] as string | number;
    if (addField && parent[last] && typeof parent[last] === "object" && !Array.isArray(parent[last])) {
      (parent[last] as Record<string, unknown>).surprise = replacement;
    } else if (replacement === undefined && !Array.isArray(parent)) delete parent[last];
    else parent[last] = replacement;
    return copy;
  }

  const { name, type, variants, ...configuration } = input();

  const mutation = <T>(base: T) =>
    fc
      .tuple(fc.constantFrom(...paths(base)), junk, fc.boolean())
      .map(([path, replacement, addField]) => mutate(base, path, replacement, addField));

  it("a configuration the schema refuses has a problem", () => {
    fc.assert(
      fc.property(mutation(configuration), (mutated) => {
        if (Value.Check(TargetingConfigurationSchema, mutated)) return;
        const problems = validateConfiguration({ name, type, variants, ...(mutated as object) });
        assert.ok(problems.length > 0, JSON.stringify(mutated));
      }),
      { numRuns: 3000 },
    );
  });

  it("variants the schema refuses have a problem", () => {
    fc.assert(
      fc.property(mutation(VARIANTS), (mutated) => {
        if (!Value.Check(VariantsSchema, mutated))
          assert.ok(validateVariants("string", mutated).length > 0, JSON.stringify(mutated));
      }),
      { numRuns: 1000 },
    );
  });

  it("segment conditions the schema refuses have a problem", () => {
    const conditions = (input().rules as { conditions: unknown[] }[])[0]?.conditions.slice(0, 6);
    fc.assert(
      fc.property(mutation(conditions), (mutated) => {
        if (!Value.Check(ConditionsSchema, mutated))
          assert.ok(validateSegmentConditions(mutated).length > 0, JSON.stringify(mutated));
      }),
      { numRuns: 1000 },
    );
  });

  it("and the valid example passes both", () => {
    assert.ok(Value.Check(TargetingConfigurationSchema, configuration));
    assert.ok(Value.Check(VariantsSchema, VARIANTS));
  });
});
