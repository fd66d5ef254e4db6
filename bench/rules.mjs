#!/usr/bin/env node
// What targeting rules cost an evaluation (issue 25, "Measured"), in one process and one run:
//
// 1. A boolean flag with 10 rules of 3 conditions each (a string list, a number, a semantic version),
//    none holding until the last, evaluated with evaluateFlag, against evaluateFlag on the same flag
//    without its rules (the seed's flag: what the seed's evaluate, now a wrapper over evaluateFlag, reads),
//    in alternating rounds so that all see the same machine. Two ways for
//    the first nine rules to fail: on their third condition (all 30 conditions are read: the worst case)
//    and on their first (12 conditions read). Evaluations per second on one core, by the wall clock and
//    by the process's CPU time (which moves less when other processes share the cores).
// 2. A `matches` rule with (a+)+$ against 10,000 "a"s and a "!": milliseconds per evaluation (RE2's
//    linear time; JavaScript's own RegExp would backtrack for longer than anyone waits).
// 3. What one evaluation may cost at worst (issue 31), each beside what it cost before the limits, in the
//    same run: the probe's pattern .{0,1000}.{0,1000}[^b] on a 1,000-character value (now refused where it
//    is written); the costliest configurations the validator accepts, on a 1,000-character value and at
//    the characters an evaluation may match, the first evaluation (its automata's states built as the
//    text reaches them) and the next; random patterns, the slowest accepted; what validating costs a
//    write; and 20 prerequisites over 5 levels, evaluated once each against once per path.
//
//   npm run bench:rules [-- --rounds=5 --evaluations=1000000]
import { loadavg } from "node:os";
import {
  evaluateFlag,
  MATCHED_CHARACTERS_MAX,
  PATTERN_STATES_MAX,
  PATTERNS_MAX,
  patternCost,
  validateConfiguration,
} from "../packages/core/dist/src/index.js";
import { RE2JS } from "re2js";
import { rulesFailingAt } from "./fixtures.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, Number(v)];
  }),
);
const ROUNDS = args.rounds || 5;
const EVALUATIONS = args.evaluations || 1_000_000;

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
const seedFlag = flagWith([]);
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
  plain: (context) => evaluateFlag(seedFlag, context, resolver).variant === "off",
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
    "| round | evaluateFlag, no rules (the seed's flag) | evaluateFlag, 30 conditions read | ratio | evaluateFlag, 12 read | ratio |",
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

// 3. The worst one evaluation may cost.
console.log("\nWhat one evaluation may cost at worst (issue 31), ms:\n");
const ms = (fn) => {
  const started = process.hrtime.bigint();
  const result = fn();
  return [Number(process.hrtime.bigint() - started) / 1e6, result];
};
const matchesFlag = (values, attribute = "text") =>
  flagWith([{ id: "r", conditions: [{ attribute, operator: "matches", values }], serve: { variant: "on" } }]);
const rows = [];
const row = (what, before, after) => rows.push({ what, before, after });

// The probe's pattern, as re2js matched it before the limits (ten such values in one condition took 2.5 s).
const probe = ".{0,1000}.{0,1000}[^b]";
const bs = "b".repeat(1000);
const [probeMs] = ms(() => RE2JS.compile(probe).test(bs));
const [probeWrite, probeProblems] = ms(() => validateConfiguration(matchesFlag([probe])));
row(
  `${probe} on 1,000 "b"s (one value; the probe sent ten)`,
  `${probeMs.toFixed(1)} per evaluation`,
  `refused where written (${probeProblems[0]?.code}, ${probeWrite.toFixed(1)} ms to decide)`,
);

/** First and next evaluation of a fresh flag (fresh patterns: a suffix no other flag uses). */
function firstAndNext(values, context) {
  const f = matchesFlag(values);
  const [write, problems] = ms(() => validateConfiguration(f));
  if (problems.length > 0) throw new Error(`should be accepted: ${problems[0].message}`);
  // A fresh compile of the same patterns, as another instance or an SDK meets them (cold automata).
  const [first, answer] = ms(() =>
    evaluateFlag(
      matchesFlag(
        "g",
        values.map((v) => `${v}(?:)`),
      ),
      context,
      resolver,
    ),
  );
  const next = [];
  for (let i = 0; i < 20; i++) next.push(ms(() => evaluateFlag(f, context, resolver))[0]);
  next.sort((a, b) => a - b);
  return { write, first, next: next[10], max: next[19], answer };
}

let salt = 0;
const fresh = (values) => values.map((v) => `${v}(?:${salt++})`);
// The most distinct patterns a configuration holds, each a few dozen states, on a 1,000-character value
// none of them matches: every pattern scans all of it.
const manyPatterns = () =>
  fresh(Array.from({ length: PATTERNS_MAX }, (_, i) => `(?i)(chrome|firefox|safari${i})/[0-9]+`));
const agent = { attributes: { text: "Mozilla/5.0 (X11; Linux x86_64) ".repeat(32).slice(0, 1000) } };
{
  const r = firstAndNext(manyPatterns(), agent);
  row(
    `${PATTERNS_MAX} patterns (user agents) on a 1,000-character value`,
    "",
    `first ${r.first.toFixed(2)}, then median ${r.next.toFixed(3)}, max ${r.max.toFixed(3)}; validating the write ${r.write.toFixed(1)}`,
  );
}
// Patterns near the state limit (a[ab]{8}b$: 769 states each), six of them (4,600 states, under the
// 5,000 in all), on the text that visits most states.
const heavy = () => fresh(["ab", "cd", "ef", "gh", "ij", "kl"].map(([x, y]) => `${x}[${x}${y}]{8}${y}$`));
const abText = {
  attributes: { text: Array.from({ length: 1000 }, (_, i) => "abcdefghijkl"[(i * 7919) % 12]).join("") },
};
{
  const r = firstAndNext(heavy(), abText);
  row(
    `6 patterns of ~770 states each on a 1,000-character value`,
    "",
    `first ${r.first.toFixed(2)}, then median ${r.next.toFixed(3)}, max ${r.max.toFixed(3)}; validating the write ${r.write.toFixed(1)}`,
  );
}
// At the characters an evaluation may match: one pattern against a value that long.
{
  const long = {
    attributes: { text: "Mozilla/5.0 ".repeat(MATCHED_CHARACTERS_MAX / 12 + 1).slice(0, MATCHED_CHARACTERS_MAX) },
  };
  const r = firstAndNext(fresh(["(?i)(chrome|firefox|safari)/[0-9]+"]), long);
  row(
    `one pattern on a ${MATCHED_CHARACTERS_MAX.toLocaleString("en-US")}-character value (the budget)`,
    "",
    `first ${r.first.toFixed(2)}, then median ${r.next.toFixed(3)}, max ${r.max.toFixed(3)}`,
  );
  const [over, answer] = ms(() =>
    evaluateFlag(matchesFlag(fresh(["a", "b(?:x)"])), { attributes: { text: `${long.attributes.text}z` } }, resolver),
  );
  row("past the budget", "", `ERROR (${answer.errorCode}) after ${over.toFixed(2)}`);
}

// Random patterns from a small grammar of what makes automata large (bounded repetitions, classes,
// alternations, anchors); the slowest accepted one on texts from its own alphabet.
{
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const atom = () => pick(["a", "b", "[ab]", ".", "\\w", "[^b]", "(a|bb)", "\\d"]);
  const piece = () => {
    const a = atom();
    return pick(["", "*", "+", "?", `{0,${1 + Math.floor(random() * 12)}}`, `{${1 + Math.floor(random() * 6)}}`]) === ""
      ? a
      : a + pick(["*", "+", "?", `{0,${1 + Math.floor(random() * 12)}}`]);
  };
  const patterns = Array.from(
    { length: 300 },
    () => `${pick(["", "^"])}${Array.from({ length: 1 + Math.floor(random() * 4) }, piece).join("")}${pick(["", "$"])}`,
  );
  let accepted = 0;
  let refused = 0;
  let slowest = { ms: 0, pattern: "" };
  let slowestFirst = { ms: 0, pattern: "" };
  for (const pattern of patterns) {
    const cost = patternCost(pattern, false);
    if (cost.states > PATTERN_STATES_MAX) {
      refused++;
      continue;
    }
    accepted++;
    const f = matchesFlag([pattern]);
    for (const alphabet of ["ab", "b", "a1b_"]) {
      const text = Array.from({ length: 1000 }, () => pick(alphabet)).join("");
      for (let i = 0; i < 3; i++) {
        const [t] = ms(() => evaluateFlag(f, { attributes: { text } }, resolver));
        // The first evaluation of each text may build automaton states; the third finds them built.
        if (i === 0 && t > slowestFirst.ms) slowestFirst = { ms: t, pattern };
        if (i === 2 && t > slowest.ms) slowest = { ms: t, pattern };
      }
    }
  }
  row(
    `300 random patterns on 1,000-character texts of their alphabet: ${accepted} accepted, ${refused} refused`,
    "",
    `slowest accepted evaluation ${slowest.ms.toFixed(3)} (${slowest.pattern}); the first on a text ${slowestFirst.ms.toFixed(3)} (${slowestFirst.pattern})`,
  );
}

// 20 prerequisites over 5 levels; before: each evaluated once per path (a resolver that hands out copies
// defeats the memo, as the engine before it did), cut to 4 levels there (20^4 evaluations).
{
  const levels = (depth) => {
    const flags = new Map();
    const level = (k) => Array.from({ length: 20 }, (_, i) => `l${k}-${i}`);
    for (let k = 1; k <= depth; k++)
      for (const name of level(k))
        flags.set(name, {
          ...flagWith([]),
          name,
          status: "enabled",
          ...(k < depth ? { prerequisites: level(k + 1).map((flag) => ({ flag, variants: ["on"] })) } : {}),
        });
    const top = {
      ...flagWith([]),
      name: "top",
      status: "enabled",
      prerequisites: level(1).map((flag) => ({ flag, variants: ["on"] })),
    };
    return { top, flags };
  };
  const five = levels(5);
  const memo = { isMember: () => false, flag: (name) => five.flags.get(name) };
  evaluateFlag(five.top, {}, memo);
  const times5 = Array.from({ length: 20 }, () => ms(() => evaluateFlag(five.top, {}, memo))[0]).sort((a, b) => a - b);
  const four = levels(4);
  const copies = { isMember: () => false, flag: (name) => ({ ...four.flags.get(name) }) };
  const [before4] = ms(() => evaluateFlag(four.top, {}, copies));
  row(
    "a flag with 20 prerequisites over 5 levels",
    `${before4.toFixed(1)} at 4 levels, each once per path (×20 for 5)`,
    `${times5[10].toFixed(3)} median, ${times5[19].toFixed(3)} max, each once`,
  );
}

console.log("| case | before the limits | now |");
console.log("|---|---|---|");
for (const r of rows) console.log(`| ${r.what} | ${r.before} | ${r.after} |`);
