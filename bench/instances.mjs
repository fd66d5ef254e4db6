// Server processes for the benchmarks: start the real server on a free port, stop it, and make sure that
// no process a bench started outlives it, whether the bench ends, throws, or is interrupted.
//
// Every child passed to `track` (startInstance does it) is sent SIGTERM on SIGINT/SIGTERM, then the steps
// registered with `onInterrupt` run (drop the bench database, release a lock), then the bench exits 130.
// On any other exit, tracked children still running get SIGKILL.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

/** The server to start; BENCH_SERVER_MAIN names another build of it (an older one, to compare with). */
export const MAIN =
  process.env.BENCH_SERVER_MAIN || fileURLToPath(new URL("../packages/server/dist/src/main.js", import.meta.url));
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/postgres";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const CLOCK_TICKS_PER_SECOND = 100; // Linux USER_HZ (getconf CLK_TCK)

/** CPU time (user + system) a process has used so far, in microseconds, from /proc/<pid>/stat. */
export function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

export async function freePort() {
  const s = createServer().listen(0, "127.0.0.1");
  await once(s, "listening");
  const { port } = s.address();
  s.close();
  return port;
}

/** Children still running, each with the promise of its exit. */
const live = new Map();
const interruptSteps = new Set();

/** Remembers a child process so that it is stopped however the bench ends. Returns the child. */
export function track(child) {
  const exited = once(child, "exit").catch(() => {});
  live.set(child, exited);
  exited.then(() => live.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export async function stopChild(child, graceMs = 10_000) {
  const exited = live.get(child);
  if (!exited) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Registers a cleanup step that runs if the bench is interrupted; returns a function that unregisters it. */
export function onInterrupt(step) {
  interruptSteps.add(step);
  return () => interruptSteps.delete(step);
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (interrupted) {
      for (const child of live.keys()) child.kill("SIGKILL");
      process.exit(130);
    }
    interrupted = true;
    if (live.size + interruptSteps.size > 0) {
      console.error(`\n${signal}: stopping ${live.size} child process(es) and cleaning up (again to force)`);
    }
    const bounded = (p) => Promise.race([p, sleep(10_000)]);
    bounded(Promise.allSettled([...live.keys()].map((child) => stopChild(child, 5_000))))
      .then(() => bounded(Promise.allSettled([...interruptSteps].map((step) => step()))))
      .finally(() => process.exit(130));
  });
}
process.on("exit", () => {
  for (const child of live.keys()) child.kill("SIGKILL");
});

/**
 * For `main().catch(fail)`: reports the error and exits 1, unless an interrupt is being cleaned up, in
 * which case that cleanup decides when the bench exits (requests fail once the servers are stopped).
 */
export function fail(error) {
  if (interrupted) return;
  console.error(error);
  process.exit(1);
}
process.on("unhandledRejection", fail);

/**
 * Starts one server process (`node packages/server/dist/src/main.js`) on a free port and resolves once
 * `/healthz` answers. `env` adds to or overrides the server's environment (DATABASE_POOL_SIZE, …);
 * `nodeArgs` are Node's options for it (BENCH_SERVER_NODE_ARGS by default); `main`, another build's
 * main.js (MAIN by default).
 */
export async function startInstance(
  databaseUrl,
  {
    adminKey,
    env = {},
    startTimeoutMs = 30_000,
    nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean),
    main = MAIN,
  } = {},
) {
  const port = await freePort();
  const child = track(
    spawn(process.execPath, [...nodeArgs, main], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        ...(adminKey ? { ADMIN_API_KEY: adminKey } : {}),
        ...env,
      },
      stdio: ["ignore", "ignore", "inherit"],
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const instance = { url, port, child, stop: () => stopChild(child) };
  const started = performance.now();
  while (performance.now() - started < startTimeoutMs) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`server on port ${port} exited during start (${child.exitCode ?? child.signalCode})`);
    }
    try {
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok) return instance;
    } catch {}
    await sleep(50);
  }
  await instance.stop();
  throw new Error(`server on port ${port} did not answer /healthz within ${startTimeoutMs} ms`);
}

/** Stops every instance given (those already stopped are skipped). */
export async function stopInstances(instances) {
  await Promise.all(instances.map((instance) => instance.stop()));
}

/** p-th percentile (nearest rank) of an ascending list. */
export const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

/** A JSON call with a key for setting a bench up; any status ≥ 300 throws, so a broken setup stops it. */
export async function call(url, key, method, path, body) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? undefined : res.json();
}
