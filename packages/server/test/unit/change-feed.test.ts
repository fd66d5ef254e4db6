import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { ManualClock } from "@flagstaff/test-harness";
import type { DatabaseHandle } from "../../src/db/database.js";
import { isoTime } from "../../src/kernel/clock.js";
import { ChangeFeed } from "../../src/features/evaluation/change-feed.js";
import type { ChangeSet } from "../../src/write-path/changes.js";
import { pruneChangeSets, readChangeSetsSince } from "../../src/features/evaluation/feed.repository.js";
import type { WriteContext } from "../../src/write-path/domain-events.js";
import { UnitOfWork } from "../../src/write-path/unit-of-work.js";
import { FakeLogger, memoryDatabase } from "./fakes.js";

// Fast tests of the change feed without a server: one in-memory SQLite database (migrated, never a file)
// that two units of work write to, this instance's and a fake "other instance" (no announce, no bus
// listener: its change sets reach this feed only through the log), a manual clock for the log's times,
// and a logger that keeps what it is told.

const context: WriteContext = {
  actor: { type: "key", keyId: "key_1", keyName: "tester", role: "admin" },
  requestId: "r-1",
  mayConfigureProtected: true,
  boundTo: null,
};

/** A project's first write: its row and its `project.created` event (version 1 of its stream). */
function createProject(work: UnitOfWork, clock: ManualClock, id: string): Promise<void> {
  return work.write(context, id, async (trx) => {
    await trx
      .insertInto("projects")
      .values({ id, name: id, created_at: isoTime(clock.now()) })
      .execute();
    return {
      result: undefined,
      events: [
        {
          type: "project.created",
          projectId: id,
          target: { kind: "project", id, name: id },
          before: null,
          after: { id, name: id },
          unpublished: { environments: ["production"] },
        },
      ],
    };
  });
}

/** A project key: its row and its `key.created` event (the next version of the project's stream). */
function createKey(work: UnitOfWork, clock: ManualClock, projectId: string, id: string): Promise<void> {
  return work.write(context, projectId, async (trx) => {
    await trx
      .insertInto("api_keys")
      .values({
        id,
        project_id: projectId,
        role: "read",
        name: id,
        key_hash: `hash-${id}`,
        created_at: isoTime(clock.now()),
      })
      .execute();
    return {
      result: undefined,
      events: [
        {
          type: "key.created",
          projectId,
          target: { kind: "key", id, name: id },
          before: null,
          after: { id, name: id, role: "read" },
          unpublished: { keyHash: `hash-${id}` },
        },
      ],
    };
  });
}

describe("change feed: others' change sets from the log (in-memory SQLite, fake other instance)", () => {
  let handle: DatabaseHandle;
  let clock: ManualClock;
  let logger: FakeLogger;
  let own: UnitOfWork;
  let other: UnitOfWork;
  let feed: ChangeFeed;
  let caughtUp: ChangeSet[];
  let reloaded: string[];

  beforeEach(async () => {
    handle = await memoryDatabase();
    clock = new ManualClock();
    logger = new FakeLogger();
    own = new UnitOfWork(handle.db, clock, logger);
    other = new UnitOfWork(handle.db, clock, logger);
    caughtUp = [];
    reloaded = [];
    feed = new ChangeFeed(handle.db, logger, { onCaughtUp: (set) => caughtUp.push(set) });
    // As the server wires it: this instance's committed writes reach the feed from its own bus.
    own.bus.subscribe((committed) => feed.applyOwn(committed.changeSet));
    feed.snapshot.listen({ applied: () => {}, reloaded: (stream) => reloaded.push(stream) });
    await feed.load();
  });
  afterEach(async () => {
    await handle.close();
  });

  const version = (stream: string) => feed.snapshot.versions.get(stream) ?? 0;

  test("own change sets apply at once and are not counted as caught up; a hint naming one reads nothing", async () => {
    await createProject(own, clock, "p");
    assert.equal(version("p"), 1);
    assert.ok(feed.snapshot.projects.has("p"));
    const [announcedBack] = await readChangeSetsSince(handle.db, "p", 0);
    assert.equal(await feed.deliver(announcedBack!), false, "announced back, it is already in");
    await feed.catchUp("p");
    assert.deepEqual(caughtUp, [], "nothing of this instance's own counts as caught up");
    assert.deepEqual(reloaded, []);
  });

  test("others' change sets are read from the log in version order, after this instance's own", async () => {
    await createProject(own, clock, "p");
    await createKey(other, clock, "p", "k1");
    await createKey(other, clock, "p", "k2");
    assert.equal(version("p"), 1, "the other instance's writes are not in until the feed reads the log");
    await feed.catchUp("p");
    assert.equal(version("p"), 3);
    assert.deepEqual(
      caughtUp.map((set) => [set.version, set.origin]),
      [
        [2, other.instanceId],
        [3, other.instanceId],
      ],
    );
    assert.equal(feed.snapshot.keyById("k2")?.hash, "hash-k2");
    assert.deepEqual(reloaded, [], "the log held every version missed: no reload");
  });

  test("a change set that arrives ahead of a missed one waits, then the feed reads the gap from the log", async () => {
    await createProject(other, clock, "p");
    await createKey(other, clock, "p", "k1");
    await createKey(other, clock, "p", "k2");
    const [, , third] = await readChangeSetsSince(handle.db, "p", 0);
    // Version 3 arrives (a notification) while 1 and 2 never did: it waits, then the feed reads the log.
    // The feed's wait is an unref'd timer (it must not keep a server from exiting): the test holds the
    // event loop open meanwhile.
    const keepAlive = setInterval(() => {}, 1000);
    try {
      assert.equal(await feed.deliver(third!), true);
    } finally {
      clearInterval(keepAlive);
    }
    assert.equal(version("p"), 3);
    assert.deepEqual(
      caughtUp.map((set) => set.version),
      [1, 2, 3],
    );
    assert.ok(feed.snapshot.projects.has("p"));
    assert.equal(feed.snapshot.keyById("k1")?.hash, "hash-k1");
  });

  test("a stream whose missed versions were pruned from the log is read afresh", async () => {
    await createProject(other, clock, "p");
    await createKey(other, clock, "p", "k1");
    clock.advance(60_000);
    await createKey(other, clock, "p", "k2");
    // Versions 1 and 2 leave the log; 3 stays: the log no longer starts where this feed stands (0).
    await pruneChangeSets(handle.db, isoTime(clock.now() - 1));
    assert.deepEqual(
      (await readChangeSetsSince(handle.db, "p", 0)).map((set) => set.version),
      [3],
    );
    await feed.catchUp("p");
    assert.deepEqual(reloaded, ["p"]);
    assert.deepEqual(caughtUp, [], "nothing was replayed: the stream was read from its tables");
    assert.equal(version("p"), 3);
    assert.ok(feed.snapshot.projects.has("p"));
    assert.equal(feed.snapshot.keyById("k1")?.hash, "hash-k1");
    assert.equal(feed.snapshot.keyById("k2")?.hash, "hash-k2");
  });

  test("a stream whose whole log was pruned is read afresh too", async () => {
    await createProject(other, clock, "p");
    await createKey(other, clock, "p", "k1");
    clock.advance(60_000);
    await pruneChangeSets(handle.db, isoTime(clock.now()));
    assert.deepEqual(await readChangeSetsSince(handle.db, "p", 0), []);
    await feed.catchUp("p");
    assert.deepEqual(reloaded, ["p"]);
    assert.equal(version("p"), 2);
    assert.equal(feed.snapshot.keyById("k1")?.hash, "hash-k1");
  });

  test("the reconcile catches up every stream that is behind, and only those", async () => {
    await createProject(own, clock, "a");
    await createProject(other, clock, "b");
    await createKey(other, clock, "a", "ka");
    await feed.reconcile();
    assert.equal(version("a"), 2);
    assert.equal(version("b"), 1);
    assert.deepEqual(caughtUp.map((set) => `${set.stream}@${set.version}`).sort(), ["a@2", "b@1"]);
  });

  test("reach resolves once a catch-up brings the stream to the version, or at its timeout for one never written", async () => {
    await createProject(other, clock, "p");
    await feed.reach("p", 1, 60_000);
    assert.equal(version("p"), 1);
    const began = performance.now();
    await feed.reach("p", 5, 20);
    assert.equal(version("p"), 1, "a version never written is not invented");
    assert.ok(performance.now() - began < 10_000);
  });
});
