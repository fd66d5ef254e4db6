import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type CliResult, expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, createProject, startServer } = harness;

// Issue 25 from the command line against a real server: typed flags with variants, rules inline and
// from a file, prerequisites, on/off variants, segments with conditions, and check and explain with
// attributes.

function json<T = any>(result: CliResult): T {
  expectExit(result, 0);
  return JSON.parse(result.stdout) as T;
}

for (const dialect of DIALECTS) {
  describe(`flagstaff CLI: targeting (${dialect})`, () => {
    let server: TestServer;
    let project: string;
    let dir: string;
    const cli = (...args: string[]) => runCli(["--url", server.url, "--key", ADMIN_KEY, "--project", project, ...args]);

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "cli-targeting");
      dir = await mkdtemp(join(tmpdir(), "flagstaff-cli-targeting-"));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
      await server?.close();
    });

    test("typed flags, rules, segments with conditions, prerequisites; check and explain with attributes", async () => {
      const variants = JSON.stringify([
        { key: "light", value: "#fff" },
        { key: "dark", value: "#000" },
        { key: "sepia", value: "#f4ecd8" },
      ]);
      const created = json(
        await cli(
          "flags",
          "create",
          "theme",
          "--type",
          "string",
          "--variants",
          variants,
          "--on-variant",
          "dark",
          "--off-variant",
          "light",
          "--json",
        ),
      );
      assert.deepEqual([created.type, created.onVariant, created.offVariant], ["string", "dark", "light"]);
      const shown = expectExit(await cli("flags", "get", "theme"), 0).stdout;
      assert.match(shown, /type\s+.*string/);
      assert.match(shown, /light="#fff", dark="#000", sepia="#f4ecd8"/);

      const segment = json(
        await cli(
          "segments",
          "create",
          "--name",
          "Pros",
          "--conditions",
          JSON.stringify([{ attribute: "plan", operator: "in", values: ["pro"] }]),
          "--json",
        ),
      );
      assert.deepEqual(segment.conditions, [{ attribute: "plan", operator: "in", values: ["pro"] }]);
      assert.match(expectExit(await cli("segments", "get", segment.id), 0).stdout, /plan in \["pro"\]/);

      const rules = [
        {
          id: "nordics",
          conditions: [{ attribute: "country", operator: "in", values: ["NO", "SE"] }],
          serve: { variant: "dark" },
        },
        {
          id: "readers",
          conditions: [
            { attribute: "tags", operator: "in", values: ["reader"] },
            { operator: "in_segment", values: [segment.id] },
          ],
          serve: { variant: "sepia" },
        },
      ];
      const rulesFile = join(dir, "rules.json");
      await writeFile(rulesFile, JSON.stringify(rules));
      const updated = json(await cli("flags", "update", "theme", "--rules-file", rulesFile, "--json"));
      assert.deepEqual(
        updated.rules.map((r: { id: string }) => r.id),
        ["nordics", "readers"],
      );
      expectExit(await cli("flags", "conditional", "theme"), 0);
      assert.match(
        expectExit(await cli("flags", "get", "theme"), 0).stdout,
        /1\. nordics: country in \["NO","SE"\] → dark/,
      );

      // check prints a typed flag's variant and value; attributes repeat for lists.
      const check = async (...args: string[]) => expectExit(await cli("check", "theme", ...args), 0).stdout.trim();
      assert.equal(await check("--attribute", "country=SE"), 'enabled: dark = "#000"');
      assert.equal(await check("--attribute", "country=DE"), 'disabled: light = "#fff"');
      assert.equal(
        await check("--attribute", "tags=news", "--attribute", "tags=reader", "--attribute", "plan=pro"),
        'enabled: sepia = "#f4ecd8"',
      );
      assert.equal(await check("--attribute", "tags=reader", "--attribute", "plan=free"), 'disabled: light = "#fff"');
      assert.deepEqual(json(await cli("check", "theme", "--attribute", "country=NO", "--json")), {
        enabled: true,
        variant: "dark",
        value: "#000",
      });

      // A boolean flag with a prerequisite and its own rule; its check prints enabled/disabled as ever.
      expectExit(await cli("flags", "create", "beta"), 0);
      const rule = [
        {
          id: "v2",
          conditions: [{ attribute: "version", operator: "semver_gte", values: ["2.0"] }],
          serve: { variant: "on" },
        },
      ];
      const beta = json(
        await cli(
          "flags",
          "update",
          "beta",
          "--rules",
          JSON.stringify(rule),
          "--prerequisites",
          JSON.stringify([{ flag: "theme", variants: ["dark"] }]),
          "--json",
        ),
      );
      assert.deepEqual(beta.prerequisites, [{ flag: "theme", variants: ["dark"] }]);
      expectExit(await cli("flags", "conditional", "beta"), 0);
      const betaCheck = async (...args: string[]) => expectExit(await cli("check", "beta", ...args), 0).stdout.trim();
      assert.equal(await betaCheck("--attribute", "version=2.1.0", "--attribute", "country=SE"), "enabled");
      assert.equal(await betaCheck("--attribute", "version=2.1.0", "--attribute", "country=DE"), "disabled");
      assert.equal(await betaCheck("--attribute", "version=1.0", "--attribute", "country=SE"), "disabled");

      // explain names the rule, or the prerequisite that failed.
      const byRule = expectExit(
        await cli("flags", "explain", "theme", "--attribute", "country=SE", "--actor", "ana"),
        0,
      ).stdout;
      assert.match(byRule, /variant\s+.*dark/);
      assert.match(byRule, /rule 1 \(nordics\)/);
      const prerequisite = json(await cli("flags", "explain", "beta", "--attribute", "version=3", "--json"));
      assert.deepEqual(
        [prerequisite.rule, prerequisite.prerequisite, prerequisite.reason],
        ["prerequisite", "theme", "PREREQUISITE_FAILED"],
      );
      assert.match(
        expectExit(await cli("flags", "explain", "beta", "--attribute", "version=3"), 0).stdout,
        /prerequisite theme failed/,
      );

      // on/off variants and variants change; segments' conditions are replaced.
      const swapped = json(
        await cli("flags", "update", "theme", "--on-variant", "sepia", "--off-variant", "dark", "--json"),
      );
      assert.deepEqual([swapped.onVariant, swapped.offVariant], ["sepia", "dark"]);
      const renamed = JSON.stringify([
        { key: "light", value: "#fefefe" },
        { key: "dark", value: "#111" },
        { key: "sepia", value: "#f4ecd8" },
      ]);
      const revalued = json(await cli("flags", "update", "theme", "--variants", renamed, "--json"));
      assert.equal(revalued.variants[0].value, "#fefefe");
      const conditionsFile = join(dir, "conditions.json");
      await writeFile(conditionsFile, "[]");
      const cleared = json(await cli("segments", "update", segment.id, "--conditions-file", conditionsFile, "--json"));
      assert.deepEqual(cleared.conditions, []);
    });

    test("refusals: bad JSON and a missing file are usage errors; a refused rule names the rule and condition", async () => {
      expectExit(await cli("flags", "create", "plain"), 0);
      const badJson = expectExit(await cli("flags", "update", "plain", "--rules", "[{"), 2);
      assert.match(badJson.stderr, /--rules is not JSON/);
      const both = expectExit(await cli("flags", "update", "plain", "--rules", "[]", "--rules-file", "x.json"), 2);
      assert.match(both.stderr, /Pass --rules or --rules-file, not both/);
      const missing = expectExit(await cli("flags", "update", "plain", "--rules-file", join(dir, "none.json")), 2);
      assert.match(missing.stderr, /cannot read/);
      const attribute = expectExit(await cli("check", "plain", "--attribute", "country"), 2);
      assert.match(attribute.stderr, /--attribute must be NAME=VALUE/);
      const refused = await cli(
        "flags",
        "update",
        "plain",
        "--rules",
        JSON.stringify([
          { id: "r", conditions: [{ attribute: "age", operator: "gt", values: ["old"] }], serve: { variant: "on" } },
        ]),
      );
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /rules\[0\]/);
      assert.match(refused.stderr, /conditions\[0\]/);
    });
  });
}
