// Environments in the console, in Chromium against a real server in this process: the switcher (remembered
// per project and in the URL), the flag list's column per environment (a summary past five), the flag page
// editing one environment, Copy to… with its differences, and a key bound to one environment. Every change
// is checked through the API, in every environment, not only on the screen.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
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
const T = { timeout: 90_000 };

/** The environments of the project most tests use, in its order: the first is the default. */
const ENVIRONMENTS = [
  { id: "production", name: "Production" },
  { id: "staging", name: "Staging", description: "Where releases are tried first" },
  { id: "development", name: "Development" },
];

describe(`environments in the console, in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  const project = "envs";
  /** A write key bound to no environment: it may edit and copy in every one. */
  let writeKey: string;

  before(
    async () => {
      server = await startServer({ dialect });
      const created = await server.request("POST", "/projects", {
        body: { id: project, name: "Environments", environments: ENVIRONMENTS },
      });
      assert.equal(created.status, 201, created.text);
      writeKey = await newKey(project, "write", null);
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

  async function newKey(projectId: string, role: "write" | "read", environment: string | null): Promise<string> {
    const res = await server.request("POST", `/projects/${projectId}/keys`, {
      body: { role, name: `${role} key of ${environment ?? "every environment"}`, environment },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.key;
  }

  /** Sets a flag's configuration in one environment, through the API. */
  async function configure(flag: string, environment: string, change: Record<string, unknown>) {
    const res = await api("PATCH", `/projects/${project}/flags/${flag}?environment=${environment}`, change);
    assert.equal(res.status, 200, res.text);
  }

  /** A flag's configuration in one environment as the API answers it: fields, attached actors and segments. */
  async function configuration(flag: string, environment: string) {
    const base = `/projects/${project}/flags/${flag}`;
    const f = (await api("GET", `${base}?environment=${environment}`)).body;
    const actors = (await api("GET", `${base}/actors?environment=${environment}&limit=100`)).body.data;
    const segments = (await api("GET", `${base}/segments?environment=${environment}&limit=100`)).body.data;
    return {
      status: f.status,
      percentageActors: f.percentageActors,
      percentageCalls: f.percentageCalls,
      actors: actors.map((a: { actorId: string }) => a.actorId),
      segments: segments.map((s: { id: string }) => s.id),
    };
  }

  async function withTab(fn: (page: Page) => Promise<void>, scheme: "light" | "dark" = "light") {
    const tab = await openTab(browser, scheme);
    try {
      await fn(tab.page);
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  }

  /** Every request the page makes, by URL, from now on. */
  function recordRequests(page: Page): { method: string; url: URL; ifMatch: string | undefined }[] {
    const seen: { method: string; url: URL; ifMatch: string | undefined }[] = [];
    page.on("request", (r) =>
      seen.push({ method: r.method(), url: new URL(r.url()), ifMatch: r.headers()["if-match"] }),
    );
    return seen;
  }

  /** Whether a request reads or changes a flag's configuration (its history is project-wide: not one). */
  const isFlagRequest = (u: URL) =>
    /^\/projects\/[^/]+\/(flags|actors\/[^/]+\/flags|segments\/[^/]+\/flags)(\/|$)/.test(u.pathname) &&
    !u.pathname.endsWith("/events");

  const switcher = (page: Page) => page.getByLabel("Environment", { exact: true });
  const flagsTable = (page: Page) => page.getByRole("table", { name: "Flags" });
  const tableNames = (page: Page) => flagsTable(page).locator("tbody tr td:first-child a").allInnerTexts();
  const apiNames = async (query: string) =>
    (await api("GET", `/projects/${project}/flags?${query}`)).body.data.map((f: { name: string }) => f.name);
  /** The status cells of a flag's row in the list, one per environment column. */
  const rowCells = (page: Page, flag: string) =>
    flagsTable(page)
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: flag, exact: true }) })
      .getByRole("cell");

  test(
    "the switcher: the project's environments, the default first; the list and the flag page follow it; remembered per project and in the URL",
    T,
    async () => {
      // alpha and beta differ in every environment; each environment's most recent change is another flag.
      for (const name of ["alpha", "beta", "gamma"]) await api("POST", `/projects/${project}/flags/${name}`, {});
      await configure("alpha", "production", { status: "enabled" });
      await configure("alpha", "staging", { status: "conditional", percentageActors: 10 });
      await configure("beta", "staging", { status: "enabled" });
      await configure("beta", "development", { status: "conditional" });
      await configure("gamma", "staging", { percentageCalls: 5 });
      const other = await server.request("POST", "/projects", {
        body: { id: "envs-other", name: "Another", environments: [ENVIRONMENTS[0], ENVIRONMENTS[1]] },
      });
      assert.equal(other.status, 201, other.text);

      await withTab(async (page) => {
        const requests = recordRequests(page);
        await signIn(page, url(), server.config.adminApiKey!);
        await page.goto(`${url()}/console/p/${project}/flags`);
        await flagsTable(page).waitFor();

        // The options are the API's environments, in its order, the default marked and selected.
        const listed = (await api("GET", `/projects/${project}/environments`)).body.data;
        assert.deepEqual(
          listed.map((e: { id: string }) => e.id),
          ["production", "staging", "development"],
        );
        assert.deepEqual(await switcher(page).locator("option").allInnerTexts(), [
          "Production (default)",
          "Staging",
          "Development",
        ]);
        assert.equal(await switcher(page).inputValue(), "production");
        assert.equal(
          await page.evaluate(() => Object.keys(localStorage).length),
          0,
          "nothing remembered before a choice",
        );

        // A column per environment, in the project's order; each cell is the flag's status there, as the API
        // says in the flag's environments map.
        const headers = await flagsTable(page).getByRole("columnheader").allInnerTexts();
        assert.deepEqual(headers.slice(0, 4), ["Name", "Production (selected)", "Staging", "Development"]);
        for (const f of (await api("GET", `/projects/${project}/flags`)).body.data) {
          const cells = await rowCells(page, f.name).allInnerTexts();
          assert.deepEqual(
            cells.slice(1, 4).map((c) => c.trim()),
            ["production", "staging", "development"].map((e) => f.environments[e].status),
            `${f.name}'s statuses`,
          );
        }
        assert.deepEqual(
          (await rowCells(page, "alpha").allInnerTexts()).slice(1, 4).map((c) => c.trim()),
          ["enabled", "conditional", "disabled"],
        );
        const flagRequests = requests.filter((r) => isFlagRequest(r.url));
        assert.ok(flagRequests.length > 0);
        for (const r of flagRequests) {
          assert.equal(r.url.searchParams.get("environment"), "production", `${r.method} ${r.url.pathname}`);
        }

        // Staging: the URL and the browser remember it; the status filter and the order are staging's.
        const before = requests.length;
        await switcher(page).selectOption("staging");
        await page.waitForURL(/environment=staging/);
        await flagsTable(page).getByRole("columnheader", { name: "Staging (selected)" }).waitFor();
        assert.equal(
          await page.evaluate((p) => localStorage.getItem(`flagstaff.console.environment.${p}`), project),
          "staging",
        );
        await page
          .getByText("Flags show and change their configuration in Staging (Where releases are tried first).")
          .waitFor();
        await page.getByLabel("Status").selectOption("conditional");
        const conditional = await apiNames("environment=staging&status=conditional");
        assert.deepEqual(conditional, ["alpha"]);
        assert.notDeepEqual(await apiNames("environment=production&status=conditional"), conditional);
        await waitFor("staging's conditional flags", async () => {
          return JSON.stringify(await tableNames(page)) === JSON.stringify(conditional);
        });
        await page.getByLabel("Status").selectOption("");
        await page.getByLabel("Sort by").selectOption("-updatedAt");
        const recent = await apiNames("environment=staging&sort=-updatedAt");
        assert.notDeepEqual(recent, await apiNames("environment=production&sort=-updatedAt"), "the orders differ");
        await waitFor("staging's order", async () => JSON.stringify(await tableNames(page)) === JSON.stringify(recent));
        const since = requests.slice(before).filter((r) => isFlagRequest(r.url));
        assert.ok(since.length > 0);
        for (const r of since) assert.equal(r.url.searchParams.get("environment"), "staging", r.url.pathname);

        // The flag page, opened by a link (its URL names no environment): still staging, and it says so.
        await page.getByRole("link", { name: "alpha", exact: true }).click();
        await page.getByRole("heading", { name: "alpha", level: 1 }).waitFor();
        assert.equal(new URL(page.url()).searchParams.get("environment"), null);
        assert.equal(await switcher(page).inputValue(), "staging");
        await page.getByTestId("flag-environment").getByText("Editing Staging").waitFor();
        const status = page.getByRole("radiogroup", { name: "Status in Staging" });
        await waitFor("staging's status", () => status.getByRole("radio", { name: /Conditional/ }).isChecked());
        assert.equal(await page.getByLabel("Percentage of actors").inputValue(), "10");
        assert.deepEqual(
          await page.getByRole("list", { name: "Status in each environment" }).getByRole("listitem").allInnerTexts(),
          ["Production: enabled", "Staging: conditional", "Development: disabled"],
        );

        // Switching on the flag page shows the other environment's configuration at once.
        await switcher(page).selectOption("production");
        await page.getByRole("radiogroup", { name: "Status in Production" }).waitFor();
        await waitFor("production's status", () =>
          page
            .getByRole("radiogroup", { name: "Status in Production" })
            .getByRole("radio", { name: /Enabled/ })
            .isChecked(),
        );
        assert.equal(await page.getByLabel("Percentage of actors").inputValue(), "0");
        await page.reload();
        await page.getByRole("radiogroup", { name: "Status in Production" }).waitFor();

        // Remembered per project: another project opens on its default, and this one is still production.
        await switcher(page).selectOption("staging");
        await page.goto(`${url()}/console/p/envs-other/flags`);
        await flagsTable(page).or(page.getByText("No flags yet.")).waitFor();
        assert.equal(await switcher(page).inputValue(), "production");
        await page.goto(`${url()}/console/p/${project}/flags`);
        await flagsTable(page).getByRole("columnheader", { name: "Staging (selected)" }).waitFor();
        assert.equal(await switcher(page).inputValue(), "staging");

        // A link that names an environment opens it, and is remembered; one that names none that exists does not.
        await page.goto(`${url()}/console/p/${project}/flags?environment=development`);
        await flagsTable(page).getByRole("columnheader", { name: "Development (selected)" }).waitFor();
        await page.getByRole("link", { name: "beta", exact: true }).click();
        await page.getByRole("radiogroup", { name: "Status in Development" }).waitFor();
        await page.goto(`${url()}/console/p/${project}/flags?environment=nowhere`);
        await flagsTable(page).getByRole("columnheader", { name: "Development (selected)" }).waitFor();
        await waitFor("the unknown environment leaves the URL", async () => !page.url().includes("environment="));
      });
    },
  );

  test("editing in staging changes staging only: production and development are unchanged (API)", T, async () => {
    const flag = "edit-me";
    await api("POST", `/projects/${project}/flags/${flag}`, { description: "Before" });
    const segment = (await api("POST", `/projects/${project}/segments`, { name: "Edit testers" })).body;
    const untouched = {
      production: await configuration(flag, "production"),
      development: await configuration(flag, "development"),
    };
    await withTab(async (page) => {
      const requests = recordRequests(page);
      await signIn(page, url(), writeKey);
      await page.goto(`${url()}/console/p/${project}/flags/${flag}?environment=staging`);
      const status = page.getByRole("radiogroup", { name: "Status in Staging" });
      await status.getByRole("radio", { name: /Conditional/ }).click();
      await page.getByLabel("Percentage of actors").selectOption("25");
      await page.getByLabel("Percentage of calls").selectOption("5");
      // The review names the environment the changes go to.
      await page.getByTestId("pending-bar").getByRole("button", { name: "Review and save" }).click();
      await page.getByRole("dialog").getByRole("region", { name: "In Staging" }).waitFor();
      await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
      await saveFlagChanges(page);
      await waitFor("status and percentages saved", async () => {
        const f = (await api("GET", `/projects/${project}/flags/${flag}?environment=staging`)).body;
        return f.percentageActors === 25 && f.percentageCalls === 5;
      });

      await page.getByLabel("Add actors").fill("stage-1 stage-2");
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.getByText("Added 2 actors.").waitFor();
      await page.getByLabel("Segment name").fill("Edit testers");
      await page.getByRole("button", { name: "Add segment" }).click();
      await page.getByRole("button", { name: "Remove segment Edit testers" }).waitFor();

      // The description is the flag's, shared by every environment.
      await flagTab(page, "Settings");
      await page.getByLabel("Description", { exact: true }).fill("After");
      await saveFlagChanges(page);
      await waitFor(
        "the description saved",
        async () =>
          (await api("GET", `/projects/${project}/flags/${flag}?environment=production`)).body.description === "After",
      );

      assert.deepEqual(await configuration(flag, "staging"), {
        status: "conditional",
        percentageActors: 25,
        percentageCalls: 5,
        actors: ["stage-1", "stage-2"],
        segments: [segment.id],
      });
      assert.deepEqual(await configuration(flag, "production"), untouched.production, "production unchanged");
      assert.deepEqual(await configuration(flag, "development"), untouched.development, "development unchanged");
      // Every write named staging, and its If-Match was staging's configuration's ETag.
      const writes = requests.filter((r) => r.method === "PATCH");
      // The status and the percentages in one save; the actors, the segment and the description each.
      assert.equal(writes.length, 4);
      for (const w of writes) {
        assert.equal(w.url.searchParams.get("environment"), "staging");
        assert.match(w.ifMatch ?? "", /^"flg_[^"@]+@staging\.\d+"$/);
      }
      // The history names each change's environment.
      await flagTab(page, "History");
      const history = page.getByRole("table", { name: "Events" });
      await history.getByRole("row").filter({ hasText: "Percentage of actors: 0 → 25" }).getByText("Staging").waitFor();
      await history.getByRole("row").filter({ hasText: "flag.created" }).getByText("—").first().waitFor();
      // Every environment's history: its reads name no environment (as a filter, one would hide the creation).
      const historyReads = requests.filter((r) => r.url.pathname === `/projects/${project}/flags/${flag}/events`);
      assert.ok(historyReads.length > 0, "the history was read");
      for (const r of historyReads) assert.equal(r.url.searchParams.get("environment"), null, r.url.href);
    });
  });

  test("Copy to…: shows the differences, refuses a target changed meanwhile (412), then copies", T, async () => {
    const flag = "copy-me";
    await api("POST", `/projects/${project}/flags/${flag}`, {});
    const segment = (await api("POST", `/projects/${project}/segments`, { name: "Copy testers" })).body;
    await configure(flag, "staging", {
      status: "conditional",
      percentageActors: 25,
      percentageCalls: 10,
      addActors: ["ann", "bob"],
      addSegments: [segment.id],
    });
    await configure(flag, "production", { addActors: ["carl"] });
    // Development already has staging's configuration: nothing to copy there.
    const devTag = (await api("GET", `/projects/${project}/flags/${flag}?environment=development`)).headers.get("etag");
    const same = await server.request("POST", `/projects/${project}/flags/${flag}/copy`, {
      body: { from: "staging", to: "development" },
      headers: { "if-match": devTag ?? "" },
    });
    assert.equal(same.status, 200, same.text);

    await withTab(async (page) => {
      const requests = recordRequests(page);
      await signIn(page, url(), writeKey);
      await page.goto(`${url()}/console/p/${project}/flags/${flag}?environment=staging`);
      await page.getByRole("button", { name: "Copy to…" }).click();
      const dialog = page.getByRole("dialog", { name: `Copy ${flag} from Staging` });
      assert.equal(await dialog.getByLabel("Copy to").inputValue(), "production", "the first other environment");
      assert.deepEqual(await dialog.getByLabel("Copy to").locator("option").allInnerTexts(), [
        "Production",
        "Development",
      ]);
      const table = dialog.getByRole("table", { name: "Differences between Production and Staging" });
      await table.waitFor();
      const rows = async () =>
        Promise.all((await table.locator("tbody tr").all()).map((r) => r.locator("th, td").allInnerTexts()));
      assert.deepEqual(await rows(), [
        ["Status", "disabled", "conditional"],
        ["Percentage of actors", "0%", "25%"],
        ["Percentage of calls", "0%", "10%"],
        ["Attached actors", "1 actor", "2 actors: adds ann, bob; removes carl"],
        ["Attached segments", "none", "Copy testers"],
      ]);

      // Someone changes production meanwhile: the copy is refused, nothing changes, the comparison is read again.
      await configure(flag, "production", { percentageCalls: 5 });
      const current = (await api("GET", `/projects/${project}/flags/${flag}?environment=production`)).headers.get(
        "etag",
      );
      await dialog.getByRole("button", { name: "Copy to Production" }).click();
      await dialog.getByText("was changed elsewhere meanwhile").waitFor();
      assert.equal((await configuration(flag, "production")).status, "disabled", "nothing copied");
      await waitFor("the comparison read again", async () =>
        JSON.stringify(await rows()).includes(JSON.stringify(["Percentage of calls", "5%", "10%"])),
      );
      await dialog.getByRole("button", { name: "Copy to Production" }).click();
      await dialog.waitFor({ state: "hidden" });
      await page.getByRole("status").getByText("Copied Staging's configuration to Production.").waitFor();

      // Through the API: production now has staging's configuration, by one write with one event.
      assert.deepEqual(await configuration(flag, "production"), await configuration(flag, "staging"));
      const copies = requests.filter((r) => r.method === "POST" && r.url.pathname.endsWith("/copy"));
      assert.equal(copies.length, 2);
      assert.notEqual(copies[0]?.ifMatch, current, "the first attempt was made on the version shown before");
      assert.equal(copies[1]?.ifMatch, current, "the second on the version read again");
      const events = (await api("GET", `/projects/${project}/flags/${flag}/events?environment=production`)).body.data;
      assert.equal(events[0].type, "flag.updated");
      assert.equal(events[0].after.copiedFrom, "staging");
      // The flag's history says so, in the target environment.
      await flagTab(page, "History");
      await page
        .getByRole("table", { name: "Events" })
        .getByRole("row")
        .filter({ hasText: "Copied from Staging" })
        .getByText("Production", { exact: true })
        .waitFor();
      await waitFor("the page shows production's new status", async () =>
        (await page.getByRole("list", { name: "Status in each environment" }).innerText()).includes(
          "Production: conditional",
        ),
      );

      // Development already matches: said so, and nothing to confirm.
      await page.getByRole("button", { name: "Copy to…" }).click();
      await dialog.getByLabel("Copy to").selectOption("development");
      await dialog
        .getByText("Development already has the same configuration as Staging: there is nothing to copy.")
        .waitFor();
      assert.equal(await dialog.getByRole("button", { name: "Copy to Development" }).isDisabled(), true);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden" });
      assert.deepEqual(
        await page.evaluate(() => document.activeElement?.textContent),
        "Copy to…",
        "focus back on the button that opened it",
      );
    });
  });

  test("past five environments: the selected one's column and a summary of all", T, async () => {
    const many = Array.from({ length: 7 }, (_, i) => ({ id: `env-${i + 1}`, name: `Env ${i + 1}` }));
    const created = await server.request("POST", "/projects", {
      body: { id: "envs-many", name: "Many environments", environments: many },
    });
    assert.equal(created.status, 201, created.text);
    const path = "/projects/envs-many/flags/wide";
    await api("POST", path, {});
    for (const e of ["env-1", "env-3", "env-5"]) await api("PATCH", `${path}?environment=${e}`, { status: "enabled" });
    await api("PATCH", `${path}?environment=env-2`, { status: "conditional" });
    await withTab(async (page) => {
      await signIn(page, url(), server.config.adminApiKey!);
      await page.goto(`${url()}/console/p/envs-many/flags`);
      const table = flagsTable(page);
      await table.waitFor();
      const headers = await table.getByRole("columnheader").allInnerTexts();
      assert.deepEqual(headers.slice(0, 3), ["Name", "Env 1 (selected)", "Environments"]);
      assert.deepEqual(
        (await rowCells(page, "wide").allInnerTexts()).slice(1, 3).map((c) => c.trim()),
        ["enabled", "3 of 7 on, 1 conditional"],
      );
      await switcher(page).selectOption("env-2");
      await table.getByRole("columnheader", { name: "Env 2 (selected)" }).waitFor();
      await waitFor(
        "env-2's status",
        async () => (await rowCells(page, "wide").nth(1).innerText()).trim() === "conditional",
      );
      assert.equal(await switcher(page).locator("option").count(), 7);
    });
  });

  test("a key bound to staging: the switcher shows staging only, whatever the URL names; no copy", T, async () => {
    const bound = await newKey(project, "write", "staging");
    const me = (await api("GET", "/whoami", undefined, bound)).body;
    assert.equal(me.environment, "staging");
    assert.equal((await api("GET", `/projects/${project}/flags?environment=production`, undefined, bound)).status, 403);
    await api("POST", `/projects/${project}/flags/bound-flag`, {});
    await configure("bound-flag", "staging", { status: "enabled" });
    await withTab(async (page) => {
      const answers: number[] = [];
      page.on("response", (r) => answers.push(r.status()));
      await signIn(page, url(), bound);
      await page.waitForURL(`**/console/p/${project}/flags`);
      await flagsTable(page).waitFor();
      assert.deepEqual(await switcher(page).locator("option").allInnerTexts(), ["Staging"]);
      await page
        .getByText(
          "This key is bound to Staging: it sees and changes no other environment (Where releases are tried first).",
        )
        .waitFor();
      const headers = await flagsTable(page).getByRole("columnheader").allInnerTexts();
      assert.deepEqual(headers.slice(0, 3), ["Name", "Staging", "Targeting"], "one environment column");
      assert.equal((await rowCells(page, "bound-flag").nth(1).innerText()).trim(), "enabled");
      await screenshot(page, "environments-bound-light.png", false);

      // A link naming production shows staging, and the URL stops naming production.
      await page.goto(`${url()}/console/p/${project}/flags/bound-flag?environment=production`);
      await page.getByRole("radiogroup", { name: "Status in Staging" }).waitFor();
      await waitFor("production leaves the URL", async () => !page.url().includes("environment=production"));
      assert.equal(await page.getByRole("list", { name: "Status in each environment" }).count(), 0);
      const copy = page.getByRole("button", { name: "Copy to…" });
      assert.equal(await copy.isDisabled(), true);
      await page.getByText("This key is bound to one environment: it cannot copy to another.").waitFor();
      // An edit goes to staging, and only there.
      await page.getByLabel("Percentage of actors").selectOption("50");
      await saveFlagChanges(page);
      await waitFor(
        "saved in staging",
        async () => (await configuration("bound-flag", "staging")).percentageActors === 50,
      );
      assert.equal((await configuration("bound-flag", "production")).percentageActors, 0);
      assert.ok(!answers.includes(403), "the console never asked for another environment");
    });
  });

  test(
    "Copy to…: an environment deleted meanwhile is named; past 1,000 actors the counts are compared",
    T,
    async () => {
      const flag = "crowded";
      await api("POST", `/projects/${project}/flags/${flag}`, {});
      const crowd = Array.from({ length: 1001 }, (_, i) => `crowd-${String(i).padStart(4, "0")}`);
      await configure(flag, "staging", { addActors: crowd.slice(0, 1000) });
      await configure(flag, "staging", { addActors: crowd.slice(1000) });
      await withTab(async (page) => {
        await signIn(page, url(), server.config.adminApiKey!);
        await page.goto(`${url()}/console/p/${project}/flags/${flag}?environment=staging`);
        await page.getByRole("radiogroup", { name: "Status in Staging" }).waitFor();
        // An environment added meanwhile appears in the switcher, and as a target.
        const qa = await api("POST", `/projects/${project}/environments`, { id: "qa", name: "QA" });
        assert.equal(qa.status, 201, qa.text);
        await switcher(page).locator("option", { hasText: "QA" }).waitFor({ state: "attached" });
        await page.getByRole("button", { name: "Copy to…" }).click();
        const dialog = page.getByRole("dialog", { name: `Copy ${flag} from Staging` });
        await dialog.getByLabel("Copy to").selectOption("qa");
        const table = dialog.getByRole("table", { name: "Differences between QA and Staging" });
        await table.waitFor();
        assert.deepEqual(await table.locator("tbody tr").first().locator("th, td").allInnerTexts(), [
          "Attached actors",
          "0 actors",
          "1,001 actors (too many to compare one by one: all are replaced)",
        ]);
        assert.equal(await table.locator("tbody tr").count(), 1, "nothing else differs");

        // QA is deleted while the dialog is open: the copy is refused with the API's reason, and nothing is made.
        assert.equal((await api("DELETE", `/projects/${project}/environments/qa`)).status, 204);
        await dialog.getByRole("button", { name: "Copy to QA" }).click();
        await dialog.getByText('Environment "qa" does not exist in this project.').first().waitFor();
        assert.equal((await api("GET", `/projects/${project}/flags/${flag}?environment=qa`)).status, 404);
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await switcher(page).locator("option", { hasText: "QA" }).waitFor({ state: "detached" });
        assert.equal(await switcher(page).inputValue(), "staging");
      });
    },
  );

  test(
    "keys (admin): a new key is bound to the environment chosen, or to none for a write key; a read key cannot copy",
    T,
    async () => {
      await withTab(async (page) => {
        await signIn(page, url(), server.config.adminApiKey!);
        await page.goto(`${url()}/console/p/${project}/keys?environment=staging`);
        await page.getByRole("button", { name: "New key" }).click();
        const bound = page.getByLabel("Bound to environment");
        assert.equal(await bound.inputValue(), "staging", "the environment on screen");
        assert.deepEqual(await bound.locator("option").allInnerTexts(), ["Production", "Staging", "Development"]);
        await page.getByLabel("Name", { exact: true }).fill("staging reader");
        await page.getByLabel("Role").selectOption("read");
        await page.getByRole("button", { name: "Create key" }).click();
        const secret = await page.getByTestId("secret").innerText();
        const me = (await api("GET", "/whoami", undefined, secret)).body;
        assert.equal(me.environment, "staging");
        await page.getByRole("button", { name: "I stored it" }).click();
        const row = page.getByRole("table", { name: "Keys" }).getByRole("row").filter({ hasText: "staging reader" });
        await row.getByText("Staging", { exact: true }).waitFor();

        // Only a write key may be bound to none.
        await page.getByRole("button", { name: "New key" }).click();
        await page.getByLabel("Role").selectOption("write");
        await bound.selectOption("");
        assert.equal(await bound.locator("option").last().innerText(), "None: every environment");
        await page.getByLabel("Name", { exact: true }).fill("release bot");
        await page.getByRole("button", { name: "Create key" }).click();
        const writer = await page.getByTestId("secret").innerText();
        assert.equal((await api("GET", "/whoami", undefined, writer)).body.environment, null);
        await page.getByRole("button", { name: "I stored it" }).click();
        await page
          .getByRole("table", { name: "Keys" })
          .getByRole("row")
          .filter({ hasText: "release bot" })
          .getByText("none (every environment)")
          .waitFor();

        // The read key: staging only, read-only, and no copy.
        await page.getByRole("button", { name: "Sign out" }).click();
        await signIn(page, url(), secret);
        await page.goto(`${url()}/console/p/${project}/flags/alpha`);
        await page.getByRole("radiogroup", { name: "Status in Staging" }).waitFor();
        assert.equal(await page.getByRole("button", { name: "Copy to…" }).isDisabled(), true);
        await page.locator("#copy-blocked").getByText("Read-only: this key has the read role").waitFor();
      });
    },
  );

  test("an unknown project: its pages say so (the environments' 404), with no switcher", T, async () => {
    await withTab(async (page) => {
      await signIn(page, url(), server.config.adminApiKey!);
      await page.goto(`${url()}/console/p/no-such-project/flags`);
      await page.getByRole("alert").getByText('Project "no-such-project" does not exist.').waitFor();
      assert.equal(await switcher(page).count(), 0);
    });
  });

  test("accessibility: the switcher, the columns and Copy to… have no serious axe violation, light and dark; screenshots", {
    timeout: 120_000,
  }, async () => {
    const found: string[] = [];
    for (const scheme of ["light", "dark"] as const) {
      await withTab(async (page) => {
        await signIn(page, url(), writeKey);
        await page.goto(`${url()}/console/p/${project}/flags?environment=staging`);
        await flagsTable(page).waitFor();
        found.push(...(await axeViolations(page)).map((v) => `flags (${scheme}): ${v}`));
        await screenshot(page, `environments-flags-${scheme}.png`);
        await page.goto(`${url()}/console/p/${project}/flags/alpha`);
        await page.getByRole("button", { name: "Copy to…" }).click();
        await page.getByRole("dialog").getByRole("table").waitFor();
        // alpha differs between staging and production in its status and percentage of actors only.
        await page
          .getByTestId("copy-unchanged")
          .getByText("Already the same: percentage of calls, rules, prerequisites, attached actors, attached segments.")
          .waitFor();
        found.push(...(await axeViolations(page)).map((v) => `copy (${scheme}): ${v}`));
        await screenshot(page, `environments-copy-${scheme}.png`, false);
      }, scheme);
    }
    assert.deepEqual(found, []);
  });
});
