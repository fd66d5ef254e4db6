// A person's own password in the console (docs/people.md, "Your own password"; docs/console.md, "Me"), in
// Chromium against a real server: invited by a one-time link (made by `admin-key user create`, as an admin
// makes it), the person lands on Me, is asked to set a password, sets it, signs out and signs in with it;
// then changes it, a wrong current password shown at its field without signing them out, and their other
// browser signed out. Checked through the API too; axe, and no sideways scroll at 390 px.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runAdminKeyCommand } from "@flagstaff/server/dist/src/admin-key-command.js";
import { DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
import { axeViolations, browserSkip, closeBrowser, launchChromium, openTab, screenshot } from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };
const FIRST = "my very first console password";
const SECOND = "and now a second one, longer";

/** Whether the page scrolls sideways (it must not, at any width). */
const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

describe(`a person's own password in the web console in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;

  before(
    async () => {
      server = await startServer({ dialect });
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

  /** `admin-key user create` on the server's database: the person, and their one-time link. */
  async function invite(email: string, name: string): Promise<{ id: string; link: string }> {
    let stdout = "";
    let stderr = "";
    const code = await runAdminKeyCommand(["user", "create", "--email", email, "--name", name, "--json"], {
      env: { DATABASE_URL: server.databaseUrl, PUBLIC_URL: server.url },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    });
    assert.equal(code, 0, stderr);
    const created = JSON.parse(stdout);
    return { id: created.id, link: created.signInLink };
  }

  const hasPassword = async (id: string) => {
    const res = await server.request("GET", `/users/${id}`);
    assert.equal(res.status, 200, res.text);
    return res.body.hasPassword as boolean;
  };

  async function passwordSignIn(page: Page, email: string, password: string): Promise<void> {
    await page.goto(`${server.url}/console/`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in").waitFor();
  }

  test("arriving by a one-time link: asked to set a password on Me, set it, sign out, sign in with it", T, async () => {
    const email = "lin@example.com";
    const invited = await invite(email, "Lin Linked");
    const tab = await openTab(browser);
    const { page } = tab;
    try {
      await page.goto(invited.link);
      await page.waitForURL("**/console/me?signedInBy=link");
      await page.getByTestId("signed-in").waitFor();
      const welcome = page.getByRole("status").filter({ hasText: "one-time link" });
      await welcome.waitFor();
      assert.match(await welcome.innerText(), /cannot be used again/);
      assert.match(await welcome.innerText(), /lin@example\.com/);
      // No password yet: no current password is asked for.
      assert.equal(await page.getByLabel("Current password").count(), 0);
      await page.getByRole("button", { name: "Set password" }).waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "people-me-set-password.png");
      await page.setViewportSize({ width: 390, height: 844 });
      assert.equal(await scrollsSideways(page), false, "no sideways scroll at 390 px");
      await screenshot(page, "people-me-set-password-390.png");
      await page.setViewportSize({ width: 1280, height: 900 });

      // Two that differ are caught before anything is sent.
      await page.getByLabel("New password", { exact: true }).fill(FIRST);
      await page.getByLabel("Repeat the new password").fill(`${FIRST}!`);
      await page.getByText("The two new passwords differ.").waitFor();
      assert.equal(await page.getByRole("button", { name: "Set password" }).isDisabled(), true);
      assert.equal(await hasPassword(invited.id), false);

      await page.getByLabel("Repeat the new password").fill(FIRST);
      await page.getByRole("button", { name: "Set password" }).click();
      await page.getByText("Your password is set: next time, sign in with lin@example.com and it.").waitFor();
      assert.equal(await hasPassword(invited.id), true, "set, as the API shows");
      assert.equal(new URL(page.url()).search, "", "the link's mark leaves the URL");
      assert.equal(await welcome.count(), 0, "the prompt is gone");
      // Now it is a change: the current password is asked for.
      await page.getByLabel("Current password").waitFor();
      await page.getByRole("button", { name: "Change password" }).waitFor();

      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      await page.getByLabel("E-mail").waitFor();
      // The link was used: it signs in no more.
      await page.goto(invited.link);
      await page.getByText(/link/i).first().waitFor();
      assert.equal(await page.getByTestId("signed-in").count(), 0);

      await passwordSignIn(page, email, FIRST);
      assert.match(await page.getByTestId("signed-in").innerText(), /Lin Linked/);
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  });

  test(
    "changing it: a wrong current password is shown at its field and signs no one out; the other browser is signed out",
    T,
    async () => {
      const email = "cam@example.com";
      const created = await server.request("POST", "/users", { body: { email, name: "Cam Changer", password: FIRST } });
      assert.equal(created.status, 201, created.text);
      const here = await openTab(browser, "dark");
      const there = await openTab(browser);
      try {
        await passwordSignIn(there.page, email, FIRST);
        await passwordSignIn(here.page, email, FIRST);
        const { page } = here;
        await page.goto(`${server.url}/console/me`);
        await page.getByLabel("Current password").fill("this is not my password");
        await page.getByLabel("New password", { exact: true }).fill(SECOND);
        await page.getByLabel("Repeat the new password").fill(SECOND);
        await page.getByRole("button", { name: "Change password" }).click();
        await page.getByText("Current password is wrong.").waitFor();
        assert.equal(await page.getByLabel("Current password").getAttribute("aria-invalid"), "true");
        // The 401 of a wrong current password does not sign the console out.
        assert.equal(await page.getByTestId("signed-in").count(), 1);
        await screenshot(page, "people-me-change-password-wrong.png");

        await page.getByLabel("Current password").fill(FIRST);
        await page.getByRole("button", { name: "Change password" }).click();
        await page.getByText("Your password is changed.").waitFor();
        assert.deepEqual(await axeViolations(page), []);

        // The other browser's session ended: its next request signs it out, saying why.
        await there.page.reload();
        await there.page.getByLabel("E-mail").waitFor();
        // This one goes on.
        await page.reload();
        await page.getByTestId("signed-in").waitFor();
        const old = await server.request("POST", "/auth/login", { key: null, body: { email, password: FIRST } });
        assert.equal(old.status, 401);
        const fresh = await server.request("POST", "/auth/login", { key: null, body: { email, password: SECOND } });
        assert.equal(fresh.status, 200, fresh.text);
        assert.deepEqual(here.problems, [], "no errors in the page");
      } finally {
        await here.context.close();
        await there.context.close();
      }
    },
  );
});
