// The CLI's people, access and protected environments, its suggestions for mistyped options and commands,
// and what `flags copy` says when nothing changed (issue 32, findings 9 and 15); against a real server on
// both databases, the CLI run in this process.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { GRANT_ROLES, USER_ROLES } from "@flagstaff/sdk";
import { NOUNS } from "../src/cli.js";
import type { Options } from "../src/command.js";
import { GLOBAL_OPTIONS } from "../src/command.js";
import { type CliResult, expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, startServer } = harness;
const PASSWORD = "correct horse battery staple";

function json<T = any>(result: CliResult): T {
  expectExit(result, 0);
  return JSON.parse(result.stdout) as T;
}

describe("flagstaff: help from the contract, and what a mistyped word gets", () => {
  test("users and access help list the contract's roles, not hand-written ones", async () => {
    const create = expectExit(await runCli(["users", "create", "--help"]), 0).stdout;
    assert.ok(create.includes(`--role <${USER_ROLES.join("|")}>`), create);
    const update = expectExit(await runCli(["users", "update", "--help"]), 0).stdout;
    assert.ok(update.includes(`--role <${USER_ROLES.join("|")}>`), update);
    const grant = expectExit(await runCli(["access", "grant", "--help"]), 0).stdout;
    assert.ok(grant.includes(`--role <${GRANT_ROLES.join("|")}>`), grant);
    const main = expectExit(await runCli(["--help"]), 0).stdout;
    for (const line of ["users create --email <e-mail> --name <name>", "access grant <userId> --role"]) {
      assert.ok(main.includes(line), `${line} in\n${main}`);
    }
  });

  test("a mistyped option: 'unknown option --x; did you mean --y?', for the team lead's and every command's", async () => {
    const typo = expectExit(
      await runCli(["flags", "set", "checkout", "--percentage-actors", "50", "--project", "p"]),
      2,
    );
    assert.match(typo.stderr, /^flagstaff: Unknown option --percentage-actors; did you mean --actors-percent\?$/m);
    assert.doesNotMatch(typo.stderr, /positional/);
    assert.match(typo.stderr, /Run "flagstaff flags set --help" for usage\./);
    const none = expectExit(await runCli(["projects", "list", "--colour"]), 2);
    assert.match(none.stderr, /^flagstaff: Unknown option --colour\.$/m);
    // Every option of every command, with its last letter dropped, is recognised as itself.
    for (const noun of NOUNS) {
      const commands = noun.command ? [["", noun.command] as const] : Object.entries(noun.verbs ?? {});
      for (const [verb, command] of commands) {
        const options: Options = { ...GLOBAL_OPTIONS, ...command.options };
        for (const name of Object.keys(options)) {
          if (name.length < 4) continue;
          const typed = name.slice(0, -1);
          if (typed in options) continue;
          const words = [noun.name, verb].filter((w) => w !== "");
          const result = expectExit(await runCli([...words, `--${typed}`]), 2, `${words.join(" ")} --${typed}`);
          assert.ok(
            result.stderr.includes(`Unknown option --${typed}; did you mean --${name}?`),
            `${words.join(" ")} --${typed}: ${result.stderr}`,
          );
        }
      }
    }
    // Commands and subcommands too.
    assert.match(expectExit(await runCli(["flgs", "list"]), 2).stderr, /Unknown command "flgs"; did you mean flags\?/);
    assert.match(
      expectExit(await runCli(["users", "craete"]), 2).stderr,
      /Unknown subcommand "craete" of "flagstaff users"; did you mean "flagstaff users create"\?/,
    );
  });
});

for (const dialect of DIALECTS) {
  describe(`flagstaff users, access, environments --protected, flags copy against a real server (${dialect})`, () => {
    let server: TestServer;
    let projects = 0;
    const admin = (args: string[], stdin = "") => runCli(["--url", server.url, "--key", ADMIN_KEY, ...args], {}, stdin);
    const project = async () => {
      const id = `cli-people-${++projects}`;
      expectExit(await admin(["projects", "create", id, "--name", id]), 0);
      return ["--project", id];
    };

    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server?.close());

    test("users: create (with a password from stdin), list, get, update, delete", async () => {
      const made = json(
        await admin(
          ["users", "create", "--email", "ada@example.com", "--name", "Ada", "--password-stdin", "--json"],
          `${PASSWORD}\n`,
        ),
      );
      assert.deepEqual([made.email, made.role, made.hasPassword], ["ada@example.com", "member", true]);
      // The password is the one given: Ada signs in with it.
      const login = await server.request("POST", "/auth/login", {
        key: null,
        body: { email: "ada@example.com", password: PASSWORD },
      });
      assert.equal(login.status, 200, login.text);

      const listed = expectExit(await admin(["users", "list"]), 0).stdout;
      assert.match(listed, /│ ID +│ EMAIL +│ NAME +│ ROLE +│ DISABLED +│ PASSWORD +│ LAST SIGN-IN +│/);
      assert.match(listed, new RegExp(`│ ${made.id} +│ ada@example\\.com +│ Ada +│ member +│ +│ yes +│ \\d{4}-`));
      assert.match(expectExit(await admin(["users", "get", made.id]), 0).stdout, /│ email +│ ada@example\.com +│/);

      const promoted = json(await admin(["users", "update", made.id, "--role", "admin", "--disabled", "--json"]));
      assert.deepEqual([promoted.role, promoted.disabled], ["admin", true]);
      const enabled = json(
        await admin(["users", "update", made.id, "--no-disabled", "--remove-password", "--name", "Ada L.", "--json"]),
      );
      assert.deepEqual([enabled.disabled, enabled.hasPassword, enabled.name], [false, false, "Ada L."]);
      assert.match(
        expectExit(await admin(["users", "update", made.id]), 2).stderr,
        /Nothing to change: pass --name, --role/,
      );
      // The server's refusals: an unknown role (400), a taken e-mail (409).
      expectExit(await admin(["users", "update", made.id, "--role", "owner"]), 6);
      const taken = expectExit(await admin(["users", "create", "--email", "ADA@example.com", "--name", "Again"]), 5);
      assert.match(taken.stderr, /user_exists/);
      assert.match(expectExit(await admin(["users", "delete", made.id]), 0).stdout, /Deleted person/);
      expectExit(await admin(["users", "get", made.id]), 3);
    });

    test("access: grant, list, change, revoke; refusals", async () => {
      const p = await project();
      const grace = json(await admin(["users", "create", "--email", "grace@example.com", "--name", "Grace", "--json"]));
      const granted = expectExit(await admin(["access", "grant", grace.id, "--role", "write", ...p]), 0).stdout;
      assert.match(granted, /│ role +│ write +│/);
      json(await admin(["access", "grant", grace.id, "--role", "read", ...p, "--json"]));
      const listed = expectExit(await admin(["access", "list", ...p]), 0).stdout;
      assert.match(listed, new RegExp(`│ ${grace.id} +│ grace@example\\.com +│ Grace +│ read +│`));
      assert.deepEqual(
        json(await admin(["access", "list", ...p, "--json"])).map((g: any) => [g.userId, g.role]),
        [[grace.id, "read"]],
      );
      assert.match(expectExit(await admin(["access", "revoke", grace.id, ...p]), 0).stdout, /Removed/);
      assert.match(expectExit(await admin(["access", "list", ...p]), 0).stdout, /No grants/);
      expectExit(await admin(["access", "revoke", grace.id, ...p]), 3);
      expectExit(await admin(["access", "grant", grace.id, "--role", "owner", ...p]), 6);
      assert.match(expectExit(await admin(["access", "grant", grace.id, ...p]), 2).stderr, /--role is required/);
      expectExit(await admin(["access", "list"]), 2, "no project");
    });

    test("environments create --protected, update --no-protected / --protected; the list shows it", async () => {
      const p = await project();
      const made = json(
        await admin(["environments", "create", "prod-eu", "--name", "EU", "--protected", ...p, "--json"]),
      );
      assert.equal(made.protected, true);
      assert.match(expectExit(await admin(["environments", "list", ...p]), 0).stdout, /│ prod-eu +│ EU +│ +│ yes +│/);
      assert.equal(
        json(await admin(["environments", "update", "prod-eu", "--no-protected", ...p, "--json"])).protected,
        false,
      );
      const shown = expectExit(await admin(["environments", "update", "prod-eu", "--protected", ...p]), 0).stdout;
      assert.match(shown, /│ protected +│ true +│/);
    });

    test("flags copy says when nothing changed, and what it copied otherwise", async () => {
      const p = await project();
      expectExit(await admin(["environments", "create", "staging", "--name", "Staging", ...p]), 0);
      expectExit(await admin(["flags", "create", "checkout", ...p]), 0);
      expectExit(await admin(["flags", "enable", "checkout", "--environment", "staging", ...p]), 0);
      const copy = () => admin(["flags", "copy", "checkout", "--from", "staging", "--to", "production", ...p]);
      const first = expectExit(await copy(), 0).stdout;
      assert.match(first, /^Copied checkout's configuration from staging to production\.$/m);
      assert.match(first, /│ status +│ enabled +│/);
      const again = expectExit(await copy(), 0).stdout;
      assert.match(again, /^Nothing changed: checkout in production was already configured as in staging\.$/m);
      // --json prints the flag alone, as before.
      assert.equal(
        json(await admin(["flags", "copy", "checkout", "--from", "staging", "--to", "production", ...p, "--json"]))
          .status,
        "enabled",
      );
    });
  });
}
