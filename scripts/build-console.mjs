#!/usr/bin/env node
// Builds the web console (packages/console) into packages/console/dist/web with Vite, only when one of its
// inputs (its sources, index.html, Vite settings, or the SDK it bundles) is newer than the last build.
// `npm run build` (and so `npm install`, through `prepare`) runs it after `tsc -b`, which type-checks the
// console and builds the SDK; `npm start` runs it before serving. `--force` builds whatever the times say.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const CONSOLE = join(root, "packages/console");
const INPUTS = [
  join(CONSOLE, "src"),
  join(CONSOLE, "index.html"),
  join(CONSOLE, "vite.config.mjs"),
  join(CONSOLE, "package.json"),
  join(root, "packages/sdk/dist/src"),
];
/** Written after every successful build; its time is when the console was last built. */
const MARKER = join(CONSOLE, "dist/web/.built");

function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  let time = stat.mtimeMs;
  if (stat.isDirectory()) for (const entry of readdirSync(path)) time = Math.max(time, newest(join(path, entry)));
  return time;
}

/** Whether the console's build is missing or older than one of its inputs. */
export function consoleIsStale() {
  let built;
  try {
    built = statSync(MARKER).mtimeMs;
  } catch {
    return true;
  }
  return Math.max(...INPUTS.map(newest)) > built;
}

/** Builds the console when stale (or always with force); answers false when the build failed or Vite is missing. */
export function buildConsole({ force = false, quiet = false } = {}) {
  if (!force && !consoleIsStale()) return true;
  let vite;
  try {
    vite = join(dirname(createRequire(join(CONSOLE, "package.json")).resolve("vite/package.json")), "bin/vite.js");
  } catch {
    process.stderr.write("The console cannot be built: Vite is not installed (run `npm install`).\n");
    return false;
  }
  if (!quiet) process.stderr.write("Building the web console (vite build packages/console)…\n");
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", quiet ? "warn" : "info"], {
    cwd: CONSOLE,
    stdio: ["ignore", 2, 2],
  });
  if (result.status !== 0) {
    process.stderr.write(`The console build failed (${result.error?.message ?? `exit code ${result.status}`}).\n`);
    return false;
  }
  writeFileSync(MARKER, `${new Date().toISOString()}\n`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ok = buildConsole({ force: process.argv.includes("--force"), quiet: process.argv.includes("--quiet") });
  process.exit(ok ? 0 : 1);
}
