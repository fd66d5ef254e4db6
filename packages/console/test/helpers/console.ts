// Drives the web console in Debian's Chromium (playwright-core) against a real in-process server.
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AxeBuilder } from "@axe-core/playwright";
import { browserSkip, closeBrowser, launchChromium as launchHarnessChromium } from "@flagstaff/test-harness";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository's root, from packages/console/dist/test/helpers. */
export const ROOT = join(here, "../../../../..");
export const CONSOLE_BUILD = join(ROOT, "packages/console/dist/web/index.html");

/**
 * Where screenshots go: docs/console when CONSOLE_SCREENSHOTS=docs (npm run screenshots:console), so that
 * an ordinary test run does not rewrite the documentation; a temporary folder otherwise.
 */
export const SCREENSHOTS =
  process.env.CONSOLE_SCREENSHOTS === "docs"
    ? join(ROOT, "docs/console")
    : join(tmpdir(), "flagstaff-console-screenshots");

/** Launches Chromium (see the harness) once the console is built, with the screenshot folder ready. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CONSOLE_BUILD)) throw new Error(`The console is not built (${CONSOLE_BUILD}): run npm run build`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  return launchHarnessChromium();
}

export { browserSkip, closeBrowser };

export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Errors the page raised: uncaught exceptions, console errors other than failed requests. */
  problems: string[];
}

export async function openTab(browser: Browser, colorScheme: "light" | "dark" = "light"): Promise<Tab> {
  const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"]).catch(() => {});
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => {
    // Answers the console shows the user (403, 404 …) are logged by Chromium as failed loads; they are not bugs.
    if (message.type() === "error" && !/Failed to load resource/.test(message.text())) problems.push(message.text());
  });
  return { context, page, problems };
}

/**
 * Opens the sign-in page's key form: shown at once by a server that offers no other way to sign in, behind
 * "Use an API key" when it offers a password or single sign-on.
 */
export async function showKeyForm(page: Page): Promise<void> {
  const field = page.getByLabel("API key");
  const other = page.getByRole("button", { name: "Use an API key" });
  await field.or(other).first().waitFor();
  if (await other.isVisible()) await other.click();
  await field.waitFor();
}

/** Signs in through the form (the key alone: whoami names its role and project), and waits for the header. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await showKeyForm(page);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByTestId("signed-in").waitFor();
}

/** axe's rules on ids that are not in the WCAG tags (deprecated there, or only "needs review"), run anyway. */
const DUPLICATE_ID_RULES = ["duplicate-id", "duplicate-id-active", "duplicate-id-aria"];

/**
 * axe-core on the page as it is: the serious and critical violations, described, and any duplicate id at
 * all (axe files a duplicate id that ARIA refers to under "needs review", and no longer runs its plain
 * duplicate-id rule by default: two dialogs titled by one id were missed that way).
 */
export async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .options({ rules: Object.fromEntries(DUPLICATE_ID_RULES.map((id) => [id, { enabled: true }])) })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
    .analyze();
  const duplicates = [...results.violations, ...results.incomplete].filter((v) => DUPLICATE_ID_RULES.includes(v.id));
  return [
    ...results.violations.filter(
      (v) => (v.impact === "serious" || v.impact === "critical") && !DUPLICATE_ID_RULES.includes(v.id),
    ),
    ...duplicates,
  ].map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help} — ${v.nodes
        .map((n) => n.target.join(" "))
        .slice(0, 3)
        .join(" | ")}`,
  );
}

/** A screenshot of the whole page, or of the window only (a dialog over a long page). */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage });
}

/** What Chromium draws a select's arrow in, beside its padding (measured: between 17 and 20 px at 15 px text). */
const SELECT_ARROW_PX = 19;

/**
 * Whether a select shows its chosen option's text whole: the text's width in the select's font against the
 * room inside it, less its arrow. A select is as wide as its longest option unless something caps it (a
 * column, a phone's width): then Chromium cuts the text under the arrow, and this says so.
 */
export async function selectShowsWhole(select: Locator): Promise<{ whole: boolean; text: string; detail: string }> {
  return select.evaluate((element, arrow) => {
    const el = element as HTMLSelectElement;
    const style = getComputedStyle(el);
    const context = document.createElement("canvas").getContext("2d");
    if (!context) throw new Error("no canvas");
    context.font = style.font;
    const text = el.selectedOptions[0]?.text ?? "";
    const width = context.measureText(text).width;
    const room = el.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight) - arrow;
    return { whole: width <= room, text, detail: `"${text}" is ${width.toFixed(1)} px in ${room.toFixed(1)} px` };
  }, SELECT_ARROW_PX);
}

/**
 * Saves a flag page's pending changes through its one bar: Review and save, an optional comment, Save
 * changes; then waits until the bar is gone (saved) or shows why not (the caller checks which).
 */
export async function saveFlagChanges(page: Page, comment?: string): Promise<void> {
  const bar = page.getByTestId("pending-bar");
  await bar.getByRole("button", { name: "Review and save" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  if (comment !== undefined) await dialog.getByLabel("Comment (optional)").fill(comment);
  await dialog.getByRole("button", { name: "Save changes" }).click();
  await dialog.waitFor({ state: "hidden" });
  // Saved (the bar goes), or refused (the bar says why, in an alert).
  const deadline = Date.now() + 15_000;
  while ((await bar.isVisible()) && (await bar.getByRole("alert").count()) === 0) {
    if (Date.now() > deadline) throw new Error("the flag page's save neither ended nor said why not in 15 s");
    await page.waitForTimeout(50);
  }
}

/** Shows one of the flag page's tabs (Targeting, Variants, Evaluate, Settings, History). */
export async function flagTab(page: Page, name: string): Promise<void> {
  await page.getByRole("tab", { name: new RegExp(`^${name}`) }).click();
  await page.getByRole("tabpanel", { name: new RegExp(`^${name}`) }).waitFor();
}
