// Every page of the console from a desktop's 1280 px down to a small phone's 320 px (390 px is the phone of
// issue 32, item 12), in Chromium against a real server on each database: the page itself never scrolls
// sideways (lists scroll inside themselves), every control and heading is on screen or inside a box that
// scrolls, and dialogs fit the window on a phone. The project is seeded with what makes pages wide in
// practice: long names, e-mail addresses, URLs and key names, a string flag with three described variants
// and rules, several environments, people and grants. A screenshot of each page at 390 px is taken to be
// looked at (narrow-*.png in the screenshot folder).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, startServer, type TestServer, WebhookReceiver, waitFor } from "@flagstaff/test-harness";
import type { Browser, Locator, Page } from "playwright-core";
import { browserSkip, closeBrowser, launchChromium, openTab, screenshot } from "./helpers/console.js";

const T = { timeout: 240_000 };
const PASSWORD = "correct horse battery staple";
/**
 * The widths every page is seen at: a desktop, a small laptop, a tablet (where lists are tables again, and
 * wider than the column), the phone the issue was about, and a small phone. Each with its window's height.
 */
const WIDTHS = [1280, 1024, 768, 390, 320] as const;
const HEIGHT: Record<(typeof WIDTHS)[number], number> = { 1280: 900, 1024: 768, 768: 1024, 390: 844, 320: 568 };
/** The phone's width: pages are screenshotted at it, and dialogs checked (and screenshotted) there and below. */
const PHONE = 390;

const PROJECT = "checkout-and-payments";
const OTHER = "marketing-site-and-landing-pages";
const FLAG = "checkout-button-colour-experiment-for-returning-customers";
const ACTOR = "customer-4f1c2a9e-8b7d-4c3e-9a1f-2d6b5e8c7a90";
const ADMIN = { email: "ada.lovelace-byron@analytical-engines.example.com", name: "Ada Lovelace-Byron, Countess" };
const MEMBER = { email: "grace.brewster.hopper@computing-history.example.org", name: "Grace Brewster Murray Hopper" };

/**
 * Where the flag page's parts are found, in one place: the page is being reworked (tabs, one bar of
 * pending changes), and these are what to adjust then. Each finds its part by its heading or role.
 */
const FLAG_PAGE = {
  ready: (page: Page) => page.getByRole("heading", { level: 1, name: FLAG }).waitFor(),
  /** Shows the variants editor (its tab, when there is one) and answers its region: the box titled "Variants". */
  async variants(page: Page): Promise<Locator> {
    const tab = page.getByRole("tab", { name: "Variants" });
    if ((await tab.count()) > 0) await tab.first().click();
    const heading = page.getByRole("heading", { name: "Variants", exact: true });
    await heading.waitFor();
    return heading.locator("xpath=ancestor::*[self::form or self::section or @role='tabpanel'][1]");
  },
  /** Opens Copy to… and answers its dialog, once the comparison is shown. */
  async copyDialog(page: Page): Promise<Locator> {
    await page.getByRole("button", { name: "Copy to…" }).click();
    const dialog = page.getByRole("dialog", { name: new RegExp(`^Copy ${FLAG} from`) });
    await dialog.getByRole("table", { name: /^Differences between/ }).waitFor();
    return dialog;
  },
};

/** What one look at a page found wrong: the page's own sideways scroll, and what is out of reach. */
interface Look {
  overflow: number;
  unreachable: string[];
  /** The innermost boxes past the window's right edge, when the page is wider than the window. */
  widening: string[];
}

/**
 * The page's sideways overflow (scrollWidth past the window), and what in `root` cannot be seen: controls,
 * headings and labels whose box is past the window's left or right edge and inside no box that scrolls
 * sideways (a list's scroller, a dialog), so that no scrolling brings them into view.
 */
async function look(page: Page, root = "body"): Promise<Look> {
  return page.evaluate((selector) => {
    const width = window.innerWidth;
    const scrolls = (e: Element) => {
      const x = getComputedStyle(e).overflowX;
      return (x === "auto" || x === "scroll") && e.scrollWidth > e.clientWidth;
    };
    const unreachable: string[] = [];
    const base = document.querySelector(selector);
    if (!base) return { overflow: Number.NaN, unreachable: [`no ${selector}`], widening: [] };
    const seen = "a[href], button, input, select, textarea, summary, h1, h2, h3, label, legend, th, td";
    for (const element of base.querySelectorAll(seen)) {
      // The skip link waits off-screen until it is focused; visually hidden text is for screen readers.
      if (element.closest(".skip, .visually-hidden")) continue;
      const box = element.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.left >= -0.5 && box.right <= width + 0.5) continue;
      let scroller: Element | null = element.parentElement;
      while (scroller && scroller !== document.body && !scrolls(scroller)) scroller = scroller.parentElement;
      if (scroller && scroller !== document.body) continue;
      const text = (element.getAttribute("aria-label") ?? element.textContent ?? "").trim().slice(0, 60);
      unreachable.push(
        `<${element.tagName.toLowerCase()}> "${text}" at ${Math.round(box.left)}–${Math.round(box.right)} px`,
      );
    }
    // What widens the page: the innermost boxes past the right edge, in no box that scrolls.
    const past = (e: Element) => e.getBoundingClientRect().right > width + 0.5;
    const widening: string[] = [];
    for (const element of base.querySelectorAll("*")) {
      if (!past(element) || [...element.children].some(past)) continue;
      let scroller: Element | null = element.parentElement;
      while (scroller && scroller !== document.body && !scrolls(scroller)) scroller = scroller.parentElement;
      if (scroller && scroller !== document.body) continue;
      const classes = element.getAttribute("class");
      widening.push(
        `<${element.tagName.toLowerCase()}${classes ? `.${classes.replace(/ /g, ".")}` : ""}> "${(element.textContent ?? "").trim().slice(0, 40)}" to ${Math.round(element.getBoundingClientRect().right)} px`,
      );
    }
    return {
      overflow: document.documentElement.scrollWidth - width,
      unreachable: unreachable.slice(0, 8),
      widening: widening.slice(0, 6),
    };
  }, root);
}

/** Whether an open dialog fits the window, and scrolls inside itself rather than sideways. */
async function dialogFits(dialog: Locator): Promise<string | undefined> {
  return dialog.evaluate((d) => {
    const box = d.getBoundingClientRect();
    const problems: string[] = [];
    if (box.left < -0.5 || box.right > window.innerWidth + 0.5) {
      problems.push(`spans ${Math.round(box.left)}–${Math.round(box.right)} px of ${window.innerWidth}`);
    }
    if (box.top < -0.5 || box.bottom > window.innerHeight + 0.5) {
      problems.push(`spans ${Math.round(box.top)}–${Math.round(box.bottom)} px of ${window.innerHeight} high`);
    }
    if (d.scrollWidth > d.clientWidth) problems.push(`its content is ${d.scrollWidth} px wide in ${d.clientWidth}`);
    // What it holds that is wider than it and scrolls sideways inside it (a select, a table).
    for (const inner of d.querySelectorAll("*")) {
      const r = inner.getBoundingClientRect();
      if (r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5)) {
        problems.push(`<${inner.tagName.toLowerCase()}> sticks out at ${Math.round(r.left)}–${Math.round(r.right)}`);
        break;
      }
    }
    return problems.length > 0 ? problems.join("; ") : undefined;
  });
}

// The layout does not depend on the database: one leg (SQLite, as the other browser tests), which keeps the
// suite's time for what does.
for (const dialect of DIALECTS.slice(0, 1)) {
  describe(`every console page from 1280 down to 320 px, in Chromium [${dialect}]`, { skip: browserSkip }, () => {
    let server: TestServer;
    let browser: Browser;
    let receiver: WebhookReceiver;
    let segment: string;

    const api = async <B = any>(method: string, path: string, body?: unknown, expected?: number) => {
      const res = await server.request<B>(method, path, body === undefined ? {} : { body });
      if (expected !== undefined) assert.equal(res.status, expected, `${method} ${path}: ${res.text}`);
      else assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
      return res;
    };
    const flagPath = (name: string, environment?: string) =>
      `/projects/${PROJECT}/flags/${name}${environment ? `?environment=${environment}` : ""}`;

    before(
      async () => {
        receiver = await WebhookReceiver.start();
        server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
        await api("POST", "/projects", { id: PROJECT, name: "Checkout and payments (web, iOS and Android)" });
        await api("POST", "/projects", { id: OTHER, name: "Marketing site, landing pages and campaign microsites" });
        for (let i = 1; i <= 4; i++) await api("POST", "/projects", { id: `team-${i}`, name: `Team ${i}` });
        await api("POST", `/projects/${PROJECT}/environments`, { id: "staging", name: "Staging" });
        await api("POST", `/projects/${PROJECT}/environments`, {
          id: "pre-production-partners",
          name: "Pre-production for payment partners",
          description: "Where the payment providers' sandboxes are wired in, refreshed from production every night",
        });
        await api("POST", `/projects/${PROJECT}/environments`, { id: "development", name: "Development" });

        // People: an admin, a member who is an admin of one project and a reader of another, and more.
        const admin = (await api("POST", "/users", { ...ADMIN, role: "admin", password: PASSWORD })).body;
        const member = (await api("POST", "/users", { ...MEMBER, role: "member", password: PASSWORD })).body;
        assert.ok(admin.id);
        await api("PUT", `/projects/${PROJECT}/access/${member.id}`, { role: "admin" });
        await api("PUT", `/projects/${OTHER}/access/${member.id}`, { role: "read" });
        for (const [email, name, role] of [
          ["katherine.coleman.goble.johnson@orbital-mechanics.example.com", "Katherine Coleman Goble Johnson", "write"],
          ["dorothy.vaughan@west-area-computing.example.com", "Dorothy Johnson Vaughan", "read"],
          ["mary.jackson@langley-research-center.example.gov", "Mary Winston Jackson", undefined],
        ] as const) {
          const person = (await api("POST", "/users", { email, name, role: "member", password: PASSWORD })).body;
          if (role) await api("PUT", `/projects/${PROJECT}/access/${person.id}`, { role });
        }
        const disabled = (
          await api("POST", "/users", { email: "former.contractor@agency.example.com", name: "Former contractor" })
        ).body;
        await api("PATCH", `/users/${disabled.id}`, { disabled: true });

        // Service keys with long names, bound to environments and to none.
        await api("POST", `/projects/${PROJECT}/keys`, {
          role: "write",
          name: "deploy bot of the checkout and payments teams, production cluster eu-west, rotated every 90 days",
          environment: null,
        });
        await api("POST", `/projects/${PROJECT}/keys`, {
          role: "read",
          name: "read-only dashboard for the support team's escalation rota (Grafana, staging)",
          environment: "staging",
        });
        await api("POST", `/projects/${PROJECT}/keys`, {
          role: "check",
          name: "iOS and Android apps, build 2024.11 and later",
          environment: "production",
        });

        // A webhook with a long URL that answers, and one that fails.
        await api("POST", `/projects/${PROJECT}/webhooks`, {
          url: `${receiver.url}/flagstaff/hooks/checkout-and-payments/production/deliveries?team=payments-platform&token=0123456789abcdef0123456789abcdef`,
          events: ["flag.*", "segment.*"],
        });
        receiver.answer = (r) => (r.path.startsWith("/broken") ? { status: 500 } : { status: 200 });
        await api("POST", `/projects/${PROJECT}/webhooks`, {
          url: `${receiver.url}/broken/receiver-of-the-analytics-pipeline-that-is-down-for-maintenance`,
          events: ["flag.*"],
        });

        // Segments, one with conditions and members.
        segment = (
          await api("POST", `/projects/${PROJECT}/segments`, {
            name: "Beta testers in the Nordic and Baltic countries",
            description: "Customers who opted in to early features from the account settings page, any plan",
          })
        ).body.id;
        await api("PATCH", `/projects/${PROJECT}/segments/${segment}`, {
          addActors: [ACTOR, "anna.andersson@example.se", "mikk.tamm@example.ee"],
          conditions: [
            { attribute: "country", operator: "in", values: ["SE", "NO", "DK", "FI", "IS", "EE", "LV", "LT"] },
          ],
        });
        await api("POST", `/projects/${PROJECT}/segments`, {
          name: "Employees",
          description: "Everyone at the company",
        });

        // Flags: a string flag with three described variants, rules, a prerequisite, actors and a segment.
        await api("POST", flagPath("new-checkout"), { description: "The one-page checkout" });
        await api("PATCH", flagPath("new-checkout", "production"), { status: "enabled" });
        await api("PATCH", flagPath("new-checkout", "staging"), { status: "enabled" });
        await api("POST", flagPath(FLAG), {
          description:
            "Which colour the Pay now button has for customers who bought before; measured by the conversion dashboard",
          type: "string",
          variants: [
            { key: "control-blue", value: "#1d4ed8", description: "The colour of today, for comparison" },
            { key: "high-contrast-green", value: "#15803d", description: "Green on white, 7:1 contrast ratio" },
            { key: "warm-orange", value: "#c2410c", description: "Orange, as the marketing team's proposal" },
          ],
        });
        const rules = [
          {
            id: "nordic-beta",
            description: "Beta testers in the Nordic countries see the green one",
            conditions: [{ operator: "in_segment", values: [segment] }],
            serve: { variant: "high-contrast-green" },
          },
          {
            id: "returning-app-customers",
            conditions: [
              { attribute: "appVersion", operator: "semver_gte", values: ["2024.11.0"] },
              { attribute: "country", operator: "in", values: ["FR", "DE", "NL", "BE", "LU"] },
            ],
            serve: {
              split: {
                weights: [
                  { variant: "control-blue", weight: 34 },
                  { variant: "high-contrast-green", weight: 33 },
                  { variant: "warm-orange", weight: 33 },
                ],
              },
            },
          },
        ];
        await api("PATCH", flagPath(FLAG, "production"), {
          status: "conditional",
          rules,
          prerequisites: [{ flag: "new-checkout", variants: ["on"] }],
          addActors: [ACTOR, "qa-automation-account-for-the-checkout-regression-suite"],
          addSegments: [segment],
        });
        await api("PATCH", flagPath(FLAG, "staging"), { status: "enabled", percentageActors: 50 });
        await api("POST", flagPath("legacy-payment-provider-fallback-for-the-nordic-and-baltic-markets"), {
          description: "Routes card payments to the old provider when the new one times out",
        });
        await api("POST", flagPath("dark-mode"), {});
        await api("PATCH", flagPath("dark-mode", "production"), { status: "conditional", percentageActors: 25 });
        await api("POST", flagPath("price"), {
          type: "number",
          variants: [
            { key: "low", value: 9 },
            { key: "high", value: 12 },
          ],
        });
        await api("PUT", `/projects/${PROJECT}/actors/${ACTOR}`, {
          name: "Customer in Tallinn, Estonia (loyalty programme, gold tier)",
          imageURL: "https://images.example.com/avatars/customer-4f1c2a9e-8b7d-4c3e-9a1f-2d6b5e8c7a90/large.png",
        });
        // The failing webhook has a failed attempt to show.
        const hooks = (await api("GET", `/projects/${PROJECT}/webhooks`)).body.data as { id: string; url: string }[];
        const broken = hooks.find((h) => h.url.includes("/broken/"))!;
        await waitFor(
          "the failing webhook's failed attempt",
          async () => (await api("GET", `/projects/${PROJECT}/webhooks/${broken.id}/deliveries`)).body.data,
          { until: (d: any[]) => d.some((x) => x.lastStatusCode === 500) },
        );
        browser = await launchChromium();
      },
      { timeout: 120_000 },
    );
    after(
      async () => {
        await closeBrowser(browser);
        await Promise.allSettled([server?.close(), receiver?.close()]);
      },
      { timeout: 30_000 },
    );

    /** Where a visit is: the window's width, who is signed in, and the problems found so far. */
    interface At {
      width: number;
      who: string;
      problems: string[];
    }

    /** A page to visit: where, what shows it is ready, and what to do there (open a form, a dialog). */
    interface Visit {
      name: string;
      path: string;
      ready: (page: Page) => Promise<unknown>;
      /** Done at each width once the page is ready; may check dialogs itself (on a phone: dialogAt). */
      act?: (page: Page, at: At) => Promise<void>;
    }

    const heading = (name: string | RegExp) => (page: Page) =>
      page.getByRole("heading", { level: 1, name }).first().waitFor();
    const table = (name: string) => (page: Page) => page.getByRole("table", { name }).waitFor();

    /** Opens a dialog with `open`, checks on a phone that it fits and screenshots it, and closes it. */
    async function dialogAt(page: Page, at: At, what: string, open: () => Promise<Locator>): Promise<void> {
      const { width, who, problems } = at;
      const dialog = await open();
      await dialog.waitFor();
      if (width <= PHONE) {
        const wrong = await dialogFits(dialog);
        if (wrong) problems.push(`${what} dialog at ${width} px: ${wrong}`);
        const inside = await look(page, "dialog[open]");
        if (inside.unreachable.length > 0) {
          problems.push(`${what} dialog at ${width} px, out of reach: ${inside.unreachable.join(", ")}`);
        }
        await screenshot(page, `narrow-${dialect}-${who}-${what}-dialog-${width}.png`, false);
        // Its buttons are reached by scrolling the dialog itself, when it is taller than the window.
        const cancel = dialog.getByRole("button", { name: "Cancel" });
        await cancel.scrollIntoViewIfNeeded();
        const box = await cancel.boundingBox();
        if (
          !box ||
          box.y < 0 ||
          box.y + box.height > HEIGHT[width as (typeof WIDTHS)[number]] ||
          box.x < 0 ||
          box.x + box.width > width
        ) {
          problems.push(`${what} dialog at ${width} px: its buttons are out of reach (${JSON.stringify(box)})`);
        }
        await screenshot(page, `narrow-${dialect}-${who}-${what}-dialog-end-${width}.png`, false);
      }
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden" });
    }

    /** A project's pages (made once the project is seeded: they name its segment). */
    const projectPages = (): Visit[] => [
      {
        name: "flags",
        path: `/p/${PROJECT}/flags`,
        ready: table("Flags"),
      },
      {
        name: "new-flag",
        path: `/p/${PROJECT}/flags`,
        ready: table("Flags"),
        act: async (page) => {
          await page.getByRole("button", { name: "New flag" }).click();
          const form = page.getByRole("form", { name: "New flag" });
          await form.getByLabel("Name").fill("a-new-flag-with-a-rather-long-name-for-a-phone");
          await form.getByLabel("Type").selectOption("string");
          await form.getByLabel("Key 1").fill("control");
          await form.getByLabel("Description 1").fill("What every customer sees today");
        },
      },
      {
        name: "flag",
        path: `/p/${PROJECT}/flags/${FLAG}`,
        ready: FLAG_PAGE.ready,
        act: async (page, at) => {
          // The variants editor: each row's Description and Remove on screen, whatever the width.
          const variants = await FLAG_PAGE.variants(page);
          const rows = variants.getByTestId("variant-row");
          assert.equal(await rows.count(), 3);
          for (let i = 0; i < 3; i++) {
            const parts: [string, Locator][] = [
              ["Description", rows.nth(i).getByLabel(`Description ${i + 1}`)],
              ["Remove", rows.nth(i).getByRole("button", { name: /^Remove variant/ })],
            ];
            for (const [what, part] of parts) {
              const box = await part.boundingBox();
              if (!box || box.x < 0 || box.x + box.width > at.width) {
                at.problems.push(`variant ${i + 1}'s ${what} at ${at.width} px: ${JSON.stringify(box)}`);
              }
            }
          }
          if (at.width === PHONE) {
            await rows.first().scrollIntoViewIfNeeded();
            await screenshot(page, `narrow-${dialect}-${at.who}-flag-variants-390.png`, false);
          }
          await page.getByRole("heading", { level: 1, name: FLAG }).scrollIntoViewIfNeeded();
          await dialogAt(page, at, "copy-to", () => FLAG_PAGE.copyDialog(page));
        },
      },
      {
        // The usage chart: drawn to the width, its range picker and legend on screen.
        name: "flag-usage",
        path: `/p/${PROJECT}/flags/${FLAG}?tab=usage`,
        ready: (page) => page.getByTestId("usage-chart").waitFor(),
      },
      { name: "segments", path: `/p/${PROJECT}/segments`, ready: table("Segments") },
      {
        name: "segment",
        path: `/p/${PROJECT}/segments/${segment}`,
        ready: (page) => page.getByRole("table", { name: "Members" }).waitFor(),
      },
      {
        name: "actor",
        path: `/p/${PROJECT}/actors/${ACTOR}`,
        ready: (page) => page.getByText("Customer in Tallinn").waitFor(),
      },
      { name: "history", path: `/p/${PROJECT}/history`, ready: table("Events") },
      { name: "environments", path: `/p/${PROJECT}/environments`, ready: heading("Environments") },
      {
        name: "keys",
        path: `/p/${PROJECT}/keys`,
        ready: table("Keys"),
        act: async (page, at) => {
          await dialogAt(page, at, "revoke-key", async () => {
            await page.getByRole("button", { name: /^Revoke deploy bot/ }).click();
            return page.getByRole("dialog", { name: /^Revoke deploy bot/ });
          });
          await page.getByRole("button", { name: "New key" }).click();
          await page.getByRole("form", { name: "New key" }).waitFor();
        },
      },
      {
        name: "webhooks",
        path: `/p/${PROJECT}/webhooks`,
        ready: (page) => page.getByTestId("webhook-failing").waitFor(),
        act: async (page) => {
          const card = page.getByRole("region", { name: /^Webhook .*\/broken\// });
          await card.getByRole("button", { name: "Recent deliveries" }).click();
          await card.getByRole("table", { name: "Deliveries" }).waitFor();
        },
      },
      { name: "access", path: `/p/${PROJECT}/access`, ready: table("Access") },
    ];

    /** Visits each page at each width, and says what overflowed where. */
    async function visitAll(page: Page, who: string, visits: Visit[]): Promise<void> {
      const problems: string[] = [];
      const widths: string[] = [];
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: HEIGHT[width] });
        for (const visit of visits) {
          await page.goto(`${server.url}/console${visit.path}`);
          await visit.ready(page);
          await visit.act?.(page, { width, who, problems });
          await page.evaluate(() => document.fonts.ready);
          const seen = await look(page);
          widths.push(`${who} ${visit.name} at ${width} px: ${width + seen.overflow} px wide`);
          if (seen.overflow > 0) {
            problems.push(
              `${who} ${visit.name} at ${width} px scrolls sideways: ${width + seen.overflow} px wide (${seen.widening.join(", ")})`,
            );
          }
          if (seen.unreachable.length > 0) {
            problems.push(`${who} ${visit.name} at ${width} px, out of reach: ${seen.unreachable.join(", ")}`);
          }
          if (width === PHONE) await screenshot(page, `narrow-${dialect}-${who}-${visit.name}-390.png`);
        }
      }
      console.log(widths.join("\n"));
      assert.deepEqual(problems, [], "every page fits the window");
    }

    async function passwordSignIn(page: Page, email: string): Promise<void> {
      await page.goto(`${server.url}/console/`);
      await page.getByLabel("E-mail").fill(email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByTestId("signed-in").waitFor();
    }

    /** A personal key with a long name, made in the person's session as the Me page would. */
    async function personalKey(page: Page, body: Record<string, unknown>): Promise<void> {
      const status = await page.evaluate(async (b) => {
        const res = await fetch("/users/me/keys", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(b),
        });
        return res.status;
      }, body);
      assert.equal(status, 201, "the personal key is made");
    }

    async function withTab(fn: (page: Page) => Promise<void>) {
      const tab = await openTab(browser);
      try {
        await fn(tab.page);
        assert.deepEqual(tab.problems, [], "no errors in the page");
      } finally {
        await tab.context.close();
      }
    }

    test("an admin: every page fits from 1280 down to 320 px, dialogs too", T, async () => {
      await withTab(async (page) => {
        await passwordSignIn(page, ADMIN.email);
        await personalKey(page, {
          name: "laptop, for the release scripts of the checkout and payments teams",
          project: PROJECT,
          role: "write",
          environment: null,
        });
        await visitAll(page, "admin", [
          {
            name: "projects",
            path: "/projects",
            ready: table("Projects"),
            act: async (page, at) => {
              await dialogAt(page, at, "delete-project", async () => {
                await page.getByRole("button", { name: `Delete project ${OTHER}` }).click();
                return page.getByRole("dialog", { name: `Delete project ${OTHER}?` });
              });
            },
          },
          ...projectPages(),
          {
            name: "people",
            path: "/users",
            ready: table("People"),
          },
          { name: "me", path: "/me", ready: table("Personal keys") },
        ]);
      });
    });

    test(
      "a member, admin of one project and reader of another: every page fits from 1280 down to 320 px",
      T,
      async () => {
        await withTab(async (page) => {
          await passwordSignIn(page, MEMBER.email);
          await personalKey(page, { name: "phone, read-only, for looking things up on call", project: OTHER });
          await visitAll(page, "member", [
            { name: "projects", path: "/projects", ready: table("Projects") },
            ...projectPages().filter((v) => ["flags", "flag", "keys", "access"].includes(v.name)),
            { name: "read-flags", path: `/p/${OTHER}/flags`, ready: heading("Flags") },
            { name: "me", path: "/me", ready: table("Personal keys") },
          ]);
        });
      },
    );

    test("signed out: the sign-in page and its key form fit from 1280 down to 320 px", T, async () => {
      await withTab(async (page) => {
        await visitAll(page, "signed-out", [
          { name: "sign-in", path: "/", ready: (page) => page.getByLabel("E-mail").waitFor() },
          {
            name: "sign-in-key",
            path: "/",
            ready: (page) => page.getByLabel("E-mail").waitFor(),
            act: async (page) => {
              await page.getByRole("button", { name: "Use an API key" }).click();
              await page.getByLabel("API key").waitFor();
            },
          },
        ]);
      });
    });
  });
}
