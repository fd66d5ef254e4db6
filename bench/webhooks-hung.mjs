#!/usr/bin/env node
// Hung receivers soak (issue 21, item 1): does a healthy webhook keep up while others never answer?
// One server process (default webhook settings: WEBHOOK_TIMEOUT_MS 10 s, WEBHOOK_CONCURRENCY 64) on a
// fresh database; HUNG webhooks (events ["*"]) to receivers that read each request and never answer, and
// one to a receiver that answers 200 at once, each receiver on a port of its own (--same-origin: all on
// one port, told apart by path). A loop PATCHes a flag RATE times a second for SECONDS; every PATCH is an
// event each webhook gets. Then the healthy receiver gets DRAIN_S to catch up.
//
// Reported: of the PATCHes acknowledged, how many reached the healthy receiver during the run and by the
// end of the drain; its delivery lag (PATCH answer -> arrival) p50/p99/max; the outbox depth at the end
// (flagstaff_webhook_outbox_depth); the server's RSS (max while running, and at the end); the healthy
// webhook's backlog as the API shows it (when the server has the field).
// Loopback only, bounded in time: SECONDS + DRAIN_S + start and stop.
//
//   node bench/webhooks-hung.mjs                   # 5 hung + 1 healthy, 10 PATCH/s for 60 s, SQLite
//   options: --hung=N --rate=R --seconds=S --drain=S --same-origin --postgres
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { freshDatabase } from "./fixtures.mjs";
import { call, fail, onInterrupt, POSTGRES_URL, percentile, sleep, startInstance } from "./instances.mjs";

const { values: args } = parseArgs({
  options: {
    hung: { type: "string", default: "5" },
    rate: { type: "string", default: "10" },
    seconds: { type: "string", default: "60" },
    drain: { type: "string", default: "20" },
    "same-origin": { type: "boolean", default: false },
    postgres: { type: "boolean", default: false },
  },
});
const HUNG = Number(args.hung);
const RATE = Number(args.rate);
const RUN_MS = Number(args.seconds) * 1000;
const DRAIN_MS = Number(args.drain) * 1000;
for (const [name, value] of [
  ["--hung", HUNG],
  ["--rate", RATE],
  ["--seconds", RUN_MS],
  ["--drain", DRAIN_MS],
]) {
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0`);
}
const DIALECT = args.postgres ? "postgres" : "sqlite";
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;
const PROJECT = "hung";

/**
 * A receiver: paths starting /hung are read and never answered (until close); others get 200 at once and
 * their flag.updated arrivals are noted by description.
 */
async function startReceiver() {
  const arrivals = new Map();
  const hanging = new Set();
  const stats = { hungRequests: 0, openHung: 0, maxOpenHung: 0 };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      if (req.url.startsWith("/hung")) {
        stats.hungRequests++;
        stats.openHung++;
        stats.maxOpenHung = Math.max(stats.maxOpenHung, stats.openHung);
        hanging.add(res);
        res.on("close", () => {
          stats.openHung--;
          hanging.delete(res);
        });
        return;
      }
      const at = performance.now();
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const description = event.type === "flag.updated" ? event.after?.description : undefined;
        if (typeof description === "string" && !arrivals.has(description)) arrivals.set(description, at);
      } catch {}
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    arrivals,
    stats,
    close: () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const rssBytes = (pid) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line.split(/\s+/)[1]) * 1024;
};

async function outboxDepth(url) {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const match = /^flagstaff_webhook_outbox_depth (\d+)/m.exec(text);
  return match ? Number(match[1]) : null;
}

const round1 = (v) => (v === undefined ? null : Math.round(v * 10) / 10);
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main() {
  const database = await freshDatabase(DIALECT, POSTGRES_URL);
  const forgetDatabase = onInterrupt(database.drop);
  const receivers = [];
  const forgetReceivers = onInterrupt(() => Promise.all(receivers.map((r) => r.close())));
  let server;
  try {
    server = await startInstance(database.url, { adminKey: ADMIN, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
    const healthy = await startReceiver();
    receivers.push(healthy);
    const hungTargets = [];
    for (let i = 0; i < HUNG; i++) {
      const receiver = args["same-origin"] ? healthy : await startReceiver();
      if (receiver !== healthy) receivers.push(receiver);
      hungTargets.push(`${receiver.base}/hung-${i}`);
    }
    await call(server.url, ADMIN, "POST", "/projects", { id: PROJECT, name: "Hung receivers soak" });
    await call(server.url, ADMIN, "POST", `/projects/${PROJECT}/flags/f`, {});
    for (const url of hungTargets) await call(server.url, ADMIN, "POST", `/projects/${PROJECT}/webhooks`, { url });
    const hook = await call(server.url, ADMIN, "POST", `/projects/${PROJECT}/webhooks`, {
      url: `${healthy.base}/healthy`,
    });

    const answers = [];
    let rssMax = 0;
    const started = performance.now();
    const sampler = setInterval(() => {
      rssMax = Math.max(rssMax, rssBytes(server.child.pid));
    }, 250);
    for (let n = 0; performance.now() - started < RUN_MS; n++) {
      const due = started + (n * 1000) / RATE;
      if (due > performance.now()) await sleep(due - performance.now());
      const description = `soak-${n}`;
      try {
        await call(server.url, ADMIN, "PATCH", `/projects/${PROJECT}/flags/f`, { description });
        answers.push({ description, at: performance.now() });
      } catch (error) {
        process.stderr.write(`PATCH ${n} failed: ${error.message}\n`);
      }
    }
    const runEnd = performance.now();
    const inRun = answers.filter((a) => (healthy.arrivals.get(a.description) ?? Infinity) <= runEnd).length;
    const depthAtRunEnd = await outboxDepth(server.url);
    const drainDeadline = performance.now() + DRAIN_MS;
    while (answers.some((a) => !healthy.arrivals.has(a.description)) && performance.now() < drainDeadline) {
      await sleep(50);
    }
    clearInterval(sampler);
    const rssEnd = rssBytes(server.child.pid);
    rssMax = Math.max(rssMax, rssEnd);
    const lags = Float64Array.from(
      answers.filter((a) => healthy.arrivals.has(a.description)).map((a) => healthy.arrivals.get(a.description) - a.at),
    ).sort();
    const view = await call(server.url, ADMIN, "GET", `/projects/${PROJECT}/webhooks/${hook.id}`);
    const delivered = answers.filter((a) => healthy.arrivals.has(a.description)).length;
    const hungStats = receivers.reduce(
      (sum, r) => ({ requests: sum.requests + r.stats.hungRequests, maxOpen: sum.maxOpen + r.stats.maxOpenHung }),
      { requests: 0, maxOpen: 0 },
    );
    const lines = [
      `Hung receivers soak, ${new Date().toISOString()}, Node.js ${process.version}, ${DIALECT}, ` +
        `${HUNG} hung + 1 healthy webhook${args["same-origin"] ? " (one origin)" : " (a port each)"}, ` +
        `${RATE} PATCH/s for ${RUN_MS / 1000} s, drain ${DRAIN_MS / 1000} s, default webhook settings`,
      `PATCHes acknowledged: ${answers.length}`,
      `healthy receiver: ${inRun} delivered by the end of the run, ${delivered} by the end of the drain`,
      `healthy delivery lag ms: p50 ${round1(percentile(lags, 50))}, p99 ${round1(percentile(lags, 99))}, ` +
        `max ${round1(lags[lags.length - 1])}`,
      `outbox depth: ${depthAtRunEnd} at the end of the run, ${await outboxDepth(server.url)} after the drain`,
      `server RSS: max ${mb(rssMax)}, at the end ${mb(rssEnd)}`,
      `hung receivers: ${hungStats.requests} requests received, at most ${hungStats.maxOpen} open at once (summed over receivers)`,
      `healthy webhook backlog (API): ${view.backlog ? JSON.stringify(view.backlog) : "(not shown by this server)"}`,
    ];
    console.log(lines.join("\n"));
    if (delivered < answers.length) process.exitCode = 1;
  } finally {
    await server?.stop();
    await Promise.all(receivers.map((r) => r.close()));
    forgetReceivers();
    await database.drop();
    forgetDatabase();
  }
}

main().catch(fail);
