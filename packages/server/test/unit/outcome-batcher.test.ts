import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { OutcomeBatcher, type StartTimer } from "../../src/features/webhooks/outcome-batcher.js";

/** Timers fired by hand: each started timer waits in `due` with its delay. */
function fakeTimers() {
  const due: { fn: () => void; ms: number }[] = [];
  const start: StartTimer = (fn, ms) => void due.push({ fn, ms });
  const fire = () => {
    const timer = due.shift();
    assert.ok(timer, "a timer was started");
    timer.fn();
  };
  return { due, start, fire };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("outcome batcher", () => {
  test("items added within the batch time are stored together, once, after it", async () => {
    const timers = fakeTimers();
    const stored: number[][] = [];
    const batcher = new OutcomeBatcher<number>(async (batch) => void stored.push([...batch]), 20, timers.start);
    const done = [batcher.add(1), batcher.add(2), batcher.add(3)];
    assert.deepEqual(
      timers.due.map((t) => t.ms),
      [20],
    );
    assert.deepEqual(stored, []);
    timers.fire();
    await Promise.all(done);
    assert.deepEqual(stored, [[1, 2, 3]]);
  });

  test("items added while a batch is stored go in the next one, right after it", async () => {
    const timers = fakeTimers();
    const stored: number[][] = [];
    let finish: () => void = () => {};
    const batcher = new OutcomeBatcher<number>(
      (batch) => {
        stored.push([...batch]);
        return stored.length === 1 ? new Promise<void>((resolve) => (finish = resolve)) : Promise.resolve();
      },
      20,
      timers.start,
    );
    const first = batcher.add(1);
    timers.fire();
    const second = batcher.add(2);
    // No timer for the second: the flush in progress takes it.
    assert.equal(timers.due.length, 0);
    finish();
    await Promise.all([first, second]);
    assert.deepEqual(stored, [[1], [2]]);
  });

  test("a batch that cannot be stored rejects each of its items; the next batch is tried afresh", async () => {
    const timers = fakeTimers();
    let fail = true;
    const batcher = new OutcomeBatcher<number>(
      async () => {
        if (fail) throw new Error("database is locked");
      },
      20,
      timers.start,
    );
    const failed = [batcher.add(1), batcher.add(2)].map((p) =>
      p.then(
        () => "stored",
        (e: Error) => e.message,
      ),
    );
    timers.fire();
    assert.deepEqual(await Promise.all(failed), ["database is locked", "database is locked"]);
    fail = false;
    const later = batcher.add(3);
    await settle();
    timers.fire();
    await later;
  });

  test("once hurried (at shutdown), a batch waits for no batch time", () => {
    const timers = fakeTimers();
    const batcher = new OutcomeBatcher<number>(async () => {}, 20, timers.start);
    batcher.hurry();
    void batcher.add(1);
    assert.deepEqual(
      timers.due.map((t) => t.ms),
      [0],
    );
  });
});
