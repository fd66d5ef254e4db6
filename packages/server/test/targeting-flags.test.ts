// Typed flags (issue 25) through the API: variants at creation and their refusals, the type fixed, rules,
// prerequisites and variants refused on write with the rule and condition named, a refused write that
// changes nothing, rules per environment and copied between environments.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { addEnvironment, addSegment, inEnvironment } from "./helpers/environments.js";
import { check, createFlag, expectRefusal, patch, patchOk, setRules, stringVariants } from "./helpers/targeting.js";

const inCountry = (...countries: string[]) => ({ attribute: "country", operator: "in", values: countries });

for (const dialect of DIALECTS) {
  describe(`targeting: typed flags and validation [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const clock = new ManualClock();
    const flagPath = (name: string, environment?: string) =>
      inEnvironment(`/projects/${project}/flags/${name}`, environment);
    const get = async (name: string, environment?: string) => {
      const res = await server.request("GET", flagPath(name, environment));
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    /** The newest history event's id (or null). */
    const newestEvent = async () => {
      const res = await server.request("GET", `/projects/${project}/events?limit=1`);
      assert.equal(res.status, 200, res.text);
      return (res.body.data[0]?.id as string | undefined) ?? null;
    };
    /**
     * Runs writes that must all be refused and insists that they changed nothing: the flags named read
     * the same in every environment before and after, and the history has no new event.
     */
    const changesNothing = async (flags: string[], run: () => Promise<void>) => {
      const read = () => Promise.all(flags.flatMap((f) => ["production", "staging"].map((e) => get(f, e))));
      const before = await read();
      const event = await newestEvent();
      clock.advance(1000);
      await run();
      assert.deepEqual(await read(), before, "a refused write changes nothing");
      assert.equal(await newestEvent(), event, "and records no event");
    };

    before(async () => {
      // The call rollout never draws a call in: every answer is decided by the rules.
      server = await startServer({ dialect, clock, random: () => 0.999 });
      project = await createProject(server);
      await addEnvironment(server, project, "staging");
    });
    after(() => server.close());

    test("string, number and object flags are made with their variants; onVariant and offVariant default to the first two", async () => {
      const color = await createFlag(server, project, "color", {
        type: "string",
        description: "Button colour",
        variants: [
          { key: "red", value: "#f00", description: "Red" },
          { key: "green", value: "#0f0" },
          { key: "blue", value: "#00f" },
        ],
      });
      assert.equal(color.type, "string");
      assert.deepEqual(color.variants, [
        { key: "red", value: "#f00", description: "Red" },
        { key: "green", value: "#0f0" },
        { key: "blue", value: "#00f" },
      ]);
      assert.deepEqual([color.onVariant, color.offVariant, color.rules, color.prerequisites], ["red", "green", [], []]);
      // The same served variants in every environment.
      const staging = await get("color", "staging");
      assert.deepEqual([staging.onVariant, staging.offVariant, staging.variants], ["red", "green", color.variants]);

      const limit = await createFlag(server, project, "limit", {
        type: "number",
        variants: [
          { key: "low", value: 10 },
          { key: "high", value: 1.5e3 },
          { key: "none", value: 0 },
        ],
        onVariant: "high",
        offVariant: "none",
      });
      assert.deepEqual([limit.type, limit.onVariant, limit.offVariant], ["number", "high", "none"]);
      assert.equal((await get("limit", "staging")).offVariant, "none");

      const layout = { columns: 3, nested: { list: [1, "two", null, true] }, "__proto__-ish": "x" };
      const config = await createFlag(server, project, "config", {
        type: "object",
        variants: [
          { key: "grid", value: layout },
          { key: "list", value: [1, 2, 3] },
        ],
      });
      assert.deepEqual(config.variants[0].value, layout);
      assert.deepEqual(config.variants[1].value, [1, 2, 3]);

      const plain = await createFlag(server, project, "plain");
      assert.deepEqual(
        [plain.type, plain.variants, plain.onVariant, plain.offVariant, plain.rules, plain.prerequisites],
        [
          "boolean",
          [
            { key: "on", value: true },
            { key: "off", value: false },
          ],
          "on",
          "off",
          [],
          [],
        ],
      );
      // The list shows the same fields.
      const list = await server.request("GET", `/projects/${project}/flags?limit=100`);
      assert.equal(list.status, 200, list.text);
      const listed = list.body.data.find((f: any) => f.name === "limit");
      assert.deepEqual([listed.type, listed.variants, listed.onVariant], ["number", limit.variants, "high"]);

      // A new flag is disabled: it serves offVariant. The check answers variant and value for typed flags.
      assert.deepEqual(await check(server, project, "color"), { enabled: false, variant: "green", value: "#0f0" });
      assert.deepEqual(await check(server, project, "limit"), { enabled: false, variant: "none", value: 0 });
      assert.deepEqual(await check(server, project, "plain"), { enabled: false });
      await patchOk(server, project, "config", { status: "enabled" });
      assert.deepEqual(await check(server, project, "config"), { enabled: true, variant: "grid", value: layout });
      assert.deepEqual(await check(server, project, "config", { environment: "staging" }), {
        enabled: false,
        variant: "list",
        value: [1, 2, 3],
      });
    });

    test("a new environment's configuration starts at the flag's default variants", async () => {
      await addEnvironment(server, project, "later");
      const limit = await get("limit", "later");
      assert.deepEqual([limit.onVariant, limit.offVariant, limit.rules], ["low", "high", []]);
      assert.deepEqual(await check(server, project, "limit", { environment: "later" }), {
        enabled: false,
        variant: "high",
        value: 1500,
      });
      // Reordering the variants leaves what that environment serves: its defaults are pinned to their keys.
      const reordered = [...limit.variants].reverse();
      await patchOk(server, project, "limit", { variants: reordered });
      const after = await get("limit", "later");
      assert.deepEqual([after.onVariant, after.offVariant], ["low", "high"]);
      assert.deepEqual((await check(server, project, "limit", { environment: "later" })).variant, "high");
      await patchOk(server, project, "limit", { variants: limit.variants });
      const res = await server.request("DELETE", `/projects/${project}/environments/later`);
      assert.equal(res.status, 204, res.text);
    });

    test("refused variants: 400 naming the path, and no flag made", async () => {
      const refused = async (name: string, body: unknown, expected: Record<string, string | RegExp>) => {
        const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body });
        expectRefusal(res, 400, "invalid_request", expected);
        expectProblem(await server.request("GET", flagPath(name)), 404, "flag_not_found");
      };
      await refused("bool-variants", { variants: stringVariants("a", "b") }, { "/variants": "boolean" });
      await refused(
        "bool-variants2",
        {
          type: "boolean",
          variants: [
            { key: "on", value: true },
            { key: "off", value: false },
          ],
        },
        { "/variants": "" },
      );
      await refused("one", { type: "string", variants: stringVariants("a") }, { "/variants": "" });
      const many = Array.from({ length: 51 }, (_, i) => `v${i}`);
      await refused("many", { type: "string", variants: stringVariants(...many) }, { "/variants": "" });
      await refused("none", { type: "string" }, { "/variants": "2–50" });
      await refused(
        "dup",
        { type: "string", variants: [...stringVariants("a", "b"), { key: "a", value: "again" }] },
        { "/variants/2/key": 'the key "a" is used twice' },
      );
      await refused(
        "wrong-string",
        {
          type: "string",
          variants: [
            { key: "a", value: "x" },
            { key: "b", value: 5 },
          ],
        },
        { "/variants/1/value": "must be a string" },
      );
      await refused(
        "wrong-number",
        {
          type: "number",
          variants: [
            { key: "a", value: "5" },
            { key: "b", value: 5 },
          ],
        },
        { "/variants/0/value": "finite number" },
      );
      await refused(
        "wrong-object",
        {
          type: "object",
          variants: [
            { key: "a", value: {} },
            { key: "b", value: "text" },
          ],
        },
        { "/variants/1/value": "JSON object or array" },
      );
      await refused(
        "wrong-bool-value",
        {
          type: "number",
          variants: [
            { key: "a", value: true },
            { key: "b", value: 1 },
          ],
        },
        { "/variants/0/value": "finite number" },
      );
      await refused(
        "huge",
        {
          type: "object",
          variants: [
            { key: "big", value: { text: "x".repeat(33 * 1024) } },
            { key: "b", value: {} },
          ],
        },
        { "/variants/0/value": "32 KiB" },
      );
      await refused(
        "bad-key",
        {
          type: "string",
          variants: [
            { key: "-no", value: "x" },
            { key: "b", value: "y" },
          ],
        },
        { "/variants/0/key": "" },
      );
      await refused(
        "bad-on",
        { type: "string", variants: stringVariants("a", "b"), onVariant: "zzz" },
        { "/onVariant": '"zzz" is not one of the flag\'s variants' },
      );
      await refused(
        "bad-off",
        { type: "string", variants: stringVariants("a", "b"), offVariant: "c" },
        { "/offVariant": "not one of" },
      );
      await refused("bad-type", { type: "date", variants: stringVariants("a", "b") }, { "/type": "" });
      // Just under the limit is accepted.
      const near = await createFlag(server, project, "near-limit", {
        type: "object",
        variants: [
          { key: "big", value: { text: "x".repeat(32 * 1024 - 20) } },
          { key: "b", value: {} },
        ],
      });
      assert.equal(near.variants[0].value.text.length, 32 * 1024 - 20);
      const fifty = Array.from({ length: 50 }, (_, i) => `v${i}`);
      const wide = await createFlag(server, project, "fifty", { type: "string", variants: stringVariants(...fifty) });
      assert.equal(wide.variants.length, 50);
    });

    test("the type is fixed: PATCH refuses it; a boolean flag's variants cannot be changed", async () => {
      await changesNothing(["color", "plain"], async () => {
        expectRefusal(await patch(server, project, "color", { type: "number" }), 400, "invalid_request", {
          "/type": "is not a known field",
        });
        expectRefusal(
          await patch(server, project, "plain", { variants: stringVariants("a", "b") }),
          400,
          "invalid_request",
          { "/variants": "boolean" },
        );
        expectRefusal(
          await patch(server, project, "plain", {
            variants: [
              { key: "on", value: true },
              { key: "off", value: false },
              { key: "maybe", value: true },
            ],
          }),
          400,
          "invalid_request",
          { "/variants": "" },
        );
      });
    });

    test("refused rules: 400 whose errors name the rule and the condition; nothing changes", async () => {
      await createFlag(server, project, "target", { type: "string", variants: stringVariants("a", "b", "c") });
      const segment = await addSegment(server, project, "validation-seg", ["m1"]);
      const good = { id: "ok", conditions: [inCountry("DE")], serve: { variant: "a" } };
      // A configuration the refusals below must leave as it is.
      await setRules(server, project, "target", [good]);
      const refused = (rules: unknown[], expected: Record<string, string | RegExp>) =>
        patch(server, project, "target", { rules }).then((res) => expectRefusal(res, 400, "invalid_request", expected));

      await changesNothing(["target"], async () => {
        await refused([good, { id: "r1", conditions: [], serve: { variant: "zzz" } }], {
          "/rules/1/serve/variant": /^rules\[1\] "r1", serve\.variant: "zzz" is not one of the flag's variants/,
        });
        await refused(
          [
            {
              id: "eu",
              conditions: [inCountry("DE")],
              serve: {
                split: {
                  weights: [
                    { variant: "a", weight: 50 },
                    { variant: "b", weight: 40 },
                  ],
                },
              },
            },
          ],
          { "/rules/0/serve/split/weights": 'rules[0] "eu", serve.split.weights: the weights sum to 90, not 100' },
        );
        await refused(
          [
            {
              id: "w",
              conditions: [],
              serve: {
                split: {
                  weights: [
                    { variant: "a", weight: 50.0001 },
                    { variant: "b", weight: 49.9999 },
                  ],
                },
              },
            },
          ],
          { "/rules/0/serve/split/weights/0/weight": "three decimals" },
        );
        await refused(
          [
            {
              id: "w2",
              conditions: [],
              serve: { split: { weights: [{ variant: "q", weight: 100 }] } },
            },
          ],
          { "/rules/0/serve/split/weights/0/variant": '"q" is not one of' },
        );
        await refused(
          [
            good,
            {
              id: "re",
              conditions: [inCountry("FR"), { attribute: "email", operator: "matches", values: ["ok$", "(unclosed"] }],
              serve: { variant: "b" },
            },
          ],
          { "/rules/1/conditions/1/values/1": /^rules\[1\] "re", conditions\[1\], values\[1\]: .*RE2/ },
        );
        await refused(
          [
            {
              id: "look",
              conditions: [{ attribute: "e", operator: "matches", values: ["a(?=b)"] }],
              serve: good.serve,
            },
          ],
          { "/rules/0/conditions/0/values/0": "RE2" },
        );
        await refused(
          [{ id: "sv", conditions: [{ attribute: "v", operator: "semver_gt", values: ["1.x"] }], serve: good.serve }],
          {
            "/rules/0/conditions/0/values/0":
              'rules[0] "sv", conditions[0], values[0]: semver_gt takes semantic versions',
          },
        );
        await refused(
          [{ id: "gt", conditions: [{ attribute: "age", operator: "gt", values: [18, "21"] }], serve: good.serve }],
          { "/rules/0/conditions/0/values/1": 'rules[0] "gt", conditions[0], values[1]: gt takes finite numbers' },
        );
        await refused(
          [{ id: "txt", conditions: [{ attribute: "plan", operator: "in", values: [5] }], serve: good.serve }],
          { "/rules/0/conditions/0/values/0": "in takes strings" },
        );
        await refused(
          [
            {
              id: "when",
              conditions: [{ attribute: "$now", operator: "after", values: ["tomorrow"] }],
              serve: good.serve,
            },
          ],
          { "/rules/0/conditions/0/values/0": "ISO 8601" },
        );
        await refused(
          [{ id: "now", conditions: [{ attribute: "$now", operator: "in", values: ["x"] }], serve: good.serve }],
          { "/rules/0/conditions/0/attribute": "$now" },
        );
        await refused(
          [
            {
              id: "ci",
              conditions: [{ attribute: "n", operator: "gt", values: [1], caseInsensitive: true }],
              serve: good.serve,
            },
          ],
          { "/rules/0/conditions/0/caseInsensitive": "string operators only" },
        );
        await refused(
          [{ id: "pv", conditions: [{ attribute: "n", operator: "present", values: ["x"] }], serve: good.serve }],
          { "/rules/0/conditions/0/values": "present takes no values" },
        );
        await refused(
          [{ id: "empty", conditions: [{ attribute: "n", operator: "in", values: [] }], serve: good.serve }],
          { "/rules/0/conditions/0/values": "at least one value" },
        );
        await refused(
          [{ id: "sw", conditions: [{ attribute: "n", operator: "starts_with", values: [""] }], serve: good.serve }],
          { "/rules/0/conditions/0/values/0": "non-empty" },
        );
        await refused([{ id: "noattr", conditions: [{ operator: "in", values: ["x"] }], serve: good.serve }], {
          "/rules/0/conditions/0/attribute": "attribute name",
        });
        await refused(
          [
            {
              id: "segattr",
              conditions: [{ attribute: "x", operator: "in_segment", values: [segment] }],
              serve: good.serve,
            },
          ],
          { "/rules/0/conditions/0/attribute": "takes no attribute" },
        );
        await refused(
          [
            good,
            {
              id: "seg",
              conditions: [{ operator: "in_segment", values: [segment, "seg_missing"] }],
              serve: good.serve,
            },
          ],
          {
            "/rules/1/conditions/0/values/1":
              'rules[1] "seg", conditions[0], values[1]: there is no segment "seg_missing"',
          },
        );
        await refused(
          [{ id: "notseg", conditions: [{ operator: "not_in_segment", values: ["gone"] }], serve: good.serve }],
          { "/rules/0/conditions/0/values/0": 'there is no segment "gone"' },
        );
        await refused([good, { ...good, serve: { variant: "b" } }], { "/rules/1/id": '"ok"' });
        await refused(
          [{ id: "op", conditions: [{ attribute: "x", operator: "like", values: ["x"] }], serve: good.serve }],
          {
            "/rules/0/conditions/0/operator": "",
          },
        );
        await refused([{ id: "both", conditions: [], serve: { variant: "a", split: { weights: [] } } }], {
          "/rules/0/serve": "",
        });
        // Limits: 100 rules, 20 conditions a rule, 100 values a condition.
        const rules101 = Array.from({ length: 101 }, (_, i) => ({ id: `r${i}`, conditions: [], serve: good.serve }));
        await refused(rules101, { "/rules": "" });
        const conditions21 = Array.from({ length: 21 }, (_, i) => inCountry(`C${i}`));
        await refused([good, { id: "wide", conditions: conditions21, serve: good.serve }], {
          "/rules/1/conditions": "",
        });
        const values101 = Array.from({ length: 101 }, (_, i) => `v${i}`);
        await refused([{ id: "long", conditions: [inCountry("DE"), inCountry(...values101)], serve: good.serve }], {
          "/rules/0/conditions/1/values": "",
        });
        await refused([{ id: "big", conditions: [inCountry("x".repeat(1025))], serve: good.serve }], {
          "/rules/0/conditions/0/values/0": "",
        });
        // Served variants refused too.
        expectRefusal(await patch(server, project, "target", { onVariant: "zzz" }), 400, "invalid_request", {
          "/onVariant": "not one of",
        });
      });
      // At the limits, accepted.
      const widest = {
        id: "widest",
        conditions: Array.from({ length: 20 }, (_, j) =>
          inCountry(...Array.from({ length: 100 }, (_, k) => `${j}-${k}`)),
        ),
        serve: { variant: "b" },
      };
      const rules100 = [
        widest,
        ...Array.from({ length: 99 }, (_, i) => ({
          id: `r${i}`,
          conditions: [inCountry(`C${i}`)],
          serve: { variant: "c" },
        })),
      ];
      const wide = await setRules(server, project, "target", rules100);
      assert.equal(wide.rules.length, 100);
      assert.deepEqual(wide.rules[99], rules100[99]);
      await setRules(server, project, "target", [good]);
    });

    test("prerequisites: unknown flags and variants are 400; cycles, self and chains deeper than 5 are 409", async () => {
      for (const name of ["pa", "pb", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"])
        await createFlag(server, project, name);
      await createFlag(server, project, "pt", { type: "string", variants: stringVariants("x", "y") });
      const refusedWith = async (flag: string, prerequisites: unknown[], status: number, code: string, expected = {}) =>
        expectRefusal(await patch(server, project, flag, { prerequisites }), status, code, expected);

      await changesNothing(["pa", "pb", "pt"], async () => {
        await refusedWith("pa", [{ flag: "ghost", variants: ["on"] }], 400, "invalid_request", {
          "/prerequisites/0/flag": "ghost",
        });
        await refusedWith("pa", [{ flag: "pt", variants: ["x", "zzz"] }], 400, "invalid_request", {
          "/prerequisites/0/variants/1": "zzz",
        });
        await refusedWith("pa", [{ flag: "pb", variants: ["yes"] }], 400, "invalid_request", {
          "/prerequisites/0/variants/0": "yes",
        });
        const self = await refusedWith("pa", [{ flag: "pa", variants: ["on"] }], 409, "prerequisite_cycle");
        assert.ok(self.length > 0);
      });
      await patchOk(server, project, "pa", { prerequisites: [{ flag: "pb", variants: ["on"] }] });
      await changesNothing(["pa", "pb"], async () => {
        const res = await patch(server, project, "pb", { prerequisites: [{ flag: "pa", variants: ["on"] }] });
        expectProblem(res, 409, "prerequisite_cycle");
        assert.match(res.body.detail, /pa/);
        assert.match(res.body.detail, /pb/);
      });
      // The same flags chain the other way in staging: prerequisites are per environment.
      await patchOk(server, project, "pb", { prerequisites: [{ flag: "pa", variants: ["on"] }] }, "staging");
      assert.deepEqual((await get("pb", "staging")).prerequisites, [{ flag: "pa", variants: ["on"] }]);
      assert.deepEqual((await get("pb")).prerequisites, []);

      // c2 → c3 → … → c7 is a chain of 5: allowed. One more link, at either end, is refused.
      for (let i = 6; i >= 2; i--) {
        await patchOk(server, project, `c${i}`, { prerequisites: [{ flag: `c${i + 1}`, variants: ["on"] }] });
      }
      await changesNothing(["c1", "c7"], async () => {
        const head = await patch(server, project, "c1", { prerequisites: [{ flag: "c2", variants: ["on"] }] });
        expectProblem(head, 409, "prerequisite_cycle");
        const tail = await patch(server, project, "c7", { prerequisites: [{ flag: "c8", variants: ["on"] }] });
        expectProblem(tail, 409, "prerequisite_cycle");
      });
      // A prerequisite on a typed flag's variants is accepted.
      const typed = await patchOk(server, project, "c8", { prerequisites: [{ flag: "pt", variants: ["y"] }] });
      assert.deepEqual(typed.prerequisites, [{ flag: "pt", variants: ["y"] }]);
    });

    test("variants that drop a key still in use elsewhere: 409 variant_in_use, nothing changed", async () => {
      await createFlag(server, project, "vu", {
        type: "string",
        variants: stringVariants("a", "b", "c", "d", "e"),
        offVariant: "e",
      });
      await patchOk(server, project, "vu", { onVariant: "c" }, "staging");
      await createFlag(server, project, "vu-dep");
      await patchOk(server, project, "vu-dep", { prerequisites: [{ flag: "vu", variants: ["b", "d"] }] }, "staging");
      await changesNothing(["vu", "vu-dep"], async () => {
        // onVariant "c" in staging, written in production.
        const served = await patch(server, project, "vu", { variants: stringVariants("a", "b", "d", "e") });
        expectProblem(served, 409, "variant_in_use");
        assert.match(served.body.detail, /onVariant is "c" in environment "staging"/);
        // "b" is required by vu-dep in staging.
        const required = await patch(server, project, "vu", { variants: stringVariants("a", "c", "d", "e") });
        expectProblem(required, 409, "variant_in_use");
        assert.match(required.body.detail, /flag "vu-dep" requires "b" in environment "staging"/);
      });
    });

    test("variants in use: a rule in another environment, the environment written: one answer, 409 variant_in_use", async () => {
      await setRules(
        server,
        project,
        "vu",
        [{ id: "to-d", conditions: [inCountry("DE")], serve: { variant: "d" } }],
        {},
        "staging",
      );
      await patchOk(server, project, "vu", {
        rules: [{ id: "to-b", conditions: [inCountry("FR")], serve: { variant: "b" } }],
      });
      await changesNothing(["vu"], async () => {
        const res = await patch(server, project, "vu", {
          variants: stringVariants("a", "b", "c", "e"),
        });
        expectProblem(res, 409, "variant_in_use");
        assert.match(res.body.detail, /rule "to-d" serves "d" in environment "staging"/);
        // Dropping the key the environment written serves is the same answer, naming where.
        const own = await patch(server, project, "vu", { variants: stringVariants("b", "c", "d", "e") });
        expectProblem(own, 409, "variant_in_use");
        assert.match(own.body.detail, /onVariant is "a" in environment "production"/);
        // A rule of the environment written, too.
        const byRule = await patch(server, project, "vu", { variants: stringVariants("a", "c", "d", "e") });
        expectProblem(byRule, 409, "variant_in_use");
        assert.match(byRule.body.detail, /rule "to-b" serves "b" in environment "production"/);
        // A key that never was a variant is still the validator's 400, naming the field.
        expectRefusal(
          await patch(server, project, "vu", { variants: stringVariants("a", "b", "c", "d", "e"), onVariant: "z" }),
          400,
          "invalid_request",
          { "/onVariant": "not one of" },
        );
      });
      // A write that drops a key and stops using it in the environment written is accepted.
      await createFlag(server, project, "vu-own", { type: "string", variants: stringVariants("x", "y", "z") });
      await setRules(server, project, "vu-own", [
        { id: "to-z", conditions: [inCountry("FR")], serve: { variant: "z" } },
      ]);
      const dropped = await patchOk(server, project, "vu-own", { variants: stringVariants("x", "y"), rules: [] });
      assert.deepEqual(dropped.variants, stringVariants("x", "y"));
      // A key no one uses may go; values may change: every environment sees the new variants.
      const changed = await patchOk(server, project, "vu", {
        variants: [
          { key: "a", value: "A!" },
          { key: "b", value: "b" },
          { key: "c", value: "c" },
          { key: "d", value: "d" },
          { key: "e", value: "e" },
        ],
      });
      assert.equal(changed.variants[0].value, "A!");
      assert.equal((await get("vu", "staging")).variants[0].value, "A!");
      await patchOk(server, project, "vu", { status: "enabled" });
      assert.deepEqual(await check(server, project, "vu"), { enabled: true, variant: "a", value: "A!" });
    });

    test("rules are per environment: staging's rules do not touch production's answers", async () => {
      await createFlag(server, project, "envs", {
        type: "string",
        variants: stringVariants("base", "eu", "off"),
        onVariant: "base",
        offVariant: "off",
      });
      await setRules(
        server,
        project,
        "envs",
        [{ id: "eu", conditions: [inCountry("DE", "FR")], serve: { variant: "eu" } }],
        {},
        "staging",
      );
      const de = { actors: ["u1"], attributes: { country: "DE" } };
      assert.deepEqual(await check(server, project, "envs", { ...de, environment: "staging" }), {
        enabled: true,
        variant: "eu",
        value: "eu",
      });
      assert.deepEqual(await check(server, project, "envs", de), { enabled: false, variant: "off", value: "off" });
      assert.deepEqual((await get("envs")).rules, []);
      assert.equal((await get("envs")).status, "disabled");
      // Production conditional with no rules: the default.
      await patchOk(server, project, "envs", { status: "conditional" });
      assert.deepEqual(await check(server, project, "envs", de), { enabled: false, variant: "off", value: "off" });
    });

    test("copy between environments copies served variants, rules and prerequisites, and refuses a cycle in the target", async () => {
      await patchOk(
        server,
        project,
        "envs",
        { offVariant: "base", onVariant: "eu", prerequisites: [{ flag: "plain", variants: ["off"] }] },
        "staging",
      );
      const copied = await server.request("POST", `/projects/${project}/flags/envs/copy`, {
        body: { from: "staging", to: "production" },
      });
      assert.equal(copied.status, 200, copied.text);
      const production = await get("envs", "production");
      const staging = await get("envs", "staging");
      for (const field of ["status", "onVariant", "offVariant", "rules", "prerequisites"]) {
        assert.deepEqual(production[field], staging[field], field);
      }
      // plain is disabled in production, so it serves "off": the prerequisite holds.
      assert.deepEqual(await check(server, project, "envs", { actors: ["u1"], attributes: { country: "FR" } }), {
        enabled: true,
        variant: "eu",
        value: "eu",
      });
      const events = await server.request("GET", `/projects/${project}/events?limit=1`);
      const event = events.body.data[0];
      assert.equal(event.type, "flag.updated");
      assert.equal(event.after.copiedFrom, "staging");
      assert.deepEqual(event.after.rules, staging.rules);
      assert.deepEqual(event.before.rules, []);

      // cx → cy in staging, cy → cx in production: copying cx's configuration to production would close a cycle.
      await createFlag(server, project, "cx");
      await createFlag(server, project, "cy");
      await patchOk(server, project, "cx", { prerequisites: [{ flag: "cy", variants: ["on"] }] }, "staging");
      await patchOk(server, project, "cy", { prerequisites: [{ flag: "cx", variants: ["on"] }] }, "production");
      await changesNothing(["cx", "cy"], async () => {
        const res = await server.request("POST", `/projects/${project}/flags/cx/copy`, {
          body: { from: "staging", to: "production" },
        });
        expectProblem(res, 409, "prerequisite_cycle");
      });
    });
  });
}
