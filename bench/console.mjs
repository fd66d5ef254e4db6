#!/usr/bin/env node
// npm run bench:console: the web console's budgets, measured in Debian's Chromium against a real server.
//   1. the JavaScript (and CSS) of the first load, gzipped: target ≤ 250 KB;
//   2. the flags page of a project with 100,000 flags: its first page shown within 500 ms of navigation;
//   3. a segment with 1,000,000 members: opened, and each page of members shown, within 500 ms.
// The data is seeded straight into a fresh SQLite database (bench/fixtures.mjs). Figures are printed beside
// their targets and saved to bench/results/console-<date>.txt.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { buildApp } from "../packages/server/dist/src/app.js";
import { loadConfig } from "../packages/server/dist/src/kernel/config.js";
import { openDatabase } from "../packages/server/dist/src/db/database.js";
import { freshDatabase, seed } from "./fixtures.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const WEB = join(root, "packages/console/dist/web");
const FLAGS = Number(process.env.BENCH_FLAGS || 100_000);
const MEMBERS = Number(process.env.BENCH_MEMBERS || 1_000_000);
const ADMIN_KEY = "bench-admin-key-0123456789";
const CHECK_KEY = "bench-check-key-0123456789";
const RUNS = 5;
const lines = [];
const say = (line) => {
  lines.push(line);
  console.log(line);
};
const row = (what, value, target, ok) =>
  say(`${ok ? "ok  " : "OVER"}  ${what.padEnd(58)} ${value.padStart(12)}   target ${target}`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

say(`Flagstaff console budgets, ${new Date().toISOString()} (node ${process.version}, SQLite)`);

// 1. First load: every script and stylesheet index.html references, gzipped.
const html = readFileSync(join(WEB, "index.html"), "utf8");
const assets = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
let jsGzip = 0;
let cssGzip = 0;
for (const asset of assets) {
  const size = gzipSync(readFileSync(join(WEB, asset)), { level: 9 }).length;
  if (asset.endsWith(".js")) jsGzip += size;
  else cssGzip += size;
}
row("JS of the first load, gzipped", `${(jsGzip / 1024).toFixed(1)} KB`, "≤ 250 KB", jsGzip <= 250 * 1024);
say(`      (CSS of the first load, gzipped: ${(cssGzip / 1024).toFixed(1)} KB; files: ${assets.join(", ")})`);

// 2 and 3: a project with FLAGS flags and a segment with MEMBERS members.
const database = await freshDatabase("sqlite");
const seeding = performance.now();
await seed(database.url, { flags: FLAGS, members: MEMBERS, checkKey: CHECK_KEY, adminKey: ADMIN_KEY });
say(
  `      (seeded ${FLAGS.toLocaleString("en")} flags and ${MEMBERS.toLocaleString("en")} members in ${((performance.now() - seeding) / 1000).toFixed(1)} s)`,
);
const config = loadConfig({ DATABASE_URL: database.url, PORT: "0", LOG_LEVEL: "silent" });
const service = await buildApp({ config, database: openDatabase(config), logger: false });
const address = await service.app.listen({ host: "127.0.0.1", port: 0 });
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu"],
});
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto(`${address}/console/`);
  await page.getByLabel("API key").fill(ADMIN_KEY);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("signed-in").waitFor();

  const flagsTable = page.getByRole("table", { name: "Flags" }).getByRole("row");
  const full = [];
  const inApp = [];
  for (let i = 0; i < RUNS; i++) {
    // A full load of the page (scripts from the cache, as on a return visit).
    let start = performance.now();
    await page.goto(`${address}/console/p/bench/flags`);
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Flags"] tbody tr').length === 20);
    full.push(performance.now() - start);
    // Navigation inside the app, from another page.
    await page.getByRole("link", { name: "Segments" }).click();
    await page.getByRole("table", { name: "Segments" }).waitFor();
    start = performance.now();
    await page.getByRole("link", { name: "Flags", exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Flags"] tbody tr').length === 20);
    inApp.push(performance.now() - start);
  }
  await flagsTable.first().waitFor();
  row(
    `Flags page, ${FLAGS.toLocaleString("en")} flags: first page, full load (median)`,
    `${median(full).toFixed(0)} ms`,
    "≤ 500 ms",
    median(full) <= 500,
  );
  row(
    `Flags page, ${FLAGS.toLocaleString("en")} flags: first page, in-app navigation`,
    `${median(inApp).toFixed(0)} ms`,
    "≤ 500 ms",
    median(inApp) <= 500,
  );
  let start = performance.now();
  await page.getByRole("button", { name: "Next →" }).click();
  await page.getByRole("link", { name: "flag-000020", exact: true }).waitFor();
  const next = performance.now() - start;
  row("Flags page: next page", `${next.toFixed(0)} ms`, "≤ 500 ms", next <= 500);

  const opens = [];
  const named = [];
  for (let i = 0; i < RUNS; i++) {
    start = performance.now();
    await page.goto(`${address}/console/p/bench/segments/seg_bench`);
    await page.getByRole("table", { name: "Members" }).waitFor();
    opens.push(performance.now() - start);
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    // The member count, from the segment's actorsCount.
    await page.getByText(`${MEMBERS.toLocaleString("en")} members ·`).waitFor();
    named.push(performance.now() - start);
  }
  row(
    `Segment of ${MEMBERS.toLocaleString("en")} members: opened, first page (median)`,
    `${median(opens).toFixed(0)} ms`,
    "≤ 500 ms",
    median(opens) <= 500,
  );
  row(
    `Segment of ${MEMBERS.toLocaleString("en")} members: its name and count shown (GET …/segments/{id})`,
    `${median(named).toFixed(0)} ms`,
    "≤ 500 ms",
    median(named) <= 500,
  );
  {
    const pages = [];
    for (let i = 0; i < RUNS; i++) {
      const first = await page.getByRole("table", { name: "Members" }).getByRole("link").first().innerText();
      start = performance.now();
      await page.getByRole("navigation", { name: "Members pages" }).getByRole("button", { name: "Next →" }).click();
      await page.waitForFunction(
        (before) => document.querySelector('table[aria-label="Members"] tbody tr a')?.textContent !== before,
        first,
      );
      pages.push(performance.now() - start);
    }
    row(
      `Segment of ${MEMBERS.toLocaleString("en")} members: each next page (median)`,
      `${median(pages).toFixed(0)} ms`,
      "≤ 500 ms",
      median(pages) <= 500,
    );
    start = performance.now();
    await page.getByRole("searchbox", { name: "Search members" }).fill("member-999999");
    await page.getByRole("link", { name: "member-999999", exact: true }).waitFor();
    const search = performance.now() - start;
    row(
      `Segment of ${MEMBERS.toLocaleString("en")} members: search one member`,
      `${search.toFixed(0)} ms`,
      "≤ 500 ms",
      search <= 500,
    );
  }
} finally {
  await browser.close();
  await service.close();
  await database.drop();
}

const out = join(root, "bench/results", `console-${new Date().toISOString().slice(0, 10)}.txt`);
mkdirSync(join(root, "bench/results"), { recursive: true });
writeFileSync(out, `${lines.join("\n")}\n`);
console.log(`Saved to ${out}`);
