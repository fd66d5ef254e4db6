// How database failures reach clients. Failures of the connection (the database refuses us, is gone, or
// its handle is closed) answer 503 `unavailable`; a pool that stays saturated answers 503 `busy`; both
// with Retry-After, from the one error handler, whatever the operation. Query failures are not outages.
// A project whose writes are stuck on a lock holds one connection at most, so the others carry on.
// Real servers, real databases; faults are made from the side: ALTER DATABASE … ALLOW_CONNECTIONS,
// pg_terminate_backend, row locks held by clients of the test's own, a closed SQLite handle.
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { after, before, describe, test, type TestContext } from "node:test";
import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { classifyDatabaseError, DatabaseBusyError } from "../src/db/database.js";
import {
  connectClient,
  databaseName,
  endClients,
  lockWaiters,
  maintenanceUrl,
  waitUntil,
} from "./helpers/postgres-clients.js";
import { freePort } from "@flagstaff/test-harness";
import {
  type ApiResponse,
  checkState,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  expectStatus as must,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const PG_SKIP = DIALECTS.includes("postgres") ? false : "PostgreSQL not available";
/** The pool waits this long for a connection before giving up (CONNECT_TIMEOUT_MS in src/db/database.ts). */
const POOL_CONNECT_TIMEOUT_MS = 3000;
/** Writes queued on one stream beyond this many are refused as busy (MAX_QUEUED_WRITES in change-feed.ts). */
const MAX_QUEUED_WRITES = 256;

/** An error as the pg driver reports a server error: an Error with a SQLSTATE `code`. */
function pgError(code: string, message = `constructed ${code}`): Error {
  return Object.assign(new Error(message), { code });
}

/** The error a promise rejects with (the test fails if it resolves). */
async function rejection(what: string, promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Error, `${what}: rejected with a non-Error ${String(error)}`);
    return error;
  }
  assert.fail(`${what}: did not fail`);
}

/** The error a function throws (the test fails if it returns). */
function thrown(what: string, fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof Error, `${what}: threw a non-Error ${String(error)}`);
    return error;
  }
  assert.fail(`${what}: did not throw`);
}

/** A 503 with the given code as problem details, with a Retry-After of whole seconds. */
function expectRetryable(res: ApiResponse, code: "unavailable" | "busy", what: string): void {
  try {
    expectProblem(res, 503, code);
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`);
  }
  const retryAfter = res.headers.get("retry-after");
  assert.ok(retryAfter !== null && /^[1-9][0-9]*$/.test(retryAfter), `${what}: Retry-After is ${retryAfter}`);
}

interface Timed {
  readonly res: ApiResponse;
  readonly ms: number;
}

async function timed(server: TestServer, method: string, path: string, body?: unknown): Promise<Timed> {
  const start = performance.now();
  const res = await server.request(method, path, { body, timeoutMs: 30_000 });
  return { res, ms: performance.now() - start };
}

/** A request left running: its answer (or failure) and when it came, for requests that must wait. */
interface Pending {
  readonly label: string;
  readonly sentAt: number;
  done: boolean;
  answer?: ApiResponse;
  error?: string;
  ms?: number;
  readonly settled: Promise<void>;
}

function send(server: TestServer, label: string, method: string, path: string, body?: unknown): Pending {
  const sentAt = performance.now();
  const pending: Pending = {
    label,
    sentAt,
    done: false,
    settled: server
      .request(method, path, { body, timeoutMs: 90_000 })
      .then(
        (res) => {
          pending.answer = res;
        },
        (error: Error) => {
          pending.error = error.message;
        },
      )
      .finally(() => {
        pending.done = true;
        pending.ms = performance.now() - sentAt;
      }),
  } as Pending;
  return pending;
}

const outcome = (p: Pending) =>
  p.error !== undefined
    ? `error: ${p.error}`
    : `${p.answer!.status}${p.answer!.body?.code ? ` ${p.answer!.body.code}` : ""}`;

function tally(pendings: readonly Pending[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of pendings) {
    const key = p.done ? outcome(p) : "pending";
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Ends the test's clients and stops the server; drops the database even when stopping fails. */
async function stopAndDrop(
  server: TestServer | undefined,
  database: FreshDatabase | undefined,
  clients: Set<pg.Client>,
): Promise<void> {
  try {
    await endClients(clients);
    await server?.stop();
  } finally {
    await database?.drop();
  }
}

async function newProject(server: TestServer, id: string, flag: string): Promise<string> {
  await must(201, server.url, "POST", "/projects", { body: { id, name: id } });
  await must(201, server.url, "POST", `/projects/${id}/flags/${flag}`, { body: {} });
  await must(200, server.url, "PATCH", `/projects/${id}/flags/${flag}`, { body: { status: "conditional" } });
  return id;
}

describe("classifyDatabaseError: the one place that tells outages and saturation from query failures", () => {
  test("connection-level SQLSTATEs and socket codes are `unavailable`", () => {
    const cases: [string, string][] = [
      ["55000", "database is not currently accepting connections"],
      ["57P01", "terminating connection due to administrator command"],
      ["57P02", "terminating connection due to crash of another server process"],
      ["57P03", "the database system is starting up"],
      ["53300", "sorry, too many clients already"],
      ["3D000", 'database "gone" does not exist'],
      ["28000", 'role "nobody" does not exist'],
      ["28P01", 'password authentication failed for user "x"'],
      ["08006", "connection failure"],
      ["08001", "could not connect to server"],
      ["ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"],
      ["ECONNRESET", "read ECONNRESET"],
    ];
    for (const [code, message] of cases) {
      assert.equal(classifyDatabaseError(pgError(code, message)), "unavailable", `${code} (${message})`);
    }
    // By message alone, as pg and pg-pool report a lost or never-made connection.
    assert.equal(classifyDatabaseError(new Error("Connection terminated unexpectedly")), "unavailable");
    assert.equal(classifyDatabaseError(new Error("timeout exceeded when trying to connect")), "unavailable");
  });

  test("a real refused TCP connection (ECONNREFUSED) is `unavailable`", async () => {
    const port = await freePort();
    const client = new pg.Client({ host: "127.0.0.1", port, user: "x", database: "x", connectionTimeoutMillis: 5000 });
    client.on("error", () => {});
    const error = await rejection("connect to a closed port", client.connect());
    await client.end().catch(() => {});
    assert.equal((error as { code?: string }).code, "ECONNREFUSED", error.message);
    assert.equal(classifyDatabaseError(error), "unavailable");
  });

  test("a real closed better-sqlite3 handle and a real destroyed Kysely driver are `unavailable`", async () => {
    const handle = new SQLite(":memory:");
    handle.close();
    const closed = thrown("prepare on a closed handle", () => handle.prepare("select 1"));
    assert.ok(closed instanceof TypeError, `a ${closed.name}: ${closed.message}`);
    assert.match(closed.message, /database connection is not open/);
    assert.equal(classifyDatabaseError(closed), "unavailable");

    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(":memory:") }) });
    await sql`select 1`.execute(db);
    await db.destroy();
    const destroyed = await rejection("a query after destroy", sql`select 1`.execute(db));
    assert.match(destroyed.message, /driver has already been destroyed/);
    assert.equal(classifyDatabaseError(destroyed), "unavailable");
  });

  test("DatabaseBusyError and a SQLite file locked past busy_timeout are `busy`", () => {
    assert.equal(
      classifyDatabaseError(new DatabaseBusyError("every pooled database connection stayed in use")),
      "busy",
    );
    assert.equal(
      classifyDatabaseError(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })),
      "busy",
    );
  });

  test("query failures are not outages: unique violations, syntax errors, plain errors, non-errors", () => {
    assert.equal(classifyDatabaseError(pgError("23505", "duplicate key value violates unique constraint")), undefined);
    assert.equal(classifyDatabaseError(pgError("42601", 'syntax error at or near "selec"')), undefined);
    assert.equal(classifyDatabaseError(pgError("23503", "violates foreign key constraint")), undefined);
    assert.equal(classifyDatabaseError(pgError("40001", "could not serialize access")), undefined);
    assert.equal(classifyDatabaseError(new Error("something else broke")), undefined);
    assert.equal(classifyDatabaseError(new TypeError("Cannot read properties of undefined (reading 'id')")), undefined);
    assert.equal(classifyDatabaseError(undefined), undefined);
    assert.equal(classifyDatabaseError("55000"), undefined);

    // Real SQLite query failures.
    const handle = new SQLite(":memory:");
    try {
      handle.exec("create table t (id text primary key)");
      handle.prepare("insert into t values ('a')").run();
      const unique = thrown("a duplicate key", () => handle.prepare("insert into t values ('a')").run());
      assert.match(String((unique as { code?: string }).code), /^SQLITE_CONSTRAINT/);
      assert.equal(classifyDatabaseError(unique), undefined, `${(unique as { code?: string }).code}`);
      const syntax = thrown("a syntax error", () => handle.prepare("selec 1"));
      assert.equal(classifyDatabaseError(syntax), undefined, `${(syntax as { code?: string }).code}`);
    } finally {
      handle.close();
    }
  });

  describe("with real PostgreSQL errors", { skip: PG_SKIP }, () => {
    let database: FreshDatabase | undefined;
    const clients = new Set<pg.Client>();
    let admin: pg.Client;
    const role = `flagstaff_nolimit_${process.pid}_${Date.now().toString(36)}`;
    let roleCreated = false;

    before(async () => {
      database = await freshDatabase("postgres");
      admin = await connectClient(maintenanceUrl(database.url), clients);
    });

    after(async () => {
      if (database) {
        await admin.query(`alter database "${databaseName(database.url)}" allow_connections true`).catch(() => {});
      }
      if (roleCreated) await admin.query(`drop role if exists ${role}`).catch(() => {});
      await endClients(clients);
      await database?.drop();
    });

    test("a syntax error (42601) and a unique violation (23505) are not outages", async () => {
      const client = await connectClient(database!.url, clients);
      const syntax = await rejection("selec 1", client.query("selec 1"));
      assert.equal((syntax as { code?: string }).code, "42601");
      assert.equal(classifyDatabaseError(syntax), undefined);
      await client.query("create temporary table t (id text primary key)");
      await client.query("insert into t values ('a')");
      const unique = await rejection("a duplicate key", client.query("insert into t values ('a')"));
      assert.equal((unique as { code?: string }).code, "23505");
      assert.equal(classifyDatabaseError(unique), undefined);
    });

    test("a missing database (3D000) and an unknown role (28000) are `unavailable`", async () => {
      const missing = new URL(database!.url);
      missing.pathname = `/${databaseName(database!.url)}_missing`;
      const gone = await rejection("a missing database", connectClient(missing.toString(), clients));
      assert.equal((gone as { code?: string }).code, "3D000", gone.message);
      assert.equal(classifyDatabaseError(gone), "unavailable");

      const nobody = new URL(database!.url);
      nobody.username = `${role}_nobody`;
      const refused = await rejection("an unknown role", connectClient(nobody.toString(), clients));
      assert.equal((refused as { code?: string }).code, "28000", refused.message);
      assert.equal(classifyDatabaseError(refused), "unavailable");
    });

    test("a role over its connection limit (53300) is `unavailable`", async () => {
      await admin.query(`create role ${role} login connection limit 0`);
      roleCreated = true;
      const limited = new URL(database!.url);
      limited.username = role;
      const error = await rejection("a role with connection limit 0", connectClient(limited.toString(), clients));
      assert.equal((error as { code?: string }).code, "53300", error.message);
      assert.equal(classifyDatabaseError(error), "unavailable");
    });

    test("a terminated backend (57P01) and a database refusing connections (55000) are `unavailable`", async () => {
      const victim = await connectClient(database!.url, clients);
      const pid = (await victim.query("select pg_backend_pid() as pid")).rows[0].pid as number;
      // Its rejection is awaited from the start: it comes while the test awaits pg_terminate_backend.
      const sleeping = rejection("a query on a terminated backend", victim.query("select pg_sleep(30)"));
      await waitUntil(
        "the victim's query runs",
        async () =>
          (
            await admin.query("select count(*)::int as n from pg_stat_activity where pid = $1 and state = 'active'", [
              pid,
            ])
          ).rows[0].n === 1,
        10_000,
      );
      await admin.query("select pg_terminate_backend($1)", [pid]);
      const terminated = await sleeping;
      assert.equal((terminated as { code?: string }).code, "57P01", terminated.message);
      assert.equal(classifyDatabaseError(terminated), "unavailable");

      const name = databaseName(database!.url);
      await admin.query(`alter database "${name}" allow_connections false`);
      try {
        const refused = await rejection("connect to a closed database", connectClient(database!.url, clients));
        assert.equal((refused as { code?: string }).code, "55000", refused.message);
        assert.equal(classifyDatabaseError(refused), "unavailable");
      } finally {
        await admin.query(`alter database "${name}" allow_connections true`);
      }
    });
  });
});

/**
 * Whether the server's change-notification connection (pg-listen) is in the database: its last statement is
 * the LISTEN or its periodic liveness probe.
 */
async function listenerConnected(admin: pg.Client, database: string): Promise<boolean> {
  const res = await admin.query(
    `select count(*)::int as n from pg_stat_activity
      where datname = $1 and (query ilike 'listen %' or query ilike 'select pg_backend_pid()%')`,
    [database],
  );
  return res.rows[0].n >= 1;
}

for (const dialect of DIALECTS) {
  describe(`a database that refuses us answers 503 unavailable with Retry-After, never 500 (${dialect})`, {
    timeout: 90_000,
  }, () => {
    let database: FreshDatabase | undefined;
    let server: TestServer | undefined;
    const clients = new Set<pg.Client>();
    const p = `faults-${dialect}`;

    before(async () => {
      database = await freshDatabase(dialect);
      server = await startServer({ dialect, database, env: { FEED_POLL_INTERVAL_MS: "60000" } });
      await newProject(server, p, "f");
    });

    after(() => stopAndDrop(server, database, clients));

    /** A write, a list and a read, each answered 503 unavailable with Retry-After, in bounded time. */
    async function everyKindAnswersUnavailable(t: TestContext): Promise<void> {
      const attempts: [string, string, unknown][] = [
        ["POST", `/projects/${p}/flags/refused`, {}],
        ["PATCH", `/projects/${p}/flags/f`, { addActors: ["refused"] }],
        ["GET", `/projects/${p}/flags`, undefined],
        ["GET", `/projects/${p}/flags/f`, undefined],
      ];
      for (const [method, path, body] of attempts) {
        const { res, ms } = await timed(server!, method, path, body);
        t.diagnostic(`${method} ${path}: ${res.status} ${res.body?.code ?? ""} in ${ms.toFixed(0)} ms`);
        expectRetryable(res, "unavailable", `${method} ${path}`);
        // A refused connection fails at once; only a pool timeout could take 3 s. Either way, bounded.
        assert.ok(ms < POOL_CONNECT_TIMEOUT_MS + 3000, `${method} ${path} took ${ms.toFixed(0)} ms`);
      }
      const ready = await server!.request("GET", "/readyz", { key: null, timeoutMs: 10_000 });
      assert.equal(ready.status, 503, `/readyz: ${ready.text}`);
      const health = await server!.request("GET", "/healthz", { key: null });
      assert.equal(health.status, 200);
      // Checks are answered from memory throughout.
      assert.equal(await checkState(server!.url, p, "f"), "false");
    }

    if (dialect === "postgres") {
      test("ALLOW_CONNECTIONS false and its backends terminated (SQLSTATE 55000): 503; allowed again: writes work", async (t) => {
        const name = databaseName(server!.databaseUrl);
        const admin = await connectClient(maintenanceUrl(server!.databaseUrl), clients);
        try {
          await admin.query(`alter database "${name}" allow_connections false`);
          await admin.query(
            "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
            [name],
          );
          await waitUntil(
            "the server's backends are gone",
            async () =>
              (await admin.query("select count(*)::int as n from pg_stat_activity where datname = $1", [name])).rows[0]
                .n === 0,
            10_000,
          );
          await everyKindAnswersUnavailable(t);

          await admin.query(`alter database "${name}" allow_connections true`);
          const recovered = await waitUntil(
            "a write after connections are allowed again",
            async () => {
              const res = await server!.request("PATCH", `/projects/${p}/flags/f`, {
                body: { description: "after" },
                timeoutMs: 10_000,
              });
              return res.status === 200 || `${res.status} ${res.text}`;
            },
            15_000,
            100,
          );
          t.diagnostic(`writable again ${recovered.toFixed(0)} ms after connections were allowed`);
          const listening = await waitUntil(
            "the change-notification listener reconnects",
            () => listenerConnected(admin, name),
            20_000,
            100,
          );
          t.diagnostic(`listening again ${listening.toFixed(0)} ms after that`);
        } finally {
          await admin.query(`alter database "${name}" allow_connections true`).catch(() => {});
        }
        // Nothing refused was applied; what came after was.
        expectProblem(await server!.request("GET", `/projects/${p}/flags/refused`), 404, "flag_not_found");
        assert.equal((await must(200, server!.url, "GET", `/projects/${p}/flags/f`)).description, "after");
        assert.equal(await checkState(server!.url, p, "f", ["refused"]), "false");
        await must(201, server!.url, "POST", `/projects/${p}/flags/later`, { body: {} });
        await waitUntil(
          "/readyz after the outage",
          async () => (await server!.request("GET", "/readyz", { key: null, timeoutMs: 10_000 })).status === 200,
          15_000,
          100,
        );
      });
    } else {
      test("the server's SQLite handle closed under it: 503, not 500", async (t) => {
        await server!.database.close();
        await everyKindAnswersUnavailable(t);
      });
    }
  });
}

describe("a server closed during an outage stops reconnecting its listener (postgres)", {
  skip: PG_SKIP,
  timeout: 60_000,
}, () => {
  const clients = new Set<pg.Client>();
  let database: FreshDatabase | undefined;
  let server: TestServer | undefined;
  after(async () => {
    await stopAndDrop(server, database, clients);
  });

  test("no LISTEN connection is opened after close, even once the database takes connections again", async () => {
    database = await freshDatabase("postgres");
    server = await startServer({ dialect: "postgres", database });
    const name = databaseName(database.url);
    const admin = await connectClient(maintenanceUrl(database.url), clients);
    const connections = async () =>
      (await admin.query("select count(*)::int as n from pg_stat_activity where datname = $1", [name])).rows[0].n;
    try {
      await admin.query(`alter database "${name}" allow_connections false`);
      await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [name],
      );
      await waitUntil("the server's backends are gone", async () => (await connections()) === 0, 10_000);
      // The listener is now in its reconnect loop; closing the service must end that loop.
      await server.stop();
    } finally {
      await admin.query(`alter database "${name}" allow_connections true`);
    }
    // The loop backs off 5 s at most: watch for one full period that no connection comes back.
    const deadline = performance.now() + 6000;
    while (performance.now() < deadline) {
      assert.equal(await connections(), 0, "a connection was opened after the server closed");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});

describe("a project whose writes are stuck on a lock does not take the others down (postgres)", {
  skip: PG_SKIP,
  timeout: 120_000,
}, () => {
  let database: FreshDatabase | undefined;
  let server: TestServer | undefined;
  const clients = new Set<pg.Client>();
  let holder: pg.Client | undefined;

  before(async () => {
    database = await freshDatabase("postgres");
    server = await startServer({
      dialect: "postgres",
      database,
      env: { DATABASE_POOL_SIZE: "10", FEED_POLL_INTERVAL_MS: "60000" },
    });
  });

  after(async () => {
    await holder?.query("rollback").catch(() => {});
    await stopAndDrop(server, database, clients);
  });

  test("16 PATCHes queue behind a held version row while another project reads and writes at full speed", async (t) => {
    const s = server!;
    const name = databaseName(s.databaseUrl);
    const A = await newProject(s, "stuck-a", "f");
    const B = await newProject(s, "free-b", "g");
    await must(200, s.url, "PATCH", `/projects/${A}/flags/f`, { body: { addActors: ["before"] } });
    const observer = await connectClient(maintenanceUrl(s.databaseUrl), clients);
    holder = await connectClient(s.databaseUrl, clients);
    await holder.query("begin");
    const held = await holder.query("update feed_streams set version = version where stream = $1", [A]);
    assert.equal(held.rowCount, 1, "project A's version row is held");

    const writes = Array.from({ length: 16 }, (_, n) =>
      send(s, `A +q${n}`, "PATCH", `/projects/${A}/flags/f`, { addActors: [`q${n}`] }),
    );
    const firstSent = writes[0]!.sentAt;
    let released = false;
    try {
      await waitUntil(
        "a write of A waits on the held row",
        async () => (await lockWaiters(observer, name)) >= 1,
        10_000,
      );

      // For longer than the pool's connect timeout, project B is read, listed and written, each promptly.
      const slow: string[] = [];
      let rounds = 0;
      let slowest = 0;
      while (rounds < 3 || performance.now() - firstSent < POOL_CONNECT_TIMEOUT_MS + 1000) {
        const n = rounds++;
        const ops: [string, string, unknown, number][] = [
          ["GET", `/projects/${B}/flags/g`, undefined, 200],
          ["GET", `/projects/${B}/flags`, undefined, 200],
          ["PATCH", `/projects/${B}/flags/g`, { addActors: [`b${n}`] }, 200],
          ["POST", `/projects/${B}/segments`, { name: `segment ${n}` }, 201],
        ];
        for (const [method, path, body, status] of ops) {
          const { res, ms } = await timed(s, method, path, body);
          slowest = Math.max(slowest, ms);
          if (res.status !== status || ms >= 2000) slow.push(`${method} ${path}: ${res.status} in ${ms.toFixed(0)} ms`);
        }
        const start = performance.now();
        const check = await checkState(s.url, A, "f", ["before"]);
        if (check !== "true") slow.push(`check of A: ${check}`);
        slowest = Math.max(slowest, performance.now() - start);
      }
      const waiters = await lockWaiters(observer, name);
      t.diagnostic(
        `${rounds} rounds on B while A was stuck, slowest ${slowest.toFixed(0)} ms; ${waiters} backend(s) waiting on the lock`,
      );
      assert.deepEqual(slow, [], "project B answers every read and write in under 2 s, and A's checks answer");
      assert.deepEqual(tally(writes), { pending: 16 }, "A's writes wait their turn; none fails fast");
      assert.ok(waiters < 10, `A's queued writes do not hold every pooled connection (${waiters} wait on the lock)`);

      await holder.query("rollback");
      released = true;
      const releasedAt = performance.now();
      await Promise.all(writes.map((w) => w.settled));
      t.diagnostic(`A's 16 writes done ${(performance.now() - releasedAt).toFixed(0)} ms after the release`);
      assert.deepEqual(tally(writes), { "200": 16 }, "every write of A lands once the row is free");
    } finally {
      if (!released) await holder.query("rollback").catch(() => {});
      await Promise.all(writes.map((w) => w.settled));
    }
    for (let n = 0; n < 16; n++) assert.equal(await checkState(s.url, A, "f", [`q${n}`]), "true", `q${n} attached`);
    assert.equal(await checkState(s.url, A, "f", ["before"]), "true");
    // And stored, not only in memory.
    const attached = await holder.query(
      "select count(*)::int as n from flag_actors where project_id = $1 and actor_id like 'q%'",
      [A],
    );
    assert.equal(attached.rows[0].n, 16, "all 16 actors are stored");
  });
});

describe("a saturated pool answers 503 busy, distinct from unavailable (postgres, DATABASE_POOL_SIZE=2)", {
  skip: PG_SKIP,
  timeout: 180_000,
}, () => {
  let database: FreshDatabase | undefined;
  let server: TestServer | undefined;
  const clients = new Set<pg.Client>();
  const holders: pg.Client[] = [];

  before(async () => {
    database = await freshDatabase("postgres");
    server = await startServer({
      dialect: "postgres",
      database,
      env: { DATABASE_POOL_SIZE: "2", FEED_POLL_INTERVAL_MS: "60000" },
    });
  });

  after(async () => {
    for (const h of holders) await h.query("rollback").catch(() => {});
    await stopAndDrop(server, database, clients);
  });

  async function hold(stream: string): Promise<pg.Client> {
    const h = await connectClient(server!.databaseUrl, clients);
    holders.push(h);
    await h.query("begin");
    const res = await h.query("update feed_streams set version = version where stream = $1", [stream]);
    assert.equal(res.rowCount, 1, `the version row of ${stream} is held`);
    return h;
  }

  async function release(h: pg.Client): Promise<void> {
    await h.query("rollback");
    holders.splice(holders.indexOf(h), 1);
  }

  test("both pooled connections stuck on locks: a read and a write of a third project wait ~3 s, then 503 busy", async (t) => {
    const s = server!;
    const name = databaseName(s.databaseUrl);
    const [A, B, C] = [
      await newProject(s, "sat-a", "f"),
      await newProject(s, "sat-b", "f"),
      await newProject(s, "sat-c", "f"),
    ];
    const observer = await connectClient(maintenanceUrl(s.databaseUrl), clients);
    const hA = await hold(A);
    const hB = await hold(B);
    const stuck = [
      send(s, "A", "PATCH", `/projects/${A}/flags/f`, { addActors: ["x"] }),
      send(s, "B", "PATCH", `/projects/${B}/flags/f`, { addActors: ["x"] }),
    ];
    try {
      await waitUntil(
        "both pooled connections wait on the held rows",
        async () => (await lockWaiters(observer, name)) === 2,
        10_000,
      );
      const [read, write, check] = await Promise.all([
        timed(s, "GET", `/projects/${C}/flags/f`),
        timed(s, "PATCH", `/projects/${C}/flags/f`, { addActors: ["y"] }),
        (async () => {
          const start = performance.now();
          const state = await checkState(s.url, C, "f", ["x"]);
          return { state, ms: performance.now() - start };
        })(),
      ]);
      t.diagnostic(
        `read of C: ${read.res.status} in ${read.ms.toFixed(0)} ms; write: ${write.res.status} in ${write.ms.toFixed(0)} ms; check: ${check.ms.toFixed(0)} ms`,
      );
      for (const [label, { res, ms }] of [
        ["read of C", read],
        ["write of C", write],
      ] as const) {
        expectRetryable(res, "busy", label);
        assert.ok(ms >= POOL_CONNECT_TIMEOUT_MS - 500, `${label} waited for a connection first (${ms.toFixed(0)} ms)`);
        assert.ok(ms < POOL_CONNECT_TIMEOUT_MS + 5000, `${label} answered in bounded time (${ms.toFixed(0)} ms)`);
      }
      assert.equal(check.state, "false", "checks answer from memory while the pool is saturated");
      assert.ok(check.ms < 1000, `a check does not wait for the pool (${check.ms.toFixed(0)} ms)`);
      assert.deepEqual(tally(stuck), { pending: 2 }, "the stuck writes still wait");
    } finally {
      await release(hA).catch(() => {});
      await release(hB).catch(() => {});
      await Promise.all(stuck.map((w) => w.settled));
    }
    assert.deepEqual(tally(stuck), { "200": 2 }, "the stuck writes land once the rows are free");
    await must(200, s.url, "GET", `/projects/${C}/flags/f`);
    await must(200, s.url, "PATCH", `/projects/${C}/flags/f`, { body: { addActors: ["y"] } });
    assert.equal(await checkState(s.url, C, "f", ["y"]), "true");
    for (const project of [A, B]) assert.equal(await checkState(s.url, project, "f", ["x"]), "true");
  });

  test(`more than ${MAX_QUEUED_WRITES} writes queued on one project: the surplus answers 503 busy at once, the rest land`, async (t) => {
    const s = server!;
    const name = databaseName(s.databaseUrl);
    const A = await newProject(s, "flood-a", "f");
    const observer = await connectClient(maintenanceUrl(s.databaseUrl), clients);
    const h = await hold(A);
    const total = 300;
    const writes = Array.from({ length: total }, (_, n) =>
      send(s, `+w${n}`, "PATCH", `/projects/${A}/flags/f`, { addActors: [`w${n}`] }),
    );
    // Writes holding one of A's write slots wait on the row inside PostgreSQL, one pooled connection each;
    // MAX_QUEUED_WRITES more wait for a slot without a connection; the rest are refused. The slots are
    // counted as the backends waiting on the lock (there may be a few; the pool of 2 shows at most 2).
    let accepted = Number.NaN;
    let releasedAt = Number.POSITIVE_INFINITY;
    try {
      let slots = 0;
      await waitUntil(
        "a first write refused, and the slot holders waiting on the row",
        async () => {
          slots = await lockWaiters(observer, name);
          return (
            (slots >= 1 && writes.some((w) => w.done)) ||
            `${slots} waiting on the row; ${JSON.stringify(tally(writes))}`
          );
        },
        30_000,
        20,
      );
      assert.ok(slots <= 2, `no more writes of A wait on the row than the pool (2) has connections: ${slots}`);
      accepted = MAX_QUEUED_WRITES + slots;
      const surplus = total - accepted;
      await waitUntil(
        `${surplus} writes refused while the row is held`,
        async () => writes.filter((w) => w.done).length >= surplus || JSON.stringify(tally(writes)),
        30_000,
        50,
      );
      // Refused at once: answered while the row was still held, none needing the pool or the lock.
      const refused = writes.filter((w) => w.done);
      for (const w of refused) expectRetryable(w.answer!, "busy", `${w.label} refused`);
      const slowest = Math.max(...refused.map((w) => w.ms!));
      t.diagnostic(
        `${refused.length} refused (${slots} write slot(s) + ${MAX_QUEUED_WRITES} queued accepted), slowest refusal ${slowest.toFixed(0)} ms after it was sent`,
      );
      assert.ok(slowest < 10_000, `refusals come at once (slowest ${slowest.toFixed(0)} ms)`);
      assert.equal(await lockWaiters(observer, name), slots, "the queued writes hold no connection");
    } finally {
      await release(h).catch(() => {});
      releasedAt = performance.now();
      await Promise.all(writes.map((w) => w.settled));
    }
    t.diagnostic(
      `answers: ${JSON.stringify(tally(writes))}; queue drained ${(performance.now() - releasedAt).toFixed(0)} ms after the release`,
    );
    assert.deepEqual(tally(writes), { "200": accepted, "503 busy": total - accepted });
    // Each accepted write is attached, each refused one is not: nothing refused was changed.
    const stored = await h.query(
      "select count(*)::int as n from flag_actors where project_id = $1 and actor_id like 'w%'",
      [A],
    );
    assert.equal(stored.rows[0].n, accepted, "exactly the accepted writes are stored");
    for (const [n, w] of writes.entries()) {
      const expected = w.answer?.status === 200 ? "true" : "false";
      assert.equal(await checkState(s.url, A, "f", [`w${n}`]), expected, `w${n} (${outcome(w)})`);
    }
    // The queue is empty again: the next write goes straight through.
    const after = await timed(s, "PATCH", `/projects/${A}/flags/f`, { addActors: ["after"] });
    assert.equal(after.res.status, 200);
    assert.ok(after.ms < 2000, `a write after the flood (${after.ms.toFixed(0)} ms)`);
  });
});
