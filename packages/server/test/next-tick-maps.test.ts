// next-tick-maps.ts keeps one of Node's tick objects alive so that process.nextTick's property sites stay
// monomorphic across full garbage collections (docs/performance.md, "The slow state and its fix"). These
// tests check that it leaves nextTick's behaviour alone. That a server started with main.js is protected is
// shown with bench/upstream-nexttick-repro/server-probe.mjs (see its README).
import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { describe, test } from "node:test";
import { keepNextTickMapsAlive } from "../src/kernel/next-tick-maps.js";

describe("keepNextTickMapsAlive", () => {
  test("keeps one of Node's tick objects, the same one on every call", () => {
    const kept = keepNextTickMapsAlive();
    assert.equal(typeof kept, "object");
    assert.equal(typeof (kept as { callback?: unknown }).callback, "function");
    assert.equal(keepNextTickMapsAlive(), kept);
  });

  test("ticks still run in order, with their arguments, before promise reactions of a later turn", async () => {
    keepNextTickMapsAlive();
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      setImmediate(() => {
        process.nextTick(() => order.push("tick 1"));
        process.nextTick((a: string, b: string) => order.push(`tick 2 ${a} ${b}`), "x", "y");
        process.nextTick(
          (a: number, b: number, c: number, d: number, e: number) => order.push(`tick 3 ${a + b + c + d + e}`),
          1,
          2,
          3,
          4,
          5,
        );
        Promise.resolve().then(() => order.push("promise"));
        process.nextTick(() => {
          process.nextTick(() => order.push("tick in a tick"));
          order.push("tick 4");
        });
        setImmediate(resolve);
      });
    });
    assert.deepEqual(order, ["tick 1", "tick 2 x y", "tick 3 15", "tick 4", "tick in a tick", "promise"]);
  });

  test("leaves no hook behind: an application's own async hook still sees every tick", () => {
    keepNextTickMapsAlive();
    const seen: string[] = [];
    const hook = createHook({
      init(_asyncId, type) {
        if (type === "TickObject") seen.push(type);
      },
    });
    hook.enable();
    process.nextTick(() => {});
    process.nextTick(() => {});
    hook.disable();
    assert.deepEqual(seen, ["TickObject", "TickObject"]);
  });
});
