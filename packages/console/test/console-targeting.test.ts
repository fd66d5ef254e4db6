// Targeting in the console (issue 25), in Chromium against a real server in this process: a string flag
// created with its variants, the rule builder (an in-list rule, a split whose live total is red at 90 and
// blocks Save until it is 100), a rule dragged above another and the order checked through the API, a
// segment's conditions, the Evaluate panel with attributes, and a server refusal shown at the rule at fault.
import assert from "node:assert/strict";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Locator, Page } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  flagTab,
  launchChromium,
  openTab,
  SCREENSHOTS,
  saveFlagChanges,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };

describe(`targeting in the console, in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let project: string;
  let writeKey: string;

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "targeting");
      writeKey = (await createKey(server, project, "write")).key;
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

  const api = <B = any>(method: string, path: string, body?: unknown) =>
    server.request<B>(method, path, body === undefined ? {} : { body });
  const flagPath = (name: string) => `/projects/${project}/flags/${name}`;
  /** A card of the page, by its heading, shot alone (a whole flag page is very long). */
  const shoot = (locator: Locator, name: string) => locator.screenshot({ path: join(SCREENSHOTS, name) });
  const rules = (page: Page) => page.getByTestId("rule");
  const ruleIds = async (page: Page) =>
    rules(page).evaluateAll((items) => items.map((li) => li.getAttribute("data-rule-id")));
  const savedRuleIds = async (name: string) =>
    ((await api("GET", flagPath(name))).body.rules as { id: string }[]).map((r) => r.id);
  const save = (page: Page) => page.getByTestId("pending-bar").getByRole("button", { name: "Review and save" });

  /** Fills a rule's first condition: attribute, operator and values (typed with commas, then Enter). */
  async function condition(c: Locator, attribute: string, operator: string, values: string) {
    if (attribute) await c.getByLabel("Attribute", { exact: true }).fill(attribute);
    await c.getByLabel("Operator", { exact: true }).selectOption(operator);
    const box = c.getByLabel("Values", { exact: true });
    await box.fill(values);
    await box.press("Enter");
  }

  test(
    "a string flag with variants; two rules, a split's live total, drag to reorder, a segment's conditions, Evaluate with attributes, a refusal at its rule",
    T,
    async () => {
      const tab = await openTab(browser, "light");
      const { page } = tab;
      try {
        await signIn(page, server.url, writeKey);

        // ---- Create: type string, three variants, on and off variants ----
        await page.getByRole("button", { name: "New flag" }).click();
        await page.getByLabel("Name", { exact: true }).fill("checkout-theme");
        await page.getByLabel("Type", { exact: true }).selectOption("string");
        const form = page.getByRole("form", { name: "New flag" });
        // Two empty rows to start with; a third added.
        assert.equal(await form.getByTestId("variant-row").count(), 2);
        await form.getByRole("button", { name: "Add variant" }).click();
        const variants: [string, string, string][] = [
          ["classic", "classic", "The theme of today"],
          ["blue", "#1e66f5", ""],
          ["green", "#40a02b", ""],
        ];
        for (const [i, [key, value, description]] of variants.entries()) {
          await form.getByLabel(`Key ${i + 1}`, { exact: true }).fill(key);
          await form.getByLabel(`Value ${i + 1}`, { exact: true }).fill(value);
          if (description) await form.getByLabel(`Description ${i + 1}`, { exact: true }).fill(description);
        }
        await form.getByLabel("On variant (served when enabled)").selectOption("blue");
        await form.getByLabel("Off variant (served when disabled or by default)").selectOption("classic");
        await shoot(form, "targeting-new-flag-light.png");
        await form.getByRole("button", { name: "Create flag" }).click();
        await page.getByRole("heading", { name: "checkout-theme", level: 1 }).waitFor();
        const created = (await api("GET", flagPath("checkout-theme"))).body;
        assert.equal(created.type, "string");
        assert.deepEqual(
          created.variants,
          variants.map(([key, value, description]) => ({ key, value, ...(description ? { description } : {}) })),
        );
        assert.equal(created.onVariant, "blue");
        assert.equal(created.offVariant, "classic");
        assert.deepEqual(created.rules, []);

        // Rules are evaluated while conditional (the status control is tested elsewhere).
        assert.equal((await api("PATCH", flagPath("checkout-theme"), { status: "conditional" })).status, 200);
        await page
          .getByRole("radio", { name: /Conditional/ })
          .and(page.locator(":checked"))
          .waitFor();

        // The variants card (its tab) shows them, editable for a string flag.
        await flagTab(page, "Variants");
        const variantsCard = page.getByRole("region", { name: "Variants" });
        assert.equal(await variantsCard.getByLabel("Key 3", { exact: true }).inputValue(), "green");

        // ---- Rule 1: country in DE, AT serves green ----
        await flagTab(page, "Targeting");
        const targeting = page.getByRole("region", { name: /^Targeting in / });
        assert.equal(await targeting.getByLabel("On variant", { exact: true }).inputValue(), "blue");
        await targeting.getByRole("button", { name: "Add rule" }).click();
        const first = rules(page).nth(0);
        await first.getByLabel("Rule id", { exact: true }).fill("de-users");
        await first.getByLabel("Rule description", { exact: true }).fill("German-speaking customers");
        // Every operator of core's CONDITION_OPERATORS is offered in a rule.
        const operators = await first
          .getByLabel("Operator", { exact: true })
          .evaluate((select: HTMLSelectElement) => [...select.options].map((o) => o.value));
        assert.deepEqual(operators, [
          "in",
          "not_in",
          "starts_with",
          "ends_with",
          "contains",
          "matches",
          "eq",
          "gt",
          "gte",
          "lt",
          "lte",
          "semver_eq",
          "semver_gt",
          "semver_gte",
          "semver_lt",
          "semver_lte",
          "before",
          "after",
          "present",
          "in_segment",
          "not_in_segment",
        ]);
        await condition(first.getByTestId("condition").nth(0), "country", "in", "DE, AT");
        const chips = await first.getByRole("list", { name: "Chosen values" }).locator("li > span").allInnerTexts();
        assert.deepEqual(chips, ["DE", "AT"]);
        await first.getByLabel("Variant served", { exact: true }).selectOption("green");

        // ---- Rule 2: plan in pro, a split; the live total red at 90, Save disabled with the reason ----
        await targeting.getByRole("button", { name: "Add rule" }).click();
        const second = rules(page).nth(1);
        await second.getByLabel("Rule id", { exact: true }).fill("pro-split");
        await condition(second.getByTestId("condition").nth(0), "plan", "in", "pro");
        await second.getByRole("radio", { name: "a split" }).check();
        await second.getByLabel("Weight of classic (%)").fill("50");
        await second.getByLabel("Weight of blue (%)").fill("40");
        await second.getByLabel("Weight of green (%)").fill("0");
        const total = second.getByTestId("split-total");
        assert.equal(await total.innerText(), "90%: 10% short of 100%");
        const red = await total.evaluate((el) => getComputedStyle(el).color);
        assert.equal(red, "rgb(179, 38, 30)", "the total is shown in the danger red (#b3261e)");
        assert.equal(await save(page).isDisabled(), true, "Save is disabled while the split is not 100");
        const reason = page.getByTestId("save-reason");
        assert.match(await reason.innerText(), /Rule 2 “pro-split”: its split totals 90%, not 100% \(10% short\)/);
        assert.equal(await save(page).getAttribute("aria-describedby"), "pending-blocked");
        await shoot(targeting, "targeting-split-short-light.png");
        await second.getByLabel("Weight of blue (%)").fill("50");
        assert.equal(await total.innerText(), "100% ✓");
        assert.notEqual(await total.evaluate((el) => getComputedStyle(el).color), red);
        assert.equal(await save(page).isEnabled(), true);

        // ---- Drag rule 2 above rule 1, then save: the order is the server's ----
        assert.deepEqual(await ruleIds(page), ["de-users", "pro-split"]);
        // Both rules in view, so that nothing scrolls between the press on the handle and the drop.
        await page.setViewportSize({ width: 1280, height: 1600 });
        await first.scrollIntoViewIfNeeded();
        await second.getByTestId("drag-handle").dragTo(first, { targetPosition: { x: 60, y: 6 } });
        await waitFor("pro-split first on screen", async () => (await ruleIds(page))[0] === "pro-split");
        assert.deepEqual(await ruleIds(page), ["pro-split", "de-users"]);
        // The same by keyboard: Move down and back up, focus staying on the moved rule's button.
        await page.getByRole("button", { name: "Move Rule 1 “pro-split” down" }).focus();
        await page.keyboard.press("Enter");
        await waitFor("moved down", async () => (await ruleIds(page))[0] === "de-users");
        // Move down is disabled on the last rule: focus goes to its Move up.
        assert.equal(
          await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
          "Move Rule 2 “pro-split” up",
        );
        await page.getByRole("button", { name: "Move Rule 2 “pro-split” up" }).press("Enter");
        await waitFor("moved back up", async () => (await ruleIds(page))[0] === "pro-split");
        assert.equal(
          await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
          "Move Rule 1 “pro-split” down",
        );
        const patches: { body: unknown; ifMatch: string | undefined }[] = [];
        page.on("request", (r) => {
          if (r.method() === "PATCH") patches.push({ body: r.postDataJSON(), ifMatch: r.headers()["if-match"] });
        });
        await saveFlagChanges(page);
        await waitFor("the order saved", () => savedRuleIds("checkout-theme"), {
          until: (ids) => ids.join() === "pro-split,de-users",
        });
        assert.equal(patches.length, 1);
        assert.ok(patches[0]?.ifMatch, "the save sends If-Match");
        assert.deepEqual(Object.keys(patches[0]?.body as object).sort(), [
          "offVariant",
          "onVariant",
          "prerequisites",
          "rules",
        ]);
        const saved = (await api("GET", flagPath("checkout-theme"))).body;
        assert.deepEqual(saved.rules, [
          {
            id: "pro-split",
            conditions: [{ attribute: "plan", operator: "in", values: ["pro"] }],
            serve: {
              split: {
                weights: [
                  { variant: "classic", weight: 50 },
                  { variant: "blue", weight: 50 },
                  { variant: "green", weight: 0 },
                ],
              },
            },
          },
          {
            id: "de-users",
            description: "German-speaking customers",
            conditions: [{ attribute: "country", operator: "in", values: ["DE", "AT"] }],
            serve: { variant: "green" },
          },
        ]);
        await page.getByTestId("pending-bar").waitFor({ state: "hidden" });

        // ---- A segment's conditions: country in DE, FR (no segment operators there) ----
        const eu = (await api("POST", `/projects/${project}/segments`, { name: "EU" })).body;
        const beta = (await api("POST", `/projects/${project}/segments`, { name: "Beta" })).body;
        await page.goto(`${server.url}/console/p/${project}/segments/${eu.id}`);
        const conditionsCard = page.getByRole("form", { name: "Conditions" });
        await conditionsCard.getByRole("button", { name: /^Add condition/ }).click();
        const segmentCondition = conditionsCard.getByTestId("condition").nth(0);
        const segmentOperators = await segmentCondition
          .getByLabel("Operator", { exact: true })
          .evaluate((select: HTMLSelectElement) => [...select.options].map((o) => o.value));
        assert.equal(segmentOperators.includes("in_segment"), false);
        assert.equal(segmentOperators.includes("not_in_segment"), false);
        assert.equal(segmentOperators.length, 19);
        await condition(segmentCondition, "country", "in", "DE, FR");
        await segmentCondition.getByLabel("Ignore case").check();
        await conditionsCard.getByRole("button", { name: "Save conditions" }).click();
        await waitFor(
          "the segment's conditions saved",
          async () => (await api("GET", `/projects/${project}/segments/${eu.id}`)).body.conditions,
          {
            until: (c) =>
              isDeepStrictEqual(c, [
                { attribute: "country", operator: "in", values: ["DE", "FR"], caseInsensitive: true },
              ]),
          },
        );
        await shoot(conditionsCard, "targeting-segment-conditions-light.png");

        // ---- Rule 3: in_segment EU serves blue, saved ----
        await page.goto(`${server.url}/console/p/${project}/flags/checkout-theme`);
        await waitFor("the saved rules", async () => (await ruleIds(page)).length === 2);
        await targeting.getByRole("button", { name: "Add rule" }).click();
        const third = rules(page).nth(2);
        await third.getByLabel("Rule id", { exact: true }).fill("eu");
        const thirdCondition = third.getByTestId("condition").nth(0);
        await thirdCondition.getByLabel("Operator", { exact: true }).selectOption("in_segment");
        assert.equal(await thirdCondition.getByLabel("Attribute", { exact: true }).count(), 0, "no attribute");
        await thirdCondition.getByLabel("Segments", { exact: true }).selectOption({ label: "EU" });
        await third.getByLabel("Variant served", { exact: true }).selectOption("blue");
        await saveFlagChanges(page);
        await waitFor("three rules saved", () => savedRuleIds("checkout-theme"), {
          until: (ids) => ids.join() === "pro-split,de-users,eu",
        });
        assert.deepEqual((await api("GET", flagPath("checkout-theme"))).body.rules[2].conditions, [
          { operator: "in_segment", values: [eu.id] },
        ]);

        // ---- Evaluate with attributes ----
        await flagTab(page, "Evaluate");
        const evaluate = page.getByRole("region", { name: "Evaluate" });
        await evaluate.getByLabel("Actor ids").fill("ann");
        await evaluate.getByLabel("Attribute 1 name").fill("country");
        await evaluate.getByLabel("Attribute 1 value").fill("AT");
        await evaluate.getByRole("button", { name: "Add attribute" }).click();
        await evaluate.getByLabel("Attribute 2 name").fill("plan");
        await evaluate.getByLabel("Attribute 2 value").fill("free, trial");
        await evaluate.getByRole("button", { name: "Evaluate", exact: true }).click();
        const result = evaluate.getByTestId("evaluation");
        await waitFor(
          "green by de-users",
          async () => (await result.getByTestId("evaluation-variant").innerText()) === "green",
        );
        assert.equal(await result.getByTestId("evaluation-value").innerText(), '"#40a02b"');
        assert.equal(await result.getByTestId("evaluation-reason").innerText(), "TARGETING_MATCH");
        assert.equal(
          await result.getByTestId("evaluation-rule").innerText(),
          "2. de-users (German-speaking customers)",
        );
        assert.match(await result.getByTestId("why").innerText(), /targeting rule 2 “de-users”/);
        // The same through the API, as the panel sent it (a value with commas is a list).
        const explained = await api(
          "GET",
          `${flagPath("checkout-theme")}/explain?actorIds=ann&attributes[country]=AT&attributes[plan][]=free&attributes[plan][]=trial`,
        );
        assert.equal(explained.body.variant, "green");
        assert.equal(explained.body.matchedRule.id, "de-users");
        // fr (lower case): not in de-users, in the segment EU by its case-insensitive conditions.
        await evaluate.getByLabel("Attribute 1 value").fill("fr");
        await evaluate.getByRole("button", { name: "Evaluate", exact: true }).click();
        await waitFor("blue by eu", async () =>
          (await result.getByTestId("evaluation-rule").innerText()).startsWith("3. eu"),
        );
        assert.equal(await result.getByTestId("evaluation-variant").innerText(), "blue");
        await evaluate.getByLabel("Attribute 2 value").fill("pro");
        await evaluate.getByRole("button", { name: "Evaluate", exact: true }).click();
        await waitFor(
          "split by pro-split",
          async () => (await result.getByTestId("evaluation-rule").innerText()) === "1. pro-split",
        );
        assert.equal(await result.getByTestId("evaluation-reason").innerText(), "SPLIT");
        assert.ok(["classic", "blue"].includes(await result.getByTestId("evaluation-variant").innerText()));
        await shoot(evaluate, "targeting-evaluate-light.png");

        // ---- A refusal only the server can know: a segment deleted meanwhile, shown at rule 4's condition ----
        await flagTab(page, "Targeting");
        await targeting.getByRole("button", { name: "Add rule" }).click();
        const fourth = rules(page).nth(3);
        await fourth.getByLabel("Rule id", { exact: true }).fill("beta");
        const fourthCondition = fourth.getByTestId("condition").nth(0);
        await fourthCondition.getByLabel("Operator", { exact: true }).selectOption("in_segment");
        await fourthCondition.getByLabel("Segments", { exact: true }).selectOption({ label: "Beta" });
        assert.equal((await api("DELETE", `/projects/${project}/segments/${beta.id}`)).status, 204);
        await saveFlagChanges(page);
        const refusal = fourthCondition.getByTestId("condition-problems");
        await refusal.waitFor();
        assert.match(await refusal.innerText(), /Refused by the server: values\[0\]: there is no segment/);
        assert.equal(await fourth.locator("fieldset.rule-box").getAttribute("aria-invalid"), "true");
        for (const i of [0, 1, 2]) {
          assert.equal(await rules(page).nth(i).getByTestId("condition-problems").count(), 0, `rule ${i + 1} is fine`);
        }
        assert.match(await page.getByTestId("targeting-refused").innerText(), /shown at the rule at fault/);
        assert.deepEqual(await savedRuleIds("checkout-theme"), ["pro-split", "de-users", "eu"], "nothing saved");
        await shoot(fourth, "targeting-refused-light.png");
        await fourth.scrollIntoViewIfNeeded();
        assert.deepEqual(await axeViolations(page), [], "axe on the flag page with its rules");
        assert.deepEqual(tab.problems, [], "no errors in the page");
      } finally {
        await tab.context.close();
      }
    },
  );

  test("dark: the rule builder and a segment's conditions as saved; a read key sees them disabled", T, async () => {
    const tab = await openTab(browser, "dark");
    const { page } = tab;
    try {
      await signIn(page, server.url, writeKey);
      await page.goto(`${server.url}/console/p/${project}/flags/checkout-theme`);
      const targeting = page.getByRole("region", { name: /^Targeting in / });
      await waitFor("the saved rules", async () => (await ruleIds(page)).length === 3);
      assert.equal(await rules(page).nth(0).getByTestId("split-total").innerText(), "100% ✓");
      await shoot(targeting, "targeting-rules-dark.png");
      assert.deepEqual(await axeViolations(page), [], "axe in the dark theme");
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
    const read = await openTab(browser, "light");
    try {
      const readKey = (await createKey(server, project, "read")).key;
      await signIn(read.page, server.url, readKey);
      await read.page.goto(`${server.url}/console/p/${project}/flags/checkout-theme`);
      await waitFor("the saved rules", async () => (await ruleIds(read.page)).length === 3);
      assert.equal(await read.page.getByRole("button", { name: "Add rule" }).isDisabled(), true);
      assert.equal(await read.page.getByTestId("pending-bar").count(), 0, "nothing to save");
      assert.equal(await rules(read.page).nth(1).getByLabel("Rule id", { exact: true }).isDisabled(), true);
      assert.deepEqual(read.problems, [], "no errors in the page");
    } finally {
      await read.context.close();
    }
  });
});
