#!/usr/bin/env node
// `npm start` and `npm run admin-key`: runs the server's entry point, packages/server/dist/src/main.js, in this
// process with this process's arguments. It builds first (tsc -b packages/server, which builds core too) only
// when a source file or a TypeScript setting of core or the server is newer than the last build, so a restart
// with nothing changed serves at once. `npm install` builds everything already (the root `prepare` script).
// The same goes for the web console (packages/console, built by scripts/build-console.mjs).
// First: on a Node.js too old for the project, stop with what to install before anything else loads.
import "./check-node.mjs";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, utimesSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const PROJECTS = ["packages/core", "packages/server"];
const INPUTS = ["tsconfig.base.json", ...PROJECTS.flatMap((p) => [`${p}/tsconfig.json`, `${p}/src`])];
/** Each project's build info: tsc -b writes it on every build; it tells when the project was last built. */
const MARKERS = PROJECTS.map((p) => `${p}/dist/tsconfig.tsbuildinfo`);
const MAIN = join(root, "packages/server/dist/src/main.js");

/** Newest modification time of a path and, for a folder, of everything in it (a removed file changes its folder). */
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

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

const built = MARKERS.map((marker) => mtime(join(root, marker)));
const changed = Math.max(...INPUTS.map((input) => newest(join(root, input))));
const stale = built.some((time) => time === undefined || time < changed);

if (stale) {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  } catch {
    tsc = undefined;
  }
  if (tsc === undefined) {
    // An install without dev dependencies: run what was built, if anything was.
    if (!existsSync(MAIN)) {
      process.stderr.write("The server is not built, and TypeScript is not installed: run `npm install` first.\n");
      process.exit(1);
    }
    process.stderr.write(
      "Sources look newer than the build, but TypeScript is not installed: running the build as it is.\n",
    );
  } else {
    process.stderr.write("Sources changed since the last build: building the server (tsc -b packages/server)…\n");
    // Build output goes to stderr, so that standard output stays the command's own (admin-key --json).
    const result = spawnSync(process.execPath, [tsc, "-b", "packages/server"], { cwd: root, stdio: ["ignore", 2, 2] });
    if (result.status !== 0) {
      process.stderr.write(`The build failed (${result.error?.message ?? `exit code ${result.status}`}).\n`);
      process.exit(1);
    }
    // tsc -b may find a project up to date (say, a file that was only touched, or a file tsc does not read in
    // src/) and leave its build info as it was: mark both as built now, so the next start does not try again.
    const now = new Date(Math.max(Date.now(), changed));
    for (const marker of MARKERS) utimesSync(join(root, marker), now, now);
  }
}

// The web console (served at /console/) is rebuilt when its sources or the SDK changed; a failed console
// build is reported, and the API is served anyway. `admin-key` needs no console.
if (process.argv[2] !== "admin-key") {
  const { buildConsole, consoleIsStale } = await import("./build-console.mjs");
  if (consoleIsStale()) {
    // The console bundles the SDK and is type-checked with it: tsc -b builds both when their sources changed.
    let tsc;
    try {
      tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    } catch {
      tsc = undefined;
    }
    const checked =
      tsc === undefined ||
      spawnSync(process.execPath, [tsc, "-b", "packages/console"], { cwd: root, stdio: ["ignore", 2, 2] }).status === 0;
    if (!checked || !buildConsole())
      process.stderr.write("The web console could not be built; serving the API without it.\n");
  }
}

await import(pathToFileURL(MAIN).href);
