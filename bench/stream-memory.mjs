#!/usr/bin/env node
// What one open project stream holds in the server's memory (issue 34: under 8 KiB each). The server runs
// in this process (so that it can be collected before each reading: an RSS read from outside moves by
// megabytes with garbage not yet collected), and the streams are opened by a child process (their
// sockets' other ends are not this process's memory). Heap and RSS growth per stream, with COUNT streams
// open and idle, after a full collection, beside the same figures for the first 50 (warm-up) streams.
//
//   npm run bench:stream-memory [-- --count=2000]     (runs Node with --expose-gc)
import { parseArgs } from "node:util";
import { ADMIN_KEY, startServer } from "@flagstaff/test-harness";
import { streamReader } from "./stream-readers.mjs";

const { values } = parseArgs({ options: { count: { type: "string", default: "2000" } } });
const COUNT = Number(values.count);
if (typeof global.gc !== "function") throw new Error("run with node --expose-gc");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function settled() {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await sleep(100);
  }
  return process.memoryUsage();
}

const server = await startServer({
  dialect: "sqlite",
  env: { STREAM_MAX_PER_KEY: "1000000", STREAM_MAX_PER_INSTANCE: "1000000", STREAM_HEARTBEAT_MS: "3600000" },
});
const readers = [];
try {
  await server.request("POST", "/projects", { body: { id: "bench", name: "Benchmark" } });
  for (let i = 0; i < 20; i++) await server.request("POST", `/projects/bench/flags/flag-${i}`, { body: {} });
  // Warm up: code compiled, the snapshot encoded, pools filled.
  const warm = streamReader();
  readers.push(warm);
  await warm.send({ cmd: "open", url: server.url, key: ADMIN_KEY, count: 50, keep: true });
  await sleep(500);
  const before = await settled();
  const reader = streamReader();
  readers.push(reader);
  await reader.send({ cmd: "open", url: server.url, key: ADMIN_KEY, count: COUNT, keep: true });
  await sleep(1000);
  const after = await settled();
  const per = (field) => ((after[field] - before[field]) / COUNT / 1024).toFixed(2);
  console.log(
    `Node ${process.version}, ${COUNT.toLocaleString("en")} idle project streams (20 flags), after a full collection: ` +
      `heap ${per("heapUsed")} KiB per stream, RSS ${per("rss")} KiB per stream (native memory and heap pages included)`,
  );
} finally {
  for (const reader of readers) reader.stop();
  await server.close();
}
process.exit(0);
