// Environments through the CLI, against a real server on a real database: `flagstaff environments`,
// --environment and FLAGSTAFF_ENVIRONMENT on the flag commands and check, keys bound to an environment,
// `flagstaff flags copy`, the history's filter, and how each refusal is printed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type CliResult, expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, startServer } = harness;

const SECRET = /fsk_[A-Za-z0-9_-]{43}/;

/** Parses the CLI's stdout as JSON, after asserting it exited 0. */
function json<T = any>(result: CliResult): T {
  expectExit(result, 0);
  return JSON.parse(result.stdout) as T;
}

/** Parses the CLI's stderr as problem details, after asserting the exit code; stdout must be empty. */
function problem(result: CliResult, exitCode: number): any {
  expectExit(result, exitCode);
  assert.equal(result.stdout, "");
  return JSON.parse(result.stderr);
}

/** The stderr of a failed command, after asserting the exit code; stdout must be empty. */
function failure(result: CliResult, exitCode: number): string {
  expectExit(result, exitCode);
  assert.equal(result.stdout, "");
  return result.stderr;
}

for (const dialect of DIALECTS) {
  describe(`flagstaff environments against a real server (${dialect})`, () => {
    let server: TestServer;
    let projects = 0;
    /** Runs the CLI with the admin key and `env` as its whole environment. */
    const admin = (args: string[], env: Record<string, string> = {}) =>
      runCli(["--url", server.url, "--key", ADMIN_KEY, ...args], env);
    /** Runs the CLI with a key of the project. */
    const withKey = (key: string, project: string, args: string[], env: Record<string, string> = {}) =>
      runCli(["--url", server.url, "--key", key, "--project", project, ...args], env);

    /** A project with production (its default) and staging, made with the CLI. */
    async function project(): Promise<string[]> {
      const id = `cli-env-${++projects}`;
      expectExit(await admin(["projects", "create", id, "--name", id]), 0);
      const p = ["--project", id];
      expectExit(await admin(["environments", "create", "staging", "--name", "Staging", ...p]), 0);
      return p;
    }

    /** The secret of a key made with `keys create`, from its output. */
    async function key(p: string[], ...args: string[]): Promise<string> {
      const created = expectExit(await admin(["keys", "create", "--name", "k", ...args, ...p]), 0);
      const secret = SECRET.exec(created.stdout)?.[0];
      assert.ok(secret, created.stdout);
      return secret;
    }

    before(async () => {
      server = await startServer({ dialect });
    });
    after(async () => {
      await server?.close();
    });

    test("environments list, get, create (--description, --copy-from), update (--default), delete", async () => {
      const p = await project();
      const projectId = p[1] as string;
      const listed = expectExit(await admin(["environments", "list", ...p]), 0).stdout;
      assert.match(listed, /│ ID +│ NAME +│ DEFAULT +│ PROTECTED +│ APPROVALS +│ DESCRIPTION +│ CREATED +│/);
      assert.match(listed, /│ production +│ Production +│ yes +│ +│ +│ +│ \d{4}-\d\d-\d\dT/);
      assert.match(listed, /│ staging +│ Staging +│ +│ +│ +│ +│ \d{4}-/);
      assert.deepEqual(
        json(await admin(["environments", "list", ...p, "--json"])),
        (await server.request("GET", `/projects/${projectId}/environments`)).body.data,
      );

      const made = expectExit(
        await admin(["environments", "create", "dev", "--name", "Development", "--description", "Laptops", ...p]),
        0,
      ).stdout;
      assert.match(made, /│ id +│ dev +│/);
      assert.match(made, /│ description +│ Laptops +│/);
      assert.match(made, /│ default +│ false +│/);
      const served = await server.request("GET", `/projects/${projectId}/environments/dev`);
      assert.deepEqual(json(await admin(["environments", "get", "dev", ...p, "--json"])), served.body);
      assert.match(expectExit(await admin(["environments", "get", "dev", ...p]), 0).stdout, /│ name +│ Development +│/);

      // --copy-from: every flag starts as in that environment.
      expectExit(await admin(["flags", "create", "banner", ...p]), 0);
      expectExit(await admin(["flags", "enable", "banner", "--environment", "staging", ...p]), 0);
      expectExit(await admin(["environments", "create", "qa", "--name", "QA", "--copy-from", "staging", ...p]), 0);
      assert.equal(
        json(await admin(["flags", "get", "banner", "--environment", "qa", ...p, "--json"])).status,
        "enabled",
      );
      assert.equal(
        json(await admin(["flags", "get", "banner", "--environment", "dev", ...p, "--json"])).status,
        "disabled",
      );

      const renamed = json(
        await admin(["environments", "update", "qa", "--name", "Quality", "--default", ...p, "--json"]),
      );
      assert.deepEqual([renamed.name, renamed.default], ["Quality", true]);
      assert.deepEqual(
        json(await admin(["environments", "list", ...p, "--json"])).map((e: any) => [e.id, e.default]),
        [
          ["production", false],
          ["staging", false],
          ["dev", false],
          ["qa", true],
        ],
      );
      assert.match(
        expectExit(await admin(["environments", "update", "production", "--default", ...p]), 0).stdout,
        /│ default +│ true +│/,
      );
      const nothing = failure(await admin(["environments", "update", "qa", ...p]), 2);
      assert.match(
        nothing,
        /Nothing to change: pass --name, --description, --default, --protected, --no-protected, --approvals or --\(no-\)self-approval/,
      );

      assert.equal(
        expectExit(await admin(["environments", "delete", "qa", ...p]), 0).stdout,
        "Deleted environment qa.\n",
      );
      assert.equal(expectExit(await admin(["environments", "delete", "dev", ...p, "--json"]), 0).stdout, "");
      assert.deepEqual(
        json(await admin(["environments", "list", ...p, "--json"])).map((e: any) => e.id),
        ["production", "staging"],
      );
    });

    test("environments: every refusal is printed clearly, with its exit code", async () => {
      const p = await project();
      const missing = failure(await admin(["environments", "get", "qa", ...p]), 3);
      assert.match(
        missing,
        /^flagstaff: Environment "qa" does not exist in this project\. \(404 environment_not_found\)$/m,
      );
      assert.match(missing, /Run "flagstaff environments list" to see the project's environments\./);
      failure(await admin(["environments", "delete", "qa", ...p]), 3);
      failure(await admin(["environments", "update", "qa", "--name", "Q", ...p]), 3);
      failure(await admin(["environments", "create", "qa", "--name", "QA", "--copy-from", "nope", ...p]), 3);
      failure(await admin(["environments", "list", "--project", "no-such-project"]), 3);

      const exists = failure(await admin(["environments", "create", "staging", "--name", "Again", ...p]), 5);
      assert.match(exists, /\(409 environment_exists\)/);
      const isDefault = failure(await admin(["environments", "delete", "production", ...p]), 5);
      assert.match(isDefault, /\(409 environment_is_default\)/);
      assert.match(
        isDefault,
        /Make another environment the default first: "flagstaff environments update <id> --default"/,
      );
      const asJson = problem(await admin(["environments", "delete", "production", ...p, "--json"]), 5);
      assert.equal(asJson.code, "environment_is_default");
      assert.equal(asJson.status, 409);

      const invalid = failure(await admin(["environments", "create", "a b", "--name", "Spaces", ...p]), 6);
      assert.match(invalid, /\(400 invalid_request\)/);
      assert.match(invalid, /^ {2}\/id: /m);
      failure(await admin(["environments", "create", "qa", ...p]), 2);
      failure(await admin(["environments", "create", "--name", "QA", ...p]), 2);
      failure(await admin(["environments", "list"]), 2);

      // Only an admin key changes environments; any key of the project lists them.
      const reader = await key(p, "--role", "read");
      assert.match(expectExit(await withKey(reader, p[1] as string, ["environments", "list"]), 0).stdout, /staging/);
      const refused = failure(await withKey(reader, p[1] as string, ["environments", "delete", "staging"]), 4);
      assert.match(refused, /\(403 forbidden\)/);
    });

    test("--environment and FLAGSTAFF_ENVIRONMENT choose the flag commands' environment; the option wins", async () => {
      const p = await project();
      const segment = json(await admin(["segments", "create", "--name", "Beta", "--json", ...p]));
      expectExit(await admin(["flags", "create", "checkout", ...p]), 0);
      const staging = { FLAGSTAFF_ENVIRONMENT: "staging" };
      const check = async (args: string[], env: Record<string, string> = {}) =>
        expectExit(await admin(["check", "checkout", ...args, ...p], env), 0).stdout.trim();

      expectExit(await admin(["flags", "conditional", "checkout", ...p], staging), 0);
      expectExit(await admin(["flags", "add-actors", "checkout", "alice", ...p], staging), 0);
      expectExit(await admin(["flags", "add-segments", "checkout", segment.id, ...p], staging), 0);
      expectExit(
        await admin(["flags", "set", "checkout", "--calls-percent", "100", "--environment", "staging", ...p]),
        0,
      );
      expectExit(await admin(["flags", "set", "checkout", "--calls-percent", "0", ...p], staging), 0);

      assert.equal(await check(["--actor", "alice"], staging), "enabled");
      assert.equal(await check(["--actor", "alice", "--environment", "staging"]), "enabled");
      assert.equal(await check(["--actor", "alice"]), "disabled", "production, the default, is untouched");
      assert.equal(
        await check(["--actor", "alice", "--environment", "production"], staging),
        "disabled",
        "the option wins",
      );
      assert.equal(await check(["--actor", "alice"], { FLAGSTAFF_ENVIRONMENT: "" }), "disabled", "empty is unset");

      const shown = expectExit(await admin(["flags", "get", "checkout", ...p], staging), 0).stdout;
      assert.match(shown, /│ environment +│ staging +│/);
      assert.match(shown, /│ status +│ conditional +│/);
      assert.match(shown, /│ environments +│ production: disabled, 0 %, 0 %; staging: conditional, 0 %, 0 % +│/);
      assert.match(
        expectExit(await admin(["flags", "get", "checkout", ...p]), 0).stdout,
        /│ environment +│ production +│/,
      );
      const listed = json(await admin(["flags", "list", "--json", ...p], staging));
      assert.deepEqual(
        listed.map((f: any) => [f.name, f.environment, f.status, f.actorsCount]),
        [["checkout", "staging", "conditional", 1]],
      );
      assert.match(expectExit(await admin(["flags", "list", ...p], staging), 0).stdout, /│ checkout +│ conditional +│/);
      assert.match(expectExit(await admin(["flags", "list", ...p]), 0).stdout, /│ checkout +│ disabled +│/);
      assert.deepEqual(
        json(await admin(["flags", "segments", "checkout", "--json", ...p], staging)).map((s: any) => s.id),
        [segment.id],
      );
      assert.deepEqual(json(await admin(["flags", "segments", "checkout", "--json", ...p])), []);
      expectExit(await admin(["flags", "remove-actors", "checkout", "alice", ...p], staging), 0);
      assert.equal(await check(["--actor", "alice"], staging), "disabled");

      // An environment that does not exist; an empty option.
      const missing = failure(await admin(["flags", "get", "checkout", "--environment", "nope", ...p]), 3);
      assert.match(missing, /Environment "nope" does not exist in this project\. \(404 environment_not_found\)/);
      assert.match(missing, /flagstaff environments list/);
      failure(await admin(["check", "checkout", ...p], { FLAGSTAFF_ENVIRONMENT: "nope" }), 3);
      failure(await admin(["flags", "enable", "checkout", ...p], { FLAGSTAFF_ENVIRONMENT: "nope" }), 3);
      assert.match(failure(await admin(["flags", "list", "--environment", "", ...p]), 2), /--environment needs an/);
    });

    test("keys create binds the key to the environment; a bound key naming another gets 403", async () => {
      const p = await project();
      const projectId = p[1] as string;
      expectExit(await admin(["flags", "create", "f", ...p]), 0);
      expectExit(await admin(["flags", "enable", "f", "--environment", "staging", ...p]), 0);

      const created = expectExit(
        await admin(["keys", "create", "--role", "check", "--name", "app", "--environment", "staging", ...p]),
        0,
      ).stdout;
      assert.match(created, /│ environment +│ staging +│/);
      const appKey = SECRET.exec(created)?.[0] as string;
      const fromVariable = json(
        await admin(["keys", "create", "--role", "read", "--name", "dash", "--json", ...p], {
          FLAGSTAFF_ENVIRONMENT: "staging",
        }),
      );
      assert.equal(fromVariable.environment, "staging");
      assert.equal(
        json(await admin(["keys", "create", "--role", "read", "--name", "prod", "--json", ...p])).environment,
        "production",
      );
      const unbound = expectExit(
        await admin(["keys", "create", "--role", "write", "--name", "ci", "--unbound", ...p]),
        0,
      ).stdout;
      assert.match(unbound, /│ environment +│ \(none\) +│/);
      const keys = expectExit(await admin(["keys", "list", ...p]), 0).stdout;
      assert.match(keys, /│ ID +│ NAME +│ ROLE +│ ENVIRONMENT +│ CREATED +│/);
      assert.match(keys, /│ key_\w+ +│ app +│ check +│ staging +│/);
      assert.match(keys, /│ key_\w+ +│ prod +│ read +│ production +│/);
      assert.match(keys, /│ key_\w+ +│ ci +│ write +│ \(none\) +│/);
      assert.match(
        failure(
          await admin([
            "keys",
            "create",
            "--role",
            "write",
            "--name",
            "x",
            "--unbound",
            "--environment",
            "staging",
            ...p,
          ]),
          2,
        ),
        /--unbound and --environment exclude each other/,
      );
      failure(await admin(["keys", "create", "--role", "read", "--name", "x", "--unbound", ...p]), 6);
      failure(await admin(["keys", "create", "--role", "read", "--name", "x", "--environment", "nope", ...p]), 3);

      // The staging key checks staging without naming it, and its own name is allowed.
      assert.equal(expectExit(await withKey(appKey, projectId, ["check", "f"]), 0).stdout, "enabled\n");
      assert.equal(
        expectExit(await withKey(appKey, projectId, ["check", "f", "--environment", "staging"]), 0).stdout,
        "enabled\n",
      );
      const forbidden = failure(await withKey(appKey, projectId, ["check", "f", "--environment", "production"]), 4);
      assert.match(
        forbidden,
        /^flagstaff: This key is bound to environment "staging" and may not act on "production"\. \(403 forbidden\)$/m,
      );
      const variable = { FLAGSTAFF_ENVIRONMENT: "production" };
      const asJson = problem(await withKey(appKey, projectId, ["check", "f", "--json"], variable), 4);
      assert.equal(asJson.code, "forbidden");
      assert.equal(asJson.status, 403);

      // Deleting the environment revokes its keys.
      expectExit(await admin(["environments", "delete", "staging", ...p]), 0);
      assert.match(failure(await withKey(appKey, projectId, ["check", "f"]), 4), /401 unauthorized/);
    });

    test("flags copy: one environment's configuration onto another; its refusals", async () => {
      const p = await project();
      const projectId = p[1] as string;
      const staging = { FLAGSTAFF_ENVIRONMENT: "staging" };
      expectExit(await admin(["flags", "create", "checkout", ...p]), 0);
      expectExit(await admin(["flags", "conditional", "checkout", ...p], staging), 0);
      expectExit(await admin(["flags", "add-actors", "checkout", "alice", ...p], staging), 0);
      expectExit(await admin(["flags", "set", "checkout", "--actors-percent", "10", ...p], staging), 0);

      // The variable plays no part: --from and --to say.
      const copied = expectExit(
        await admin(["flags", "copy", "checkout", "--from", "staging", "--to", "production", ...p], staging),
        0,
      ).stdout;
      assert.match(copied, /│ environment +│ production +│/);
      assert.match(copied, /│ status +│ conditional +│/);
      assert.match(copied, /│ percentageActors +│ 10 +│/);
      assert.equal(expectExit(await admin(["check", "checkout", "--actor", "alice", ...p]), 0).stdout, "enabled\n");
      const back = json(
        await admin(["flags", "copy", "checkout", "--from", "production", "--to", "staging", "--json", ...p]),
      );
      assert.deepEqual([back.environment, back.status, back.actorsCount], ["staging", "conditional", 1]);

      const same = failure(await admin(["flags", "copy", "checkout", "--from", "staging", "--to", "staging", ...p]), 6);
      assert.match(same, /same environment.*\(400 invalid_request\)/);
      assert.match(same, /^ {2}\/to: must differ from from$/m);
      const unknown = failure(await admin(["flags", "copy", "checkout", "--from", "staging", "--to", "nope", ...p]), 3);
      assert.match(unknown, /Environment "nope" does not exist in this project\. \(404 environment_not_found\)/);
      failure(await admin(["flags", "copy", "nope", "--from", "staging", "--to", "production", ...p]), 3);
      assert.match(
        failure(await admin(["flags", "copy", "checkout", "--from", "staging", ...p]), 2),
        /--to is required/,
      );
      failure(await admin(["flags", "copy", "--from", "staging", "--to", "production", ...p]), 2);
      const bound = await key(p, "--role", "write", "--environment", "staging");
      const refused = failure(
        await withKey(bound, projectId, ["flags", "copy", "checkout", "--from", "staging", "--to", "production"]),
        4,
      );
      assert.match(refused, /bound to environment "staging".*\(403 forbidden\)/);

      // The history: --environment filters it; FLAGSTAFF_ENVIRONMENT does not.
      const production = json(await admin(["events", "--environment", "production", "--json", ...p]));
      assert.ok(production.length > 0);
      assert.ok(production.every((e: any) => e.environment === "production"));
      const copies = production.filter((e: any) => e.after?.copiedFrom === "staging");
      assert.equal(copies.length, 1);
      const table = expectExit(
        await admin(["events", "--environment", "staging", "--type", "flag.updated", ...p]),
        0,
      ).stdout;
      assert.match(table, /│ flag\.updated +│ checkout +│ staging +│ ADMIN_API_KEY +│/);
      assert.ok(!/│ production +│/.test(table), table);
      const everything = json(await admin(["events", "--json", ...p], staging));
      assert.ok(everything.some((e: any) => e.environment === "production"));
      assert.ok(everything.some((e: any) => e.type === "flag.created" && e.environment === undefined));
      // The history keeps a deleted environment's events, so a filter by an id the project lacks is no error.
      assert.equal(expectExit(await admin(["events", "--environment", "nope", ...p]), 0).stdout, "No events.\n");
      expectExit(await admin(["environments", "delete", "staging", ...p]), 0);
      const kept = json(await admin(["events", "--environment", "staging", "--json", ...p]));
      assert.deepEqual(
        [kept[0]?.type, kept.some((e: any) => e.type === "flag.updated")],
        ["environment.deleted", true],
      );
    });
  });
}
