// On a Node.js older than the project needs (Node.js 20: the system runtime of the machines it is built on),
// the README's `npm install` and `npm start` stop at once with the command that installs Node.js 24: never
// a crash, nothing compiled or loaded, and no wall of npm's engine warnings before the message (.npmrc). Needs such a Node.js on this machine (/usr/bin/node, or one on
// PATH); the suite itself runs on 22 or 24.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, mkdirSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const ENGINES = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).engines.node as string;
const INSTALL = 'export PATH="$(bash scripts/install-node.sh 24)/bin:$PATH"';

/** A node binary older than 22 on this machine: /usr/bin/node or the first one on PATH. */
function oldNode(): { path: string; version: string } | undefined {
  const candidates = ["/usr/bin/node", ...(process.env.PATH ?? "").split(delimiter).map((d) => join(d, "node"))];
  for (const path of candidates) {
    const run = spawnSync(path, ["--version"], { encoding: "utf8" });
    const version = run.stdout?.trim();
    if (run.status === 0 && version !== undefined && Number(version.slice(1).split(".")[0]) < 22)
      return { path, version };
  }
  return undefined;
}

const old = oldNode();
const work = mkdtempSync(join(tmpdir(), "flagstaff-old-node-"));
after(() => rmSync(work, { recursive: true, force: true }));

/** The environment of a shell whose first node is the old one (as on a fresh Node.js 20 machine). */
function oldEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      value !== undefined &&
      !/^npm_/i.test(name) &&
      !["NODE_TEST_CONTEXT", "NODE_OPTIONS", "INIT_CWD"].includes(name)
    )
      env[name] = value;
  }
  env.PATH = [dirname(old?.path ?? "/usr/bin"), env.PATH].join(delimiter);
  return env;
}

function assertStopped(run: ReturnType<typeof spawnSync>, label: string): void {
  const output = `${run.stdout}${run.stderr}`;
  assert.equal(run.signal, null, `${label}: no crash (${output})`);
  assert.equal(run.status, 1, `${label}: ${output}`);
  assert.match(output, /Flagstaff needs Node\.js 22\.12 or newer/, label);
  assert.ok(output.includes(old?.version ?? ""), `${label} names the running version`);
  assert.ok(output.includes(INSTALL), `${label} gives the command: ${output}`);
}

describe(`on ${old?.version ?? "an old Node.js"} (engines ${ENGINES})`, {
  skip: old === undefined && "no Node.js older than 22 here",
}, () => {
  test("npm install stops before any package runs a script or loads, with the command to run; the lock is not rewritten", {
    timeout: 300_000,
  }, () => {
    // The files npm reads: the workspaces' manifests, the lock, the check (a copy: no build, no network use
    // beyond the npm cache and registry that the README's install uses anyway).
    const files = [".npmrc", "package.json", "package-lock.json", "scripts/check-node.mjs", "scripts/install-node.sh"];
    for (const name of ["core", "server", "sdk", "openfeature", "cli", "console", "test-harness"]) {
      files.push(`packages/${name}/package.json`);
    }
    for (const file of files) {
      mkdirSync(dirname(join(work, file)), { recursive: true });
      copyFileSync(join(REPO, file), join(work, file));
    }
    const run = spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: work,
      env: oldEnv(),
      encoding: "utf8",
      timeout: 240_000,
    });
    assertStopped(run, "npm install");
    assert.ok(!run.stdout.includes("> npm run build"), "the prepare build did not start");
    // The message is what the newcomer reads: not after dozens of lines of npm's engine warnings.
    const output = `${run.stdout}${run.stderr}`;
    assert.doesNotMatch(output, /EBADENGINE|npm warn/, output);
    assert.ok(output.split("\n").length < 30, `a short output:\n${output}`);
    assert.equal(
      readFileSync(join(work, "package-lock.json"), "utf8"),
      readFileSync(join(REPO, "package-lock.json"), "utf8"),
    );
  });

  test("npm start stops at once, with the command to run", { timeout: 60_000 }, () => {
    const run = spawnSync("npm", ["start"], { cwd: REPO, env: oldEnv(), encoding: "utf8", timeout: 30_000 });
    assertStopped(run, "npm start");
  });
});
