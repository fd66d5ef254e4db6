#!/usr/bin/env node
// Webhooks benchmark: what does a webhook cost the writes, and how far behind them are its deliveries?
// One server process; N closed loops each PATCH a flag of their own (a new description every time, so
// every PATCH is a change and one event) for a fixed time per round. Rounds alternate:
//
//   A  no webhook configured (events still go through the outbox, matched to no webhook)
//   B  one webhook (events ["*"]) to a receiver in this process that answers 200 at once
//
// For each round: PATCH/s (2xx), latency p50/p99/max of every PATCH, failures. For B also: deliveries
// (events of the round's PATCHes that reached the receiver, each told apart by its description), the delivery
// lag (from the PATCH's answer to the receiver's arrival) p50/p99/max, repeats, and how long after the
// round's last PATCH the last delivery came (the backlog drained). Before the next round every
// delivery of the B round must have arrived (or the drain deadline passed), and its webhook is deleted.
// SQLite always; PostgreSQL too when it answers (BENCH_POSTGRES_URL).
//
//   npm run bench:webhooks                 # 2 pairs of 10 s rounds per dialect, 12 loops
//   options: --quick (1 pair of 3 s rounds)  --rounds=N (pairs)  --seconds=S  --concurrency=C
//            --sqlite | --postgres (one dialect only)
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import { loadavg } from "node:os";
import pg from "pg";
import { freshDatabase } from "./fixtures.mjs";
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

const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, "").split("=");
    return [key, value ?? true];
  }),
);
const QUICK = Boolean(args.quick);
const PAIRS = Number(args.rounds ?? (QUICK ? 1 : 2));
const ROUND_MS = Number(args.seconds ?? (QUICK ? 3 : 10)) * 1000;
const CONCURRENCY = Number(args.concurrency ?? 12);
const WARMUP_MS = QUICK ? 1000 : 2000;
/** How long after a B round its deliveries may take to arrive before they count as missing. */
const DRAIN_MS = 60_000;
const TIMEOUT_MS = 10_000;
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;
const PROJECT = "bench";
const LOAD_AVERAGE = loadavg()[0];

for (const [name, value] of [
  ["--rounds", PAIRS],
  ["--seconds", ROUND_MS],
  ["--concurrency", CONCURRENCY],
]) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
}

/** A receiver that answers 200 at once and notes when each round's PATCH (by its description) arrived. */
async function startReceiver() {
  const arrivals = new Map();
  const stats = { requests: 0, repeats: 0, other: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.now();
      stats.requests++;
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      let description;
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (event.type === "flag.updated") description = event.after?.description;
      } catch {}
      if (typeof description !== "string") stats.other++;
      else if (arrivals.has(description)) stats.repeats++;
      else arrivals.set(description, at);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    arrivals,
    stats,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** One PATCH; resolves (never rejects) with its status (0 for no answer) and when the answer came. */
function patch(agent, url, flag, description) {
  return new Promise((resolve) => {
    const started = performance.now();
    const payload = JSON.stringify({ description });
    const req = request(
      `${url}/projects/${PROJECT}/flags/${flag}`,
      {
        method: "PATCH",
        agent,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      },
      (res) => {
        res.resume();
        res.on("error", () => {});
        res.on("end", () => {
          const at = performance.now();
          resolve({ status: res.statusCode, at, ms: at - started });
        });
      },
    );
    req.on("error", (error) => {
      const at = performance.now();
      resolve({ status: 0, at, ms: at - started, error: error.name === "TimeoutError" ? "timeout" : error.code });
    });
    req.end(payload);
  });
}

/** CONCURRENCY loops, each PATCHing its own flag, for `ms`; answers every PATCH's outcome. */
async function drive(url, tag, ms) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const answers = [];
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, loop) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const description = `${tag}-${loop}-${n}`;
        const answer = await patch(agent, url, `f${loop}`, description);
        answers.push({ ...answer, description });
      }
    }),
  );
  agent.destroy();
  return { answers, elapsedMs: performance.now() - started };
}

const round1 = (v) => (v === undefined || v === null ? null : Math.round(v * 10) / 10);
const latencies = (values) => {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: round1(percentile(sorted, 50)),
    p99: round1(percentile(sorted, 99)),
    max: round1(sorted[sorted.length - 1]),
  };
};

const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ (getconf CLK_TCK)

/** CPU time (user + system) a process has used so far, in microseconds, from /proc/<pid>/stat. */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

async function runRound(server, receiver, { dialect, index, kind }) {
  // Descriptions are unique across the whole run: the receiver tells deliveries apart by them.
  const tag = `${dialect}-r${index}${kind}`;
  let hook;
  if (kind === "B") {
    hook = await call(server.url, ADMIN, "POST", `/projects/${PROJECT}/webhooks`, {
      url: receiver.url,
      events: ["*"],
      description: `bench round ${index}`,
    });
  }
  const before = { ...receiver.stats };
  const cpuBefore = cpuMicros(server.child.pid);
  const { answers, elapsedMs } = await drive(server.url, tag, ROUND_MS);
  const ok = answers.filter((a) => a.status >= 200 && a.status < 300);
  const failures = {};
  for (const a of answers) {
    if (a.status >= 200 && a.status < 300) continue;
    const key = a.status === 0 ? a.error : String(a.status);
    failures[key] = (failures[key] ?? 0) + 1;
  }
  const result = {
    index,
    kind,
    requests: answers.length,
    ok: ok.length,
    perSecond: ok.length / (elapsedMs / 1000),
    ...latencies(answers.map((a) => a.ms)),
    failures,
  };
  if (hook) {
    // Every acknowledged PATCH of the round must come; wait for the backlog to drain.
    const lastAnswer = Math.max(...answers.map((a) => a.at));
    const deadline = performance.now() + DRAIN_MS;
    const arrived = () => ok.filter((a) => receiver.arrivals.has(a.description)).length;
    while (arrived() < ok.length && performance.now() < deadline) await sleep(20);
    const lags = ok
      .filter((a) => receiver.arrivals.has(a.description))
      .map((a) => receiver.arrivals.get(a.description) - a.at);
    const lastArrival = Math.max(...ok.map((a) => receiver.arrivals.get(a.description) ?? Number.NEGATIVE_INFINITY));
    result.delivery = {
      expected: ok.length,
      arrived: arrived(),
      repeats: receiver.stats.repeats - before.repeats,
      lag: latencies(lags),
      drainedMs: Number.isFinite(lastArrival) ? round1(lastArrival - lastAnswer) : null,
    };
  }
  // The server's CPU for the round, its deliveries included (read once the backlog has drained).
  result.cpuMicrosPerPatch = (cpuMicros(server.child.pid) - cpuBefore) / Math.max(1, ok.length);
  if (hook) await call(server.url, ADMIN, "DELETE", `/projects/${PROJECT}/webhooks/${hook.id}`);
  return result;
}

async function postgresAnswers() {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch (error) {
    return error.message;
  } finally {
    await client.end().catch(() => {});
  }
}

const fmt = (n, digits = 0) =>
  n === null || n === undefined
    ? "–"
    : Number(n).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const counts = (byKey) =>
  Object.entries(byKey)
    .map(([key, n]) => `${key}×${n}`)
    .join(", ") || "0";
const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;

async function benchDialect(dialect, receiver) {
  const database = await freshDatabase(dialect, POSTGRES_URL);
  const forgetDatabase = onInterrupt(database.drop);
  const instances = [];
  const rounds = [];
  try {
    const server = await startInstance(database.url, {
      adminKey: ADMIN,
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" },
    });
    instances.push(server);
    await call(server.url, ADMIN, "POST", "/projects", { id: PROJECT, name: "Webhooks bench" });
    for (let i = 0; i < CONCURRENCY; i++) await call(server.url, ADMIN, "POST", `/projects/${PROJECT}/flags/f${i}`, {});
    // Warm-up, not recorded: JIT, connections, the pool.
    await drive(server.url, `${dialect}-warmup`, WARMUP_MS);
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const kind of ["A", "B"]) {
        const result = await runRound(server, receiver, { dialect, index: rounds.length + 1, kind });
        rounds.push(result);
        process.stderr.write(
          `  ${dialect} round ${result.index} ${kind}: ${fmt(result.perSecond)} PATCH/s` +
            (result.delivery ? `, ${result.delivery.arrived}/${result.delivery.expected} delivered` : "") +
            "\n",
        );
      }
    }
  } finally {
    await stopInstances(instances);
    await database.drop();
    forgetDatabase();
  }
  return rounds;
}

function report(dialect, rounds) {
  const lines = [];
  lines.push(`## ${dialect}`);
  lines.push("");
  lines.push(
    "| round | webhook | PATCH/s | server CPU µs/PATCH | p50 ms | p99 ms | max ms | failed | delivered | repeats | lag p50 ms | lag p99 ms | lag max ms | drained after |",
  );
  lines.push("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rounds) {
    const d = r.delivery;
    lines.push(
      `| ${r.index} | ${r.kind === "A" ? "A: none" : "B: one"} | ${fmt(r.perSecond)} | ${fmt(r.cpuMicrosPerPatch)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ` +
        `${fmt(r.max, 1)} | ${counts(r.failures)} | ${d ? `${fmt(d.arrived)}/${fmt(d.expected)}` : "–"} | ` +
        `${d ? d.repeats : "–"} | ${d ? fmt(d.lag.p50, 1) : "–"} | ${d ? fmt(d.lag.p99, 1) : "–"} | ` +
        `${d ? fmt(d.lag.max, 1) : "–"} | ${d?.drainedMs === null || !d ? "–" : `${fmt(d.drainedMs)} ms`} |`,
    );
  }
  const a = rounds.filter((r) => r.kind === "A");
  const b = rounds.filter((r) => r.kind === "B");
  const [perA, perB] = [mean(a.map((r) => r.perSecond)), mean(b.map((r) => r.perSecond))];
  const all = b.every((r) => r.delivery.arrived === r.delivery.expected);
  lines.push("");
  lines.push(
    `Mean PATCH/s: A ${fmt(perA)}, B ${fmt(perB)} (${perB >= perA ? "+" : ""}${fmt(((perB - perA) / perA) * 100, 1)} % with a webhook); ` +
      `p99 A ${fmt(mean(a.map((r) => r.p99)), 1)} ms, B ${fmt(mean(b.map((r) => r.p99)), 1)} ms.`,
  );
  const [cpuA, cpuB] = [mean(a.map((r) => r.cpuMicrosPerPatch)), mean(b.map((r) => r.cpuMicrosPerPatch))];
  lines.push(
    `Server CPU per PATCH, its delivery included: A ${fmt(cpuA)} µs, B ${fmt(cpuB)} µs (+${fmt(((cpuB - cpuA) / cpuA) * 100, 1)} %). ` +
      "On these 2 shared cores the load generator and the receiver compete with the server, so PATCH/s at saturation falls by more than the server's own cost rises.",
  );
  lines.push(
    all
      ? `All deliveries arrived: ${fmt(b.reduce((s, r) => s + r.delivery.expected, 0))} of ${fmt(b.reduce((s, r) => s + r.delivery.expected, 0))}.`
      : `MISSING deliveries: ${b.map((r) => `round ${r.index}: ${r.delivery.arrived}/${r.delivery.expected}`).join(", ")} (drain deadline ${DRAIN_MS / 1000} s).`,
  );
  return { lines, all };
}

async function main() {
  const dialects = [];
  if (!args.postgres) dialects.push("sqlite");
  let skipped;
  if (!args.sqlite) {
    const probe = await postgresAnswers();
    if (probe === true) dialects.push("postgres");
    else skipped = `PostgreSQL skipped: nothing answers at ${POSTGRES_URL.replace(/\/\/[^@]*@/, "//")} (${probe}).`;
  }
  const receiver = await startReceiver();
  const forgetReceiver = onInterrupt(receiver.close);
  const out = [
    `Webhooks bench, ${new Date().toISOString()}, Node.js ${process.version}, load average before the run ${LOAD_AVERAGE.toFixed(2)}`,
    `${CONCURRENCY} closed loops PATCH a flag each (a new description every time) for ${fmt(ROUND_MS / 1000, 1)} s per round, ` +
      `alternating A (no webhook) and B (one webhook, events ["*"], to a receiver in the bench process answering 200 at once); ` +
      `server in a child process with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true and default webhook settings.`,
    "Latencies are of every PATCH. Delivery lag: from the PATCH's answer to the delivery's arrival at the receiver " +
      "(negative when the delivery came first). Drained after: from the round's last answer to the last delivery.",
  ];
  if (skipped) out.push(skipped);
  let allArrived = true;
  try {
    for (const dialect of dialects) {
      const { lines, all } = report(dialect, await benchDialect(dialect, receiver));
      allArrived &&= all;
      out.push("", ...lines);
    }
  } finally {
    await receiver.close();
    forgetReceiver();
  }
  console.log(out.join("\n"));
  if (!allArrived) process.exitCode = 1;
}

main().catch(fail);
