// What needs no server: help, version, usage errors, and the exit codes documented where they should be.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { expectExit, runCli } from "./harness.js";

const PACKAGE = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("flagstaff without a server", () => {
  test("--help lists every command, the options and the exit codes", async () => {
    const { stdout, stderr } = expectExit(await runCli(["--help"]), 0);
    assert.equal(stderr, "");
    for (const line of [
      "projects create <id> --name <name>",
      "keys create --role check|read|write --name <name>",
      "flagstaff-server admin-key",
      "flags set <name>",
      "flags add-segments <name> <segmentId...>",
      "segments update <id>",
      "check <flag>",
      "environments list",
      "environments create <id> --name <name>",
      "environments delete <id>",
      "flags copy <name> --from <environment> --to <environment>",
      "--environment <id>",
      "FLAGSTAFF_ENVIRONMENT",
      "webhooks create <url>",
      "webhooks deliveries <id>",
      "--url <url>",
      "FLAGSTAFF_API_KEY",
      "FLAGSTAFF_PROJECT",
      "--json",
      "--timeout <ms>",
    ]) {
      assert.ok(stdout.includes(line), `help mentions ${line}`);
    }
    for (let code = 0; code <= 7; code++) assert.match(stdout, new RegExp(`^  ${code}  \\S`, "m"));
    assert.equal(expectExit(await runCli(["-h"]), 0).stdout, stdout);
  });

  test("help of a noun and of a command; --version", async () => {
    const flags = expectExit(await runCli(["flags", "--help"]), 0).stdout;
    assert.match(flags, /Usage: flagstaff flags <subcommand>/);
    assert.match(flags, /remove-actors <name> <actor\.\.\.>/);
    const set = expectExit(await runCli(["flags", "set", "--help"]), 0).stdout;
    assert.match(set, /Usage: flagstaff flags set <name> \[options\]/);
    assert.match(set, /--actors-percent <n>/);
    assert.match(set, /--calls-percent <n>/);
    const check = expectExit(await runCli(["check", "-h"]), 0).stdout;
    assert.match(check, /-a, --actor <id>/);
    assert.match(check, /--environment <id> +Environment of flags, check and keys create \(env FLAGSTAFF_ENVIRONMENT/);
    const create = expectExit(await runCli(["environments", "create", "--help"]), 0).stdout;
    assert.match(create, /Usage: flagstaff environments create <id> --name <name> \[options\]/);
    assert.match(create, /--copy-from <id>/);
    // events gives --environment its own meaning (a filter the variable does not set): shown once, as its own.
    const events = expectExit(await runCli(["events", "--help"]), 0).stdout;
    assert.equal(events.match(/--environment/g)?.length, 1, events);
    assert.match(events, /--environment <id> +Only events of this environment .*FLAGSTAFF_ENVIRONMENT does not apply/);
    assert.equal(expectExit(await runCli(["--version"]), 0).stdout, `${PACKAGE.version}\n`);
    assert.equal(expectExit(await runCli(["-V"]), 0).stdout, `${PACKAGE.version}\n`);
  });

  test("usage errors exit 2 and say what is wrong", async () => {
    const none = expectExit(await runCli([]), 2);
    assert.match(none.stderr, /Usage: flagstaff/);
    assert.match(expectExit(await runCli(["frobnicate"]), 2).stderr, /Unknown command "frobnicate"/);
    assert.match(expectExit(await runCli(["flags"]), 2).stderr, /needs a subcommand: list, get/);
    assert.match(expectExit(await runCli(["flags", "wave"]), 2).stderr, /Unknown subcommand "wave"/);
    const option = expectExit(await runCli(["projects", "list", "--colour"]), 2);
    assert.match(option.stderr, /Unknown option --colour\./);
    assert.match(option.stderr, /flagstaff projects list --help/);
    assert.match(expectExit(await runCli(["projects", "create", "p"]), 2).stderr, /--name is required/);
    assert.match(expectExit(await runCli(["projects", "get"]), 2).stderr, /Wrong number of arguments/);
    expectExit(await runCli(["projects", "get", "a", "b"]), 2);
    expectExit(await runCli(["flags", "add-actors", "f", "--project", "p"]), 2);
    expectExit(await runCli(["projects", "create", "p", "--name"]), 2);
    expectExit(await runCli(["flags", "set", "f", "--project", "p"]), 2);
    expectExit(await runCli(["flags", "copy", "f", "--from", "a", "--project", "p"]), 2);
    expectExit(await runCli(["environments", "update", "qa", "--project", "p"]), 2);
    const both = expectExit(
      await runCli([
        "keys",
        "create",
        "--role",
        "write",
        "--name",
        "n",
        "--unbound",
        "--environment",
        "e",
        "--project",
        "p",
      ]),
      2,
    );
    assert.match(both.stderr, /--unbound and --environment exclude each other/);
    assert.match(
      expectExit(await runCli(["check", "f", "--environment", "", "--project", "p"]), 2).stderr,
      /--environment needs/,
    );
    expectExit(await runCli(["segments", "update", "seg_x", "--project", "p"]), 2);
    const nothing = expectExit(await runCli(["webhooks", "update", "wh_x", "--project", "p"]), 2);
    assert.match(nothing.stderr, /Nothing to change: pass --target, --event or --description/);
    expectExit(await runCli(["webhooks", "create", "--project", "p"]), 2);
    const status = expectExit(
      await runCli(["webhooks", "deliveries", "wh_x", "--status", "lost", "--project", "p"]),
      2,
    );
    assert.match(status.stderr, /--status must be one of pending, succeeded, failed/);
    expectExit(await runCli(["webhooks", "deliveries", "wh_x", "--limit", "0", "--project", "p"]), 2);
    assert.match(expectExit(await runCli(["flags", "list", "--project", "p", "--url", "nope"]), 2).stderr, /not a URL/);
    expectExit(await runCli(["flags", "list", "--project", "p", "--timeout", "soon"]), 2);
    assert.match(expectExit(await runCli(["admin-key", "list"]), 2).stderr, /Unknown command "admin-key"/);
  });

  test("the README documents every exit code", () => {
    for (let code = 0; code <= 7; code++) assert.match(README, new RegExp(`^\\| ${code} +\\|`, "m"));
  });
});
