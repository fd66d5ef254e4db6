#!/usr/bin/env node
// Runs every compiled test file with node's test runner, on SQLite and, when it answers, PostgreSQL.
// REQUIRE_POSTGRES=1 (set by .ci/run) turns a missing PostgreSQL into a failure instead of a skip.
//
// A run can neither hang nor leave anything behind. It has a time limit (FLAGSTAFF_TEST_TIMEOUT_MS,
// default 30 min): past it, the runner prints what is still running and kills it. Each test file has its
// own limit (FLAGSTAFF_TEST_FILE_TIMEOUT_MS, default 20 min; node 20 applies --test-timeout to each file
// as a whole). Every process of the run carries TEST_RUNNER_PID in its environment, so at the end the
// runner finds any that outlived it, wherever it was re-parented, and fails the run; it does the same
// for the run's PostgreSQL databases (named after its pid, see @flagstaff/test-harness/database-names).
// FLAGSTAFF_TEST_CONCURRENCY sets how many test files run at once (default 2).
import "./check-node.mjs";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { dropLeftoverDatabases, runProcesses, signalAll } from "./leftovers.mjs";

const postgresUrl = process.env.TEST_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const RUN_TIMEOUT_MS = Number(process.env.FLAGSTAFF_TEST_TIMEOUT_MS || 30 * 60_000);
const FILE_TIMEOUT_MS = Number(process.env.FLAGSTAFF_TEST_FILE_TIMEOUT_MS || 20 * 60_000);
const CONCURRENCY = Number(process.env.FLAGSTAFF_TEST_CONCURRENCY || 2);
/** How long processes get between SIGTERM and SIGKILL when the runner ends them. */
const KILL_GRACE_MS = 5000;

async function postgresAnswers() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => {});
  }
}

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (entry.endsWith(".test.js")) out.push(path);
  }
  return out;
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

/** Prints the run's processes, and the test files among them. */
function printProcesses(processes, runnerChild) {
  const files = processes
    .filter((p) => p.pid !== runnerChild)
    .flatMap((p) => p.command.split(" ").filter((word) => word.endsWith(".test.js")));
  if (files.length > 0) console.error(`Test files still running:\n${files.map((f) => `  ${f}`).join("\n")}`);
  const lines = processes.map((p) => `  ${p.pid} (parent ${p.ppid}) ${p.command.slice(0, 200)}`);
  console.error(`Processes of this run:\n${lines.join("\n")}`);
}

/** SIGTERM to every process of the run (the harness then kills what each test file started), later SIGKILL. */
async function endAll(group) {
  const signalGroup = (signal) => {
    try {
      process.kill(-group, signal);
    } catch {
      // The group is gone already.
    }
  };
  signalGroup("SIGTERM");
  signalAll(runProcesses(process.pid) ?? [], "SIGTERM");
  await delay(KILL_GRACE_MS);
  signalGroup("SIGKILL");
  signalAll(runProcesses(process.pid) ?? [], "SIGKILL");
}

function readCounts(countsFile) {
  try {
    return JSON.parse(readFileSync(countsFile, "utf8"));
  } catch (error) {
    return error;
  }
}

/** One line per test file whose results did not all arrive: no end of run, or fewer results than tests. */
function lostTests(files, counts) {
  if (counts instanceof Error) return [`the counts of the run could not be read (${counts.message})`];
  const lost = [];
  for (const file of files) {
    const { enqueued = 0, reported = 0, summary } = counts[relative(process.cwd(), file)] ?? {};
    if (summary === undefined) {
      lost.push(
        `${file}: its run never reached its end (${reported} result(s) reported, ${enqueued} test(s) announced)`,
      );
    } else if (reported < enqueued) {
      lost.push(`${file}: ${reported} result(s) for ${enqueued} test(s)`);
    }
  }
  return lost;
}

const only = process.argv.slice(2);
const packages = readdirSync("packages").map((name) => join("packages", name, "dist", "test"));
// The longest files first (measured: each takes one to five minutes of a run's two slots), so that the run
// does not end waiting on one of them started last; the rest in their order.
const LONGEST = [
  "server/dist/test/fuzz.test.js",
  "server/dist/test/clean-clone.test.js",
  "server/dist/test/lifecycle.test.js",
  "server/dist/test/auth.test.js",
  "console/dist/test/console.test.js",
];
const rank = (file) => {
  const at = LONGEST.findIndex((end) => file.endsWith(end));
  return at === -1 ? LONGEST.length : at;
};
const files =
  only.length > 0
    ? only
    : packages
        .filter((dir) => existsSync(dir))
        .flatMap(testFiles)
        .map((file, order) => ({ file, order }))
        .sort((a, b) => rank(a.file) - rank(b.file) || a.order - b.order)
        .map(({ file }) => file);

const dialects = ["sqlite"];
const probe = await postgresAnswers();
if (probe === true) {
  dialects.push("postgres");
  console.log(`Test legs: SQLite and PostgreSQL (${postgresUrl.replace(/\/\/[^@]*@/, "//")})`);
} else if (process.env.REQUIRE_POSTGRES === "1") {
  console.error(`PostgreSQL is required (REQUIRE_POSTGRES=1) but does not answer at ${postgresUrl}: ${probe.message}`);
  process.exit(1);
} else {
  console.log(`PostgreSQL leg SKIPPED: no PostgreSQL answers at ${postgresUrl} (${probe.message}). Only SQLite runs.`);
}
console.log(`Load average at the start: ${load()}`);

// Beside `spec`, a reporter counts each file's announced and reported tests (see test-count-reporter.mjs).
const countsDir = mkdtempSync(join(tmpdir(), "flagstaff-test-counts-"));
const countsFile = join(countsDir, "counts.json");

const started = performance.now();
// Its own process group, so that the runner can signal the whole run at once.
const child = spawn(
  process.execPath,
  [
    "--test",
    `--test-concurrency=${CONCURRENCY}`,
    `--test-timeout=${FILE_TIMEOUT_MS}`,
    // No --test-force-exit: it can end a test file's process before its results are all written, and
    // tests then go missing from the count with no failure (core's tests reported 150 or 152 of 164 in
    // about one run in ten on Node 20, and 34 of 71 evaluation tests on Node 24). A file whose event loop
    // stays alive is ended by the file time limit instead, and fails.
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${join(import.meta.dirname, "test-count-reporter.mjs")}`,
    `--test-reporter-destination=${countsFile}`,
    ...files,
  ],
  {
    stdio: "inherit",
    detached: true,
    env: {
      ...process.env,
      TEST_DIALECTS: dialects.join(","),
      TEST_POSTGRES_URL: postgresUrl,
      TEST_RUNNER_PID: String(process.pid),
    },
  },
);
const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

let timedOut = false;
/** Set once the runner ends the run itself: the leftover checks wait for it. */
let ending;
const timer = setTimeout(() => {
  timedOut = true;
  console.error(`\nThe test run took longer than ${RUN_TIMEOUT_MS / 1000} s (FLAGSTAFF_TEST_TIMEOUT_MS); ending it.`);
  printProcesses(runProcesses(process.pid) ?? [], child.pid);
  ending ??= endAll(child.pid);
}, RUN_TIMEOUT_MS);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    console.error(`\n${signal}: ending the test run.`);
    ending ??= endAll(child.pid);
  });
}

const exit = await exited;
clearTimeout(timer);
await ending;
const problems = [];
if (timedOut) problems.push(`the run exceeded its time limit of ${RUN_TIMEOUT_MS / 1000} s`);
else if (exit.code !== 0) problems.push(`node --test ended with ${exit.code ?? exit.signal}`);

// Every test a file defines must have reported: node --test passes a file whose process ended (exit code 0)
// before all its results were written, with only the results that arrived. Not checked after a time-out.
const counts = readCounts(countsFile);
if (!timedOut) {
  const lost = lostTests(files, counts);
  if (lost.length > 0) {
    console.error(`\nTests went missing (a file's process ended before its results were all written):`);
    for (const line of lost) console.error(`  ${line}`);
    problems.push(`tests went missing in ${lost.length} file(s)`);
  }
}
rmSync(countsDir, { recursive: true, force: true });
// The slowest files, so that a suite growing towards its time limit shows where its time goes.
if (!(counts instanceof Error) && files.length > 1) {
  const slowest = Object.entries(counts)
    .filter(([, c]) => typeof c.durationMs === "number")
    .sort(([, a], [, b]) => b.durationMs - a.durationMs)
    .slice(0, 12);
  console.log(
    `\nSlowest test files:\n${slowest.map(([f, c]) => `  ${(c.durationMs / 1000).toFixed(1).padStart(7)} s  ${f}`).join("\n")}`,
  );
}

// Whatever a test file started must have ended with it.
const left = runProcesses(process.pid);
if (left === undefined) console.log("(No /proc here: processes left behind are not checked.)");
else if (left.length > 0) {
  console.error(`\n${left.length} process(es) of this run outlived it; killing them:`);
  printProcesses(left, child.pid);
  signalAll(left, "SIGKILL");
  problems.push("processes were left behind");
}
if (dialects.includes("postgres")) {
  const { ours, stale } = await dropLeftoverDatabases(postgresUrl, process.pid);
  if (ours.length > 0) {
    console.error(
      `\n${ours.length} PostgreSQL database(s) of this run were left behind (dropped now): ${ours.join(", ")}`,
    );
    problems.push("databases were left behind");
  }
  if (stale.length > 0) console.log(`Dropped ${stale.length} database(s) left by earlier runs: ${stale.join(", ")}`);
}

const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(`\nTests took ${seconds} s; load average at the end: ${load()}`);
if (problems.length > 0) {
  console.error(`FAILED: ${problems.join("; ")}`);
  process.exit(1);
}
