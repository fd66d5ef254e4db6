import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, type FreshDatabase, freshDatabase, ManualClock } from "@flagstaff/test-harness";
import { loadConfig } from "../../src/kernel/config.js";
import { type DatabaseHandle, openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import { GLOBAL_STREAM } from "../../src/write-path/changes.js";
import type { WriteContext } from "../../src/write-path/domain-events.js";
import { UnitOfWork } from "../../src/write-path/unit-of-work.js";

const context: WriteContext = {
  actor: { type: "system", system: "startup" },
  requestId: null,
  mayConfigureProtected: true,
  boundTo: null,
};
const event = (name: string) =>
  ({
    type: "key.created",
    projectId: null,
    target: { kind: "key", id: name, name },
    before: null,
    after: { id: name, name, role: "admin" },
    unpublished: { keyHash: `hash-of-${name}` },
  }) as const;

for (const dialect of DIALECTS) {
  describe(`unit of work: after-commit and after-rollback hooks [${dialect}]`, () => {
    let fresh: FreshDatabase;
    let handle: DatabaseHandle;
    const warnings: string[] = [];
    let work: UnitOfWork;
    const seen: string[] = [];

    before(async () => {
      fresh = await freshDatabase(dialect);
      handle = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
      await migrateToLatest(handle);
      work = new UnitOfWork(handle.db, new ManualClock(), { warn: (_obj, msg) => void warnings.push(msg) });
      work.bus.subscribe(async (w) => {
        await Promise.resolve();
        seen.push(`listener ${w.events[0]?.target.id}`);
      });
    });
    after(async () => {
      await handle.close();
      await fresh.drop();
    });

    test("after-commit hooks run once the write is committed and published, in order, before it resolves", async () => {
      seen.length = 0;
      const result = await work.write(context, GLOBAL_STREAM, async (_trx, hooks) => {
        hooks.afterCommit(() => seen.push("first hook"));
        hooks.afterCommit(() => seen.push("second hook"));
        hooks.afterRollback(() => seen.push("rollback hook"));
        seen.push("work");
        return { result: "ok", events: [event("k1")] };
      });
      assert.equal(result, "ok");
      assert.deepEqual(seen, ["work", "listener k1", "first hook", "second hook"]);
      assert.equal((await handle.db.selectFrom("events").select("id").execute()).length, 1);
    });

    test("a hook that throws is logged, the others run, and the write stays committed", async () => {
      seen.length = 0;
      warnings.length = 0;
      const result = await work.write(context, GLOBAL_STREAM, async (_trx, hooks) => {
        hooks.afterCommit(() => {
          throw new Error("hook failed");
        });
        hooks.afterCommit(() => seen.push("next hook"));
        return { result: 7, events: [event("k2")] };
      });
      assert.equal(result, 7);
      assert.deepEqual(seen, ["listener k2", "next hook"]);
      assert.deepEqual(warnings, ["an after-commit hook failed"]);
    });

    test("a write that fails runs its after-rollback hooks, not its after-commit ones, and fails", async () => {
      seen.length = 0;
      await assert.rejects(
        work.write(context, GLOBAL_STREAM, async (_trx, hooks) => {
          hooks.afterCommit(() => seen.push("commit hook"));
          hooks.afterRollback(() => seen.push("rollback hook"));
          throw new Error("refused");
        }),
        /refused/,
      );
      assert.deepEqual(seen, ["rollback hook"]);
    });

    test("a write that changed nothing rolls back: its after-rollback hooks run", async () => {
      seen.length = 0;
      const result = await work.write(context, GLOBAL_STREAM, async (_trx, hooks) => {
        hooks.afterCommit(() => seen.push("commit hook"));
        hooks.afterRollback(() => seen.push("rollback hook"));
        return { result: "same", events: [] };
      });
      assert.equal(result, "same");
      assert.deepEqual(seen, ["rollback hook"]);
    });

    test("hooks added by the outbox (`enqueue`) run too; a failing enqueue rolls back with them", async () => {
      const outboxSeen: string[] = [];
      let failEnqueue = false;
      const withOutbox = new UnitOfWork(
        handle.db,
        new ManualClock(),
        { warn() {} },
        {
          enqueue: async (_trx, events, hooks) => {
            hooks.afterCommit(() => outboxSeen.push(`send ${events[0]?.target.id}`));
            hooks.afterRollback(() => outboxSeen.push(`give back ${events[0]?.target.id}`));
            if (failEnqueue) throw new Error("insert failed");
          },
        },
      );
      await withOutbox.write(context, GLOBAL_STREAM, async () => ({ result: 1, events: [event("k3")] }));
      failEnqueue = true;
      await assert.rejects(
        withOutbox.write(context, GLOBAL_STREAM, async () => ({ result: 1, events: [event("k4")] })),
        /insert failed/,
      );
      assert.deepEqual(outboxSeen, ["send k3", "give back k4"]);
    });
  });
}
