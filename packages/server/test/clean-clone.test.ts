// What a newcomer and an operator do first, on a clean clone of this repository's HEAD:
//
// - the README's `npm install`, which ends without warnings (install scripts approved in allowScripts, npm's
//   warnings off in .npmrc), then `npx flagstaff --version` (the command is linked although dist/ is built
//   only afterwards, by the root `prepare` script);
// - `npm start` on an empty SQLite database (the default ./data/flags.db), and again with nothing changed:
//   each serves /healthz and rebuilds nothing (no build output, no build marker rewritten), and a changed
//   source is rebuilt; `npm run admin-key` works;
// - after all of that the clone is as clean as it was: `git status --porcelain` is empty (npm install must not
//   rewrite the committed package-lock.json, nor anything else write outside what .gitignore names);
// - the Dockerfile, replayed without a container engine (none runs on the test machines): its COPY set
//   into an empty folder per stage and its RUN lines in there, then the image's CMD with its ENV, the
//   admin-key recovery command inside the image folder, and its HEALTHCHECK.
//
// The install and the Dockerfile's build take a minute or more each (better-sqlite3 13 is prebuilt), so the two
// tests run side by side.
// Uncommitted changes are not in the clone: commit before running this file.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, posix, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort } from "@flagstaff/test-harness";

/** The repository: packages/server/dist/test/clean-clone.test.js → the root. */
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
/**
 * What a build writes (see scripts/start.mjs and scripts/build-console.mjs): `npm start` with nothing changed
 * must leave them as they were. (Not a time bound: on a loaded machine a start that builds nothing can still
 * take seconds, and a timed assertion would fail there.)
 */
const BUILD_MARKERS = [
  "packages/core/dist/tsconfig.tsbuildinfo",
  "packages/server/dist/tsconfig.tsbuildinfo",
  "packages/console/dist/web/.built",
];
const GENERATED_KEY = /fsk_[A-Za-z0-9_-]{43}/;

const children = new Set<ChildProcess>();
let work: string;
let clone: string;

/** This process's environment without what would steer the commands under test (npm's, node --test's, the server's). */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^npm_/i.test(name) || name === "INIT_CWD") continue;
    if (["NODE_TEST_CONTEXT", "NODE_OPTIONS", "DATABASE_URL", "PORT", "HOST", "ADMIN_API_KEY"].includes(name)) continue;
    env[name] = value;
  }
  return env;
}

/** Kills a child and everything it started (each child leads its own process group). */
function killTree(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Started {
  readonly child: ChildProcess;
  output(): string;
  stdout(): string;
  /** Resolves with the exit code (null after a signal) when the process and its pipes are done. */
  readonly closed: Promise<Exit>;
}

function start(command: string, args: readonly string[], cwd: string, env: Record<string, string>): Started {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const closed = new Promise<Exit>((resolve) => {
    child.once("error", (error) => {
      stderr += `\n[spawn error] ${error.message}`;
      resolve({ code: null, signal: null });
    });
    child.once("close", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    closed,
    stdout: () => stdout,
    output: () =>
      `$ ${command} ${args.join(" ")}  (in ${cwd})\n--- stdout ---\n${stdout.slice(-3000)}\n--- stderr ---\n${stderr.slice(-3000)}`,
  };
}

interface Ran {
  code: number | null;
  stdout: string;
  output: string;
}

/** Runs a command to its end; past `timeoutMs` it is killed with everything it started, and this throws. */
async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs: number },
): Promise<Ran> {
  const started = start(command, args, options.cwd, options.env ?? baseEnv());
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
  });
  const exit = await Promise.race([started.closed, timedOut]);
  clearTimeout(timer);
  if (exit === "timeout") {
    killTree(started.child);
    throw new Error(`timed out after ${options.timeoutMs} ms\n${started.output()}`);
  }
  return { code: exit.code, stdout: started.stdout(), output: started.output() };
}

async function runOk(command: string, args: readonly string[], options: Parameters<typeof run>[2]): Promise<Ran> {
  const result = await run(command, args, options);
  assert.equal(result.code, 0, result.output);
  return result;
}

/** Polls /healthz until 200; answers the milliseconds since `since`. Throws if the process ends or the deadline passes. */
async function healthy(url: string, server: Started, since: number, deadlineMs: number): Promise<number> {
  for (;;) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`the server ended before it answered /healthz\n${server.output()}`);
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return performance.now() - since;
    } catch {
      // not listening yet
    }
    if (performance.now() - since > deadlineMs) {
      killTree(server.child);
      throw new Error(`/healthz did not answer 200 within ${deadlineMs} ms\n${server.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * SIGTERM to the process group, as a terminal's Ctrl-C or a service manager's stop reaches npm and the server
 * alike; answers how the leader ended (npm ends on the signal itself; a server run directly exits 0).
 * SIGKILL past the deadline.
 */
async function stop(server: Started): Promise<Exit> {
  if (server.child.pid !== undefined && server.child.exitCode === null) {
    try {
      process.kill(-server.child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), 15_000);
  });
  const exit = await Promise.race([server.closed, late]);
  clearTimeout(timer);
  if (exit === "late") {
    killTree(server.child);
    throw new Error(`the server did not stop within 15 s\n${server.output()}`);
  }
  return exit;
}

/** Stops `npm start`: npm ends on the signal, the server exits by itself (it must not outlive the test). */
async function stopNpmStart(server: Started): Promise<void> {
  const exit = await stop(server);
  assert.ok(
    exit.code === 0 || exit.signal === "SIGTERM",
    `npm start ended with ${JSON.stringify(exit)}\n${server.output()}`,
  );
}

/** `git status --porcelain` of a checkout: empty when nothing tracked changed and nothing untracked appeared. */
function gitStatus(cwd: string): string {
  const result = spawnSync("git", ["status", "--porcelain"], { cwd, encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

async function status(url: string, path: string, key: string): Promise<number> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
}

/** Polls until `attempt` answers true or the deadline passes; answers whether it did. */
async function eventually(attempt: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await attempt()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), "flagstaff-clean-clone-"));
  clone = join(work, "repo");
  const head = spawnSync("git", ["rev-parse", "HEAD"], { cwd: REPO, encoding: "utf8" });
  assert.equal(head.status, 0, `not a git checkout: ${head.stderr}`);
  await runOk("git", ["clone", "--quiet", "--no-hardlinks", "--no-checkout", REPO, clone], {
    cwd: work,
    timeoutMs: 60_000,
  });
  await runOk("git", ["checkout", "--quiet", "--detach", head.stdout.trim()], { cwd: clone, timeoutMs: 60_000 });
});

after(() => {
  for (const child of children) killTree(child);
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe("a clean clone of HEAD", { concurrency: true }, () => {
  test("npm install; then npx flagstaff, npm start (no build with nothing changed, a build when a source changed) and npm run admin-key; git status stays empty", {
    timeout: 1_200_000,
  }, async (t) => {
    const dirty = gitStatus(REPO);
    if (dirty !== "") t.diagnostic("the checkout has uncommitted changes; this tests HEAD, without them");
    const installing = performance.now();
    // Fetching the packages and building every package takes about a minute on a quiet machine, several
    // times that on a loaded one: the bound is generous, this checks that it works, not how fast.
    // The README's command; the flags only keep npm off the network (this machine has none) and quiet.
    const install = await runOk("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: clone,
      timeoutMs: 900_000,
    });
    t.diagnostic(`npm install, with the prepare build: ${Math.round(performance.now() - installing)} ms`);
    // A successful install ends as one: no warning that reads like a failure (npm 11's install scripts
    // "not yet covered by allowScripts", engine warnings).
    assert.doesNotMatch(install.output, /npm warn|install-scripts|EBADENGINE/, install.output);
    // Every dependency's install script is reviewed in package.json's allowScripts (npm 11 and later).
    const scripts = await run("npm", ["install-scripts", "ls"], { cwd: clone, timeoutMs: 60_000 });
    if (scripts.code === 0) assert.match(scripts.stdout, /No packages with unreviewed install scripts/, scripts.output);
    else t.diagnostic(`this npm has no install-scripts command: ${scripts.output}`);
    assert.equal(gitStatus(clone), "", "npm install left the clone as it was checked out");

    // `npx --no` never fetches a package of that name from the registry: only the linked workspace bin runs.
    const version = await runOk("npx", ["--no", "--", "flagstaff", "--version"], { cwd: clone, timeoutMs: 60_000 });
    assert.equal(version.stdout, "0.1.0\n", version.output);

    // No DATABASE_URL: the README's default, ./data/flags.db inside the clone (which .gitignore names).
    const env = { ...baseEnv(), HOST: "127.0.0.1", LOG_LEVEL: "warn" };
    const markers = () => BUILD_MARKERS.map((marker) => `${marker} ${statSync(join(clone, marker)).mtimeMs}`);
    const npmStart = async (label: string, deadlineMs: number) => {
      const port = await freePort();
      const since = performance.now();
      const server = start("npm", ["start"], clone, { ...env, PORT: String(port) });
      const ms = await healthy(`http://127.0.0.1:${port}`, server, since, deadlineMs);
      t.diagnostic(`${label}: npm start → first 200 on /healthz in ${Math.round(ms)} ms`);
      return { server, url: `http://127.0.0.1:${port}` };
    };

    // 1. Empty database, right after npm ci: no build, a generated admin key.
    const installed = markers();
    const first = await npmStart("empty database", 60_000);
    let generated: string;
    try {
      assert.doesNotMatch(first.server.output(), /building/i, "nothing to build after npm ci");
      assert.deepEqual(markers(), installed, "npm start rebuilt nothing after npm ci");
      assert.ok(await eventually(async () => GENERATED_KEY.test(first.server.stdout()), 5_000), first.server.output());
      generated = GENERATED_KEY.exec(first.server.stdout())?.[0] as string;
      assert.equal(await status(first.url, "/projects", generated), 200);
    } finally {
      await stopNpmStart(first.server);
    }

    // 2. Admin-key recovery from the repository, with the server stopped.
    const created = await runOk("npm", ["run", "--silent", "admin-key", "--", "create", "--name", "ops", "--json"], {
      cwd: clone,
      env,
      timeoutMs: 60_000,
    });
    const recovered = JSON.parse(created.stdout).key as string;
    assert.match(recovered, GENERATED_KEY);

    // 3. A restart with nothing changed.
    const second = await npmStart("restart, nothing changed", 60_000);
    try {
      assert.doesNotMatch(second.server.output(), /building/i);
      assert.deepEqual(markers(), installed, "a restart with nothing changed rebuilt nothing");
      assert.equal(await status(second.url, "/projects", recovered), 200);
    } finally {
      await stopNpmStart(second.server);
    }

    // 4. A changed source is built before the server starts.
    const source = join(clone, "packages/server/src/main.ts");
    const later = new Date(Date.now() + 2_000);
    utimesSync(source, later, later);
    const third = await npmStart("after a source changed", 120_000);
    try {
      assert.match(third.server.output(), /building the server/);
      assert.notDeepEqual(markers(), installed, "the build marked itself");
    } finally {
      await stopNpmStart(third.server);
    }
    assert.ok(existsSync(join(clone, "data/flags.db")), "the README's default database");

    // 5. Installed, started three times, a key recovered, rebuilt: nothing git tracks changed.
    assert.equal(gitStatus(clone), "", "the clone is as clean as it was checked out");
  });

  test("the Dockerfile, replayed: build stage, run stage, CMD, admin-key recovery, HEALTHCHECK", {
    timeout: 1_200_000,
  }, async (t) => {
    const dockerfile = parseDockerfile(readFileSync(join(clone, "Dockerfile"), "utf8"));
    const ignore = dockerIgnore(join(clone, ".dockerignore"));
    const roots = new Map<string, string>();
    const [buildStage, runStage] = dockerfile.stages;
    assert.ok(buildStage && runStage && dockerfile.stages.length === 2, "two stages: build and run");

    for (const stage of dockerfile.stages) {
      const rootfs = join(work, "image", stage.name);
      mkdirSync(rootfs, { recursive: true });
      roots.set(stage.name, rootfs);
      let workdir = "/";
      const env: Record<string, string> = {};
      for (const step of stage.steps) {
        if (step.kind === "WORKDIR") {
          workdir = posix.resolve(workdir, step.path);
          mkdirSync(join(rootfs, workdir), { recursive: true });
        } else if (step.kind === "ENV") {
          Object.assign(env, step.values);
        } else if (step.kind === "COPY") {
          // --chown is not replayed: files here belong to whoever runs the test.
          const from = step.from === undefined ? undefined : roots.get(step.from);
          if (step.from !== undefined) assert.ok(from, `COPY --from=${step.from}: no such earlier stage`);
          copy(step, from ?? clone, from === undefined ? ignore : undefined, rootfs, workdir);
        } else if (step.kind === "RUN") {
          if (skippedRun(step.command)) continue;
          assert.doesNotMatch(
            step.command,
            /(^|[\s=])\/(?!dev\/null)/,
            `RUN with an absolute path cannot be replayed outside a container: ${step.command}`,
          );
          const started = performance.now();
          await runOk("sh", ["-c", step.command], {
            cwd: join(rootfs, workdir),
            env: { ...baseEnv(), ...env },
            timeoutMs: 900_000,
          });
          t.diagnostic(
            `[${stage.name}] RUN ${step.command.slice(0, 60)}…: ${Math.round(performance.now() - started)} ms`,
          );
        }
      }
      stage.workdir = workdir;
      stage.env = env;
    }

    const rootfs = roots.get(runStage.name) as string;
    const app = join(rootfs, runStage.workdir);
    // Only what the server runs (and the console it serves, built): no dev dependencies, no client packages, no
    // sources, no tests.
    for (const absent of [
      "node_modules/typescript",
      "node_modules/@types/node",
      "node_modules/@biomejs/biome",
      "node_modules/playwright-core",
      "node_modules/ky",
      "node_modules/vite",
      "node_modules/react",
      "packages/sdk",
      "packages/cli",
      "packages/openfeature",
      "packages/server/src",
      "packages/server/test",
      "packages/server/dist/test",
      "packages/core/src",
      "packages/console/src",
    ]) {
      assert.ok(!existsSync(join(app, absent)), `the image holds ${absent}`);
    }
    assert.deepEqual(readdirSync(join(app, "node_modules/@flagstaff")).sort(), ["core", "server"]);
    assert.ok(statSync(join(rootfs, "data")).isDirectory(), "the /data volume's folder exists");
    assert.equal(runStage.user, "node", "the image runs as the unprivileged node user");

    // The CMD with the image's ENV; only the address and the database move into this machine's terms.
    assert.ok(runStage.cmd, "the run stage has a CMD");
    const port = await freePort();
    const env = {
      ...baseEnv(),
      ...runStage.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: `file:${join(rootfs, "data/flags.db")}`,
      FEED_POLL_INTERVAL_MS: "100",
    };
    const [command, ...args] = runStage.cmd as string[];
    const since = performance.now();
    const server = start(command as string, args, app, env);
    const url = `http://127.0.0.1:${port}`;
    try {
      t.diagnostic(`image CMD → first 200 on /healthz in ${Math.round(await healthy(url, server, since, 30_000))} ms`);
      assert.ok(await eventually(async () => GENERATED_KEY.test(server.stdout()), 5_000), server.output());

      // The web console, built in the build stage, is served at /console/ with its hashed script.
      const consolePage = await fetch(`${url}/console/`);
      assert.equal(consolePage.status, 200, "the image serves the console");
      const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await consolePage.text())?.[1];
      assert.ok(script, "the console's index.html loads a hashed script");
      assert.equal((await fetch(`${url}${script}`)).status, 200);

      // Admin-key recovery inside the image: `docker exec <container> node packages/server/dist/src/main.js admin-key …`.
      const recovery = await runOk(
        "node",
        ["packages/server/dist/src/main.js", "admin-key", "create", "--name", "recovery", "--json"],
        { cwd: app, env, timeoutMs: 60_000 },
      );
      const key = JSON.parse(recovery.stdout).key as string;
      assert.ok(await eventually(async () => (await status(url, "/projects", key)) === 200, 10_000));

      // The HEALTHCHECK, as Docker runs it (shell form, in the container's environment).
      assert.ok(runStage.healthcheck, "the run stage has a HEALTHCHECK");
      const check = (checkPort: number) =>
        run("sh", ["-c", runStage.healthcheck as string], {
          cwd: app,
          env: { ...env, PORT: String(checkPort) },
          timeoutMs: 30_000,
        });
      assert.equal((await check(port)).code, 0, "healthy on the PORT the server listens on");
      assert.notEqual((await check(await freePort())).code, 0, "unhealthy where nothing listens");
    } finally {
      assert.deepEqual(await stop(server), { code: 0, signal: null }, server.output());
    }
  });
});

// ---- a replay of the Dockerfile instructions this repository uses --------------------------------------------

type Step =
  | { kind: "WORKDIR"; path: string }
  | { kind: "ENV"; values: Record<string, string> }
  | { kind: "COPY"; from?: string; sources: string[]; dest: string }
  | { kind: "RUN"; command: string };

interface Stage {
  name: string;
  steps: Step[];
  workdir: string;
  env: Record<string, string>;
  user?: string;
  cmd?: string[];
  healthcheck?: string;
}

/** Parses the instructions the replay understands; any other instruction or form fails the test. */
function parseDockerfile(text: string): { stages: Stage[] } {
  const stages: Stage[] = [];
  const logical = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  for (const line of logical) {
    const [instruction = "", ...restWords] = line.split(/\s+/);
    const rest = line.slice(instruction.length).trim().replace(/\s+/g, " ");
    const stage = stages.at(-1);
    if (instruction === "FROM") {
      const match = /^\S+(?: AS (\S+))?$/i.exec(rest);
      assert.ok(match, `FROM ${rest}`);
      stages.push({ name: match[1] ?? `stage-${stages.length}`, steps: [], workdir: "/", env: {} });
      continue;
    }
    assert.ok(stage, `${instruction} before FROM`);
    switch (instruction) {
      case "WORKDIR":
        stage.steps.push({ kind: "WORKDIR", path: rest });
        break;
      case "ENV": {
        const values: Record<string, string> = {};
        for (const pair of restWords.filter((w) => w !== "")) {
          const match = /^([A-Za-z_][A-Za-z0-9_]*)=([^"'$\s]*)$/.exec(pair);
          assert.ok(match, `ENV in KEY=value form without quotes or variables: ${pair}`);
          values[match[1] as string] = match[2] as string;
        }
        stage.steps.push({ kind: "ENV", values });
        break;
      }
      case "COPY": {
        const words = rest.split(" ");
        let from: string | undefined;
        while (words[0]?.startsWith("--")) {
          const flag = words.shift() as string;
          if (flag.startsWith("--from=")) from = flag.slice("--from=".length);
          else assert.match(flag, /^--chown=/, `COPY ${flag}`);
        }
        assert.ok(words.length >= 2 && !rest.includes("["), `COPY in the form COPY <src>... <dest>: ${rest}`);
        assert.ok(!words.some((w) => /[*?[]/.test(w)), `COPY without wildcards: ${rest}`);
        stage.steps.push({ kind: "COPY", from, sources: words.slice(0, -1), dest: words.at(-1) as string });
        break;
      }
      case "RUN":
        assert.ok(!rest.startsWith("["), "RUN in shell form");
        stage.steps.push({ kind: "RUN", command: rest });
        break;
      case "USER":
        stage.user = rest;
        break;
      case "CMD":
        stage.cmd = JSON.parse(rest) as string[];
        break;
      case "HEALTHCHECK": {
        const match = /^(?:--\S+ )*CMD (.+)$/.exec(rest);
        assert.ok(match && !match[1]?.startsWith("["), `HEALTHCHECK [options] CMD <shell command>: ${rest}`);
        stage.healthcheck = match[1] as string;
        break;
      }
      case "VOLUME":
      case "EXPOSE":
        break; // nothing to replay on a plain folder
      default:
        assert.fail(`the replay does not know ${instruction}; teach it before using it in the Dockerfile`);
    }
  }
  return { stages };
}

/**
 * The one RUN the replay skips: the build tools the base image lacks. It installs exactly python3, make and g++
 * with apt-get, which this machine must already have (.ci/run's machines do); anything else fails the test.
 */
function skippedRun(command: string): boolean {
  if (!/apt-get/.test(command)) return false;
  const expected =
    "apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*";
  assert.equal(command, expected, "the only apt-get RUN the replay may skip installs python3, make and g++");
  for (const tool of ["python3", "make", "g++"]) {
    assert.equal(spawnSync("sh", ["-c", `command -v ${tool}`]).status, 0, `${tool} is needed on this machine`);
  }
  return true;
}

/** The .dockerignore patterns as a test of a context-relative path (no ! exceptions: none are used). */
function dockerIgnore(file: string): (path: string) => boolean {
  const patterns = readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  assert.ok(!patterns.some((p) => p.startsWith("!")), ".dockerignore without ! exceptions");
  const regexps = patterns.map((pattern) => {
    const body = pattern
      .replace(/^\/+|\/+$/g, "")
      .split("/")
      .map((part) =>
        part === "**"
          ? "(?:.*)"
          : part
              .replace(/[.+^${}()|\\]/g, "\\$&")
              .replace(/\*/g, "[^/]*")
              .replace(/\?/g, "[^/]"),
      )
      .join("/")
      .replace(/\(\?:\.\*\)\//g, "(?:.*/)?");
    return new RegExp(`^${body}$`);
  });
  return (path) => regexps.some((regexp) => regexp.test(path));
}

/** COPY: a folder's contents into dest, a file into dest (or into dest/ when dest ends in / or there are several). */
function copy(
  step: Extract<Step, { kind: "COPY" }>,
  from: string,
  ignored: ((path: string) => boolean) | undefined,
  rootfs: string,
  workdir: string,
): void {
  const dest = join(rootfs, posix.resolve(workdir, step.dest));
  const intoFolder = step.dest.endsWith("/") || step.sources.length > 1;
  for (const source of step.sources) {
    const path = join(from, step.from === undefined ? source : posix.resolve("/", source));
    assert.ok(existsSync(path), `COPY ${source}: not found`);
    const isFolder = lstatSync(path).isDirectory();
    const target = isFolder || !intoFolder ? dest : join(dest, basename(path));
    mkdirSync(isFolder ? target : dirname(target), { recursive: true });
    cpSync(path, target, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (file) => ignored === undefined || !ignored(relative(from, file).split("\\").join("/")),
    });
  }
}
