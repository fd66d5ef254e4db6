#!/usr/bin/env node
// Flags as code at scale (issue 37): a document of FLAGS flags (two environments, a rule and attached
// actors in one) applied to an empty project in one write, exported, diffed (an empty plan: what a CI job
// pays on every pull request) and exported again with If-None-Match (304), beside the baseline measured in
// the same run: the same flags made one at a time through their own routes (a create and a PATCH each, as
// a script without apply would), for BASELINE of them.
//
//   npm run bench:flags-as-code [-- --flags=5000 --baseline=300 --postgres]
import { parseArgs } from "node:util";
import { startServer } from "@flagstaff/test-harness";

const { values } = parseArgs({
  options: {
    flags: { type: "string", default: "5000" },
    baseline: { type: "string", default: "300" },
    postgres: { type: "boolean", default: false },
  },
});
const FLAGS = Number(values.flags);
const BASELINE = Number(values.baseline);
const dialect = values.postgres ? "postgres" : "sqlite";

const environment = (id, name, isDefault) => ({
  id,
  name,
  description: "",
  default: isDefault,
  protected: false,
  requiredApprovals: 0,
  allowSelfApproval: false,
});
const configuration = (overrides = {}) => ({
  status: "disabled",
  percentageActors: 0,
  percentageCalls: 0,
  onVariant: "on",
  offVariant: "off",
  rules: [],
  prerequisites: [],
  actors: [],
  segments: [],
  ...overrides,
});
const name = (i) => `flag-${String(i).padStart(6, "0")}`;
/** The staging configuration every flag gets: conditional, a rule on the plan, two actors, 25 %. */
const staging = (i) =>
  configuration({
    status: "conditional",
    percentageActors: 25,
    rules: [
      {
        id: "pros",
        conditions: [{ attribute: "plan", operator: "in", values: ["pro", `p${i % 7}`] }],
        serve: { variant: "on" },
      },
    ],
    actors: [`actor-${i}`, `actor-${i + 1}`].sort(),
  });

function documentOf(project, count) {
  const flags = [];
  for (let i = 0; i < count; i++) {
    flags.push({
      name: name(i),
      description: `Benchmark flag ${i}`,
      type: "boolean",
      variants: [
        { key: "on", value: true },
        { key: "off", value: false },
      ],
      kind: "release",
      permanent: false,
      environments: { production: configuration(), staging: staging(i) },
    });
  }
  return {
    version: 1,
    project: { id: project, name: project },
    environments: [environment("production", "Production", true), environment("staging", "Staging", false)],
    segments: [],
    flags,
  };
}

const server = await startServer({
  dialect,
  // Its errors, if any, said (the bench measures; a 500 must say why).
  logger: (await import("pino")).default({ level: "error" }),
});
const ms = (started) => performance.now() - started;
async function call(method, path, options = {}) {
  const res = await server.request(method, path, { conformance: false, timeoutMs: 600_000, ...options });
  if (res.status >= 300 && res.status !== 304)
    throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return res;
}
async function project(id) {
  await call("POST", "/projects", { body: { id, name: id } });
  await call("POST", `/projects/${id}/environments`, { body: { id: "staging", name: "Staging" } });
}

try {
  // The baseline: each flag through its own routes, one after the other.
  await project("one-by-one");
  let started = performance.now();
  for (let i = 0; i < BASELINE; i++) {
    await call("POST", `/projects/one-by-one/flags/${name(i)}`, { body: { description: `Benchmark flag ${i}` } });
    const { status, percentageActors, rules, actors } = staging(i);
    await call("PATCH", `/projects/one-by-one/flags/${name(i)}?environment=staging`, {
      body: { status, percentageActors, rules, addActors: actors },
    });
  }
  const oneByOne = ms(started);

  await project("bench");
  const document = documentOf("bench", FLAGS);
  const body = JSON.stringify(document);
  started = performance.now();
  const dry = await call("POST", "/projects/bench/apply?dryRun=true", { body: document });
  const dryRun = ms(started);
  started = performance.now();
  const applied = await call("POST", "/projects/bench/apply", { body: document });
  const apply = ms(started);
  started = performance.now();
  const exported = await call("GET", "/projects/bench/export");
  const exportMs = ms(started);
  started = performance.now();
  const diff = await call("POST", "/projects/bench/apply?dryRun=true", { body: exported.body });
  const emptyPlan = ms(started);
  started = performance.now();
  const unchanged = await call("GET", "/projects/bench/export", {
    headers: { "if-none-match": exported.headers.get("etag") },
  });
  const notModified = ms(started);
  if (
    dry.body.changes.length !== applied.body.changes.length ||
    diff.body.changes.length !== 0 ||
    unchanged.status !== 304
  ) {
    throw new Error("the runs did not do what they should: check the server");
  }
  const perFlag = (total, count) => `${(total / count).toFixed(2)} ms`;
  console.log(
    `Flags as code on ${dialect}: ${FLAGS.toLocaleString("en-US")} flags, a ${(body.length / 1e6).toFixed(1)} MB document (${applied.body.changes.length.toLocaleString("en-US")} changes)`,
  );
  console.log("");
  console.log("| What | Total | Per flag |");
  console.log("|---|---|---|");
  console.log(
    `| Baseline: ${BASELINE} flags one at a time (create + PATCH each, same run) | ${oneByOne.toFixed(0)} ms | ${perFlag(oneByOne, BASELINE)} |`,
  );
  console.log(`| apply, dry run (the plan; rolled back) | ${dryRun.toFixed(0)} ms | ${perFlag(dryRun, FLAGS)} |`);
  console.log(`| apply (one write) | ${apply.toFixed(0)} ms | ${perFlag(apply, FLAGS)} |`);
  console.log(`| export | ${exportMs.toFixed(0)} ms | ${perFlag(exportMs, FLAGS)} |`);
  console.log(`| diff of the export (an empty plan) | ${emptyPlan.toFixed(0)} ms | ${perFlag(emptyPlan, FLAGS)} |`);
  console.log(`| export with If-None-Match (304) | ${notModified.toFixed(1)} ms | |`);
  console.log("");
  console.log(`apply ÷ one at a time, per flag: ${(apply / FLAGS / (oneByOne / BASELINE)).toFixed(2)} ×`);
} finally {
  await server.close();
}
