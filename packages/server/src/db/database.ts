import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { Config, Dialect } from "../config.js";
import type { Database } from "./schema.js";

export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Answers true when the database takes a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenOptions {
  readonly onPoolError?: (error: Error) => void;
}

/** Opens the database named by the config: an embedded SQLite file or a PostgreSQL pool. */
export function openDatabase(
  config: Pick<Config, "dialect" | "databaseLocation" | "databasePoolSize">,
  options: OpenOptions = {},
): DatabaseHandle {
  return config.dialect === "postgres" ? openPostgres(config, options) : openSqlite(config.databaseLocation);
}

function openSqlite(location: string): DatabaseHandle {
  if (location !== ":memory:") mkdirSync(dirname(location), { recursive: true });
  const sqlite = new SQLite(location);
  sqlite.pragma("journal_mode = WAL");
  // FULL: a commit is on disk before the request is acknowledged, so no acknowledged write is lost
  // even to a power cut, not only to a crash of the process.
  sqlite.pragma("synchronous = FULL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  // SQLite's own lower() only folds ASCII; searches must be case-insensitive for "Über" as on PostgreSQL.
  sqlite.function("lower", { deterministic: true }, (value: unknown) =>
    typeof value === "string" ? value.toLowerCase() : value,
  );
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: "sqlite",
    async ping() {
      try {
        sqlite.prepare("select 1").get();
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}

function openPostgres(
  config: Pick<Config, "databaseLocation" | "databasePoolSize">,
  options: OpenOptions,
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: config.databaseLocation,
    max: config.databasePoolSize,
    // Fail a request quickly with 503 rather than hang while PostgreSQL is unreachable.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
  });
  // A client that loses its connection emits "error"; unhandled, that would end the process. The pool
  // listens only while a client is idle, so every client gets a listener of its own for the time it is
  // checked out (the query in flight then fails, and the request answers 503).
  pool.on("error", (error) => options.onPoolError?.(error));
  pool.on("connect", (client) => {
    client.on("error", (error) => options.onPoolError?.(error));
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: "postgres",
    async ping() {
      try {
        await pool.query("select 1");
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}

const PG_CONNECTION_CODES = new Set(["57P01", "57P02", "57P03", "53300"]);
const NODE_CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);

/** Whether an error means the database could not be reached (answer 503), not that the query was wrong. */
export function isUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (code.startsWith("08") || PG_CONNECTION_CODES.has(code) || NODE_CONNECTION_CODES.has(code)) return true;
    if (code === "SQLITE_BUSY" || code === "SQLITE_IOERR" || code === "SQLITE_CANTOPEN") return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    error.message,
  );
}

/** Whether an error is a unique-constraint violation: a concurrent create of the same name. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
