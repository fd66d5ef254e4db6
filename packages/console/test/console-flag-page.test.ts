// The flag page in tabs with one Save (issue 32, item 11), in Chromium against a real server: edits in
// several tabs survive moving between tabs, are listed by one bar, reviewed in one dialog and sent as ONE
// PATCH with ONE If-Match (the version the first edit started from) and the comment, which the history
// shows. A flag changed elsewhere meanwhile keeps every edit (Save mine / Use theirs); an edit with a
// problem holds the Save with its reason; an actor attached at once does not turn the pending edits into
// a conflict; leaving with unsaved edits asks first. Each checked through the API; axe; 1280 and 390 px.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Page, Request } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  flagTab,
  launchChromium,
  openTab,
  saveFlagChanges,
  screenshot,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };

describe(`the flag page: tabs and one Save, in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let project: string;
  let writeKey: string;

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "flag-page");
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
  const getFlag = async (name: string) => {
    const res = await api("GET", flagPath(name));
    return { flag: res.body, etag: res.headers.get("etag") };
  };
  const bar = (page: Page) => page.getByTestId("pending-bar");
  /** Every PATCH the page sends to the flag: its If-Match and its body. */
  const recordPatches = (page: Page, name: string) => {
    const sent: { ifMatch: string | undefined; body: any }[] = [];
    page.on("request", (request: Request) => {
      if (request.method() === "PATCH" && new URL(request.url()).pathname === flagPath(name)) {
        sent.push({ ifMatch: request.headers()["if-match"], body: request.postDataJSON() });
      }
    });
    return sent;
  };
  async function createTyped(name: string) {
    const created = await api("POST", flagPath(name), {
      type: "string",
      variants: [
        { key: "control", value: "Buy" },
        { key: "bold", value: "BUY NOW" },
      ],
    });
    assert.equal(created.status, 201, created.text);
  }
  async function open(page: Page, name: string) {
    await signIn(page, server.url, writeKey);
    await page.goto(`${server.url}/console/p/${project}/flags/${name}`);
    await page.getByRole("heading", { name, level: 1 }).waitFor();
  }

  test(
    "edits in three tabs are kept across tabs, reviewed together and saved as one PATCH with one If-Match and the comment",
    T,
    async () => {
      const name = "checkout-copy";
      await createTyped(name);
      const loaded = await getFlag(name);
      const tab = await openTab(browser, "light");
      const { page } = tab;
      try {
        await open(page, name);
        const sent = recordPatches(page, name);
        const tabs = page.getByRole("tab");
        assert.deepEqual(await tabs.allTextContents(), [
          "Targeting",
          "Variants",
          "Evaluate",
          "Usage",
          "Settings",
          "History",
        ]);
        assert.equal(await page.getByRole("tab", { name: "Targeting" }).getAttribute("aria-selected"), "true");
        assert.equal(await bar(page).count(), 0, "no bar while nothing is changed");

        // Targeting: the status and a percentage.
        await page.getByRole("radio", { name: /Conditional/ }).check();
        await page.getByLabel("Percentage of actors").selectOption("25");
        // Variants: a third variant.
        await flagTab(page, "Variants");
        assert.equal(new URL(page.url()).searchParams.get("tab"), "variants", "the tab is in the URL");
        await page.getByRole("button", { name: "Add variant" }).click();
        await page.getByLabel("Key 3").fill("calm");
        await page.getByLabel("Value 3").fill("Continue");
        // Settings: the description.
        await flagTab(page, "Settings");
        await page.getByLabel("Description", { exact: true }).fill("Checkout button copy");
        // Back on Targeting, the first edits are still there.
        await flagTab(page, "Targeting");
        assert.equal(await page.getByRole("radio", { name: /Conditional/ }).isChecked(), true);
        assert.equal(await page.getByLabel("Percentage of actors").inputValue(), "25");
        for (const t of ["Targeting", "Variants", "Settings"]) {
          assert.match(
            (await page.getByRole("tab", { name: new RegExp(`^${t}`) }).textContent()) ?? "",
            /unsaved changes/,
            `${t} says it holds unsaved changes`,
          );
        }
        assert.doesNotMatch((await page.getByRole("tab", { name: /^Evaluate/ }).textContent()) ?? "", /unsaved/);
        await bar(page).getByText("4 unsaved changes: Status, Percentages, Variants, Description").waitFor();
        assert.equal(sent.length, 0, "nothing is sent before the Save");
        await screenshot(page, "flag-page-pending-1280.png");

        // The review lists every change, the flag's and the environment's, before anything is sent.
        await bar(page).getByRole("button", { name: "Review and save" }).click();
        const dialog = page.getByRole("dialog");
        const review = dialog.getByTestId("pending-review");
        await review.waitFor();
        const text = (await review.textContent()) ?? "";
        for (const expected of [
          "In every environment",
          "Description",
          "Checkout button copy",
          "Variants (2 → 3)",
          "calm",
          "In Production",
          "Status",
          "conditional: served by its targeting there",
          "Percentage of actors",
          "25%",
        ]) {
          assert.ok(text.includes(expected), `the review says ${expected}: ${text}`);
        }
        assert.deepEqual(await axeViolations(page), [], "the review dialog passes axe");
        await dialog.getByLabel("Comment (optional)").fill("Launch copy test for the sale");
        await screenshot(page, "flag-page-review-1280.png", false);
        await dialog.getByRole("button", { name: "Save changes" }).click();
        await bar(page).waitFor({ state: "hidden" });

        assert.equal(sent.length, 1, "one PATCH");
        assert.equal(sent[0]?.ifMatch, loaded.etag, "with the version the edits started from");
        assert.deepEqual(sent[0]?.body, {
          status: "conditional",
          percentageActors: 25,
          percentageCalls: 0,
          variants: [
            { key: "control", value: "Buy" },
            { key: "bold", value: "BUY NOW" },
            { key: "calm", value: "Continue" },
          ],
          description: "Checkout button copy",
          comment: "Launch copy test for the sale",
        });
        const saved = (await getFlag(name)).flag;
        assert.equal(saved.status, "conditional");
        assert.equal(saved.percentageActors, 25);
        assert.equal(saved.description, "Checkout button copy");
        assert.deepEqual(
          saved.variants.map((v: { key: string }) => v.key),
          ["control", "bold", "calm"],
        );
        const events = (await api("GET", `${flagPath(name)}/events`)).body.data;
        assert.equal(events[0].type, "flag.updated");
        assert.equal(events[0].comment, "Launch copy test for the sale", "the comment is in the history");
        assert.equal(events.length, 2, "one event for the whole save (and the creation)");

        // The History tab shows the comment with the change.
        await flagTab(page, "History");
        await page.getByTestId("event-comment").first().getByText("Launch copy test for the sale").waitFor();
        for (const t of ["Targeting", "Variants", "Settings"]) {
          assert.doesNotMatch(
            (await page.getByRole("tab", { name: new RegExp(`^${t}`) }).textContent()) ?? "",
            /unsaved/,
          );
        }
        assert.deepEqual(tab.problems, []);
      } finally {
        await tab.context.close();
      }
    },
  );

  test(
    "a flag changed elsewhere meanwhile: every edit is kept; Save mine sends them on the latest version, Use theirs drops them",
    T,
    async () => {
      const name = "contested";
      await createTyped(name);
      const tab = await openTab(browser, "dark");
      const { page } = tab;
      try {
        await open(page, name);
        const sent = recordPatches(page, name);
        await page.getByRole("radio", { name: /Enabled/ }).check();
        await flagTab(page, "Settings");
        await page.getByLabel("Description", { exact: true }).fill("mine");
        const started = (await getFlag(name)).etag;
        assert.equal((await api("PATCH", flagPath(name), { percentageCalls: 5 })).status, 200);
        const theirs = (await getFlag(name)).etag;

        await saveFlagChanges(page);
        await bar(page).getByText("was changed elsewhere").waitFor();
        assert.equal(sent.at(-1)?.ifMatch, started, "sent on the version the edits started from");
        assert.equal((await getFlag(name)).flag.description, "", "nothing of it applied");
        assert.equal(await page.getByLabel("Description", { exact: true }).inputValue(), "mine", "the edit is kept");
        await screenshot(page, "flag-page-conflict-dark.png");

        // Save mine: the same edits, on the version now on the server.
        await bar(page).getByRole("button", { name: "Save mine" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Save changes" }).click();
        await bar(page).waitFor({ state: "hidden" });
        assert.equal(sent.at(-1)?.ifMatch, theirs);
        const saved = (await getFlag(name)).flag;
        assert.deepEqual([saved.status, saved.description, saved.percentageCalls], ["enabled", "mine", 5]);

        // Use theirs: the page shows the saved flag, and nothing more is sent.
        await page.getByLabel("Description", { exact: true }).fill("mine again");
        assert.equal((await api("PATCH", flagPath(name), { description: "theirs" })).status, 200);
        await saveFlagChanges(page);
        await bar(page).getByText("was changed elsewhere").waitFor();
        const count = sent.length;
        await bar(page).getByRole("button", { name: "Use theirs" }).click();
        await bar(page).waitFor({ state: "hidden" });
        await waitFor(
          "the saved description shown",
          async () => (await page.getByLabel("Description", { exact: true }).inputValue()) === "theirs",
        );
        assert.equal(sent.length, count);
        assert.equal((await getFlag(name)).flag.description, "theirs");
        assert.deepEqual(tab.problems, []);
      } finally {
        await tab.context.close();
      }
    },
  );

  test("an edit with a problem holds the Save with its reason, and Show it opens its tab", T, async () => {
    const name = "invalid-variant";
    await createTyped(name);
    const tab = await openTab(browser, "light");
    const { page } = tab;
    try {
      await open(page, name);
      const sent = recordPatches(page, name);
      await flagTab(page, "Variants");
      await page.getByLabel("Key 2").fill("control");
      await flagTab(page, "Evaluate");
      const review = bar(page).getByRole("button", { name: "Review and save" });
      await review.waitFor();
      assert.equal(await review.isDisabled(), true);
      const reason = bar(page).getByTestId("save-reason");
      assert.match((await reason.textContent()) ?? "", /^Variants: /);
      assert.equal(await review.getAttribute("aria-describedby"), "pending-blocked");
      await reason.getByRole("button", { name: "Show it" }).click();
      assert.equal(await page.getByRole("tab", { name: /^Variants/ }).getAttribute("aria-selected"), "true");
      await page.getByLabel("Key 2").fill("bolder");
      assert.equal(await review.isDisabled(), false, "fixed: the Save is offered");
      await bar(page).getByRole("button", { name: "Discard changes" }).click();
      await bar(page).waitFor({ state: "hidden" });
      assert.equal(await page.getByLabel("Key 2").inputValue(), "bold", "discarded: the saved variants are shown");
      assert.equal(sent.length, 0);
    } finally {
      await tab.context.close();
    }
  });

  test(
    "an actor attached at once is saved at once, and the pending edits still save without a conflict",
    T,
    async () => {
      const name = "attach-meanwhile";
      assert.equal((await api("POST", flagPath(name), {})).status, 201);
      const tab = await openTab(browser, "light");
      const { page } = tab;
      try {
        await open(page, name);
        await page.getByRole("radio", { name: /Conditional/ }).check();
        await page.getByLabel("Add actors").fill("alice");
        await page.getByRole("button", { name: "Add", exact: true }).click();
        await waitFor("alice attached", async () => (await getFlag(name)).flag.actorsCount === 1);
        assert.equal((await getFlag(name)).flag.status, "disabled", "the status waits for the Save");
        await saveFlagChanges(page);
        assert.equal(await bar(page).count(), 0, "saved, not refused as a conflict");
        assert.equal((await getFlag(name)).flag.status, "conditional");
      } finally {
        await tab.context.close();
      }
    },
  );

  test(
    "leaving with unsaved edits (another page, another environment) asks first; the tabs follow the keyboard",
    T,
    async () => {
      const name = "leave-guard";
      assert.equal((await api("POST", flagPath(name), {})).status, 201);
      assert.equal(
        (await api("POST", `/projects/${project}/environments`, { id: "staging", name: "Staging" })).status,
        201,
      );
      // A key bound to none sees both environments (the project's keys are bound to Production by default).
      const unbound = await api("POST", `/projects/${project}/keys`, {
        role: "write",
        name: "both",
        environment: null,
      });
      assert.equal(unbound.status, 201, unbound.text);
      const tab = await openTab(browser, "light");
      const { page } = tab;
      try {
        await signIn(page, server.url, unbound.body.key);
        await page.goto(`${server.url}/console/p/${project}/flags/${name}`);
        await page.getByRole("heading", { name, level: 1 }).waitFor();
        await page.getByRole("radio", { name: /Enabled/ }).check();
        const asked: string[] = [];
        page.once("dialog", (d) => {
          asked.push(d.message());
          void d.dismiss();
        });
        await page.getByRole("link", { name: "Flags", exact: true }).first().click();
        await waitFor("asked", async () => asked.length === 1);
        assert.match(asked[0] ?? "", /leave-guard has an unsaved change\. Leave and discard it\?/);
        assert.match(new URL(page.url()).pathname, /\/flags\/leave-guard$/, "stayed");
        assert.equal(await page.getByRole("radio", { name: /Enabled/ }).isChecked(), true, "the edit is kept");

        page.once("dialog", (d) => {
          asked.push(d.message());
          void d.dismiss();
        });
        await page.getByLabel("Environment", { exact: true }).selectOption("staging");
        await waitFor("asked again", async () => asked.length === 2);
        assert.equal(await page.getByLabel("Environment", { exact: true }).inputValue(), "production");

        // The keyboard: arrows move between the tabs and show them.
        await page.getByRole("tab", { name: /^Targeting/ }).focus();
        await page.keyboard.press("ArrowRight");
        assert.equal(await page.getByRole("tab", { name: /^Variants/ }).getAttribute("aria-selected"), "true");
        await page.keyboard.press("End");
        assert.equal(await page.getByRole("tab", { name: /^History/ }).getAttribute("aria-selected"), "true");
        assert.equal(
          await page.evaluate(() => document.activeElement?.getAttribute("role") ?? ""),
          "tab",
          "focus follows",
        );

        // Accepted: the console leaves, and the edit is gone with the page.
        page.once("dialog", (d) => void d.accept());
        await page.getByRole("link", { name: "Flags", exact: true }).first().click();
        await page.waitForURL(/\/flags$/);
        assert.equal((await getFlag(name)).flag.status, "disabled");
      } finally {
        await tab.context.close();
      }
    },
  );

  test("at 390 px: the tabs, the bar and the review fit the screen", T, async () => {
    const name = "narrow-flag";
    await createTyped(name);
    const tab = await openTab(browser, "light");
    const { page } = tab;
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await open(page, name);
      await page.getByRole("radio", { name: /Conditional/ }).check();
      await bar(page).waitFor();
      const wide = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok((await wide()) <= 0, `no sideways scroll: ${await wide()} px`);
      const box = await bar(page).boundingBox();
      assert.ok(box && box.y + box.height <= 844 + 1, "the bar is in view at the foot of the screen");
      await screenshot(page, "flag-page-pending-390.png", false);
      await bar(page).getByRole("button", { name: "Review and save" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor();
      const d = await dialog.boundingBox();
      assert.ok(d && d.x >= 0 && d.x + d.width <= 390, `the review fits: ${JSON.stringify(d)}`);
      await screenshot(page, "flag-page-review-390.png", false);
    } finally {
      await tab.context.close();
    }
  });
});
