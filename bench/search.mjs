#!/usr/bin/env node
// The flags list's search (issue 34: `q=` under 5 ms at 50,000 flags on both databases): a first page of
// `?q=` and `?name=` and the `total=true` count, through the server's own repository code (Kysely), on a
// project of FLAGS flags, beside the same search as a scan of every flag (the query before migration
// 010's indexes: lower(name) / lower(description) LIKE, which no index serves) in the same run.
//
//   npm run bench:search [-- --flags=50000 --postgres]
import { sql } from "kysely";
import { parseArgs } from "node:util";
import { countFlags, listFlags } from "../packages/server/dist/src/features/flags/flag-list.repository.js";
import { freshDatabase, openBenchDatabase, seed } from "./fixtures.mjs";
import { percentile, POSTGRES_URL } from "./instances.mjs";

const { values } = parseArgs({
  options: {
    flags: { type: "string", default: "50000" },
    postgres: { type: "boolean", default: false },
    runs: { type: "string", default: "30" },
  },
});
const FLAGS = Number(values.flags);
const RUNS = Number(values.runs);
const dialect = values.postgres ? "postgres" : "sqlite";

/** ms of each of RUNS calls, after two to warm up: the median and the slowest. */
async function time(call) {
  await call();
  await call();
  const ms = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await call();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { median: percentile(ms, 50), max: ms[ms.length - 1] };
}

const database = await freshDatabase(dialect, POSTGRES_URL);
try {
  await seed(database.url, {
    flags: FLAGS,
    members: 10,
    checkKey: "fsk_search_check_00",
    adminKey: "fsk_search_admin_00",
  });
  const handle = openBenchDatabase(database.url);
  const db = handle.db;
  if (dialect === "postgres") await sql`analyze`.execute(db);
  const page = { direction: "first", key: [], limit: 20 };
  /** The search before the indexes: every flag of the project read and matched. */
  const scan = (text, withDescription) => {
    const pattern = `%${text.toLowerCase()}%`;
    return sql`select flags.name from flags inner join flag_configs on flag_configs.flag_id = flags.id and flag_configs.environment_id = 'production'
      where flags.project_id = 'bench' and (lower(flags.name) like ${pattern}${withDescription ? sql` or lower(flags.description) like ${pattern}` : sql``})
      order by flags.name limit 21`.execute(db);
  };
  const scanCount = (text) => {
    const pattern = `%${text.toLowerCase()}%`;
    return sql`select count(*) from flags inner join flag_configs on flag_configs.flag_id = flags.id and flag_configs.environment_id = 'production'
      where flags.project_id = 'bench' and (lower(flags.name) like ${pattern} or lower(flags.description) like ${pattern})`.execute(
      db,
    );
  };
  // A rare match (one flag), a common one (a tenth of them), none, and a text under three characters.
  const searches = [
    ["q=flag-012345 (one flag)", { q: "flag-012345" }, "flag-012345"],
    ["q=00012 (a few)", { q: "00012" }, "00012"],
    ["q=Benchmark flag 4 (a tenth, by description)", { q: "Benchmark flag 4" }, "benchmark flag 4"],
    ["q=nothing-like-it (none)", { q: "nothing-like-it" }, "nothing-like-it"],
    ["q=99 (two characters)", { q: "99" }, "99"],
  ];
  const rows = [];
  for (const [label, filter, text] of searches) {
    const indexed = await time(() => listFlags(db, "bench", "production", filter, page));
    const before = await time(() => scan(text, true));
    const count = await time(() => countFlags(db, "bench", "production", filter));
    const countBefore = await time(() => scanCount(text));
    rows.push(
      `| ${label} | ${indexed.median.toFixed(2)} / ${indexed.max.toFixed(2)} | ${before.median.toFixed(2)} / ${before.max.toFixed(2)} | ${count.median.toFixed(2)} / ${count.max.toFixed(2)} | ${countBefore.median.toFixed(2)} / ${countBefore.max.toFixed(2)} |`,
    );
  }
  const name = await time(() => listFlags(db, "bench", "production", { name: "flag-04999" }, page));
  const nameBefore = await time(() => scan("flag-04999", false));
  rows.push(
    `| name=flag-04999 (ten flags) | ${name.median.toFixed(2)} / ${name.max.toFixed(2)} | ${nameBefore.median.toFixed(2)} / ${nameBefore.max.toFixed(2)} | | |`,
  );
  console.log(
    [
      `Node ${process.version}, ${dialect}, ${FLAGS.toLocaleString("en")} flags in the project, ms per call (median / slowest of ${RUNS}):`,
      "",
      "| search | first page, indexed | first page, scan (before) | total=true count, indexed | count, scan (before) |",
      "|---|---:|---:|---:|---:|",
      ...rows,
    ].join("\n"),
  );
  await handle.close();
} finally {
  await database.drop();
}
