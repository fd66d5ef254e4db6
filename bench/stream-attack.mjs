#!/usr/bin/env node
// Two attacks on the streams of one instance (issue 21), each measured as server RSS and check latency
// while it lasts. Loopback only, bounded in time: every phase stops by itself after HOLD seconds.
//  A. STREAMS non-reading project streams of one read key on a project with a 100,000-member segment
//     (long ids: a snapshot of about 9.8 MiB).
//  B. REPLAYS non-reading project streams with `Last-Event-ID: 0` on a project whose change log holds
//     about 39 MiB.
// During each, one client checks a flag in a loop (one request at a time) and the server's RSS is read
// every 200 ms from /proc. SQLite.
// Usage: npm run bench:stream-attack [-- --quick]
//   BENCH_SERVER_MAIN=<path to another build's packages/server/dist/src/main.js> runs that build instead,
//   e.g. one of main's to compare (see bench/results/stream-attack-*.md).
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { loadavg } from "node:os";
import { FLAG, freshDatabase, seed } from "./fixtures.mjs";
import { call, fail, MAIN, onInterrupt, percentile, sleep, startInstance, stopInstances } from "./instances.mjs";

const QUICK = process.argv.includes("--quick");
const STREAMS = Number(process.env.BENCH_STREAMS || 100);
const REPLAYS = Number(process.env.BENCH_REPLAYS || 10);
const HOLD_MS = Number(process.env.BENCH_HOLD_S || (QUICK ? 8 : 20)) * 1000;
const LOG_WRITES = QUICK ? 200 : 880;
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;
const CHECK = `fsk_bench_check_${randomBytes(8).toString("hex")}`;

const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
const fmt = (n, digits = 0) =>
  Number(n).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Opens a stream on a raw socket and never reads it. Answers the socket and what the head said once seen. */
function openUnread(url, path, key, headers = {}) {
  const { port } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${extra.join("")}\r\n`);
  const state = { status: 0, closed: false, socket };
  socket.once("data", (chunk) => {
    state.status = Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString("latin1"))?.[1] ?? 0);
    socket.pause(); // the attack: take the head, then read nothing
  });
  socket.on("close", () => {
    state.closed = true;
  });
  socket.on("error", () => {});
  return state;
}

/** Checks in a loop, one at a time, until `until()`; answers the latencies in ms, sorted. */
async function checkLoop(url, until) {
  const latencies = [];
  let errors = 0;
  while (!until()) {
    const started = performance.now();
    try {
      const res = await fetch(`${url}/projects/bench/flags/${FLAG}/check?actorIds=user-${latencies.length % 1000}`, {
        headers: { authorization: `Bearer ${CHECK}` },
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      if (res.status !== 200) errors++;
    } catch {
      errors++;
    }
    latencies.push(performance.now() - started);
    await sleep(5);
  }
  return { latencies: latencies.sort((a, b) => a - b), errors };
}

/** Runs `attack` for HOLD_MS beside the check loop and the RSS sampler; answers the figures. */
async function measure(server, attack) {
  const pid = server.child.pid;
  const rssBefore = rssMiB(pid);
  let done = false;
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB(pid));
  }, 200);
  const checks = checkLoop(server.url, () => done);
  const sockets = attack();
  await sleep(HOLD_MS);
  const rssEnd = rssMiB(pid);
  done = true;
  clearInterval(sampler);
  const { latencies, errors } = await checks;
  const statuses = {};
  for (const s of sockets) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  const closed = sockets.filter((s) => s.closed).length;
  for (const s of sockets) s.socket.destroy();
  return {
    rssBefore,
    peak,
    rssEnd,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1),
    checks: latencies.length,
    errors,
    statuses,
    closed,
  };
}

const row = (label, r) =>
  `| ${label} | ${fmt(r.rssBefore)} MiB | ${fmt(r.peak)} MiB | ${fmt(r.rssEnd)} MiB | ${fmt(r.p50, 1)} ms | ${fmt(r.p99, 1)} ms | ${fmt(r.max, 1)} ms | ${fmt(r.checks)} | ${Object.entries(
    r.statuses,
  )
    .map(([status, n]) => `${n}× ${status}`)
    .join(", ")}; ${r.closed} closed by the server |`;

async function phase(label, { members, memberId, prepare, attack }) {
  const database = await freshDatabase("sqlite");
  const forget = onInterrupt(database.drop);
  const instances = [];
  try {
    await seed(database.url, { flags: 10, members, memberId, checkKey: CHECK, adminKey: ADMIN });
    const server = await startInstance(database.url, { adminKey: ADMIN });
    instances.push(server);
    const read = await call(server.url, ADMIN, "POST", "/projects/bench/keys", { role: "read", name: "attacker" });
    await prepare?.(server);
    await sleep(1000); // settle
    return row(label, await measure(server, () => attack(server, read.key)));
  } finally {
    await stopInstances(instances);
    await database.drop();
    forget();
  }
}

try {
  const out = [
    `Stream attack bench, ${new Date().toISOString()}, Node.js ${process.version}, load average ${loadavg()[0].toFixed(2)}, server ${MAIN}${QUICK ? " (--quick)" : ""}`,
    "",
    `Each attack held ${HOLD_MS / 1000} s; checks one at a time (5 ms apart) throughout. RSS: the server's, before / peak / at the end.`,
    "",
    "| attack | RSS before | peak | end | check p50 | p99 | max | checks | streams |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  out.push(
    await phase(`A. ${STREAMS} non-reading streams, one read key, 100,000-member segment`, {
      members: 100_000,
      // Ids of about 90 characters: a snapshot of about 9.8 MiB, as in the issue's probe.
      memberId: (i) => `member-${String(i).padStart(8, "0")}-${"0123456789abcdef".repeat(5)}`,
      attack: (server, key) =>
        Array.from({ length: STREAMS }, () => openUnread(server.url, "/projects/bench/stream", key)),
    }),
  );
  const logIds = Array.from(
    { length: 1000 },
    (_, i) => `log-actor-${String(i).padStart(6, "0")}-${"abcdefgh".repeat(3)}`,
  );
  out.push(
    await phase(
      `B. ${REPLAYS} non-reading streams with Last-Event-ID: 0, ${LOG_WRITES} writes of 1,000 ids in the log`,
      {
        members: 10,
        prepare: async (server) => {
          const segment = await call(server.url, ADMIN, "POST", "/projects/bench/segments", { name: "churn" });
          for (let n = 0; n < LOG_WRITES; n++) {
            const body = n % 2 === 0 ? { addActors: logIds } : { removeActors: logIds };
            await call(server.url, ADMIN, "PATCH", `/projects/bench/segments/${segment.id}`, body);
          }
        },
        attack: (server, key) =>
          Array.from({ length: REPLAYS }, () =>
            openUnread(server.url, "/projects/bench/stream", key, { "Last-Event-ID": "0" }),
          ),
      },
    ),
  );
  console.log(out.join("\n"));
} catch (error) {
  fail(error);
}
