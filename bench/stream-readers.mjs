// Project streams (and OFREP bulk answers) read by a child process of their own (bench:scale), so that reading them does not delay
// the clock of the process that times checks and writes. The parent sends commands; each is answered once:
//   {cmd: "open", url, project, key, count, keep, gzip}
//                                          opens `count` streams of the project (bench) at once and answers when every snapshot
//                                          has arrived: {allMs, p50Ms, failed, failures}. keep: false closes each stream
//                                          once its snapshot is in; true keeps them open and reading, and
//                                          opens them in waves of 250.
//   {cmd: "bulk", url, key, count}         makes `count` OFREP bulk evaluations at once (targeting key member-i) and
//                                          answers when all have arrived: {p50, max, failed} (ms).
//   {cmd: "await", first: true, timeoutMs} answers when every kept stream has received an event after its
//                                          snapshot: {arrivals: [wall-clock ms of each one's first], missing}.
// Wall-clock times (performance.timeOrigin + performance.now()) compare across processes on one machine.
import { Agent, request } from "node:http";
import { fork } from "node:child_process";
import { createGunzip } from "node:zlib";
import { fileURLToPath } from "node:url";
import { percentile, track } from "./instances.mjs";

const now = () => performance.timeOrigin + performance.now();

/** Opens one stream; `onFirst` when its first event (the snapshot) is in, `onEvent(id)` for each later one. */
function openStream(agent, url, project, key, gzip, onFirst, onEvent, onError) {
  const req = request(`${url}/projects/${project}/stream`, {
    agent,
    headers: {
      accept: "text/event-stream",
      authorization: `Bearer ${key}`,
      // Each event a gzip member of its own (the SDK asks for it on Node.js).
      ...(gzip ? { "flagstaff-stream-encoding": "gzip" } : {}),
    },
  });
  let buffered = "";
  let first = true;
  req.on("error", onError);
  req.on("response", (res) => {
    if (res.statusCode !== 200) {
      onError(new Error(`stream answered ${res.statusCode}`));
      res.resume();
      return;
    }
    const body = res.headers["content-encoding"] === "gzip" ? res.pipe(createGunzip()) : res;
    body.setEncoding("latin1");
    body.on("data", (text) => {
      if (first) {
        // The snapshot can be megabytes: look only for its end (JSON holds no newline).
        const end = (buffered.slice(-1) + text).indexOf("\n\n");
        if (end < 0) {
          buffered = text.slice(-1);
          return;
        }
        first = false;
        buffered = (buffered.slice(-1) + text).slice(end + 2);
        onFirst();
      } else buffered += text;
      for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(event)?.[1];
        if (id !== undefined) onEvent(Number(id));
      }
    });
    res.on("error", () => {});
  });
  req.end();
  return req;
}

const kept = [];

/** Streams opened at once by a kept (fan-out) open: they come in waves, as SDKs reconnect with jitter. */
const WAVE = 250;

async function open({ url, project = "bench", key, count, keep, gzip = false }) {
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const started = performance.now();
  const failures = [];
  const one = () =>
    new Promise((resolve) => {
      const stream = { arrivals: new Map() };
      stream.req = openStream(
        agent,
        url,
        project,
        key,
        gzip,
        () => {
          resolve(performance.now() - started);
          if (!keep) stream.req.destroy();
        },
        (id) => stream.arrivals.set(id, now()),
        (error) => {
          // A stream refused or cut (a 408 when the server took too long to read its request) is counted.
          failures.push(String(error.message ?? error));
          stream.failed = true;
          resolve(undefined);
        },
      );
      if (keep) kept.push(stream);
    });
  const ms = [];
  // A storm opens them all at once; kept streams open in waves.
  const wave = keep ? WAVE : count;
  for (let opened = 0; opened < count; opened += wave) {
    ms.push(...(await Promise.all(Array.from({ length: Math.min(wave, count - opened) }, one))));
  }
  const arrived = ms.filter((m) => m !== undefined).sort((a, b) => a - b);
  return {
    allMs: arrived[arrived.length - 1],
    p50Ms: percentile(arrived, 50),
    failed: failures.length,
    failures: [...new Set(failures)],
  };
}

/** One OFREP bulk evaluation; resolves with its latency in ms and status. */
function bulkEvaluation(url, agent, key, targetingKey) {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(`${url}/ofrep/v1/evaluate/flags`, {
      method: "POST",
      agent,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve({ ms: performance.now() - started, status: res.statusCode }));
    });
    req.on("error", () => resolve({ ms: performance.now() - started, status: 0 }));
    req.end(JSON.stringify({ context: { targetingKey } }));
  });
}

/** `count` OFREP bulk evaluations at once, each for its own member: what browsers do after a change. */
async function bulk({ url, key, count }) {
  const agent = new Agent({ keepAlive: true, maxSockets: count });
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) => bulkEvaluation(url, agent, key, `member-${i}`)),
  );
  agent.destroy();
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  return { p50: percentile(ms, 50), max: ms[ms.length - 1], failed: answers.filter((a) => a.status !== 200).length };
}

async function awaitEvent({ timeoutMs }) {
  const deadline = performance.now() + timeoutMs;
  const open = kept.filter((s) => !s.failed);
  while (performance.now() < deadline && open.some((s) => s.arrivals.size === 0)) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const arrivals = open.flatMap((s) => (s.arrivals.size === 0 ? [] : [Math.min(...s.arrivals.values())]));
  return { arrivals, missing: open.length - arrivals.length };
}

if (process.argv[2] === "--child") {
  process.on("message", async (message) => {
    try {
      const run = { open, bulk, await: awaitEvent }[message.cmd];
      const result = await run(message);
      process.send({ type: "result", result });
    } catch (error) {
      process.send({ type: "error", error: String(error) });
    }
  });
}

/** A reader process: `send(command)` answers the command's result. `stop()` ends it and its streams. */
export function streamReader() {
  const child = track(
    fork(fileURLToPath(import.meta.url), ["--child"], { stdio: ["ignore", "inherit", "inherit", "ipc"] }),
  );
  let waiting;
  child.on("message", (message) => {
    const w = waiting;
    waiting = undefined;
    if (message.type === "result") w?.resolve(message.result);
    else w?.reject(new Error(message.error));
  });
  child.on("exit", (code) => waiting?.reject(new Error(`stream reader exited with ${code}`)));
  return {
    send(command) {
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        child.send(command);
      });
    },
    stop() {
      child.kill("SIGKILL");
    },
  };
}
