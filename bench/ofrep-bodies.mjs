#!/usr/bin/env node
// OFREP body soak: can a check key stall the server with large OFREP evaluation bodies? One server
// process on loopback, SQLite, one project with one flag and a check key (the key meant for browsers).
//
//   1. baseline   a few readers check the flag (GET …/check) as fast as they are answered.
//   2. bodies     the same, while 50 concurrent loops (a process of their own) POST
//                 /ofrep/v1/evaluate/flags with a ~1 MiB context of empty objects, as fast as answered.
//
// Reports check latency p50/p99/max in both phases, and what the OFREP loops were answered (status,
// problem, latency). Every request has a timeout; the bench stops by itself after both phases.
//
//   npm run bench:ofrep-bodies
//   env: BENCH_PHASE_SECONDS=5 BENCH_READERS=4 BENCH_SENDERS=50 BENCH_BODY_BYTES=1000000
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { drive, startDriver, summarize } from "./closed-loop.mjs";
import { freshDatabase } from "./fixtures.mjs";
import { call, fail, onInterrupt, sleep, startInstance, stopInstances } from "./instances.mjs";

const numberFrom = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const PHASE_MS = numberFrom("BENCH_PHASE_SECONDS", 5) * 1000;
const READERS = numberFrom("BENCH_READERS", 4);
const SENDERS = numberFrom("BENCH_SENDERS", 50);
const BODY_BYTES = numberFrom("BENCH_BODY_BYTES", 1_000_000);
const TIMEOUT_MS = 15_000;
const LOAD_AVERAGE = loadavg()[0];
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;

/** A context of empty objects filling about `bytes`: the shape the outside probe sent (`{}` is 3 bytes with its comma). */
function hugeContext(bytes) {
  const count = Math.floor((bytes - 40) / 3);
  return `{"context":{"targetingKey":"probe","a":[${Array.from({ length: count }, () => "{}").join(",")}]}}`;
}

async function main() {
  const database = await freshDatabase("sqlite");
  onInterrupt(() => database.drop());
  // The bodies' own cost with nothing to stop them: the bulk rate limit for check keys (on by default) off.
  const server = await startInstance(database.url, { adminKey: ADMIN, env: { OFREP_BULK_RATE_LIMIT_PER_MINUTE: "0" } });
  try {
    await call(server.url, ADMIN, "POST", "/projects", { id: "soak", name: "OFREP soak" });
    await call(server.url, ADMIN, "POST", "/projects/soak/flags/checkout", {});
    await call(server.url, ADMIN, "PATCH", "/projects/soak/flags/checkout", { status: "enabled" });
    const { key } = await call(server.url, ADMIN, "POST", "/projects/soak/keys", { role: "check", name: "soak" });
    const headers = { authorization: `Bearer ${key}` };
    const checks = Array.from({ length: 100 }, (_, i) => ({
      path: `/projects/soak/flags/checkout/check?actorIds=u${i}`,
    }));
    const check = () =>
      drive({
        url: server.url,
        concurrency: READERS,
        durationMs: PHASE_MS,
        timeoutMs: TIMEOUT_MS,
        headers,
        requests: checks,
      });

    const baseline = summarize(await check());
    const text = hugeContext(BODY_BYTES);
    const load = startDriver({
      url: server.url,
      concurrency: SENDERS,
      durationMs: PHASE_MS + 500,
      timeoutMs: TIMEOUT_MS,
      headers,
      requests: [{ method: "POST", path: "/ofrep/v1/evaluate/flags", text }],
    });
    await load.started;
    await sleep(250);
    const loaded = summarize(await check());
    const bodies = await load.result;

    const row = (name, s) => `| ${name} | ${s.requests} | ${s.failed} | ${s.p50} | ${s.p99} | ${s.max} |`;
    console.log(
      `OFREP body soak: ${SENDERS} loops posting ${text.length} bytes, ${READERS} check readers, ${PHASE_MS / 1000} s per phase, load average ${LOAD_AVERAGE.toFixed(2)}`,
    );
    console.log("");
    console.log("| checks | requests | failed | p50 ms | p99 ms | max ms |");
    console.log("|---|---|---|---|---|---|");
    console.log(row("alone", baseline));
    console.log(row(`beside ${SENDERS} huge OFREP bodies`, loaded));
    console.log("");
    console.log(
      `OFREP bulk posts: ${bodies.requests} answered in ${bodies.elapsedMs} ms, p50 ${bodies.p50} ms, p99 ${bodies.p99} ms; statuses ${JSON.stringify(bodies.statuses)}`,
    );
    for (const [problem, count] of Object.entries(bodies.problems))
      console.log(`  ${count} × ${problem.slice(0, 160)}`);
  } finally {
    await stopInstances([server]);
    await database.drop();
  }
}

main().catch(fail);
