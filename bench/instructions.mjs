#!/usr/bin/env node
// Instructions per request, counted by valgrind's callgrind, for the check, the check as an encapsulated Fastify
// route (fastify-check-server.mjs), the minimal Fastify route and
// bare node:http answering the same 1,000 check paths as `npm run bench`. Unlike req/s and CPU time, a
// count of instructions does not move with what else the machine is doing (bare and Fastify repeat to
// within 0.5 %), so what still moves from one process start to the next is the server's own doing
// (docs/performance.md, "Instructions per request"). It counts user space only: the kernel's share
// (about half a request's CPU time at saturation, mostly the socket write) is the same for every server
// and is not in these figures, so the ratios here are larger than the CPU-time ratios of `npm run bench`.
//
// Each server runs under callgrind (about fifty times slower), takes WARMUP requests so that its code
// is compiled, then its counters are zeroed, it takes REQUESTS more over 10 keep-alive connections, and
// its counters are dumped; what its timers cost per second is then measured and taken out (see
// measure). The three servers run side by side.
//
//   npm run bench:instructions [-- --requests=15000] [--servers=check,route,fastify,bare]
//
// --servers runs fewer of them (bare always runs: it is the × bare column); with another Node.js, run this
// script with that node (`/path/to/node bench/instructions.mjs`): the servers run on the node that runs it.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { checkLoad, freshDatabase, seed } from "./fixtures.mjs";
import { fail, freePort, MAIN, onInterrupt, sleep, track } from "./instances.mjs";

const SERVERS = ["check", "route", "fastify", "bare"];
const { values: args } = parseArgs({
  options: {
    requests: { type: "string", default: "15000" },
    servers: { type: "string", default: SERVERS.join(",") },
  },
});
const REQUESTS = Number(args.requests);
const WARMUP = REQUESTS;
const TRICKLE_SECONDS = 10;

const CHECK_KEY = "fsk_bench_instructions_check_key_0123456789";
const ADMIN_KEY = "fsk_bench_instructions_admin_key_0123456789";
/** Extra arguments for node in every server, as for `npm run bench` (BENCH_SERVER_NODE_ARGS). */
const NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean);
const bench = (file) => fileURLToPath(new URL(file, import.meta.url));

// valgrind's control channel (vgdb) names its pipes after USER and HOST as the server process sees them;
// the servers get HOST=127.0.0.1, so callgrind_control must see the same.
const CONTROL_ENV = { ...process.env, USER: process.env.USER ?? "bench", HOST: "127.0.0.1" };

async function measure(name, script, env, { paths, headers }, dir) {
  const port = await freePort();
  const out = join(dir, `${name}.%p`);
  const child = track(
    spawn("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, ...NODE_ARGS, script], {
      env: { ...CONTROL_ENV, ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
      stdio: "ignore",
    }),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  // A keep-alive socket the server closes just as a request goes out on it (the server is slow under
  // valgrind) resets: the request is sent again, once, on a fresh socket.
  const get = (path) =>
    getOnce(path).catch((error) => (error.code === "ECONNRESET" ? getOnce(path) : Promise.reject(error)));
  const getOnce = (path) =>
    new Promise((resolve, reject) => {
      const request = http.get({ host: "127.0.0.1", port, path, agent, headers }, (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode));
      });
      request.on("error", (error) =>
        reject(Object.assign(new Error(`${name}: ${error.message}`), { code: error.code })),
      );
    });
  const deadline = Date.now() + 900_000;
  for (;;) {
    try {
      if ((await get(paths[0])) === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${name} did not start under valgrind`);
    await sleep(500);
  }
  const run = async (count) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < count) {
          const status = await get(paths[next++ % paths.length]);
          if (status !== 200) throw new Error(`${name} answered ${status}`);
        }
      }),
    );
  };
  const control = (command) =>
    execFileSync("callgrind_control", [command, String(child.pid)], { env: CONTROL_ENV, stdio: "ignore" });
  let dumps = 0;
  /** Instructions counted since the counters were last zeroed. */
  const dumped = () => {
    control("-d");
    const dump = `${name}.${child.pid}.${++dumps}`;
    return Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, dump), "utf8"))?.[1]);
  };
  await run(WARMUP);
  control("-z");
  let started = performance.now();
  await run(REQUESTS);
  const loaded = dumped();
  const loadedMs = performance.now() - started;
  // What the process does on its own timers (the check recorder writing the last check time once a
  // second, the change feed, metrics) costs instructions per second, not per request, and under valgrind
  // a second holds a few hundred requests where it holds tens of thousands at full speed. It is measured
  // with one request a second, so that each second's write has something to write, and taken out.
  control("-z");
  started = performance.now();
  for (let i = 0; i < TRICKLE_SECONDS; i++) {
    await run(1);
    await sleep(1000);
  }
  const trickleMs = performance.now() - started;
  const timers = Math.max(0, dumped() - (TRICKLE_SECONDS * loaded) / REQUESTS) / trickleMs;
  agent.destroy();
  child.kill("SIGKILL");
  return { raw: loaded / REQUESTS, own: (loaded - timers * loadedMs) / REQUESTS, timersPerSecond: timers * 1000 };
}

async function main() {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("valgrind is missing: apt-get install valgrind");
  }
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-instructions-"));
  const database = await freshDatabase("sqlite");
  const cleanup = async () => {
    await database.drop();
    if (process.env.KEEP_DUMPS) console.log(`callgrind dumps kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
  const forget = onInterrupt(cleanup);
  try {
    await seed(database.url, { flags: 10, members: 1_000, checkKey: CHECK_KEY, adminKey: ADMIN_KEY });
    const load = { paths: checkLoad(1_000).paths, headers: { authorization: `Bearer ${CHECK_KEY}` } };
    console.log(
      `Instructions per request (user space, callgrind, Node ${process.version}), ${REQUESTS.toLocaleString("en-US")} requests after as many to warm up; 10 flags, a 1,000-member segment\n`,
    );
    const serverEnv = { DATABASE_URL: database.url, ADMIN_API_KEY: ADMIN_KEY };
    const servers = {
      check: ["Flagstaff check", MAIN, serverEnv],
      route: ["check as an encapsulated Fastify route", bench("./fastify-check-server.mjs"), serverEnv],
      fastify: ["minimal Fastify route", bench("./fastify-server.mjs"), {}],
      bare: ["bare node:http", bench("./bare-server.mjs"), {}],
    };
    const chosen = args.servers.split(",").filter((name) => name in servers);
    if (!chosen.includes("bare")) chosen.push("bare");
    const results = await Promise.all(
      chosen.map((name) => measure(name, servers[name][1], servers[name][2], load, dir)),
    );
    const bare = results[chosen.indexOf("bare")];
    const n = (x) => Math.round(x).toLocaleString("en-US");
    console.log(
      "| server | instructions per request | × bare | counted, timers included | timers' instructions per second |",
    );
    console.log("|---|---:|---:|---:|---:|");
    chosen.forEach((name, i) => {
      const value = results[i];
      const ratio = (value.own / bare.own).toFixed(2);
      console.log(
        `| ${servers[name][0]} | ${n(value.own)} | ${ratio} | ${n(value.raw)} | ${n(value.timersPerSecond)} |`,
      );
    });
  } finally {
    forget();
    await cleanup();
  }
}

main().catch(fail);
