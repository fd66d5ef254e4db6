// Managing a project's environments in the console (docs/console.md, "Environments"), in Chromium against a
// real server: a project admin signed in creates one as a copy of another, renames it, moves it, makes it
// the default and back, protects it, and deletes it after typing its name (the keys bound to it named and
// revoked); a writer sees the page read-only and is told why; a key bound to one environment is offered
// nothing. Every change is checked through the API. axe, and no sideways scroll at 390 px.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  launchChromium,
  openTab,
  screenshot,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };
const PASSWORD = "correct horse battery staple";
const project = "stages";

const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

describe(`managing environments in the console, in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;

  const api = <T = any>(method: string, path: string, body?: unknown, key?: string) =>
    server.request<T>(method, path, { ...(body === undefined ? {} : { body }), ...(key === undefined ? {} : { key }) });
  const environments = async () =>
    (await api("GET", `/projects/${project}/environments`)).body.data as {
      id: string;
      name: string;
      default: boolean;
      protected: boolean;
      description: string;
    }[];

  /** A member with a grant on the project, who signs in with PASSWORD. */
  async function member(email: string, name: string, role: "admin" | "write") {
    const res = await api("POST", "/users", { email, name, password: PASSWORD });
    assert.equal(res.status, 201, res.text);
    const put = await api("PUT", `/projects/${project}/access/${res.body.id}`, { role });
    assert.equal(put.status, 200, put.text);
  }

  before(
    async () => {
      server = await startServer({ dialect });
      const created = await api("POST", "/projects", {
        id: project,
        name: "Stages",
        environments: [
          { id: "production", name: "Production" },
          { id: "staging", name: "Staging" },
        ],
      });
      assert.equal(created.status, 201, created.text);
      assert.equal((await api("POST", `/projects/${project}/flags/checkout`, {})).status, 201);
      const on = await api("PATCH", `/projects/${project}/flags/checkout?environment=staging`, {
        status: "conditional",
        percentageActors: 25,
      });
      assert.equal(on.status, 200, on.text);
      await member("pat@example.com", "Pat Admin", "admin");
      await member("wes@example.com", "Wes Writer", "write");
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

  async function passwordSignIn(page: Page, email: string): Promise<void> {
    await page.goto(`${server.url}/console/`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in").waitFor();
  }

  /** The environments' names as the page lists them, in order. */
  const listed = (page: Page) => page.getByRole("list", { name: "Environments" }).getByRole("heading").allInnerTexts();

  test(
    "a project admin creates (as a copy), renames, moves, makes default, protects and deletes an environment",
    T,
    async () => {
      const tab = await openTab(browser);
      const { page } = tab;
      try {
        await passwordSignIn(page, "pat@example.com");
        await page.goto(`${server.url}/console/p/${project}/flags`);
        // Reached from the project's tabs, beside Keys, Webhooks and Access.
        await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Environments" }).click();
        await page.waitForURL(`**/console/p/${project}/environments**`);
        await page.getByRole("heading", { name: "Environments", level: 1 }).waitFor();
        assert.deepEqual(await listed(page), ["Production", "Staging"]);

        // Create, as a copy of staging.
        await page.getByRole("button", { name: "New environment" }).click();
        await page.getByLabel("Id", { exact: true }).fill("qa");
        await page.getByLabel("Name", { exact: true }).fill("QA");
        await page.getByLabel("Start from").selectOption({ label: "A copy of Staging" });
        await page.getByRole("button", { name: "Create environment" }).click();
        await page.getByRole("heading", { name: "QA" }).waitFor();
        assert.deepEqual(
          (await environments()).map((e) => e.id),
          ["production", "staging", "qa"],
        );
        const copied = await api("GET", `/projects/${project}/flags/checkout?environment=qa`);
        assert.deepEqual(
          [copied.body.status, copied.body.percentageActors],
          ["conditional", 25],
          "copied from staging",
        );
        // The switcher knows it at once.
        await page
          .getByLabel("Environment", { exact: true })
          .locator("option", { hasText: "QA" })
          .waitFor({ state: "attached" });

        // Rename.
        await page.getByRole("button", { name: "Rename QA" }).click();
        await page.getByLabel("Name", { exact: true }).fill("Quality");
        await page.getByLabel("Description", { exact: true }).fill("Manual testing before a release");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("heading", { name: "Quality" }).waitFor();
        const renamed = (await environments()).find((e) => e.id === "qa");
        assert.deepEqual([renamed?.name, renamed?.description], ["Quality", "Manual testing before a release"]);

        // Reorder: up twice, by keyboard focus kept on the moved environment.
        await page.getByRole("button", { name: "Move Quality up" }).click();
        await page.waitForFunction(() => document.activeElement?.id === "move-up-qa");
        assert.deepEqual(
          (await environments()).map((e) => e.id),
          ["production", "qa", "staging"],
        );
        await page.keyboard.press("Enter");
        await page.waitForFunction(() => document.activeElement?.id === "move-down-qa");
        assert.deepEqual(
          (await environments()).map((e) => e.id),
          ["qa", "production", "staging"],
        );
        assert.deepEqual(await listed(page), ["Quality", "Production", "Staging"]);
        await page.getByRole("button", { name: "Move Quality down" }).click();
        await page.waitForFunction(() => document.querySelectorAll("ol.environments h2")[1]?.textContent === "Quality");
        assert.deepEqual(
          (await environments()).map((e) => e.id),
          ["production", "qa", "staging"],
        );

        // Make staging the default (confirmed), then production again.
        await page.getByRole("button", { name: "Make Staging the default" }).click();
        const makeDefault = page.getByRole("dialog", { name: "Make Staging the default?" });
        assert.match(await makeDefault.innerText(), /Keys bound to no environment/);
        await makeDefault.getByRole("button", { name: "Make default" }).click();
        await page.getByRole("button", { name: "Make Production the default" }).waitFor();
        assert.equal((await environments()).find((e) => e.default)?.id, "staging");
        assert.equal(await page.getByRole("button", { name: "Delete Staging" }).isDisabled(), true, "the default");
        await page.getByRole("button", { name: "Make Production the default" }).click();
        await page
          .getByRole("dialog", { name: "Make Production the default?" })
          .getByRole("button", { name: "Make default" })
          .click();
        await page.getByRole("button", { name: "Make Staging the default" }).waitFor();
        assert.equal((await environments()).find((e) => e.default)?.id, "production");

        // Protect, then unprotect.
        await page.getByRole("button", { name: "Protect Quality", exact: true }).click();
        await page.getByRole("button", { name: "Unprotect Quality", exact: true }).waitFor();
        assert.equal((await environments()).find((e) => e.id === "qa")?.protected, true);
        await page.getByRole("button", { name: "Protect Staging", exact: true }).click();
        await page.getByRole("button", { name: "Unprotect Staging", exact: true }).waitFor();
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "environments-manage-light.png");
        await page.setViewportSize({ width: 390, height: 844 });
        assert.equal(await scrollsSideways(page), false, "no sideways scroll at 390 px");
        await screenshot(page, "environments-manage-390.png");
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.getByRole("button", { name: "Unprotect Quality", exact: true }).click();
        await page.getByRole("button", { name: "Protect Quality", exact: true }).waitFor();
        assert.equal((await environments()).find((e) => e.id === "qa")?.protected, false);

        // Delete, after typing its name: what is lost is said, the bound keys named.
        const key = await api("POST", `/projects/${project}/keys`, {
          name: "qa robot",
          role: "read",
          environment: "qa",
        });
        assert.equal(key.status, 201, key.text);
        await page.getByRole("button", { name: "Delete Quality" }).click();
        const dialog = page.getByRole("dialog", { name: "Delete Quality?" });
        await dialog.getByText("qa robot (read)").waitFor();
        assert.match(await dialog.innerText(), /configuration of every flag is deleted/);
        assert.match(await dialog.innerText(), /Every key bound to it is revoked: 1 key/);
        const confirm = dialog.getByRole("button", { name: "Delete environment" });
        assert.equal(await confirm.isDisabled(), true, "until the name is typed");
        await dialog.getByLabel("Type Quality to confirm").fill("Qualit");
        assert.equal(await confirm.isDisabled(), true);
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "environments-delete-light.png", false);
        await dialog.getByLabel("Type Quality to confirm").fill("Quality");
        await confirm.click();
        await page.getByRole("heading", { name: "Quality" }).waitFor({ state: "detached" });
        assert.deepEqual(
          (await environments()).map((e) => e.id),
          ["production", "staging"],
        );
        const revoked = await server.request("GET", "/whoami", { key: key.body.key });
        assert.equal(revoked.status, 401, "the bound key is revoked");
        assert.deepEqual(tab.problems, [], "no errors in the page");
      } finally {
        await tab.context.close();
      }
    },
  );

  test(
    "a writer sees the environments read-only, and why; a key bound to one environment is offered nothing",
    T,
    async () => {
      const tab = await openTab(browser, "dark");
      const { page } = tab;
      try {
        await passwordSignIn(page, "wes@example.com");
        await page.goto(`${server.url}/console/p/${project}/environments`);
        await page.getByRole("list", { name: "Environments" }).getByRole("heading", { name: "Production" }).waitFor();
        await page.getByText("Read-only: only admins of this project manage this.").waitFor();
        for (const name of [
          "New environment",
          "Move Staging up",
          "Rename Staging",
          "Protect Production",
          "Delete Staging",
        ]) {
          const button = page.getByRole("button", { name, exact: true });
          assert.equal(await button.isDisabled(), true, `${name} is disabled`);
        }
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "environments-read-only-dark.png");
        await page.setViewportSize({ width: 390, height: 844 });
        assert.equal(await scrollsSideways(page), false, "no sideways scroll at 390 px");
        await screenshot(page, "environments-read-only-390.png");
        assert.deepEqual(tab.problems, [], "no errors in the page");
      } finally {
        await tab.context.close();
      }

      // The project admin's own admin key, bound to staging: the server refuses it every environment's
      // creation and move, and the default (docs/environments.md), so the page offers nothing.
      const login = await server.request("POST", "/auth/login", {
        key: null,
        body: { email: "pat@example.com", password: PASSWORD },
      });
      assert.equal(login.status, 200, login.text);
      const cookie = login.headers.getSetCookie()[0]?.split(";")[0] ?? "";
      const bound = await server.request("POST", "/users/me/keys", {
        key: null,
        headers: { cookie, "sec-fetch-site": "same-origin" },
        body: { name: "pat on staging", project, environment: "staging", role: "admin" },
      });
      assert.equal(bound.status, 201, bound.text);
      const keyTab = await openTab(browser);
      try {
        await signIn(keyTab.page, server.url, bound.body.key);
        await keyTab.page.goto(`${server.url}/console/p/${project}/environments`);
        await keyTab.page.getByText("Read-only: this key is bound to Staging").waitFor();
        // It still sees every environment (any key lists them), and may change none of them here.
        assert.deepEqual(await listed(keyTab.page), ["Production", "Staging"]);
        assert.equal(await keyTab.page.getByRole("button", { name: "New environment" }).isDisabled(), true);
        assert.equal(
          await keyTab.page.getByRole("button", { name: "Unprotect Staging", exact: true }).isDisabled(),
          true,
        );
        assert.deepEqual(keyTab.problems, [], "no errors in the page");
      } finally {
        await keyTab.context.close();
      }
    },
  );
});
