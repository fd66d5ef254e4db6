// Saturating load with wrk (a C load generator: one core of it outruns one core of any Node server,
// which autocannon, itself Node, does not). Requests cycle through the paths given, pre-formatted once
// in Lua so the generator spends nothing per request; the results come back as JSON from wrk's `done`.
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { track } from "./instances.mjs";

/** Installs wrk from Debian's packages when it is missing (the bench needs no other generator). */
export function ensureWrk() {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return;
  } catch (error) {
    // wrk --version exits 1 after printing its version; only ENOENT means it is missing.
    if (error.code !== "ENOENT") return;
  }
  console.error("wrk is missing: installing Debian's wrk package");
  const root = process.getuid?.() === 0 ? [] : ["sudo"];
  execFileSync(root[0] ?? "apt-get", [...root.slice(1), ...(root.length ? ["apt-get"] : []), "update", "-qq"], {
    stdio: "inherit",
  });
  execFileSync(root[0] ?? "apt-get", [...(root.length ? ["apt-get"] : []), "install", "-y", "-qq", "wrk"], {
    stdio: "inherit",
  });
}

/** Whether `taskset` can pin processes to cores here (util-linux; absent on some minimal images). */
export function canPin() {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Pins a running process (all its threads) to one core. */
export function pin(pid, core) {
  execFileSync("taskset", ["-a", "-c", "-p", String(core), String(pid)], { stdio: "ignore" });
}

const luaString = (s) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

function script({ paths, headers = {}, method = "GET", bodies }) {
  const headerLines = Object.entries(headers)
    .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
    .join("\n");
  return `${headerLines}
local paths = { ${paths.map(luaString).join(",\n")} }
local bodies = ${bodies ? `{ ${bodies.map(luaString).join(",\n")} }` : "nil"}
local requests = {}
local n = 0
init = function(args)
  for i, p in ipairs(paths) do
    local body = nil
    if bodies then body = bodies[((i - 1) % #bodies) + 1] end
    requests[i] = wrk.format(${luaString(method)}, p, nil, body)
  end
end
request = function()
  n = n + 1
  if n > #requests then n = 1 end
  return requests[n]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n@@{"requests":%d,"durationUs":%d,"errors":%d,"non2xx":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`;
}

/**
 * Runs wrk against `url` for `duration` seconds with `connections` connections on one thread, pinned to
 * `core` when given. Answers { rps, p50, p99, max (ms), errors, non2xx, requests }.
 */
export async function wrk({ url, connections, duration, core, ...request }) {
  const dir = mkdtempSync(join(tmpdir(), "flagstaff-wrk-"));
  try {
    const file = join(dir, "load.lua");
    writeFileSync(file, script(request));
    const argv = ["-t1", `-c${connections}`, `-d${duration}s`, "--timeout", "10s", "-s", file, url];
    const child = track(
      core === undefined ? spawn("wrk", argv) : spawn("taskset", ["-c", String(core), "wrk", ...argv]),
    );
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    const [code] = await once(child, "exit");
    const line = out.split("\n").find((l) => l.startsWith("@@"));
    if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${out}`);
    const r = JSON.parse(line.slice(2));
    return {
      rps: r.requests / (r.durationUs / 1e6),
      p50: r.p50Us / 1000,
      p99: r.p99Us / 1000,
      max: r.maxUs / 1000,
      errors: r.errors,
      non2xx: r.non2xx,
      requests: r.requests,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
