#!/usr/bin/env node
// Propagation benchmark: 3 server processes on one PostgreSQL database.
//  - Flag changes: 1,000 changes on instance A; for each, the time from A acknowledging the write until a
//    check on B (and on C) reflects it.
//  - Key revocations: 300 project keys, each accepted on B and C first; each is revoked on A, and timed
//    from A's 204 until the first 401 for that key on B (and on C).
// Each wait is bounded: a change or revocation not seen within 5 s is counted and reported as a failure.
// Usage: npm run bench:propagation  (BENCH_POSTGRES_URL, BENCH_CHANGES, BENCH_REVOCATIONS to override;
//        --no-save to leave bench/results alone)
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { freshDatabase } from "./fixtures.mjs";
import { call, fail, onInterrupt, POSTGRES_URL, percentile, startInstance, stopInstances } from "./instances.mjs";

const CHANGES = Number(process.env.BENCH_CHANGES || 1000);
const REVOCATIONS = Number(process.env.BENCH_REVOCATIONS || 300);
/** How long a change may take to show on another instance before it counts as a failure. */
const BOUND_MS = 5000;
/** Per-request timeout of a poll; a timed-out poll is retried until the bound. */
const POLL_TIMEOUT_MS = 1000;
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;
const CHECK_PATH = "/projects/bench/flags/f/check";

/**
 * Polls `url + CHECK_PATH` with `key` in a tight loop until `done(status, body)` holds or BOUND_MS has
 * passed since `since`. Answers the milliseconds from `since`, or null (with the last status) on failure.
 */
async function pollUntil(url, key, since, done) {
  let last = "no answer";
  while (performance.now() - since < BOUND_MS) {
    try {
      const res = await fetch(url + CHECK_PATH, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(POLL_TIMEOUT_MS),
      });
      const body = await res.json();
      last = res.status;
      if (done(res.status, body)) return { ms: performance.now() - since };
    } catch (error) {
      last = error.name === "TimeoutError" ? "timeout" : error.message;
    }
  }
  return { ms: null, last };
}

/** Times one event (already acknowledged at `acked`) on each instance in `observers`, concurrently. */
async function timeOn(observers, key, acked, done, into, what) {
  await Promise.all(
    Object.entries(observers).map(async ([label, instance]) => {
      const { ms, last } = await pollUntil(instance.url, key, acked, done);
      if (ms === null) into[label].failures.push({ what, last });
      else into[label].ms.push(ms);
    }),
  );
}

const tally = (labels) => Object.fromEntries(labels.map((label) => [label, { ms: [], failures: [] }]));

function stats({ ms, failures }) {
  const sorted = [...ms].sort((x, y) => x - y);
  const round = (v) => (v === undefined ? null : Math.round(v * 100) / 100);
  return {
    count: ms.length + failures.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1]),
    failures,
  };
}

async function main() {
  const database = await freshDatabase("postgres", POSTGRES_URL);
  const forgetDatabase = onInterrupt(database.drop);
  const instances = [];
  const results = {
    dialect: "postgres",
    instances: 3,
    node: process.version,
    date: new Date().toISOString(),
    loadAverage: loadavg()[0],
  };
  try {
    instances.push(await startInstance(database.url, { adminKey: ADMIN }));
    instances.push(
      await startInstance(database.url, { adminKey: ADMIN }),
      await startInstance(database.url, { adminKey: ADMIN }),
    );
    const [a, b, c] = instances;
    const observers = { B: b, C: c };
    await call(a.url, ADMIN, "POST", "/projects", { id: "bench", name: "bench" });
    await call(a.url, ADMIN, "POST", "/projects/bench/flags/f", {});

    // Flag changes: enable, disable, enable… on A; wait for a check on B and C to show each.
    const flagChanges = tally(["B", "C"]);
    for (let i = 1; i <= CHANGES; i++) {
      const enabled = i % 2 === 1;
      await call(a.url, ADMIN, "PATCH", "/projects/bench/flags/f", { status: enabled ? "enabled" : "disabled" });
      const acked = performance.now();
      await timeOn(observers, ADMIN, acked, (_, body) => body.enabled === enabled, flagChanges, `change ${i}`);
    }

    // Key revocations. Every key is first seen working on B and C, so that a 401 can only mean revoked.
    const keys = [];
    for (let i = 0; i < REVOCATIONS; i++) {
      const key = await call(a.url, ADMIN, "POST", "/projects/bench/keys", { role: "check", name: `revoke-${i}` });
      keys.push(key);
    }
    const accepted = tally(["B", "C"]);
    for (const key of keys) {
      await timeOn(observers, key.key, performance.now(), (status) => status === 200, accepted, key.id);
    }
    const unseen = [...accepted.B.failures, ...accepted.C.failures];
    if (unseen.length > 0) throw new Error(`new keys never accepted by B or C: ${JSON.stringify(unseen)}`);
    const revocations = tally(["B", "C"]);
    for (const key of keys) {
      await call(a.url, ADMIN, "DELETE", `/projects/bench/keys/${key.id}`);
      const acked = performance.now();
      await timeOn(observers, key.key, acked, (status) => status === 401, revocations, key.id);
    }

    results.flagChanges = { count: CHANGES, B: stats(flagChanges.B), C: stats(flagChanges.C) };
    results.revocations = { count: REVOCATIONS, B: stats(revocations.B), C: stats(revocations.C) };
  } finally {
    await stopInstances(instances);
    await database.drop();
    forgetDatabase();
  }

  const lines = [
    `Propagation on PostgreSQL, 3 instances (A, B, C), each wait bounded at ${BOUND_MS / 1000} s ` +
      `(load average before the run ${results.loadAverage.toFixed(2)}):`,
    `- flag change: ${CHANGES} PATCHes on A, from A's 200 until a check on B/C shows the change`,
    `- key revocation: ${REVOCATIONS} project keys revoked on A, from A's 204 until B/C first answer 401 to that key`,
    "",
    "| what | instance | p50 ms | p99 ms | max ms | not seen within the bound |",
    "|---|---|---|---|---|---|",
  ];
  const f = (v) => (v === null ? "–" : v.toFixed(2));
  for (const [what, figures] of [
    ["flag change", results.flagChanges],
    ["key revocation", results.revocations],
  ]) {
    for (const label of ["B", "C"]) {
      const s = figures[label];
      lines.push(
        `| ${what} | ${label} | ${f(s.p50)} | ${f(s.p99)} | ${f(s.max)} | ${s.failures.length} of ${s.count} |`,
      );
    }
  }
  const failed = [
    ...results.flagChanges.B.failures.map((x) => ({ ...x, on: "B" })),
    ...results.flagChanges.C.failures.map((x) => ({ ...x, on: "C" })),
    ...results.revocations.B.failures.map((x) => ({ ...x, on: "B" })),
    ...results.revocations.C.failures.map((x) => ({ ...x, on: "C" })),
  ];
  for (const x of failed) lines.push(`- not seen on ${x.on} within ${BOUND_MS} ms: ${x.what} (last answer: ${x.last})`);
  console.log(lines.join("\n"));
  if (!process.argv.includes("--no-save")) {
    mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
    writeFileSync(
      new URL("./results/propagation-postgres.json", import.meta.url),
      `${JSON.stringify(results, null, 2)}\n`,
    );
    writeFileSync(new URL("./results/propagation-postgres.md", import.meta.url), `${lines.join("\n")}\n`);
  }
  if (failed.length > 0) process.exitCode = 1;
}

main().catch(fail);
