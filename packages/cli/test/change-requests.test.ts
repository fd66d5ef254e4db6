// Change requests through the CLI (issue 35), against a real server on a real database: an environment
// made to require approvals (`environments update --approvals`), the refusal of a direct change with the
// hint to open a request, `change-requests create`, `approve` by another person's personal key, `get` with
// the diff, `apply`, `cancel`, `apply --override`, `schedule`, and `list` with its filters.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type CliResult, expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, startServer } = harness;
const PASSWORD = "correct horse battery staple";

function json<T = any>(result: CliResult): T {
  expectExit(result, 0);
  return JSON.parse(result.stdout) as T;
}

/** A person with write on the project, and a personal key of theirs (people approve; service keys do not). */
async function reviewer(server: TestServer, project: string, name: string): Promise<string> {
  const email = `${name}-${project}@example.com`;
  const person = await server.request("POST", "/users", { body: { email, name, password: PASSWORD } });
  assert.equal(person.status, 201, person.text);
  const granted = await server.request("PUT", `/projects/${project}/access/${person.body.id}`, {
    body: { role: "write" },
  });
  assert.equal(granted.status, 200, granted.text);
  const login = await server.request("POST", "/auth/login", { key: null, body: { email, password: PASSWORD } });
  assert.equal(login.status, 200, login.text);
  const cookie = (login.headers.getSetCookie()[0] ?? "").split(";")[0] as string;
  const key = await server.request("POST", "/users/me/keys", {
    key: null,
    headers: { cookie, "sec-fetch-site": "same-origin" },
    body: { name: "cli", project, role: "write" },
  });
  assert.equal(key.status, 201, key.text);
  return key.body.key;
}

for (const dialect of DIALECTS) {
  describe(`flagstaff change-requests against a real server (${dialect})`, () => {
    let server: TestServer;
    const project = "cli-cr";
    const admin = (args: string[]) =>
      runCli(["--url", server.url, "--key", ADMIN_KEY, "--project", project, ...args], {});
    const as = (key: string, args: string[]) =>
      runCli(["--url", server.url, "--key", key, "--project", project, ...args], {});

    before(async () => {
      server = await startServer({ dialect });
      expectExit(
        await runCli(["--url", server.url, "--key", ADMIN_KEY, "projects", "create", project, "--name", "CR"], {}),
        0,
      );
      expectExit(await admin(["flags", "create", "checkout"]), 0);
      expectExit(await admin(["flags", "create", "banner"]), 0);
    });
    after(() => server.close());

    test("an environment that requires approvals: direct changes refused with the way forward; request, approve, apply", async () => {
      const env = json(await admin(["--json", "environments", "update", "production", "--approvals", "1"]));
      assert.equal(env.requiredApprovals, 1);
      const table = expectExit(await admin(["environments", "list"]), 0);
      assert.match(table.stdout, /APPROVALS/);

      const refused = await admin(["flags", "enable", "checkout"]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /requires 1 approval/);
      assert.match(refused.stderr, /flagstaff change-requests create/);

      const created = json(
        await admin([
          "--json",
          "change-requests",
          "create",
          "--environment",
          "production",
          "--title",
          "Launch checkout",
          "--flag",
          "checkout",
          "--patch",
          '{"status":"enabled"}',
        ]),
      );
      assert.equal(created.state, "open");
      const shown = expectExit(await admin(["change-requests", "get", created.id]), 0);
      assert.match(shown.stdout, /Launch checkout/);
      assert.match(shown.stdout, /status/);
      assert.match(shown.stdout, /"disabled"/);
      assert.match(shown.stdout, /"enabled"/);

      // The admin key is a service key: it may not approve.
      const byService = await admin(["change-requests", "approve", created.id]);
      assert.notEqual(byService.code, 0);
      assert.match(byService.stderr, /Only people review/);
      const alice = await reviewer(server, project, "alice");
      const approved = json(await as(alice, ["--json", "change-requests", "approve", created.id, "--comment", "ok"]));
      assert.equal(approved.state, "approved");
      const applied = json(await admin(["--json", "change-requests", "apply", created.id]));
      assert.equal(applied.state, "applied");
      const flag = json(await admin(["--json", "flags", "get", "checkout"]));
      assert.equal(flag.status, "enabled");

      const list = json(await admin(["--json", "change-requests", "list", "--state", "applied"]));
      assert.deepEqual(
        list.map((r: { id: string }) => r.id),
        [created.id],
      );
    });

    test("an override with a reason, a cancel, a schedule, and the refusals printed", async () => {
      const urgent = json(
        await admin([
          "--json",
          "change-requests",
          "create",
          "--environment",
          "production",
          "--title",
          "Banner off now",
          "--flag",
          "banner",
          "--patch",
          '{"status":"disabled","percentageCalls":5}',
        ]),
      );
      const unapproved = await admin(["change-requests", "apply", urgent.id]);
      assert.notEqual(unapproved.code, 0);
      assert.match(unapproved.stderr, /approval_required/);
      const overridden = json(await admin(["--json", "change-requests", "apply", urgent.id, "--override", "incident"]));
      assert.equal(overridden.overrideReason, "incident");

      const later = new Date(Date.now() + 86_400_000).toISOString();
      const scheduled = json(
        await admin([
          "--json",
          "change-requests",
          "create",
          "--environment",
          "production",
          "--title",
          "Tomorrow",
          "--flag",
          "banner",
          "--patch",
          '{"percentageCalls":10}',
          "--at",
          later,
        ]),
      );
      const schedule = expectExit(await admin(["change-requests", "schedule"]), 0);
      assert.match(schedule.stdout, new RegExp(scheduled.id));
      const cancelled = json(await admin(["--json", "change-requests", "cancel", scheduled.id]));
      assert.equal(cancelled.state, "cancelled");
      expectExit(await admin(["change-requests", "schedule"]), 0);

      const badJson = await admin([
        "change-requests",
        "create",
        "--environment",
        "production",
        "--title",
        "x",
        "--flag",
        "banner",
        "--patch",
        "{not json",
      ]);
      assert.notEqual(badJson.code, 0);
      assert.match(badJson.stderr, /--patch is not JSON/);
      const missing = await admin(["change-requests", "get", "cr_nope"]);
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /change_request_not_found/);
    });
  });
}
