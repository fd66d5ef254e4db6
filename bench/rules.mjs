#!/usr/bin/env node
// What targeting rules cost an evaluation (issue 25, "Measured"), in one process and one run:
//
// 1. A boolean flag with 10 rules of 3 conditions each (a string list, a number, a semantic version),
//    none holding until the last, evaluated with evaluateFlag, against the seed's evaluate of the same
//    flag (which reads no rules), in alternating rounds so that all see the same machine. Two ways for
//    the first nine rules to fail: on their third condition (all 30 conditions are read: the worst case)
//    and on their first (12 conditions read). Evaluations per second on one core, by the wall clock and
//    by the process's CPU time (which moves less when other processes share the cores).
// 2. A `matches` rule with (a+)+$ against 10,000 "a"s and a "!": milliseconds per evaluation (RE2's
//    linear time; JavaScript's own RegExp would backtrack for longer than anyone waits).
//
//   npm run bench:rules [-- --rounds=5 --evaluations=1000000]
import { loadavg } from "node:os";
import { evaluate, evaluateFlag } from "../packages/core/dist/src/index.js";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, Number(v)];
  }),
);
const ROUNDS = args.rounds || 5;
const EVALUATIONS = args.evaluations || 1_000_000;

/** 10 rules; the first nine fail on condition `failing` (0, 1 or 2), the last holds. */
function rulesFailingAt(failing) {
  return Array.from({ length: 10 }, (_, i) => {
    const last = i === 9;
    const conditions = [
      { attribute: "country", operator: "in", values: ["FR", "DE", "NL", "BE", "LU"] },
      { attribute: "seats", operator: "gte", values: [10] },
      { attribute: "appVersion", operator: "semver_gte", values: ["3.0.0"] },
    ];
    // The contexts are DE, 10–59 seats, 3.4.0: these values are what they are not.
    if (!last && failing === 0) conditions[0] = { ...conditions[0], values: ["FR", "NL", "BE", "LU", "AT"] };
    if (!last && failing === 2) conditions[2] = { ...conditions[2], values: [`3.${5 + i}.0`] };
    return { id: `rule-${i}`, conditions, serve: { variant: "on" } };
  });
}

const flagWith = (rules) => ({
  name: "new-checkout",
  status: "conditional",
  percentageActors: 0,
  percentageCalls: 0,
  actors: new Set(["carol"]),
  segments: new Set(["beta"]),
  rules,
});
const worst = flagWith(rulesFailingAt(2));
const early = flagWith(rulesFailingAt(0));
const members = new Map([["beta", new Set(["bob"])]]);
const resolver = { isMember: (segmentId, actorId) => members.get(segmentId)?.has(actorId) === true };
// A thousand distinct actors, each with the attributes every rule reads.
const contexts = Array.from({ length: 1000 }, (_, i) => ({
  actorIds: [`user-${i}`],
  attributes: { country: "DE", seats: 10 + (i % 50), appVersion: "3.4.0", plan: "pro" },
}));

for (const f of [worst, early]) {
  const answer = evaluateFlag(f, contexts[0], resolver);
  if (answer.ruleId !== "rule-9" || answer.variant !== "on")
    throw new Error(`the last rule should decide: ${JSON.stringify(answer)}`);
}

/** Evaluations per second by the wall clock and by CPU time. */
function measure(fn) {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  let on = 0;
  for (let i = 0; i < EVALUATIONS; i++) if (fn(contexts[i % 1000])) on++;
  const ns = Number(process.hrtime.bigint() - started);
  const used = process.cpuUsage(cpu);
  if (on !== 0 && on !== EVALUATIONS) throw new Error("every evaluation should answer alike");
  return { wall: (EVALUATIONS / ns) * 1e9, cpu: (EVALUATIONS / ((used.user + used.system) * 1000)) * 1e9 };
}

const paths = {
  plain: (context) => evaluate(worst, context.actorIds, resolver, Math.random).enabled === false,
  worst: (context) => evaluateFlag(worst, context, resolver).variant === "on",
  early: (context) => evaluateFlag(early, context, resolver).variant === "on",
};

const loadBefore = loadavg()[0];
for (const fn of Object.values(paths)) measure(fn); // warm up
const rounds = [];
for (let round = 1; round <= ROUNDS; round++) {
  const row = { round };
  for (const [name, fn] of Object.entries(paths)) row[name] = measure(fn);
  rounds.push(row);
}

const fmt = (n) => Math.round(n).toLocaleString("en-US");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `Node ${process.version}, ${EVALUATIONS.toLocaleString("en-US")} evaluations per path per round, ` +
    `load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n`,
);
for (const clock of ["wall", "cpu"]) {
  console.log(`Evaluations per second, by ${clock === "wall" ? "the wall clock" : "CPU time"}:\n`);
  console.log(
    "| round | evaluate (rules unread) | evaluateFlag, 30 conditions read | ratio | evaluateFlag, 12 read | ratio |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|");
  const line = (label, p, w, e) =>
    console.log(`| ${label} | ${fmt(p)} | ${fmt(w)} | ${(w / p).toFixed(3)} | ${fmt(e)} | ${(e / p).toFixed(3)} |`);
  for (const r of rounds) line(r.round, r.plain[clock], r.worst[clock], r.early[clock]);
  const m = (name) => median(rounds.map((r) => r[name][clock]));
  line("median", m("plain"), m("worst"), m("early"));
  console.log("");
}

// 2. (a+)+$ against 10,000 "a"s and a "!".
const redos = flagWith([
  { id: "r", conditions: [{ attribute: "text", operator: "matches", values: ["(a+)+$"] }], serve: { variant: "on" } },
]);
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
  `(a+)+$ against 10,000 "a"s and "!", ms per evaluation, 200 evaluations: first (compiles the flag and the pattern) ${first.toFixed(3)}, ` +
    `min ${times[0].toFixed(3)}, median ${times[100].toFixed(3)}, p99 ${times[197].toFixed(3)}, max ${times[199].toFixed(3)}`,
);
