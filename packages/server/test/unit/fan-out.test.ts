import assert from "node:assert/strict";
import { test } from "node:test";
import { setImmediate as turn } from "node:timers/promises";
import { FanOut } from "../../src/features/stream/fan-out.js";

test("a fan-out runs every item, jobs in the order they came, a budget's worth per turn", async () => {
  const done: string[] = [];
  // A budget of 0 ms: the clock is read every 32 items, so each turn does 32.
  const fanOut = new FanOut<number>(0);
  const first = Array.from({ length: 70 }, (_, i) => i);
  fanOut.add(first, (i) => done.push(`a${i}`));
  assert.equal(done.length, 32, "the first turn runs at once, up to the budget");
  fanOut.add([0, 1], (i) => done.push(`b${i}`));
  assert.equal(done.length, 32, "a later job waits for the one ahead of it");
  await turn();
  assert.equal(done.length, 64);
  await turn();
  assert.deepEqual(done, [...first.map((i) => `a${i}`), "b0", "b1"]);
  await turn();
  assert.equal(done.length, 72, "nothing runs twice");
});

test("a fan-out with room in its budget does everything at once; an empty job is nothing", () => {
  const done: number[] = [];
  const fanOut = new FanOut<number>(1000);
  fanOut.add([], () => assert.fail("no item"));
  fanOut.add([1, 2, 3], (i) => done.push(i));
  assert.deepEqual(done, [1, 2, 3]);
});

test("clear drops the jobs not done, and the fan-out takes new ones after", async () => {
  const done: number[] = [];
  const fanOut = new FanOut<number>(0);
  fanOut.add(
    Array.from({ length: 100 }, (_, i) => i),
    (i) => done.push(i),
  );
  fanOut.clear();
  await turn();
  await turn();
  assert.equal(done.length, 32, "only the first turn ran");
  fanOut.add([7], (i) => done.push(i));
  await turn();
  assert.equal(done.at(-1), 7);
});

test("an item that adds a job (a stream ended while it was written to) runs it after the current one", async () => {
  const done: string[] = [];
  const fanOut = new FanOut<number>(1000);
  fanOut.add([1, 2], (i) => {
    done.push(`a${i}`);
    if (i === 1) fanOut.add([9], () => done.push("b9"));
  });
  await turn();
  assert.deepEqual(done, ["a1", "a2", "b9"]);
});
