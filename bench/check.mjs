#!/usr/bin/env node
// Check-path benchmark at saturation. Five loads run in turn, in alternating rounds so drift hits all
// alike: Flagstaff's check; a bare node:http server answering the same JSON (the runtime's limit); a
// minimal Fastify route with the check's schemas (Fastify's floor); Flagstaff's OFREP single evaluation;
// and the bare server answering the same OFREP POST after reading and parsing its body (OFREP's floor).
// The load comes from wrk (C; one core of it outruns one core of any Node server, which autocannon does
// not), pinned to one core with taskset and each server to the other, so every figure is the server's:
// its core is busy throughout (the `core busy` column says so).
// Scenarios: 10 flags; 100,000 flags; 100,000 flags and a 1,000,000-member segment on the checked flag;
// 100,000 flags in each of 5 environments.
// Also: cold start, RSS, PATCH throughput, first vs deep page of a 100,000-flag list. In the first scenario,
// the check of a second Flagstaff server on the same database with USAGE_COUNTING=false: what counting
// every evaluation for usage over time costs the check (issue 36: at most 5 % of its requests/s).
//
//   npm run bench                 # SQLite
//   npm run bench -- --postgres   # PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres)
//   options: --duration=5 --rounds=5 --connections=100 --quick (first scenario only, for a smoke run)
//            --chart (redraw docs/performance-<dialect>.svg from bench/results/check-<dialect>.json)
//            --scenario=N (only scenario N, 1–4; partial runs write check-<dialect>-partial.json, no chart)
//            --loads=server,fastify,bare,ofrep,barePost (run only these; a partial run writes no results)
//            --profile[=dir] (CPU-profile every server; summarise with node bench/profile-summary.mjs <file>)
import { fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { checkLoad, FLAG, freshDatabase, seed } from "./fixtures.mjs";
import { cpuMicros, freePort, MAIN, onInterrupt, POSTGRES_URL, sleep, stopChild, track } from "./instances.mjs";
import { canPin, ensureWrk, pin, wrk } from "./wrk.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, "").split("=");
    return [k, v ?? "true"];
  }),
);
const DIALECT = args.postgres ? "postgres" : "sqlite";
const DURATION = Number(args.duration ?? 5);
const ROUNDS = Number(args.rounds ?? 5);
const CONNECTIONS = Number(args.connections ?? 100);
const LOAD = fileURLToPath(new URL("./load.mjs", import.meta.url));
const BARE = fileURLToPath(new URL("./bare-server.mjs", import.meta.url));
const FASTIFY = fileURLToPath(new URL("./fastify-server.mjs", import.meta.url));
/** wrk runs on the first core, every server on the second: one core each, as the figures assume. */
const LOAD_CORE = 0;
const SERVER_CORE = 1;
const CHECK_KEY = `fsk_bench_check_${randomBytes(8).toString("hex")}`;
const ADMIN_KEY = `fsk_bench_admin_${randomBytes(8).toString("hex")}`;

const SCENARIOS = [
  // The first scenario also checks a flag of 10 rules × 3 conditions with attributes (issue 25).
  { name: "10 flags", flags: 10, members: 1_000, rules: true },
  { name: "100,000 flags", flags: 100_000, members: 1_000 },
  { name: "100,000 flags + 1M-member segment", flags: 100_000, members: 1_000_000 },
  // The second scenario's flags in five environments, every flag configured in each: the check key is
  // bound to the first. Set against scenario 2 in the same run, it shows what environments cost a check.
  {
    name: "100,000 flags × 5 environments",
    flags: 100_000,
    members: 1_000,
    environments: ["production", "staging", "development", "qa", "preview"],
  },
].filter((_, i) => (args.scenario ? i + 1 === Number(args.scenario) : !args.quick || i === 0));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function load(spec) {
  const child = track(spawn(process.execPath, [LOAD, JSON.stringify(spec)], { stdio: ["ignore", "pipe", "inherit"] }));
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  await once(child, "exit");
  return JSON.parse(out);
}

/**
 * Runs wrk against a server and adds the server's CPU time per answered request (what a request costs
 * it) and how busy its core was: near 100 %, the server is the limit; well under, something else is.
 */
async function measured(pid, spec) {
  const before = cpuMicros(pid);
  const started = performance.now();
  const result = await wrk({ ...spec, core: pinning ? LOAD_CORE : undefined });
  const cpu = cpuMicros(pid) - before;
  result.cpuMicrosPerRequest = cpu / Math.max(1, result.requests);
  result.coreBusy = cpu / ((performance.now() - started) * 1000);
  return result;
}

const pinning = canPin();
/** --profile: every server writes a V8 CPU profile (see docs/performance.md for reading them side by side). */
const profileArgs = args.profile
  ? ["--cpu-prof", `--cpu-prof-dir=${args.profile === "true" ? "bench/profiles" : args.profile}`]
  : [];

function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

async function startServer(url, env = {}) {
  const port = await freePort();
  const started = performance.now();
  const child = track(
    spawn(process.execPath, [...profileArgs, MAIN], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        ADMIN_API_KEY: ADMIN_KEY,
        ...env,
      },
      stdio: ["ignore", "ignore", "inherit"],
    }),
  );
  if (pinning) pin(child.pid, SERVER_CORE);
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
  ensureWrk();
  const baseline = async (file) => {
    const port = await freePort();
    const child = track(fork(file, [], { env: { ...process.env, PORT: String(port) }, execArgv: profileArgs }));
    await once(child, "message");
    if (pinning) pin(child.pid, SERVER_CORE);
    return { child, url: `http://127.0.0.1:${port}` };
  };
  const bare = await baseline(BARE);
  const fastify = await baseline(FASTIFY);
  console.log(
    `Flagstaff check benchmark on ${DIALECT}: wrk, ${CONNECTIONS} connections, ${DURATION} s per run, ${ROUNDS} alternating rounds; ` +
      (pinning
        ? `servers pinned to core ${SERVER_CORE}, wrk to core ${LOAD_CORE}\n`
        : "taskset missing: nothing pinned\n"),
  );
  results.pinned = pinning;
  try {
    for (const scenario of SCENARIOS) {
      const database = await freshDatabase(DIALECT, POSTGRES_URL);
      const forgetDatabase = onInterrupt(database.drop);
      const seedStart = performance.now();
      await seed(database.url, { ...scenario, checkKey: CHECK_KEY, adminKey: ADMIN_KEY });
      const seedMs = performance.now() - seedStart;
      const server = await startServer(database.url);
      // The same check on a server that counts nothing: the cost of usage counting, side by side.
      const uncounted = scenario.rules ? await startServer(database.url, { USAGE_COUNTING: "false" }) : undefined;
      const { paths, bodies, rulesPaths } = checkLoad(scenario.members);
      const headers = { authorization: `Bearer ${CHECK_KEY}` };
      const spec = { connections: CONNECTIONS, duration: DURATION, headers, paths };
      const ofrepSpec = {
        ...spec,
        method: "POST",
        paths: [`/ofrep/v1/evaluate/flags/${FLAG}`],
        bodies,
        headers: { ...headers, "content-type": "application/json" },
      };
      const targets = {
        server: { pid: server.child.pid, spec: { ...spec, url: server.base } },
        fastify: { pid: fastify.child.pid, spec: { ...spec, url: fastify.url } },
        bare: { pid: bare.child.pid, spec: { ...spec, url: bare.url } },
        ofrep: { pid: server.child.pid, spec: { ...ofrepSpec, url: server.base } },
        barePost: { pid: bare.child.pid, spec: { ...ofrepSpec, url: bare.url } },
        // Issue 25: a check of a flag of 10 rules × 3 conditions with attributes, in the first scenario.
        ...(scenario.rules
          ? { rules: { pid: server.child.pid, spec: { ...spec, paths: rulesPaths, url: server.base } } }
          : {}),
        ...(uncounted ? { uncounted: { pid: uncounted.child.pid, spec: { ...spec, url: uncounted.base } } } : {}),
      };
      // --loads=server,bare: only those loads (with --profile, profiles of one kind of request each).
      const names = Object.keys(targets).filter((name) => !args.loads || args.loads.split(",").includes(name));
      // Warm-up: V8 compiles each server's path before anything counts.
      for (const name of names) await wrk({ ...targets[name].spec, duration: 2 });
      const runs = { server: [], fastify: [], bare: [], ofrep: [], barePost: [], rules: [], uncounted: [] };
      for (let round = 0; round < ROUNDS; round++) {
        // Each round starts with a different server, so none always runs first (or last) in a round.
        for (let i = 0; i < names.length; i++) {
          const name = names[(round + i) % names.length];
          runs[name].push(await measured(targets[name].pid, targets[name].spec));
        }
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
        coreBusy: median(list.map((r) => r.coreBusy)),
      });
      const entry = {
        ...scenario,
        seedSeconds: seedMs / 1000,
        coldStartMs: server.coldStartMs,
        rssMiB: memory.rss,
        peakRssMiB: memory.peak,
        server: summary(runs.server),
        fastify: summary(runs.fastify),
        bare: summary(runs.bare),
        ofrep: summary(runs.ofrep),
        barePost: summary(runs.barePost),
        ...(runs.rules.length > 0 ? { rules: summary(runs.rules) } : {}),
        ...(runs.uncounted.length > 0 ? { uncounted: summary(runs.uncounted) } : {}),
        runs,
      };
      if (scenario.flags >= 100_000 && scenario.members <= 1000 && !scenario.environments)
        entry.writesAndLists = await writesAndLists(server.base);
      results.scenarios.push(entry);
      printScenario(entry);
      await stopChild(server.child);
      if (uncounted) await stopChild(uncounted.child);
      await database.drop();
      forgetDatabase();
    }
  } finally {
    await stopChild(bare.child);
    await stopChild(fastify.child);
  }
  printSummary(results);
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  const partial = args.quick || args.scenario || args.loads;
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

/** A figure for the tables; "—" for one that was not measured (a load left out with --loads). */
const fmt = (n, d = 0) =>
  Number.isFinite(Number(n))
    ? Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d })
    : "—";

const LABELS = {
  server: "Flagstaff check",
  fastify: "minimal Fastify route",
  bare: "bare node:http",
  ofrep: "Flagstaff OFREP evaluation",
  barePost: "bare node:http, POST with a JSON body",
  rules: "Flagstaff check, 10 rules × 3 conditions",
  uncounted: "Flagstaff check, USAGE_COUNTING=false",
};

function printScenario(e) {
  console.log(`## ${e.name} (segment of ${fmt(e.members)} members)`);
  console.log(
    `seeded in ${fmt(e.seedSeconds, 1)} s; cold start to first correct check ${fmt(e.coldStartMs)} ms; RSS ${fmt(e.rssMiB)} MiB (peak ${fmt(e.peakRssMiB)} MiB)`,
  );
  console.log("| server | req/s | × bare | p50 ms | p99 ms | server CPU µs/request | core busy | errors | non-2xx |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const name of ["server", "fastify", "bare", "ofrep", "barePost", "rules", "uncounted"]) {
    if (!e.runs[name] || e.runs[name].length === 0) continue; // not among --loads
    const s = e[name];
    const cells = [
      LABELS[name],
      fmt(s.rps),
      fmt(s.rps / e.bare.rps, 2),
      fmt(s.p50, 2),
      fmt(s.p99, 2),
      fmt(s.cpuMicrosPerRequest, 1),
      `${fmt(s.coreBusy * 100)} %`,
      s.errors,
      s.non2xx,
    ];
    console.log(`| ${cells.join(" | ")} |`);
  }
  console.log(
    `check / bare ${fmt(e.server.rps / e.bare.rps, 2)}; check / Fastify ${fmt(e.server.rps / e.fastify.rps, 2)}; ` +
      `OFREP CPU per request / check's ${fmt(e.ofrep.cpuMicrosPerRequest / e.server.cpuMicrosPerRequest, 2)} ` +
      `(bare POST / bare GET ${fmt(e.barePost.cpuMicrosPerRequest / e.bare.cpuMicrosPerRequest, 2)}); ` +
      `OFREP / bare POST ${fmt(e.ofrep.rps / e.barePost.rps, 2)}` +
      (e.rules
        ? `; 10 rules × 3 conditions / plain check: req/s ${fmt(e.rules.rps / e.server.rps, 2)}, CPU per request ${fmt(e.rules.cpuMicrosPerRequest / e.server.cpuMicrosPerRequest, 2)} (target: req/s ≥ 0.8)`
        : "") +
      (e.uncounted
        ? `; counting usage: check req/s ${fmt(e.server.rps / e.uncounted.rps, 3)} × uncounted, CPU per request ${fmt(e.server.cpuMicrosPerRequest / e.uncounted.cpuMicrosPerRequest, 3)} × (target: req/s ≥ 0.95)`
        : "") +
      "\n",
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
  console.log("## Summary");
  console.log(
    "| scenario | check req/s | Fastify req/s | bare req/s | check / bare | check / Fastify | check CPU µs/req | bare CPU µs/req | check p99 ms | OFREP req/s | OFREP CPU / check's | bare POST CPU / bare GET's | OFREP / bare POST | cold start ms | RSS MiB |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const s of results.scenarios) {
    const cells = [
      s.name,
      fmt(s.server.rps),
      fmt(s.fastify.rps),
      fmt(s.bare.rps),
      fmt(s.server.rps / s.bare.rps, 2),
      fmt(s.server.rps / s.fastify.rps, 2),
      fmt(s.server.cpuMicrosPerRequest, 1),
      fmt(s.bare.cpuMicrosPerRequest, 1),
      fmt(s.server.p99, 2),
      fmt(s.ofrep.rps),
      fmt(s.ofrep.cpuMicrosPerRequest / s.server.cpuMicrosPerRequest, 2),
      s.barePost ? fmt(s.barePost.cpuMicrosPerRequest / s.bare.cpuMicrosPerRequest, 2) : "—",
      s.barePost ? fmt(s.ofrep.rps / s.barePost.rps, 2) : "—",
      fmt(s.coldStartMs),
      fmt(s.rssMiB),
    ];
    console.log(`| ${cells.join(" | ")} |`);
  }
  // What five environments cost a check: the same 100,000 flags in one environment and in five.
  const one = results.scenarios.find((e) => e.flags === 100_000 && e.members <= 1000 && !e.environments);
  const five = results.scenarios.find((e) => e.environments);
  if (one && five) {
    const ratio = (e) => e.server.cpuMicrosPerRequest / e.bare.cpuMicrosPerRequest;
    console.log(
      `\n5 environments against 1 (100,000 flags): check req/s ${fmt(five.server.rps / one.server.rps, 3)} ×; ` +
        `check CPU per request ÷ bare's ${fmt(ratio(five), 2)} against ${fmt(ratio(one), 2)}; ` +
        `RSS ${fmt(five.rssMiB)} against ${fmt(one.rssMiB)} MiB; cold start ${fmt(five.coldStartMs)} against ${fmt(one.coldStartMs)} ms`,
    );
  }
}

const short = (name) => name.replace(" + 1M-member segment", " + 1M seg").replace(" × 5 environments", " × 5 envs");

/** A small two-panel SVG: check and bare throughput, and check p99, per scenario. */
function chart(results) {
  const list = results.scenarios;
  const W = 720,
    H = 320,
    pad = 50,
    panel = (W - 3 * pad) / 2;
  const maxRps = Math.max(...list.flatMap((s) => [s.server.rps, s.bare.rps, s.fastify?.rps ?? 0])) * 1.15;
  const maxP99 = Math.max(5, ...list.map((s) => s.server.p99)) * 1.15;
  const bw = panel / (list.length * 4);
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11" role="img">\n`;
  svg += `<title>Flagstaff check throughput and p99 latency against a bare node:http server (${results.dialect})</title>\n`;
  svg += `<rect width="${W}" height="${H}" fill="white"/>\n`;
  svg += `<text x="${pad}" y="20" font-size="13">Throughput, req/s (${results.dialect})</text>\n`;
  svg += `<text x="${2 * pad + panel}" y="20" font-size="13">Check p99 latency, ms (target 5)</text>\n`;
  const base = H - 60,
    height = base - 40;
  list.forEach((s, i) => {
    const x = pad + i * 4 * bw + bw / 2;
    const hS = (s.server.rps / maxRps) * height,
      hF = ((s.fastify?.rps ?? 0) / maxRps) * height,
      hB = (s.bare.rps / maxRps) * height;
    svg += `<rect x="${x}" y="${base - hS}" width="${bw}" height="${hS}" fill="#2f6fdf"/>`;
    svg += `<rect x="${x + bw}" y="${base - hF}" width="${bw}" height="${hF}" fill="#7fb07f"/>`;
    svg += `<rect x="${x + 2 * bw}" y="${base - hB}" width="${bw}" height="${hB}" fill="#bbb"/>`;
    svg += `<text x="${x}" y="${base - hS - 4}">${fmt(s.server.rps)}</text>`;
    svg += `<text x="${x}" y="${base + 14}">${short(s.name)}</text>\n`;
    const x2 = 2 * pad + panel + i * 4 * bw + bw / 2;
    const hP = (s.server.p99 / maxP99) * height;
    svg += `<rect x="${x2}" y="${base - hP}" width="${bw * 1.5}" height="${hP}" fill="#2f6fdf"/>`;
    svg += `<text x="${x2}" y="${base - hP - 4}">${fmt(s.server.p99, 1)}</text>`;
    svg += `<text x="${x2}" y="${base + 14}">${short(s.name)}</text>\n`;
  });
  const yT = base - (5 / maxP99) * height;
  svg += `<line x1="${2 * pad + panel}" x2="${W - pad / 2}" y1="${yT}" y2="${yT}" stroke="red" stroke-dasharray="4"/>\n`;
  svg += `<rect x="${pad}" y="${H - 30}" width="10" height="10" fill="#2f6fdf"/><text x="${pad + 14}" y="${H - 21}">Flagstaff check</text>`;
  svg += `<rect x="${pad + 120}" y="${H - 30}" width="10" height="10" fill="#7fb07f"/><text x="${pad + 134}" y="${H - 21}">minimal Fastify</text>`;
  svg += `<rect x="${pad + 240}" y="${H - 30}" width="10" height="10" fill="#bbb"/><text x="${pad + 254}" y="${H - 21}">bare node:http</text>\n`;
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
