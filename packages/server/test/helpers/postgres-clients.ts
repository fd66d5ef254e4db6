// Small tools for tests that act on a PostgreSQL database from the side: clients of their own (to NOTIFY,
// hold row locks, refuse connections), the database's name, and polling with a deadline.
import { performance } from "node:perf_hooks";
import pg from "pg";

/** The database a PostgreSQL URL names. */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/** The `postgres` maintenance database of the same cluster: for commands about a database, run from outside it. */
export function maintenanceUrl(url: string): string {
  const u = new URL(url);
  u.pathname = "/postgres";
  return u.toString();
}

/**
 * A connected client whose connection errors (a terminated backend, say) are kept rather than thrown at the
 * process. `clients` collects it, so an `after` hook can end every client a test opened.
 */
export async function connectClient(url: string, clients?: Set<pg.Client>): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on("error", () => {});
  clients?.add(client);
  await client.connect();
  return client;
}

/** Ends clients, ignoring the ones already dead. */
export async function endClients(clients: Set<pg.Client>): Promise<void> {
  await Promise.all([...clients].map((c) => c.end().catch(() => {})));
  clients.clear();
}

/**
 * Polls `probe` until it answers true, at most `timeoutMs`; answers the time it took. A probe that throws
 * counts as "not yet"; the last answer or error is in the message of the failure.
 */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean | string>,
  timeoutMs: number,
  intervalMs = 20,
): Promise<number> {
  const start = performance.now();
  let seen = "(nothing yet)";
  for (;;) {
    try {
      const answer = await probe();
      if (answer === true) return performance.now() - start;
      seen = String(answer);
    } catch (error) {
      seen = `error: ${(error as Error).message}`;
    }
    const elapsed = performance.now() - start;
    if (elapsed > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${seen})`);
    // Polling between looks at PostgreSQL, not synchronisation by time.
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** How many backends of a database wait on a lock (a row lock held by another transaction, say). */
export async function lockWaiters(observer: pg.Client, database: string): Promise<number> {
  const res = await observer.query(
    "select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'",
    [database],
  );
  return res.rows[0].n as number;
}
