#!/usr/bin/env node
// One instance as its work grows (issue 34), each figure beside a baseline measured in the same run.
//
// The reconnect storm (a deploy): a project of FLAGS flags (10,000), STREAMS project streams (200) opened
// at once, each read until its snapshot has arrived, at a project version no stream has seen (a flag
// changes first, so nothing is left over from warming up).
//   - The server's CPU per stream opened, and the time until every snapshot has arrived, with nothing else
//     running.
//   - Checks at a steady RATE per second (500) during the storm: p50, p99, max and how many took over
//     100 ms, beside the same checks with no stream opening (the baseline).
// With --baseline=<another build's packages/server/dist/src/main.js> the same runs on that build too, on
// the same database, in the same run.
//
// The streams are read by a child process of their own, so that reading megabytes of snapshots does not
// delay the checks' clock in this one. The server runs on SQLite (--postgres: PostgreSQL).
//
// OFREP refetch: BULK (50) bulk evaluations of the whole project at once with the check key, after a
// change (what every browser on the page does on a refetchEvaluation), while checks run at RATE. They too
// are read by the child process (an earlier version read them here, which delayed the checks' clock).
//
// --gzip: every stream asks for compression (each event a gzip member), as the SDK does on Node.js.
//
//   npm run bench:scale [-- --flags=10000 --streams=200 --rate=500 --seconds=4 --bulk=50 --fanout=5000 --gzip --baseline=…]
import { readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { FLAG, freshDatabase } from "./fixtures.mjs";
import {
  call,
  cpuMicros,
  fail,
  MAIN,
  onInterrupt,
  POSTGRES_URL,
  percentile,
  sleep,
  startInstance,
} from "./instances.mjs";
import { streamReader } from "./stream-readers.mjs";

/** --gzip: the streams ask for compression (Flagstaff-Stream-Encoding: gzip), as the SDK does on Node.js. */
const GZIP = process.argv.includes("--gzip");

const ADMIN = "bench-admin-key-0123456789";
const CHECK = "bench-check-key-0123456789";

/** Opens `count` streams at once from a reader process, each closed once its snapshot is in. */
async function storm(url, count) {
  const reader = streamReader();
  try {
    return await reader.send({ cmd: "open", url, key: ADMIN, count, keep: false, gzip: GZIP });
  } finally {
    reader.stop();
  }
}

/**
 * The server event loop's longest stall since the last call, in ms: prom-client's
 * nodejs_eventloop_lag_max_seconds, which a scrape reads and resets. Beside the checks' latencies (which
 * also hold the time the machine's two cores spent on the readers and the checks' client), it tells how
 * long the server itself kept the loop busy.
 */
async function loopStallMs(url) {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const seconds = /\nflagstaff_nodejs_eventloop_lag_max_seconds (\S+)/.exec(await res.text())?.[1];
  return seconds === undefined ? undefined : Number(seconds) * 1000;
}

/** Checks at a steady rate until `stop()`; answers their latencies, in ms. */
function steadyChecks(url, rate) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const latencies = [];
  let failed = 0;
  let i = 0;
  const perTick = rate / 100;
  let owed = 0;
  const timer = setInterval(() => {
    for (owed += perTick; owed >= 1; owed--) {
      const started = performance.now();
      const path = `/projects/bench/flags/${FLAG}/check?actorIds=member-${i++ % 1000}`;
      const req = request(`${url}${path}`, { agent, headers: { authorization: `Bearer ${CHECK}` } }, (res) => {
        res.resume();
        res.on("end", () => {
          latencies.push(performance.now() - started);
          if (res.statusCode !== 200) failed++;
        });
      });
      req.on("error", () => failed++);
      req.end();
    }
  }, 10);
  return async () => {
    clearInterval(timer);
    await sleep(300); // the last ones answer
    agent.destroy();
    const sorted = Float64Array.from(latencies).sort();
    return {
      checks: sorted.length,
      failed,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1],
      over100: sorted.filter((ms) => ms > 100).length,
      over25: sorted.filter((ms) => ms > 25).length,
    };
  };
}

/** Moves the project's version (a flag's status), so the next snapshot is one no stream has had. */
async function moveVersion(url, round) {
  await call(url, ADMIN, "PATCH", "/projects/bench/flags/flag-000001", {
    description: `round ${round}`,
    status: round % 2 === 0 ? "enabled" : "disabled",
  });
  await sleep(100);
}

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);

/** Streams per reader process (each stream is a socket on both sides). */
const STREAMS_PER_READER = 2500;

/**
 * The fan-out: FANOUT streams of a small project (10 flags: what is measured is the change, not the
 * snapshots) stay open (the server's RSS before and after gives what one holds), then one of its flags
 * changes while checks run at RATE: when each stream got the change, from the write's start.
 */
async function fanOut(instance, args) {
  const pid = instance.child.pid;
  const project = `fanout-${Date.now()}`;
  await call(instance.url, ADMIN, "POST", "/projects", { id: project, name: "Fan-out" });
  for (let i = 0; i < 10; i++) await call(instance.url, ADMIN, "POST", `/projects/${project}/flags/flag-${i}`, {});
  const readers = Array.from({ length: Math.ceil(args.fanout / STREAMS_PER_READER) }, () => streamReader());
  try {
    const rssBefore = rssKiB(pid);
    let left = args.fanout;
    await Promise.all(
      readers.map((reader) => {
        const count = Math.min(left, STREAMS_PER_READER);
        left -= count;
        return reader.send({ cmd: "open", url: instance.url, project, key: ADMIN, count, keep: true, gzip: GZIP });
      }),
    );
    await sleep(1000);
    const perStreamKiB = (rssKiB(pid) - rssBefore) / args.fanout;
    const during = steadyChecks(instance.url, args.rate);
    await sleep(1000);
    await loopStallMs(instance.url);
    const wrote = performance.timeOrigin + performance.now();
    await call(instance.url, ADMIN, "PATCH", `/projects/${project}/flags/flag-1`, { status: "enabled" });
    const seen = await Promise.all(
      readers.map((reader) => reader.send({ cmd: "await", first: true, timeoutMs: 10_000 })),
    );
    await sleep(500);
    const loopMax = await loopStallMs(instance.url);
    const checks = await during();
    const delivery = seen.flatMap((r) => r.arrivals.map((t) => t - wrote)).sort((a, b) => a - b);
    return {
      perStreamKiB,
      missing: seen.reduce((n, r) => n + r.missing, 0),
      p50: percentile(delivery, 50),
      p99: percentile(delivery, 99),
      max: delivery[delivery.length - 1],
      checks,
      loopMax,
    };
  } finally {
    for (const reader of readers) reader.stop();
  }
}

/**
 * OFREP clients refetching after a change: BULK concurrent bulk evaluations of the whole project (what
 * every browser does on a refetchEvaluation) while checks run at RATE.
 */
async function ofrepRefetch(instance, args) {
  await moveVersion(instance.url, 4);
  // Read by a process of their own: 50 answers of 840 KiB would otherwise delay this one's clock.
  const reader = streamReader();
  try {
    const during = steadyChecks(instance.url, args.rate);
    await sleep(500);
    await loopStallMs(instance.url);
    const answers = await reader.send({ cmd: "bulk", url: instance.url, key: CHECK, count: args.bulk });
    await sleep(500);
    const loopMax = await loopStallMs(instance.url);
    const checks = await during();
    return { ...answers, checks, loopMax };
  } finally {
    reader.stop();
  }
}

async function measure(label, main, databaseUrl, args) {
  const instance = await startInstance(databaseUrl, {
    adminKey: ADMIN,
    main,
    env: {
      STREAM_MAX_PER_KEY: String(Math.max(args.streams, args.fanout) * 2),
      STREAM_MAX_PER_INSTANCE: String(Math.max(args.streams, args.fanout) * 2),
      LOG_LEVEL: "error",
    },
  });
  try {
    // Warm up: checks, and one stream's snapshot (at a version the measured storms do not use).
    const warm = steadyChecks(instance.url, args.rate);
    await storm(instance.url, 2);
    await sleep(1000);
    await warm();

    const quiet = steadyChecks(instance.url, args.rate);
    await sleep(args.seconds * 1000);
    const baseline = await quiet();

    await moveVersion(instance.url, 1);
    const cpuBefore = cpuMicros(instance.child.pid);
    const alone = await storm(instance.url, args.streams);
    const cpuPerStream = (cpuMicros(instance.child.pid) - cpuBefore) / args.streams / 1000;

    await moveVersion(instance.url, 2);
    const during = steadyChecks(instance.url, args.rate);
    await sleep(500);
    await loopStallMs(instance.url);
    const withChecks = await storm(instance.url, args.streams);
    const loopMax = await loopStallMs(instance.url);
    await sleep(Math.max(0, args.seconds * 1000 - withChecks.allMs - 500));
    const checks = await during();

    const ofrep = args.bulk > 0 ? await ofrepRefetch(instance, args) : undefined;
    const fanout = args.fanout > 0 ? await fanOut(instance, args) : undefined;
    return { label, baseline, cpuPerStream, alone, withChecks, checks, loopMax, ofrep, fanout };
  } finally {
    await instance.stop();
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      flags: { type: "string", default: "10000" },
      streams: { type: "string", default: "200" },
      rate: { type: "string", default: "500" },
      seconds: { type: "string", default: "4" },
      fanout: { type: "string", default: "5000" },
      bulk: { type: "string", default: "50" },
      baseline: { type: "string" },
      postgres: { type: "boolean", default: false },
      out: { type: "string" },
      gzip: { type: "boolean", default: false },
    },
  });
  const args = {
    flags: Number(values.flags),
    streams: Number(values.streams),
    rate: Number(values.rate),
    seconds: Number(values.seconds),
    fanout: Number(values.fanout),
    bulk: Number(values.bulk),
  };
  const dialect = values.postgres ? "postgres" : "sqlite";
  const builds = [{ label: "this build", main: MAIN, fixtures: "./fixtures.mjs" }];
  if (values.baseline) {
    // The baseline's own fixtures seed its database: each build migrates only to its own schema.
    const root = resolve(dirname(values.baseline), "../../../..");
    builds.push({
      label: "baseline",
      main: values.baseline,
      fixtures: pathToFileURL(join(root, "bench/fixtures.mjs")).href,
    });
  }
  const databases = [];
  onInterrupt(() => Promise.all(databases.map((d) => d.drop())));
  try {
    for (const build of builds) {
      build.database = await freshDatabase(dialect, POSTGRES_URL);
      databases.push(build.database);
      const { seed } = await import(build.fixtures);
      await seed(build.database.url, { flags: args.flags, members: 1000, checkKey: CHECK, adminKey: ADMIN });
    }
    const load = loadavg()[0].toFixed(2);
    const results = [];
    // Alternating, so that drift in the machine's load hits both builds alike.
    for (let round = 0; round < 2; round++)
      for (const { label, main, database } of builds) results.push(await measure(label, main, database.url, args));
    const ms = (n) => (n === undefined ? "–" : n.toFixed(1));
    const lines = [
      `Node ${process.version}, ${dialect}, ${args.flags.toLocaleString("en")} flags, ${args.streams} streams opened at once${GZIP ? " (compressed: Flagstaff-Stream-Encoding: gzip)" : ""}, checks at ${args.rate}/s, load average ${load} before, ${loadavg()[0].toFixed(2)} after`,
      "",
      "| build | server CPU ms per stream opened | all snapshots arrived, ms (alone) | checks: p50 / p99 / max ms, none opening (baseline) | checks: p50 / p99 / max ms during the storm | checks over 100 ms during it | server loop's longest stall during it, ms | all snapshots arrived, ms (with checks) |",
      "|---|---:|---:|---:|---:|---:|---:|---:|",
      ...results.map(
        (r) =>
          `| ${r.label} | ${r.cpuPerStream.toFixed(2)} | ${Math.round(r.alone.allMs)}${r.alone.failed ? ` (${r.alone.failed} failed: ${r.alone.failures.join(", ")})` : ""} | ${ms(r.baseline.p50)} / ${ms(r.baseline.p99)} / ${ms(r.baseline.max)} | ${ms(r.checks.p50)} / ${ms(r.checks.p99)} / ${ms(r.checks.max)} | ${r.checks.over100} of ${r.checks.checks}${r.checks.failed ? ` (${r.checks.failed} failed)` : ""} | ${ms(r.loopMax)} | ${Math.round(r.withChecks.allMs)}${r.withChecks.failed ? ` (${r.withChecks.failed} failed: ${r.withChecks.failures.join(", ")})` : ""} |`,
      ),
    ];
    if (args.bulk > 0) {
      lines.push(
        "",
        `${args.bulk} OFREP bulk evaluations of the whole project at once after a change (check key), checks at ${args.rate}/s:`,
        "",
        "| build | bulk evaluations: p50 / slowest ms | failed | checks: p50 / p99 / max ms meanwhile | checks over 25 ms | server loop's longest stall, ms |",
        "|---|---:|---:|---:|---:|---:|",
        ...results.map(({ label, ofrep: o }) =>
          o === undefined
            ? `| ${label} | – | – | – | – | – |`
            : `| ${label} | ${ms(o.p50)} / ${ms(o.max)} | ${o.failed} | ${ms(o.checks.p50)} / ${ms(o.checks.p99)} / ${ms(o.checks.max)} | ${o.checks.over25} of ${o.checks.checks} | ${ms(o.loopMax)} |`,
        ),
      );
    }
    if (args.fanout > 0) {
      lines.push(
        "",
        `${args.fanout.toLocaleString("en")} streams open, one flag changed while checks run at ${args.rate}/s:`,
        "",
        "| build | server RSS per open stream, KiB | change arrived: p50 / p99 / max ms after the write began | streams it did not reach in 10 s | checks: p50 / p99 / max ms meanwhile | checks over 25 ms | server loop's longest stall, ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
        ...results.map(({ label, fanout: f }) =>
          f === undefined
            ? `| ${label} | – | – | – | – | – | – |`
            : `| ${label} | ${f.perStreamKiB.toFixed(1)} | ${ms(f.p50)} / ${ms(f.p99)} / ${ms(f.max)} | ${f.missing} | ${ms(f.checks.p50)} / ${ms(f.checks.p99)} / ${ms(f.checks.max)} | ${f.checks.over25} of ${f.checks.checks} | ${ms(f.loopMax)} |`,
        ),
      );
    }
    console.log(lines.join("\n"));
    if (values.out) writeFileSync(values.out, `${lines.join("\n")}\n`);
  } finally {
    for (const database of databases) await database.drop();
  }
}

await main().catch(fail);
