// scripts/test.mjs, the suite's runner, on test files of its own: a file whose process ends (exit code 0)
// before all of its results were written fails the run, named, although node --test passes it with the
// results that arrived; a run of whole files passes.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "flagstaff-runner-"));
after(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
const WHOLE = join(dir, "whole.test.js");
writeFileSync(
  WHOLE,
  `import { describe, test } from "node:test";
describe("a suite", () => { test("one", () => {}); test("two", () => {}); });
test("three", () => {});
test("skipped", { skip: true }, () => {});
`,
);
const CUT = join(dir, "cut.test.js");
writeFileSync(
  CUT,
  `import { test } from "node:test";
test("first", () => {});
test("ends the process", () => { process.exit(0); });
test("never runs", () => {});
`,
);

/** Runs scripts/test.mjs on the files, as the suite's own runner would, without this run's settings. */
function runner(files: string[]): Promise<{ code: number | null; output: string }> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !["NODE_TEST_CONTEXT", "NODE_OPTIONS", "REQUIRE_POSTGRES"].includes(name))
      env[name] = value;
  }
  // Nothing listens on port 1: the PostgreSQL leg is skipped at once.
  env.TEST_POSTGRES_URL = "postgres://postgres@127.0.0.1:1/postgres";
  const child = spawn(process.execPath, ["scripts/test.mjs", ...files], { cwd: REPO, env });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, output })));
}

describe("scripts/test.mjs counts every file's tests", () => {
  test("whole files pass", { timeout: 120_000 }, async () => {
    const { code, output } = await runner([WHOLE]);
    assert.equal(code, 0, output);
    assert.doesNotMatch(output, /went missing/);
  });

  test("a file whose process exits 0 in its second test fails the run, named", { timeout: 120_000 }, async () => {
    const { code, output } = await runner([WHOLE, CUT]);
    assert.equal(code, 1, output);
    assert.match(output, /Tests went missing/);
    assert.match(output, new RegExp(`${CUT.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: its run never reached its end`));
    assert.doesNotMatch(output, /whole\.test\.js:/);
    assert.match(output, /FAILED: tests went missing in 1 file\(s\)/);
  });
});
