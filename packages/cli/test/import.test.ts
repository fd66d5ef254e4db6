// flagd's format through the CLI (issue 37; docs/flagd.md, "Import"), against a real server on a real
// database: `flagstaff import --flagd flags.json` makes flagd's definitions the project's flags in one
// environment. A project exported as flagd.json and imported into a fresh project answers as the first for
// every context; a file written by hand (flagd's own examples) imports; a dry run changes nothing; what
// Flagstaff cannot express is refused, naming the flag and the construct, with nothing changed.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, startServer } = harness;

type Doc = Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`flagstaff import --flagd (${dialect})`, () => {
    let server: TestServer;
    let dir: string;
    const cli = (project: string, ...args: string[]) =>
      runCli(["--url", server.url, "--key", ADMIN_KEY, "--project", project, ...args], {});
    const ok = async (method: string, path: string, body?: unknown, status = 200) => {
      const res = await server.request(method, path, { body });
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      return res.body;
    };
    const file = (name: string, content: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
      return path;
    };
    /** Every flag's variant for a context, as the project's server answers it (OFREP). */
    const answers = async (checkKey: string, context: Doc) => {
      const res = await server.request("POST", "/ofrep/v1/evaluate/flags", { key: checkKey, body: { context } });
      assert.equal(res.status, 200, res.text);
      return Object.fromEntries((res.body.flags as Doc[]).map((f) => [f.key, f.variant]));
    };
    const checkKey = async (project: string) =>
      (await ok("POST", `/projects/${project}/keys`, { role: "check", name: "check" }, 201)).key as string;

    before(async () => {
      server = await startServer({ dialect, env: { OFREP_BULK_RATE_LIMIT_PER_MINUTE: "0" } });
      dir = mkdtempSync(join(tmpdir(), "flagstaff-import-"));
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await server.close();
    });

    test("round trip: a project's flagd.json imported into a fresh project answers alike", async () => {
      const src = `src-${dialect}`;
      const p = `/projects/${src}`;
      await ok("POST", "/projects", { id: src, name: "Source" }, 201);
      const segment = (await ok("POST", `${p}/segments`, { name: "beta" }, 201)).id as string;
      await ok("PATCH", `${p}/segments/${segment}`, {
        addActors: ["zoe", "adam"],
        conditions: [{ attribute: "plan", operator: "in", values: ["pro", "team"] }],
      });
      await ok("POST", `${p}/flags/kill`, {}, 201);
      await ok("PATCH", `${p}/flags/kill`, {
        status: "conditional",
        rules: [
          {
            id: "de",
            conditions: [{ attribute: "country", operator: "in", values: ["de"] }],
            serve: { variant: "on" },
          },
        ],
      });
      await ok("POST", `${p}/flags/checkout`, {}, 201);
      await ok("PATCH", `${p}/flags/checkout`, {
        status: "conditional",
        addActors: ["ann", "bob"],
        addSegments: [segment],
        prerequisites: [{ flag: "kill", variants: ["off"] }],
        rules: [
          {
            id: "adults",
            conditions: [
              { attribute: "age", operator: "gte", values: [18] },
              { attribute: "email", operator: "ends_with", values: ["@example.com"], negate: true },
            ],
            serve: { variant: "on" },
          },
        ],
      });
      await ok(
        "POST",
        `${p}/flags/theme`,
        {
          type: "string",
          variants: [
            { key: "light", value: "#fff" },
            { key: "dark", value: "#000" },
            { key: "blue", value: "#00f" },
          ],
        },
        201,
      );
      await ok("PATCH", `${p}/flags/theme`, {
        status: "conditional",
        onVariant: "dark",
        offVariant: "light",
        rules: [
          {
            id: "new-app",
            conditions: [
              { attribute: "version", operator: "semver_gte", values: ["2.0.0"] },
              { attribute: "plan", operator: "not_in", values: ["free"] },
            ],
            serve: { variant: "blue" },
          },
          { id: "beta", conditions: [{ operator: "in_segment", values: [segment] }], serve: { variant: "dark" } },
          {
            id: "ios",
            conditions: [{ attribute: "os", operator: "starts_with", values: ["ios"] }],
            serve: { variant: "dark" },
          },
        ],
      });
      await ok(
        "POST",
        `${p}/flags/limit`,
        {
          type: "number",
          variants: [
            { key: "low", value: 10 },
            { key: "high", value: 1000 },
          ],
        },
        201,
      );
      await ok("PATCH", `${p}/flags/limit`, { status: "enabled", onVariant: "high", offVariant: "low" });

      const flagd = await server.request("GET", `${p}/flagd.json`);
      assert.equal(flagd.status, 200, flagd.text);
      const path = file("flagd.json", flagd.text);

      const dst = `dst-${dialect}`;
      await ok("POST", "/projects", { id: dst, name: "Destination" }, 201);
      // A dry run plans and changes nothing.
      const dry = expectExit(await cli(dst, "import", "--flagd", path, "--dry-run"), 0).stdout;
      assert.match(dry, /Importing 4 flags from .*flagd\.json into production\./);
      assert.match(dry, /\+ create flag checkout/);
      assert.match(dry, /Dry run: nothing was changed\./);
      assert.deepEqual((await ok("GET", `/projects/${dst}/export`)).flags, []);

      const out = expectExit(await cli(dst, "import", "--flagd", path), 0).stdout;
      assert.match(out, /Applied: project .* is at revision r\d+\./);
      const imported = (await ok("GET", `/projects/${dst}/export?members=true`)) as Doc;
      assert.deepEqual(
        imported.flags.map((f: Doc) => [f.name, f.type]),
        [
          ["checkout", "boolean"],
          ["kill", "boolean"],
          ["limit", "number"],
          ["theme", "string"],
        ],
      );
      const checkout = imported.flags[0].environments.production;
      assert.deepEqual(checkout.prerequisites, [{ flag: "kill", variants: ["off"] }]);

      // The same answers for every context.
      const [srcKey, dstKey] = [await checkKey(src), await checkKey(dst)];
      const keys = [undefined, "ann", "bob", "zoe", "adam", "carl", "x1"];
      const plans = [undefined, "free", "pro", "team"];
      const ages = [undefined, 12, 18, 40, "30"];
      const emails = [undefined, "a@example.com", "b@test.io"];
      const versions = [undefined, "1.9.0", "2.0.0", "2.1.0-rc.1", "v3"];
      const countries = [undefined, "de", "fr"];
      const oses = [undefined, "ios17", "android"];
      let compared = 0;
      for (let i = 0; i < 150; i++) {
        const pick = <T>(items: readonly T[]) => items[(i * 7 + items.length * i * i + i) % items.length] as T;
        const context: Doc = {};
        const set = (name: string, value: unknown) => {
          if (value !== undefined) context[name] = value;
        };
        set("targetingKey", keys[i % keys.length]);
        set("plan", pick(plans));
        set("age", ages[(i >> 1) % ages.length]);
        set("email", emails[(i >> 2) % emails.length]);
        set("version", versions[(i >> 3) % versions.length]);
        set("country", countries[(i >> 4) % countries.length]);
        set("os", oses[(i >> 5) % oses.length]);
        assert.deepEqual(await answers(dstKey, context), await answers(srcKey, context), JSON.stringify(context));
        compared++;
      }
      assert.equal(compared, 150);

      // Importing the same file again changes nothing.
      assert.match(expectExit(await cli(dst, "import", "--flagd", path), 0).stdout, /No changes/);
    });

    test("a file written for flagd: $evaluators, fractional, ends_with, DISABLED; into a named environment", async () => {
      const project = `hand-${dialect}`;
      await ok("POST", "/projects", { id: project, name: "Hand" }, 201);
      await ok("POST", `/projects/${project}/environments`, { id: "staging", name: "Staging" }, 201);
      const path = file("hand.json", {
        $schema: "https://flagd.dev/schema/v0/flags.json",
        $evaluators: { emailWithFaas: { ends_with: [{ var: "email" }, "@faas.com"] } },
        flags: {
          "show-welcome-banner": { state: "DISABLED", variants: { on: true, off: false }, defaultVariant: "off" },
          "background-color": {
            state: "ENABLED",
            variants: { red: "#FF0000", blue: "#0000FF", green: "#00FF00" },
            defaultVariant: "red",
            targeting: {
              if: [
                { $ref: "emailWithFaas" },
                {
                  fractional: [
                    ["red", 25],
                    ["blue", 25],
                    ["green", 50],
                  ],
                },
                { "==": [{ var: "company" }, "initech"] },
                "green",
                null,
              ],
            },
          },
          "new-welcome": {
            state: "ENABLED",
            variants: { yes: true, no: false },
            defaultVariant: "yes",
            targeting: { if: [{ in: [{ var: "targetingKey" }, ["ann", "bob"]] }, "no"] },
          },
        },
      });
      const out = expectExit(await cli(project, "import", "--flagd", path, "--environment", "staging"), 0).stdout;
      assert.match(out, /into staging/);
      assert.match(out, /Note: flag show-welcome-banner: flagd's DISABLED/);
      const doc = (await ok("GET", `/projects/${project}/export?members=true`)) as Doc;
      const color = doc.flags.find((f: Doc) => f.name === "background-color");
      assert.equal(color.type, "string");
      const staging = color.environments.staging;
      assert.equal(staging.status, "conditional");
      assert.equal(staging.offVariant, "red");
      assert.deepEqual(staging.rules, [
        {
          id: "r1",
          conditions: [{ attribute: "email", operator: "ends_with", values: ["@faas.com"] }],
          serve: {
            split: {
              weights: [
                { variant: "red", weight: 25 },
                { variant: "blue", weight: 25 },
                { variant: "green", weight: 50 },
              ],
            },
          },
        },
        {
          id: "r2",
          conditions: [{ attribute: "company", operator: "in", values: ["initech"] }],
          serve: { variant: "green" },
        },
      ]);
      assert.equal(color.environments.production.status, "disabled", "production as a new flag's");
      // A boolean flag of other keys is on/off; its default on is served when nothing else holds.
      const welcome = doc.flags.find((f: Doc) => f.name === "new-welcome").environments.staging;
      assert.deepEqual(
        welcome.rules.map((r: Doc) => r.serve),
        [{ variant: "off" }, { variant: "on" }],
      );
      const listed = doc.segments.find((s: Doc) => s.id === welcome.rules[0].conditions[0].values[0]);
      assert.deepEqual(listed.members, ["ann", "bob"]);
      assert.equal(
        doc.flags.find((f: Doc) => f.name === "show-welcome-banner").environments.staging.status,
        "disabled",
      );
    });

    test("long names: the segments of targeting-key lists get ids that fit, the same on every import", async () => {
      // The longest project id and flag name: <project>.flagd.<flag>.<n> would be 64 + 7 + 128 + 2 characters.
      const project = `long-${dialect}-`.padEnd(64, "p");
      await ok("POST", "/projects", { id: project, name: "Long" }, 201);
      const name = "f".padEnd(128, "x");
      const sibling = `${"f".padEnd(127, "x")}y`;
      const targeting = {
        if: [
          { in: [{ var: "targetingKey" }, ["ann", "bob"]] },
          "on",
          { "==": [{ var: "targetingKey" }, "carl"] },
          "on",
          "off",
        ],
      };
      const path = file("long.json", {
        flags: {
          [name]: { state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "off", targeting },
          [sibling]: { state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "off", targeting },
        },
      });
      const out = expectExit(await cli(project, "import", "--flagd", path), 0).stdout;
      assert.match(out, /Applied: project .* is at revision r\d+\./);
      const doc = (await ok("GET", `/projects/${project}/export?members=true`)) as Doc;
      const ids = doc.segments.map((s: Doc) => s.id as string);
      assert.equal(ids.length, 4);
      assert.equal(new Set(ids).size, 4);
      for (const id of ids) {
        assert.ok(id.length <= 128, `${id}: ${id.length} characters`);
        assert.ok(id.startsWith(`${project}.flagd.f`), id);
      }
      for (const segment of doc.segments) assert.ok(segment.name.length <= 128, segment.name);
      // The same ids again: nothing to change.
      assert.match(expectExit(await cli(project, "import", "--flagd", path), 0).stdout, /No changes/);
      const key = await checkKey(project);
      for (const [targetingKey, variant] of [
        ["ann", "on"],
        ["carl", "on"],
        ["dora", "off"],
      ] as const) {
        const answered = await answers(key, { targetingKey });
        assert.equal(answered[name], variant, targetingKey);
        assert.equal(answered[sibling], variant, targetingKey);
      }
    });

    test("refusals name the flag and the construct, and change nothing", async () => {
      const project = `refuse-${dialect}`;
      await ok("POST", "/projects", { id: project, name: "Refuse" }, 201);
      const path = file("bad.json", {
        flags: {
          fine: { state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "on" },
          mixed: { state: "ENABLED", variants: { a: "x", b: 1 }, defaultVariant: "a" },
          caret: {
            state: "ENABLED",
            variants: { a: "x", b: "y" },
            defaultVariant: "a",
            targeting: { if: [{ sem_ver: [{ var: "version" }, "^", "1.0.0"] }, "b"] },
          },
          math: {
            state: "ENABLED",
            variants: { a: "x", b: "y" },
            defaultVariant: "a",
            targeting: { if: [{ ">": [{ "+": [{ var: "a" }, 1] }, 3] }, "b"] },
          },
          ghost: {
            state: "ENABLED",
            variants: { a: "x", b: "y" },
            defaultVariant: "a",
            targeting: { if: [true, "c"] },
          },
          // A var's default holds where the attribute is missing: {"var": ["plan", "free"]} is "free" there.
          fallback: {
            state: "ENABLED",
            variants: { a: "x", b: "y" },
            defaultVariant: "a",
            targeting: { if: [{ "==": [{ var: ["plan", "free"] }, "free"] }, "b"] },
          },
          base: {
            state: "ENABLED",
            variants: { on: true, off: false },
            defaultVariant: "off",
            targeting: { if: [{ "==": [{ var: "plan" }, "pro"] }, "on", "off"] },
          },
          // Where base is not on, flagd serves the default variant, true; Flagstaff's failed prerequisite, off.
          guarded: {
            state: "ENABLED",
            variants: { yes: true, no: false },
            defaultVariant: "yes",
            targeting: {
              if: [
                { in: [{ $ref: "flag:base" }, ["on"]] },
                { if: [{ "==": [{ var: "country" }, "de"] }, "no", "yes"] },
                "yes",
              ],
            },
          },
          // Its guard reads an evaluator that is not base's targeting: flagd's guard always holds.
          forged: {
            state: "ENABLED",
            variants: { a: "x", b: "y" },
            defaultVariant: "a",
            targeting: { if: [{ in: [{ $ref: "flag:other" }, ["on"]] }, "b", "a"] },
          },
          other: {
            state: "ENABLED",
            variants: { on: true, off: false },
            defaultVariant: "off",
            targeting: { if: [{ "==": [{ var: "plan" }, "pro"] }, "on", "off"] },
          },
        },
        $evaluators: {
          "flag:base": { if: [{ "==": [{ var: "plan" }, "pro"] }, "on", "off"] },
          "flag:other": "on",
        },
      });
      const refused = expectExit(await cli(project, "import", "--flagd", path), 2).stderr;
      assert.match(refused, /cannot be imported \(nothing was changed\)/);
      assert.match(refused, /flag mixed: variants of several types \(string, number\)/);
      assert.match(refused, /flag caret: sem_ver with "\^"/);
      assert.match(refused, /flag math: .*\+/);
      assert.match(refused, /flag ghost: serves "c", which is not one of its variants/);
      assert.match(refused, /flag fallback: a var with a default, \{"var":\["plan","free"\]\}/);
      assert.match(
        refused,
        /flag guarded: a prerequisite guard whose failure serves the default variant "yes" \(true\)/,
      );
      assert.match(
        refused,
        /flag forged: a prerequisite on "other" whose evaluator flag:other is not that flag's targeting/,
      );
      assert.doesNotMatch(refused, /flag fine/);
      assert.doesNotMatch(refused, /flag base/);
      assert.doesNotMatch(refused, /flag other/);
      assert.deepEqual((await ok("GET", `/projects/${project}/export`)).flags, []);
      assert.match(
        expectExit(await cli(project, "import", "--flagd", file("not.json", "{ nope")), 2).stderr,
        /cannot read .* as JSON/,
      );
      assert.match(expectExit(await cli(project, "import"), 2).stderr, /--flagd is required/);
      assert.match(
        expectExit(await cli(project, "import", "--flagd", file("empty.json", { hello: 1 })), 2).stderr,
        /no "flags" object/,
      );
    });
  });
}
