import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  startServer,
  type TestServer,
  waitFor,
  WebhookReceiver,
} from "@flagstaff/test-harness";

const SECRETS = ["hunter2", "s3cr3t-token", "frag-secret", "alice"];
const assertNoSecret = (text: string, where: string) => {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} shows "${secret}": ${text}`);
};

for (const dialect of DIALECTS) {
  describe(`webhook URLs in the history [${dialect}]`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    let project: string;
    let hookId: string;
    const url = (port: string) => `http://alice:hunter2@127.0.0.1:${port}/hook?token=s3cr3t-token#frag-secret`;

    before(async () => {
      receiver = await WebhookReceiver.start();
      server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
      project = await createProject(server);
      // A receiver of every event, to see what a webhook's payload says of another webhook.
      const listener = await server.request("POST", `/projects/${project}/webhooks`, {
        body: { url: `${receiver.url}/all`, events: ["*"] },
      });
      assert.equal(listener.status, 201, listener.text);
      // Turned off: it is never sent to, only recorded.
      const created = await server.request("POST", `/projects/${project}/webhooks`, {
        body: { url: url("9"), enabled: false, description: "with credentials" },
      });
      assert.equal(created.status, 201, created.text);
      hookId = created.body.id;
      assert.equal(created.body.url, url("9"), "the admin API still shows the URL as given");
      const updated = await server.request("PATCH", `/projects/${project}/webhooks/${hookId}`, {
        body: { url: url("10") },
      });
      assert.equal(updated.status, 200, updated.text);
      await server.request("POST", `/projects/${project}/flags/f`, {});
      assert.equal((await server.request("DELETE", `/projects/${project}/webhooks/${hookId}`)).status, 204);
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    test("webhook events record URLs without credentials, query or fragment", async () => {
      const res = await server.request("GET", `/projects/${project}/events?type=webhook.&limit=100`);
      assert.equal(res.status, 200);
      const events = res.body.data.filter((e: { target: { id: string } }) => e.target.id === hookId);
      assert.deepEqual(
        events.map((e: { type: string }) => e.type),
        ["webhook.deleted", "webhook.updated", "webhook.created"],
      );
      assertNoSecret(res.text, "the history");
      const [deleted, updated, created] = events;
      assert.equal(created.target.name, "http://***@127.0.0.1:9/hook?***#***");
      assert.equal(created.after.url, "http://***@127.0.0.1:9/hook?***#***");
      assert.equal(updated.before.url, "http://***@127.0.0.1:9/hook?***#***");
      assert.equal(updated.after.url, "http://***@127.0.0.1:10/hook?***#***");
      assert.equal(deleted.before.url, "http://***@127.0.0.1:10/hook?***#***");
      // A plain URL is recorded as it is.
      const listener = res.body.data.find((e: { target: { name: string } }) => e.target.name.endsWith("/all"));
      assert.equal(listener.after.url, `${receiver.url}/all`);
    });

    test("another webhook's payloads carry the redacted URL too", async () => {
      await waitFor("the webhook.deleted delivery", () =>
        receiver.at("/all").some((r) => r.body.includes('"webhook.deleted"')),
      );
      for (const delivery of receiver.at("/all")) assertNoSecret(delivery.body, "a webhook payload");
    });

    test("URLs recorded before redaction existed are redacted when read", async () => {
      await server.database.db
        .insertInto("events")
        .values({
          id: "evt_00000000000000000000000000",
          project_id: project,
          type: "webhook.created",
          target_kind: "webhook",
          target_id: "wh_old",
          target_name: url("11"),
          actor: JSON.stringify({ system: "startup" }),
          before: null,
          after: JSON.stringify({ id: "wh_old", url: url("11"), events: ["*"], description: "", enabled: true }),
          request_id: null,
          created_at: "2020-01-01T00:00:00.000Z",
        })
        .execute();
      const res = await server.request("GET", `/projects/${project}/events?type=webhook.created&limit=100`);
      const old = res.body.data.find((e: { target: { id: string } }) => e.target.id === "wh_old");
      assert.equal(old.target.name, "http://***@127.0.0.1:11/hook?***#***");
      assert.equal(old.after.url, "http://***@127.0.0.1:11/hook?***#***");
      assertNoSecret(res.text, "an old event");
    });

    test("read and write keys see no webhook events; admin keys see them all", async () => {
      const admin = await server.request("GET", `/projects/${project}/events?limit=100`);
      const adminTypes = admin.body.data.map((e: { type: string }) => e.type);
      assert.ok(adminTypes.includes("webhook.created"));
      for (const role of ["read", "write"] as const) {
        const { key } = await createKey(server, project, role);
        const filtered = await server.request("GET", `/projects/${project}/events?type=webhook.`, { key });
        assert.equal(filtered.status, 200);
        assert.deepEqual(filtered.body.data, [], `a ${role} key listed webhook events`);
        assert.equal(filtered.body.pagination.after, null);
        const all = await server.request("GET", `/projects/${project}/events?limit=100`, { key });
        const types = all.body.data.map((e: { type: string }) => e.type);
        assert.ok(types.includes("flag.created"), `a ${role} key still sees flag events`);
        assert.ok(!types.some((t: string) => t.startsWith("webhook.")), `a ${role} key listed ${types}`);
        // Pages hold no gaps where webhook events were left out: one event per page, in order.
        const single = await server.request("GET", `/projects/${project}/events?limit=1`, { key });
        assert.equal(single.body.data[0].type, types[0]);
        const next = await server.request(
          "GET",
          `/projects/${project}/events?limit=1&after=${single.body.pagination.after}`,
          { key },
        );
        assert.equal(next.body.data[0]?.type, types[1]);
        const flag = await server.request("GET", `/projects/${project}/flags/f/events`, { key });
        assert.equal(flag.body.data.length, 1);
      }
    });
  });
}
