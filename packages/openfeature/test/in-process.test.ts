import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCode, OpenFeature, ProviderEvents, StandardResolutionReasons } from "@openfeature/server-sdk";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import { FlagstaffInProcessProvider } from "../src/index.js";

let domains = 0;
const uniqueDomain = (label: string) => `flagstaff-in-process-${label}-${process.pid}-${++domains}`;

for (const dialect of DIALECTS) {
  describe(`in-process OpenFeature provider [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let reader: { key: string; id: string };
    const providers: FlagstaffInProcessProvider[] = [];
    const provider = (key = reader.key) => {
      const made = new FlagstaffInProcessProvider({ baseUrl: server.url, apiKey: key, projectId: project });
      providers.push(made);
      return made;
    };

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "in-process");
      reader = await createKey(server, project, "read");
      await server.request("POST", `/projects/${project}/flags/beta`, { body: {} });
      await server.request("PATCH", `/projects/${project}/flags/beta`, {
        body: { status: "conditional", addActors: ["alice"] },
      });
    });
    after(async () => {
      await Promise.all(providers.map((p) => p.onClose()));
      await OpenFeature.close();
      server.service.app.server.closeAllConnections();
      await server.close();
    });

    test("evaluates from memory with the server's answers, and reports every change as configuration changed", async () => {
      const domain = uniqueDomain("changes");
      await OpenFeature.setProviderAndWait(domain, provider());
      const client = OpenFeature.getClient(domain);
      const alice = await client.getBooleanDetails("beta", false, { targetingKey: "alice" });
      assert.equal(alice.value, true);
      assert.equal(alice.reason, StandardResolutionReasons.TARGETING_MATCH);
      assert.equal(alice.variant, "on");
      const bob = await client.getBooleanDetails("beta", true, { targetingKey: "bob" });
      assert.deepEqual([bob.value, bob.reason], [false, StandardResolutionReasons.DEFAULT]);
      const viaList = await client.getBooleanValue("beta", false, { actorIds: ["x", "alice"] });
      assert.equal(viaList, true);

      const changed: string[][] = [];
      client.addHandler(ProviderEvents.ConfigurationChanged, (details) => changed.push(details?.flagsChanged ?? []));
      await server.request("PATCH", `/projects/${project}/flags/beta`, { body: { status: "enabled" } });
      await waitFor("the configuration-changed event", () => changed.length, { until: (n) => n >= 1 });
      assert.deepEqual(changed[0], ["beta"]);
      assert.equal(await client.getBooleanValue("beta", false, { targetingKey: "bob" }), true);

      const missing = await client.getBooleanDetails("nope", true);
      assert.deepEqual([missing.value, missing.errorCode], [true, ErrorCode.FLAG_NOT_FOUND]);
      const wrongType = await client.getStringDetails("beta", "x");
      assert.equal(wrongType.errorCode, ErrorCode.TYPE_MISMATCH);
      const badContext = await client.getBooleanDetails("beta", false, { targetingKey: "" });
      assert.equal(badContext.errorCode, ErrorCode.INVALID_CONTEXT);
      await server.request("PATCH", `/projects/${project}/flags/beta`, { body: { status: "conditional" } });
    });

    test("a refused key fails initialization as fatal; a revoked one turns the provider to error", async () => {
      const checkKey = await createKey(server, project, "check");
      const refused = uniqueDomain("refused");
      await assert.rejects(OpenFeature.setProviderAndWait(refused, provider(checkKey.key)), /refused/);

      const doomed = await createKey(server, project, "read");
      const domain = uniqueDomain("revoked");
      await OpenFeature.setProviderAndWait(domain, provider(doomed.key));
      const errors: unknown[] = [];
      OpenFeature.getClient(domain).addHandler(ProviderEvents.Error, (details) => errors.push(details));
      await server.request("DELETE", `/projects/${project}/keys/${doomed.id}`);
      await waitFor("the provider's error event", () => errors.length, { until: (n) => n >= 1, timeoutMs: 20_000 });
    });
  });
}
