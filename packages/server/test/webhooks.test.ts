import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Webhook as Verifier } from "standardwebhooks";
import { retryDelay } from "../src/features/webhooks/retry-policy.js";
import { checkTarget, isPublicAddress, UnsafeTargetError } from "../src/features/webhooks/safe-target.js";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  type ReceivedWebhook,
  startServer,
  type TestServer,
  waitFor,
  WebhookReceiver,
} from "@flagstaff/test-harness";

/** Fast retries for tests: 50 ms doubling, given up after 1.5 s; a receiver that hangs is dropped after 400 ms. */
const FAST = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  WEBHOOK_RETRY_BASE_MS: "50",
  WEBHOOK_RETRY_WINDOW_MS: "1500",
  WEBHOOK_TIMEOUT_MS: "400",
};

const bodyOf = (r: ReceivedWebhook) => JSON.parse(r.body) as Record<string, any>;

/**
 * Delivery is at least once: on a loaded machine a receiver that answers after the timeout, or a lease
 * that lapses, gets the same event again. Count events, not requests: the first arrival of each event id.
 */
const distinctEvents = (received: readonly ReceivedWebhook[]) =>
  received.filter((r, i) => received.findIndex((x) => x.headers["webhook-id"] === r.headers["webhook-id"]) === i);

/** Verifies a received delivery's signature the way a receiver would; throws when it does not verify. */
function verify(secret: string, r: ReceivedWebhook): Record<string, any> {
  return new Verifier(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, any>;
}

describe("safe targets", () => {
  test("only global unicast addresses are public", () => {
    for (const address of ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"])
      assert.ok(isPublicAddress(address), address);
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "fe80::1",
      "fc00::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "not an address",
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });

  test("URLs: http(s) only; literal and resolved private addresses refused unless allowed", async () => {
    for (const [url, message] of [
      ["ftp://example.com/x", /http or https/],
      ["javascript:alert(1)", /http or https/],
      ["not a url", /valid absolute URL/],
      ["http://127.0.0.1:8080/hook", /127\.0\.0\.1/],
      ["http://[::1]/hook", /::1/],
      ["http://169.254.169.254/latest/meta-data", /169\.254\.169\.254/],
      ["https://10.0.0.7/", /10\.0\.0\.7/],
      ["http://0.0.0.0/", /0\.0\.0\.0/],
      ["http://[::ffff:127.0.0.1]/", /::ffff:7f00:1/],
      ["http://localhost:9/hook", /localhost \((127\.0\.0\.1|::1)\)/],
    ] as const) {
      await assert.rejects(checkTarget(url, false), (error: unknown) => {
        assert.ok(error instanceof UnsafeTargetError, String(error));
        assert.match(error.message, message);
        return true;
      });
    }
    assert.equal((await checkTarget("http://127.0.0.1:8080/hook", true)).href, "http://127.0.0.1:8080/hook");
    assert.equal((await checkTarget("https://8.8.8.8/x?y=1", false)).href, "https://8.8.8.8/x?y=1");
    await assert.rejects(checkTarget("gopher://127.0.0.1/", true), /http or https/);
  });

  test("retry delays double from the base, are jittered to 50–100 %, and stop growing at an hour", () => {
    const make = (random: number) => ({ retryBaseMs: 5000, retryWindowMs: 86_400_000, random: () => random });
    const high = make(0.999999);
    const low = make(0);
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => retryDelay(high, n)),
      [5000, 10000, 20000, 40000],
    );
    assert.deepEqual(
      [1, 2, 3].map((n) => retryDelay(low, n)),
      [2500, 5000, 10000],
    );
    assert.ok(retryDelay(high, 40) > 3_599_000 && retryDelay(high, 40) <= 3_600_000);
    assert.equal(retryDelay(low, 1000), 1_800_000);
  });
});

for (const dialect of DIALECTS) {
  describe(`webhooks [${dialect}]`, () => {
    let server: TestServer;
    let fresh: FreshDatabase;
    let receiver: WebhookReceiver;
    let project: string;
    let writer: { key: string; id: string };
    let reader: { key: string; id: string };
    let hookCount = 0;
    const base = () => `/projects/${project}`;

    before(async () => {
      receiver = await WebhookReceiver.start();
      fresh = await freshDatabase(dialect);
      server = await startServer({ dialect, env: FAST, database: fresh });
      project = await createProject(server, "hooks");
      writer = await createKey(server, project, "write");
      reader = await createKey(server, project, "read");
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    /** Creates a webhook to a path of its own on the receiver; answers it with its secret and path. */
    const createHook = async (events?: string[], extra: Record<string, unknown> = {}) => {
      const path = `/hook-${++hookCount}`;
      const res = await server.request("POST", `${base()}/webhooks`, {
        body: { url: `${receiver.url}${path}`, ...(events ? { events } : {}), ...extra },
      });
      assert.equal(res.status, 201, res.text);
      return { ...res.body, path } as { id: string; secret: string; path: string; [k: string]: any };
    };
    const deliveries = async (hookId: string, query = "") => {
      const res = await server.request("GET", `${base()}/webhooks/${hookId}/deliveries${query}`);
      assert.equal(res.status, 200, res.text);
      return res.body as { data: any[]; pagination: { before: string | null; after: string | null } };
    };
    const patchFlag = async (name: string, body: unknown) => {
      const res = await server.request("PATCH", `${base()}/flags/${name}`, { key: writer.key, body });
      assert.equal(res.status, 200, res.text);
    };
    const newestEvent = async () => (await server.request("GET", `${base()}/events?limit=1`)).body.data[0];

    test("create answers the secret once; list, get, patch and delete never show it", async () => {
      const hook = await createHook(undefined, { description: "CI bot" });
      assert.match(hook.id, /^wh_[0-9A-Z]{26}$/);
      assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(hook.events, ["*"], "every event by default");
      assert.equal(hook.enabled, true);
      assert.equal(hook.disabledReason, null);
      assert.equal(hook.description, "CI bot");
      assert.equal(hook.projectId, project);

      const got = await server.request("GET", `${base()}/webhooks/${hook.id}`);
      assert.equal(got.status, 200);
      assert.equal("secret" in got.body, false);
      // The backlog is live (the webhook's own webhook.created is being delivered meanwhile): compared apart.
      const { secret: _secret, path: _path, backlog: _backlog, ...shown } = hook;
      const { backlog, ...gotShown } = got.body;
      assert.deepEqual(gotShown, shown);
      assert.equal(typeof backlog.pending, "number");

      const patched = await server.request("PATCH", `${base()}/webhooks/${hook.id}`, {
        body: { events: ["flag.*", "segment.deleted"], description: "flags only", enabled: false },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.events, ["flag.*", "segment.deleted"]);
      assert.equal(patched.body.enabled, false);
      assert.equal("secret" in patched.body, false);
      assert.ok(patched.body.updatedAt >= hook.updatedAt);

      const listed = await server.request("GET", `${base()}/webhooks`);
      assert.equal(listed.status, 200);
      assert.ok(listed.body.data.some((w: any) => w.id === hook.id && !("secret" in w)));

      // The history records who did it, without the secret.
      const history = (await server.request("GET", `${base()}/events?type=webhook.`)).body.data;
      const [updated, created] = history.filter((e: any) => e.target.id === hook.id);
      assert.equal(created.type, "webhook.created");
      assert.equal(updated.type, "webhook.updated");
      assert.equal(updated.before.enabled, true);
      assert.equal(updated.after.enabled, false);
      assert.ok(!JSON.stringify(history).includes(hook.secret), "no secret in the history");
      assert.ok(!JSON.stringify(history).includes("whsec_"), "no secret in the history");

      const deleted = await server.request("DELETE", `${base()}/webhooks/${hook.id}`);
      assert.equal(deleted.status, 204);
      expectProblem(await server.request("GET", `${base()}/webhooks/${hook.id}`), 404, "webhook_not_found");
      expectProblem(await server.request("DELETE", `${base()}/webhooks/${hook.id}`), 404, "webhook_not_found");
      assert.equal((await newestEvent()).type, "webhook.deleted");
    });

    test("a PATCH that changes nothing records nothing", async () => {
      const hook = await createHook(["flag.*"]);
      const before = await newestEvent();
      const res = await server.request("PATCH", `${base()}/webhooks/${hook.id}`, { body: { events: ["flag.*"] } });
      assert.equal(res.status, 200);
      assert.equal(res.body.updatedAt, hook.updatedAt);
      assert.equal((await newestEvent()).id, before.id);
    });

    test("errors: roles, unknown project or webhook, bad bodies, bad patterns, bad queries", async () => {
      const hook = await createHook();
      const other = await createProject(server);
      for (const key of [writer.key, reader.key]) {
        expectProblem(await server.request("GET", `${base()}/webhooks`, { key }), 403, "forbidden");
        expectProblem(
          await server.request("POST", `${base()}/webhooks`, { key, body: { url: receiver.url } }),
          403,
          "forbidden",
        );
        expectProblem(await server.request("POST", `${base()}/webhooks/${hook.id}/test`, { key }), 403, "forbidden");
      }
      expectProblem(await server.request("GET", `${base()}/webhooks`, { key: null }), 401, "unauthorized");
      expectProblem(await server.request("GET", "/projects/nope/webhooks"), 404, "project_not_found");
      expectProblem(
        await server.request("POST", "/projects/nope/webhooks", { body: { url: receiver.url } }),
        404,
        "project_not_found",
      );
      expectProblem(await server.request("GET", "/projects/nope/webhooks/wh_x"), 404, "project_not_found");
      // Another project's webhook is not found through this one.
      expectProblem(await server.request("GET", `/projects/${other}/webhooks/${hook.id}`), 404, "webhook_not_found");
      expectProblem(
        await server.request("PATCH", `/projects/${other}/webhooks/${hook.id}`, { body: { enabled: false } }),
        404,
        "webhook_not_found",
      );
      expectProblem(await server.request("GET", `${base()}/webhooks/wh_nope/deliveries`), 404, "webhook_not_found");
      expectProblem(await server.request("POST", `${base()}/webhooks/wh_nope/test`), 404, "webhook_not_found");

      const before = await newestEvent();
      for (const body of [
        {},
        { url: "" },
        { url: 42 },
        { url: "ftp://example.com/" },
        { url: "not a url" },
        { url: receiver.url, events: [] },
        { url: receiver.url, events: ["flag.exploded"] },
        { url: receiver.url, events: ["flag.*", "flag.*"] },
        { url: receiver.url, events: "*" },
        { url: receiver.url, secret: "mine" },
        { url: `${receiver.url}/${"x".repeat(2048)}` },
        { url: receiver.url, description: "d".repeat(1025) },
      ]) {
        expectProblem(await server.request("POST", `${base()}/webhooks`, { body }), 400, "invalid_request");
      }
      expectProblem(
        await server.request("POST", `${base()}/webhooks`, {
          rawBody: "{",
          headers: { "content-type": "application/json" },
        }),
        400,
        "invalid_request",
      );
      for (const body of [{ url: "file:///etc/passwd" }, { enabled: "yes" }, { events: ["*", "nope"] }, { id: "x" }]) {
        expectProblem(await server.request("PATCH", `${base()}/webhooks/${hook.id}`, { body }), 400, "invalid_request");
      }
      for (const query of ["?status=lost", "?limit=0", "?limit=101", "?after=garbage", "?color=red"]) {
        expectProblem(
          await server.request("GET", `${base()}/webhooks/${hook.id}/deliveries${query}`),
          400,
          "invalid_request",
        );
      }
      assert.equal((await newestEvent()).id, before.id, "no refused request produced an event");
    });

    test("every matching event is delivered, signed per Standard Webhooks, with the history's body", async () => {
      const all = await createHook();
      const flagsOnly = await createHook(["flag.*"]);
      const segmentDeleted = await createHook(["segment.deleted"]);
      const start = (await newestEvent()).id;
      const flagRes = await server.request("POST", `${base()}/flags/delivered`, { key: writer.key, body: {} });
      assert.equal(flagRes.status, 201);
      await patchFlag("delivered", { percentageActors: 25 });
      const segment = await server.request("POST", `${base()}/segments`, { key: writer.key, body: { name: "beta" } });
      assert.equal(segment.status, 201, segment.text);
      const history = (await server.request("GET", `${base()}/events?limit=100`)).body.data
        .filter((e: any) => e.id > start)
        .reverse();
      assert.deepEqual(
        history.map((e: any) => e.type),
        ["flag.created", "flag.updated", "segment.created"],
      );

      const arrived = await waitFor(
        "the three changes at the catch-all webhook",
        () => distinctEvents(receiver.at(all.path)),
        {
          until: (r) => history.every((e: any) => r.some((x) => bodyOf(x).id === e.id)),
        },
      );
      // It also heard of its own creation and of the two webhooks made after it.
      assert.deepEqual(
        arrived.map((r) => bodyOf(r).type).filter((t) => t.startsWith("webhook.")),
        ["webhook.created", "webhook.created", "webhook.created"],
      );
      const bodies = arrived.map((r) => verify(all.secret, r));
      const byId = new Map(bodies.map((b) => [b.id, b]));
      for (const event of history)
        assert.deepEqual(byId.get(event.id), event, "the body is the event as the history shows it");
      for (const r of arrived) {
        assert.equal(r.headers["webhook-id"], bodyOf(r).id, "webhook-id is the event id");
        assert.match(String(r.headers["webhook-timestamp"]), /^\d{10}$/);
        assert.match(String(r.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]+=*$/);
        assert.equal(r.headers["content-type"], "application/json");
        assert.match(String(r.headers["user-agent"]), /^Flagstaff-Webhooks\//);
      }
      // A receiver holding another webhook's secret, or a tampered body, does not verify.
      assert.throws(() => verify(flagsOnly.secret, arrived[0]!));
      assert.throws(() => verify(all.secret, { ...arrived[0]!, body: arrived[0]!.body.replace("}", ',"x":1}') }));

      const flagTypes = await waitFor(
        "the two flag events at the flag.* webhook",
        () => distinctEvents(receiver.at(flagsOnly.path)).map((r) => bodyOf(r).type),
        { until: (types) => types.length >= 2 },
      );
      assert.deepEqual(flagTypes.sort(), ["flag.created", "flag.updated"]);
      // The flag.* and segment.deleted webhooks never get a segment.created; settle by a later event.
      await server.request("DELETE", `${base()}/segments/${segment.body.id}`, { key: writer.key });
      await waitFor("the segment.deleted delivery", () => distinctEvents(receiver.at(segmentDeleted.path)), {
        until: (r) => r.length === 1,
      });
      assert.equal(bodyOf(receiver.at(segmentDeleted.path)[0]!).type, "segment.deleted");
      assert.equal(distinctEvents(receiver.at(flagsOnly.path)).length, 2);

      const list = await waitFor("the catch-all's deliveries to succeed", () => deliveries(all.id, "?status=pending"), {
        until: (page) => page.data.length === 0,
      });
      assert.deepEqual(list.data, []);
      const done = (await deliveries(all.id)).data;
      assert.ok(done.length >= 5);
      const allReceived = receiver.at(all.path);
      for (const d of done) {
        assert.equal(d.status, "succeeded");
        // One attempt, unless the machine was slow enough that the event was sent again (see distinctEvents).
        const sent = allReceived.filter((r) => r.headers["webhook-id"] === d.eventId).length;
        assert.equal(d.attempts, Math.max(1, sent));
        assert.equal(d.lastStatusCode, 200);
        assert.equal(d.lastError, null);
        assert.equal(d.nextAttemptAt, null);
        assert.ok(d.finishedAt);
        assert.equal(typeof d.lastDurationMs, "number");
      }
      assert.deepEqual(
        done.map((d: any) => d.id),
        [...done.map((d: any) => d.id)].sort().reverse(),
        "newest first",
      );
    });

    test("failures are retried with backoff until one succeeds; the delivery records each attempt", async () => {
      const hook = await createHook(["flag.updated"]);
      let failuresLeft = 2;
      receiver.answer = (r) => (r.path === hook.path && failuresLeft-- > 0 ? { status: 503 } : { status: 200 });
      try {
        await patchFlag("delivered", { description: "retry me" });
        const arrivals = await waitFor("three attempts", () => receiver.at(hook.path), {
          until: (r) => r.length >= 3,
        });
        assert.equal(new Set(arrivals.map((r) => r.headers["webhook-id"])).size, 1, "one event id on every attempt");
        assert.equal(new Set(arrivals.map((r) => r.body)).size, 1, "the same body on every attempt");
        assert.ok(arrivals[1]!.receivedAt - arrivals[0]!.receivedAt >= 20, "the retry waited (50 ms, jittered)");
        const [delivery] = (
          await waitFor("the delivery to succeed", () => deliveries(hook.id), {
            until: (page) => page.data[0]?.status === "succeeded",
          })
        ).data;
        assert.equal(delivery.attempts, 3);
        assert.equal(delivery.lastStatusCode, 200);
      } finally {
        receiver.answer = () => ({ status: 200 });
      }
    });

    test("a delivery that fails for the whole window is marked failed and the webhook is disabled, visibly", async () => {
      const hook = await createHook(["flag.updated"]);
      receiver.answer = (r) => (r.path === hook.path ? { status: 500 } : { status: 200 });
      try {
        await patchFlag("delivered", { description: "doomed" });
        const failed = await waitFor(
          "the delivery to fail",
          async () => (await deliveries(hook.id, "?status=failed")).data,
          { until: (d) => d.length === 1, timeoutMs: 20_000 },
        );
        assert.equal(failed[0].lastStatusCode, 500);
        assert.equal(failed[0].lastError, "HTTP 500");
        assert.ok(failed[0].attempts >= 3, `retried (${failed[0].attempts} attempts)`);
        assert.equal(failed[0].nextAttemptAt, null);

        const disabled = await waitFor(
          "the webhook to be disabled",
          async () => (await server.request("GET", `${base()}/webhooks/${hook.id}`)).body,
          { until: (w) => w.enabled === false },
        );
        assert.match(disabled.disabledReason, /Every delivery failed for .* HTTP 500/);
        const event = (await server.request("GET", `${base()}/events?type=webhook.updated&limit=1`)).body.data[0];
        assert.deepEqual(event.actor, { type: "system", system: "webhook-dispatcher" });
        assert.equal(event.target.id, hook.id);
        assert.equal(event.after.enabled, false);

        // While disabled, events are not queued for it (queueing happens in the write's transaction).
        const before = (await deliveries(hook.id)).data.length;
        await patchFlag("delivered", { description: "while disabled" });
        assert.equal((await deliveries(hook.id)).data.length, before);

        // Turned back on by a person: the reason clears, new events flow again.
        receiver.answer = () => ({ status: 200 });
        const enabled = await server.request("PATCH", `${base()}/webhooks/${hook.id}`, { body: { enabled: true } });
        assert.equal(enabled.body.enabled, true);
        assert.equal(enabled.body.disabledReason, null);
        const seen = receiver.at(hook.path).length;
        await patchFlag("delivered", { description: "back on" });
        const arrived = await waitFor("a delivery after re-enabling", () => receiver.at(hook.path), {
          until: (r) => r.length > seen,
        });
        assert.equal(bodyOf(arrived.at(-1)!).after.description, "back on");
      } finally {
        receiver.answer = () => ({ status: 200 });
      }
    });

    test("redirects are not followed; a receiver that never answers times out; neither delays others", async () => {
      const redirecting = await createHook(["flag.updated"]);
      const hanging = await createHook(["flag.updated"]);
      const healthy = await createHook(["flag.updated"]);
      receiver.answer = (r) =>
        r.path === redirecting.path
          ? { status: 302, headers: { location: `${receiver.url}${healthy.path}` } }
          : r.path === hanging.path
            ? { hang: true }
            : { status: 200 };
      try {
        const started = performance.now();
        await patchFlag("delivered", { description: "fan out" });
        const writeMs = performance.now() - started;
        await waitFor("the healthy receiver", () => receiver.at(healthy.path), { until: (r) => r.length === 1 });
        assert.ok(writeMs < 2000, `the write did not wait for any receiver (${Math.round(writeMs)} ms)`);
        const redirected = await waitFor(
          "the redirect to be recorded",
          async () => (await deliveries(redirecting.id)).data[0],
          { until: (d) => d?.lastStatusCode === 302 },
        );
        assert.match(redirected.lastError, /redirects are not followed/);
        assert.equal(receiver.at(healthy.path).length, 1, "the redirect was not followed to the healthy path");
        const timedOut = await waitFor(
          "the hanging receiver to time out",
          async () => (await deliveries(hanging.id)).data[0],
          { until: (d) => d?.lastError !== null && d?.lastError !== undefined },
        );
        assert.match(timedOut.lastError, /no answer within 400 ms/);
        assert.equal(timedOut.lastStatusCode, null);
        assert.ok(timedOut.lastDurationMs >= 350, `${timedOut.lastDurationMs} ms`);
      } finally {
        receiver.answer = () => ({ status: 200 });
        for (const hook of [redirecting, hanging]) await server.request("DELETE", `${base()}/webhooks/${hook.id}`);
      }
    });

    test("test sends a ping, tried once, to an enabled or disabled webhook; pings are not history", async () => {
      const hook = await createHook(["segment.deleted"], { enabled: false });
      const before = await newestEvent();
      const res = await server.request("POST", `${base()}/webhooks/${hook.id}/test`);
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.eventType, "ping");
      assert.equal(res.body.status, "pending");
      const [arrived] = await waitFor("the ping", () => receiver.at(hook.path), { until: (r) => r.length === 1 });
      const ping = verify(hook.secret, arrived!);
      assert.equal(ping.type, "ping");
      assert.equal(ping.id, res.body.eventId);
      assert.equal(ping.target.id, hook.id);
      assert.deepEqual(ping.actor, { type: "key", keyId: ping.actor.keyId, keyName: "ADMIN_API_KEY", role: "admin" });
      assert.equal((await newestEvent()).id, before.id, "a ping is not a change");

      receiver.answer = (r) => (r.path === hook.path ? { status: 500 } : { status: 200 });
      try {
        const failing = await server.request("POST", `${base()}/webhooks/${hook.id}/test`);
        const failed = await waitFor(
          "the failed ping",
          async () => (await deliveries(hook.id)).data.find((d: any) => d.id === failing.body.id),
          { until: (d) => d?.status === "failed" },
        );
        assert.equal(failed.attempts, 1, "a ping is tried once");
        const after = (await server.request("GET", `${base()}/webhooks/${hook.id}`)).body;
        assert.equal(after.disabledReason, null, "a failed ping never disables a webhook");
      } finally {
        receiver.answer = () => ({ status: 200 });
      }
    });

    test("deliveries page newest first, filter by status, and page both ways", async () => {
      const hook = await createHook(["flag.updated"]);
      for (let i = 0; i < 5; i++) await patchFlag("delivered", { description: `page ${i}` });
      await waitFor("five deliveries", async () => (await deliveries(hook.id, "?status=succeeded")).data, {
        until: (d) => d.length === 5,
      });
      const first = await deliveries(hook.id, "?limit=2");
      assert.equal(first.data.length, 2);
      assert.equal(first.pagination.before, null);
      const second = await deliveries(hook.id, `?limit=2&after=${first.pagination.after}`);
      const third = await deliveries(hook.id, `?limit=2&after=${second.pagination.after}`);
      assert.equal(third.data.length, 1);
      assert.equal(third.pagination.after, null);
      const back = await deliveries(hook.id, `?limit=2&before=${second.pagination.before}`);
      assert.deepEqual(back.data, first.data);
      const ids = [...first.data, ...second.data, ...third.data].map((d) => d.id);
      assert.deepEqual(ids, [...ids].sort().reverse());
      assert.deepEqual((await deliveries(hook.id, "?status=failed")).data, []);
    });

    test("one delivery opens with the body it POSTs, byte for byte; unknown ids and other webhooks' deliveries are 404", async () => {
      const hook = await createHook(["flag.updated"]);
      const other = await createHook(["flag.updated"]);
      await patchFlag("delivered", { description: "opened" });
      const [listed] = await waitFor("the delivery", async () => (await deliveries(hook.id)).data, {
        until: (d) => d.length === 1 && d[0].status === "succeeded",
      });
      const [arrived] = await waitFor("the POST", () => receiver.at(hook.path), { until: (r) => r.length === 1 });
      const res = await server.request("GET", `${base()}/webhooks/${hook.id}/deliveries/${listed.id}`);
      assert.equal(res.status, 200, res.text);
      const { payload, ...delivery } = res.body;
      assert.deepEqual(delivery, listed, "the same fields as in the list");
      assert.deepEqual(payload, verify(hook.secret, arrived!), "the body the receiver got");
      assert.equal(payload.after.description, "opened");
      // A ping's body too, before it is even sent.
      const ping = (await server.request("POST", `${base()}/webhooks/${hook.id}/test`)).body;
      const pinged = await server.request("GET", `${base()}/webhooks/${hook.id}/deliveries/${ping.id}`);
      assert.equal(pinged.status, 200, pinged.text);
      assert.equal(pinged.body.payload.type, "ping");
      assert.equal(pinged.body.payload.id, ping.eventId);

      const [otherDelivery] = await waitFor("the other's delivery", async () => (await deliveries(other.id)).data, {
        until: (d) => d.length === 1,
      });
      for (const path of [
        `${base()}/webhooks/${hook.id}/deliveries/dlv_nope`,
        `${base()}/webhooks/${hook.id}/deliveries/${otherDelivery.id}`,
      ]) {
        expectProblem(await server.request("GET", path), 404, "delivery_not_found");
      }
      expectProblem(
        await server.request("GET", `${base()}/webhooks/wh_nope/deliveries/${listed.id}`),
        404,
        "webhook_not_found",
      );
      expectProblem(
        await server.request("GET", `/projects/nope/webhooks/${hook.id}/deliveries/${listed.id}`),
        404,
        "project_not_found",
      );
      expectProblem(
        await server.request("GET", `${base()}/webhooks/${hook.id}/deliveries/${listed.id}`, { key: writer.key }),
        403,
        "forbidden",
      );
    });

    test("metrics count deliveries by webhook and outcome, and show the queue", async () => {
      const hook = await createHook(["flag.updated"]);
      await patchFlag("delivered", { description: "counted" });
      await waitFor("the delivery", () => receiver.at(hook.path), { until: (r) => r.length === 1 });
      const text = await waitFor("the succeeded counter", async () => (await server.request("GET", "/metrics")).text, {
        until: (t) => t.includes(`flagstaff_webhook_deliveries_total{webhook="${hook.id}",outcome="succeeded"} 1`),
      });
      assert.match(text, /^flagstaff_webhook_outbox_depth \d+$/m);
      assert.match(text, /flagstaff_webhook_oldest_pending_seconds \d/);
    });

    test("a stopped dispatcher leaves deliveries queued and visible in the gauges", async () => {
      const hook = await createHook(["flag.updated"]);
      await server.service.dispatcher.stop();
      try {
        await patchFlag("delivered", { description: "queued" });
        const text = (await server.request("GET", "/metrics")).text;
        assert.match(text, /^flagstaff_webhook_outbox_depth [1-9]/m);
        // Queued by the write itself, in its transaction: visible before any dispatcher runs.
        const queued = (await deliveries(hook.id, "?status=pending")).data;
        assert.equal(queued.length, 1);
        assert.equal(queued[0].attempts, 0);
        assert.doesNotMatch(text, /flagstaff_webhook_oldest_pending_seconds 0\n/);
      } finally {
        // Only this server's dispatcher was stopped: a restarted server on the same database delivers.
        await server.stop();
        server = await startServer({ dialect, env: FAST, database: fresh });
      }
      await waitFor("the queued delivery after restart", () => receiver.at(hook.path), {
        until: (r) => r.length === 1,
      });
      assert.equal(bodyOf(receiver.at(hook.path)[0]!).after.description, "queued");
    });

    test("deleting a project deletes its webhooks and their deliveries", async () => {
      const doomed = await createProject(server);
      const res = await server.request("POST", `/projects/${doomed}/webhooks`, {
        body: { url: `${receiver.url}/doomed` },
      });
      assert.equal(res.status, 201);
      assert.equal((await server.request("DELETE", `/projects/${doomed}`)).status, 204);
      const rows = await server.database.db
        .selectFrom("webhooks")
        .select("id")
        .where("project_id", "=", doomed)
        .execute();
      assert.deepEqual(rows, []);
      const left = await server.database.db
        .selectFrom("webhook_deliveries")
        .select("id")
        .where("webhook_id", "=", res.body.id)
        .execute();
      assert.deepEqual(left, []);
    });
  });

  describe(`webhook targets without WEBHOOK_ALLOW_PRIVATE_NETWORKS [${dialect}]`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await WebhookReceiver.start();
      server = await startServer({ dialect, env: { WEBHOOK_RETRY_WINDOW_MS: "1000", WEBHOOK_RETRY_BASE_MS: "50" } });
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    test("private targets are refused at creation and update, with the reason on /url", async () => {
      const project = await createProject(server);
      for (const url of [
        receiver.url,
        "http://localhost:1/",
        "http://[::1]/",
        "http://169.254.169.254/",
        "http://10.0.0.1/",
      ]) {
        const res = await server.request("POST", `/projects/${project}/webhooks`, { body: { url } });
        expectProblem(res, 400, "invalid_request");
        assert.match(res.body.detail, /non-public address.*WEBHOOK_ALLOW_PRIVATE_NETWORKS/);
        assert.equal(res.body.errors[0].path, "/url");
      }
      const ok = await server.request("POST", `/projects/${project}/webhooks`, {
        body: { url: "https://8.8.8.8/hook" },
      });
      assert.equal(ok.status, 201, ok.text);
      expectProblem(
        await server.request("PATCH", `/projects/${project}/webhooks/${ok.body.id}`, { body: { url: receiver.url } }),
        400,
        "invalid_request",
      );
      // Nothing to deliver to 8.8.8.8 from a loopback-only machine.
      assert.equal((await server.request("DELETE", `/projects/${project}/webhooks/${ok.body.id}`)).status, 204);
    });

    test("a target that turned private after creation (DNS changed) is refused at delivery", async () => {
      const project = await createProject(server);
      const created = await server.request("POST", `/projects/${project}/webhooks`, {
        body: { url: "https://8.8.8.8/hook", events: ["flag.*"] },
      });
      assert.equal(created.status, 201);
      // As if its name now resolved to loopback: point the stored row at localhost and the receiver.
      const port = new URL(receiver.url).port;
      for (const url of [`http://localhost:${port}/dns`, `http://127.0.0.1:${port}/literal`]) {
        await server.database.db.updateTable("webhooks").set({ url }).where("id", "=", created.body.id).execute();
        const name = `f${Math.random().toString(36).slice(2, 8)}`;
        await server.request("POST", `/projects/${project}/flags/${name}`, { body: {} });
        const refused = await waitFor(
          `the refusal of ${url}`,
          async () =>
            (await server.request("GET", `/projects/${project}/webhooks/${created.body.id}/deliveries?limit=1`)).body
              .data[0],
          { until: (d) => d?.lastError != null },
        );
        assert.match(refused.lastError, /non-public address/);
        assert.equal(refused.lastStatusCode, null);
      }
      assert.deepEqual(receiver.received, [], "nothing reached the private address");
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`a slow webhook's backlog [${dialect}]`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await WebhookReceiver.start();
      server = await startServer({
        dialect,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "2000" },
      });
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    test("does not hold up another webhook's deliveries", async () => {
      const project = await createProject(server);
      const hook = async (path: string, events: string[]) =>
        (
          await server.request("POST", `/projects/${project}/webhooks`, {
            body: { url: `${receiver.url}${path}`, events },
          })
        ).body;
      receiver.answer = (r) => (r.path === "/slow" ? { hang: true } : { status: 200 });
      await hook("/slow", ["flag.updated"]);
      await server.request("POST", `/projects/${project}/flags/busy`, { body: {} });
      // A backlog far larger than the slow webhook's share of the slots (at most PER_WEBHOOK, 16, of the
      // default WEBHOOK_CONCURRENCY of 64 in flight), each attempt hanging to the 2 s timeout.
      for (let i = 0; i < 150; i++) {
        const res = await server.request("PATCH", `/projects/${project}/flags/busy`, { body: { description: `${i}` } });
        assert.equal(res.status, 200);
      }
      await hook("/fast", ["segment.created"]);
      const started = performance.now();
      await server.request("POST", `/projects/${project}/segments`, { body: { name: "prompt" } });
      await waitFor("the other webhook's delivery", () => receiver.at("/fast"), {
        until: (r) => r.length === 1,
        timeoutMs: 5000,
      });
      const waited = performance.now() - started;
      assert.ok(waited < 5000, `${Math.round(waited)} ms`);
      const most = receiver.maxOpen.get("/slow") ?? 0;
      assert.ok(most >= 1 && most <= 16, `the slow webhook never had more than its share in flight (${most})`);
    });
  });
}
