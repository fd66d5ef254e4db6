#!/usr/bin/env node
// Generates packages/core/test/rule-vectors.json: language-neutral test vectors for Flagstaff's targeting
// (typed variants, rules, splits, segments with conditions, prerequisites), beside vectors.json (the
// seed's bucketing and evaluation). Independent of @flagstaff/core: every expected answer below is
// written by hand from the rules in docs/targeting.md, except a split's variant, which is worked out
// here from CRC-32 (Node's zlib) and the weights, as the description says.
//
// Usage: node packages/core/test/generate-rule-vectors.mjs
// Output is deterministic: running it twice produces byte-identical files.
import { writeFileSync } from "node:fs";
import zlib from "node:zlib";

if (typeof zlib.crc32 !== "function")
  throw new Error("zlib.crc32 is missing: this generator needs Node 20.15 or later");

const splitBucket = (flag, rule, value) =>
  (zlib.crc32(Buffer.from(`${flag}:${rule}:${value}`, "utf8")) >>> 0) % 100_000;

/** The weight a bucket falls in: cumulative thousandths of a percent. */
function splitVariant(weights, bucket) {
  let bound = 0;
  for (const { variant, weight } of weights) {
    bound += Math.round(weight * 1000);
    if (bucket < bound) return variant;
  }
  return weights[weights.length - 1].variant;
}

const NOW = "2026-12-24T12:00:00Z";

const base = {
  name: "checkout",
  status: "conditional",
  percentageActors: 0,
  percentageCalls: 0,
  actors: [],
  segments: [],
};
const colors = {
  type: "string",
  variants: [
    { key: "red", value: "#f00" },
    { key: "green", value: "#0f0" },
    { key: "blue", value: "#00f" },
  ],
  onVariant: "green",
  offVariant: "red",
};
const ON = { variant: "on", value: true };
const OFF = { variant: "off", value: false };
const RED = { variant: "red", value: "#f00" };
const GREEN = { variant: "green", value: "#0f0" };
const BLUE = { variant: "blue", value: "#00f" };

/** A boolean flag with one rule "r" of `conditions` serving on. */
const oneRule = (conditions) => ({ ...base, rules: [{ id: "r", conditions, serve: { variant: "on" } }] });
const cond = (attribute, operator, values, extra = {}) => ({ attribute, operator, values, ...extra });

const cases = [];
/** A case: a flag, a context, and the answer; `held` is shorthand for a one-rule flag's answer. */
function add(description, flag, context, expected, more = {}) {
  cases.push({
    description,
    flag,
    flags: more.flags ?? [],
    segments: more.segments ?? {},
    context,
    now: more.now ?? null,
    randomDraw: more.randomDraw ?? null,
    expected,
  });
}
const held = (description, conditions, attributes, holds, more = {}) =>
  add(
    description,
    oneRule(conditions),
    { actorIds: more.actorIds ?? [], attributes },
    holds ? { ...ON, reason: "TARGETING_MATCH", ruleId: "r" } : { ...OFF, reason: "DEFAULT" },
    more,
  );

// ---------------------------------------------------------------------------------------------------------
// Statuses, reasons, the order of evaluation.

add(
  "disabled serves offVariant",
  { ...base, ...colors, status: "disabled", actors: ["carol"] },
  { actorIds: ["carol"], attributes: {} },
  { ...RED, reason: "DISABLED" },
);
add(
  "enabled serves onVariant",
  { ...base, ...colors, status: "enabled" },
  { actorIds: [], attributes: {} },
  { ...GREEN, reason: "STATIC" },
);
add(
  "an attached actor comes before the rules",
  { ...base, ...colors, actors: ["carol"], rules: [{ id: "all", conditions: [], serve: { variant: "blue" } }] },
  { actorIds: ["x", "carol"], attributes: {} },
  { ...GREEN, reason: "TARGETING_MATCH" },
);
add(
  "a listed member of an attached segment",
  { ...base, ...colors, segments: ["beta"] },
  { actorIds: ["bob"], attributes: {} },
  { ...GREEN, reason: "TARGETING_MATCH" },
  { segments: { beta: { members: ["bob"], conditions: [] } } },
);
add(
  "an attached segment by its conditions",
  { ...base, ...colors, segments: ["eu"] },
  { actorIds: [], attributes: { country: "DE" } },
  { ...GREEN, reason: "TARGETING_MATCH" },
  { segments: { eu: { members: [], conditions: [cond("country", "in", ["FR", "DE"])] } } },
);
add(
  "a segment's conditions must all hold",
  { ...base, ...colors, segments: ["eu-pro"] },
  { actorIds: [], attributes: { country: "DE", plan: "free" } },
  { ...RED, reason: "DEFAULT" },
  { segments: { "eu-pro": { members: [], conditions: [cond("country", "in", ["DE"]), cond("plan", "in", ["pro"])] } } },
);
add(
  "a segment with an empty list of conditions holds only its members",
  { ...base, ...colors, segments: ["s"] },
  { actorIds: ["x"], attributes: {} },
  { ...RED, reason: "DEFAULT" },
  { segments: { s: { members: [], conditions: [] } } },
);
add(
  "the first rule that holds decides",
  {
    ...base,
    ...colors,
    rules: [
      { id: "gb", conditions: [cond("country", "in", ["GB"])], serve: { variant: "blue" } },
      { id: "all", conditions: [], serve: { variant: "red" } },
    ],
  },
  { actorIds: [], attributes: { country: "GB" } },
  { ...BLUE, reason: "TARGETING_MATCH", ruleId: "gb" },
);
add(
  "a rule with no conditions always holds",
  {
    ...base,
    ...colors,
    rules: [
      { id: "gb", conditions: [cond("country", "in", ["GB"])], serve: { variant: "blue" } },
      { id: "all", conditions: [], serve: { variant: "red" } },
    ],
  },
  { actorIds: [], attributes: { country: "US" } },
  { ...RED, reason: "TARGETING_MATCH", ruleId: "all" },
);
add(
  "a rule comes before the rollouts",
  {
    ...base,
    percentageActors: 100,
    percentageCalls: 100,
    ...colors,
    rules: [{ id: "all", conditions: [], serve: { variant: "blue" } }],
  },
  { actorIds: ["x"], attributes: {} },
  { ...BLUE, reason: "TARGETING_MATCH", ruleId: "all" },
);
add(
  "the actor rollout serves onVariant (SPLIT)",
  { ...base, ...colors, percentageActors: 100 },
  { actorIds: ["x"], attributes: {} },
  { ...GREEN, reason: "SPLIT" },
);
add(
  "the call rollout serves onVariant (SPLIT)",
  { ...base, ...colors, percentageCalls: 50 },
  { actorIds: [], attributes: {} },
  { ...GREEN, reason: "SPLIT" },
  { randomDraw: 0.25 },
);
add(
  "nothing holds: offVariant (DEFAULT)",
  { ...base, ...colors, percentageCalls: 50 },
  { actorIds: [], attributes: {} },
  { ...RED, reason: "DEFAULT" },
  { randomDraw: 0.75 },
);
add(
  "a number flag serves its numbers",
  {
    ...base,
    status: "enabled",
    type: "number",
    variants: [
      { key: "low", value: 0.5 },
      { key: "high", value: 100 },
    ],
    onVariant: "high",
    offVariant: "low",
  },
  { actorIds: [], attributes: {} },
  { variant: "high", value: 100, reason: "STATIC" },
);
add(
  "an object flag serves its objects",
  {
    ...base,
    status: "enabled",
    type: "object",
    variants: [
      { key: "a", value: { theme: "dark", sizes: [1, 2] } },
      { key: "b", value: [] },
    ],
    onVariant: "a",
    offVariant: "b",
  },
  { actorIds: [], attributes: {} },
  { variant: "a", value: { theme: "dark", sizes: [1, 2] }, reason: "STATIC" },
);

// ---------------------------------------------------------------------------------------------------------
// Operators at their edges.

held("in: one of the values", [cond("plan", "in", ["pro", "team"])], { plan: "team" }, true);
held("in: exact case", [cond("country", "in", ["FR"])], { country: "fr" }, false);
held("in: caseInsensitive", [cond("country", "in", ["FR"], { caseInsensitive: true })], { country: "fr" }, true);
held("in: a number reads as its JSON text", [cond("seats", "in", ["30"])], { seats: 30 }, true);
held("in: a boolean reads as true/false", [cond("beta", "in", ["true"])], { beta: true }, true);
held(
  "in: a list holds when any element does",
  [cond("groups", "in", ["admins"])],
  { groups: ["users", "admins"] },
  true,
);
held("in: missing attribute", [cond("plan", "in", ["pro"])], {}, false);
held("in negated: missing attribute is still false", [cond("plan", "in", ["pro"], { negate: true })], {}, false);
held("in negated", [cond("plan", "in", ["pro"], { negate: true })], { plan: "free" }, true);
held("in: null is missing", [cond("plan", "in", ["pro"], { negate: true })], { plan: null }, false);
held("not_in: none of the values", [cond("plan", "not_in", ["pro"])], { plan: "free" }, true);
held("not_in: missing attribute is false", [cond("plan", "not_in", ["pro"])], {}, false);
held("not_in: a list with none of the values", [cond("groups", "not_in", ["banned"])], { groups: ["users"] }, true);
held("not_in: an empty list", [cond("groups", "not_in", ["banned"])], { groups: [] }, true);
held(
  "not_in: a list with one of the values",
  [cond("groups", "not_in", ["banned"])],
  { groups: ["users", "banned"] },
  false,
);
held("starts_with", [cond("email", "starts_with", ["qa-", "test-"])], { email: "test-1@x.io" }, true);
held("ends_with", [cond("email", "ends_with", ["@example.com"])], { email: "a@example.com.evil" }, false);
held(
  "ends_with caseInsensitive",
  [cond("email", "ends_with", ["@EXAMPLE.COM"], { caseInsensitive: true })],
  { email: "a@Example.com" },
  true,
);
held("contains on a list element", [cond("tags", "contains", ["beta"])], { tags: ["x", "public-beta"] }, true);
held("matches finds anywhere", [cond("path", "matches", ["admin"])], { path: "/x/admin/y" }, true);
held(
  "matches with anchors",
  [cond("email", "matches", ["@example\\.(com|org)$"])],
  { email: "a@example.org.x" },
  false,
);
held(
  "matches caseInsensitive",
  [cond("agent", "matches", ["bot"], { caseInsensitive: true })],
  { agent: "GoogleBOT" },
  true,
);
held(
  "matches: (a+)+$ against a's and '!' (linear time, no match)",
  [cond("text", "matches", ["(a+)+$"])],
  { text: `${"a".repeat(100)}!` },
  false,
);
held("eq", [cond("age", "eq", [18])], { age: 18 }, true);
held("eq: a numeric string", [cond("age", "eq", [18])], { age: "18.0" }, true);
held("gt at its bound", [cond("age", "gt", [18])], { age: 18 }, false);
held("gte at its bound", [cond("age", "gte", [18])], { age: 18 }, true);
held("lt", [cond("age", "lt", [18])], { age: 17.5 }, true);
held("lte: several values, the greatest bounds it", [cond("age", "lte", [10, 20])], { age: 20 }, true);
held("gt: not a number", [cond("age", "gt", [18])], { age: "abc" }, false);
held("gt negated: not a number is still false", [cond("age", "gt", [18], { negate: true })], { age: "abc" }, false);
held("gt: a string with spaces is not a number", [cond("age", "gt", [1])], { age: " 18" }, false);
held("gt: a boolean is not a number", [cond("age", "gt", [0])], { age: true }, false);
held("lt negated", [cond("age", "lt", [18], { negate: true })], { age: 30 }, true);
held("semver_gte", [cond("v", "semver_gte", ["2.1.0"])], { v: "2.10.0" }, true);
held("semver_gte: a prerelease is below its release", [cond("v", "semver_gte", ["2.0.0"])], { v: "2.0.0-rc.1" }, false);
held(
  "semver_lt: prerelease identifiers compare numerically",
  [cond("v", "semver_lt", ["1.0.0-beta.11"])],
  { v: "1.0.0-beta.2" },
  true,
);
held("semver_eq: 1.2 is 1.2.0, a leading v is accepted", [cond("v", "semver_eq", ["1.2"])], { v: "v1.2.0" }, true);
held("semver_eq: build metadata is ignored", [cond("v", "semver_eq", ["1.2.3"])], { v: "1.2.3+build.9" }, true);
held(
  "semver_gt: leading zeros in the core read as numbers",
  [cond("v", "semver_gt", ["2024.1.9"])],
  { v: "2024.01.10" },
  true,
);
held("semver_lte: not a version", [cond("v", "semver_lte", ["9.0.0"])], { v: "latest" }, false);
held(
  "semver_lte negated: not a version is still false",
  [cond("v", "semver_lte", ["9.0.0"], { negate: true })],
  { v: "latest" },
  false,
);
held("semver_eq: a number attribute reads as text", [cond("v", "semver_eq", ["3.0.0"])], { v: 3 }, true);
held("before", [cond("signup", "before", ["2026-12-01T09:00:00Z"])], { signup: "2026-12-01T09:59:59+01:00" }, true);
held(
  "before is strict",
  [cond("signup", "before", ["2026-12-01T09:00:00Z"])],
  { signup: "2026-12-01T09:00:00Z" },
  false,
);
held(
  "after: milliseconds since the epoch",
  [cond("signup", "after", ["2026-12-01T09:00:00Z"])],
  { signup: 1796115600001 },
  true,
);
held(
  "after: a date without a time is not an instant",
  [cond("signup", "after", ["2020-01-01T00:00:00Z"])],
  { signup: "2026-12-01" },
  false,
);
held(
  "$now inside a window",
  [cond("$now", "after", ["2026-12-24T00:00:00Z"]), cond("$now", "before", ["2026-12-26T00:00:00Z"])],
  {},
  true,
  { now: NOW },
);
held("$now outside a window", [cond("$now", "after", ["2026-12-25T00:00:00Z"])], {}, false, { now: NOW });
held(
  "$now is the clock, not a context attribute",
  [cond("$now", "before", ["2000-01-01T00:00:00Z"])],
  { $now: "1999-01-01T00:00:00Z" },
  false,
  { now: NOW },
);
held("present: set to an empty string", [cond("email", "present", [])], { email: "" }, true);
held("present: missing", [cond("email", "present", [])], {}, false);
held("present negated: missing", [cond("email", "present", [], { negate: true })], {}, true);
held("present negated: null is missing", [cond("email", "present", [], { negate: true })], { email: null }, true);
held("present: what every object inherits is not set", [cond("constructor", "present", [])], {}, false);
held("in_segment: a listed member", [{ operator: "in_segment", values: ["beta", "staff"] }], {}, true, {
  actorIds: ["bob"],
  segments: { staff: { members: ["bob"], conditions: [] } },
});
held("in_segment: by the segment's conditions", [{ operator: "in_segment", values: ["eu"] }], { country: "FR" }, true, {
  segments: { eu: { members: [], conditions: [cond("country", "in", ["FR"])] } },
});
held("not_in_segment: no actors and no conditions", [{ operator: "not_in_segment", values: ["beta"] }], {}, true, {
  segments: { beta: { members: ["bob"], conditions: [] } },
});
held("not_in_segment: a member", [{ operator: "not_in_segment", values: ["beta"] }], {}, false, {
  actorIds: ["bob"],
  segments: { beta: { members: ["bob"], conditions: [] } },
});
held(
  "all conditions of a rule must hold",
  [cond("country", "in", ["FR"]), cond("age", "gte", [18])],
  { country: "FR", age: 17 },
  false,
);

// ---------------------------------------------------------------------------------------------------------
// Splits: the variant follows from the bucket, worked out here.

const weights = [
  { variant: "red", weight: 33.333 },
  { variant: "green", weight: 33.333 },
  { variant: "blue", weight: 33.334 },
];
const splitFlag = (split) => ({ ...base, ...colors, rules: [{ id: "ab-test", conditions: [], serve: { split } }] });
for (const actor of ["alice", "bob", "carol", "dave", "erin", "frank", "😀", "José"]) {
  const bucket = splitBucket("checkout", "ab-test", actor);
  const variant = splitVariant(weights, bucket);
  add(
    `a split on the first actor id: ${actor} is in bucket ${bucket}`,
    splitFlag({ weights }),
    { actorIds: [actor, "other"], attributes: {} },
    {
      variant,
      value: colors.variants.find((v) => v.key === variant).value,
      reason: "SPLIT",
      ruleId: "ab-test",
    },
  );
}
for (const company of ["acme", "globex", 42]) {
  const bucket = splitBucket("checkout", "ab-test", String(company));
  const variant = splitVariant(weights, bucket);
  add(
    `a split on bucketBy: ${company} is in bucket ${bucket}`,
    splitFlag({ bucketBy: "company", weights }),
    { actorIds: ["x"], attributes: { company } },
    {
      variant,
      value: colors.variants.find((v) => v.key === variant).value,
      reason: "SPLIT",
      ruleId: "ab-test",
    },
  );
}
add(
  "a split with nothing to bucket on does not decide",
  { ...splitFlag({ bucketBy: "company", weights }), percentageActors: 100 },
  { actorIds: ["x"], attributes: { company: 1.5 } },
  { ...GREEN, reason: "SPLIT" },
);
add(
  "a split without actor ids does not decide",
  {
    ...base,
    ...colors,
    rules: [
      { id: "ab-test", conditions: [], serve: { split: { weights } } },
      { id: "rest", conditions: [], serve: { variant: "blue" } },
    ],
  },
  { actorIds: [], attributes: {} },
  { ...BLUE, reason: "TARGETING_MATCH", ruleId: "rest" },
);

// ---------------------------------------------------------------------------------------------------------
// Prerequisites.

const enabled = (name, more = {}) => ({ ...base, name, status: "enabled", ...more });
add(
  "prerequisites that serve a listed variant",
  { ...enabled("checkout"), prerequisites: [{ flag: "billing", variants: ["on"] }] },
  { actorIds: [], attributes: {} },
  { ...ON, reason: "STATIC" },
  { flags: [enabled("billing")] },
);
add(
  "a prerequisite that does not",
  { ...base, ...colors, status: "enabled", prerequisites: [{ flag: "billing", variants: ["on"] }] },
  { actorIds: [], attributes: {} },
  { ...RED, reason: "PREREQUISITE_FAILED", prerequisite: "billing" },
  { flags: [{ ...base, name: "billing", status: "disabled" }] },
);
add(
  "a missing prerequisite flag fails",
  { ...enabled("checkout"), prerequisites: [{ flag: "gone", variants: ["on"] }] },
  { actorIds: [], attributes: {} },
  { ...OFF, reason: "PREREQUISITE_FAILED", prerequisite: "gone" },
);
add(
  "prerequisites are evaluated for the same context, down a chain",
  { ...enabled("a"), prerequisites: [{ flag: "b", variants: ["blue"] }] },
  { actorIds: ["alice"], attributes: { country: "FR" } },
  { ...ON, reason: "STATIC" },
  {
    flags: [
      {
        ...base,
        ...colors,
        name: "b",
        rules: [{ id: "fr", conditions: [cond("country", "in", ["FR"])], serve: { variant: "blue" } }],
        prerequisites: [{ flag: "c", variants: ["on"] }],
      },
      { ...base, name: "c", actors: ["alice"] },
    ],
  },
);
add(
  "a disabled flag does not evaluate its prerequisites",
  { ...base, status: "disabled", prerequisites: [{ flag: "gone", variants: ["on"] }] },
  { actorIds: [], attributes: {} },
  { ...OFF, reason: "DISABLED" },
);
add(
  "prerequisites come before attached actors",
  { ...base, actors: ["carol"], prerequisites: [{ flag: "billing", variants: ["on"] }] },
  { actorIds: ["carol"], attributes: {} },
  { ...OFF, reason: "PREREQUISITE_FAILED", prerequisite: "billing" },
  { flags: [{ ...base, name: "billing" }] },
);
{
  // The environment's flags include the one evaluated, as they always do.
  const x = { ...enabled("x"), prerequisites: [{ flag: "y", variants: ["on"] }] };
  const y = { ...enabled("y"), prerequisites: [{ flag: "x", variants: ["on"] }] };
  add(
    "a prerequisite cycle answers an error",
    x,
    { actorIds: [], attributes: {} },
    { variant: null, value: null, reason: "ERROR", errorCode: "PARSE_ERROR" },
    { flags: [x, y] },
  );
}

// ---------------------------------------------------------------------------------------------------------
// Errors: a configuration the validator refuses.

const error = { variant: null, value: null, reason: "ERROR", errorCode: "PARSE_ERROR" };
add(
  "an unknown variant",
  { ...base, ...colors, rules: [{ id: "r", conditions: [], serve: { variant: "purple" } }] },
  { actorIds: [], attributes: {} },
  error,
);
add("an invalid pattern", oneRule([cond("e", "matches", ["(a"])]), { actorIds: [], attributes: {} }, error);
add("a string where gt takes a number", oneRule([cond("n", "gt", ["1"])]), { actorIds: [], attributes: {} }, error);
add(
  "weights that do not sum to 100",
  {
    ...base,
    ...colors,
    status: "enabled",
    rules: [{ id: "r", conditions: [], serve: { split: { weights: [{ variant: "red", weight: 50 }] } } }],
  },
  { actorIds: [], attributes: {} },
  error,
);

// ---------------------------------------------------------------------------------------------------------
// The validator: configurations refused, with the problem's code and path.

const refused = [
  [
    "a duplicate rule id",
    {
      ...base,
      rules: [
        { id: "a", conditions: [], serve: { variant: "on" } },
        { id: "a", conditions: [], serve: { variant: "off" } },
      ],
    },
    "duplicate",
    "/rules/1/id",
  ],
  [
    "a number where in takes strings",
    oneRule([cond("n", "in", [1])]),
    "invalid_value",
    "/rules/0/conditions/0/values/0",
  ],
  [
    "an invalid semantic version",
    oneRule([cond("v", "semver_gt", ["1.2.3.4"])]),
    "invalid_value",
    "/rules/0/conditions/0/values/0",
  ],
  [
    "a date without a time",
    oneRule([cond("t", "before", ["2026-01-01"])]),
    "invalid_value",
    "/rules/0/conditions/0/values/0",
  ],
  ["values for present", oneRule([cond("e", "present", ["x"])]), "invalid_value", "/rules/0/conditions/0/values"],
  [
    "a lookahead (not RE2)",
    oneRule([cond("e", "matches", ["a(?=b)"])]),
    "invalid_regex",
    "/rules/0/conditions/0/values/0",
  ],
  [
    "caseInsensitive on a number operator",
    oneRule([cond("n", "gt", [1], { caseInsensitive: true })]),
    "invalid",
    "/rules/0/conditions/0/caseInsensitive",
  ],
  [
    "$now with an operator other than before/after",
    oneRule([cond("$now", "gt", [1])]),
    "invalid",
    "/rules/0/conditions/0/attribute",
  ],
  [
    "an attribute on in_segment",
    oneRule([{ attribute: "a", operator: "in_segment", values: ["s"] }]),
    "invalid",
    "/rules/0/conditions/0/attribute",
  ],
  [
    "weights with four decimals",
    {
      ...base,
      ...colors,
      rules: [
        {
          id: "r",
          conditions: [],
          serve: {
            split: {
              weights: [
                { variant: "red", weight: 50.0001 },
                { variant: "blue", weight: 50 },
              ],
            },
          },
        },
      ],
    },
    "weights",
    "/rules/0/serve/split/weights/0/weight",
  ],
  [
    "weights summing to 99.999",
    {
      ...base,
      ...colors,
      rules: [
        {
          id: "r",
          conditions: [],
          serve: {
            split: {
              weights: [
                { variant: "red", weight: 50 },
                { variant: "blue", weight: 49.999 },
              ],
            },
          },
        },
      ],
    },
    "weights",
    "/rules/0/serve/split/weights",
  ],
  ["an unknown onVariant", { ...base, ...colors, onVariant: "purple" }, "unknown_variant", "/onVariant"],
  ["a boolean flag's onVariant other than on", { ...base, onVariant: "off" }, "invalid", "/onVariant"],
  [
    "a flag as its own prerequisite",
    { ...base, prerequisites: [{ flag: "checkout", variants: ["on"] }] },
    "prerequisite_cycle",
    "/prerequisites/0/flag",
  ],
];

const output = {
  description:
    "Flagstaff targeting test vectors (issue 25), generated by packages/core/test/generate-rule-vectors.mjs with answers written by hand from docs/targeting.md; ports in any language should pass all of them. " +
    "Each case gives a flag (the seed's fields, where actors and segments are lists, plus type, variants, onVariant, offVariant, rules and prerequisites; a boolean flag's variants are on=true and off=false), " +
    "the environment's other flags (for prerequisites), segments (listed members and conditions), the context (actorIds and attributes), now (the clock for $now, an ISO instant, or null when no condition reads it), " +
    "randomDraw (what the random source returns when the call rollout draws; null means the evaluation must not draw), and the expected answer: variant, value, reason, and ruleId / prerequisite / errorCode when present (an ERROR's message is free text). " +
    "ORDER: disabled -> offVariant, DISABLED. Otherwise each prerequisite flag, evaluated for the same context, must serve one of its listed variants, else offVariant, PREREQUISITE_FAILED (a missing flag fails; an error is the flag's error; deeper than 5 is PARSE_ERROR). " +
    "Then enabled -> onVariant, STATIC. conditional -> an actor id attached, or a context in an attached segment (an actor listed, or the segment's non-empty conditions all hold) -> onVariant, TARGETING_MATCH; else the first rule whose conditions all hold (none: always) serves its variant (TARGETING_MATCH with ruleId) or its split (SPLIT with ruleId); a split with nothing to bucket on does not decide; " +
    "else any actor id's bucket crc32(flag + ':' + actorId) % 100000 < percentageActors * 1000 -> onVariant, SPLIT; else one draw < percentageCalls / 100 -> onVariant, SPLIT; else offVariant, DEFAULT. " +
    "CONDITIONS: a missing attribute (absent or null) fails the condition whether or not negated, except present, which negate inverts; a single value that cannot be read as the operator's kind fails it likewise; a list holds when any element does, and negate then applies to the whole; not_in is in negated, not_in_segment is in_segment negated. " +
    "Text: strings as they are, finite numbers as JSON writes them, booleans as true/false; caseInsensitive compares lower-cased. matches: RE2 syntax, found anywhere. Numbers: finite numbers, or strings in JSON number syntax. " +
    "Semver: SemVer 2.0 precedence, build ignored; a leading v/V, MAJOR or MAJOR.MINOR read with zeros for the rest, leading zeros in the core read as numbers. Instants: RFC 3339 date-times (seconds optional) or milliseconds since the epoch; $now is the clock. Several values: any of them. " +
    "SPLIT: bucket = crc32(UTF-8 of flagName + ':' + ruleId + ':' + value) % 100000 where value is the bucketBy attribute (a string, or a safe integer in decimal) or by default the first actor id; weight i takes buckets from the cumulative sum of the weights before it, times 1000, up to its own cumulative sum times 1000. " +
    "INVALID: configurations a validator must refuse, with the code and JSON Pointer of the problem expected among those it reports.",
  now: NOW,
  cases,
  splitBuckets: ["alice", "bob", "😀", "", "42"].map((value) => ({
    flagName: "checkout",
    ruleId: "ab-test",
    value,
    bucket: splitBucket("checkout", "ab-test", value),
  })),
  invalid: refused.map(([description, flag, code, path]) => ({ description, flag, expected: { code, path } })),
};

const target = new URL("./rule-vectors.json", import.meta.url);
writeFileSync(target, `${JSON.stringify(output, null, 2)}\n`);
console.log(
  `wrote ${cases.length} cases, ${output.splitBuckets.length} split buckets, ${output.invalid.length} invalid configurations to ${target.pathname}`,
);
