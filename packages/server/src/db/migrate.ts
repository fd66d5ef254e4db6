import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";
import type { Dialect } from "../kernel/config.js";
import type { DatabaseHandle } from "./database.js";
import { initialMigration } from "./migrations/001-initial.js";
import { eventsMigration } from "./migrations/002-events.js";
import { webhooksMigration } from "./migrations/003-webhooks.js";
import { countsMigration } from "./migrations/004-counts-revisions.js";
import { environmentsMigration } from "./migrations/005-environments.js";
import { targetingMigration } from "./migrations/006-targeting.js";
import { peopleMigration } from "./migrations/007-people.js";
import { signInFailuresMigration } from "./migrations/008-sign-in-failures.js";
import { eventCommentsMigration } from "./migrations/009-event-comments.js";
import { flagSearchMigration } from "./migrations/010-flag-search.js";
import { releaseSafetyMigration } from "./migrations/011-release-safety.js";
import { usageLifecycleMigration } from "./migrations/012-usage-lifecycle.js";

export class InCodeMigrations implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      "001-initial": initialMigration(this.dialect),
      "002-events": eventsMigration(this.dialect),
      "003-webhooks": webhooksMigration(this.dialect),
      "004-counts-revisions": countsMigration(),
      "005-environments": environmentsMigration(this.dialect),
      "006-targeting": targetingMigration(),
      "007-people": peopleMigration(this.dialect),
      "008-sign-in-failures": signInFailuresMigration(this.dialect),
      "009-event-comments": eventCommentsMigration(),
      "010-flag-search": flagSearchMigration(this.dialect),
      "011-release-safety": releaseSafetyMigration(this.dialect),
      "012-usage-lifecycle": usageLifecycleMigration(this.dialect),
    };
  }
}

/**
 * Brings the schema up to date. Idempotent; on PostgreSQL, Kysely holds an advisory lock for the run, so
 * instances starting together apply each migration once. Throws (and so stops start-up) on failure.
 */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  const migrator = new Migrator({ db: handle.db, provider: new InCodeMigrations(handle.dialect) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`Database migration ${failed ?? ""} failed: ${String((error as Error).message ?? error)}`, {
      cause: error,
    });
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
