#!/usr/bin/env node
// Streaming and in-process evaluation, measured:
//  1. Local evaluations per second on one core (the state loaded from the stream, evaluated with
//     @flagstaff/core's `evaluateFlag` and mapped by `resolutionOf`, as the SDK does), beside the remote
//     check's req/s in the same run
//     (autocannon in its own process, the server in its own).
//  2. Propagation on PostgreSQL: CLIENTS stream clients spread over two instances, CHANGES changes written
//     on one; for each client and change, the time from the write's answer to the change's arrival; every
//     change must arrive, once, in order.
//  3. What a connected client costs: server RSS per idle stream and server CPU with them all idle.
//  4. A project with a 1,000,000-member segment: snapshot size and time to ready.
// Usage: npm run bench:stream [-- --quick]   (BENCH_POSTGRES_URL; --quick: fewer clients, changes, members)
import { fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { evaluateFlag, ProjectState, resolutionOf } from "@flagstaff/core";
import { createParser } from "eventsource-parser";
import { FLAG, freshDatabase, seed } from "./fixtures.mjs";
import {
  call,
  fail,
  onInterrupt,
  POSTGRES_URL,
  percentile,
  sleep,
  startInstance,
  stopInstances,
} from "./instances.mjs";

const QUICK = process.argv.includes("--quick");
const CLIENTS = Number(process.env.BENCH_CLIENTS || (QUICK ? 200 : 1000));
const CHANGES = Number(process.env.BENCH_CHANGES || (QUICK ? 200 : 1000));
const MEMBERS = QUICK ? 100_000 : 1_000_000;
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;
const CHECK = `fsk_bench_check_${randomBytes(8).toString("hex")}`;
const CLOCK_TICKS_PER_SECOND = 100;

const cpuMicros = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
};
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
const fmt = (n, digits = 0) =>
  Number(n).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * Opens a project stream and parses it: `onEvent(event, data, receivedAt)` for every event. Answers
 * { ready (the first snapshot), close }.
 */
async function openStream(url, key, onEvent) {
  const abort = new AbortController();
  const res = await fetch(`${url}/projects/bench/stream`, {
    headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
    signal: abort.signal,
  });
  if (res.status !== 200) throw new Error(`stream: ${res.status} ${await res.text()}`);
  let resolveReady;
  const ready = new Promise((resolve) => {
    resolveReady = resolve;
  });
  const parser = createParser({
    onEvent(message) {
      const at = performance.now();
      const data = JSON.parse(message.data);
      onEvent(message.event, data, at);
      if (message.event === "snapshot") resolveReady(data);
    },
  });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {}
  })();
  return { ready, close: () => abort.abort() };
}

/** Runs autocannon (bench/load.mjs) in its own process. */
function load(spec) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL("./load.mjs", import.meta.url)), JSON.stringify(spec)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load exited ${code}`))));
  });
}

/** Evaluations per second in a child process (one core, nothing else on its event loop). */
function localRate(state, seconds) {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ["--local-worker"], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    child.on("message", resolve);
    child.on("error", reject);
    child.send({ state, seconds });
  });
}

if (process.argv.includes("--local-worker")) {
  process.once("message", ({ state, seconds }) => {
    const project = ProjectState.fromJSON(state);
    const flag = project.flagsByName.get(FLAG);
    const contexts = Array.from({ length: 4096 }, (_, i) => ({ actorIds: [`user-${i}`] }));
    // What the SDK's local evaluator gives the engine: the state's members, segment conditions and flags.
    const resolver = {
      isMember: project.isMember,
      segmentConditions: (id) => project.segmentConditions(id),
      flag: (name) => project.flag(name),
      now: Date.now,
      random: Math.random,
    };
    let n = 0;
    let on = 0;
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      for (let i = 0; i < 100_000; i++)
        if (resolutionOf(flag, evaluateFlag(flag, contexts[(n + i) & 4095], resolver)).enabled) on++;
      n += 100_000;
    }
    process.send({ perSecond: n / seconds, on });
    process.exit(0);
  });
}

async function localVersusRemote(out) {
  const database = await freshDatabase("sqlite");
  const forget = onInterrupt(database.drop);
  const instances = [];
  try {
    await seed(database.url, { flags: 100, members: 10_000, checkKey: CHECK, adminKey: ADMIN });
    const server = await startInstance(database.url, { adminKey: ADMIN });
    instances.push(server);
    const read = await call(server.url, ADMIN, "POST", "/projects/bench/keys", { role: "read", name: "bench" });
    let state;
    const stream = await openStream(server.url, read.key, (event, data) => {
      if (event === "snapshot") state = data.state;
    });
    await stream.ready;
    stream.close();
    const local = await localRate(state, QUICK ? 2 : 5);
    const paths = Array.from({ length: 2000 }, (_, i) => `/projects/bench/flags/${FLAG}/check?actorIds=user-${i}`);
    const remote = await load({
      url: server.url,
      connections: 50,
      duration: QUICK ? 3 : 8,
      headers: { authorization: `Bearer ${CHECK}` },
      paths,
    });
    out.push("## 1. Local evaluation beside the remote check (SQLite, 100 flags, a 10,000-member segment)", "");
    out.push("| | per second | p99 |", "|---|---:|---:|");
    out.push(`| local \`evaluateFlag\` (one core, state from the stream) | ${fmt(local.perSecond)} | – |`);
    out.push(`| remote check (autocannon, 50 connections) | ${fmt(remote.rps)} | ${fmt(remote.p99)} ms |`);
    out.push("", `Local is ${fmt(local.perSecond / remote.rps)} × the remote check.`, "");
  } finally {
    await stopInstances(instances);
    await database.drop();
    forget();
  }
}

async function propagationAndCost(out) {
  const database = await freshDatabase("postgres", POSTGRES_URL);
  const forget = onInterrupt(database.drop);
  const instances = [];
  const streams = [];
  try {
    await seed(database.url, { flags: 10, members: 10, checkKey: CHECK, adminKey: ADMIN });
    const a = await startInstance(database.url, { adminKey: ADMIN });
    const b = await startInstance(database.url, { adminKey: ADMIN });
    instances.push(a, b);
    const read = await call(a.url, ADMIN, "POST", "/projects/bench/keys", { role: "read", name: "bench" });
    await sleep(500); // the key reaches B

    // 3. Cost of idle streams, measured on B before any change.
    const rssBefore = rssKiB(b.child.pid);
    const arrivals = Array.from({ length: CLIENTS }, () => new Map());
    const outOfOrder = { count: 0 };
    for (let i = 0; i < CLIENTS; i++) {
      const target = i % 2 === 0 ? a : b;
      let last = 0;
      const stream = await openStream(target.url, read.key, (event, data, at) => {
        if (event !== "change") return;
        if (data.version <= last) outOfOrder.count++;
        last = data.version;
        arrivals[i].set(data.version, at);
      });
      streams.push(stream);
    }
    await Promise.all(streams.map((s) => s.ready));
    await sleep(1000);
    const rssAfter = rssKiB(b.child.pid);
    const perStreamKiB = (rssAfter - rssBefore) / (CLIENTS / 2);
    const cpuStart = cpuMicros(b.child.pid);
    await sleep(5000);
    const idleCpuPercent = ((cpuMicros(b.child.pid) - cpuStart) / 5e6) * 100;

    // 2. Propagation: CHANGES changes on A, one after another.
    const written = [];
    for (let n = 0; n < CHANGES; n++) {
      const res = await fetch(`${a.url}/projects/bench/flags/${FLAG}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: JSON.stringify({ addActors: [`pushed-${n}`] }),
      });
      const at = performance.now();
      if (res.status !== 200) throw new Error(`PATCH ${res.status}`);
      written.push({ actor: `pushed-${n}`, at });
    }
    // Map each write to its version by the actor it added: read it from any client's events.
    const deadline = performance.now() + 30_000;
    while (performance.now() < deadline && arrivals.some((m) => m.size < CHANGES)) await sleep(50);
    const lags = [];
    let missing = 0;
    const versions = [...arrivals[0].keys()].sort((x, y) => x - y);
    for (const map of arrivals) {
      if (map.size < CHANGES) missing += CHANGES - map.size;
      versions.forEach((version, n) => {
        const at = map.get(version);
        if (at !== undefined && written[n]) lags.push(at - written[n].at);
      });
    }
    lags.sort((x, y) => x - y);
    out.push(
      `## 2. Propagation (PostgreSQL, ${fmt(CLIENTS)} stream clients over two instances, ${fmt(CHANGES)} changes on one)`,
      "",
    );
    out.push("| | p50 | p99 | max | missed | out of order |", "|---|---:|---:|---:|---:|---:|");
    out.push(
      `| write answered → change applied at each client | ${fmt(percentile(lags, 50), 1)} ms | ${fmt(percentile(lags, 99), 1)} ms | ${fmt(lags.at(-1), 1)} ms | ${fmt(missing)} | ${fmt(outOfOrder.count)} |`,
    );
    out.push("", "## 3. What a connected client costs (instance B)", "");
    out.push(
      `- RSS per idle stream: ${fmt(perStreamKiB, 1)} KiB (${fmt(rssBefore / 1024, 1)} → ${fmt(rssAfter / 1024, 1)} MiB for ${fmt(CLIENTS / 2)} streams).`,
    );
    out.push(`- Server CPU with them all idle, over 5 s: ${fmt(idleCpuPercent, 2)} % of a core.`, "");
  } finally {
    for (const s of streams) s.close();
    await stopInstances(instances);
    await database.drop();
    forget();
  }
}

async function bigSegment(out) {
  const database = await freshDatabase("sqlite");
  const forget = onInterrupt(database.drop);
  const instances = [];
  try {
    await seed(database.url, { flags: 10, members: MEMBERS, checkKey: CHECK, adminKey: ADMIN });
    const server = await startInstance(database.url, { adminKey: ADMIN });
    instances.push(server);
    const read = await call(server.url, ADMIN, "POST", "/projects/bench/keys", { role: "read", name: "bench" });
    const started = performance.now();
    let bytes = 0;
    let state;
    const abort = new AbortController();
    const res = await fetch(`${server.url}/projects/bench/stream`, {
      headers: { authorization: `Bearer ${read.key}` },
      signal: abort.signal,
    });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent(message) {
        if (message.event === "snapshot") state = ProjectState.fromJSON(JSON.parse(message.data).state);
      },
    });
    while (!state) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.length;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    const readyMs = performance.now() - started;
    abort.abort();
    const members = state.segmentMembers.get("seg_bench")?.size ?? 0;
    out.push(`## 4. A ${fmt(MEMBERS)}-member segment (SQLite)`, "");
    out.push(
      `- Snapshot: ${fmt(bytes / 1024 / 1024, 1)} MiB; ready (received, parsed, state built) in ${fmt(readyMs)} ms; ${fmt(members)} members held.`,
      "",
    );
  } finally {
    await stopInstances(instances);
    await database.drop();
    forget();
  }
}

if (!process.argv.includes("--local-worker")) {
  try {
    const out = [
      `Stream bench, ${new Date().toISOString()}, Node.js ${process.version}, load average ${loadavg()[0].toFixed(2)}${QUICK ? " (--quick)" : ""}`,
      "",
    ];
    await localVersusRemote(out);
    await propagationAndCost(out);
    await bigSegment(out);
    console.log(out.join("\n"));
    if (!QUICK)
      writeFileSync(
        new URL(`./results/stream-${new Date().toISOString().slice(0, 10)}.md`, import.meta.url),
        `${out.join("\n")}\n`,
      );
  } catch (error) {
    fail(error);
  }
}
