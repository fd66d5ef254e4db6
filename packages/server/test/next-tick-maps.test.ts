// next-tick-maps.ts keeps one of Node's tick objects alive so that process.nextTick's property sites stay
// monomorphic across full garbage collections (docs/performance.md, "The slow state and its fix"). These
// tests check that it leaves nextTick's behaviour alone, and that a real server process started with
// main.js is protected: a full collection forced while none of its tick objects is alive leaves the sites
// monomorphic (without the fix they turn megamorphic every time).
import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { ADMIN_KEY, DIALECTS, freshDatabase, launchServer, type ServerProcess } from "@flagstaff/test-harness";
import { keepNextTickMapsAlive } from "../src/next-tick-maps.js";

const TIMEOUT = { timeout: 90_000 };
const PROBE = fileURLToPath(new URL("./helpers/next-tick-probe.js", import.meta.url));

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

for (const dialect of DIALECTS) {
  describe(`a server started with main.js (${dialect})`, () => {
    test("keeps process.nextTick's literal monomorphic through a full garbage collection", TIMEOUT, async (t) => {
      const database = await freshDatabase(dialect);
      t.after(() => database.drop());
      const server = await launchServer({
        env: {
          DATABASE_URL: database.url,
          ADMIN_API_KEY: ADMIN_KEY,
          NODE_OPTIONS: `--expose-gc --import=${PROBE}`,
        },
      });
      try {
        await probe(server);
      } finally {
        await server.kill();
      }
    });
  });
}

async function probe(server: ServerProcess): Promise<void> {
  for (let i = 0; i < 20; i++) assert.equal((await server.request("GET", "/healthz", { key: null })).status, 200);
  server.child.kill("SIGUSR2");
  await server.waitForOutput(/probe: done/, 20_000);
  // V8 prints through C's stdio, which a pipe buffers until the process exits.
  await server.stop("SIGTERM");
  const sites = [...server.stdout.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);
  // Node 20's literal has four property sites, Node 24's five.
  assert.ok(sites.length >= 4, `expected nextTick's literal sites in the probe's output${server.describe()}`);
  assert.deepEqual(
    sites.filter((state) => state === "MEGAMORPHIC"),
    [],
    `nextTick's literal sites: ${sites.join(", ")}`,
  );
}
