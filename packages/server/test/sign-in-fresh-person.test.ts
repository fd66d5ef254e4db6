// A person added by another process (`admin-key user create`) or another instance signs in at once with
// their one-time link: the instance that starts the session knows them from that moment, not only when
// its change feed next reads the database (up to FEED_POLL_INTERVAL_MS on SQLite, an hour here).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import { runAdminKeyCommand } from "../src/admin-key-command.js";

for (const dialect of DIALECTS) {
  describe(`a person added elsewhere signs in at once [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { FEED_POLL_INTERVAL_MS: "3600000" } });
    });
    after(() => server.close());

    test("their one-time link signs them in, and the session names them at once", async () => {
      let stdout = "";
      let stderr = "";
      const code = await runAdminKeyCommand(
        ["user", "create", "--email", "fresh@example.com", "--name", "Fresh Person", "--json"],
        {
          env: { DATABASE_URL: server.databaseUrl, PUBLIC_URL: server.url },
          stdout: { write: (text: string) => (stdout += text) },
          stderr: { write: (text: string) => (stderr += text) },
        },
      );
      assert.equal(code, 0, stderr);
      const link = new URL(JSON.parse(stdout).signInLink as string);
      const used = await fetch(`${server.url}${link.pathname}${link.search}`, { redirect: "manual" });
      assert.equal(used.status, 302);
      assert.equal(used.headers.get("location"), "/console/me?signedInBy=link");
      const cookie = (used.headers.get("set-cookie") ?? "").split(";")[0] as string;
      assert.match(cookie, /^flagstaff_session=/);
      const asSession = { headers: { cookie } };
      const session = await server.request("GET", "/auth/session", { key: null, ...asSession });
      assert.deepEqual(session.body, { signedIn: true });
      const who = await server.request("GET", "/whoami", { key: null, ...asSession });
      assert.equal(who.status, 200, who.text);
      assert.equal(who.body.user.email, "fresh@example.com");
      assert.equal(who.body.user.name, "Fresh Person");
      const me = await server.request("GET", "/users/me", { key: null, ...asSession });
      assert.equal(me.status, 200, me.text);
    });
  });
}
