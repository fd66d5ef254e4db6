// Debian's Chromium driven by playwright-core, for every package's browser tests: one place that finds
// it, launches it with the same flags, and registers it with the harness from the start, so a test that
// times out cannot leave a browser running.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { track } from "./cleanup.js";
import { withDeadline } from "./wait.js";

/** Debian's Chromium: the machine has no network, so no browser build can be downloaded. */
export const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Why the browser tests are skipped, or false when they run. Without Chromium they fail rather than
 * skip, so that CI cannot pass without them; only a developer's machine may opt out (never with CI=true).
 */
export const browserSkip: string | false =
  !existsSync(CHROMIUM) && process.env.SKIP_BROWSER_TESTS === "1" && process.env.CI !== "true"
    ? `no Chromium at ${CHROMIUM}, and SKIP_BROWSER_TESTS=1`
    : false;

/** Launches Chromium, tracked by the harness from the start. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: install it (apt-get install chromium; .ci/run does), or set SKIP_BROWSER_TESTS=1 to skip the browser tests on this machine`,
    );
  }
  const launching = chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS, ...extraArgs],
    timeout: 30_000,
  });
  const untrack = track({
    label: "Chromium",
    dispose: async () => closeBrowser(await launching.catch(() => undefined)),
  });
  const browser = await launching;
  browser.on("disconnected", untrack);
  return browser;
}

/** Closes a browser, giving up after a while so that an `after` hook can never hang on it. */
export async function closeBrowser(browser: Browser | undefined): Promise<void> {
  if (browser === undefined) return;
  await withDeadline(browser.close(), 10_000, "closing Chromium").catch(() => {});
}
