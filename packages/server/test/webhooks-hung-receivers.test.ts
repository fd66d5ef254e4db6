// Receivers that accept a delivery and never answer (issue 21, item 1):
//  1. An attempt ends at WEBHOOK_TIMEOUT_MS even when the garbage collector runs meanwhile. The sender
//     used to combine AbortSignal.any([shutdown, AbortSignal.timeout(ms)]): on Node.js 20 nothing kept the
//     timeout signal alive, a collection took it (and its timer) away, and the request hung for ever,
//     holding its slot. Collections are forced here, every few milliseconds, through --expose-gc.
//  2. Five hung webhooks do not starve a healthy one: each webhook gets at most a fair share of the
//     instance's slots, so the healthy one always finds one; and a webhook's backlog shows in the API
//     and the metrics.
// Every wait has a deadline; receivers and servers are closed in `after` (and by the harness).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { DIALECTS, startServer, type TestServer, WebhookReceiver, waitFor } from "@flagstaff/test-harness";
import { sendDelivery } from "../src/features/webhooks/webhook-sender.js";

setFlagsFromString("--expose-gc");
/** Forces a full collection (the flag above makes `gc` exist in contexts created from now on). */
const collect = runInNewContext("gc") as () => void;

/** Collects garbage every 10 ms until stopped. */
function collectContinually(): () => void {
  const timer = setInterval(collect, 10);
  return () => clearInterval(timer);
}

const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;

describe("a receiver that never answers, with the garbage collector running", () => {
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await WebhookReceiver.start();
    receiver.answer = () => ({ hang: true });
  });
  after(async () => receiver?.close());

  for (const withShutdownSignal of [true, false]) {
    test(`the attempt ends at its timeout (${withShutdownSignal ? "with" : "without"} a shutdown signal)`, async () => {
      const shutdown = new AbortController();
      const stop = collectContinually();
      try {
        const started = performance.now();
        // Bounded here too: the bug this guards against is an attempt that never ends.
        const attempt = await Promise.race([
          sendDelivery(`${receiver.url}/gc`, SECRET, "evt_gc", "{}", {
            timeoutMs: 300,
            allowPrivateNetworks: true,
            ...(withShutdownSignal ? { signal: shutdown.signal } : {}),
          }),
          new Promise<never>((_, reject) =>
            setTimeout(
              () => reject(new Error("the attempt was still open 5 s after its 300 ms timeout")),
              5000,
            ).unref(),
          ),
        ]);
        const ms = performance.now() - started;
        assert.equal(attempt.error, "no answer within 300 ms");
        assert.equal(attempt.statusCode, undefined);
        assert.ok(ms >= 290 && ms < 2000, `ended after ${Math.round(ms)} ms`);
      } finally {
        stop();
      }
    });
  }

  test("shutdown still cuts an attempt short, and says so", async () => {
    const shutdown = new AbortController();
    const stop = collectContinually();
    try {
      const sending = sendDelivery(`${receiver.url}/shutdown`, SECRET, "evt_shutdown", "{}", {
        timeoutMs: 30_000,
        allowPrivateNetworks: true,
        signal: shutdown.signal,
      });
      await waitFor("the request to arrive", () => receiver.at("/shutdown").length === 1);
      shutdown.abort();
      const attempt = await sending;
      assert.equal(attempt.error, "aborted at shutdown");
      assert.ok(attempt.durationMs < 5000, `${attempt.durationMs} ms`);
      // Already aborted: nothing is sent.
      const late = await sendDelivery(`${receiver.url}/late`, SECRET, "evt_late", "{}", {
        timeoutMs: 30_000,
        allowPrivateNetworks: true,
        signal: shutdown.signal,
      });
      assert.equal(late.error, "aborted at shutdown");
      assert.equal(receiver.at("/late").length, 0);
    } finally {
      stop();
    }
  });

  for (const dialect of DIALECTS) {
    test(`a server's attempt to a hung receiver ends at its timeout, collections or not [${dialect}]`, async () => {
      const server = await startServer({
        dialect,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "300", WEBHOOK_RETRY_BASE_MS: "50" },
      });
      const stop = collectContinually();
      try {
        const project = "gc";
        assert.equal((await server.request("POST", "/projects", { body: { id: project, name: "gc" } })).status, 201);
        const hook = await server.request("POST", `/projects/${project}/webhooks`, {
          body: { url: `${receiver.url}/server-gc-${dialect}`, events: ["flag.*"] },
        });
        assert.equal(hook.status, 201, hook.text);
        assert.equal((await server.request("POST", `/projects/${project}/flags/f`, { body: {} })).status, 201);
        // The first attempt's outcome is recorded when it ends. Before the fix, a collection took the attempt's
        // timer away: it never ended, its lease lapsed (timeout + 5 s) and the next attempt hung as well, so
        // no outcome was ever recorded.
        const deliveries = `/projects/${project}/webhooks/${hook.body.id}/deliveries`;
        const delivery = await waitFor(
          "the hung delivery's first outcome",
          async () => (await server.request("GET", deliveries)).body.data[0],
          { until: (d) => typeof d?.lastError === "string", timeoutMs: 20_000 },
        );
        assert.equal(delivery.lastError, "no answer within 300 ms");
        assert.ok(delivery.lastDurationMs >= 290 && delivery.lastDurationMs < 5000, `${delivery.lastDurationMs} ms`);
      } finally {
        stop();
        await server.close();
      }
    });
  }
});

for (const dialect of DIALECTS) {
  describe(`five hung webhooks and a healthy one [${dialect}]`, () => {
    const HUNG = 5;
    const WRITES = 40;
    let server: TestServer;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await WebhookReceiver.start();
      receiver.answer = (r) => (r.path.startsWith("/hung") ? { hang: true } : { status: 200 });
      // Hung attempts last longer than the test: the only slots that come free are the healthy one's.
      server = await startServer({
        dialect,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "60000", WEBHOOK_CONCURRENCY: "20" },
      });
    });
    after(async () => {
      await receiver?.close();
      await server?.close();
    });

    test("the healthy webhook gets every delivery promptly; each hung one holds at most its share", async () => {
      const project = "hung";
      assert.equal((await server.request("POST", "/projects", { body: { id: project, name: "hung" } })).status, 201);
      const create = async (path: string) => {
        const res = await server.request("POST", `/projects/${project}/webhooks`, {
          body: { url: `${receiver.url}${path}`, events: ["flag.*"] },
        });
        assert.equal(res.status, 201, res.text);
        return res.body as { id: string };
      };
      const hung = [];
      for (let i = 0; i < HUNG; i++) hung.push(await create(`/hung-${i}`));
      const healthy = await create("/healthy");
      assert.equal((await server.request("POST", `/projects/${project}/flags/f`, { body: {} })).status, 201);
      for (let i = 1; i < WRITES; i++) {
        const res = await server.request("PATCH", `/projects/${project}/flags/f`, { body: { description: `${i}` } });
        assert.equal(res.status, 200, res.text);
      }
      // Every write reached the healthy receiver, though the hung ones took the first slots and keep them.
      await waitFor("every delivery to the healthy webhook", () => receiver.at("/healthy").length, {
        until: (n) => n >= WRITES,
        timeoutMs: 15_000,
      });
      assert.equal(receiver.at("/healthy").length, WRITES, "each event once");
      // 20 slots, 6 webhooks with work: a share is 20 / (6 + 1), 2 slots; never more than 16 in any case.
      for (let i = 0; i < HUNG; i++) {
        const most = receiver.maxOpen.get(`/hung-${i}`) ?? 0;
        assert.ok(most >= 1 && most <= 4, `hung webhook ${i} had ${most} requests open at once`);
      }

      // The backlog shows in the API: the hung webhooks' deliveries wait, the healthy one's do not.
      const one = await waitFor(
        "the healthy webhook's backlog to empty",
        async () => (await server.request("GET", `/projects/${project}/webhooks/${healthy.id}`)).body,
        { until: (body) => body.backlog?.pending === 0 },
      );
      assert.deepEqual(one.backlog, { pending: 0, failing: 0, oldestPendingAt: null });
      const stuck = (await server.request("GET", `/projects/${project}/webhooks/${hung[0]!.id}`)).body;
      assert.equal(stuck.backlog.pending, WRITES);
      assert.equal(stuck.backlog.failing, 0, "no attempt has ended yet");
      assert.ok(Date.parse(stuck.backlog.oldestPendingAt) <= Date.now());
      const list = (await server.request("GET", `/projects/${project}/webhooks?limit=100`)).body.data as any[];
      assert.deepEqual(
        list.map((w) => [w.id, w.backlog.pending]),
        [...hung.map((h) => [h.id, WRITES]), [healthy.id, 0]],
      );
      // And in the metrics, per webhook.
      const metrics = (await server.request("GET", "/metrics")).text;
      assert.match(metrics, new RegExp(`^flagstaff_webhook_backlog\\{webhook="${hung[0]!.id}"\\} ${WRITES}$`, "m"));
      assert.doesNotMatch(metrics, new RegExp(`flagstaff_webhook_backlog\\{webhook="${healthy.id}"\\}`));
      assert.match(metrics, new RegExp(`^flagstaff_webhook_in_flight\\{webhook="${hung[0]!.id}"\\} [1-4]$`, "m"));
    });
  });
}
