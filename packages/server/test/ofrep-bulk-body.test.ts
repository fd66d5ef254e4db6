// The OFREP bulk answer's body is written by the server (bulk-body.ts), each flag's answer reused from the
// last request it was the same for (issue 34). It must be the JSON the schema describes, byte for byte in
// its canonical form, and never an answer of before a change.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";

for (const dialect of DIALECTS) {
  describe(`OFREP bulk answers written once per answer [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let checkKey: string;
    const bulk = (targetingKey: string) =>
      server.request("POST", "/ofrep/v1/evaluate/flags", { key: checkKey, body: { context: { targetingKey } } });
    const patch = async (name: string, body: Record<string, unknown>) => {
      const res = await server.request("PATCH", `/projects/${project}/flags/${name}`, { body });
      assert.equal(res.status, 200, res.text);
    };
    /** Creates a flag (its configuration's status, when given, set after: creation takes none). */
    const create = async (name: string, { status, ...body }: Record<string, unknown> = {}) => {
      const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body });
      assert.equal(res.status, 201, res.text);
      if (status !== undefined) await patch(name, { status });
    };

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      await create("a-on", { status: "enabled" });
      // Same configuration as a-on: answers alike, each under its own key.
      await create("b-on", { status: "enabled" });
      await create("c-off");
      await create("d-color", {
        type: "string",
        status: "enabled",
        variants: [
          { key: "red", value: "#f00" },
          { key: "green", value: "#0f0" },
        ],
      });
      await create("e-layout", {
        type: "object",
        status: "enabled",
        variants: [
          { key: "grid", value: { columns: 3, nested: ["é", null, true], quote: 'say "hi"' } },
          { key: "list", value: [1, 2] },
        ],
      });
      await create("f-alice");
      await patch("f-alice", { status: "conditional", addActors: ["alice"] });
    });
    after(() => server.close());

    test("the body is the schema's JSON in canonical order, the same for a repeated request", async () => {
      const first = await bulk("alice");
      assert.equal(first.status, 200, first.text);
      assert.match(first.headers.get("content-type") ?? "", /^application\/json; charset=utf-8$/);
      assert.equal(first.text, JSON.stringify(first.body), "compact JSON, nothing else");
      assert.deepEqual(
        first.body.flags.map((f: Record<string, unknown>) => Object.keys(f)),
        first.body.flags.map(() => ["key", "value", "reason", "variant", "metadata"]),
      );
      assert.deepEqual(
        first.body.flags.map((f: Record<string, unknown>) => [f.key, f.value, f.reason, f.variant]),
        [
          ["a-on", true, "STATIC", "on"],
          ["b-on", true, "STATIC", "on"],
          ["c-off", false, "DISABLED", "off"],
          ["d-color", "#f00", "STATIC", "red"],
          ["e-layout", { columns: 3, nested: ["é", null, true], quote: 'say "hi"' }, "STATIC", "grid"],
          ["f-alice", true, "TARGETING_MATCH", "on"],
        ],
      );
      assert.ok(Array.isArray(first.body.eventStreams), "the event stream is advertised after the flags");
      const again = await bulk("alice");
      assert.equal(again.text.replace(/token=[^"]+/, ""), first.text.replace(/token=[^"]+/, ""));
      const bob = await bulk("bob");
      assert.deepEqual(bob.body.flags.at(-1), {
        key: "f-alice",
        value: false,
        reason: "DEFAULT",
        variant: "off",
        metadata: {},
      });
    });

    test("after a change, the changed flags answer anew and the others as before", async () => {
      const before = (await bulk("alice")).body.flags;
      await patch("d-color", { onVariant: "green" });
      await patch("a-on", { status: "disabled" });
      const after = (await bulk("alice")).body.flags;
      assert.deepEqual(after[0], { key: "a-on", value: false, reason: "DISABLED", variant: "off", metadata: {} });
      assert.deepEqual(after[1], before[1], "b-on, configured as a-on was, is unchanged");
      assert.deepEqual(after[3], { key: "d-color", value: "#0f0", reason: "STATIC", variant: "green", metadata: {} });
      assert.deepEqual(after.slice(4), before.slice(4));
    });
  });
}
