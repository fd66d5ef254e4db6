import { systemClock } from "../../clock.js";
import type { DatabaseHandle } from "../../db/database.js";
import { createUnitOfWork } from "../../write-path/create-unit-of-work.js";
import { KeyService } from "./key.service.js";

const quiet = { warn() {} };

/**
 * Key operations over an open database without a running server (`flagstaff-server admin-key`, see
 * admin-key-command.ts). Writes go through a unit of work that records, keeps in the history and
 * announces them as the server's do, so running instances pick them up; nothing here holds a snapshot.
 */
export function offlineKeyService(handle: DatabaseHandle): KeyService {
  const work = createUnitOfWork(handle, systemClock, quiet);
  return new KeyService(handle.db, work, systemClock);
}
