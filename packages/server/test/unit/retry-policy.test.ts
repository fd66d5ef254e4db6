import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ManualClock } from "@flagstaff/test-harness";
import {
  describeWindow,
  disabledReason,
  judgeAttempt,
  type RetryPolicy,
} from "../../src/features/webhooks/retry-policy.js";

const HOUR = 3_600_000;

describe("retry policy", () => {
  const policy: RetryPolicy = { retryBaseMs: 5000, retryWindowMs: 24 * HOUR, random: () => 0.999999 };
  const queuedAt = new ManualClock();
  const delivery = (attempts: number, eventType = "flag.updated") => ({
    eventType,
    createdAt: new Date(queuedAt.now()).toISOString(),
    attempts,
  });

  test("an attempt that did not fail succeeds, whatever the clock says", () => {
    const clock = new ManualClock();
    clock.advance(48 * HOUR);
    assert.deepEqual(judgeAttempt(policy, delivery(9), false, clock.now()), { status: "succeeded" });
  });

  test("a failed attempt inside the window is retried after the backoff", () => {
    const clock = new ManualClock();
    assert.deepEqual(judgeAttempt(policy, delivery(1), true, clock.now()), {
      status: "retrying",
      nextAttemptAt: clock.now() + 5000,
    });
    assert.deepEqual(judgeAttempt(policy, delivery(3), true, clock.now()), {
      status: "retrying",
      nextAttemptAt: clock.now() + 20_000,
    });
  });

  test("the last retry is moved up to the window's end, not past it", () => {
    const clock = new ManualClock();
    clock.advance(24 * HOUR - 1000);
    assert.deepEqual(judgeAttempt(policy, delivery(20), true, clock.now()), {
      status: "retrying",
      nextAttemptAt: queuedAt.now() + 24 * HOUR,
    });
  });

  test("a failure at the window's end fails the delivery and may mean the webhook is dead", () => {
    const clock = new ManualClock();
    clock.advance(24 * HOUR);
    assert.deepEqual(judgeAttempt(policy, delivery(20), true, clock.now()), { status: "failed", deadWebhook: true });
  });

  test("a ping is tried once and never says the webhook is dead", () => {
    const clock = new ManualClock();
    assert.deepEqual(judgeAttempt(policy, delivery(1, "ping"), true, clock.now()), {
      status: "failed",
      deadWebhook: false,
    });
  });

  test("windows are put in words, and the reason names the window and the last error", () => {
    assert.equal(describeWindow(24 * HOUR), "24 hours");
    assert.equal(describeWindow(90 * 60_000), "90 minutes");
    assert.equal(describeWindow(2000), "2 seconds");
    assert.match(disabledReason(2000, "HTTP 500"), /^Every delivery failed for 2 seconds \(last attempt: HTTP 500\)/);
    assert.match(disabledReason(2000, undefined), /\(last attempt: failed\)/);
  });
});
