import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DeliveryScheduler, fairShare, PER_WEBHOOK } from "../../src/features/webhooks/delivery-scheduler.js";

const due = (...webhookIds: string[]) => webhookIds.map((webhook_id, i) => ({ id: `dlv_${i}`, webhook_id }));

describe("delivery scheduler", () => {
  test("a webhook's fair share leaves one share over, at least 1 and at most PER_WEBHOOK", () => {
    assert.equal(fairShare(64, 1), PER_WEBHOOK);
    assert.equal(fairShare(8, 1), 4);
    assert.equal(fairShare(8, 3), 2);
    assert.equal(fairShare(8, 100), 1);
    assert.equal(fairShare(8, 0), 4);
  });

  test("a write reserves within its webhook's share and the instance's slots, and gives them back", () => {
    const slots = new DeliveryScheduler(4);
    // Alone, a webhook may hold 4 / 2 = 2.
    assert.equal(slots.reserve("wh_a"), true);
    assert.equal(slots.reserve("wh_a"), true);
    assert.equal(slots.reserve("wh_a"), false);
    assert.equal(slots.free(), 2);
    // Another webhook still finds a slot: the share left over.
    assert.equal(slots.reserve("wh_b"), true);
    slots.unreserve("wh_a");
    slots.unreserve("wh_a");
    slots.unreserve("wh_b");
    assert.equal(slots.free(), 4);
    assert.deepEqual(slots.holding(), new Map());
  });

  test("no slot is reserved when every slot is taken, whatever the share", () => {
    const slots = new DeliveryScheduler(2);
    slots.started("wh_a");
    slots.started("wh_b");
    assert.equal(slots.reserve("wh_c"), false);
    slots.finished("wh_a");
    assert.equal(slots.reserve("wh_c"), true);
    assert.deepEqual(slots.sends(), new Map([["wh_b", 1]]));
  });

  test("a claim chooses oldest first within each share and holds what it chose until sent", () => {
    const slots = new DeliveryScheduler(8);
    // Two webhooks with work: a share of 8 / 3 = 2 each.
    const choice = slots.choose(due("wh_slow", "wh_slow", "wh_slow", "wh_ok"), 8);
    assert.deepEqual(choice.chosen, ["dlv_0", "dlv_1", "dlv_3"]);
    assert.deepEqual(choice.held, ["wh_slow", "wh_slow", "wh_ok"]);
    assert.equal(choice.capped, true);
    assert.equal(slots.free(), 5);
    // Sent: the sends hold the slots now, the claim's hold goes.
    for (const id of choice.held) slots.started(id);
    slots.unhold(choice.held);
    assert.equal(slots.free(), 5);
    assert.deepEqual(
      slots.holding(),
      new Map([
        ["wh_slow", 2],
        ["wh_ok", 1],
      ]),
    );
    // At its share counting only the busy (8 / 3 = 2): left out of the next claim's query.
    assert.deepEqual(slots.saturated(), ["wh_slow"]);
  });

  test("a claim takes no more than the room left now, and says more may be due", () => {
    const slots = new DeliveryScheduler(4);
    assert.equal(slots.reserve("wh_a"), true);
    assert.equal(slots.reserve("wh_b"), true);
    assert.equal(slots.reserve("wh_c"), true);
    const choice = slots.choose(due("wh_d", "wh_e"), 4);
    assert.deepEqual(choice.chosen, ["dlv_0"]);
    assert.equal(choice.capped, true);
    assert.equal(slots.free(), 0);
    slots.unhold(choice.held);
    assert.equal(slots.free(), 1);
  });

  test("a claim that found everything it could take is not capped", () => {
    const slots = new DeliveryScheduler(16);
    const choice = slots.choose(due("wh_a", "wh_b"), 16);
    assert.equal(choice.chosen.length, 2);
    assert.equal(choice.capped, false);
  });
});
