import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { Config, Dialect } from "../kernel/config.js";
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

/** How long a request waits for a pooled connection (or for a new one to open) before it is answered 503. */
const CONNECT_TIMEOUT_MS = 3000;

/**
 * Thrown when a request waited CONNECT_TIMEOUT_MS for a pooled connection while every connection was in
 * use: the database answers, this instance is saturated. Answered as 503 `busy`, not as an outage.
 */
export class DatabaseBusyError extends Error {
  override name = "DatabaseBusyError";
}

function openPostgres(
  config: Pick<Config, "databaseLocation" | "databasePoolSize">,
  options: OpenOptions,
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: config.databaseLocation,
    max: config.databasePoolSize,
    // Fail a request quickly with 503 rather than hang while PostgreSQL is unreachable or saturated.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
  });
  // A client that loses its connection emits "error"; unhandled, that would end the process. The pool
  // listens only while a client is idle, so every client gets a listener of its own for the time it is
  // checked out (the query in flight then fails, and the request answers 503).
  pool.on("error", (error) => options.onPoolError?.(error));
  pool.on("connect", (client) => {
    client.on("error", (error) => options.onPoolError?.(error));
  });
  // pg-pool reports the same timeout whether it waited for a busy pool or for PostgreSQL to answer a new
  // connection; only the pool's state when the wait began tells "busy" from "unreachable".
  const connect = async () => {
    const saturated = pool.totalCount >= config.databasePoolSize && pool.idleCount === 0;
    try {
      return await pool.connect();
    } catch (error) {
      if (saturated && error instanceof Error && /timeout exceeded when trying to connect/i.test(error.message)) {
        throw new DatabaseBusyError("every pooled database connection stayed in use");
      }
      throw error;
    }
  };
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      // `Client` and `options`: Kysely opens a connection of its own with them to cancel a query.
      pool: { connect, end: () => pool.end(), Client: pg.Client, options: pool.options },
    }),
  });
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

/**
 * SQLSTATEs that mean "the database cannot serve this session", whatever the query: connection
 * exceptions (class 08), insufficient resources (class 53, 53300 too many connections among them),
 * administrator shutdown and crash (57P01–57P03), a database that does not exist (3D000) or refuses
 * connections (55000, e.g. ALLOW_CONNECTIONS false), and refused credentials (28000, 28P01).
 */
const PG_UNAVAILABLE_CLASSES = ["08", "53"];
const PG_UNAVAILABLE_CODES = new Set(["57P01", "57P02", "57P03", "55000", "3D000", "28000", "28P01"]);
const NODE_CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);
const SQLITE_UNAVAILABLE_CODES = new Set(["SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_FULL"]);
/** Failures with no code: a lost or timed-out connection, and handles already closed (pool, driver, SQLite). */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|driver has already been destroyed|database connection is not open/i;

/**
 * What a database error means for the caller: `busy` (this instance is saturated), `unavailable` (the
 * database cannot be reached or will not serve us), or undefined (the query itself failed: a bug, or a
 * constraint the service handles). The one place that decides which failures are worth a retry.
 */
export function classifyDatabaseError(error: unknown): "busy" | "unavailable" | undefined {
  if (error instanceof DatabaseBusyError) return "busy";
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  // The file stayed locked (by another process) past busy_timeout: contention, not an outage.
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return "busy";
  if (typeof code === "string") {
    if (PG_UNAVAILABLE_CLASSES.includes(code.slice(0, 2)) && code.length === 5) return "unavailable";
    if (PG_UNAVAILABLE_CODES.has(code) || NODE_CONNECTION_CODES.has(code)) return "unavailable";
    if (SQLITE_UNAVAILABLE_CODES.has(code)) return "unavailable";
  }
  return UNAVAILABLE_MESSAGES.test(error.message) ? "unavailable" : undefined;
}

/** Whether an error is a unique-constraint violation: a concurrent create of the same name. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
