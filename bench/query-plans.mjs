#!/usr/bin/env node
// Prints the query plans of a flags list page, first and deep, on a project of 100,000 flags, for
// SQLite and PostgreSQL. The queries are compiled by the server's own repository code (Kysely), so
// the plans are of exactly what the service runs. Usage: node bench/query-plans.mjs [--postgres]
import { sql } from "kysely";
import { openDatabase } from "../packages/server/dist/src/db/database.js";
import { listFlags } from "../packages/server/dist/src/features/flags/flag.repository.js";
import { freshDatabase, seed } from "./fixtures.mjs";

const dialect = process.argv.includes("--postgres") ? "postgres" : "sqlite";
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/postgres";

const database = await freshDatabase(dialect, POSTGRES_URL);
try {
  await seed(database.url, {
    flags: 100_000,
    members: 10,
    checkKey: "fsk_plans_check_0000",
    adminKey: "fsk_plans_admin_0000",
  });
  const config = database.url.startsWith("file:")
    ? { dialect: "sqlite", databaseLocation: database.url.slice(5), databasePoolSize: 2 }
    : { dialect: "postgres", databaseLocation: database.url, databasePoolSize: 2 };
  const handle = openDatabase(config);
  if (dialect === "postgres") await sql`analyze`.execute(handle.db);
  // Capture the SQL the repository sends, then ask the engine how it would run it.
  const captured = [];
  const pages = [
    ["first page", { limit: 20, direction: "first" }],
    ["page after flag-099000", { limit: 20, direction: "after", key: ["flag-099000"] }],
  ];
  for (const [label, page] of pages) {
    const compiled = [];
    const probe = handle.db.withPlugin({
      transformQuery(args) {
        compiled.push(args.node);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    await listFlags(probe, "bench", {}, page);
    const query = handle.db.getExecutor().compileQuery(compiled[0], { queryId: "plan" });
    const explain =
      dialect === "sqlite" ? "explain query plan " : "explain (analyze, costs off, timing off, summary off) ";
    // EXPLAIN runs through the driver with the same bound parameters as the real query.
    const { rows } = await handle.db.executeQuery({ ...query, sql: explain + query.sql });
    captured.push({ label, sql: query.sql, parameters: query.parameters, plan: rows });
  }
  await handle.close();
  for (const c of captured) {
    console.log(`### ${dialect}: ${c.label}\n`);
    console.log("```sql");
    console.log(c.sql);
    console.log(`-- parameters: ${JSON.stringify(c.parameters)}`);
    console.log("```\n");
    console.log("```");
    for (const row of c.plan) console.log(dialect === "sqlite" ? row.detail : row["QUERY PLAN"]);
    console.log("```\n");
  }
} finally {
  await database.drop();
}
