#!/usr/bin/env node
// The SDK's local evaluator, measured where its callers meet it: `LocalEvaluator.evaluate` (the context's
// checks, the flag's lookup, core's evaluateFlag and resolutionOf), on bench:rules' flag of 10 rules × 3
// conditions, none holding until the last: every rule failing on its third condition (30 conditions read,
// the worst case), on its first (12 read), and the same flag without rules. The state comes from a
// snapshot served by a fake fetch, as the stream would send it. Issue 33 asks for ≥ 5,000,000 evaluations
// per second. Evaluations per second on one core, by CPU time and by the wall clock, in alternating rounds;
// beside them, `engine`: core's evaluateFlag and resolutionOf alone on the same state (the floor). And a
// flag without rules whose timed rollout (issue 35) has three steps passed (5 %, 25 %, 100 %): what reading
// the plan's step in force costs (this build and the engine only: an older SDK cannot read such a state).
// --planned=0 leaves it out: its flag's views then never reach the engine's code, which the other paths
// share in this process (an A/B of those paths alone).
//
// With --baseline=<a built @flagstaff/sdk's dist/src/index.js> the same paths run on that build too, in
// the same process and the same alternating rounds (an A/B under the same machine load).
//
//   npm run bench:local [-- --rounds=5 --evaluations=1000000 --baseline=…]
import { loadavg } from "node:os";
import {
  evaluateFlag,
  PLANNED_STATE_FORMAT,
  ProjectState,
  resolutionOf,
  STATE_FORMAT,
} from "../packages/core/dist/src/index.js";
import { rulesFailingAt } from "./fixtures.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, v];
  }),
);
const ROUNDS = Number(args.rounds) || 5;
const EVALUATIONS = Number(args.evaluations) || 1_000_000;
const PLANNED = args.planned !== "0";

const flag = (id, name, rules) => ({
  id,
  name,
  status: "conditional",
  percentageActors: 0,
  percentageCalls: 0,
  actors: ["carol"],
  segments: ["beta"],
  type: "boolean",
  onVariant: "on",
  offVariant: "off",
  rules,
  prerequisites: [],
});
const snapshot = {
  version: 1,
  state: {
    format: STATE_FORMAT,
    flags: [flag("f1", "worst", rulesFailingAt(2)), flag("f2", "early", rulesFailingAt(0)), flag("f3", "plain", [])],
    segments: { beta: ["bob"] },
  },
};

const HOUR = 3_600_000;
const planned = {
  ...flag("f4", "planned", []),
  rolloutPlan: {
    steps: [5, 25, 100].map((percentage, i) => ({
      at: new Date(Date.now() - (3 - i) * HOUR).toISOString(),
      percentage,
    })),
  },
};
const plannedSnapshot = {
  version: 1,
  state: { ...snapshot.state, format: PLANNED_STATE_FORMAT, flags: [...snapshot.state.flags, planned] },
};

/** A fetch that answers the stream with a snapshot and then holds it open until aborted. */
const fetchOf = (snapshot) => async (_url, init) => {
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(`event: snapshot\nid: 1\ndata: ${JSON.stringify(snapshot)}\n\n`));
      init.signal?.addEventListener("abort", () => controller.error(init.signal.reason), { once: true });
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
};

const contexts = Array.from({ length: 1000 }, (_, i) => ({
  actorIds: [`user-${i}`],
  attributes: { country: "DE", seats: 10 + (i % 50), appVersion: "3.4.0", plan: "pro" },
}));

async function evaluatorOf(path, state = snapshot) {
  const sdk = await import(path);
  const evaluator = sdk.createLocalEvaluator({
    url: "http://bench.invalid",
    key: "k",
    projectId: "p",
    fetch: fetchOf(state),
  });
  await evaluator.ready(5000);
  for (const name of ["worst", "early"]) {
    const answer = evaluator.evaluate(name, contexts[0]);
    if (answer.ruleId !== "rule-9" || answer.variant !== "on")
      throw new Error(`${path}: the last rule should decide: ${JSON.stringify(answer)}`);
  }
  return evaluator;
}

/** The floor: core's engine on the same state, called as the evaluator calls it, with no context checks. */
function engineOnly() {
  const state = ProjectState.fromJSON((PLANNED ? plannedSnapshot : snapshot).state);
  const resolver = {
    isMember: state.isMember,
    segmentConditions: (id) => state.segmentConditions(id),
    flag: (name) => state.flag(name),
    now: Date.now,
    random: Math.random,
  };
  return {
    evaluate: (name, context) => {
      const flag = state.flagsByName.get(name);
      return resolutionOf(flag, evaluateFlag(flag, context, resolver));
    },
    close: async () => {},
  };
}

const builds = {
  engine: engineOnly(),
  after: await evaluatorOf("../packages/sdk/dist/src/index.js", PLANNED ? plannedSnapshot : snapshot),
};
if (args.baseline) builds.before = await evaluatorOf(args.baseline);

function measure(evaluator, name, expected) {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  let same = 0;
  for (let i = 0; i < EVALUATIONS; i++) if (evaluator.evaluate(name, contexts[i % 1000]).enabled === expected) same++;
  const ns = Number(process.hrtime.bigint() - started);
  const used = process.cpuUsage(cpu);
  if (same !== EVALUATIONS) throw new Error(`${name}: every evaluation should answer ${expected}`);
  return { wall: (EVALUATIONS / ns) * 1e9, cpu: (EVALUATIONS / ((used.user + used.system) * 1000)) * 1e9 };
}

const paths = { plain: false, worst: true, early: true, ...(PLANNED ? { planned: true } : {}) };
// Path by path, the builds side by side: what is compared runs back to back, under the same load.
const columns = [];
for (const name of Object.keys(paths))
  for (const build of Object.keys(builds)) if (name !== "planned" || build !== "before") columns.push([build, name]);

const loadBefore = loadavg()[0];
for (const [build, name] of columns) measure(builds[build], name, paths[name]); // warm up
const rounds = [];
for (let round = 1; round <= ROUNDS; round++) {
  const row = { round };
  // Alternate the order of the builds from round to round, so that neither always runs first.
  const order = round % 2 === 0 ? [...columns].reverse() : columns;
  for (const [build, name] of order) row[`${build} ${name}`] = measure(builds[build], name, paths[name]);
  rounds.push(row);
}
for (const evaluator of Object.values(builds)) await evaluator.close();

const fmt = (n) => Math.round(n).toLocaleString("en-US");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const labels = {
  plain: "no rules",
  worst: "10 rules, 30 conditions read",
  early: "10 rules, 12 read",
  planned: "no rules, a timed rollout",
};
console.log(
  `Node ${process.version}, LocalEvaluator.evaluate, ${EVALUATIONS.toLocaleString("en-US")} evaluations per path per round, ` +
    `load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n`,
);
for (const clock of ["cpu", "wall"]) {
  console.log(`Evaluations per second, by ${clock === "wall" ? "the wall clock" : "CPU time"}:\n`);
  const keys = columns.map(([build, name]) => `${build} ${name}`);
  console.log(`| round | ${columns.map(([build, name]) => `${build}: ${labels[name]}`).join(" | ")} |`);
  console.log(`|---:|${keys.map(() => "---:").join("|")}|`);
  for (const r of rounds) console.log(`| ${r.round} | ${keys.map((k) => fmt(r[k][clock])).join(" | ")} |`);
  console.log(`| median | ${keys.map((k) => fmt(median(rounds.map((r) => r[k][clock])))).join(" | ")} |`);
  console.log("");
}
if (builds.before) {
  // Each round's ratio of two measures taken back to back: steadier than the ratio of medians when the
  // machine's load moves from round to round.
  console.log("after ÷ before, by CPU time (each round's ratio, and their median):\n");
  const compared = Object.keys(paths).filter((name) => name !== "planned");
  console.log(`| round | ${compared.map((name) => labels[name]).join(" | ")} |`);
  console.log(`|---:|${compared.map(() => "---:").join("|")}|`);
  const ratio = (r, name) => r[`after ${name}`].cpu / r[`before ${name}`].cpu;
  for (const r of rounds)
    console.log(`| ${r.round} | ${compared.map((name) => ratio(r, name).toFixed(2)).join(" | ")} |`);
  const medians = compared.map((name) => median(rounds.map((r) => ratio(r, name))).toFixed(2));
  console.log(`| median | ${medians.join(" | ")} |\n`);
}
