import { systemClock } from "../../clock.js";
import type { DatabaseHandle } from "../../db/database.js";
import { ChangeFeed } from "../evaluation/change-feed.js";
import { notifyChangeSet } from "../evaluation/postgres-notifications.js";
import { KeyService } from "./key.service.js";

const quiet = { warn() {}, error() {} };

/**
 * Key operations over an open database without a running server (`flagstaff-server admin-key`, see
 * admin-key-command.ts). Writes go through a change feed that records and announces them as the server's
 * do, so running instances pick them up; the feed holds no snapshot of its own.
 */
export function offlineKeyService(handle: DatabaseHandle): KeyService {
  const options = handle.dialect === "postgres" ? { announce: notifyChangeSet } : {};
  const feed = new ChangeFeed(handle.db, systemClock, quiet, options);
  return new KeyService(handle.db, feed, systemClock);
}
