// The OFREP bulk answer's body is written by the server (bulk-body.ts): the answers every context gets
// alike encoded once per version, each other flag's answer JSON reused from the last request it was the
// same for (issue 34). It must be the JSON the schema describes, byte for byte in
// its canonical form, and never an answer of before a change.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  ManualClock,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";

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

  describe(`OFREP bulk answers: reused answers between those a context decides [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let checkKey: string;
    const bulk = (context: Record<string, unknown>) =>
      server.request("POST", "/ofrep/v1/evaluate/flags", { key: checkKey, body: { context } });
    const single = (name: string, context: Record<string, unknown>) =>
      server.request("POST", `/ofrep/v1/evaluate/flags/${name}`, { key: checkKey, body: { context } });
    const write = async (method: "POST" | "PATCH" | "DELETE", name: string, body?: Record<string, unknown>) => {
      const res = await server.request(method, `/projects/${project}/flags/${name}`, body ? { body } : {});
      assert.ok(res.status < 300, res.text);
    };

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
    });
    after(() => server.close());

    test("a project without flags answers an empty list", async () => {
      const res = await bulk({ targetingKey: "alice" });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.flags, []);
    });

    test("every flag answers in the bulk what it answers alone, wherever it stands among the others", async () => {
      // Flags a context decides first, last and between runs of flags that answer everyone alike.
      await write("POST", "a-actor");
      await write("PATCH", "a-actor", { status: "conditional", addActors: ["alice"] });
      await write("POST", "b-on");
      await write("PATCH", "b-on", { status: "enabled" });
      await write("POST", "c-off");
      await write("POST", "d-rule");
      await write("PATCH", "d-rule", {
        status: "conditional",
        rules: [
          {
            id: "gb",
            conditions: [{ attribute: "country", operator: "in", values: ["GB"] }],
            serve: { variant: "on" },
          },
        ],
      });
      await write("POST", "e-nothing");
      await write("PATCH", "e-nothing", { status: "conditional" });
      await write("POST", "f-gated");
      await write("PATCH", "f-gated", { status: "enabled", prerequisites: [{ flag: "d-rule", variants: ["on"] }] });
      await write("POST", "g-rollout");
      await write("PATCH", "g-rollout", { status: "conditional", percentageActors: 50 });
      const contexts = [
        { targetingKey: "alice" },
        { targetingKey: "bob", country: "GB" },
        { targetingKey: "carol", country: "FR" },
        {},
      ];
      for (const context of contexts) {
        const res = await bulk(context);
        assert.equal(res.status, 200, res.text);
        const names = res.body.flags.map((f: { key: string }) => f.key);
        assert.deepEqual(names, ["a-actor", "b-on", "c-off", "d-rule", "e-nothing", "f-gated", "g-rollout"]);
        for (const flag of res.body.flags) {
          const alone = await single(flag.key, context);
          assert.equal(alone.status, 200, alone.text);
          assert.deepEqual(flag, alone.body, `${flag.key} for ${JSON.stringify(context)}`);
        }
      }
      const bob = (await bulk({ targetingKey: "bob", country: "GB" })).body.flags;
      assert.deepEqual(
        bob.map((f: { reason: string }) => f.reason),
        ["DEFAULT", "STATIC", "DISABLED", "TARGETING_MATCH", "DEFAULT", "STATIC", bob[6].reason],
      );
    });

    test("many bulk evaluations at once, answered in turn, each get their own context's answer and ETag", async () => {
      const contexts = Array.from({ length: 30 }, (_, i) => ({ targetingKey: i % 3 === 0 ? "alice" : `user-${i}` }));
      const answers = await Promise.all(contexts.map((context) => bulk(context)));
      for (const [i, res] of answers.entries()) {
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers.get("etag") ?? "", /^"[\w-]{32}"$/);
        const actor = res.body.flags.find((f: { key: string }) => f.key === "a-actor");
        assert.equal(actor.reason, i % 3 === 0 ? "TARGETING_MATCH" : "DEFAULT", JSON.stringify(contexts[i]));
        const again = await server.request("POST", "/ofrep/v1/evaluate/flags", {
          key: checkKey,
          body: { context: contexts[i] },
          headers: { "if-none-match": res.headers.get("etag") ?? "" },
        });
        assert.equal(again.status, 304, "the tag it was given still holds");
      }
    });

    test("a flag created or deleted is in or out of the very next answer", async () => {
      await write("POST", "bb-new");
      await write("PATCH", "bb-new", { status: "enabled" });
      let names = (await bulk({ targetingKey: "alice" })).body.flags.map((f: { key: string }) => f.key);
      assert.ok(names.includes("bb-new"), names.join());
      assert.deepEqual(names.slice(0, 3), ["a-actor", "b-on", "bb-new"]);
      await write("DELETE", "bb-new");
      names = (await bulk({ targetingKey: "alice" })).body.flags.map((f: { key: string }) => f.key);
      assert.ok(!names.includes("bb-new"), names.join());
    });

    test("every flag of a bulk answer, reused or evaluated, is noted as checked and counted", async () => {
      const counted = async () => {
        const text = (await server.request("GET", "/metrics")).text;
        let total = 0;
        for (const match of text.matchAll(/^flagstaff_checks_total\{[^}]*\} (\d+)/gm)) total += Number(match[1]);
        return total;
      };
      const before = await counted();
      const res = await bulk({ targetingKey: "alice" });
      assert.equal(res.status, 200, res.text);
      assert.equal((await counted()) - before, res.body.flags.length);
      for (const name of ["b-on", "c-off", "a-actor"]) {
        const flag = (await server.request("GET", `/projects/${project}/flags/${name}`)).body;
        assert.notEqual(flag.latestCheckedAt, null, name);
      }
    });
  });

  describe(`OFREP bulk answers and latestCheckedAt [${dialect}]`, () => {
    const clock = new ManualClock();
    let server: TestServer;
    after(() => server?.close());

    test("a bulk evaluation notes every flag at once, reused answers at most once a second; all are stored", async () => {
      server = await startServer({ dialect, clock });
      const project = await createProject(server);
      const checkKey = (await createKey(server, project, "check")).key;
      const write = async (method: "POST" | "PATCH", name: string, body: Record<string, unknown> = {}) => {
        const res = await server.request(method, `/projects/${project}/flags/${name}`, { body });
        assert.ok(res.status < 300, res.text);
      };
      const names = ["f-1", "f-2", "f-3", "f-4", "f-5"];
      for (const name of names) await write("POST", name);
      await write("POST", "g-actor");
      await write("PATCH", "g-actor", { status: "conditional", addActors: ["alice"] });
      const bulk = async () => {
        const res = await server.request("POST", "/ofrep/v1/evaluate/flags", {
          key: checkKey,
          body: { context: { targetingKey: "alice" } },
        });
        assert.equal(res.status, 200, res.text);
      };
      const iso = (ms: number) => new Date(ms).toISOString();
      clock.advance(10_000);
      const first = clock.now();
      await bulk();
      // Half a second later: the reused answers are not noted again; the flag the context decides is.
      clock.advance(500);
      await bulk();
      const second = clock.now();
      clock.advance(5000);
      const check = await server.request("GET", `/projects/${project}/flags/f-3/check`, { key: checkKey });
      assert.equal(check.status, 200, check.text);
      const checked = clock.now();
      await write("POST", "z-never");

      // Once stored, the list sorts by the stored times (ties by name, never-checked last).
      const list = async () => {
        const res = await server.request("GET", `/projects/${project}/flags?sort=-latestCheckedAt`);
        assert.equal(res.status, 200, res.text);
        return res.body.data as { name: string; latestCheckedAt: string | null }[];
      };
      const stored = await waitFor("the noted times to be stored", list, {
        until: (flags) => flags[0]?.name === "f-3" && flags[1]?.name === "g-actor",
      });
      assert.deepEqual(
        stored.map((f) => [f.name, f.latestCheckedAt]),
        [
          ["f-3", iso(checked)],
          ["g-actor", iso(second)],
          ...names.filter((n) => n !== "f-3").map((n) => [n, iso(first)]),
          ["z-never", null],
        ],
      );
    });
  });
}
