// What a newcomer tripped over in the console (issue 22): unreadable disabled buttons, focus lost after a
// dialog, two dialogs named by one id, deep links forgotten at sign-in, raw validator text, ids named by
// index, and edits lost on a conflict. Each is driven in Chromium against a real server, as a person would.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  flagTab,
  launchChromium,
  openTab,
  screenshot,
  showKeyForm,
  signIn,
} from "./helpers/console.js";
import { disabledContrasts } from "./helpers/contrast.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };

describe(`the console's dialogs, forms and sign-in in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let project: string;
  let other: string;
  const keys: Record<"write" | "read" | "otherWrite", string> = { write: "", read: "", otherWrite: "" };

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "shop");
      other = await createProject(server, "walk");
      keys.write = (await createKey(server, project, "write")).key;
      keys.read = (await createKey(server, project, "read")).key;
      keys.otherWrite = (await createKey(server, other, "write")).key;
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

  const api = <T = any>(method: string, path: string, body?: unknown, key?: string) =>
    server.request<T>(method, path, { ...(body === undefined ? {} : { body }), ...(key === undefined ? {} : { key }) });
  const url = () => server.url;

  async function withTab(fn: (page: Page) => Promise<void>, scheme: "light" | "dark" = "light") {
    const tab = await openTab(browser, scheme);
    try {
      await fn(tab.page);
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  }

  /** What has focus, in words: its role-ish tag, its value or its text. */
  const focused = (page: Page) =>
    page.evaluate(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return "body";
      const value = e instanceof HTMLInputElement ? `[${e.type}=${e.value}]` : "";
      return `${e.tagName.toLowerCase()}${value} ${(e.textContent ?? "").trim()}`.trim();
    });

  test(
    "read key: disabled buttons and fields are readable (contrast ≥ 4.5:1) and axe passes on every page, light and dark",
    T,
    async () => {
      await api("POST", `/projects/${project}/flags/read-me`, { description: "Seen by a read key" });
      const seg = (await api("POST", `/projects/${project}/segments`, { name: "Readers" })).body;
      await api("PATCH", `/projects/${project}/segments/${seg.id}`, { addActors: ["ann"] });
      await api("PATCH", `/projects/${project}/flags/read-me`, { status: "conditional", addActors: ["ann"] });
      const pages: [string, string][] = [
        ["flags", `/p/${project}/flags`],
        ["flag", `/p/${project}/flags/read-me`],
        ["segments", `/p/${project}/segments`],
        ["segment", `/p/${project}/segments/${seg.id}`],
        ["actor", `/p/${project}/actors/ann`],
        ["history", `/p/${project}/history`],
      ];
      const found: string[] = [];
      for (const scheme of ["light", "dark"] as const) {
        await withTab(async (page) => {
          await signIn(page, url(), keys.read);
          for (const [name, path] of pages) {
            await page.goto(`${url()}/console${path}`);
            await page.locator("main h1").first().waitFor();
            await page
              .getByText(/^Loading/)
              .first()
              .waitFor({ state: "detached" })
              .catch(() => {});
            found.push(...(await axeViolations(page)).map((v) => `${name}, read key (${scheme}): ${v}`));
            for (const c of await disabledContrasts(page)) {
              if (c.ratio < 4.5) found.push(`${name}, read key (${scheme}): ${c.what} has contrast ${c.ratio}:1`);
            }
            await screenshot(page, `${name}-read-only-${scheme}.png`);
          }
          // The button the issue names: "New flag", disabled, still says so on screen.
          await page.goto(`${url()}/console/p/${project}/flags`);
          const newFlag = page.getByRole("button", { name: "New flag" });
          assert.equal(await newFlag.isDisabled(), true);
          await newFlag.screenshot({ path: `${process.env.TMPDIR ?? "/tmp"}/new-flag-disabled-${scheme}.png` });
          const contrast = (await disabledContrasts(page)).find((c) => c.what === 'button "New flag"');
          assert.ok(
            contrast && contrast.ratio >= 4.5,
            `New flag is readable in ${scheme}: ${JSON.stringify(contrast)}`,
          );
        }, scheme);
      }
      assert.deepEqual(found, []);
    },
  );

  test(
    "dialogs: focus goes back to the control that opened them (confirmed by keyboard, cancelled, refused)",
    T,
    async () => {
      const flag = "focus-flag";
      await api("POST", `/projects/${project}/flags/${flag}`, {});
      await withTab(async (page) => {
        await signIn(page, url(), keys.write);
        await page.goto(`${url()}/console/p/${project}/flags/${flag}`);
        const status = page.getByRole("radiogroup", { name: "Status" });
        // By keyboard: focus the checked radio (Disabled), arrow to Enabled; the bar offers the review, opened
        // with Enter, cancelled with Escape (focus back on its button), then confirmed by keyboard.
        await status.getByRole("radio", { name: /Disabled/ }).focus();
        await page.keyboard.press("ArrowLeft");
        const review = page.getByTestId("pending-bar").getByRole("button", { name: "Review and save" });
        await review.focus();
        await page.keyboard.press("Enter");
        const dialog = page.getByRole("dialog", { name: `Save this change to ${flag}?` });
        await dialog.waitFor();
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "hidden" });
        assert.equal(await focused(page), "button Review and save", "cancelled: focus is back on the bar's button");
        await page.keyboard.press("Enter");
        await dialog.waitFor();
        await dialog.getByRole("button", { name: "Save changes" }).focus();
        await page.keyboard.press("Enter");
        await waitFor(
          "enabled",
          async () => (await api("GET", `/projects/${project}/flags/${flag}`)).body.status === "enabled",
        );
        await waitFor("the radio is checked", () => status.getByRole("radio", { name: /Enabled/ }).isChecked());
        await screenshot(page, "focus-after-status.png");
        // The bar is gone with its button: focus goes to the page's main region, not to <body>.
        assert.notEqual(await focused(page), "body");

        // The delete dialog (on the Settings tab), cancelled and then refused (412): focus is back on "Delete
        // flag" each time.
        await flagTab(page, "Settings");
        const deleteButton = page.getByRole("button", { name: "Delete flag", exact: true });
        await deleteButton.focus();
        await page.keyboard.press("Enter");
        const deleting = page.getByRole("dialog", { name: `Delete ${flag}?` });
        await deleting.waitFor();
        await page.keyboard.press("Escape");
        await deleting.waitFor({ state: "hidden" });
        assert.equal(await focused(page), "button Delete flag");
        await deleteButton.focus();
        await page.keyboard.press("Enter");
        await deleting.getByLabel(/to confirm/).fill(flag);
        await api("PATCH", `/projects/${project}/flags/${flag}`, { percentageCalls: 5 });
        await page.keyboard.press("Tab");
        await page.keyboard.press("Tab");
        await page.keyboard.press("Enter");
        await page.getByText("was changed elsewhere meanwhile").waitFor();
        assert.equal(await focused(page), "button Delete flag");
      });
      // An admin's dialogs elsewhere (revoking a key) use the same component: cancelled, focus comes back.
      await createKey(server, project, "read");
      await withTab(async (page) => {
        await signIn(page, url(), server.config.adminApiKey!);
        await page.goto(`${url()}/console/p/${project}/keys`);
        const revoke = page.getByRole("button", { name: "Revoke read key" }).first();
        await revoke.focus();
        await page.keyboard.press("Enter");
        await page.getByRole("dialog").waitFor();
        await page.keyboard.press("Escape");
        await page.getByRole("dialog").waitFor({ state: "hidden" });
        assert.match(await focused(page), /^button Revoke/);
      });
    },
  );

  test("the flag page's two dialogs have their own titles: the delete dialog is named by its own", T, async () => {
    const flag = "two-dialogs";
    await api("POST", `/projects/${project}/flags/${flag}`, {});
    await withTab(async (page) => {
      await signIn(page, url(), keys.write);
      await page.goto(`${url()}/console/p/${project}/flags/${flag}`);
      await page.getByRole("radiogroup", { name: "Status" }).waitFor();
      const duplicates = await page.evaluate(() => {
        const seen = new Map<string, number>();
        for (const e of document.querySelectorAll("[id]")) seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
        return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
      });
      assert.deepEqual(duplicates, [], "no id twice on the flag page");
      await flagTab(page, "Settings");
      await page.getByRole("button", { name: "Delete flag", exact: true }).click();
      await page.getByRole("dialog", { name: `Delete ${flag}?` }).waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "delete-dialog.png");
    });
  });

  test(
    "a deep link opened in a new tab returns after sign-in; a key of another project says it cannot see it",
    T,
    async () => {
      await api("POST", `/projects/${project}/flags/same-name`, { description: "shop's" });
      await api("POST", `/projects/${other}/flags/same-name`, { description: "walk's" });
      const link = `${url()}/console/p/${project}/flags/same-name`;
      await withTab(async (page) => {
        await page.goto(link);
        await showKeyForm(page);
        await page.getByLabel("API key").fill(keys.write);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("heading", { name: "same-name", level: 1 }).waitFor();
        assert.equal(page.url(), link, "back at the link");
        assert.equal(await page.getByLabel("Description", { exact: true }).inputValue(), "shop's");
      });
      await withTab(async (page) => {
        await page.goto(link);
        await showKeyForm(page);
        await page.getByLabel("API key").fill(keys.otherWrite);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("alert").getByText("This key belongs to project walk and cannot see shop").waitFor();
        assert.equal(
          await page.getByRole("heading", { name: "same-name", level: 1 }).count(),
          0,
          "walk's flag not shown",
        );
        assert.equal(await page.getByText("walk's").count(), 0);
        await screenshot(page, "other-project.png");
        // Its own project is one click away.
        await page.getByRole("link", { name: "Open walk" }).click();
        await page.getByRole("heading", { name: "Flags", level: 1 }).waitFor();
      });
    },
  );

  test(
    "form errors: one plain sentence next to the field; limits up front (maxlength, pattern, counter, multi-line)",
    T,
    async () => {
      await withTab(async (page) => {
        await signIn(page, url(), keys.write);
        await page.getByRole("button", { name: "New flag" }).click();
        const name = page.getByLabel("Name", { exact: true });
        const description = page.getByLabel("Description", { exact: true });
        assert.equal(await name.getAttribute("maxlength"), "128");
        assert.ok(await name.getAttribute("pattern"), "the name's pattern is given up front");
        assert.equal(await description.evaluate((e) => e.tagName), "TEXTAREA", "a multi-line description box");
        assert.equal(await description.getAttribute("maxlength"), "1024");
        await description.fill("Line one\nline two");
        await page.getByText("17 / 1,024 characters").waitFor();

        // The server's own check, as when a rule the page does not know refuses a name: one sentence, at the field.
        await name.evaluate((e) => e.removeAttribute("pattern"));
        await name.fill("bad name!");
        await page.getByRole("button", { name: "Create flag" }).click();
        const message = "Name must be 1–128 characters of A–Z a–z 0–9 . _ - :, starting with a letter or digit.";
        const error = page.locator("#new-flag-name-error");
        await error.waitFor();
        assert.equal(await error.innerText(), message);
        assert.equal(await name.getAttribute("aria-invalid"), "true");
        assert.match((await name.getAttribute("aria-describedby")) ?? "", /new-flag-name-error/);
        const text = await page.locator("main").innerText();
        assert.equal(text.split(message).length - 1, 1, "said once");
        assert.doesNotMatch(text, /\/params\/|The path is invalid/, "no validator text");
        await screenshot(page, "form-error-light.png");

        await name.fill("good-name");
        await page.getByRole("button", { name: "Create flag" }).click();
        await page.getByRole("heading", { name: "good-name", level: 1 }).waitFor();
        assert.equal((await api("GET", `/projects/${project}/flags/good-name`)).body.description, "Line one\nline two");
        // The flag page's description (its Settings tab) is multi-line too, with its limit.
        await flagTab(page, "Settings");
        const edit = page.getByLabel("Description", { exact: true });
        assert.equal(await edit.evaluate((e) => e.tagName), "TEXTAREA");
        assert.equal(await edit.getAttribute("maxlength"), "1024");
        await page.getByText("17 / 1,024 characters").waitFor();
      });
    },
  );

  test(
    "the inputs' patterns are the contract's: the browser refuses what the server would, and takes the rest",
    T,
    async () => {
      await withTab(async (page) => {
        await signIn(page, url(), keys.write);
        await page.getByRole("button", { name: "New flag" }).click();
        /** Whether the browser finds the value at odds with the input's pattern (it compiles it with the v flag). */
        const mismatch = async (label: string, value: string) => {
          const input = page.getByLabel(label, { exact: true });
          await input.fill(value);
          return input.evaluate((e) => (e as HTMLInputElement).validity.patternMismatch);
        };
        const name: Record<string, boolean> = { "good-name": false, "a.b_c:d-1": false, "bad name!": true, "-x": true };
        for (const [value, refused] of Object.entries(name))
          assert.equal(await mismatch("Name", value), refused, value);
        await page.getByLabel("Type").selectOption("string");
        const key: Record<string, boolean> = { "ok-1": false, "a.b_c": false, "a:b": true, "bad key": true, _x: true };
        for (const [value, refused] of Object.entries(key))
          assert.equal(await mismatch("Key 1", value), refused, value);
      });
    },
  );

  test(
    "adding actors: whitespace separating ids is said before adding; a bad id is named, not indexed",
    T,
    async () => {
      const flag = "actors-flag";
      await api("POST", `/projects/${project}/flags/${flag}`, {});
      await withTab(async (page) => {
        await signIn(page, url(), keys.write);
        await page.goto(`${url()}/console/p/${project}/flags/${flag}`);
        const paste = page.getByLabel("Add actors");
        await paste.fill("Jane Doe");
        await page.getByText("This adds 2 ids: Jane, Doe. Spaces, commas and line breaks separate ids.").waitFor();
        const long = "x".repeat(300);
        await paste.fill(`ok-1 ok-2 ok-3 ok-4 ${long}`);
        await page.getByRole("button", { name: "Add", exact: true }).click();
        const alert = page.getByRole("alert").filter({ hasText: "must be at most 256 characters" });
        await alert.waitFor();
        const said = await alert.innerText();
        assert.match(said, /The actor id "x{20,}…" \(the 5th\) must be at most 256 characters\./);
        assert.doesNotMatch(said, /addActors/);
        await screenshot(page, "bad-actor-id.png");
        assert.equal((await api("GET", `/projects/${project}/flags/${flag}`)).body.actorsCount, 0, "nothing added");
      });
    },
  );
});
