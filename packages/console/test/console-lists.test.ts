// The console's lists in Chromium, against a real server in this process: the flag list's URL state, order,
// status filter and count; the history in words and links; failing webhooks and delivery payloads; lists
// on a phone and the header on a desktop. Every screen is also checked through the API.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  startServer,
  type TestServer,
  WebhookReceiver,
  waitFor,
} from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  launchChromium,
  openTab,
  screenshot,
  selectShowsWhole,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 90_000 };

describe(`the console's lists in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let project: string;
  let writeKey: string;

  before(
    async () => {
      receiver = await WebhookReceiver.start();
      // A minute between retries: a failing delivery waits visibly for its next attempt.
      server = await startServer({
        dialect,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_BASE_MS: "60000" },
      });
      project = await createProject(server, "lists");
      const key = await server.request("POST", `/projects/${project}/keys`, {
        body: {
          role: "write",
          name: "deploy bot of the checkout and payments teams, production cluster eu-west, rotated every 90 days",
        },
      });
      assert.equal(key.status, 201, key.text);
      writeKey = key.body.key;
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      await closeBrowser(browser);
      await Promise.allSettled([server?.close(), receiver?.close()]);
    },
    { timeout: 30_000 },
  );

  const api = <T = any>(method: string, path: string, body?: unknown) =>
    server.request<T>(method, path, body === undefined ? {} : { body });
  const url = () => server.url;

  async function withTab(fn: (page: Page) => Promise<void>) {
    const tab = await openTab(browser);
    try {
      await fn(tab.page);
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  }

  /** The flag names the API lists for a query, in its order. */
  const apiNames = async (query: string) =>
    (await api("GET", `/projects/${project}/flags?${query}`)).body.data.map((f: { name: string }) => f.name);
  const tableNames = (page: Page) =>
    page.getByRole("table", { name: "Flags" }).locator("tbody tr td:first-child a").allInnerTexts();

  test(
    "flags list: page, search, status and sort live in the URL, Back returns to them, and the total is shown",
    T,
    async () => {
      for (let i = 0; i < 45; i++) {
        const name = `list-${String(i).padStart(2, "0")}`;
        await api("POST", `/projects/${project}/flags/${name}`, { description: i % 4 === 0 ? "fourth one" : "" });
        if (i % 2 === 0) await api("PATCH", `/projects/${project}/flags/${name}`, { status: "conditional" });
      }
      const all = (await api("GET", `/projects/${project}/flags?total=true`)).body.total as number;
      const conditional = (await api("GET", `/projects/${project}/flags?status=conditional&total=true`)).body.total;
      assert.equal(conditional, 23, "more than a page of them");
      await withTab(async (page) => {
        await signIn(page, url(), writeKey);
        await page.waitForURL(`**/console/p/${project}/flags`);
        const total = page.getByTestId("flags-total");
        await total.getByText(`${all} flags`, { exact: true }).waitFor();

        await page.getByLabel("Status").selectOption("conditional");
        await total.getByText("23 flags match", { exact: true }).waitFor();
        await page.getByLabel("Sort by").selectOption("-createdAt");
        await page.waitForURL(/status=conditional/);
        await page.waitForURL(/sort=-createdAt/);
        const newest = await apiNames("status=conditional&sort=-createdAt&limit=20");
        await waitFor("the newest conditional flags first", async () => {
          return JSON.stringify(await tableNames(page)) === JSON.stringify(newest);
        });
        assert.equal(await page.getByRole("columnheader", { name: "Created" }).getAttribute("aria-sort"), "descending");

        // Page 2, then a flag, then Back: the same page of the same filtered, sorted list.
        await page.getByRole("button", { name: "Next →" }).click();
        await page.waitForURL(/after=/);
        const first = (await api("GET", `/projects/${project}/flags?status=conditional&sort=-createdAt&limit=20`)).body;
        const second = await apiNames(`status=conditional&sort=-createdAt&limit=20&after=${first.pagination.after}`);
        await waitFor("page 2", async () => JSON.stringify(await tableNames(page)) === JSON.stringify(second));
        const listUrl = page.url();
        await page.getByRole("link", { name: second[0], exact: true }).click();
        await page.getByRole("heading", { name: second[0], level: 1 }).waitFor();
        await page.goBack();
        await page.waitForURL(listUrl);
        await waitFor(
          "page 2 again after Back",
          async () => JSON.stringify(await tableNames(page)) === JSON.stringify(second),
        );
        assert.equal(await page.getByLabel("Status").inputValue(), "conditional");
        assert.equal(await page.getByLabel("Sort by").inputValue(), "-createdAt");
        await total.getByText("23 flags match", { exact: true }).waitFor();

        // A search typed is kept in the URL too (and starts again from the first page); a reload keeps it.
        await page.getByLabel("Search in").selectOption("q");
        await page.getByLabel("Search flags").fill("fourth");
        await page.waitForURL(/search=fourth/);
        assert.doesNotMatch(page.url(), /after=/, "a new search starts on the first page");
        const fourth = await apiNames("status=conditional&sort=-createdAt&q=fourth");
        await total.getByText(`${fourth.length} flags match`, { exact: true }).waitFor();
        await page.reload();
        await waitFor("the same list after a reload", async () => {
          return JSON.stringify(await tableNames(page)) === JSON.stringify(fourth);
        });
        assert.equal(await page.getByLabel("Search flags").inputValue(), "fourth");

        // Least recently checked first: never-checked flags lead.
        await page.getByLabel("Search flags").fill("");
        await page.getByLabel("Status").selectOption("");
        await page.getByLabel("Sort by").selectOption("latestCheckedAt");
        await page
          .getByRole("columnheader", { name: "Last checked" })
          .and(page.locator("[aria-sort=ascending]"))
          .waitFor();
        const leastChecked = await apiNames("sort=latestCheckedAt&limit=20");
        await waitFor("least recently checked first", async () => {
          return JSON.stringify(await tableNames(page)) === JSON.stringify(leastChecked);
        });
        await total.getByText(`${all} flags`, { exact: true }).waitFor();
        await page.getByLabel("Sort by").selectOption("-createdAt");
        await page.getByLabel("Status").selectOption("conditional");
        await total.getByText("23 flags match", { exact: true }).waitFor();
        await screenshot(page, "lists-flags-sorted.png");
      });
    },
  );

  test("history: field labels, segment names instead of ids, targets as links", T, async () => {
    const segment = (await api("POST", `/projects/${project}/segments`, { name: "Beta testers" })).body;
    await api("POST", `/projects/${project}/flags/told-flag`, {});
    const patched = await api("PATCH", `/projects/${project}/flags/told-flag`, {
      status: "conditional",
      percentageActors: 10,
      addSegments: [segment.id],
      addActors: ["ann"],
    });
    assert.equal(patched.status, 200, patched.text);
    // A segment attached and then deleted: the event still names its id, which no longer resolves.
    const gone = (await api("POST", `/projects/${project}/segments`, { name: "Gone soon" })).body;
    assert.equal((await api("PATCH", `/projects/${project}/flags/told-flag`, { addSegments: [gone.id] })).status, 200);
    assert.equal((await api("DELETE", `/projects/${project}/segments/${gone.id}`)).status, 204);
    await withTab(async (page) => {
      await signIn(page, url(), writeKey);
      await page.getByRole("link", { name: "History" }).click();
      await page.getByLabel("Flag name").fill("told-flag");
      const table = page.getByRole("table", { name: "Events" });
      const updated = table
        .getByRole("row")
        .filter({ hasText: "flag.updated" })
        .filter({ hasText: "Percentage of actors" });
      await updated.getByText("Percentage of actors: 0 → 10", { exact: true }).waitFor();
      await updated.getByText("Status: disabled → conditional", { exact: true }).waitFor();
      await updated.getByText("Segments added: Beta testers", { exact: true }).waitFor();
      await updated.getByText("Actors added: ann", { exact: true }).waitFor();
      await table.getByText(`Segments added: ${gone.id} (deleted)`, { exact: true }).waitFor();
      const text = await table.innerText();
      assert.doesNotMatch(text, /percentageActors|addedSegments/, "no property names");
      assert.ok(!text.includes(segment.id), "no id of a segment that exists");
      await screenshot(page, "lists-history.png");

      // The target is a link to its page.
      await updated.getByRole("link", { name: "told-flag", exact: true }).click();
      await page.getByRole("heading", { name: "told-flag", level: 1 }).waitFor();
      await page.getByRole("link", { name: "History" }).click();
      await page.getByLabel("Flag name").fill("");
      await page.getByLabel("Type").selectOption("segment.");
      await table.getByRole("link", { name: "Beta testers", exact: true }).first().click();
      await page.getByRole("heading", { name: "Beta testers", level: 1 }).waitFor();
      assert.match(page.url(), new RegExp(`/segments/${segment.id}$`));
    });
  });

  test(
    "webhooks: a receiver that fails shows a failing badge with the last error and the next retry; a payload opens",
    T,
    async () => {
      receiver.answer = (r) => (r.path === "/broken" ? { status: 500 } : { status: 200 });
      const broken = (
        await api("POST", `/projects/${project}/webhooks`, { url: `${receiver.url}/broken`, events: ["flag.*"] })
      ).body;
      const healthy = (
        await api("POST", `/projects/${project}/webhooks`, { url: `${receiver.url}/ok`, events: ["flag.*"] })
      ).body;
      await api("POST", `/projects/${project}/flags/hooked`, { description: "sent to both" });
      const deliveries = (id: string) => api("GET", `/projects/${project}/webhooks/${id}/deliveries`);
      const [failed] = await waitFor(
        "the broken receiver's failed attempt",
        async () => (await deliveries(broken.id)).body.data,
        {
          // Recorded: an attempt in flight has counted but not yet answered.
          until: (d: any[]) => d.some((x) => x.status === "pending" && x.lastStatusCode === 500),
        },
      );
      assert.equal(failed.lastError, "HTTP 500");
      assert.ok(failed.nextAttemptAt > new Date().toISOString(), "a retry is due later");
      await waitFor("the healthy receiver's success", async () => (await deliveries(healthy.id)).body.data, {
        until: (d: any[]) => d.some((x) => x.status === "succeeded"),
      });

      await withTab(async (page) => {
        await signIn(page, url(), server.config.adminApiKey!);
        await page.goto(`${url()}/console/p/${project}/webhooks`);
        const brokenCard = page.getByRole("region", { name: `Webhook ${broken.url}` });
        const healthyCard = page.getByRole("region", { name: `Webhook ${healthy.url}` });
        const note = brokenCard.getByTestId("webhook-failing");
        await note.waitFor();
        const said = await note.innerText();
        assert.match(said, /^failing/);
        assert.match(said, /Last error: HTTP 500/);
        assert.match(said, /Next retry in \d+ (s|min)/);
        await healthyCard.getByRole("button", { name: "Recent deliveries" }).waitFor();
        assert.equal(await healthyCard.getByTestId("webhook-failing").count(), 0, "no badge on the healthy one");

        // Its deliveries, with the next attempt, and the payload as the receiver gets it.
        await brokenCard.getByRole("button", { name: "Recent deliveries" }).click();
        const table = brokenCard.getByRole("table", { name: "Deliveries" });
        const row = table.getByRole("row").filter({ hasText: "flag.created" });
        await row.getByText("HTTP 500").waitFor();
        await row.getByRole("button", { name: `Payload of flag.created ${failed.id}` }).click();
        const shown = JSON.parse(await brokenCard.getByTestId("payload").innerText());
        const opened = (await api("GET", `/projects/${project}/webhooks/${broken.id}/deliveries/${failed.id}`)).body;
        assert.deepEqual(shown, opened.payload);
        assert.equal(shown.type, "flag.created");
        assert.equal(shown.target.name, "hooked");
        const event = (await api("GET", `/projects/${project}/flags/hooked/events`)).body.data[0];
        assert.deepEqual(shown, event, "the payload is the event as the history shows it");
        await screenshot(page, "lists-webhooks-failing.png");
        await row.getByRole("button", { name: `Payload of flag.created ${failed.id}` }).click();
        await brokenCard.getByTestId("payload").waitFor({ state: "detached" });
      });
      receiver.answer = () => ({ status: 200 });
    },
  );

  test(
    "a phone (390 px): lists scroll inside themselves with the name in view; the page never scrolls sideways",
    T,
    async () => {
      await api("POST", `/projects/${project}/flags/a-rather-long-flag-name-for-a-phone`, {
        description: "Shown on a narrow screen",
      });
      await withTab(async (page) => {
        await page.setViewportSize({ width: 390, height: 844 });
        await signIn(page, url(), writeKey);
        const table = page.getByRole("table", { name: "Flags" });
        await table.waitFor();
        const overflow = () =>
          page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.equal(await overflow(), 0, "the page itself does not scroll sideways");
        // The table scrolls inside itself; scrolled to its far end, each row's name is still in view.
        const scroll = await table.evaluate((t) => {
          t.scrollLeft = t.scrollWidth;
          return { scrolled: t.scrollLeft, width: t.scrollWidth, client: t.clientWidth };
        });
        assert.ok(scroll.width > scroll.client && scroll.scrolled > 0, `the table scrolls: ${JSON.stringify(scroll)}`);
        const link = table.getByRole("link").first();
        const box = await link.boundingBox();
        assert.ok(
          box && box.x >= 0 && box.x + Math.min(box.width, 40) <= 390,
          `the name is in view: ${JSON.stringify(box)}`,
        );
        const onTop = await link.evaluate((a) => {
          // The first line of the name (a long one wraps; its box spans the gaps between lines).
          const r = a.getClientRects()[0]!;
          const hit = document.elementFromPoint(r.left + 5, r.top + r.height / 2);
          if (hit !== null && (hit === a || a.contains(hit))) return "";
          return `${hit?.outerHTML.slice(0, 300)} at ${JSON.stringify(r)}`;
        });
        assert.equal(onTop, "", "nothing covers the name");
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "lists-flags-390.png");

        for (const section of ["segments", "history"]) {
          await page.goto(`${url()}/console/p/${project}/${section}`);
          await page.locator("main h1").first().waitFor();
          await page.locator("main table").first().waitFor();
          assert.equal(await overflow(), 0, `${section}: the page does not scroll sideways`);
        }
        await screenshot(page, "lists-history-390.png");
        // The history's environment filter shows its choice whole (a select is cut short on a phone).
        const filter = await selectShowsWhole(page.getByLabel(/^Environment/));
        assert.ok(filter.whole, filter.detail);

        // An admin's project list: its visually hidden header scrolls with the table, not the page.
        await page.getByRole("button", { name: "Sign out" }).click();
        await signIn(page, url(), server.config.adminApiKey!);
        await page.goto(`${url()}/console/projects`);
        await page.getByRole("table", { name: "Projects" }).waitFor();
        assert.equal(await overflow(), 0, "projects: the page does not scroll sideways");
      });
    },
  );

  test("a desktop (1280 px): the header stays on one row, even with a long key name", T, async () => {
    await withTab(async (page) => {
      await signIn(page, url(), writeKey);
      await page.getByRole("table", { name: "Flags" }).waitFor();
      const header = page.locator("header.top");
      const rows = await header.evaluate((h) => {
        const tops = [...h.children].map((c) => Math.round(c.getBoundingClientRect().top));
        const bottoms = [...h.children].map((c) => Math.round(c.getBoundingClientRect().bottom));
        return { tops, bottoms, height: h.getBoundingClientRect().height, scroll: h.scrollWidth - h.clientWidth };
      });
      assert.ok(
        Math.max(...rows.tops) < Math.min(...rows.bottoms),
        `brand, sections and key share one row: ${JSON.stringify(rows)}`,
      );
      assert.ok(rows.height < 60, `one row high: ${rows.height}`);
      assert.equal(rows.scroll, 0, "nothing sticks out");
      // The name is cut short on screen, whole on hover and to assistive technology.
      assert.match(await page.getByTestId("signed-in").innerText(), /rotated every 90 days/);
      // The key's first characters and one ellipsis, whole; only the name after it gives way.
      const masked = async () =>
        header.locator(".key code").evaluate((code) => {
          const box = code.getBoundingClientRect();
          const shown = code.closest(".key")?.getBoundingClientRect();
          return {
            text: code.textContent ?? "",
            clipped: shown === undefined || box.right > shown.right + 0.5 || box.left < shown.left - 0.5,
          };
        });
      const key = await masked();
      assert.equal(key.text, `${writeKey.slice(0, 8)}…`, "the first characters, then one ellipsis");
      assert.equal(key.clipped, false, "the masked key is not cut");
      await screenshot(page, "lists-header-1280.png");

      // An admin has the most sections; at 1152 px as well, one row, and Sign out whole and in view.
      await page.setViewportSize({ width: 1152, height: 800 });
      await page.getByRole("button", { name: "Sign out" }).click();
      await signIn(page, url(), server.config.adminApiKey!);
      await page.goto(`${url()}/console/p/${project}/flags`);
      await page.getByRole("link", { name: "Webhooks" }).waitFor();
      const admin = await header.evaluate((h) => {
        // What must stay whole: the links, the project, the masked key, the role and Sign out (the key's
        // name may be cut).
        const boxes = [...h.querySelectorAll("a, button, strong, code")].map((e) => e.getBoundingClientRect());
        return {
          height: h.getBoundingClientRect().height,
          right: Math.max(...boxes.map((b) => b.right)),
          overlaps: boxes.some((a, i) =>
            boxes.some((b, j) => i < j && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom),
          ),
        };
      });
      assert.ok(admin.height < 60, `one row high for an admin at 1152 px: ${JSON.stringify(admin)}`);
      assert.ok(admin.right <= 1152, `nothing past the right edge: ${JSON.stringify(admin)}`);
      assert.equal(admin.overlaps, false, "no link, button or name drawn over another");
      const adminKey = await masked();
      assert.equal(adminKey.text, `${server.config.adminApiKey!.slice(0, 8)}…`);
      assert.equal(adminKey.clipped, false, "the admin's masked key is not cut at 1152 px either");
      await screenshot(page, "lists-header-1152-admin.png");
    });
  });

  test(
    "History: the environment filter lists that environment's events only, through the API's filter",
    T,
    async () => {
      const where = await createProject(server, "where");
      const staging = await api("POST", `/projects/${where}/environments`, { id: "staging", name: "Staging" });
      assert.equal(staging.status, 201, staging.text);
      await api("POST", `/projects/${where}/flags/placed`, {});
      await api("PATCH", `/projects/${where}/flags/placed?environment=staging`, { status: "enabled" });
      await api("PATCH", `/projects/${where}/flags/placed?environment=production`, { percentageActors: 10 });
      await api("POST", `/projects/${where}/segments`, { name: "Everywhere" });
      await withTab(async (page) => {
        const asked: URL[] = [];
        page.on("request", (r) => {
          const u = new URL(r.url());
          if (u.pathname === `/projects/${where}/events`) asked.push(u);
        });
        await signIn(page, url(), server.config.adminApiKey!);
        await page.goto(`${url()}/console/p/${where}/history`);
        const table = page.getByRole("table", { name: "Events" });
        await table.waitFor();
        // One control says "Environment" here: the filter (the history is every environment's).
        const filter = page.getByLabel(/^Environment/);
        assert.equal(await filter.count(), 1);
        assert.deepEqual(await filter.locator("option").allInnerTexts(), ["All", "Production", "Staging"]);
        const environments = async () => table.locator("tbody tr td:nth-child(3)").allInnerTexts();
        await waitFor("every environment's events and the project's", async () => {
          const shown = new Set(await environments());
          return shown.has("Staging") && shown.has("Production") && shown.has("—");
        });

        await filter.selectOption("staging");
        await page.getByText("Staging's events only").waitFor();
        await waitFor("Staging's events only", async () => {
          const shown = await environments();
          return shown.length > 0 && shown.every((e) => e === "Staging");
        });
        assert.equal(asked.at(-1)?.searchParams.get("environment"), "staging", "the API's environment filter");
        // What the API lists for it, the page shows: the same events.
        const listed = (await api("GET", `/projects/${where}/events?environment=staging`)).body.data;
        assert.equal((await environments()).length, listed.length);
        await screenshot(page, "lists-history-environment.png");

        await filter.selectOption("");
        await waitFor("every environment again", async () => (await environments()).includes("—"));
        assert.equal(asked.at(-1)?.searchParams.get("environment"), null);
      });
    },
  );
});
