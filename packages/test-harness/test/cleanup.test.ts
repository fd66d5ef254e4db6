// The harness releases what a test started even when the test timed out, and what such a test starts
// after its file has ended: the file's process then ends by itself, and no server process outlives it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { waitFor, withDeadline } from "../src/index.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/late-servers.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "flagstaff-harness-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

test("a test that times out while its server starts leaves no process behind, and its file ends", async () => {
  const reportFile = join(dir, "report.txt");
  const env: NodeJS.ProcessEnv = { ...process.env, FIXTURE_REPORT: reportFile };
  // The fixture must be a test run of its own, not a part of this one.
  delete env.NODE_TEST_CONTEXT;
  // Without --test-force-exit: the harness alone must let the process end.
  const child = spawn(process.execPath, ["--test", "--test-reporter=tap", FIXTURE], { env, stdio: "pipe" });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const exit = await withDeadline(
    new Promise<number | null>((resolve) => child.once("close", resolve)),
    30_000,
    "the fixture's test run",
  ).catch((error: Error) => {
    child.kill("SIGKILL");
    throw new Error(`${error.message}:\n${output}`);
  });
  assert.notEqual(exit, 0, `the timed-out test fails the fixture's run:\n${output}`);

  const lines = readFileSync(reportFile, "utf8").trim().split("\n");
  const first = lines.find((line) => line.startsWith("first "));
  assert.ok(first, `the first server was spawned:\n${lines.join("\n")}\n${output}`);
  assert.ok(
    lines.some((line) => line.startsWith("refused ") && line.includes("after this test file ended")),
    `the server started after the file ended was refused:\n${lines.join("\n")}`,
  );
  const pids = lines.filter((line) => /^(first|second) \d+$/.test(line)).map((line) => Number(line.split(" ")[1]));
  await waitFor(`server processes ${pids.join(", ")} to be gone`, () => pids.every(gone), { timeoutMs: 10_000 });
});
