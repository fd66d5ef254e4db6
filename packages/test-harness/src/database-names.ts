// How test databases are named, shared by the harness (which creates them) and scripts/test.mjs (which
// drops what a run left behind). No node:test here: the runner imports this module.
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";

export const DATABASE_PREFIX = "flagstaff_test_";

/** This machine (or container), so that a runner never judges the processes of another one by their pids. */
export const HOST_TAG = createHash("sha256").update(hostname()).digest("hex").slice(0, 6);

/**
 * A new database name, `flagstaff_test_<pid>_<host>_<random>`. The pid is that of the process the database
 * must not outlive: the test runner (scripts/test.mjs passes its pid in TEST_RUNNER_PID), else the process
 * creating it. A runner can so tell what its own run left, and what dead processes left, from the
 * databases of other runs going on beside it.
 */
export function newDatabaseName(owner = process.env.TEST_RUNNER_PID): string {
  const pid = /^\d+$/.test(owner ?? "") ? owner : String(process.pid);
  return `${DATABASE_PREFIX}${pid}_${HOST_TAG}_${randomBytes(5).toString("hex")}`;
}

/** The owner's pid and host of a database named by `newDatabaseName`, or undefined for any other name. */
export function databaseOwner(name: string): { pid: number; host: string } | undefined {
  const match = /^flagstaff_test_(\d+)_([0-9a-f]{6})_[0-9a-f]{10}$/.exec(name);
  return match === null ? undefined : { pid: Number(match[1]), host: match[2] as string };
}
