#!/usr/bin/env node
// Prints the query plans of a flags list page, first and deep, on a project of 100,000 flags, and of
// history pages (unfiltered, by type, by flag name, by segment; first and deep) over 100,000 events of a
// project (and 100,000 of another), for
// SQLite and PostgreSQL. The queries are compiled by the server's own repository code (Kysely), so
// the plans are of exactly what the service runs. Usage: node bench/query-plans.mjs [--postgres]
import { sql } from "kysely";
import { monotonicFactory } from "ulid";
import { listFlags } from "../packages/server/dist/src/features/flags/flag-list.repository.js";
import { listEvents } from "../packages/server/dist/src/features/history/event.repository.js";
import { freshDatabase, openBenchDatabase, seed } from "./fixtures.mjs";

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
  const handle = openBenchDatabase(database.url);
  if (dialect === "postgres") await sql`analyze`.execute(handle.db);
  // Capture the SQL the repository sends, then ask the engine how it would run it.
  // 200,000 events, interleaved in time between this project and another one: in each, a flag.updated
  // for 500 flags in turn, with a segment.updated (of 50 segments in turn) every tenth.
  const nextUlid = monotonicFactory();
  const start = Date.parse("2026-01-01T00:00:00.000Z");
  const benchIds = [];
  for (let batch = 0; batch < 200; batch++) {
    const rows = [];
    for (let i = 0; i < 1000; i++) {
      const n = batch * 1000 + i;
      const m = n >> 1;
      const projectId = n % 2 === 0 ? "bench" : "other";
      const at = start + n * 1000;
      const segment = m % 10 === 0;
      const id = `evt_${nextUlid(at)}`;
      if (projectId === "bench") benchIds.push(id);
      rows.push({
        id,
        project_id: projectId,
        type: segment ? "segment.updated" : "flag.updated",
        target_kind: segment ? "segment" : "flag",
        target_id: segment ? `seg_${(m / 10) % 50}` : `flg_${m % 500}`,
        target_name: segment ? `segment ${(m / 10) % 50}` : `flag-${String(m % 500).padStart(6, "0")}`,
        actor: JSON.stringify({ keyId: "key_bench", keyName: "bench", role: "write" }),
        before: "{}",
        after: "{}",
        request_id: null,
        created_at: new Date(at).toISOString(),
      });
    }
    await handle.db.insertInto("events").values(rows).execute();
  }
  if (dialect === "postgres") await sql`analyze`.execute(handle.db);
  // The 50,000th newest of the project's 100,000 events: a page half-way down its history.
  const deep = benchIds[50_000];
  const history = (filter) => ({ projectId: "bench", ...filter });
  const plans = [
    ["flags: first page", (db) => listFlags(db, "bench", {}, { limit: 20, direction: "first" })],
    [
      "flags: page after flag-099000",
      (db) => listFlags(db, "bench", {}, { limit: 20, direction: "after", key: ["flag-099000"] }),
    ],
    ["history: first page", (db) => listEvents(db, history({}), { limit: 20, direction: "first" })],
    [
      "history: page after the 50,000th newest event",
      (db) => listEvents(db, history({}), { limit: 20, direction: "after", key: [deep] }),
    ],
    [
      "history: page before the 50,000th newest event",
      (db) => listEvents(db, history({}), { limit: 20, direction: "before", key: [deep] }),
    ],
    [
      "history: type=segment.updated, deep page",
      (db) => listEvents(db, history({ types: ["segment.updated"] }), { limit: 20, direction: "after", key: [deep] }),
    ],
    [
      "history: type=flag. (three types), deep page",
      (db) =>
        listEvents(db, history({ types: ["flag.created", "flag.updated", "flag.deleted"] }), {
          limit: 20,
          direction: "after",
          key: [deep],
        }),
    ],
    [
      "history: flag=flag-000007, deep page",
      (db) => listEvents(db, history({ flagName: "flag-000007" }), { limit: 20, direction: "after", key: [deep] }),
    ],
    [
      "history: segment=seg_3, deep page",
      (db) => listEvents(db, history({ segmentId: "seg_3" }), { limit: 20, direction: "after", key: [deep] }),
    ],
  ];
  const captured = [];
  for (const [label, run] of plans) {
    const compiled = [];
    const probe = handle.db.withPlugin({
      transformQuery(args) {
        compiled.push(args.node);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    await run(probe);
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
