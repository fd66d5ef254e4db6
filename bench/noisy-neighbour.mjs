#!/usr/bin/env node
// Noisy-neighbour benchmark: does a busy project take the others down? One server process; project A
// ("noisy") and project B ("quiet"). B is read (a list page and a single flag: reads that use a pooled
// database connection, unlike checks) by a few concurrent readers while A is written to:
//
//   1. baseline      B is read alone.
//   2. writers       50 concurrent writers PATCH one flag of A as fast as they are answered.
//   3. row lock      (PostgreSQL) a transaction of our own holds A's version row (`feed_streams`, stream
//                    "noisy") for a few seconds, while 12 concurrent PATCHes go to A; then ROLLBACK.
//
// For B: reads/s (2xx), latency of every read (p50/p99/max), and failed reads by status and problem. For A:
// 2xx writes/s and every status, problem and Retry-After. A may be refused (a 503 with Retry-After when
// the server is saturated is fine); B must keep answering. The writers run in a process of their own.
//
//   npm run bench:neighbour                  # PostgreSQL (BENCH_POSTGRES_URL)
//   npm run bench:neighbour -- --sqlite      # SQLite (phase 3 is PostgreSQL only)
//   options: --strict (exit 1 when a read of B failed)   --no-save (do not write bench/results)
//   env: BENCH_PHASE_SECONDS=5 BENCH_READERS=4 BENCH_WRITERS=50 BENCH_LOCK_WRITERS=12
//        BENCH_LOCK_HOLD_SECONDS=5 BENCH_POOL_SIZE=10 (the server's DATABASE_POOL_SIZE)
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import pg from "pg";
import { drive, startDriver, summarize } from "./closed-loop.mjs";
import { freshDatabase } from "./fixtures.mjs";
import { call, fail, onInterrupt, POSTGRES_URL, sleep, startInstance, stopInstances } from "./instances.mjs";

const options = new Set(process.argv.slice(2));
const DIALECT = options.has("--sqlite") ? "sqlite" : "postgres";
const numberFrom = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const PHASE_MS = numberFrom("BENCH_PHASE_SECONDS", 5) * 1000;
const READERS = numberFrom("BENCH_READERS", 4);
const WRITERS = numberFrom("BENCH_WRITERS", 50);
const LOCK_WRITERS = numberFrom("BENCH_LOCK_WRITERS", 12);
const LOCK_HOLD_MS = numberFrom("BENCH_LOCK_HOLD_SECONDS", 5) * 1000;
const POOL_SIZE = numberFrom("BENCH_POOL_SIZE", 10);
/** Per-request timeout: far above the server's own 3 s connection timeout, so its answer is what we see. */
const TIMEOUT_MS = 10_000;
/** What else the machine was doing: the 1-minute load average before the bench started anything. */
const LOAD_AVERAGE = loadavg()[0];
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;
const headers = { authorization: `Bearer ${ADMIN}` };

const A = "noisy";
const B = "quiet";
const B_FLAGS = 20;

/** B's reads, in turn: the first page of its flag list, and one flag. Both take a pooled connection. */
const readsOfB = [{ path: `/projects/${B}/flags?limit=20` }, { path: `/projects/${B}/flags/quiet-07` }];

/** PATCHes of A's one flag; each is a real change (a percentage, an actor attached or detached). */
const writesToA = Array.from({ length: 100 }, (_, i) => ({
  method: "PATCH",
  path: `/projects/${A}/flags/hot`,
  body:
    i % 2 === 0
      ? { percentageActors: [10, 25, 50, 75][(i / 2) % 4], addActors: [`writer-${i}`] }
      : { removeActors: [`writer-${i - 1}`] },
}));

const report = [];
const print = (line = "") => {
  console.log(line);
  report.push(line);
};

/** Polls pg_stat_activity for the server's connections to the bench database; answers the peaks. */
function watchConnections(databaseUrl, excludePids) {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => {}); // the bench database is dropped with this client still in it on SIGINT
  const peak = { busy: 0, waitingOnLock: 0 };
  let running = true;
  const done = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query(
        `select count(*) filter (where state <> 'idle')::int as busy,
                count(*) filter (where wait_event_type = 'Lock')::int as waiting
           from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and pid <> all($1::int[])`,
        [excludePids],
      );
      peak.busy = Math.max(peak.busy, rows[0].busy);
      peak.waitingOnLock = Math.max(peak.waitingOnLock, rows[0].waiting);
      await sleep(100);
    }
    await client.end();
  })().catch((error) => {
    peak.error = error.message;
  });
  return async () => {
    running = false;
    await done;
    return peak;
  };
}

/**
 * Opens a transaction that holds A's version row (the row every write to A updates first), and rolls it
 * back after `ms`. Answers the backend pid and a promise of the rollback.
 */
async function holdVersionRow(databaseUrl, stream, ms) {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => {});
  await client.connect();
  const forget = onInterrupt(() => client.end());
  const { pid } = (await client.query("select pg_backend_pid() as pid")).rows[0];
  await client.query("begin");
  const { rowCount } = await client.query("update feed_streams set version = version where stream = $1", [stream]);
  if (rowCount !== 1) throw new Error(`feed_streams has no row for stream "${stream}"`);
  const released = sleep(ms).then(async () => {
    await client.query("rollback");
    await client.end();
    forget();
  });
  return { pid, released };
}

async function runPhase(server, database, { name, writers = 0, lock = false }) {
  const lockHeld = lock ? await holdVersionRow(database.url, A, LOCK_HOLD_MS) : undefined;
  const stopWatching =
    DIALECT === "postgres" ? watchConnections(database.url, lockHeld ? [lockHeld.pid] : []) : undefined;
  const load =
    writers > 0
      ? startDriver({
          url: server.url,
          concurrency: writers,
          // Outlast the readers a little, so that they are measured under the full write load throughout.
          durationMs: PHASE_MS + 500,
          timeoutMs: TIMEOUT_MS,
          headers,
          requests: writesToA,
        })
      : undefined;
  if (load) {
    await load.started;
    await sleep(250);
  }
  const b = summarize(
    await drive({
      url: server.url,
      concurrency: READERS,
      durationMs: PHASE_MS,
      timeoutMs: TIMEOUT_MS,
      headers,
      requests: readsOfB,
    }),
  );
  await lockHeld?.released;
  const a = load ? await load.result : undefined;
  const connections = stopWatching ? await stopWatching() : undefined;
  return { name, writers, lockHoldMs: lock ? LOCK_HOLD_MS : 0, b, a, connections };
}

const fmt = (n, digits = 0) =>
  n === null || n === undefined
    ? "–"
    : Number(n).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const counts = (byKey) =>
  Object.entries(byKey)
    .sort(([, x], [, y]) => y - x)
    .map(([key, n]) => `${key}×${fmt(n)}`)
    .join(", ");
const failures = (s) => (s.failed === 0 ? "0" : `${fmt(s.failed)} (${counts(failedStatuses(s))})`);
const failedStatuses = (s) => Object.fromEntries(Object.entries(s.statuses).filter(([status]) => !/^2/.test(status)));

function printResults(phases) {
  print(
    `| scenario | B reads/s | B p50 ms | B p99 ms | B max ms | B errors | A writes/s | A statuses |\n|---|---|---|---|---|---|---|---|`,
  );
  for (const p of phases) {
    const cells = [
      p.name,
      fmt(p.b.okPerSecond),
      fmt(p.b.p50, 1),
      fmt(p.b.p99, 1),
      fmt(p.b.max, 1),
      failures(p.b),
      p.a ? fmt(p.a.okPerSecond) : "–",
      p.a ? counts(p.a.statuses) : "–",
    ];
    print(`| ${cells.join(" | ")} |`);
  }
  print();
  print("B errors count reads that were not 2xx or got no answer; B latencies are of every read, failed or not.");
  print("A writes/s counts 2xx answers.");
  for (const p of phases) {
    print();
    print(`### ${p.name}`);
    print(`- B: ${fmt(p.b.requests)} reads in ${fmt(p.b.elapsedMs / 1000, 1)} s, ${fmt(p.b.ok)} answered 2xx`);
    for (const [problem, n] of Object.entries(p.b.problems)) print(`  - ${problem} ×${fmt(n)}`);
    for (const [header, n] of Object.entries(p.b.retryAfter)) print(`  - ${header} ×${fmt(n)}`);
    if (p.a) {
      print(
        `- A: ${fmt(p.a.requests)} PATCHes from ${p.writers} writers, ${fmt(p.a.ok)} answered 2xx; ` +
          `latency p50 ${fmt(p.a.p50, 1)} ms, p99 ${fmt(p.a.p99, 1)} ms, max ${fmt(p.a.max, 1)} ms`,
      );
      for (const [problem, n] of Object.entries(p.a.problems)) print(`  - ${problem} ×${fmt(n)}`);
      const refused = p.a.requests - p.a.ok;
      const withRetryAfter = Object.values(p.a.retryAfter).reduce((sum, n) => sum + n, 0);
      if (refused > 0) print(`  - Retry-After on ${fmt(withRetryAfter)} of ${fmt(refused)} refusals`);
    }
    if (p.connections) {
      print(
        `- PostgreSQL: at most ${p.connections.busy} of the server's connections busy at once, ` +
          `${p.connections.waitingOnLock} waiting on a lock (pool size ${POOL_SIZE}; sampled every 100 ms)`,
      );
      if (p.connections.error) print(`  - sampling stopped early: ${p.connections.error}`);
    }
  }
}

async function main() {
  const database = await freshDatabase(DIALECT, POSTGRES_URL);
  const forgetDatabase = onInterrupt(database.drop);
  const instances = [];
  const phases = [];
  try {
    const server = await startInstance(database.url, {
      adminKey: ADMIN,
      env: { DATABASE_POOL_SIZE: String(POOL_SIZE) },
    });
    instances.push(server);
    await call(server.url, ADMIN, "POST", "/projects", { id: A, name: "Noisy neighbour" });
    await call(server.url, ADMIN, "POST", `/projects/${A}/flags/hot`, {});
    await call(server.url, ADMIN, "PATCH", `/projects/${A}/flags/hot`, { status: "conditional" });
    await call(server.url, ADMIN, "POST", "/projects", { id: B, name: "Quiet project" });
    for (let i = 0; i < B_FLAGS; i++) {
      await call(server.url, ADMIN, "POST", `/projects/${B}/flags/quiet-${String(i).padStart(2, "0")}`, {});
    }
    // Warm-up, not recorded: connections, JIT, the pool's first connections.
    await drive({ url: server.url, concurrency: READERS, durationMs: 1000, headers, requests: readsOfB });

    print(
      `Noisy neighbour on ${DIALECT}: one server${DIALECT === "postgres" ? ` (DATABASE_POOL_SIZE ${POOL_SIZE})` : ""}, ` +
        `${READERS} readers of project B, ` +
        `${fmt(PHASE_MS / 1000, 1)} s per phase; per-request timeout ${TIMEOUT_MS / 1000} s; ` +
        `load average before the run ${LOAD_AVERAGE.toFixed(2)}`,
    );
    print();
    phases.push(await runPhase(server, database, { name: "1. baseline: B read alone" }));
    phases.push(await runPhase(server, database, { name: `2. ${WRITERS} writers PATCH A`, writers: WRITERS }));
    if (DIALECT === "postgres") {
      phases.push(
        await runPhase(server, database, {
          name: `3. A's version row locked ${fmt(LOCK_HOLD_MS / 1000, 1)} s, ${LOCK_WRITERS} writers PATCH A`,
          writers: LOCK_WRITERS,
          lock: true,
        }),
      );
    }
    printResults(phases);
    if (DIALECT === "sqlite") {
      print();
      print("Phase 3 (a lock held on A's version row by another connection) runs on PostgreSQL only.");
    }
  } finally {
    await stopInstances(instances);
    await database.drop();
    forgetDatabase();
  }

  const failedPhases = phases.filter((p) => p.b.failed > 0);
  print();
  print(
    failedPhases.length === 0
      ? "Verdict: B answered every read with 2xx in every phase."
      : `Verdict: reads of B failed in ${failedPhases
          .map((p) => `phase ${p.name.split(".")[0]} (${counts(failedStatuses(p.b))})`)
          .join(", ")}.`,
  );

  if (!options.has("--no-save")) {
    const results = {
      dialect: DIALECT,
      node: process.version,
      date: new Date().toISOString(),
      loadAverage: LOAD_AVERAGE,
      poolSize: POOL_SIZE,
      phaseSeconds: PHASE_MS / 1000,
      readers: READERS,
      writers: WRITERS,
      lockWriters: LOCK_WRITERS,
      lockHoldSeconds: LOCK_HOLD_MS / 1000,
      phases,
    };
    mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
    writeFileSync(
      new URL(`./results/neighbour-${DIALECT}.json`, import.meta.url),
      `${JSON.stringify(results, null, 2)}\n`,
    );
    writeFileSync(new URL(`./results/neighbour-${DIALECT}.md`, import.meta.url), `${report.join("\n")}\n`);
  }
  if (options.has("--strict") && failedPhases.length > 0) process.exitCode = 1;
}

main().catch(fail);
