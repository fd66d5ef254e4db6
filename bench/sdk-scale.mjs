#!/usr/bin/env node
// The SDK's local evaluator holding a large project (issue 34): how long until `ready()` resolves, and how
// much memory the evaluator adds once ready (after a full collection), then after evaluating every flag
// once. One server (this build's) serves a project of FLAGS flags seeded as bench:scale seeds them; each
// SDK build runs in a child process of its own (so one's memory never counts in the other's), in
// alternating rounds.
//
// With --baseline=<another build's packages/sdk/dist/src/index.js> that SDK runs too, beside this one.
//
//   npm run bench:sdk-scale [-- --flags=50000 --rounds=3 --baseline=…]
import { fork } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { freshDatabase, seed } from "./fixtures.mjs";
import { startInstance, track } from "./instances.mjs";

const ADMIN = "bench-admin-key-0123456789";
const CHECK = "bench-check-key-0123456789";
const SDK = fileURLToPath(new URL("../packages/sdk/dist/src/index.js", import.meta.url));
const MiB = 1024 * 1024;

if (process.argv[2] === "--child") {
  // The measured side: one SDK build, one evaluator, figures sent to the parent.
  const [sdkPath, url] = process.argv.slice(3);
  const gc = () => {
    for (let i = 0; i < 3; i++) globalThis.gc();
  };
  const sdk = await import(pathToFileURL(sdkPath).href);
  gc();
  const before = process.memoryUsage();
  const started = performance.now();
  const evaluator = sdk.createLocalEvaluator({ url, key: ADMIN, projectId: "bench" });
  await evaluator.ready(60_000);
  const readyMs = performance.now() - started;
  gc();
  const ready = process.memoryUsage();
  const names = evaluator.flagNames();
  for (const name of names) evaluator.evaluate(name, { actorIds: ["member-1"] });
  gc();
  const evaluated = process.memoryUsage();
  evaluator.close();
  process.send({
    flags: names.length,
    readyMs,
    heapReady: (ready.heapUsed - before.heapUsed) / MiB,
    rssReady: (ready.rss - before.rss) / MiB,
    heapEvaluated: (evaluated.heapUsed - before.heapUsed) / MiB,
    rssEvaluated: (evaluated.rss - before.rss) / MiB,
  });
  process.exit(0);
}

const { values: args } = parseArgs({
  options: {
    flags: { type: "string", default: "50000" },
    rounds: { type: "string", default: "3" },
    baseline: { type: "string" },
  },
});

function measure(sdkPath, url) {
  return new Promise((resolve, reject) => {
    const child = track(
      fork(fileURLToPath(import.meta.url), ["--child", sdkPath, url], {
        execArgv: ["--expose-gc"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      }),
    );
    child.once("message", resolve);
    child.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`the SDK child exited with ${code}`))));
  });
}

const database = await freshDatabase("sqlite");
await seed(database.url, { flags: Number(args.flags), members: 1000, checkKey: CHECK, adminKey: ADMIN });
const instance = await startInstance(database.url, { adminKey: ADMIN });
const loadBefore = loadavg()[0];
const builds = [{ label: "this build", sdk: SDK }];
if (args.baseline) builds.push({ label: "baseline", sdk: args.baseline });
const rows = [];
try {
  // A first open warms the server's encoded snapshot, so every measured open is served alike.
  await measure(SDK, instance.url);
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const build of builds) rows.push({ label: build.label, ...(await measure(build.sdk, instance.url)) });
  }
} finally {
  await instance.stop();
  await database.drop();
}
const f = (n) => n.toFixed(1);
console.log(
  `Node ${process.version}, ${Number(args.flags).toLocaleString("en-US")} flags (bench:scale's fixtures), load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n`,
);
console.log(
  "| build | flags | ready, ms | heap / RSS added once ready, MiB | heap / RSS added after evaluating each flag once, MiB |",
);
console.log("|---|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.flags} | ${r.readyMs.toFixed(0)} | ${f(r.heapReady)} / ${f(r.rssReady)} | ${f(r.heapEvaluated)} / ${f(r.rssEvaluated)} |`,
  );
}
