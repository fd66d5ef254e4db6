// Targeting refusals in the console, in Chromium against a real server in this process: the rules changed
// through the API while edited on the flag page (412: "Use theirs" and "Save mine", each checked through
// HTTP), a prerequisite that would close a cycle (409 prerequisite_cycle, shown at the prerequisite), a
// variant removed while another environment serves it (409 variant_in_use), and a segment's conditions
// changed through the API while edited (412).
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Locator, Page } from "playwright-core";
import {
  browserSkip,
  closeBrowser,
  launchChromium,
  openTab,
  SCREENSHOTS,
  saveFlagChanges,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };

describe(`targeting refusals in the console, in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let project: string;
  let writeKey: string;

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "targeting-conflicts");
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
  const shoot = (locator: Locator, name: string) => locator.screenshot({ path: join(SCREENSHOTS, name) });
  const rules = (page: Page) => page.getByTestId("rule");
  const ruleIds = async (page: Page) =>
    rules(page).evaluateAll((items) => items.map((li) => li.getAttribute("data-rule-id")));
  const savedRuleIds = async (name: string) =>
    ((await api("GET", flagPath(name))).body.rules as { id: string }[]).map((r) => r.id);
  const targetingOf = (page: Page) => page.getByRole("region", { name: /^Targeting in / });
  const save = (page: Page) => page.getByTestId("pending-bar").getByRole("button", { name: "Review and save" });
  const countryRule = (id: string, country: string) => ({
    id,
    conditions: [{ attribute: "country", operator: "in", values: [country] }],
    serve: { variant: "on" },
  });

  /** Adds a rule on the page: id, country in `country`, serving the first variant. */
  async function addRule(page: Page, id: string, country: string) {
    const before = await rules(page).count();
    await targetingOf(page).getByRole("button", { name: "Add rule" }).click();
    const rule = rules(page).nth(before);
    await rule.getByLabel("Rule id", { exact: true }).fill(id);
    const c = rule.getByTestId("condition").nth(0);
    await c.getByLabel("Attribute", { exact: true }).fill("country");
    const box = c.getByLabel("Values", { exact: true });
    await box.fill(country);
    await box.press("Enter");
  }

  test(
    "412 on Save targeting: the rules changed through the API meanwhile; Use theirs, then Save mine",
    T,
    async () => {
      const flag = "contested-rules";
      assert.equal((await api("POST", flagPath(flag), {})).status, 201);
      assert.equal((await api("PATCH", flagPath(flag), { rules: [countryRule("first", "DE")] })).status, 200);
      const tab = await openTab(browser, "light");
      const { page } = tab;
      try {
        await signIn(page, server.url, writeKey);
        await page.goto(`${server.url}/console/p/${project}/flags/${flag}`);
        await waitFor("the saved rule", async () => (await ruleIds(page)).join() === "first");

        // ---- Round 1: mine is a new rule; theirs replaces the rules; Use theirs shows and keeps theirs ----
        await addRule(page, "mine", "AT");
        assert.equal(
          (await api("PATCH", flagPath(flag), { rules: [countryRule("theirs", "FR"), countryRule("first", "DE")] }))
            .status,
          200,
        );
        await saveFlagChanges(page);
        const bar = page.getByTestId("pending-bar");
        const conflict = bar.getByRole("alert").filter({ hasText: "was changed elsewhere" });
        await conflict.waitFor();
        assert.match(await conflict.innerText(), /Not saved: contested-rules was changed elsewhere/);
        assert.deepEqual(await ruleIds(page), ["first", "mine"], "my rules are still on screen");
        assert.deepEqual(await savedRuleIds(flag), ["theirs", "first"], "nothing of mine saved");
        await shoot(page.locator("main"), "targeting-conflict-412-light.png");
        await bar.getByRole("button", { name: "Use theirs" }).click();
        await waitFor("theirs on screen", async () => (await ruleIds(page)).join() === "theirs,first");
        assert.equal(await conflict.count(), 0, "the conflict is gone");
        await bar.waitFor({ state: "hidden" });
        assert.deepEqual(await savedRuleIds(flag), ["theirs", "first"], "theirs kept on the server");

        // ---- Round 2: the same, then Save mine: mine replaces theirs on the server ----
        await addRule(page, "mine", "AT");
        assert.equal((await api("PATCH", flagPath(flag), { rules: [countryRule("later", "IT")] })).status, 200);
        await saveFlagChanges(page);
        await conflict.waitFor();
        assert.deepEqual(await savedRuleIds(flag), ["later"]);
        const ifMatch: string[] = [];
        page.on("request", (r) => {
          if (r.method() === "PATCH") ifMatch.push(r.headers()["if-match"] ?? "(none)");
        });
        const version = (await api("GET", flagPath(flag))).headers.get("etag");
        // While the conflict is open the plain Save is not offered (it would send the stale version).
        assert.equal(await save(page).count(), 0, "the bar offers Save mine or Use theirs only");
        await bar.getByRole("button", { name: "Save mine" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Save changes" }).click();
        await waitFor("mine saved", () => savedRuleIds(flag), { until: (ids) => ids.join() === "theirs,first,mine" });
        assert.deepEqual(ifMatch, [version], "Save mine is sent on the version now on the server");
        const saved = (await api("GET", flagPath(flag))).body.rules;
        assert.deepEqual(saved[2], countryRule("mine", "AT"));
        await bar.waitFor({ state: "hidden" });
        assert.deepEqual(tab.problems, [], "no errors in the page");
      } finally {
        await tab.context.close();
      }
    },
  );

  test(
    "409 prerequisite_cycle: B requires A while A requires B; shown at the prerequisite, nothing saved",
    T,
    async () => {
      const [a, b] = ["cycle-a", "cycle-b"];
      assert.equal((await api("POST", flagPath(a), {})).status, 201);
      assert.equal((await api("POST", flagPath(b), {})).status, 201);
      assert.equal(
        (await api("PATCH", flagPath(a), { prerequisites: [{ flag: b, variants: ["on"] }] })).status,
        200,
        "A requires B",
      );
      const tab = await openTab(browser, "light");
      const { page } = tab;
      try {
        await signIn(page, server.url, writeKey);
        await page.goto(`${server.url}/console/p/${project}/flags/${b}`);
        const targeting = targetingOf(page);
        await targeting.getByRole("button", { name: "Add prerequisite" }).click();
        const prerequisite = targeting.getByTestId("prerequisite").nth(0);
        await prerequisite.getByLabel("Flag", { exact: true }).selectOption(a);
        await prerequisite.getByRole("checkbox", { name: "on" }).waitFor();
        assert.equal(await prerequisite.getByRole("checkbox", { name: "on" }).isChecked(), true);
        await saveFlagChanges(page);
        const refusal = prerequisite.getByRole("alert");
        await refusal.waitFor();
        // The message without its place ("prerequisites[0]: "), which the form shows.
        assert.equal(
          (await refusal.innerText()).trim(),
          "Refused by the server: prerequisites form a cycle: cycle-b → cycle-a → cycle-b",
        );
        assert.match(
          await page.getByTestId("targeting-refused").innerText(),
          /Not saved: the server refused one problem, shown at the field at fault\./,
        );
        await shoot(targeting.locator("section.prerequisites"), "targeting-conflict-cycle-light.png");
        assert.equal((await api("GET", flagPath(a))).body.prerequisites.length, 1, "A still requires B");
        assert.deepEqual((await api("GET", flagPath(b))).body.prerequisites, [], "nothing saved on B");
        assert.deepEqual(tab.problems, [], "no errors in the page");
      } finally {
        await tab.context.close();
      }
    },
  );

  test(
    "409 variant_in_use: a variant served in another environment cannot be removed; the variants unchanged",
    T,
    async () => {
      const flag = "in-use-variants";
      const variants = [
        { key: "classic", value: "classic" },
        { key: "blue", value: "#1e66f5" },
        { key: "green", value: "#40a02b" },
      ];
      assert.equal(
        (await api("POST", flagPath(flag), { type: "string", variants, onVariant: "blue", offVariant: "classic" }))
          .status,
        201,
      );
      assert.equal((await api("POST", `/projects/${project}/environments`, { id: "qa", name: "QA" })).status, 201);
      assert.equal((await api("PATCH", `${flagPath(flag)}?environment=qa`, { onVariant: "green" })).status, 200);
      assert.equal((await api("GET", `${flagPath(flag)}?environment=qa`)).body.onVariant, "green");
      const tab = await openTab(browser, "light");
      const { page } = tab;
      try {
        await signIn(page, server.url, writeKey);
        await page.goto(`${server.url}/console/p/${project}/flags/${flag}?tab=variants`);
        const card = page.getByRole("region", { name: "Variants" });
        await card.getByRole("button", { name: "Remove variant 3 (green)" }).click();
        assert.equal(await card.getByTestId("variant-row").count(), 2);
        await saveFlagChanges(page);
        const bar = page.getByTestId("pending-bar");
        const refusal = bar.getByText(/cannot drop a variant still in use/);
        await refusal.waitFor();
        const text = await refusal.innerText();
        assert.match(text, /Flag "in-use-variants" cannot drop a variant still in use: /);
        assert.match(text, /green/);
        assert.equal(await card.getByTestId("variant-row").count(), 2, "the edit is kept on screen");
        await shoot(page.locator("main"), "targeting-conflict-variant-in-use-light.png");
        assert.deepEqual((await api("GET", flagPath(flag))).body.variants, variants, "the variants unchanged");
        assert.equal((await api("GET", `${flagPath(flag)}?environment=qa`)).body.onVariant, "green");
        // Discard brings the saved variants back.
        await bar.getByRole("button", { name: "Discard changes" }).click();
        await waitFor("three variants again", async () => (await card.getByTestId("variant-row").count()) === 3);
        assert.deepEqual(tab.problems, [], "no errors in the page");
      } finally {
        await tab.context.close();
      }
    },
  );

  test("412 on Save conditions: a segment's conditions changed through the API meanwhile", T, async () => {
    const segment = (await api("POST", `/projects/${project}/segments`, { name: "Contested conditions" })).body;
    const segmentPath = `/projects/${project}/segments/${segment.id}`;
    const tab = await openTab(browser, "light");
    const { page } = tab;
    try {
      await signIn(page, server.url, writeKey);
      await page.goto(`${server.url}/console/p/${project}/segments/${segment.id}`);
      const card = page.getByRole("form", { name: "Conditions" });
      await card.getByRole("button", { name: /^Add condition/ }).click();
      const c = card.getByTestId("condition").nth(0);
      await c.getByLabel("Attribute", { exact: true }).fill("country");
      const box = c.getByLabel("Values", { exact: true });
      await box.fill("DE");
      await box.press("Enter");
      const theirs = [{ attribute: "plan", operator: "in", values: ["pro"] }];
      assert.equal((await api("PATCH", segmentPath, { conditions: theirs })).status, 200);
      await card.getByRole("button", { name: "Save conditions" }).click();
      await card.getByText("was changed elsewhere meanwhile").waitFor();
      assert.deepEqual((await api("GET", segmentPath)).body.conditions, theirs, "nothing of mine saved");
      // The page shows the latest conditions, the edit dropped.
      await waitFor(
        "theirs on screen",
        async () => (await c.getByLabel("Attribute", { exact: true }).inputValue()) === "plan",
      );
      assert.deepEqual(await c.getByRole("list", { name: "Chosen values" }).locator("li > span").allInnerTexts(), [
        "pro",
      ]);
      await shoot(card, "targeting-conflict-segment-412-light.png");
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  });
});
