#!/usr/bin/env node
// What the next-tick fix costs the routes that await the database. The fix enables an async hook for a
// moment at start, which turns V8's PromiseHook protector off for good (docs/performance.md, "The slow
// state and its fix"), so optimised code stops inlining promise operations. This bench runs two servers
// side by side on the same SQLite fixture, one as shipped and one with the fix's module swapped for a
// no-op (bench/without-next-tick-fix.mjs), and loads each, in alternating rounds, with PATCHes of flag
// descriptions (each a real write: a transaction, history, change log) and with flag list reads.
// Each server is pinned to the second core and the load generator to the first, as in bench/check.mjs.
//
//   npm run bench:writes -- [--rounds=5] [--duration=5] [--connections=10]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { freshDatabase, seed } from "./fixtures.mjs";
import { cpuMicros, onInterrupt, startInstance, stopChild, track } from "./instances.mjs";
import { canPin, pin } from "./wrk.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, v ?? "true"];
  }),
);
const ROUNDS = Number(args.rounds ?? 5);
const DURATION = Number(args.duration ?? 5);
const CONNECTIONS = Number(args.connections ?? 10);
const LOAD = fileURLToPath(new URL("./load.mjs", import.meta.url));
const WITHOUT = fileURLToPath(new URL("./without-next-tick-fix.mjs", import.meta.url));
const ADMIN_KEY = `fsk_bench_admin_${randomBytes(8).toString("hex")}`;
const CHECK_KEY = `fsk_bench_check_${randomBytes(8).toString("hex")}`;
const pinning = canPin();

async function start(url, nodeArgs) {
  const server = await startInstance(url, { adminKey: ADMIN_KEY, nodeArgs });
  if (pinning) pin(server.child.pid, 1);
  return { base: server.url, child: server.child };
}

async function load(spec) {
  const argv = [LOAD, JSON.stringify(spec)];
  const child = track(
    pinning
      ? spawn("taskset", ["-c", "0", process.execPath, ...argv], { stdio: ["ignore", "pipe", "inherit"] })
      : spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "inherit"] }),
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  await once(child, "exit");
  return JSON.parse(out);
}

const admin = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
const LOADS = {
  patch: {
    method: "PATCH",
    headers: admin,
    paths: Array.from({ length: 100 }, (_, i) => `/projects/bench/flags/flag-${String(i + 1).padStart(6, "0")}`),
    bodies: Array.from({ length: 7 }, (_, i) => JSON.stringify({ description: `edit ${i}` })),
  },
  list: { method: "GET", headers: admin, paths: ["/projects/bench/flags?limit=20"] },
};

async function measure(server, name) {
  const before = cpuMicros(server.child.pid);
  const r = await load({ url: server.base, connections: CONNECTIONS, duration: DURATION, ...LOADS[name] });
  return { rps: r.rps, us: (cpuMicros(server.child.pid) - before) / r.requests, non2xx: r.non2xx };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dbs = [];
const servers = [];
onInterrupt(async () => {
  for (const s of servers) await stopChild(s.child);
  for (const d of dbs) await d.drop();
});
try {
  console.log(
    `Writes with and without the next-tick fix (SQLite, 1,000 flags, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s)`,
  );
  const kinds = [
    ["as shipped (fix on)", []],
    ["fix swapped out", ["--import", WITHOUT]],
  ];
  for (const [, nodeArgs] of kinds) {
    const db = await freshDatabase("sqlite");
    dbs.push(db);
    await seed(db.url, { flags: 1000, members: 1000, checkKey: CHECK_KEY, adminKey: ADMIN_KEY });
    servers.push(await start(db.url, nodeArgs));
  }
  const results = kinds.map(() => ({ patch: [], list: [] }));
  for (const s of servers)
    for (const name of Object.keys(LOADS))
      await load({ url: s.base, connections: CONNECTIONS, duration: 2, ...LOADS[name] });
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const name of Object.keys(LOADS))
      for (const i of order) results[i][name].push(await measure(servers[i], name));
  }
  console.log("| server | PATCH req/s | PATCH CPU µs/req | list req/s | list CPU µs/req | non-2xx |");
  console.log("|---|---:|---:|---:|---:|---:|");
  kinds.forEach(([label], i) => {
    const r = results[i];
    const fmt = (xs, key, digits) => median(xs.map((x) => x[key])).toFixed(digits);
    const non2xx = [...r.patch, ...r.list].reduce((n, x) => n + x.non2xx, 0);
    console.log(
      `| ${label} | ${fmt(r.patch, "rps", 0)} | ${fmt(r.patch, "us", 0)} | ${fmt(r.list, "rps", 0)} | ${fmt(r.list, "us", 0)} | ${non2xx} |`,
    );
  });
} finally {
  for (const s of servers) await stopChild(s.child);
  for (const d of dbs) await d.drop();
}
