import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ManualClock } from "@flagstaff/test-harness";
import type { Transaction } from "kysely";
import type { DatabaseHandle } from "../../src/db/database.js";
import type { Database } from "../../src/db/schema.js";
import { ChangeFeed } from "../../src/features/evaluation/change-feed.js";
import { type Change, type ChangeSet, GLOBAL_STREAM } from "../../src/write-path/changes.js";
import { evaluationChanges } from "../../src/write-path/event-changes.js";
import type { DomainEvent, StoredEvent, WriteContext } from "../../src/write-path/domain-events.js";
import { UnitOfWork } from "../../src/write-path/unit-of-work.js";
import { FakeLogger, memoryDatabase } from "./fakes.js";

// Fast tests of the write path's parts, without a server: an in-memory SQLite database (migrated, never a
// file), a manual clock, and fakes for what the unit of work calls out to (announce, enqueue, the logger).

const context: WriteContext = {
  actor: { type: "key", keyId: "key_1", keyName: "tester", role: "write" },
  requestId: "r-1",
  mayConfigureProtected: true,
  boundTo: null,
};
const flagRecord = {
  name: "f",
  description: "",
  status: "conditional",
  percentageActors: 10,
  percentageCalls: 0,
} as const;
const target = <K extends "flag" | "segment" | "key" | "project">(kind: K, id: string) => ({ kind, id, name: id });

describe("evaluation changes derived from events", () => {
  test("each event type answers the changes the snapshot applies, and none where evaluation does not see it", () => {
    const cases: [DomainEvent, Change[]][] = [
      [
        {
          type: "project.created",
          projectId: "p",
          target: target("project", "p"),
          before: null,
          after: { id: "p", name: "p" },
          unpublished: { environments: ["production", "staging"] },
        },
        [{ kind: "project.created", projectId: "p", environments: ["production", "staging"] }],
      ],
      [
        {
          type: "project.deleted",
          projectId: null,
          target: target("project", "p"),
          before: { id: "p", name: "p" },
          after: null,
        },
        [{ kind: "project.deleted", projectId: "p" }],
      ],
      [
        {
          type: "key.created",
          projectId: null,
          target: target("key", "k"),
          before: null,
          after: { id: "k", name: "k", role: "admin" },
          unpublished: { keyHash: "h" },
        },
        [{ kind: "key.created", id: "k", name: "k", hash: "h", role: "admin", projectId: null, environment: null }],
      ],
      [
        {
          type: "key.revoked",
          projectId: "p",
          target: target("key", "k"),
          before: { id: "k", name: "k", role: "read" },
          after: null,
        },
        [{ kind: "key.deleted", id: "k" }],
      ],
      [
        {
          type: "flag.updated",
          projectId: "p",
          target: target("flag", "flg_1"),
          before: flagRecord,
          after: { ...flagRecord, addedActors: ["a"], removedActors: [], addedSegments: [], removedSegments: ["s"] },
        },
        [
          {
            kind: "flag.upserted",
            projectId: "p",
            flag: { id: "flg_1", name: "f", status: "conditional", percentageActors: 10, percentageCalls: 0 },
            addActors: ["a"],
            removeActors: [],
            addSegments: [],
            removeSegments: ["s"],
          },
        ],
      ],
      [
        { type: "flag.deleted", projectId: "p", target: target("flag", "flg_1"), before: flagRecord, after: null },
        [{ kind: "flag.deleted", projectId: "p", id: "flg_1" }],
      ],
      [
        {
          type: "segment.updated",
          projectId: "p",
          target: target("segment", "seg_1"),
          before: { name: "s", description: "" },
          after: { name: "s2", description: "", addedActors: [], removedActors: [] },
        },
        [],
      ],
      [
        {
          type: "segment.updated",
          projectId: "p",
          target: target("segment", "seg_1"),
          before: { name: "s", description: "" },
          after: { name: "s", description: "", addedActors: ["a"], removedActors: ["b"] },
        },
        [{ kind: "segment.members", projectId: "p", segmentId: "seg_1", add: ["a"], remove: ["b"] }],
      ],
      [
        {
          type: "segment.created",
          projectId: "p",
          target: target("segment", "seg_1"),
          before: null,
          after: { name: "s", description: "" },
        },
        [],
      ],
      [
        {
          type: "actor.updated",
          projectId: "p",
          target: { kind: "actor", id: "a", name: "a" },
          before: null,
          after: { name: "A", imageURL: null },
        },
        [],
      ],
    ];
    for (const [event, changes] of cases) assert.deepEqual(evaluationChanges(event), changes, event.type);
  });
});

describe("unit of work (in-memory SQLite, fake announce and enqueue)", () => {
  let handle: DatabaseHandle;
  const clock = new ManualClock();
  const logger = new FakeLogger();
  const calls: string[] = [];
  const announced: ChangeSet[] = [];
  const enqueued: StoredEvent[][] = [];
  let work: UnitOfWork;
  before(async () => {
    handle = await memoryDatabase();
    work = new UnitOfWork(handle.db, clock, logger, {
      announce: async (_trx: Transaction<Database>, set) => {
        calls.push("announce");
        announced.push(set);
      },
      enqueue: async (_trx, events) => {
        calls.push("enqueue");
        enqueued.push([...events]);
      },
    });
  });
  after(async () => {
    await handle.close();
  });

  const keyCreated = (id: string): DomainEvent => ({
    type: "key.created",
    projectId: null,
    target: target("key", id),
    before: null,
    after: { id, name: id, role: "admin" },
    unpublished: { keyHash: `hash-${id}` },
  });

  test("queues the published events and announces the derived change set, in the write's transaction", async () => {
    calls.length = 0;
    await work.write(context, GLOBAL_STREAM, async () => ({ result: undefined, events: [keyCreated("k1")] }));
    assert.deepEqual(calls, ["enqueue", "announce"]);
    const [event] = enqueued.at(-1)!;
    assert.ok(event && !("unpublished" in event), "webhooks are never handed the unpublished fields");
    assert.equal(event.actor, context.actor);
    assert.deepEqual(announced.at(-1)!.changes, [
      { kind: "key.created", id: "k1", name: "k1", hash: "hash-k1", role: "admin", projectId: null, environment: null },
    ]);
    assert.equal(announced.at(-1)!.origin, work.instanceId);
  });

  test("a write with no event neither queues nor announces", async () => {
    calls.length = 0;
    assert.equal(await work.write(context, GLOBAL_STREAM, async () => ({ result: 7, events: [] })), 7);
    assert.deepEqual(calls, []);
  });

  test("a listener that fails is logged; the committed write still answers", async () => {
    const off = work.bus.subscribe(() => {
      throw new Error("listener down");
    });
    try {
      const result = await work.write(context, GLOBAL_STREAM, async () => ({
        result: "ok",
        events: [keyCreated("k2")],
      }));
      assert.equal(result, "ok");
      assert.deepEqual(logger.warnings, ["a listener failed on a committed write"]);
    } finally {
      off();
    }
  });

  test("writes to one stream take turns, in arrival order", async () => {
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      firstStarted = resolve;
    });
    const first = work.write(context, "p-turns", async () => {
      order.push("first starts");
      firstStarted();
      await firstHeld;
      order.push("first ends");
      return { result: 1, events: [] };
    });
    await started;
    const second = work.write(context, "p-turns", async () => {
      order.push("second runs");
      return { result: 2, events: [] };
    });
    releaseFirst();
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.deepEqual(order, ["first starts", "first ends", "second runs"]);
  });
});

describe("change feed (in-memory SQLite, fake logger)", () => {
  let handle: DatabaseHandle;
  let feed: ChangeFeed;
  const logger = new FakeLogger();
  const set = (version: number, changes: Change[]): ChangeSet => ({ stream: "p", version, changes });
  before(async () => {
    handle = await memoryDatabase();
    feed = new ChangeFeed(handle.db, logger);
  });
  after(async () => {
    await handle.close();
  });

  test("an own change set before the load is left to the load", async () => {
    await feed.applyOwn(set(1, [{ kind: "project.created", projectId: "p" }]));
    assert.equal(feed.snapshot.versions.get("p"), undefined);
    await feed.load();
    assert.equal(feed.snapshot.projects.has("p"), false);
  });

  test("change sets apply in version order: a later one waits for the one before it", async () => {
    const v2 = feed.deliver(
      set(2, [{ kind: "segment.members", projectId: "p", segmentId: "s", add: ["a"], remove: [] }]),
    );
    assert.equal(feed.snapshot.versions.get("p") ?? 0, 0, "version 2 waits for version 1");
    assert.equal(await feed.deliver(set(1, [{ kind: "project.created", projectId: "p" }])), true);
    assert.equal(await v2, true);
    assert.equal(feed.snapshot.versions.get("p"), 2);
    assert.ok(feed.snapshot.projects.get("p")?.state(null)?.isMember("s", "a"));
  });

  test("a change set the snapshot already has answers false and changes nothing", async () => {
    assert.equal(await feed.deliver(set(2, [{ kind: "project.deleted", projectId: "p" }])), false);
    assert.ok(feed.snapshot.projects.has("p"));
    assert.deepEqual(logger.errors, []);
  });
});
