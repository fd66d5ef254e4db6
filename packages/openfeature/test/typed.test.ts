import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { FlagstaffClient } from "@flagstaff/sdk";
import { type Client, ErrorCode, OpenFeature, StandardResolutionReasons } from "@openfeature/server-sdk";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { FlagstaffInProcessProvider, FlagstaffProvider } from "../src/index.js";

// Typed flags (string, number, object), attribute rules, a rule-based segment and a prerequisite,
// resolved through the stock OpenFeature Node SDK by both providers against one real server: the
// remote one over OFREP, the in-process one from the project's stream. Both must answer alike.

let domains = 0;
const uniqueDomain = (label: string) => `flagstaff-typed-${label}-${process.pid}-${++domains}`;

for (const dialect of DIALECTS) {
  describe(`typed flags through both OpenFeature providers [${dialect}]`, () => {
    let server: TestServer;
    let projectId: string;
    const clients: { name: string; client: Client }[] = [];
    const inProcess: FlagstaffInProcessProvider[] = [];

    before(async () => {
      server = await startServer({ dialect, random: () => 0.999_999 });
      const admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      projectId = await createProject(server, "typed");
      const pros = await admin.segments.create(projectId, {
        name: "Pros",
        conditions: [{ attribute: "plan", operator: "in", values: ["pro", "enterprise"] }],
      });
      await admin.flags.create(projectId, "color", {
        type: "string",
        variants: [
          { key: "red", value: "#f00" },
          { key: "green", value: "#0f0" },
          { key: "blue", value: "#00f" },
        ],
        onVariant: "green",
        offVariant: "red",
      });
      await admin.flags.update(projectId, "color", {
        status: "conditional",
        rules: [
          {
            id: "dach",
            conditions: [{ attribute: "country", operator: "in", values: ["de", "at"], caseInsensitive: true }],
            serve: { variant: "blue" },
          },
          { id: "pros", conditions: [{ operator: "in_segment", values: [pros.id] }], serve: { variant: "green" } },
        ],
      });
      await admin.flags.create(projectId, "limit", {
        type: "number",
        variants: [
          { key: "low", value: 10 },
          { key: "high", value: 1000 },
        ],
        onVariant: "high",
        offVariant: "low",
      });
      await admin.flags.update(projectId, "limit", {
        status: "conditional",
        rules: [
          {
            id: "v2",
            conditions: [{ attribute: "appVersion", operator: "semver_gte", values: ["2.0"] }],
            serve: { variant: "high" },
          },
        ],
      });
      await admin.flags.create(projectId, "layout", {
        type: "object",
        variants: [
          { key: "wide", value: { columns: 3, panels: ["a", "b"] } },
          { key: "narrow", value: { columns: 1, panels: [] } },
        ],
      });
      await admin.flags.update(projectId, "layout", {
        status: "enabled",
        prerequisites: [{ flag: "color", variants: ["blue"] }],
      });
      await admin.flags.create(projectId, "gate");
      await admin.flags.update(projectId, "gate", {
        status: "conditional",
        rules: [
          { id: "adults", conditions: [{ attribute: "age", operator: "gte", values: [18] }], serve: { variant: "on" } },
        ],
      });

      const check = (await createKey(server, projectId, "check")).key;
      const read = (await createKey(server, projectId, "read")).key;
      const remoteDomain = uniqueDomain(`${dialect}-remote`);
      await OpenFeature.setProviderAndWait(
        remoteDomain,
        new FlagstaffProvider({ baseUrl: server.url, apiKey: check, projectId }),
      );
      const local = new FlagstaffInProcessProvider({
        baseUrl: server.url,
        apiKey: read,
        projectId,
        random: () => 0.999_999,
      });
      inProcess.push(local);
      const localDomain = uniqueDomain(`${dialect}-local`);
      await OpenFeature.setProviderAndWait(localDomain, local);
      clients.push(
        { name: "remote", client: OpenFeature.getClient(remoteDomain) },
        { name: "in-process", client: OpenFeature.getClient(localDomain) },
      );
    });

    after(async () => {
      await Promise.all(inProcess.map((p) => p.onClose()));
      await OpenFeature.clearProviders();
      server.service.app.server.closeAllConnections();
      await server.close();
    });

    test("string flags: a rule on an attribute, a rule-based segment, and the default", async () => {
      for (const { name, client } of clients) {
        const de = await client.getStringDetails("color", "none", { targetingKey: "u1", country: "DE" });
        assert.deepEqual(
          [de.value, de.variant, de.reason, de.errorCode],
          ["#00f", "blue", StandardResolutionReasons.TARGETING_MATCH, undefined],
          name,
        );
        const pro = await client.getStringDetails("color", "none", { targetingKey: "u1", plan: "pro" });
        assert.deepEqual([pro.value, pro.variant, pro.reason], ["#0f0", "green", "TARGETING_MATCH"], name);
        const other = await client.getStringDetails("color", "none", { targetingKey: "u1", country: "FR" });
        assert.deepEqual([other.value, other.variant, other.reason], ["#f00", "red", "DEFAULT"], name);
        const anonymous = await client.getStringValue("color", "none", { country: "at" });
        assert.equal(anonymous, "#00f", name);
      }
    });

    test("number flags: a semver rule (lenient 2.0), numbers and their text alike", async () => {
      for (const { name, client } of clients) {
        const v2 = await client.getNumberDetails("limit", -1, { targetingKey: "u", appVersion: "v2.1.0" });
        assert.deepEqual([v2.value, v2.variant, v2.reason], [1000, "high", "TARGETING_MATCH"], name);
        const v1 = await client.getNumberDetails("limit", -1, { targetingKey: "u", appVersion: "1.9.9" });
        assert.deepEqual([v1.value, v1.variant, v1.reason], [10, "low", "DEFAULT"], name);
        assert.equal(await client.getBooleanValue("gate", false, { age: 30 }), true, name);
        assert.equal(await client.getBooleanValue("gate", false, { age: "30" }), true, name);
        assert.equal(await client.getBooleanValue("gate", true, { age: 12 }), false, name);
        // A condition on an attribute the context lacks is false.
        const missing = await client.getBooleanDetails("gate", true, {});
        assert.deepEqual([missing.value, missing.variant, missing.reason], [false, "off", "DEFAULT"], name);
      }
    });

    test("object flags: served when the prerequisite holds, offVariant with PREREQUISITE_FAILED when not", async () => {
      for (const { name, client } of clients) {
        const held = await client.getObjectDetails("layout", {}, { targetingKey: "u", country: "DE" });
        assert.deepEqual(held.value, { columns: 3, panels: ["a", "b"] }, name);
        assert.deepEqual([held.variant, held.reason, held.errorCode], ["wide", "STATIC", undefined], name);
        const failed = await client.getObjectDetails("layout", {}, { targetingKey: "u", country: "FR" });
        assert.deepEqual(failed.value, { columns: 1, panels: [] }, name);
        assert.deepEqual([failed.variant, failed.reason], ["narrow", "PREREQUISITE_FAILED"], name);
      }
    });

    test("a flag resolved as another type: the caller's default with TYPE_MISMATCH; a missing flag: FLAG_NOT_FOUND", async () => {
      for (const { name, client } of clients) {
        const asNumber = await client.getNumberDetails("color", 7, { country: "DE" });
        assert.deepEqual(
          [asNumber.value, asNumber.errorCode, asNumber.reason],
          [7, ErrorCode.TYPE_MISMATCH, "ERROR"],
          name,
        );
        const asBoolean = await client.getBooleanDetails("limit", true);
        assert.deepEqual([asBoolean.value, asBoolean.errorCode], [true, ErrorCode.TYPE_MISMATCH], name);
        const asString = await client.getStringDetails("layout", "d");
        assert.deepEqual([asString.value, asString.errorCode], ["d", ErrorCode.TYPE_MISMATCH], name);
        const asObject = await client.getObjectDetails("gate", { d: 1 });
        assert.deepEqual([asObject.value, asObject.errorCode], [{ d: 1 }, ErrorCode.TYPE_MISMATCH], name);
        const missing = await client.getStringDetails("nope", "d");
        assert.deepEqual([missing.value, missing.errorCode], ["d", ErrorCode.FLAG_NOT_FOUND], name);
        const missingObject = await client.getObjectDetails("nope", []);
        assert.deepEqual([missingObject.value, missingObject.errorCode], [[], ErrorCode.FLAG_NOT_FOUND], name);
      }
    });

    test("a change of rules reaches the in-process provider, which then answers as the server", async () => {
      const admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      await admin.flags.update(projectId, "color", {
        rules: [
          {
            id: "fr",
            conditions: [{ attribute: "country", operator: "in", values: ["FR"] }],
            serve: { variant: "blue" },
          },
        ],
      });
      const local = clients.find((c) => c.name === "in-process")!.client;
      await waitFor(
        "the new rule in the in-process provider",
        () => local.getStringValue("color", "none", { targetingKey: "u", country: "FR" }),
        { until: (value) => value === "#00f" },
      );
      for (const { name, client } of clients) {
        assert.equal(await client.getStringValue("color", "none", { targetingKey: "u", country: "FR" }), "#00f", name);
        assert.equal(await client.getStringValue("color", "none", { targetingKey: "u", country: "DE" }), "#f00", name);
        // The object flag's prerequisite now holds for FR, and fails for DE.
        const layout = await client.getObjectDetails("layout", {}, { targetingKey: "u", country: "DE" });
        assert.equal(layout.reason, "PREREQUISITE_FAILED", name);
      }
    });
  });
}
