import type { Transaction } from "kysely";
import type { Clock } from "../kernel/clock.js";
import type { DatabaseHandle } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { notifyChangeSet } from "./change-log.js";
import type { StoredEvent } from "./domain-events.js";
import { UnitOfWork, type UnitOfWorkLogger, type WriteHooks } from "./unit-of-work.js";

export interface WritePathOptions {
  /** Queues what the stored events must cause later (webhook deliveries), inside the write transaction. */
  readonly enqueue?: (trx: Transaction<Database>, events: readonly StoredEvent[], hooks: WriteHooks) => Promise<void>;
}

/**
 * The unit of work every writer uses, the server's and the admin-key command's alike: on PostgreSQL it
 * announces each change set (NOTIFY) inside the write's transaction, so every running instance hears of
 * it; on SQLite there is one instance and nothing to announce.
 */
export function createUnitOfWork(
  handle: DatabaseHandle,
  clock: Clock,
  logger: UnitOfWorkLogger,
  options: WritePathOptions = {},
): UnitOfWork {
  return new UnitOfWork(handle.db, clock, logger, {
    ...(handle.dialect === "postgres" ? { announce: notifyChangeSet } : {}),
    ...options,
  });
}
