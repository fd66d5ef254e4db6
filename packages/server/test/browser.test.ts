// Flagstaff as a real browser sees it: Debian's Chromium driven by playwright-core. Without Chromium
// these tests fail (see helpers/browser.ts); .ci/run installs it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
import { STREAM_TOKEN_WINDOW_MS } from "../src/features/ofrep/stream-tokens.js";
import {
  browserSkip,
  closeBrowser,
  launchChromium,
  openFeatureModules,
  SCREENSHOTS,
  type StaticSite,
  serveStatic,
} from "./helpers/browser.js";

const dialect = DIALECTS[0] ?? "sqlite";
const POLL_MS = 300;

/**
 * Waits, when the clock is within a few seconds of it, until the stream-token window has turned: the
 * bulk answer's ETag holds the window (its advertised token is renewed with it), so a refetch across the
 * turn is a 200 that changes no flag, and the provider reports an empty ConfigurationChanged. The tests
 * that count those events run clear of the turn.
 */
async function clearOfTokenWindowTurn(): Promise<void> {
  const turn = Math.ceil(Date.now() / STREAM_TOKEN_WINDOW_MS) * STREAM_TOKEN_WINDOW_MS;
  if (turn - Date.now() > 20_000) return;
  await waitFor("the stream-token window to turn", () => Date.now() > turn + 100, { timeoutMs: 25_000 });
}

/** What the page keeps in `window.flagstaff` for the test to read. */
interface PageState {
  ready: boolean;
  value: boolean | undefined;
  /** `flagsChanged` of each ConfigurationChanged event, in order. */
  changes: string[][];
  errors: string[];
  /** With `typed` in the page's query: typed flags resolved through the stock web provider. */
  typed?: {
    string: { value: string; variant?: string; reason?: string };
    object: { value: unknown; variant?: string };
    mismatch: { value: boolean; errorCode?: string };
    missing: { value: string; errorCode?: string };
  };
}

const PAGE_SCRIPT = `
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature, ProviderEvents } from "@openfeature/web-sdk";

const settings = Object.fromEntries(new URLSearchParams(location.search));
const state = (window.flagstaff = { ready: false, value: undefined, changes: [], errors: [] });
const client = OpenFeature.getClient();

function render() {
  state.value = client.getBooleanValue(settings.flag, false);
  if (settings.typed) {
    const string = client.getStringDetails(settings.typed, "none");
    const object = client.getObjectDetails(settings.objectFlag, {});
    const mismatch = client.getBooleanDetails(settings.typed, false);
    const missing = client.getStringDetails("no-such-flag", "fallback");
    state.typed = {
      string: { value: string.value, variant: string.variant, reason: string.reason },
      object: { value: object.value, variant: object.variant },
      mismatch: { value: mismatch.value, errorCode: mismatch.errorCode },
      missing: { value: missing.value, errorCode: missing.errorCode },
    };
    document.getElementById("typed").textContent =
      settings.typed + " (country " + settings.country + "): " + JSON.stringify(state.typed.string) + "\\n" +
      settings.objectFlag + ": " + JSON.stringify(state.typed.object) + "\\n" +
      settings.typed + " as a boolean: " + JSON.stringify(state.typed.mismatch) + "\\n" +
      "no-such-flag: " + JSON.stringify(state.typed.missing);
  }
  document.getElementById("flag").textContent = settings.flag;
  document.getElementById("actor").textContent = settings.actor;
  const value = document.getElementById("value");
  value.textContent = state.value ? "on" : "off";
  value.className = state.value ? "on" : "off";
  document.getElementById("changes").textContent = String(state.changes.length);
  document.getElementById("mode").textContent =
    settings.changeDetection === "polling" ? "polling every " + settings.pollInterval + " ms" : "told of changes by its event stream";
}

client.addHandler(ProviderEvents.ConfigurationChanged, (details) => {
  state.changes.push(details?.flagsChanged ?? []);
  render();
});
try {
  await OpenFeature.setContext({ targetingKey: settings.actor, ...(settings.country ? { country: settings.country } : {}) });
  await OpenFeature.setProviderAndWait(
    new OFREPWebProvider({
      baseUrl: settings.baseUrl,
      headers: [["Authorization", "Bearer " + settings.key]],
      pollInterval: Number(settings.pollInterval),
      changeDetection: settings.changeDetection,
      disableVisibilityRefresh: settings.disableVisibilityRefresh === "true",
    }),
  );
  render();
  state.ready = true;
} catch (error) {
  state.errors.push(String(error));
  document.getElementById("value").textContent = "error: " + error;
}
`;

const pageHtml = (importMap: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>Flagstaff from another origin</title>
<script type="importmap">${importMap}</script>
<style>
  body { font: 18px system-ui, sans-serif; margin: 2rem; }
  .on { color: #087f23; } .off { color: #b00020; }
  strong { font-size: 2rem; }
</style>
</head>
<body>
<h1>Flagstaff from another origin</h1>
<p>OpenFeature web SDK with the OFREP web provider (<span id="mode">?</span>).</p>
<p>Flag <code id="flag">?</code> for actor <code id="actor">?</code> is <strong id="value">loading…</strong></p>
<p>Configuration changes seen: <span id="changes">0</span></p>
<pre id="typed"></pre>
<script type="module" src="/page.js"></script>
</body>
</html>`;

describe(`in Chromium: the OpenFeature web SDK on another origin [${dialect}]`, { skip: browserSkip }, () => {
  let site: StaticSite | undefined;
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let project: string;
  let checkKey: string;

  before(
    async () => {
      const { files, importMap } = openFeatureModules();
      files.set("/", { type: "text/html; charset=utf-8", body: pageHtml(importMap) });
      files.set("/page.js", { type: "text/javascript", body: PAGE_SCRIPT });
      site = await serveStatic(files);
      server = await startServer({ dialect, env: { CORS_ALLOWED_ORIGINS: site.origin } });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      await server.request("POST", `/projects/${project}/flags/banner`, {});
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      await closeBrowser(browser);
      await Promise.allSettled([site?.close(), server?.close()]);
    },
    { timeout: 30_000 },
  );

  test("reads a flag, sees each change exactly once, and gets 304 on every poll in between", {
    timeout: 60_000,
  }, async () => {
    const api = server!;
    const context = await browser!.newContext();
    const page: Page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    // Statuses of the provider's bulk evaluations, in order (the preflight is not among them).
    const polls: number[] = [];
    page.on("response", (response) => {
      if (response.request().method() === "POST" && new URL(response.url()).pathname === "/ofrep/v1/evaluate/flags") {
        polls.push(response.status());
      }
    });
    const state = () => page.evaluate(() => (globalThis as unknown as { flagstaff: PageState }).flagstaff);
    const explain = () => `polls ${polls.join(",")}; page problems: ${problems.join(" | ") || "none"}`;

    /** Waits for the page to show `value` after `changes` events, then for two quiet polls (304) after it. */
    async function expectPage(value: boolean, changes: number, screenshot: string): Promise<void> {
      await page
        .waitForFunction(
          ([v, c]) => {
            const s = (globalThis as unknown as { flagstaff?: PageState }).flagstaff;
            return s?.ready === true && s.value === v && s.changes.length >= c;
          },
          [value, changes] as const,
          { timeout: 10_000 },
        )
        .catch((error) => {
          throw new Error(`the page never showed ${value} after ${changes} changes (${explain()}): ${error}`);
        });
      const seen = polls.length;
      await waitFor(
        () => `two 304s; ${explain()}`,
        () => polls.slice(seen).filter((s) => s === 304).length >= 2,
        {
          timeoutMs: 10_000,
        },
      );
      const now = await state();
      assert.equal(now.value, value);
      assert.deepEqual(now.changes, Array(changes).fill(["banner"]), "one ConfigurationChanged per change");
      await page.screenshot({ path: join(SCREENSHOTS, screenshot) });
    }

    try {
      await clearOfTokenWindowTurn();
      const query = new URLSearchParams({
        baseUrl: api.url,
        key: checkKey,
        flag: "banner",
        actor: "alice",
        pollInterval: String(POLL_MS),
        // The server advertises an event stream; this test is about polling.
        changeDetection: "polling",
      });
      await page.goto(`${site!.origin}/?${query}`);
      await expectPage(false, 0, "ofrep-web-1-initial.png");
      await api.request("PATCH", `/projects/${project}/flags/banner`, {
        body: { status: "conditional", addActors: ["alice"] },
      });
      await expectPage(true, 1, "ofrep-web-2-on.png");
      await api.request("PATCH", `/projects/${project}/flags/banner`, { body: { status: "disabled" } });
      await expectPage(false, 2, "ofrep-web-3-off.png");
      // The first evaluation and one per change are 200; every other poll was answered 304.
      assert.match(polls.join(","), /^200(,304)+,200(,304)+,200(,304)+$/, explain());
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test("resolves string and object flags by rules on the context's attributes; TYPE_MISMATCH and FLAG_NOT_FOUND", {
    timeout: 60_000,
  }, async () => {
    const api = server!;
    const typedProject = await createProject(api);
    const key = (await createKey(api, typedProject, "check")).key;
    await api.request("POST", `/projects/${typedProject}/flags/banner`, {});
    const headline = await api.request("POST", `/projects/${typedProject}/flags/headline`, {
      body: {
        type: "string",
        variants: [
          { key: "plain", value: "Welcome" },
          { key: "local", value: "Willkommen" },
        ],
        onVariant: "plain",
        offVariant: "plain",
      },
    });
    assert.equal(headline.status, 201, headline.text);
    const rules = [
      {
        id: "germany",
        conditions: [{ attribute: "country", operator: "in", values: ["DE", "AT"] }],
        serve: { variant: "local" },
      },
    ];
    const patched = await api.request("PATCH", `/projects/${typedProject}/flags/headline`, {
      body: { status: "conditional", rules },
    });
    assert.equal(patched.status, 200, patched.text);
    await api.request("POST", `/projects/${typedProject}/flags/layout`, {
      body: {
        type: "object",
        variants: [
          { key: "wide", value: { columns: 3, sidebar: true } },
          { key: "narrow", value: { columns: 1 } },
        ],
      },
    });
    await api.request("PATCH", `/projects/${typedProject}/flags/layout`, { body: { status: "enabled" } });
    const context = await browser!.newContext();
    const page: Page = await context.newPage();
    page.setDefaultTimeout(10_000);
    try {
      await clearOfTokenWindowTurn();
      const query = new URLSearchParams({
        baseUrl: api.url,
        key,
        flag: "banner",
        typed: "headline",
        objectFlag: "layout",
        actor: "alice",
        country: "DE",
        pollInterval: "0",
        changeDetection: "polling",
      });
      await page.goto(`${site!.origin}/?${query}`);
      await page.waitForFunction(() => (globalThis as unknown as { flagstaff?: PageState }).flagstaff?.ready === true);
      const typed = (await page.evaluate(() => (globalThis as unknown as { flagstaff: PageState }).flagstaff)).typed;
      assert.deepEqual(typed?.string, { value: "Willkommen", variant: "local", reason: "TARGETING_MATCH" });
      assert.deepEqual(typed?.object, { value: { columns: 3, sidebar: true }, variant: "wide" });
      assert.equal(typed?.mismatch.value, false);
      assert.equal(typed?.mismatch.errorCode, "TYPE_MISMATCH");
      assert.deepEqual(typed?.missing, { value: "fallback", errorCode: "FLAG_NOT_FOUND" });
      await page.screenshot({ path: join(SCREENSHOTS, "ofrep-web-typed.png") });
    } finally {
      await context.close();
    }
  });

  test("with polling off, the event stream tells the provider to refetch, across origins, within seconds", {
    timeout: 60_000,
  }, async () => {
    const api = server!;
    const pushed = await createProject(api);
    const key = (await createKey(api, pushed, "check")).key;
    await api.request("POST", `/projects/${pushed}/flags/banner`, {});
    const context = await browser!.newContext();
    const page: Page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    // Every bulk evaluation (with its query: an SSE-triggered refetch carries flagConfigEtag) and every
    // event-stream connection, with their statuses.
    const bulks: { status: number; query: URLSearchParams }[] = [];
    const streams: { status: number; allowOrigin: string | null }[] = [];
    page.on("response", async (response) => {
      const url = new URL(response.url());
      if (response.request().method() === "POST" && url.pathname === "/ofrep/v1/evaluate/flags") {
        bulks.push({ status: response.status(), query: url.searchParams });
      }
      if (url.pathname === "/ofrep/v1/event-stream") {
        streams.push({
          status: response.status(),
          allowOrigin: await response.headerValue("access-control-allow-origin"),
        });
      }
    });
    const explain = () =>
      `bulk ${bulks.map((b) => `${b.status}?${b.query}`).join(",")}; streams ${JSON.stringify(streams)}; ` +
      `page problems: ${problems.join(" | ") || "none"}`;
    const showing = (value: boolean, changes: number) =>
      page
        .waitForFunction(
          ([v, c]) => {
            const s = (globalThis as unknown as { flagstaff?: PageState }).flagstaff;
            return s?.ready === true && s.value === v && s.changes.length >= c;
          },
          [value, changes] as const,
          { timeout: 5_000 },
        )
        .catch((error) => {
          throw new Error(`the page never showed ${value} after ${changes} changes (${explain()}): ${error}`);
        });

    try {
      await clearOfTokenWindowTurn();
      const query = new URLSearchParams({
        baseUrl: api.url,
        key,
        flag: "banner",
        actor: "alice",
        pollInterval: "0",
        disableVisibilityRefresh: "true",
      });
      await page.goto(`${site!.origin}/?${query}`);
      await showing(false, 0);
      // Connected, cross-origin: the stream's first message makes the provider refetch once (a 304).
      await waitFor(explain, () => streams.length === 1 && bulks.some((b) => b.query.has("flagConfigEtag")));
      assert.deepEqual(streams, [{ status: 200, allowOrigin: site!.origin }]);
      const before = bulks.length;

      await api.request("PATCH", `/projects/${pushed}/flags/banner`, {
        body: { status: "conditional", addActors: ["alice"] },
      });
      await showing(true, 1);
      // The refetch that brought the change was the event's: it carries the message's etag as flagConfigEtag.
      const refetches = bulks.slice(before);
      assert.ok(refetches.length >= 1, explain());
      assert.ok(
        refetches.every((b) => b.query.has("flagConfigEtag")),
        `only event-triggered refetches: ${explain()}`,
      );
      await page.screenshot({ path: join(SCREENSHOTS, "ofrep-web-4-pushed-on.png") });

      await api.request("PATCH", `/projects/${pushed}/flags/banner`, { body: { status: "disabled" } });
      await showing(false, 2);
      const state = await page.evaluate(() => (globalThis as unknown as { flagstaff: PageState }).flagstaff);
      assert.deepEqual(state.changes, [["banner"], ["banner"]], "one ConfigurationChanged per change");
      assert.equal(streams.length, 1, `one connection throughout: ${explain()}`);
      assert.ok(
        bulks.every((b, i) => i === 0 || b.query.has("flagConfigEtag")),
        `no polling, only the first evaluation and refetches the stream asked for: ${explain()}`,
      );
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});

describe(`in Chromium: /docs over plain HTTP on a host name other than localhost [${dialect}]`, {
  skip: browserSkip,
}, () => {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let project: string;
  let checkKey: string;

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      await server.request("POST", `/projects/${project}/flags/banner`, {});
      await server.request("PATCH", `/projects/${project}/flags/banner`, {
        body: { status: "conditional", addActors: ["alice@example.com"] },
      });
      // Browsers never upgrade localhost or 127.0.0.1 to https, so the page is opened by another name.
      browser = await launchChromium(["--host-resolver-rules=MAP flagstaff.test 127.0.0.1"]);
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

  test("the page loads without a console error or a Content-Security-Policy violation", {
    timeout: 60_000,
  }, async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning")
        problems.push(`${message.type()}: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
    // The violation itself, as the page sees it: a report names the directive and what it blocked.
    await page.exposeFunction("reportViolation", (text: string) => problems.push(`violation: ${text}`));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (event) => {
        const report = (window as unknown as { reportViolation(text: string): void }).reportViolation;
        report(
          `${event.violatedDirective} blocked ${event.blockedURI || "an inline"} at ${event.sourceFile}:${event.lineNumber}:${event.columnNumber}`,
        );
      });
    });
    try {
      await page.goto(`http://flagstaff.test:${new URL(server!.url).port}/docs/`);
      await page.locator(".opblock").first().waitFor();
      // Expanding an operation renders more of the UI (its own styles included).
      await page.locator(".opblock-summary").first().click();
      await page.locator(".opblock.is-open .opblock-body").first().waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, "docs-no-csp-errors.png") });
      assert.deepEqual(problems, [], "nothing logged to the console");
    } finally {
      await context.close();
    }
  });

  test("the UI renders, and Try it out on the check sends an actor id and shows the 200", {
    timeout: 60_000,
  }, async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const failed: string[] = [];
    page.on("requestfailed", (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    try {
      await page.goto(`http://flagstaff.test:${new URL(server!.url).port}/docs/`);
      await page
        .locator(".opblock")
        .first()
        .waitFor()
        .catch((error) => {
          throw new Error(`no operation rendered; failed requests: ${failed.join(" | ") || "none"}: ${error}`);
        });
      assert.ok((await page.locator(".opblock").count()) > 20, "the operations list");
      await page.screenshot({ path: join(SCREENSHOTS, "docs-operations.png") });

      await page.locator(".auth-wrapper button.authorize").click();
      const dialog = page.locator(".modal-ux");
      await dialog.locator("#auth-bearer-value").fill(checkKey);
      // The bearer scheme's form (the OFREP event stream's token scheme has its own).
      await dialog
        .locator("form", { has: page.locator("#auth-bearer-value") })
        .locator("button.authorize")
        .click();
      await dialog.locator("button.btn-done").first().click();

      const check = page.locator(
        '.opblock:has(.opblock-summary-path[data-path="/projects/{projectId}/flags/{flagName}/check"])',
      );
      await check.locator(".opblock-summary").click();
      await check.locator("button.try-out__btn").click();
      await check.locator('tr[data-param-name="projectId"] input').fill(project);
      await check.locator('tr[data-param-name="flagName"] input').fill("banner");
      await check.locator('tr[data-param-name="actorIds"] button.json-schema-form-item-add').click();
      await check.locator('tr[data-param-name="actorIds"] input').fill("alice@example.com");
      const answer = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith("/check"));
      await check.locator("button.execute").click();
      const response = await answer.catch(async (error) => {
        const shown = await check
          .locator(".validation-errors")
          .textContent({ timeout: 1_000 })
          .catch(() => "none");
        throw new Error(`Execute sent no request (validation errors: ${shown}): ${error}`);
      });
      assert.equal(response.status(), 200);
      assert.deepEqual(await response.json(), { enabled: true });
      const shown = check.locator(".live-responses-table .response .response-col_status");
      await shown.first().waitFor();
      assert.equal((await shown.first().textContent())?.trim(), "200");
      await check.locator(".live-responses-table").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, "docs-try-it-out.png") });
      assert.deepEqual(failed, [], "every asset loaded");
    } finally {
      await context.close();
    }
  });
});
