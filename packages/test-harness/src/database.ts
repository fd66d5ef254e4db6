import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Dialect } from "@flagstaff/server/dist/src/kernel/config.js";
import pg from "pg";
import { track } from "./cleanup.js";
import { newDatabaseName } from "./database-names.js";

/** The dialects this run covers: SQLite always, PostgreSQL when scripts/test.mjs found one. */
export const DIALECTS = (process.env.TEST_DIALECTS ?? "sqlite").split(",") as Dialect[];
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * Where SQLite test databases go: a RAM-backed folder when there is one. Every commit fsyncs
 * (synchronous=FULL), and on a busy disk those waits were the slowest thing the SQLite leg did; the tests
 * kill server processes, never the machine, and for that the page cache is durable enough.
 */
const SQLITE_DIR = process.env.FLAGSTAFF_TEST_SQLITE_DIR || (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());

export interface FreshDatabase {
  readonly url: string;
  readonly dialect: Dialect;
  /** Deletes it; safe to call again. */
  drop(): Promise<void>;
}

/** Runs one statement on the maintenance database, with deadlines: a busy PostgreSQL must not hang a test. */
async function administer(statement: string): Promise<void> {
  const client = new pg.Client({
    connectionString: POSTGRES_URL,
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
  });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A new, empty database: a file in a temporary folder, or a PostgreSQL database created for the caller. */
export async function freshDatabase(dialect: Dialect): Promise<FreshDatabase> {
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(SQLITE_DIR, "flagstaff-test-"));
    const drop = async () => rmSync(dir, { recursive: true, force: true });
    const untrack = track({ label: `SQLite database in ${dir}`, dispose: drop, last: true });
    return {
      url: `file:${join(dir, "flags.db")}`,
      dialect,
      drop: async () => {
        await drop();
        untrack();
      },
    };
  }
  const name = newDatabaseName();
  const drop = () => administer(`drop database if exists ${name} with (force)`);
  // Tracked before it exists: a test that times out while this is created still gets it dropped.
  const untrack = track({ label: `PostgreSQL database ${name}`, dispose: drop, last: true });
  await administer(`create database ${name}`);
  // Commits need not wait for the WAL to reach the disk: the tests stop and kill server processes, never
  // PostgreSQL, and a committed transaction is visible at once either way. It spares the PostgreSQL leg
  // the disk's latency, which is what made it slow on a busy machine.
  await administer(`alter database ${name} set synchronous_commit = off`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dialect,
    drop: async () => {
      await drop();
      untrack();
    },
  };
}
