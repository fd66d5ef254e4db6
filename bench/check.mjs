#!/usr/bin/env node
// Check-path benchmark: Flagstaff's check endpoint against a bare node:http server answering the same
// JSON, under the same autocannon load from a separate process, alternating rounds so drift hits both.
// Scenarios: 10 flags; 100,000 flags; 100,000 flags and a 1,000,000-member segment on the checked flag.
// Also: cold start, RSS, PATCH throughput, first vs deep page of a 100,000-flag list.
//
//   npm run bench                 # SQLite
//   npm run bench -- --postgres   # PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres)
//   options: --duration=10 --rounds=3 --connections=100 --quick (first scenario only, for a smoke run)
//            --chart (redraw docs/performance-<dialect>.svg from bench/results/check-<dialect>.json)
//            --scenario=N (only scenario N, 1–3; partial runs write check-<dialect>-partial.json, no chart)
//            --profile[=dir] (CPU-profile the server; summarise with node bench/profile-summary.mjs <file>)
import { fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FLAG, freshDatabase, seed } from "./fixtures.mjs";
import { freePort, MAIN, onInterrupt, POSTGRES_URL, sleep, stopChild, track } from "./instances.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, v ?? "true"];
  }),
);
const DIALECT = args.postgres ? "postgres" : "sqlite";
const DURATION = Number(args.duration ?? 10);
const ROUNDS = Number(args.rounds ?? 3);
const CONNECTIONS = Number(args.connections ?? 100);
const LOAD = fileURLToPath(new URL("./load.mjs", import.meta.url));
const BARE = fileURLToPath(new URL("./bare-server.mjs", import.meta.url));
const CHECK_KEY = `fsk_bench_check_${randomBytes(8).toString("hex")}`;
const ADMIN_KEY = `fsk_bench_admin_${randomBytes(8).toString("hex")}`;

const SCENARIOS = [
  { name: "10 flags", flags: 10, members: 1_000 },
  { name: "100,000 flags", flags: 100_000, members: 1_000 },
  { name: "100,000 flags + 1M-member segment", flags: 100_000, members: 1_000_000 },
].filter((_, i) => (args.scenario ? i + 1 === Number(args.scenario) : !args.quick || i === 0));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** 1,000 check paths with 1–3 actorIds each: segment members, the attached actor, and strangers (rollout). */
function checkPaths(members) {
  const paths = [];
  let seed = 42;
  // A fixed linear congruential generator, so every run checks the same mix of actors.
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let i = 0; i < 1000; i++) {
    const count = 1 + Math.floor(rand() * 3);
    const ids = [];
    for (let j = 0; j < count; j++) {
      const r = rand();
      ids.push(
        r < 0.4 ? `member-${Math.floor(rand() * members)}` : r < 0.45 ? "vip-1" : `user-${Math.floor(rand() * 1e9)}`,
      );
    }
    paths.push(
      `/projects/bench/flags/${FLAG}/check?${ids.map((id) => `actorIds=${encodeURIComponent(id)}`).join("&")}`,
    );
  }
  return paths;
}

async function load(spec) {
  const child = track(spawn(process.execPath, [LOAD, JSON.stringify(spec)], { stdio: ["ignore", "pipe", "inherit"] }));
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  await once(child, "exit");
  return JSON.parse(out);
}

const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ (getconf CLK_TCK)

/** CPU time (user + system) a process has used so far, in microseconds, from /proc/<pid>/stat. */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** Runs a load and adds the server's CPU time per answered request: what a request costs the server. */
async function measured(pid, spec) {
  const before = cpuMicros(pid);
  const result = await load(spec);
  result.cpuMicrosPerRequest = (cpuMicros(pid) - before) / Math.max(1, result.requests);
  return result;
}

function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

async function startServer(url) {
  const port = await freePort();
  const started = performance.now();
  // --profile: write a V8 CPU profile of the server (see docs/performance.md for reading it).
  const nodeArgs = args.profile
    ? ["--cpu-prof", `--cpu-prof-dir=${args.profile === "true" ? "bench/profiles" : args.profile}`]
    : [];
  const child = track(
    spawn(process.execPath, [...nodeArgs, MAIN], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        ADMIN_API_KEY: ADMIN_KEY,
      },
      stdio: ["ignore", "ignore", "inherit"],
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  // Cold start: process start until a check answers correctly (member-0 is in the attached segment).
  for (;;) {
    try {
      const res = await fetch(`${base}/projects/bench/flags/${FLAG}/check?actorIds=member-0`, {
        headers: { authorization: `Bearer ${CHECK_KEY}` },
      });
      if (res.ok && (await res.json()).enabled === true) break;
    } catch {}
    if (performance.now() - started > 120_000) throw new Error("server did not answer a correct check in 120 s");
    await sleep(10);
  }
  return { child, base, coldStartMs: performance.now() - started };
}

async function main() {
  const results = {
    dialect: DIALECT,
    duration: DURATION,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    node: process.version,
    scenarios: [],
  };
  const barePort = await freePort();
  const bare = track(fork(BARE, [], { env: { ...process.env, PORT: String(barePort) } }));
  await once(bare, "message");
  const bareUrl = `http://127.0.0.1:${barePort}`;
  console.log(
    `Flagstaff check benchmark on ${DIALECT}: ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} alternating rounds\n`,
  );
  try {
    for (const scenario of SCENARIOS) {
      const database = await freshDatabase(DIALECT, POSTGRES_URL);
      const forgetDatabase = onInterrupt(database.drop);
      const seedStart = performance.now();
      await seed(database.url, { ...scenario, checkKey: CHECK_KEY, adminKey: ADMIN_KEY });
      const seedMs = performance.now() - seedStart;
      const server = await startServer(database.url);
      const paths = checkPaths(scenario.members);
      const headers = { authorization: `Bearer ${CHECK_KEY}` };
      await load({ url: server.base, connections: CONNECTIONS, duration: 2, headers, paths }); // warm-up
      const runs = { server: [], bare: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const spec = { connections: CONNECTIONS, duration: DURATION, headers, paths };
        runs.server.push(await measured(server.child.pid, { ...spec, url: server.base }));
        runs.bare.push(await measured(bare.pid, { ...spec, url: bareUrl }));
      }
      const memory = rssMiB(server.child.pid);
      const summary = (list) => ({
        rps: median(list.map((r) => r.rps)),
        p50: median(list.map((r) => r.p50)),
        p99: median(list.map((r) => r.p99)),
        errors: list.reduce((n, r) => n + r.errors, 0),
        non2xx: list.reduce((n, r) => n + r.non2xx, 0),
        requests: list.reduce((n, r) => n + r.requests, 0),
        cpuMicrosPerRequest: median(list.map((r) => r.cpuMicrosPerRequest)),
      });
      const entry = {
        ...scenario,
        seedSeconds: seedMs / 1000,
        coldStartMs: server.coldStartMs,
        rssMiB: memory.rss,
        peakRssMiB: memory.peak,
        server: summary(runs.server),
        bare: summary(runs.bare),
        runs,
      };
      if (scenario.flags >= 100_000 && scenario.members <= 1000)
        entry.writesAndLists = await writesAndLists(server.base);
      results.scenarios.push(entry);
      printScenario(entry);
      await stopChild(server.child);
      await database.drop();
      forgetDatabase();
    }
  } finally {
    await stopChild(bare);
  }
  printSummary(results);
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  const partial = args.quick || args.scenario;
  const name = partial ? `check-${DIALECT}-partial.json` : `check-${DIALECT}.json`;
  writeFileSync(new URL(`./results/${name}`, import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  if (!partial) writeFileSync(new URL(`../docs/performance-${DIALECT}.svg`, import.meta.url), chart(results));
}

async function writesAndLists(base) {
  const admin = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
  const patchPaths = Array.from(
    { length: 100 },
    (_, i) => `/projects/bench/flags/flag-${String(i + 1).padStart(6, "0")}`,
  );
  const bodies = Array.from({ length: 7 }, (_, i) => JSON.stringify({ description: `edit ${i}` }));
  const patch = await load({
    url: base,
    connections: 10,
    duration: 5,
    method: "PATCH",
    headers: admin,
    paths: patchPaths,
    bodies,
  });
  const cursor = Buffer.from(JSON.stringify(["flag-099000"])).toString("base64url");
  const first = await load({
    url: base,
    connections: 1,
    duration: 5,
    headers: admin,
    paths: ["/projects/bench/flags?limit=20"],
  });
  // A cursor page a little way in: set against the deep page, it shows that depth costs nothing.
  const near = Buffer.from(JSON.stringify(["flag-000100"])).toString("base64url");
  const shallow = await load({
    url: base,
    connections: 1,
    duration: 5,
    headers: admin,
    paths: [`/projects/bench/flags?limit=20&after=${near}`],
  });
  const deep = await load({
    url: base,
    connections: 1,
    duration: 5,
    headers: admin,
    paths: [`/projects/bench/flags?limit=20&after=${cursor}`],
  });
  return { patch, firstPage: first, shallowPage: shallow, deepPage: deep };
}

const fmt = (n, d = 0) => Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

function printScenario(e) {
  console.log(`## ${e.name} (segment of ${fmt(e.members)} members)`);
  console.log(
    `seeded in ${fmt(e.seedSeconds, 1)} s; cold start to first correct check ${fmt(e.coldStartMs)} ms; RSS ${fmt(e.rssMiB)} MiB (peak ${fmt(e.peakRssMiB)} MiB)`,
  );
  console.log("| server | req/s | p50 ms | p99 ms | server CPU µs/request | errors | non-2xx |");
  console.log("|---|---|---|---|---|---|---|");
  for (const [label, s] of [
    ["Flagstaff check", e.server],
    ["bare node:http", e.bare],
  ]) {
    const cpu = fmt(s.cpuMicrosPerRequest, 1);
    console.log(`| ${label} | ${fmt(s.rps)} | ${s.p50} | ${s.p99} | ${cpu} | ${s.errors} | ${s.non2xx} |`);
  }
  const efficiency = e.bare.cpuMicrosPerRequest / e.server.cpuMicrosPerRequest;
  console.log(
    `throughput Flagstaff / bare: ${fmt(e.server.rps / e.bare.rps, 2)}; CPU cost bare / Flagstaff: ${fmt(efficiency, 2)}\n`,
  );
  if (e.writesAndLists) {
    const w = e.writesAndLists;
    console.log("| writes and lists (100,000 flags) | req/s | p50 ms | p99 ms | non-2xx |");
    console.log("|---|---|---|---|---|");
    console.log(
      `| PATCH flag (10 connections) | ${fmt(w.patch.rps)} | ${w.patch.p50} | ${w.patch.p99} | ${w.patch.non2xx} |`,
    );
    console.log(
      `| list, first page (1 connection) | ${fmt(w.firstPage.rps)} | ${w.firstPage.p50} | ${w.firstPage.p99} | ${w.firstPage.non2xx} |`,
    );
    if (w.shallowPage) {
      const p = w.shallowPage;
      console.log(
        `| list, page after flag-000100 (1 connection) | ${fmt(p.rps)} | ${p.p50} | ${p.p99} | ${p.non2xx} |`,
      );
    }
    console.log(
      `| list, page after flag-099000 (1 connection) | ${fmt(w.deepPage.rps)} | ${w.deepPage.p50} | ${w.deepPage.p99} | ${w.deepPage.non2xx} |\n`,
    );
  }
}

function printSummary(results) {
  const list = results.scenarios;
  const rps = list.map((s) => s.server.rps);
  const spread = (Math.max(...rps) - Math.min(...rps)) / Math.max(...rps);
  console.log("## Summary");
  console.log(
    "| scenario | check req/s | bare req/s | throughput ratio | check CPU µs/req | bare CPU µs/req | bare/check CPU | check p99 ms | cold start ms | RSS MiB |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const s of list) {
    const cells = [
      s.name,
      fmt(s.server.rps),
      fmt(s.bare.rps),
      fmt(s.server.rps / s.bare.rps, 2),
      fmt(s.server.cpuMicrosPerRequest, 1),
      fmt(s.bare.cpuMicrosPerRequest, 1),
      fmt(s.bare.cpuMicrosPerRequest / s.server.cpuMicrosPerRequest, 2),
      s.server.p99,
      fmt(s.coldStartMs),
      fmt(s.rssMiB),
    ];
    console.log(`| ${cells.join(" | ")} |`);
  }
  console.log(`\ncheck throughput spread across scenarios: ${fmt(spread * 100, 1)} %`);
}

/** A small two-panel SVG: check and bare throughput, and check p99, per scenario. */
function chart(results) {
  const list = results.scenarios;
  const W = 720,
    H = 320,
    pad = 50,
    panel = (W - 3 * pad) / 2;
  const maxRps = Math.max(...list.flatMap((s) => [s.server.rps, s.bare.rps])) * 1.15;
  const maxP99 = Math.max(10, ...list.map((s) => s.server.p99)) * 1.15;
  const bw = panel / (list.length * 3);
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11" role="img">\n`;
  svg += `<title>Flagstaff check throughput and p99 latency against a bare node:http server (${results.dialect})</title>\n`;
  svg += `<rect width="${W}" height="${H}" fill="white"/>\n`;
  svg += `<text x="${pad}" y="20" font-size="13">Throughput, req/s (${results.dialect})</text>\n`;
  svg += `<text x="${2 * pad + panel}" y="20" font-size="13">Check p99 latency, ms (target 10)</text>\n`;
  const base = H - 60,
    height = base - 40;
  list.forEach((s, i) => {
    const x = pad + i * 3 * bw + bw / 2;
    const hS = (s.server.rps / maxRps) * height,
      hB = (s.bare.rps / maxRps) * height;
    svg += `<rect x="${x}" y="${base - hS}" width="${bw}" height="${hS}" fill="#2f6fdf"/>`;
    svg += `<rect x="${x + bw}" y="${base - hB}" width="${bw}" height="${hB}" fill="#bbb"/>`;
    svg += `<text x="${x}" y="${base - hS - 4}">${fmt(s.server.rps)}</text>`;
    svg += `<text x="${x}" y="${base + 14}">${s.name.replace(" + 1M-member segment", " + 1M seg")}</text>\n`;
    const x2 = 2 * pad + panel + i * 3 * bw + bw / 2;
    const hP = (s.server.p99 / maxP99) * height;
    svg += `<rect x="${x2}" y="${base - hP}" width="${bw * 1.5}" height="${hP}" fill="#2f6fdf"/>`;
    svg += `<text x="${x2}" y="${base - hP - 4}">${s.server.p99}</text>`;
    svg += `<text x="${x2}" y="${base + 14}">${s.name.replace(" + 1M-member segment", " + 1M seg")}</text>\n`;
  });
  const yT = base - (10 / maxP99) * height;
  svg += `<line x1="${2 * pad + panel}" x2="${W - pad / 2}" y1="${yT}" y2="${yT}" stroke="red" stroke-dasharray="4"/>\n`;
  svg += `<rect x="${pad}" y="${H - 30}" width="10" height="10" fill="#2f6fdf"/><text x="${pad + 14}" y="${H - 21}">Flagstaff check</text>`;
  svg += `<rect x="${pad + 120}" y="${H - 30}" width="10" height="10" fill="#bbb"/><text x="${pad + 134}" y="${H - 21}">bare node:http</text>\n`;
  return `${svg}</svg>\n`;
}

// --chart: redraw the chart from the last full run's results, without running anything.
const run = args.chart
  ? async () => {
      const results = JSON.parse(readFileSync(new URL(`./results/check-${DIALECT}.json`, import.meta.url), "utf8"));
      writeFileSync(new URL(`../docs/performance-${DIALECT}.svg`, import.meta.url), chart(results));
    }
  : main;

run().catch((error) => {
  console.error(error);
  process.exit(1);
});
