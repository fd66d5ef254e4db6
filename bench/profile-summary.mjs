#!/usr/bin/env node
// Summarises V8 CPU profiles (.cpuprofile, from `npm run bench -- --profile`).
//
//   node bench/profile-summary.mjs <file>              # top 35 functions by self time (url:line)
//   node bench/profile-summary.mjs <file> <file> ...   # where the busy time goes, side by side
//   --skip=<seconds>: leave out each profile's first seconds (start-up, module loading, JIT warm-up)
//   --until=<seconds>: leave out what comes after (the 100,000-flag scenario's writes, say)
//   <file>@<from>-<until>: this profile's own window, in seconds (each server's load comes at its own time)
//   --us=<a,b,...>: each server's CPU µs per request from the bench, to show each part in µs per request
//
// Side by side, each profile's busy time (all but idle) is split into the runtime's own parts (garbage
// collection, native code such as the kernel calls and the HTTP parser, Node's JavaScript), the
// dependencies and Flagstaff's code, as shares of that profile's busy time. Multiplied by a server's CPU
// µs per request from the bench, a share gives µs per request, so two servers' costs can be compared.
import { readFileSync } from "node:fs";
import { basename } from "node:path";

const options = process.argv.slice(2).filter((a) => a.startsWith("--"));
const files = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const seconds = (name, otherwise) =>
  Number(
    new RegExp(`^--${name}=(\\d+(?:\\.\\d+)?)$`).exec(options.find((o) => o.startsWith(`--${name}=`)) ?? "")?.[1] ??
      otherwise,
  );
const skipMicros = seconds("skip", 0) * 1e6;
const untilMicros = seconds("until", Number.POSITIVE_INFINITY) * 1e6;
if (files.length === 0) {
  console.error("usage: node bench/profile-summary.mjs <file.cpuprofile> [more files]");
  process.exit(2);
}

/** Self time per call frame, in µs, within the profile's window (its own, or --skip and --until). */
function selfTimes(argument) {
  const [, file, from, until] = /^(.*?)(?:@(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?))?$/.exec(argument);
  const first = from === undefined ? skipMicros : Number(from) * 1e6;
  const last = until === undefined ? untilMicros : Number(until) * 1e6;
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const times = new Map();
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < first || at > last) continue;
    const frame = byId.get(profile.samples[i]).callFrame;
    times.set(frame, (times.get(frame) ?? 0) + delta);
  }
  return times;
}

function category(frame) {
  const { functionName: name, url } = frame;
  if (name === "(idle)") return "idle";
  if (name === "(garbage collector)") return "garbage collector";
  if (name === "writev" && url === "") return "socket writes (writev, mostly the kernel)";
  if (name === "(program)") return "native, unattributed (HTTP parser, V8, libuv)";
  if (url === "") return "native functions (regular expressions, crypto, bindings)";
  if (url.startsWith("node:")) return "Node's JavaScript (node:http, net, streams)";
  if (url.includes("/node_modules/")) return "dependencies";
  if (url.includes("/packages/")) return "Flagstaff";
  return "other (bench servers, root)";
}

const perRequest = (options.find((o) => o.startsWith("--us=")) ?? "").slice(5).split(",").filter(Boolean).map(Number);
const cell = (share, i) =>
  perRequest[i] === undefined
    ? `${(share * 100).toFixed(1)} %`
    : `${(share * 100).toFixed(1)} % (${(share * perRequest[i]).toFixed(1)} µs)`;

const profiles = files.map((file) => ({ file, times: selfTimes(file) }));

if (profiles.length === 1) {
  const { times } = profiles[0];
  const self = new Map();
  let total = 0;
  for (const [frame, t] of times) {
    const key = `${frame.functionName || "(anon)"} ${frame.url.replace(/.*node_modules\//, "nm/").replace(/.*\/(packages|bench)\//, "$1/")}:${frame.lineNumber}`;
    self.set(key, (self.get(key) ?? 0) + t);
    total += t;
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 35);
  for (const [k, t] of top) console.log(`${((t / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
} else {
  const rows = new Map();
  const busy = profiles.map(({ times }) => {
    let sum = 0;
    for (const [frame, t] of times) if (category(frame) !== "idle") sum += t;
    return sum;
  });
  profiles.forEach(({ times }, i) => {
    for (const [frame, t] of times) {
      const c = category(frame);
      if (c === "idle") continue;
      const row = rows.get(c) ?? profiles.map(() => 0);
      row[i] += t / busy[i];
      rows.set(c, row);
    }
  });
  console.log(`| share of busy time | ${profiles.map((p) => basename(p.file.replace(/@[\d.-]+$/, ""))).join(" | ")} |`);
  console.log(`|---|${profiles.map(() => "---:").join("|")}|`);
  for (const [c, row] of [...rows].sort((a, b) => b[1][0] - a[1][0]))
    console.log(`| ${c} | ${row.map(cell).join(" | ")} |`);
  console.log(`| busy seconds profiled | ${busy.map((b) => (b / 1e6).toFixed(1)).join(" | ")} |`);
}
