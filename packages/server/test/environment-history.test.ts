// History and webhooks with environments (issue 24): events about a configuration (flag.updated) and an
// environment's own events carry `environment`; the history filters by it; a key bound to an environment
// never sees another environment's events; webhook payloads carry it as the history does.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  expectProblem,
  type ReceivedWebhook,
  startServer,
  type TestServer,
  waitFor,
  WebhookReceiver,
} from "@flagstaff/test-harness";
import { addEnvironment, addSegment, bindKey, type Key, patchFlag } from "./helpers/environments.js";

/** Each event as [type, environment] (`-` when it has none), newest first as the history lists them. */
const summary = (events: any[]) => events.map((e) => `${e.type} ${"environment" in e ? e.environment : "-"}`);

for (const dialect of DIALECTS) {
  describe(`history with environments [${dialect}]`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    let project: string;
    let hook: { id: string; path: string };
    let productionReader: Key;
    let stagingReader: Key;
    let stagingWriter: Key;
    let unbound: Key;
    const base = () => `/projects/${project}`;
    const history = async (query = "", key?: string) => {
      const res = await server.request("GET", `${base()}/events?limit=100${query}`, { key });
      assert.equal(res.status, 200, res.text);
      return res.body.data as any[];
    };

    before(async () => {
      receiver = await WebhookReceiver.start();
      server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
      project = await createProject(server);
      const created = await server.request("POST", `${base()}/webhooks`, {
        body: { url: `${receiver.url}/hook`, events: ["flag.*", "environment.*"] },
      });
      assert.equal(created.status, 201, created.text);
      hook = { id: created.body.id, path: "/hook" };
      // The project's story: a staging environment, a flag changed in each, and keys bound to each.
      await addEnvironment(server, project, "staging", { copyFrom: "production" });
      productionReader = await bindKey(server, project, "read", "production");
      stagingReader = await bindKey(server, project, "read", "staging");
      stagingWriter = await bindKey(server, project, "write", "staging");
      unbound = await bindKey(server, project, "write", null);
      await server.request("POST", `${base()}/flags/f`, { body: {} });
      await patchFlag(server, project, "f", undefined, { status: "enabled" });
      await patchFlag(
        server,
        project,
        "f",
        "staging",
        { status: "conditional", addActors: ["alice"] },
        stagingWriter.key,
      );
      await server.request("PATCH", `${base()}/environments/staging`, { body: { name: "Pre-production" } });
      await addSegment(server, project, "beta");
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    test("flag.updated and environment events carry their environment; the rest carry none", async () => {
      const events = await history();
      assert.deepEqual(summary(events), [
        "segment.created -",
        "environment.updated staging",
        "flag.updated staging",
        "flag.updated production",
        "flag.created -",
        "key.created -",
        "key.created -",
        "key.created -",
        "key.created -",
        "environment.created staging",
        "webhook.created -",
        "project.created -",
      ]);
      const [, renamed, stagingUpdate, , , unboundCreated, , , , created] = events;
      assert.deepEqual(renamed.target, { kind: "environment", id: "staging", name: "Pre-production" });
      const state = {
        id: "staging",
        description: "",
        default: false,
        protected: false,
        requiredApprovals: 0,
        allowSelfApproval: false,
      };
      assert.deepEqual(renamed.before, { ...state, name: "Staging" });
      assert.deepEqual(renamed.after, { ...state, name: "Pre-production" });
      assert.deepEqual(created.after, {
        id: "staging",
        name: "Staging",
        description: "",
        default: false,
        protected: false,
        requiredApprovals: 0,
        allowSelfApproval: false,
        copyFrom: "production",
      });
      assert.equal(created.before, null);
      assert.equal(stagingUpdate.actor.keyId, stagingWriter.id);
      assert.deepEqual(stagingUpdate.after.addedActors, ["alice"]);
      assert.equal(unboundCreated.after.environment, null, "a key's binding is in its record");
    });

    test("moving the default records both environments' updates", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "next");
      assert.equal(
        (await server.request("PATCH", `/projects/${p}/environments/next`, { body: { default: true } })).status,
        200,
      );
      const [moved, previous] = (await server.request("GET", `/projects/${p}/events?limit=2`)).body.data;
      assert.deepEqual(
        [moved.type, moved.environment, moved.before.default, moved.after.default],
        ["environment.updated", "next", false, true],
      );
      assert.deepEqual(
        [previous.type, previous.environment, previous.before.default, previous.after.default],
        ["environment.updated", "production", true, false],
      );
      assert.equal(moved.requestId, previous.requestId, "one request");
    });

    test("?environment= lists one environment's events, also after it is deleted", async () => {
      assert.deepEqual(summary(await history("&environment=production")), ["flag.updated production"]);
      assert.deepEqual(summary(await history("&environment=staging")), [
        "environment.updated staging",
        "flag.updated staging",
        "environment.created staging",
      ]);
      assert.deepEqual(summary(await history("&environment=staging&type=flag.")), ["flag.updated staging"]);
      const flagEvents = await server.request("GET", `${base()}/flags/f/events?environment=staging`);
      assert.deepEqual(summary(flagEvents.body.data), ["flag.updated staging"]);
      // Without the filter, the flag's whole history: its creation (the definition's) and every environment's.
      const all = await server.request("GET", `${base()}/flags/f/events`);
      assert.deepEqual(summary(all.body.data), ["flag.updated staging", "flag.updated production", "flag.created -"]);

      const p = await createProject(server);
      await addEnvironment(server, p, "gone");
      await server.request("POST", `/projects/${p}/flags/g`, { body: {} });
      await patchFlag(server, p, "g", "gone", { status: "enabled" });
      await bindKey(server, p, "check", "gone");
      assert.equal((await server.request("DELETE", `/projects/${p}/environments/gone`)).status, 204);
      const gone = await server.request("GET", `/projects/${p}/events?environment=gone`);
      assert.equal(gone.status, 200, gone.text);
      assert.deepEqual(summary(gone.body.data), [
        "environment.deleted gone",
        "flag.updated gone",
        "environment.created gone",
      ]);
      const never = await server.request("GET", `/projects/${p}/events?environment=never-was`);
      assert.deepEqual(never.body.data, []);
      expectProblem(await server.request("GET", `/projects/${p}/events?environment=`), 400, "invalid_request");
    });

    test("a bound key never sees another environment's events, and may not ask for them (403)", async () => {
      const own = (environment: string) => (e: any) => !("environment" in e) || e.environment === environment;
      for (const [key, environment, other] of [
        [productionReader, "production", "staging"],
        [stagingReader, "staging", "production"],
        [stagingWriter, "staging", "production"],
      ] as const) {
        const events = await history("", key.key);
        assert.ok(events.length > 0);
        assert.ok(events.every(own(environment)), `${environment}: ${summary(events)}`);
        assert.ok(events.some((e) => e.environment === environment));
        assert.deepEqual(
          summary(await history(`&environment=${environment}`, key.key)),
          summary(await history(`&environment=${environment}`)),
        );
        expectProblem(
          await server.request("GET", `${base()}/events?environment=${other}`, { key: key.key }),
          403,
          "forbidden",
        );
        const flagEvents = await server.request("GET", `${base()}/flags/f/events`, { key: key.key });
        assert.ok(flagEvents.body.data.every(own(environment)), summary(flagEvents.body.data).join());
        expectProblem(
          await server.request("GET", `${base()}/flags/f/events?environment=${other}`, { key: key.key }),
          403,
          "forbidden",
        );
        // Nor through a type filter.
        const updates = await history("&type=flag.updated", key.key);
        assert.deepEqual(summary(updates), [`flag.updated ${environment}`]);
      }
      // A key bound to none sees every environment's, as admin keys do (webhooks apart).
      const everything = await history("", unbound.key);
      assert.ok(everything.some((e) => e.environment === "production"));
      assert.ok(everything.some((e) => e.environment === "staging"));
    });

    test("webhook payloads carry the environment, as the history does", async () => {
      const bodies = () => receiver.at(hook.path).map((r: ReceivedWebhook) => JSON.parse(r.body));
      const recorded = (await history("&type=flag.&type=environment.")).reverse();
      await waitFor("every flag and environment event delivered", () => bodies().length, {
        until: (n) => n >= recorded.length,
      });
      const delivered = bodies().sort((x: any, y: any) => (x.id < y.id ? -1 : 1));
      assert.deepEqual(
        delivered.map((e: any) => [e.id, e.type, e.environment ?? "-"]),
        recorded.map((e) => [e.id, e.type, e.environment ?? "-"]),
      );
      // The same object as the history answers, field for field.
      for (const event of recorded) {
        assert.deepEqual(
          delivered.find((e: any) => e.id === event.id),
          event,
        );
      }
      const copy = await server.request("POST", `${base()}/flags/f/copy`, {
        body: { from: "staging", to: "production" },
      });
      assert.equal(copy.status, 200, copy.text);
      const copied = await waitFor("the copy's delivery", () =>
        bodies().find((e: any) => e.type === "flag.updated" && e.after.copiedFrom === "staging"),
      );
      assert.equal(copied.environment, "production");
    });
  });
}
