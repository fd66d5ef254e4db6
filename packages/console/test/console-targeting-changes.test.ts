// A flag's targeting as the console says it (issue 32), in Chromium against a real server in this process:
// Copy to… shows every field a copy changes, the rules and prerequisites one by one (added, removed,
// changed) in words, and copies them; the history shows rules, prerequisites, variants and the on and off
// variants before and after; the flag list and the flag page sum up what the targeting does; the snippets
// call what fits the flag's type; Evaluate says "its one condition held". Checked through the API too.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { FlagstaffClient } from "@flagstaff/sdk";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Locator, Page } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  launchChromium,
  openTab,
  SCREENSHOTS,
  screenshot,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };

describe(`a flag's targeting in words, in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let project: string;
  let writeKey: string;
  let beta: string;

  const api = <B = any>(method: string, path: string, body?: unknown) =>
    server.request<B>(method, path, body === undefined ? {} : { body });
  const flagPath = (name: string, environment?: string) =>
    `/projects/${project}/flags/${name}${environment ? `?environment=${environment}` : ""}`;
  async function configure(name: string, environment: string, body: unknown) {
    const res = await api("PATCH", flagPath(name, environment), body);
    assert.equal(res.status, 200, res.text);
  }

  const EUROPE = {
    id: "rule-1",
    description: "Europe",
    conditions: [{ attribute: "country", operator: "in", values: ["FR", "DE"] }],
    serve: { variant: "green" },
  };
  const HALF = {
    id: "rule-2",
    conditions: [],
    serve: {
      split: {
        weights: [
          { variant: "blue", weight: 50 },
          { variant: "green", weight: 50 },
        ],
      },
    },
  };

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "words");
      assert.equal(
        (await api("POST", `/projects/${project}/environments`, { id: "staging", name: "Staging" })).status,
        201,
      );
      // A write key of every environment: Copy to… reaches another.
      const key = await api("POST", `/projects/${project}/keys`, { role: "write", name: "lead", environment: null });
      assert.equal(key.status, 201, key.text);
      writeKey = key.body.key;
      beta = (await api("POST", `/projects/${project}/segments`, { name: "Beta testers" })).body.id;
      await api("POST", flagPath("new-checkout"), { description: "The one-page checkout" });
      await configure("new-checkout", "production", { status: "enabled" });
      await configure("new-checkout", "staging", { status: "enabled" });
      // A string flag with a rule set in Staging only; Production conditional with none (the team lead's case).
      const theme = await api("POST", flagPath("checkout-theme"), {
        type: "string",
        variants: [
          { key: "blue", value: "#1d4ed8" },
          { key: "green", value: "#15803d" },
          { key: "red", value: "#b91c1c" },
        ],
      });
      assert.equal(theme.status, 201, theme.text);
      await configure("checkout-theme", "staging", {
        rules: [EUROPE, HALF],
        prerequisites: [{ flag: "new-checkout", variants: ["on"] }],
      });
      await configure("checkout-theme", "production", { status: "conditional" });
      // Five rules, one a 50/50 split; a flag with a prerequisite.
      const price = await api("POST", flagPath("price"), {
        type: "number",
        variants: [
          { key: "low", value: 9 },
          { key: "high", value: 12 },
          { key: "mid", value: 10.5 },
        ],
      });
      assert.equal(price.status, 201, price.text);
      await configure("price", "production", {
        status: "conditional",
        rules: [
          {
            id: "pro",
            conditions: [{ attribute: "plan", operator: "in", values: ["pro"], caseInsensitive: true }],
            serve: { variant: "high" },
          },
          {
            id: "new-app",
            conditions: [{ attribute: "appVersion", operator: "semver_gte", values: ["2.0.0"] }],
            serve: { variant: "mid" },
          },
          { id: "beta", conditions: [{ operator: "in_segment", values: [beta] }], serve: { variant: "low" } },
          {
            id: "outside-us",
            conditions: [{ attribute: "country", operator: "not_in", values: ["US"] }],
            serve: { variant: "mid" },
          },
          {
            id: "half",
            conditions: [],
            serve: {
              split: {
                weights: [
                  { variant: "low", weight: 50 },
                  { variant: "high", weight: 50 },
                ],
              },
            },
          },
        ],
      });
      const layout = await api("POST", flagPath("layout"), {
        type: "object",
        variants: [
          { key: "grid", value: { columns: 3 } },
          { key: "list", value: { columns: 1 } },
        ],
      });
      assert.equal(layout.status, 201, layout.text);
      await configure("layout", "production", {
        status: "conditional",
        prerequisites: [{ flag: "new-checkout", variants: ["on"] }],
      });
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      await closeBrowser(browser);
      await server?.close();
    },
    { timeout: 30_000 },
  );

  async function withTab(fn: (page: Page) => Promise<void>, scheme: "light" | "dark" = "light") {
    const tab = await openTab(browser, scheme);
    try {
      await fn(tab.page);
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  }

  /** The rows of a table's body as the cells' texts. */
  const rowsOf = async (table: Locator) =>
    Promise.all(
      (await table.locator("tbody tr:not(.difference-details)").all()).map((r) => r.locator("th, td").allInnerTexts()),
    );
  /** A change list's items: [kind, subject, text…] each, as shown. */
  const changesOf = async (list: Locator) =>
    Promise.all(
      (await list.locator(":scope > li").all()).map(async (li) => [
        await li.locator(".badge").innerText(),
        await li.locator("strong").first().innerText(),
        ...(await li.locator(".change-text").allInnerTexts()),
      ]),
    );

  test(
    "Copy to…: every field the copy changes, the rules and prerequisites one by one; the copy carries them",
    T,
    async () => {
      await withTab(async (page) => {
        await signIn(page, server.url, writeKey);

        // Production (conditional, no rules) to Staging (disabled, two rules and a prerequisite).
        await page.goto(`${server.url}/console/p/${project}/flags/checkout-theme?environment=production`);
        await page.getByRole("button", { name: "Copy to…" }).click();
        const fromProduction = page.getByRole("dialog", { name: "Copy checkout-theme from Production" });
        const toStaging = fromProduction.getByRole("table", { name: "Differences between Staging and Production" });
        await toStaging.waitFor();
        assert.deepEqual(await rowsOf(toStaging), [
          ["Status", "disabled", "conditional"],
          ["Rules", "2 rules", "none"],
          ["Prerequisites", "new-checkout (on)", "none"],
        ]);
        assert.deepEqual(
          await changesOf(fromProduction.getByRole("list", { name: "Rules: what the copy changes in Staging" })),
          [
            ["Removed", "Rule 1 “rule-1”", "“Europe”: if country is one of FR, DE → serves green"],
            ["Removed", "Rule 2 “rule-2”", "everyone → splits 50% blue, 50% green"],
          ],
        );
        assert.deepEqual(
          await changesOf(
            fromProduction.getByRole("list", { name: "Prerequisites: what the copy changes in Staging" }),
          ),
          [["Removed", "Prerequisite new-checkout", "new-checkout must serve on"]],
        );
        assert.match(
          await fromProduction.getByTestId("copy-unchanged").innerText(),
          /on variant, off variant, attached/,
        );
        await fromProduction.getByRole("button", { name: "Cancel" }).click();

        // Only the targeting differs (the team lead's "nothing to copy"): a rule of the same id that serves
        // otherwise, one missing, a prerequisite missing.
        await configure("checkout-theme", "production", {
          status: "disabled",
          rules: [
            {
              id: "rule-1",
              conditions: [{ attribute: "country", operator: "in", values: ["FR"] }],
              serve: { variant: "blue" },
            },
          ],
        });
        await page.goto(`${server.url}/console/p/${project}/flags/checkout-theme?environment=staging`);
        await page.getByRole("button", { name: "Copy to…" }).click();
        const fromStaging = page.getByRole("dialog", { name: "Copy checkout-theme from Staging" });
        const toProduction = fromStaging.getByRole("table", { name: "Differences between Production and Staging" });
        await toProduction.waitFor();
        assert.equal(await fromStaging.getByTestId("copy-same").count(), 0, "not the same configuration");
        assert.deepEqual(await rowsOf(toProduction), [
          ["Rules", "1 rule", "2 rules"],
          ["Prerequisites", "none", "new-checkout (on)"],
        ]);
        assert.deepEqual(
          await changesOf(fromStaging.getByRole("list", { name: "Rules: what the copy changes in Production" })),
          [
            [
              "Changed",
              "Rule 1 “rule-1”",
              "Before: if country is FR → serves blue",
              "After: “Europe”: if country is one of FR, DE → serves green",
            ],
            ["Added", "Rule 2 “rule-2”", "everyone → splits 50% blue, 50% green"],
          ],
        );
        assert.deepEqual(
          await changesOf(
            fromStaging.getByRole("list", { name: "Prerequisites: what the copy changes in Production" }),
          ),
          [["Added", "Prerequisite new-checkout", "new-checkout must serve on"]],
        );
        assert.deepEqual(await axeViolations(page), []);
        await fromStaging.screenshot({ path: join(SCREENSHOTS, "environments-copy-rules-light.png") });
        const copy = fromStaging.getByRole("button", { name: "Copy to Production" });
        assert.equal(await copy.isEnabled(), true);
        await copy.click();
        await fromStaging.waitFor({ state: "hidden" });

        // Through the API: Production has Staging's rules and prerequisite now.
        const [staging, production] = await Promise.all([
          api("GET", flagPath("checkout-theme", "staging")),
          api("GET", flagPath("checkout-theme", "production")),
        ]);
        assert.deepEqual(production.body.rules, staging.body.rules);
        assert.deepEqual(production.body.prerequisites, [{ flag: "new-checkout", variants: ["on"] }]);
      });
    },
  );

  test(
    "History: rules, prerequisites, variants and the on and off variants before and after, a copy's too",
    T,
    async () => {
      // Saving targeting and variants, as the team lead did: one event each.
      await configure("checkout-theme", "staging", {
        onVariant: "green",
        rules: [
          EUROPE,
          {
            ...HALF,
            serve: {
              split: {
                weights: [
                  { variant: "blue", weight: 90 },
                  { variant: "green", weight: 10 },
                ],
              },
            },
          },
        ],
      });
      const variants = await api("PATCH", flagPath("checkout-theme"), {
        variants: [
          { key: "blue", value: "#1d4ed8" },
          { key: "green", value: "#16a34a", description: "Brighter" },
          { key: "red", value: "#b91c1c" },
        ],
      });
      assert.equal(variants.status, 200, variants.text);
      await withTab(async (page) => {
        await signIn(page, server.url, writeKey);
        await page.goto(`${server.url}/console/p/${project}/history`);
        const events = page.getByRole("table", { name: "Events" });
        await events.waitFor();
        const row = (text: string) => events.locator("tbody > tr").filter({ hasText: text }).first();

        // The variants (the definition): one changed.
        const variantsRow = row("Variants: 3 variants → 3 variants");
        await variantsRow.waitFor();
        assert.deepEqual(await changesOf(variantsRow.getByRole("list", { name: "Variants changed" })), [
          ["Changed", "Variant green", 'Before: green = "#15803d"', 'After: green = "#16a34a" (“Brighter”)'],
        ]);
        // The on variant and a split's weights.
        const onRow = row("On variant: blue → green");
        assert.deepEqual(await changesOf(onRow.getByRole("list", { name: "Rules changed" })), [
          [
            "Changed",
            "Rule 2 “rule-2”",
            "Before: everyone → splits 50% blue, 50% green",
            "After: everyone → splits 90% blue, 10% green",
          ],
        ]);
        // The copy into Production: where from, then its rules and prerequisite.
        const copied = row("Copied from Staging");
        assert.match(await copied.innerText(), /Rules: 1 rule → 2 rules/);
        assert.match(await copied.innerText(), /Prerequisites: none → 1 prerequisite/);
        assert.deepEqual(await changesOf(copied.getByRole("list", { name: "Rules changed" })), [
          [
            "Changed",
            "Rule 1 “rule-1”",
            "Before: if country is FR → serves blue",
            "After: “Europe”: if country is one of FR, DE → serves green",
          ],
          ["Added", "Rule 2 “rule-2”", "everyone → splits 50% blue, 50% green"],
        ]);
        assert.deepEqual(await changesOf(copied.getByRole("list", { name: "Prerequisites changed" })), [
          ["Added", "Prerequisite new-checkout", "new-checkout must serve on"],
        ]);
        // The first rules saved in Staging, with a prerequisite; a segment's rule names the segment.
        const first = row("Rules: none → 2 rules");
        assert.match(await first.innerText(), /Prerequisites: none → 1 prerequisite/);
        const segmentRule = row("Rules: none → 5 rules");
        await segmentRule.getByText("if the actor is in segment Beta testers → serves low").waitFor();
        await segmentRule.getByText("if plan is pro (any case) → serves high").waitFor();
        await segmentRule.getByText("if appVersion is a version ≥ 2.0.0 → serves mid").waitFor();
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "history-targeting-light.png");

        // The same events through the API: what the rows say is what was recorded.
        const recorded = (await api("GET", `/projects/${project}/events?flag=checkout-theme&type=flag.updated`)).body
          .data;
        assert.equal(recorded.find((e: any) => e.after.copiedFrom === "staging")?.after.rules.length, 2);
      });
      // The tints of what is added, removed and changed read in the dark theme too.
      await withTab(async (page) => {
        await signIn(page, server.url, writeKey);
        await page.goto(`${server.url}/console/p/${project}/history`);
        await page.getByRole("list", { name: "Rules changed" }).first().waitFor();
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "history-targeting-dark.png");
      }, "dark");
    },
  );

  test("the flag list and the flag page sum up what the targeting does", T, async () => {
    await withTab(async (page) => {
      await signIn(page, server.url, writeKey);
      await page.goto(`${server.url}/console/p/${project}/flags?environment=production`);
      const table = page.getByRole("table", { name: "Flags" });
      await table.waitFor();
      // The cell under "Targeting" in the flag's row.
      const summary = (name: string) =>
        table
          .getByRole("row")
          .filter({ has: page.getByRole("link", { name, exact: true }) })
          .locator("td")
          .nth(3);
      const expected: [string, string][] = [
        ["price", "5 rules (one 50/50 split) · then 0% of actors"],
        ["layout", "Needs new-checkout · then 0% of actors"],
        ["new-checkout", "On for everyone"],
      ];
      for (const [name, text] of expected) {
        await waitFor(`${name}'s summary`, async () => (await summary(name).innerText()) === text);
      }
      // Each flag's page says the same, with the same function.
      for (const [name, text] of expected) {
        await page.goto(`${server.url}/console/p/${project}/flags/${name}?environment=production`);
        await page.getByRole("heading", { name, level: 1 }).waitFor();
        await page.getByText(`${text} · 0 actors, 0 segments`, { exact: false }).waitFor();
      }
      await page.goto(`${server.url}/console/p/${project}/flags?environment=production`);
      await table.waitFor();
      await summary("price").waitFor();
      await screenshot(page, "flags-targeting-summary-light.png");
    });
  });

  test("Evaluate says its one condition held; the snippets call what fits the flag's type", T, async () => {
    const checkKey = (await createKey(server, project, "check")).key;
    const client = new FlagstaffClient({ baseUrl: server.url, apiKey: checkKey });
    const methods = {
      boolean: "getBooleanValue",
      string: "getStringValue",
      number: "getNumberValue",
      object: "getObjectValue",
    };
    await withTab(async (page) => {
      await signIn(page, server.url, writeKey);

      // Evaluate: one condition held, in plain words.
      await configure("checkout-theme", "staging", { status: "conditional" });
      await page.goto(`${server.url}/console/p/${project}/flags/checkout-theme?environment=staging&tab=evaluate`);
      await page.getByLabel("Actor ids").fill("alice");
      const rows = page.getByTestId("attribute-row");
      await rows.first().getByLabel("Attribute 1 name").fill("country");
      await rows.first().getByLabel("Attribute 1 value").fill("FR");
      await page.getByRole("button", { name: "Evaluate", exact: true }).click();
      const why = page.getByTestId("why");
      await why.waitFor();
      assert.equal(await why.innerText(), "Rule: targeting rule 1 “rule-1” (Europe): its one condition held.");

      for (const [name, type] of [
        ["new-checkout", "boolean"],
        ["checkout-theme", "string"],
        ["price", "number"],
        ["layout", "object"],
      ] as const) {
        await page.goto(`${server.url}/console/p/${project}/flags/${name}?environment=production&tab=evaluate`);
        const card = page.locator("section", { has: page.getByRole("heading", { name: "Check this flag" }) });
        await card.locator("pre code").first().waitFor();
        const blocks = await card.locator("pre code").allInnerTexts();
        /** The snippet that imports this, or uses this tool. */
        const code = (marker: string) => {
          const found = blocks.filter((b) => b.includes(marker));
          assert.equal(found.length, 1, `${name}: one snippet with ${marker}`);
          return found[0] as string;
        };
        // What the server answers for this flag, in its type: OFREP's value (what OpenFeature checks the call against).
        const ofrep = await server.request("POST", `/ofrep/v1/evaluate/flags/${name}`, {
          key: checkKey,
          body: { context: { targetingKey: "alice" } },
        });
        assert.equal(ofrep.status, 200, ofrep.text);
        assert.equal(typeof ofrep.body.value, type, `${name}: OFREP answers a ${type}`);
        for (const marker of ["@openfeature/server-sdk", "@openfeature/web-sdk"]) {
          const calls = [...code(marker).matchAll(/getClient\(\)\.(get\w+Value)\(/g)].map((m) => m[1]);
          assert.deepEqual(calls, [methods[type]], `${name} (${type}): the ${marker} snippet asks for a ${type}`);
        }
        // The SDK's call, made for real: a boolean flag's check answers whether it is on; any other's evaluate
        // answers its value, of its type.
        const sdk = code("@flagstaff/sdk");
        if (type === "boolean") {
          assert.match(sdk, /flagstaff\.flags\.check\("words", "new-checkout"/);
          assert.equal(typeof (await client.flags.check(project, name, { actorIds: ["alice"] })), "boolean");
        } else {
          assert.match(
            sdk,
            new RegExp(`const \\{ variant, value \\} = await flagstaff\\.flags\\.evaluate\\("words", "${name}"`),
          );
          assert.doesNotMatch(sdk, /flags\.check\(/);
          assert.equal(typeof (await client.flags.evaluate(project, name, { actorIds: ["alice"] })).value, type);
        }
        // curl: the check, and what it answers for this type.
        const curl = code("curl ");
        assert.match(curl, new RegExp(`/projects/words/flags/${name}/check\\?actorIds=alice`));
        if (type === "boolean") assert.match(curl, /# answers, for instance, \{"enabled":true\}/);
        else assert.match(curl, /# answers, for instance, \{"enabled":true,"variant":"[^"]+","value":/);
        if (type === "number") await card.screenshot({ path: join(SCREENSHOTS, "flag-snippets-number-light.png") });
      }
    });
  });
});
