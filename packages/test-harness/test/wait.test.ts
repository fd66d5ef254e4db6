import assert from "node:assert/strict";
import { test } from "node:test";
import { timeUntil, waitFor, withDeadline } from "../src/index.js";

test("waitFor answers the first accepted answer, treating errors as not yet", async () => {
  let calls = 0;
  const value = await waitFor(
    "the third call",
    () => {
      calls++;
      if (calls === 1) throw new Error("not listening yet");
      return calls;
    },
    { until: (n) => n >= 3, intervalMs: 1 },
  );
  assert.equal(value, 3);
});

test("waitFor fails after its deadline, naming what it waited for and the last answer", async () => {
  await assert.rejects(
    waitFor("a miracle", () => "still nothing", { until: (s) => s === "done", timeoutMs: 50, intervalMs: 5 }),
    /timed out after 50 ms waiting for a miracle; last seen: still nothing/,
  );
});

test("waitFor stops at once when its signal is aborted", async () => {
  const controller = new AbortController();
  const started = performance.now();
  setTimeout(() => controller.abort(new Error("the process exited")), 20);
  await assert.rejects(
    waitFor("never", () => false, { timeoutMs: 10_000, intervalMs: 1000, signal: controller.signal }),
    /the process exited/,
  );
  assert.ok(performance.now() - started < 1000);
});

test("timeUntil measures from the given start", async () => {
  const since = performance.now() - 100;
  const ms = await timeUntil("a constant", "x", async () => "x", 1000, since);
  assert.ok(ms >= 100);
  await assert.rejects(
    timeUntil("late", "x", async () => "y", 50, since),
    /late to answer x/,
  );
});

test("withDeadline rejects a promise that takes too long, and passes one that does not", async () => {
  assert.equal(await withDeadline(Promise.resolve(1), 100, "quick"), 1);
  await assert.rejects(withDeadline(new Promise(() => {}), 20, "slow"), /slow did not finish within 20 ms/);
});
