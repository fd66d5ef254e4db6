#!/usr/bin/env node
// What targeting rules cost an evaluation (issue 25, "Measured"), in one process and one run:
//
// 1. A boolean flag with 10 rules of 3 conditions each (strings, numbers, semantic versions), none holding
//    until the last: each of the first nine fails on its third condition, so all 30 conditions are read.
//    evaluateFlag on it, against the seed's evaluate of the same flag (which reads no rules), in
//    alternating rounds so that both see the same machine. Evaluations per second on one core.
// 2. A `matches` rule with (a+)+$ against 10,000 "a"s and a "!": milliseconds per evaluation (RE2's
//    linear time; JavaScript's own RegExp would backtrack for longer than anyone waits).
//
//   npm run bench:rules [-- --rounds=5 --evaluations=1000000]
import { evaluate, evaluateFlag } from "../packages/core/dist/src/index.js";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, Number(v)];
  }),
);
const ROUNDS = args.rounds || 5;
const EVALUATIONS = args.evaluations || 1_000_000;

const rules = Array.from({ length: 10 }, (_, i) => ({
  id: `rule-${i}`,
  conditions: [
    { attribute: "country", operator: "in", values: ["FR", "DE", "NL", "BE", "LU"] },
    { attribute: "seats", operator: "gte", values: [10] },
    // Only the last rule's version bound is met by 3.4.0.
    { attribute: "appVersion", operator: "semver_gte", values: [i === 9 ? "3.0.0" : `3.${5 + i}.0`] },
  ],
  serve: { variant: i === 9 ? "on" : "off" },
}));

const flag = {
  name: "new-checkout",
  status: "conditional",
  percentageActors: 0,
  percentageCalls: 0,
  actors: new Set(["carol"]),
  segments: new Set(["beta"]),
  rules,
};
const members = new Map([["beta", new Set(["bob"])]]);
const resolver = { isMember: (segmentId, actorId) => members.get(segmentId)?.has(actorId) === true };
// A thousand distinct actors, each with the attributes every rule reads.
const contexts = Array.from({ length: 1000 }, (_, i) => ({
  actorIds: [`user-${i}`],
  attributes: { country: "DE", seats: 10 + (i % 50), appVersion: "3.4.0", plan: "pro" },
}));

const expected = evaluateFlag(flag, contexts[0], resolver);
if (expected.ruleId !== "rule-9" || expected.variant !== "on") {
  throw new Error(`the last rule should decide: ${JSON.stringify(expected)}`);
}

function perSecond(fn) {
  const started = process.hrtime.bigint();
  let on = 0;
  for (let i = 0; i < EVALUATIONS; i++) if (fn(contexts[i % 1000])) on++;
  const ns = Number(process.hrtime.bigint() - started);
  if (on === 0) throw new Error("nothing was on");
  return (EVALUATIONS / ns) * 1e9;
}

const plain = (context) => evaluate(flag, context.actorIds, resolver, Math.random).enabled === false;
const targeted = (context) => evaluateFlag(flag, context, resolver).variant === "on";

// Warm up both paths before measuring.
perSecond(plain);
perSecond(targeted);
const rows = [];
for (let round = 1; round <= ROUNDS; round++) {
  const p = perSecond(plain);
  const t = perSecond(targeted);
  rows.push({ round, plain: p, targeted: t });
}

const fmt = (n) => Math.round(n).toLocaleString("en-US");
console.log(`Node ${process.version}, ${EVALUATIONS.toLocaleString("en-US")} evaluations per round\n`);
console.log("| round | evaluate (no rules read), evals/s | evaluateFlag, 10 rules × 3 conditions, evals/s | ratio |");
console.log("|---:|---:|---:|---:|");
for (const r of rows) console.log(`| ${r.round} | ${fmt(r.plain)} | ${fmt(r.targeted)} | ${(r.targeted / r.plain).toFixed(2)} |`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `| median | ${fmt(median(rows.map((r) => r.plain)))} | ${fmt(median(rows.map((r) => r.targeted)))} | ${(
    median(rows.map((r) => r.targeted)) / median(rows.map((r) => r.plain))
  ).toFixed(2)} |`,
);

// 2. (a+)+$ against 10,000 "a"s and a "!".
const redos = {
  name: "redos",
  status: "conditional",
  percentageActors: 0,
  percentageCalls: 0,
  actors: new Set(),
  segments: new Set(),
  rules: [{ id: "r", conditions: [{ attribute: "text", operator: "matches", values: ["(a+)+$"] }], serve: { variant: "on" } }],
};
const hostile = { attributes: { text: `${"a".repeat(10_000)}!` } };
const times = [];
for (let i = 0; i < 200; i++) {
  const started = process.hrtime.bigint();
  const result = evaluateFlag(redos, hostile, resolver);
  times.push(Number(process.hrtime.bigint() - started) / 1e6);
  if (result.reason !== "DEFAULT") throw new Error(`(a+)+$ should not match: ${JSON.stringify(result)}`);
}
const first = times[0];
times.sort((a, b) => a - b);
console.log(
  `\n(a+)+$ against 10,000 "a"s and "!", ms per evaluation, 200 evaluations: first (compiles) ${first.toFixed(3)}, ` +
    `min ${times[0].toFixed(3)}, median ${times[100].toFixed(3)}, p99 ${times[197].toFixed(3)}, max ${times[199].toFixed(3)}`,
);
