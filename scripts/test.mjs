#!/usr/bin/env node
// Runs every compiled test file with node's test runner, on SQLite and, when it answers, PostgreSQL.
// REQUIRE_POSTGRES=1 (set by .ci/run) turns a missing PostgreSQL into a failure instead of a skip.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

const postgresUrl = process.env.TEST_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/postgres";

async function postgresAnswers() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => {});
  }
}

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (entry.endsWith(".test.js")) out.push(path);
  }
  return out;
}

const only = process.argv.slice(2);
const packages = readdirSync("packages").map((name) => join("packages", name, "dist", "test"));
const files = only.length > 0 ? only : packages.filter((dir) => existsSync(dir)).flatMap(testFiles);

const dialects = ["sqlite"];
const probe = await postgresAnswers();
if (probe === true) {
  dialects.push("postgres");
  console.log(`Test legs: SQLite and PostgreSQL (${postgresUrl.replace(/\/\/[^@]*@/, "//")})`);
} else if (process.env.REQUIRE_POSTGRES === "1") {
  console.error(`PostgreSQL is required (REQUIRE_POSTGRES=1) but does not answer at ${postgresUrl}: ${probe.message}`);
  process.exit(1);
} else {
  console.log(`PostgreSQL leg SKIPPED: no PostgreSQL answers at ${postgresUrl} (${probe.message}). Only SQLite runs.`);
}

const result = spawnSync(process.execPath, ["--test", "--test-concurrency=2", "--test-reporter=spec", ...files], {
  stdio: "inherit",
  env: { ...process.env, TEST_DIALECTS: dialects.join(","), TEST_POSTGRES_URL: postgresUrl },
});
process.exit(result.status ?? 1);
