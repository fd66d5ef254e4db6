// What a test run left behind: processes that carry its TEST_RUNNER_PID, and PostgreSQL databases named for
// it (or for a process of this machine that is gone). scripts/test.mjs reports them, ends them, and fails
// the run when its own were among them.
import { readdirSync, readFileSync } from "node:fs";
import { DATABASE_PREFIX, databaseOwner, HOST_TAG } from "@flagstaff/test-harness/database-names";
import pg from "pg";

/**
 * Processes whose environment carries `TEST_RUNNER_PID=<runnerPid>`: every process the run spawned,
 * however deep and whoever its parent is now (an orphan is adopted by init but keeps its environment).
 * Answers undefined where there is no /proc to read.
 */
export function runProcesses(runnerPid) {
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const tag = `TEST_RUNNER_PID=${runnerPid}\0`;
  const found = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === runnerPid) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, "latin1").includes(tag)) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
      found.push({ pid: Number(entry), ppid, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Sends a signal to each process, ignoring those already gone. */
export function signalAll(processes, signal) {
  for (const { pid } of processes) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/**
 * Drops the test databases of this run (owner `runnerPid`) and those whose owner, a process of this
 * machine, is gone. Answers both lists of names; databases of live processes (other runs) are left alone.
 */
export async function dropLeftoverDatabases(postgresUrl, runnerPid) {
  const client = new pg.Client({
    connectionString: postgresUrl,
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
  });
  await client.connect();
  try {
    const { rows } = await client.query("select datname from pg_database where starts_with(datname, $1)", [
      DATABASE_PREFIX,
    ]);
    const ours = [];
    const stale = [];
    for (const { datname } of rows) {
      const owner = databaseOwner(datname);
      if (owner === undefined || owner.host !== HOST_TAG) continue;
      if (owner.pid === runnerPid) ours.push(datname);
      else if (!alive(owner.pid)) stale.push(datname);
    }
    for (const name of [...ours, ...stale]) await client.query(`drop database if exists "${name}" with (force)`);
    return { ours, stale };
  } finally {
    await client.end().catch(() => {});
  }
}
