import { loadConfig } from "../../src/kernel/config.js";
import { type DatabaseHandle, openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";

/** A logger that keeps what it was told. */
export class FakeLogger {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  warn(_obj: object, msg: string): void {
    this.warnings.push(msg);
  }
  error(_obj: object, msg: string): void {
    this.errors.push(msg);
  }
}

/** An in-memory SQLite database, migrated (never a file); close it when done. */
export async function memoryDatabase(): Promise<DatabaseHandle> {
  const handle = openDatabase(loadConfig({ DATABASE_URL: "file::memory:" }));
  await migrateToLatest(handle);
  return handle;
}
