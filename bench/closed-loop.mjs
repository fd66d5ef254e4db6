// Closed-loop HTTP load that keeps every answer: N loops, each sending one request and waiting for its
// answer (or its timeout) before the next, over keep-alive connections, for a bounded time. Unlike
// autocannon (bench/load.mjs) it records each status, each problem `code`/`detail`, `Retry-After`
// headers and the latency of every request, failed or not.
//
// In-process: `const record = await drive(spec)`, then `summarize(record)`.
// As its own process (so that a heavy load does not share an event loop with what is measured):
// `startDriver(spec)` forks this file; it answers { started, result } promises, result being a summary.
//
// spec: { url, concurrency, durationMs, timeoutMs?, headers?, requests: [{ method?, path, body?, text? }, …] }
// `text` is a JSON body already serialized (sent as is: a large body is not stringified per request).
// Requests are taken from the list in turn, across all loops.
import { fork } from "node:child_process";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import { percentile, track } from "./instances.mjs";

/** Sends one request; resolves (never rejects) with its status (0 for no answer), latency and problem. */
function send(agent, url, { method = "GET", path, body, text }, headers, timeoutMs) {
  return new Promise((resolve) => {
    const started = performance.now();
    const payload = text ?? (body === undefined ? undefined : JSON.stringify(body));
    const req = request(
      url + path,
      {
        method,
        agent,
        signal: AbortSignal.timeout(timeoutMs),
        headers: payload === undefined ? headers : { ...headers, "content-type": "application/json" },
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("error", () => {});
        res.on("end", () => {
          const answer = { status: res.statusCode, ms: performance.now() - started };
          if (res.statusCode >= 300) {
            answer.retryAfter = res.headers["retry-after"];
            try {
              const problem = JSON.parse(Buffer.concat(chunks).toString());
              answer.problem = `${problem.code}: ${problem.detail}`;
            } catch {
              answer.problem = "(no problem details)";
            }
          }
          resolve(answer);
        });
      },
    );
    req.on("error", (error) => {
      const timedOut = error.name === "AbortError" || error.name === "TimeoutError";
      resolve({
        status: 0,
        ms: performance.now() - started,
        error: timedOut ? "timeout" : error.code || error.message,
      });
    });
    req.end(payload);
  });
}

/** Runs the load; resolves with every latency and counts by status, problem, Retry-After and error. */
export async function drive({ url, concurrency, durationMs, timeoutMs = 10_000, headers = {}, requests }) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const record = { latencies: [], ok: 0, statuses: {}, problems: {}, retryAfter: {}, errors: {} };
  const started = performance.now();
  const deadline = started + durationMs;
  let next = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      const answer = await send(agent, url, requests[next++ % requests.length], headers, timeoutMs);
      record.latencies.push(answer.ms);
      const status = answer.status === 0 ? answer.error : String(answer.status);
      if (answer.status >= 200 && answer.status < 300) record.ok++;
      else if (answer.status === 0) record.errors[status] = (record.errors[status] ?? 0) + 1;
      record.statuses[status] = (record.statuses[status] ?? 0) + 1;
      if (answer.problem) {
        const key = `${answer.status} ${answer.problem}`;
        record.problems[key] = (record.problems[key] ?? 0) + 1;
        if (answer.retryAfter !== undefined) {
          const rkey = `${answer.status} Retry-After: ${answer.retryAfter}`;
          record.retryAfter[rkey] = (record.retryAfter[rkey] ?? 0) + 1;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  agent.destroy();
  record.elapsedMs = performance.now() - started;
  return record;
}

/**
 * Figures for a report. `okPerSecond` counts 2xx answers only; latencies are of every request, failed
 * or not (a read that waits 3 s for a 503 is a 3 s read to its client). `failed` = not 2xx, or no answer.
 */
export function summarize(record) {
  const sorted = Float64Array.from(record.latencies).sort();
  const round = (ms) => (ms === undefined ? null : Math.round(ms * 10) / 10);
  return {
    requests: sorted.length,
    ok: record.ok,
    failed: sorted.length - record.ok,
    okPerSecond: record.ok / (record.elapsedMs / 1000),
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1]),
    statuses: record.statuses,
    problems: record.problems,
    retryAfter: record.retryAfter,
    errors: record.errors,
    elapsedMs: Math.round(record.elapsedMs),
  };
}

const SELF = fileURLToPath(import.meta.url);

/** Runs `drive(spec)` in a child process; `started` resolves as its loops begin, `result` with its summary. */
export function startDriver(spec) {
  const child = track(fork(SELF, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] }));
  let markStarted;
  const started = new Promise((resolve) => {
    markStarted = resolve;
  });
  const result = new Promise((resolve, reject) => {
    let summary;
    child.on("message", (message) => {
      if (message.type === "started") markStarted();
      else if (message.type === "result") summary = message.summary;
    });
    child.on("exit", (code) => {
      markStarted();
      if (summary) resolve(summary);
      else reject(new Error(`load process exited with ${code} before reporting`));
    });
  });
  // Handled here so that a load process killed early cannot end the bench before its cleanup ran; the
  // caller still sees the rejection when it awaits `result`.
  result.catch(() => {});
  child.send(spec);
  return { started, result };
}

if (process.argv[1] === SELF && process.send) {
  process.once("message", async (spec) => {
    process.send({ type: "started" });
    const summary = summarize(await drive(spec));
    process.send({ type: "result", summary }, () => process.disconnect());
  });
}
