import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { loadConfig } from "../src/kernel/config.js";
import { type DatabaseHandle, openDatabase } from "../src/db/database.js";
import { ADMIN_KEY_COMMAND } from "../src/write-path/domain-events.js";
import { offlineKeyService } from "../src/modules/admin-keys.js";
import { DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";

// An instance that missed changes which the log no longer holds must still converge: it reads the
// stream afresh. Here the "other instance" is the CLI's offline key service writing to the same database,
// and the periodic reconcile is driven by hand (the timer is set to an hour).
for (const dialect of DIALECTS) {
  describe(`change feed repair [${dialect}]`, () => {
    let server: TestServer;
    let other: DatabaseHandle;
    before(async () => {
      server = await startServer({ dialect, env: { FEED_POLL_INTERVAL_MS: "3600000" } });
      other = openDatabase(loadConfig({ DATABASE_URL: server.databaseUrl }));
    });
    after(async () => {
      await other.close();
      await server.close();
    });

    const status = async (key: string) => (await server.request("GET", "/projects", { key })).status;

    test("admin keys created and revoked elsewhere are applied, even after the log was pruned", async () => {
      const keys = offlineKeyService(other);
      const created = await keys.createAdminKey(ADMIN_KEY_COMMAND, "made elsewhere");
      await server.service.feed.reconcile();
      assert.equal(await status(created.key), 200, "a key created elsewhere works after a reconcile");

      await keys.revokeAdminKey(ADMIN_KEY_COMMAND, created.id);
      // Lose the log: this instance can no longer replay the revocation, only reread the stream.
      await other.db.deleteFrom("feed_changes").execute();
      await server.service.feed.reconcile();
      assert.equal(await status(created.key), 401, "the revoked key is refused after the stream is reread");
    });

    test("a project stream whose missed changes were pruned is reread", async () => {
      await server.request("POST", "/projects", { body: { id: "repair", name: "repair" } });
      await server.request("POST", "/projects/repair/flags/f", {});
      // Another writer enables the flag and the log entry is lost before this instance hears of it.
      await other.db
        .updateTable("flag_configs")
        .set({ status: "enabled" })
        .where("flag_id", "in", (eb) => eb.selectFrom("flags").select("id").where("name", "=", "f"))
        .execute();
      await other.db
        .updateTable("feed_streams")
        .set((eb) => ({ version: eb("version", "+", 1) }))
        .where("stream", "=", "repair")
        .execute();
      await other.db.deleteFrom("feed_changes").execute();
      assert.equal((await server.request("GET", "/projects/repair/flags/f/check")).body.enabled, false);
      await server.service.feed.reconcile();
      assert.equal((await server.request("GET", "/projects/repair/flags/f/check")).body.enabled, true);
    });
  });
}
