#!/usr/bin/env node
// Propagation benchmark: 3 server processes on one PostgreSQL database; 1,000 changes on instance A;
// for each, the time from A acknowledging the write until a check on B (and on C) reflects it.
// Usage: npm run bench:propagation  (BENCH_POSTGRES_URL, BENCH_CHANGES to override)
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import pg from "pg";

const POSTGRES_URL = process.env.BENCH_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const CHANGES = Number(process.env.BENCH_CHANGES || 1000);
const MAIN = fileURLToPath(new URL("../packages/server/dist/src/main.js", import.meta.url));
const ADMIN = `fsk_bench_${randomBytes(12).toString("hex")}`;
const auth = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };

async function freePort() {
  const s = createServer().listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address();
  s.close();
  return port;
}

async function startInstance(databaseUrl) {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_API_KEY: ADMIN,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, child };
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("instance did not start");
}

const call = async (url, method, path, body) => {
  const res = await fetch(url + path, { method, headers: auth, body: body && JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
};

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function main() {
  const name = `flagstaff_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const dbUrl = new URL(POSTGRES_URL);
  dbUrl.pathname = `/${name}`;
  const instances = [];
  try {
    instances.push(await startInstance(dbUrl.toString()));
    instances.push(await startInstance(dbUrl.toString()), await startInstance(dbUrl.toString()));
    const [a, b, c] = instances;
    await call(a.url, "POST", "/projects", { id: "bench", name: "bench" });
    await call(a.url, "POST", "/projects/bench/flags/f", {});
    const delays = { B: [], C: [] };
    for (let i = 1; i <= CHANGES; i++) {
      const enabled = i % 2 === 1;
      await call(a.url, "PATCH", "/projects/bench/flags/f", { status: enabled ? "enabled" : "disabled" });
      const acked = performance.now();
      await Promise.all(
        [
          ["B", b],
          ["C", c],
        ].map(async ([label, inst]) => {
          for (;;) {
            const res = await fetch(`${inst.url}/projects/bench/flags/f/check`, { headers: auth });
            if ((await res.json()).enabled === enabled) break;
            if (performance.now() - acked > 5000) throw new Error(`change ${i} never reached ${label}`);
          }
          delays[label].push(performance.now() - acked);
        }),
      );
    }
    console.log(
      `Propagation on PostgreSQL, 3 instances, ${CHANGES} changes on A (time from A's 200 to a check showing it):`,
    );
    console.log("| instance | p50 ms | p99 ms | max ms |");
    console.log("|---|---|---|---|");
    for (const [label, list] of Object.entries(delays)) {
      const sorted = [...list].sort((x, y) => x - y);
      const f = (v) => v.toFixed(2);
      console.log(
        `| ${label} | ${f(percentile(sorted, 50))} | ${f(percentile(sorted, 99))} | ${f(sorted[sorted.length - 1])} |`,
      );
    }
  } finally {
    for (const inst of instances) inst.child.kill("SIGTERM");
    await Promise.all(instances.map((i) => once(i.child, "exit")));
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
