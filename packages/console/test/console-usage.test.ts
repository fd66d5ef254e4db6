// Usage and lifecycle in the console (issue 36), in Chromium against a real server: the flag list's
// sparklines, stale badges with their reason and the Stale and Archived filters; a flag's usage chart per
// variant with its range picker and table, in light and dark; kind, permanent, archive and restore on the
// flag page, each checked through the API. Screenshots, and axe on every page.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, DIALECTS, ManualClock, startServer, type TestServer } from "@flagstaff/test-harness";
import type { Browser } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  flagTab,
  launchChromium,
  openTab,
  screenshot,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };
const DAY = 86_400_000;

describe(`usage and lifecycle in the web console in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let key: string;
  const project = "shop";
  // The server's clock: now at first (the browser draws the last 24 hours from its own), then 31 days on,
  // so that a flag nobody evaluated since is stale.
  const clock = new ManualClock(Date.now());
  const api = <T = any>(method: string, path: string, body?: unknown) =>
    server.request<T>(method, path, body === undefined ? {} : { body });

  before(
    async () => {
      // Minutes kept a year: the server's clock jumps 31 days, and the chart still reads the minutes of "now".
      server = await startServer({
        dialect,
        clock,
        env: { JOBS_POLL_INTERVAL_MS: "60000", USAGE_MINUTES_RETENTION_HOURS: "8760" },
      });
      assert.equal((await api("POST", "/projects", { id: project, name: "Shop" })).status, 201);
      for (const name of ["checkout", "old-banner", "search"]) {
        assert.equal((await api("POST", `/projects/${project}/flags/${name}`, {})).status, 201);
      }
      await api("PATCH", `/projects/${project}/flags/checkout`, { status: "conditional", addActors: ["alice"] });
      // Evaluations now: the server's checks, and an SDK's report.
      for (let i = 0; i < 6; i++) await api("GET", `/projects/${project}/flags/checkout/check?actorIds=alice`);
      for (let i = 0; i < 2; i++) await api("GET", `/projects/${project}/flags/checkout/check?actorIds=bob`);
      const reader = (await createKey(server, project, "read")).key;
      const minute = new Date(clock.now() - (clock.now() % 60_000) - 3_600_000).toISOString();
      const report = await server.request("POST", `/projects/${project}/usage`, {
        key: reader,
        body: { counts: [{ flag: "checkout", variant: "off", minute, count: 40 }] },
      });
      assert.deepEqual(report.body, { accepted: 1, dropped: 0, duplicate: false }, report.text);
      await server.service.usage.flush();
      // 31 days on: checkout and search are evaluated again; old-banner is not, and is stale.
      clock.advance(31 * DAY);
      await api("GET", `/projects/${project}/flags/checkout/check?actorIds=alice`);
      await api("GET", `/projects/${project}/flags/search/check`);
      await server.service.usage.flush();
      await server.service.jobs.runAll();
      assert.equal((await api("GET", `/projects/${project}/flags/old-banner`)).body.staleReason, "unused");
      key = (await createKey(server, project, "write")).key;
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(async () => {
    await closeBrowser(browser);
    await server?.close();
  });

  test(
    "the list: a sparkline per flag, the stale badge with its reason, the Stale and Archived filters",
    T,
    async () => {
      const { page, problems, context } = await openTab(browser);
      try {
        await signIn(page, server.url, key);
        await page.goto(`${server.url}/console/p/${project}/flags`);
        const row = (name: string) => page.getByRole("row").filter({ has: page.getByRole("link", { name }) });
        await row("checkout").getByRole("img", { name: "48 evaluations in the last 24 hours" }).waitFor();
        await row("old-banner").getByRole("img", { name: "0 evaluations in the last 24 hours" }).waitFor();
        await row("old-banner").getByText("stale: not evaluated any more").waitFor();
        assert.equal(await row("checkout").getByTestId("stale-badge").count(), 0);
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "flags-usage.png");

        await page.getByLabel("Show").selectOption("stale");
        await page.getByRole("link", { name: "search" }).waitFor({ state: "detached" });
        const names = await page.getByRole("table", { name: "Flags" }).getByRole("link").allTextContents();
        assert.deepEqual(names, ["old-banner"]);
        await page.getByTestId("flags-total").getByText("1 flag match").waitFor();
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    },
  );

  test(
    "a flag's usage: evaluations per variant over time, a range picker, the numbers as a table; light and dark",
    T,
    async () => {
      for (const scheme of ["light", "dark"] as const) {
        const { page, problems, context } = await openTab(browser, scheme);
        try {
          await signIn(page, server.url, key);
          await page.goto(`${server.url}/console/p/${project}/flags/checkout`);
          await flagTab(page, "Usage");
          const chart = page.getByTestId("usage-chart");
          await chart.waitFor();
          // The chart's words: every evaluation of the last 24 hours by variant (the SDK's report, the checks).
          assert.equal(await chart.getAttribute("aria-label"), "48 evaluations: on 6, off 42.");
          await page.getByRole("list", { name: "Variants" }).getByText("on: 6").waitFor();
          await page.getByText("Show as a table").click();
          const table = page.getByRole("table", { name: "Evaluations per hour" });
          assert.equal(await table.getByRole("row").count(), 3, "a header and the two hours with evaluations");
          assert.deepEqual(await axeViolations(page), []);
          await screenshot(page, scheme === "light" ? "flag-usage.png" : "flag-usage-dark.png");
          // The last hour by minute: the checks' minute only (the report was an hour earlier).
          await page.getByLabel("Range").selectOption("1h");
          await page
            .waitForFunction(
              () =>
                document.querySelector("[data-testid=usage-chart]")?.getAttribute("aria-label") ===
                "8 evaluations: on 6, off 2.",
            )
            .catch(async (e) => {
              console.log("DEBUG", await chart.getAttribute("aria-label"));
              throw e;
            });
          assert.match(page.url(), /range=1h/);
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      }
    },
  );

  test("kind and permanent, archive and restore, from the flag's Settings; each through the API", T, async () => {
    const { page, problems, context } = await openTab(browser);
    try {
      await signIn(page, server.url, key);
      await page.goto(`${server.url}/console/p/${project}/flags/old-banner`);
      await page.getByTestId("stale-badge").getByText("stale: not evaluated any more").waitFor();
      await flagTab(page, "Settings");
      await page.getByLabel("Kind").selectOption("kill-switch");
      await page.getByLabel("Kind").and(page.locator(":enabled")).waitFor();
      assert.equal((await api("GET", `/projects/${project}/flags/old-banner`)).body.kind, "kill-switch");
      // Saved at once, then shown: the box is the flag's state, not the click's.
      await page.getByLabel("Permanent: meant to stay, never stale").click();
      await page.getByLabel("Permanent: meant to stay, never stale").and(page.locator(":checked")).waitFor();
      await page.getByTestId("stale-state").getByText("Not stale.").waitFor();
      assert.equal(await page.getByTestId("stale-badge").count(), 0);
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "flag-lifecycle.png");

      await page.getByRole("button", { name: "Archive flag" }).click();
      await page.getByTestId("archived-note").waitFor();
      assert.equal((await api("GET", `/projects/${project}/flags/old-banner/check`)).status, 404);
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "flag-archived.png");
      // Out of the list, in the archived one.
      await page.goto(`${server.url}/console/p/${project}/flags`);
      await page.getByRole("link", { name: "checkout" }).waitFor();
      assert.equal(await page.getByRole("link", { name: "old-banner" }).count(), 0);
      await page.getByLabel("Show").selectOption("archived");
      await page.getByRole("link", { name: "old-banner" }).click();
      await page.getByRole("button", { name: "Restore flag" }).click();
      await page.getByTestId("archived-note").waitFor({ state: "detached" });
      assert.equal((await api("GET", `/projects/${project}/flags/old-banner/check`)).status, 200);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
