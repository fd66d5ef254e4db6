import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, type FreshDatabase, freshDatabase, waitFor, WebhookReceiver } from "@flagstaff/test-harness";
import { systemClock } from "../src/kernel/clock.js";
import { loadConfig } from "../src/kernel/config.js";
import { type DatabaseHandle, openDatabase } from "../src/db/database.js";
import { migrateToLatest } from "../src/db/migrate.js";
import type { WriteContext } from "../src/write-path/domain-events.js";
import { UnitOfWork } from "../src/write-path/unit-of-work.js";
import { Metrics } from "../src/features/metrics/metrics.js";
import { Snapshot } from "../src/features/evaluation/snapshot.js";
import { JobRunner } from "../src/kernel/job-runner.js";
import { WebhookDispatcher } from "../src/features/webhooks/dispatcher.js";

const context: WriteContext = {
  actor: { type: "system", system: "startup" },
  requestId: null,
  mayConfigureProtected: true,
  boundTo: null,
};
const quiet = { warn() {} };

// A write's transaction reserves a slot for each delivery it can send at once; a write that rolls back
// after queueing must give its slots back at once, not hold them until their lease would have lapsed.
for (const dialect of DIALECTS) {
  describe(`webhook deliveries of a write that rolls back [${dialect}]`, () => {
    let fresh: FreshDatabase;
    let handle: DatabaseHandle;
    let receiver: WebhookReceiver;
    let dispatcher: WebhookDispatcher;
    let work: UnitOfWork;
    let failAnnounce = true;

    before(async () => {
      fresh = await freshDatabase(dialect);
      handle = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
      await migrateToLatest(handle);
      receiver = await WebhookReceiver.start();
      const at = new Date().toISOString();
      await handle.db.insertInto("projects").values({ id: "p1", name: "p1", created_at: at }).execute();
      await handle.db
        .insertInto("webhooks")
        .values({
          id: "wh_1",
          project_id: "p1",
          url: `${receiver.url}/hook`,
          events: JSON.stringify(["*"]),
          description: "",
          secret: `whsec_${Buffer.alloc(32, 1).toString("base64")}`,
          enabled: 1,
          disabled_reason: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      // One slot, and leases far longer than the test waits: a slot held by a rolled-back write would
      // keep every later delivery waiting for the lease.
      dispatcher = new WebhookDispatcher(
        handle.db,
        systemClock,
        quiet,
        new Metrics(new Snapshot()),
        {
          postgres: dialect === "postgres",
          allowPrivateNetworks: true,
          timeoutMs: 60_000,
          retryBaseMs: 1000,
          retryWindowMs: 3_600_000,
          concurrency: 1,
        },
        new JobRunner(quiet, 1000),
      );
      work = new UnitOfWork(handle.db, systemClock, quiet, {
        enqueue: (trx, events, hooks) => dispatcher.enqueue(trx, events, hooks),
        // Fails after the deliveries were queued: the write rolls back with them.
        announce: async () => {
          if (failAnnounce) throw new Error("announce failed");
        },
      });
    });
    after(async () => {
      await dispatcher?.stop();
      await receiver?.close();
      await handle?.close();
      await fresh?.drop();
    });

    const flagCreated = (name: string) =>
      ({
        type: "flag.created",
        projectId: "p1",
        target: { kind: "flag", id: name, name },
        before: null,
        after: { name, description: "", status: "disabled", percentageActors: 0, percentageCalls: 0 },
      }) as const;

    test("the slot comes back at once: the next write's delivery is sent right after its commit", async () => {
      await assert.rejects(
        work.write(context, "p1", async () => ({ result: 1, events: [flagCreated("rolled-back")] })),
        /announce failed/,
      );
      assert.equal(await handle.db.selectFrom("webhook_deliveries").select("id").executeTakeFirst(), undefined);
      failAnnounce = false;
      await work.write(context, "p1", async () => ({ result: 1, events: [flagCreated("kept")] }));
      const [received] = await waitFor("the kept write's delivery", () => receiver.at("/hook"), {
        until: (r) => r.length > 0,
        timeoutMs: 8000,
      });
      assert.equal((JSON.parse(received!.body) as { target: { name: string } }).target.name, "kept");
      assert.equal(receiver.at("/hook").length, 1, "nothing of the rolled-back write was sent");
    });
  });
}
