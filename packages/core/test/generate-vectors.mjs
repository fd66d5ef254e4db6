#!/usr/bin/env node
// Generates packages/core/test/vectors.json: language-neutral test vectors for Flagstaff's bucketing and
// evaluation rules. Deliberately independent of @flagstaff/core: CRC-32 comes from Node's own zlib binding
// (zlib.crc32, Node >= 20.15) and evaluation is re-implemented below from the written rules, so the vectors
// check the core package rather than echo it.
//
// Usage: node packages/core/test/generate-vectors.mjs
// Output is deterministic: running it twice produces byte-identical files.

import { writeFileSync } from "node:fs";
import zlib from "node:zlib";

if (typeof zlib.crc32 !== "function") {
  throw new Error("zlib.crc32 is missing: this generator needs Node 20.15 or later");
}

const BUCKET_COUNT = 100_000;
const ALLOWED_PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100];

/** CRC-32 (zlib) of the UTF-8 bytes of `text`; Buffer.from encodes a lone surrogate as U+FFFD. */
function crc32Utf8(text) {
  return zlib.crc32(Buffer.from(text, "utf8")) >>> 0;
}

function bucketOf(flagName, actorId) {
  return crc32Utf8(`${flagName}:${actorId}`) % BUCKET_COUNT;
}

// ---------------------------------------------------------------------------------------------------------
// Actor ids whose buckets sit exactly on rollout boundaries, found by a deterministic search.

const ROLLOUT_FLAG = "checkout.new-flow";
const BOUNDARY_BUCKETS = [0, 999, 1000, 24_999, 25_000, 49_999, 50_000, 74_999, 75_000, 99_999];

function findBoundaryActors(flagName, wanted) {
  const found = new Map();
  for (let i = 0; found.size < wanted.length; i++) {
    if (i > 50_000_000) throw new Error(`boundary search gave up; still missing some of ${wanted}`);
    const id = `user-${i}`;
    const b = bucketOf(flagName, id);
    if (wanted.includes(b) && !found.has(b)) found.set(b, id);
  }
  return found;
}

const boundary = findBoundaryActors(ROLLOUT_FLAG, BOUNDARY_BUCKETS);
/** The actor id whose bucket for ROLLOUT_FLAG is exactly `b`. */
const at = (b) => {
  const id = boundary.get(b);
  if (id === undefined) throw new Error(`no actor found for bucket ${b}`);
  return id;
};

// ---------------------------------------------------------------------------------------------------------
// Bucketing vectors.

const bucketingInputs = [
  // Plain ASCII.
  ["checkout", "user-1"],
  ["checkout", "user-2"],
  ["checkout", "user-42"],
  ["checkout", "alice"],
  ["checkout", "bob"],
  ["new-dashboard", "user-1"],
  ["new-dashboard", "alice"],
  ["search-v2", "12345"],
  ["search-v2", "00000000-0000-0000-0000-000000000000"],
  ["search-v2", "550e8400-e29b-41d4-a716-446655440000"],
  ["dark_mode", "customer_987654321"],
  ["a", "b"],
  ["Checkout", "user-1"], // case matters
  ["checkout", "User-1"],
  ["checkout", " user-1"], // whitespace is not trimmed
  ["checkout", "user-1 "],
  // Empty and single-character edge cases.
  ["", ""],
  ["", "a"],
  ["a", ""],
  ["x", "0"],
  ["0", "0"],
  ["f", " "],
  ["f", "\t"],
  ["f", "\u0000"], // NUL is an ordinary byte
  // Separator-like characters in flag names and actor ids.
  ["billing.invoices.v2", "user-1"],
  ["billing_invoices_v2", "user-1"],
  ["billing-invoices-v2", "user-1"],
  ["billing:invoices", "user-1"],
  // The key is flagName + ":" + actorId with no escaping, so these two collide by design.
  ["a:b", "c"],
  ["a", "b:c"],
  ["flag", ":"],
  ["flag", "::"],
  ["flag", "org:acme:user:7"],
  ["flag", "a.b_c-d:e"],
  // Unicode actor ids (2-, 3- and 4-byte UTF-8 sequences).
  ["checkout", "é"],
  ["checkout", "José"],
  ["checkout", "Jose\u0301"], // decomposed é: no normalisation, so a different bucket from "José"
  ["checkout", "Ωmega"],
  ["checkout", "日本語"],
  ["checkout", "用户-123"],
  ["checkout", "한국어"],
  ["checkout", "😀"],
  ["checkout", "👨‍👩‍👧"], // ZWJ sequence
  ["checkout", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"], // astral plane letters
  ["checkout", "\u{10FFFF}"],
  ["flägg", "user-1"], // non-ASCII flag name
  ["功能", "用户"],
  // Lone surrogates: UTF-8 encoders (Buffer, TextEncoder) replace them with U+FFFD (EF BF BD).
  ["checkout", "\ud800"],
  ["checkout", "x\udfffy"],
  ["checkout", "\ufffd"], // same bytes as the lone-surrogate id above
  // Long ids.
  ["checkout", "a".repeat(256)],
  ["checkout", "0123456789abcdef".repeat(16)],
  ["checkout", "é".repeat(256)],
  ["checkout", "日".repeat(256)],
  ["checkout", "😀".repeat(128)], // 256 UTF-16 code units, 512 bytes
  ["checkout", "z".repeat(2000)],
  ["checkout", "日".repeat(2000)],
  ["very.long.flag.name.".repeat(12), "user-1"],
  // The boundary actors used by the evaluation vectors below.
  ...BOUNDARY_BUCKETS.map((b) => [ROLLOUT_FLAG, at(b)]),
];

const bucketing = bucketingInputs.map(([flagName, actorId]) => {
  const crc32 = crc32Utf8(`${flagName}:${actorId}`);
  return { flagName, actorId, crc32, bucket: crc32 % BUCKET_COUNT };
});

// Sanity checks on the generator itself.
const check = (cond, msg) => {
  if (!cond) throw new Error(`generator self-check failed: ${msg}`);
};
check(crc32Utf8("123456789") === 0xcbf43926, "CRC-32 check value");
check(crc32Utf8("") === 0, "CRC-32 of nothing");
check(crc32Utf8("\ud800") === crc32Utf8("\ufffd"), "lone surrogate encodes as U+FFFD");
check(bucketOf("a:b", "c") === bucketOf("a", "b:c"), "key concatenation");
check(bucketOf("checkout", "José") !== bucketOf("checkout", "Jose\u0301"), "no normalisation");

// ---------------------------------------------------------------------------------------------------------
// Evaluation vectors, with expected answers written by hand and re-checked against a reference evaluator.

/** Reference implementation of the rules, written from the specification, not from the core package. */
function referenceEvaluate(v) {
  const { flag, segmentMembers, actorIds, randomDraw } = v;
  if (flag.status === "disabled") return { enabled: false, reason: "DISABLED" };
  if (flag.status === "enabled") return { enabled: true, reason: "STATIC" };
  const member = (seg, actor) => (segmentMembers[seg] ?? []).includes(actor);
  const targeted = (actor) => flag.actors.includes(actor) || flag.segments.some((seg) => member(seg, actor));
  if (actorIds.some(targeted)) return { enabled: true, reason: "TARGETING_MATCH" };
  if (actorIds.some((a) => bucketOf(flag.name, a) < flag.percentageActors * 1000)) {
    return { enabled: true, reason: "SPLIT" };
  }
  // Rule 4. randomDraw is null only when the outcome cannot depend on the draw.
  if (randomDraw === null) {
    check(flag.percentageCalls === 0 || flag.percentageCalls === 100, `${v.description}: needs a draw`);
    return flag.percentageCalls === 100 ? { enabled: true, reason: "SPLIT" } : { enabled: false, reason: "DEFAULT" };
  }
  return randomDraw < flag.percentageCalls / 100
    ? { enabled: true, reason: "SPLIT" }
    : { enabled: false, reason: "DEFAULT" };
}

function flag(overrides) {
  return {
    name: ROLLOUT_FLAG,
    status: "conditional",
    percentageActors: 0,
    percentageCalls: 0,
    actors: [],
    segments: [],
    ...overrides,
  };
}

const ON = (reason) => ({ enabled: true, reason });
const OFF = (reason) => ({ enabled: false, reason });
const BELOW_ONE = 1 - 2 ** -53; // the largest double below 1

const b0 = at(0);
const b999 = at(999);
const b1000 = at(1000);
const b24999 = at(24_999);
const b25000 = at(25_000);
const b49999 = at(49_999);
const b50000 = at(50_000);
const b74999 = at(74_999);
const b75000 = at(75_000);
const b99999 = at(99_999);

const OTHER_FLAG = "checkout.legacy-flow";
check(bucketOf(OTHER_FLAG, b24999) >= 25_000, "b24999 should be outside a 25% rollout of OTHER_FLAG");

const evaluation = [
  // --- status ---
  {
    description: "disabled: off with no actors",
    flag: flag({ status: "disabled" }),
    actorIds: [],
    expected: OFF("DISABLED"),
  },
  {
    description: "disabled: off even when every rule would hold (attached actor, segment member, 100% rollouts)",
    flag: flag({
      status: "disabled",
      percentageActors: 100,
      percentageCalls: 100,
      actors: ["alice"],
      segments: ["beta"],
    }),
    segmentMembers: { beta: ["alice", "bob"] },
    actorIds: ["alice", "bob"],
    expected: OFF("DISABLED"),
  },
  {
    description: "enabled: on with no actors",
    flag: flag({ status: "enabled" }),
    actorIds: [],
    expected: ON("STATIC"),
  },
  {
    description: "enabled: on for an actor matched by no rule, 0% rollouts",
    flag: flag({ status: "enabled", actors: ["alice"] }),
    actorIds: [b99999],
    expected: ON("STATIC"),
  },
  {
    description: "conditional: off with no actors, no targeting and 0% rollouts",
    flag: flag({}),
    actorIds: [],
    expected: OFF("DEFAULT"),
  },
  // --- rule 1: actors attached to the flag ---
  {
    description: "rule 1: attached actor",
    flag: flag({ actors: ["alice", "bob"] }),
    actorIds: ["bob"],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "rule 1: any of several actor ids; the attached one is in the middle",
    flag: flag({ actors: ["bob"] }),
    actorIds: [b99999, "bob", b75000],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "rule 1: none of the actor ids is attached",
    flag: flag({ actors: ["alice", "bob"] }),
    actorIds: ["carol", b99999],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 1: actor ids are compared exactly (case-sensitive)",
    flag: flag({ actors: ["Alice"] }),
    actorIds: ["alice"],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 1: unicode actor id attached",
    flag: flag({ actors: ["用户-123", "José"] }),
    actorIds: ["José"],
    expected: ON("TARGETING_MATCH"),
  },
  // --- rule 2: actors in segments attached to the flag ---
  {
    description: "rule 2: actor is a member of an attached segment",
    flag: flag({ segments: ["beta"] }),
    segmentMembers: { beta: ["carol", "dave"] },
    actorIds: ["dave"],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "rule 2: segment attached, but the actor is not a member",
    flag: flag({ segments: ["beta"] }),
    segmentMembers: { beta: ["carol", "dave"] },
    actorIds: ["erin"],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 2: actor is a member of a segment that is NOT attached",
    flag: flag({ segments: ["beta"] }),
    segmentMembers: { beta: ["carol"], staff: ["erin"] },
    actorIds: ["erin"],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 2: two attached segments, actor is a member of the second",
    flag: flag({ segments: ["beta", "staff"] }),
    segmentMembers: { beta: ["carol"], staff: ["erin"] },
    actorIds: ["erin"],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "rule 2: any of several actor ids; only the last is in an attached segment",
    flag: flag({ segments: ["staff"] }),
    segmentMembers: { staff: ["erin"], beta: ["carol"] },
    actorIds: ["carol", b99999, "erin"],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "rule 2: attached segment with no members",
    flag: flag({ segments: ["empty"] }),
    segmentMembers: { empty: [] },
    actorIds: ["carol"],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 2: the actor id equals a segment id but is not a member",
    flag: flag({ segments: ["beta"] }),
    segmentMembers: { beta: ["carol"] },
    actorIds: ["beta"],
    expected: OFF("DEFAULT"),
  },
  // --- rule 3: actor rollout (bucket < percentageActors * 1000) ---
  {
    description: "rule 3: 25% rollout, bucket 24999 is inside",
    flag: flag({ percentageActors: 25 }),
    actorIds: [b24999],
    expected: ON("SPLIT"),
  },
  {
    description: "rule 3: 25% rollout, bucket 25000 is outside (strict <)",
    flag: flag({ percentageActors: 25 }),
    actorIds: [b25000],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 3: 1% rollout, bucket 999 is inside",
    flag: flag({ percentageActors: 1 }),
    actorIds: [b999],
    expected: ON("SPLIT"),
  },
  {
    description: "rule 3: 1% rollout, bucket 1000 is outside",
    flag: flag({ percentageActors: 1 }),
    actorIds: [b1000],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 3: 1% rollout, bucket 0 is inside",
    flag: flag({ percentageActors: 1 }),
    actorIds: [b0],
    expected: ON("SPLIT"),
  },
  {
    description: "rule 3: 50% rollout, bucket 49999 is inside",
    flag: flag({ percentageActors: 50 }),
    actorIds: [b49999],
    expected: ON("SPLIT"),
  },
  {
    description: "rule 3: 50% rollout, bucket 50000 is outside",
    flag: flag({ percentageActors: 50 }),
    actorIds: [b50000],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 3: 75% rollout, bucket 74999 is inside",
    flag: flag({ percentageActors: 75 }),
    actorIds: [b74999],
    expected: ON("SPLIT"),
  },
  {
    description: "rule 3: 75% rollout, bucket 75000 is outside",
    flag: flag({ percentageActors: 75 }),
    actorIds: [b75000],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 3: 0% rollout, even bucket 0 is outside",
    flag: flag({ percentageActors: 0 }),
    actorIds: [b0],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 3: 100% rollout, bucket 99999 is inside",
    flag: flag({ percentageActors: 100 }),
    actorIds: [b99999],
    expected: ON("SPLIT"),
  },
  {
    description: "rule 3: any of several actor ids; only the last falls in the 25% rollout",
    flag: flag({ percentageActors: 25 }),
    actorIds: [b25000, b99999, b24999],
    expected: ON("SPLIT"),
  },
  {
    description: "rule 3: several actor ids, none in the 25% rollout",
    flag: flag({ percentageActors: 25 }),
    actorIds: [b25000, b99999, b50000],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 3: the bucket depends on the flag name (this actor is in bucket 24999 of another flag only)",
    flag: flag({ name: OTHER_FLAG, percentageActors: 25 }),
    actorIds: [b24999],
    expected: OFF("DEFAULT"),
  },
  // --- rule order: targeting before rollouts ---
  {
    description: "order: attached actor that is also in the actor rollout reports TARGETING_MATCH",
    flag: flag({ percentageActors: 50, actors: [b0] }),
    actorIds: [b0],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "order: targeting is checked over all actor ids before any rollout (rollout actor listed first)",
    flag: flag({ percentageActors: 50, actors: ["alice"] }),
    actorIds: [b0, "alice"],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "order: segment member listed after an actor in the rollout reports TARGETING_MATCH",
    flag: flag({ percentageActors: 50, segments: ["beta"] }),
    segmentMembers: { beta: ["carol"] },
    actorIds: [b0, "carol"],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "order: attached actor with a 50% call rollout needs no draw",
    flag: flag({ percentageCalls: 50, actors: ["alice"] }),
    actorIds: ["alice"],
    expected: ON("TARGETING_MATCH"),
  },
  {
    description: "order: actor in the actor rollout with a 50% call rollout needs no draw",
    flag: flag({ percentageActors: 25, percentageCalls: 50 }),
    actorIds: [b24999],
    expected: ON("SPLIT"),
  },
  // --- rule 4: call rollout (draw < percentageCalls / 100) ---
  {
    description: "rule 4: 50% call rollout, draw 0.4999 is inside",
    flag: flag({ percentageCalls: 50 }),
    actorIds: [],
    randomDraw: 0.4999,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4: 50% call rollout, draw 0.5 is outside (strict <)",
    flag: flag({ percentageCalls: 50 }),
    actorIds: [],
    randomDraw: 0.5,
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4: 25% call rollout, draw 0.2499999 is inside",
    flag: flag({ percentageCalls: 25 }),
    actorIds: [],
    randomDraw: 0.2499999,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4: 25% call rollout, draw 0.25 is outside",
    flag: flag({ percentageCalls: 25 }),
    actorIds: [],
    randomDraw: 0.25,
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4: 1% call rollout, draw 0 is inside",
    flag: flag({ percentageCalls: 1 }),
    actorIds: [],
    randomDraw: 0,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4: 1% call rollout, draw 0.0099 is inside",
    flag: flag({ percentageCalls: 1 }),
    actorIds: [],
    randomDraw: 0.0099,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4: 1% call rollout, draw 0.01 is outside",
    flag: flag({ percentageCalls: 1 }),
    actorIds: [],
    randomDraw: 0.01,
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4: 10% call rollout, draw 0.1 is outside",
    flag: flag({ percentageCalls: 10 }),
    actorIds: [],
    randomDraw: 0.1,
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4: 75% call rollout, draw 0.7499 is inside",
    flag: flag({ percentageCalls: 75 }),
    actorIds: [],
    randomDraw: 0.7499,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4: 75% call rollout, draw 0.75 is outside",
    flag: flag({ percentageCalls: 75 }),
    actorIds: [],
    randomDraw: 0.75,
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4: 100% call rollout, the largest draw below 1 is inside",
    flag: flag({ percentageCalls: 100 }),
    actorIds: [],
    randomDraw: BELOW_ONE,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4: 0% call rollout, no draw can be inside",
    flag: flag({ percentageCalls: 0 }),
    actorIds: [],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4 only without actor ids: attached actors, segments and a 100% actor rollout do not apply",
    flag: flag({ percentageActors: 100, actors: ["alice"], segments: ["beta"] }),
    segmentMembers: { beta: ["carol"] },
    actorIds: [],
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4 only without actor ids: 100% actor rollout, 50% call rollout, draw 0.5 is outside",
    flag: flag({ percentageActors: 100, percentageCalls: 50 }),
    actorIds: [],
    randomDraw: 0.5,
    expected: OFF("DEFAULT"),
  },
  {
    description: "rule 4 only without actor ids: 100% actor rollout, 50% call rollout, draw 0.1 is inside",
    flag: flag({ percentageActors: 100, percentageCalls: 50 }),
    actorIds: [],
    randomDraw: 0.1,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4 with actor ids: no actor rule holds, draw 0.4999 in a 50% call rollout",
    flag: flag({ percentageActors: 50, percentageCalls: 50, actors: ["alice"] }),
    actorIds: [b50000, b99999],
    randomDraw: 0.4999,
    expected: ON("SPLIT"),
  },
  {
    description: "rule 4 with actor ids: no actor rule holds, draw 0.5 in a 50% call rollout",
    flag: flag({ percentageActors: 50, percentageCalls: 50, actors: ["alice"] }),
    actorIds: [b50000, b99999],
    randomDraw: 0.5,
    expected: OFF("DEFAULT"),
  },
].map((v) => ({
  description: v.description,
  flag: v.flag,
  segmentMembers: v.segmentMembers ?? {},
  actorIds: v.actorIds,
  randomDraw: v.randomDraw ?? null,
  expected: v.expected,
}));

for (const v of evaluation) {
  check(ALLOWED_PERCENTAGES.includes(v.flag.percentageActors), `${v.description}: percentageActors`);
  check(ALLOWED_PERCENTAGES.includes(v.flag.percentageCalls), `${v.description}: percentageCalls`);
  const got = referenceEvaluate(v);
  check(
    got.enabled === v.expected.enabled && got.reason === v.expected.reason,
    `${v.description}: expected ${JSON.stringify(v.expected)}, reference gives ${JSON.stringify(got)}`,
  );
}
check(new Set(evaluation.map((v) => v.description)).size === evaluation.length, "descriptions are unique");

// ---------------------------------------------------------------------------------------------------------

const vectors = {
  description: [
    "Flagstaff feature-flag test vectors, generated by packages/core/test/generate-vectors.mjs independently of",
    "the core package (CRC-32 from Node's zlib). Ports in any language should pass all of them.",
    "BUCKETING: crc32 is the standard CRC-32 (zlib/PNG/IEEE 802.3: reflected polynomial 0xEDB88320, initial",
    "value 0xFFFFFFFF, final xor 0xFFFFFFFF; check value crc32('123456789') = 0xCBF43926), as an unsigned 32-bit",
    "integer, of the UTF-8 bytes of flagName + ':' + actorId, with no escaping and no Unicode normalisation.",
    "A lone UTF-16 surrogate (written as a \\ud800-style escape in this file) is encoded as U+FFFD (EF BF BD).",
    "bucket = crc32 % 100000, an integer in [0, 99999].",
    "EVALUATION: status 'disabled' -> {enabled:false, reason:DISABLED}; 'enabled' -> {enabled:true, reason:STATIC};",
    "'conditional' -> on when any of: (1) an actor id is in flag.actors, or (2) an actor id is a member",
    "(per segmentMembers) of a segment listed in flag.segments -> reason TARGETING_MATCH; otherwise (3) an actor",
    "id's bucket for flag.name is < percentageActors * 1000, or (4) one uniform draw in [0,1) is",
    "< percentageCalls / 100 -> reason SPLIT; otherwise {enabled:false, reason:DEFAULT}. Rules 1-2 are checked",
    "over all actor ids before rule 3, and rule 3 before rule 4. Without actor ids only rule 4 applies.",
    "Percentages are one of 0, 1, 2, 5, 10, 25, 50, 75, 100. segmentMembers maps a segment id to its members;",
    "a segment absent from it has no members.",
    "randomDraw: the value the random source returns when evaluation draws; at most one draw per evaluation, and",
    "none for enabled/disabled flags. randomDraw null means the outcome must not depend on any draw: a harness",
    "should then return a value that would flip the outcome if it were used (0 when expected.enabled is false,",
    "the largest double below 1 when it is true) and still expect `expected`.",
  ].join(" "),
  bucketCount: BUCKET_COUNT,
  allowedPercentages: ALLOWED_PERCENTAGES,
  bucketing,
  evaluation,
};

const out = new URL("./vectors.json", import.meta.url);
writeFileSync(out, `${JSON.stringify(vectors, null, 2)}\n`);
console.log(`wrote ${bucketing.length} bucketing and ${evaluation.length} evaluation vectors to ${out.pathname}`);
