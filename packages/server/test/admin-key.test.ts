// `flagstaff-server admin-key`: admin keys straight in the database, beside a running server that must follow.
// The command runs in this process through its exported entry; one case spawns the real entry point.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runAdminKeyCommand } from "../src/admin-key-command.js";
import { SERVER_MAIN as MAIN_JS } from "@flagstaff/test-harness";
import { ADMIN_KEY, createKey, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";

const SECRET = /fsk_[A-Za-z0-9_-]{43}/;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `admin-key <argv>` in this process with only `env` as its environment. */
async function adminKey(argv: readonly string[], env: Record<string, string> = {}): Promise<Result> {
  let stdout = "";
  let stderr = "";
  const io = {
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  };
  const code = await runAdminKeyCommand(argv, io);
  return { code, stdout, stderr };
}

function expectExit(result: Result, code: number, why = ""): Result {
  const output = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  assert.equal(result.code, code, `expected exit code ${code}${why ? ` (${why})` : ""}; ${output}`);
  return result;
}

function json<T = any>(result: Result): T {
  expectExit(result, 0);
  return JSON.parse(result.stdout) as T;
}

/** Runs the server's entry point as a process with only PATH and `env` as its environment. */
async function spawnMain(argv: readonly string[], env: Record<string, string>, cwd?: string): Promise<Result> {
  const child = spawn(process.execPath, [MAIN_JS, ...argv], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  return { code: code ?? -1, stdout, stderr };
}

/** Runs `attempt` until it answers true, for up to `ms`; answers whether it did. */
async function eventually(attempt: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await attempt()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("admin-key without a database", () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test("--help shows the subcommands, the options and the exit codes", async () => {
    const { stdout, stderr } = expectExit(await adminKey(["--help"]), 0);
    assert.equal(stderr, "");
    for (const text of [
      "create [--name <name>]",
      "list",
      "rename <keyId> --name <name>",
      "revoke <keyId>",
      "--database-url <url>",
      "--json",
    ]) {
      assert.ok(stdout.includes(text), `help mentions ${text}`);
    }
    for (const code of [0, 1, 2, 3, 4, 7]) assert.match(stdout, new RegExp(`^  ${code}  \\S`, "m"));
    assert.equal(expectExit(await adminKey(["create", "-h"]), 0).stdout, stdout);
    assert.match(expectExit(await adminKey([]), 2).stderr, /Usage: flagstaff-server admin-key/);
  });

  test("usage errors exit 2 and say what is wrong", async () => {
    const file = ["--database-url", "file:/nonexistent/flags.db"];
    assert.match(expectExit(await adminKey(["rotate", ...file]), 2).stderr, /Unknown subcommand "rotate"/);
    assert.match(expectExit(await adminKey(["list", "--database-url", ""]), 2).stderr, /must not be empty/);
    assert.match(expectExit(await adminKey(["list", "--colour", ...file]), 2).stderr, /Unknown option '--colour'/);
    expectExit(await adminKey(["list", "--database-url", "mysql://db"]), 2);
    expectExit(await adminKey(["create", "--name", "", ...file]), 2);
    expectExit(await adminKey(["list", "--name", "x", ...file]), 2);
    expectExit(await adminKey(["revoke", ...file]), 2);
    expectExit(await adminKey(["revoke", "key_a", "key_b", ...file]), 2);
    const problem = JSON.parse(
      expectExit(await adminKey(["list", "--json", "--database-url", "mysql://db"]), 2).stderr,
    );
    assert.equal(problem.code, "usage");
  });

  test("refuses a database no server has set up, and creates none", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagstaff-admin-key-"));
    dirs.push(dir);
    const missing = expectExit(await adminKey(["create", "--database-url", `file:${dir}/flags.db`]), 3);
    assert.match(missing.stderr, /No database file/);
    assert.doesNotMatch(missing.stdout, /fsk_/);
    // An existing file that is not a Flagstaff database (say, a mistyped path to another SQLite file).
    writeFileSync(join(dir, "other.db"), "");
    const other = expectExit(await adminKey(["create"], { DATABASE_URL: `file:${dir}/other.db` }), 3);
    assert.match(other.stderr, /No server has set up this database/);
  });
});

for (const dialect of DIALECTS) {
  describe(`admin-key beside a running server (${dialect})`, () => {
    let server: TestServer;

    before(async () => {
      // SQLite servers see writes of other processes when they poll the change log.
      server = await startServer({ dialect, env: { FEED_POLL_INTERVAL_MS: "100" } });
    });
    after(async () => {
      await server?.close();
    });

    test("create, list and revoke work on the database, and the running server follows", async () => {
      const database = ["--database-url", server.databaseUrl];
      const accepted = async (key: string) => (await server.request("GET", "/projects", { key })).status === 200;
      const refused = async (key: string) => (await server.request("GET", "/projects", { key })).status === 401;

      const created = json(await adminKey(["create", "--name", "ops laptop", "--json", ...database]));
      assert.match(created.key, SECRET);
      assert.match(created.id, /^key_/);
      assert.equal(created.role, "admin");
      assert.equal(created.projectId, null);
      assert.ok(await eventually(() => accepted(created.key)), "the running server accepts the new admin key");

      const text = expectExit(await adminKey(["create", ...database]), 0).stdout;
      assert.match(text, /Store this key now/);
      assert.match(text, /│ role +│ admin +│/);
      const second = SECRET.exec(text)?.[0] as string;
      assert.ok(await eventually(() => accepted(second)));

      const listed = json(await adminKey(["list", "--json", ...database]));
      assert.deepEqual(
        listed.map((k: any) => k.name),
        ["ADMIN_API_KEY", "ops laptop", "created with flagstaff-server admin-key"],
      );
      assert.ok(listed.every((k: any) => k.role === "admin" && k.projectId === null && !("key" in k)));
      assert.match(expectExit(await adminKey(["list", ...database]), 0).stdout, /│ key_\w+ +│ ops laptop +│/);

      // DATABASE_URL works as well as --database-url, which wins over it.
      const revoked = await adminKey(["revoke", created.id], { DATABASE_URL: server.databaseUrl });
      assert.match(expectExit(revoked, 0).stdout, /Revoked admin key/);
      assert.ok(await eventually(() => refused(created.key)), "the running server refuses the revoked key");
      assert.ok(await accepted(second));
      assert.ok(await accepted(ADMIN_KEY));
      expectExit(await adminKey(["list", ...database], { DATABASE_URL: "file:/nonexistent/flags.db" }), 0);

      const again = expectExit(await adminKey(["revoke", created.id, ...database]), 3);
      assert.match(again.stderr, /No admin key with id/);
      const projectKey = await createKey(server, await createProject(server), "write");
      expectExit(await adminKey(["revoke", projectKey.id, ...database]), 3, "only admin keys");
    });

    test("the server's entry point runs it, with the server's default database", async () => {
      const list = await spawnMain(["admin-key", "list", "--json"], { DATABASE_URL: server.databaseUrl });
      expectExit(list, 0);
      assert.ok(JSON.parse(list.stdout).some((k: any) => k.name === "ADMIN_API_KEY"));
      // No DATABASE_URL: the server's default, file:./data/flags.db, here in an empty folder.
      const cwd = mkdtempSync(join(tmpdir(), "flagstaff-admin-key-"));
      try {
        const fallback = await spawnMain(["admin-key", "list"], {}, cwd);
        assert.match(expectExit(fallback, 3).stderr, /No database file at \S*data\/flags\.db/);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    });
  });
}
