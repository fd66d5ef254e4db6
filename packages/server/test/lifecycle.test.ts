// Real server processes: `node dist/src/main.js` spawned with an environment, talked to over HTTP, stopped
// with signals and restarted on the same database. Every wait has a deadline; every child is killed in the end.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { crc32 } from "node:zlib";
import { SQLite } from "../src/db/sqlite-driver.js";
import pg from "pg";
import type { Dialect } from "../src/config.js";
import {
  ADMIN_KEY,
  type ApiResponse,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  httpRequest,
  type RequestOptions,
  sleep,
} from "./helpers/server.js";
import { freePort } from "./helpers/process.js";

/** The compiled entry point, beside the compiled test: dist/test/lifecycle.test.js → dist/src/main.js. */
const MAIN = fileURLToPath(new URL("../src/main.js", import.meta.url));
const GENERATED_KEY = /fsk_[A-Za-z0-9_-]{20,}/g;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TEST_TIMEOUT = { timeout: 90_000 };

/** Variables the server reads; a child never inherits them from the test run, only gets what a test gives. */
const SERVER_VARIABLES = [
  "DATABASE_URL",
  "ADMIN_API_KEY",
  "PORT",
  "HOST",
  "LOG_LEVEL",
  "CHECK_FLUSH_INTERVAL_MS",
  "FEED_POLL_INTERVAL_MS",
  "RATE_LIMIT_PER_MINUTE",
  "METRICS_PUBLIC",
  "DATABASE_POOL_SIZE",
  "NODE_TEST_CONTEXT",
  "NODE_OPTIONS",
];

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const inActorRollout = (flagName: string, actorId: string, percentage: number) =>
  crc32(Buffer.from(`${flagName}:${actorId}`, "utf8")) % 100_000 < percentage * 1000;

/** One HTTP request with a deadline (10 s unless given), through the harness. */
const call = <T = any>(baseUrl: string, method: string, path: string, options: RequestOptions = {}) =>
  httpRequest<T>(baseUrl, method, path, { timeoutMs: 10_000, ...options });

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Every process started by this file and not yet known to be gone; `after` kills what is left. */
const live = new Set<ServerProcess>();

class ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  stdout = "";
  stderr = "";
  exit: Exit | undefined;
  readonly closed: Promise<Exit>;

  constructor(
    env: NodeJS.ProcessEnv,
    readonly port: number,
    cwd: string | undefined,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.child = spawn(process.execPath, [MAIN], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.closed = new Promise<Exit>((resolve) => {
      const done = (exit: Exit) => {
        if (this.exit !== undefined) return;
        this.exit = exit;
        live.delete(this);
        resolve(exit);
      };
      this.child.once("close", (code, signal) => done({ code, signal }));
      this.child.once("error", (error) => {
        this.stderr += `\n[spawn error] ${error.message}`;
        done({ code: null, signal: null });
      });
    });
    live.add(this);
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  request<T = any>(method: string, path: string, options: RequestOptions & { timeoutMs?: number } = {}) {
    return call<T>(this.url, method, path, options);
  }

  describe(): string {
    return `\n--- stdout ---\n${this.stdout.slice(-4000)}\n--- stderr ---\n${this.stderr.slice(-4000)}`;
  }

  /** Waits for the process to end; past the deadline it is killed with SIGKILL and this throws. */
  async waitExit(ms = 15_000): Promise<Exit> {
    if (this.exit !== undefined) return this.exit;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), ms);
    });
    const result = await Promise.race([this.closed, timeout]);
    clearTimeout(timer);
    if (result === "timeout") {
      await this.kill();
      throw new Error(`server did not exit within ${ms} ms; killed with SIGKILL${this.describe()}`);
    }
    return result;
  }

  /** Sends a signal and waits for the exit (SIGKILL after the deadline). */
  async stop(signal: NodeJS.Signals = "SIGTERM", ms = 15_000): Promise<Exit> {
    if (this.running) this.child.kill(signal);
    return this.waitExit(ms);
  }

  /** SIGKILL, whatever state it is in. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGKILL");
    await Promise.race([this.closed, sleep(5_000)]);
  }

  /** Polls GET /healthz until 200; throws (after killing) when the process dies or the deadline passes. */
  async waitReady(ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!this.running) {
        throw new Error(`server exited (${JSON.stringify(this.exit)}) before it was ready${this.describe()}`);
      }
      try {
        const res = await this.request("GET", "/healthz", { key: null, timeoutMs: 1_000 });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    await this.kill();
    throw new Error(`server was not ready within ${ms} ms${this.describe()}`);
  }

  /** Polls stdout until the pattern shows up (the pipe may lag behind the HTTP answers). */
  async waitForStdout(pattern: RegExp, ms = 5_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + ms;
    for (;;) {
      const match = this.stdout.match(pattern);
      if (match) return match;
      if (Date.now() >= deadline || !this.running) {
        throw new Error(`stdout never showed ${pattern}${this.describe()}`);
      }
      await sleep(25);
    }
  }
}

interface LaunchOptions {
  /** DATABASE_URL; leave undefined to let the server use its default. */
  database?: string;
  /** More variables; a value of undefined removes the variable. PORT here overrides the free port picked. */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** Spawns a server process on a free port (not waiting for it). */
async function spawnServer(options: LaunchOptions): Promise<ServerProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVER_VARIABLES) delete env[name];
  env.PORT = String(port);
  env.HOST = "127.0.0.1";
  env.LOG_LEVEL = "info";
  if (options.database !== undefined) env.DATABASE_URL = options.database;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return new ServerProcess(env, port, options.cwd);
}

/** Spawns a server and waits until it answers /healthz. */
async function launch(options: LaunchOptions): Promise<ServerProcess> {
  const server = await spawnServer(options);
  await server.waitReady();
  return server;
}

/** Every row of every table of a stopped server's database, to look into what it stored. */
async function dumpTables(dialect: Dialect, url: string): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  if (dialect === "sqlite") {
    const sqlite = new SQLite(url.slice("file:".length), { fileMustExist: true });
    try {
      const tables = sqlite
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
        .all() as { name: string }[];
      for (const { name } of tables) {
        out[name] = sqlite.prepare(`select * from "${name.replace(/"/g, '""')}"`).all() as Record<string, unknown>[];
      }
    } finally {
      sqlite.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
    );
    for (const { table_name } of tables.rows) {
      out[table_name] = (await client.query(`select * from "${table_name.replace(/"/g, '""')}"`)).rows;
    }
  } finally {
    await client.end();
  }
  return out;
}

function allGeneratedKeys(text: string): string[] {
  return [...text.matchAll(GENERATED_KEY)].map((m) => m[0]);
}

const databases: FreshDatabase[] = [];
const tempDirs: string[] = [];

async function newDatabase(dialect: Dialect): Promise<FreshDatabase> {
  const database = await freshDatabase(dialect);
  databases.push(database);
  return database;
}

after(async () => {
  await Promise.all([...live].map((server) => server.kill()));
  for (const database of databases) await database.drop().catch(() => {});
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

for (const dialect of DIALECTS) {
  describe(`lifecycle: server processes [${dialect}]`, () => {
    test(
      "first start without ADMIN_API_KEY prints one generated admin key once; it works; a restart prints none",
      TEST_TIMEOUT,
      async () => {
        const database = await newDatabase(dialect);
        const first = await launch({ database: database.url });
        let generated: string;
        try {
          generated = (await first.waitForStdout(GENERATED_KEY))[0];
          const ok = await first.request("GET", "/projects", { key: generated });
          assert.equal(ok.status, 200, ok.text);
          assert.deepEqual(ok.body.data, []);
          expectProblem(await first.request("GET", "/projects", { key: `${generated}x` }), 401, "unauthorized");
          expectProblem(await first.request("GET", "/projects"), 401, "unauthorized"); // ADMIN_KEY was never set
        } finally {
          const exit = await first.stop("SIGTERM");
          assert.deepEqual(exit, { code: 0, signal: null }, first.describe());
        }
        assert.deepEqual(allGeneratedKeys(first.stdout), [generated], "exactly one key, printed once");
        assert.equal(allGeneratedKeys(first.stderr).length, 0, "the key goes to stdout only");

        const tables = await dumpTables(dialect, database.url);
        const keys = tables.api_keys ?? [];
        assert.equal(keys.length, 1, JSON.stringify(keys));
        assert.equal(keys[0]?.role, "admin");
        assert.equal(keys[0]?.key_hash, sha256(generated));
        assert.ok(!JSON.stringify(tables).includes(generated), "the generated secret is stored nowhere");

        const second = await launch({ database: database.url });
        try {
          const ok = await second.request("GET", "/projects", { key: generated });
          assert.equal(ok.status, 200, ok.text);
        } finally {
          const exit = await second.stop("SIGTERM");
          assert.deepEqual(exit, { code: 0, signal: null }, second.describe());
        }
        assert.deepEqual(allGeneratedKeys(second.stdout), [], `second start printed a key${second.describe()}`);
        assert.equal((await dumpTables(dialect, database.url)).api_keys?.length, 1, "no second admin key created");
      },
    );

    test("ADMIN_API_KEY is a valid admin key as given; only its SHA-256 is stored", TEST_TIMEOUT, async () => {
      const database = await newDatabase(dialect);
      const secret = `my-own-admin-key-${randomBytes(12).toString("hex")}`;
      const server = await launch({ database: database.url, env: { ADMIN_API_KEY: secret } });
      try {
        const list = await server.request("GET", "/projects", { key: secret });
        assert.equal(list.status, 200, list.text);
        const created = await server.request("POST", "/projects", {
          key: secret,
          body: { id: "by-env-key", name: "Made with the configured key" },
        });
        assert.equal(created.status, 201, created.text);
        expectProblem(await server.request("GET", "/projects", { key: `${secret}-not` }), 401, "unauthorized");
      } finally {
        const exit = await server.stop("SIGTERM");
        assert.deepEqual(exit, { code: 0, signal: null }, server.describe());
      }
      assert.deepEqual(allGeneratedKeys(server.stdout), [], "no key is generated when ADMIN_API_KEY is set");
      assert.ok(!server.stdout.includes(secret) && !server.stderr.includes(secret), "the secret is never logged");

      const tables = await dumpTables(dialect, database.url);
      const keys = tables.api_keys ?? [];
      assert.equal(keys.length, 1, JSON.stringify(keys));
      assert.equal(keys[0]?.role, "admin");
      assert.equal(keys[0]?.project_id, null);
      assert.equal(keys[0]?.key_hash, sha256(secret));
      assert.ok(!JSON.stringify(tables).includes(secret), "the secret appears in no column of any table");
      assert.deepEqual(
        (tables.projects ?? []).map((p) => p.id),
        ["by-env-key"],
      );
    });

    test(
      "SIGTERM right after a check: exit 0, everything kept, the unflushed latestCheckedAt is stored",
      TEST_TIMEOUT,
      async () => {
        const database = await newDatabase(dialect);
        const env = { ADMIN_API_KEY: ADMIN_KEY, CHECK_FLUSH_INTERVAL_MS: "1000" };
        const first = await launch({ database: database.url, env });
        const project = "sigterm";
        const flagName = "rollout-flag";
        const base = `/projects/${project}/flags/${flagName}`;
        // Actors not attached, chosen by the CRC-32 rule to fall on either side of the 25 % rollout.
        const candidates = Array.from({ length: 200 }, (_, i) => `visitor-${i}`);
        const inside = candidates.find((a) => inActorRollout(flagName, a, 25))!;
        const outside = candidates.find((a) => !inActorRollout(flagName, a, 25))!;
        const answers: Record<string, boolean> = {};
        let flagBefore: any;
        let checkStarted = 0;
        try {
          assert.equal((await first.request("POST", "/projects", { body: { id: project, name: "S" } })).status, 201);
          const created = await first.request("POST", base, { body: { description: "kept across restarts" } });
          assert.equal(created.status, 201, created.text);
          const patched = await first.request("PATCH", base, {
            body: { status: "conditional", percentageActors: 25, percentageCalls: 0, addActors: ["alice"] },
          });
          assert.equal(patched.status, 200, patched.text);
          flagBefore = patched.body;
          assert.equal(flagBefore.latestCheckedAt, null);

          for (const actor of [outside, inside]) {
            const res = await first.request("GET", `${base}/check?actorIds=${actor}`);
            assert.equal(res.status, 200, res.text);
            answers[actor] = res.body.enabled;
          }
          assert.deepEqual(answers, { [outside]: false, [inside]: true });

          checkStarted = Date.now();
          const check = await first.request("GET", `${base}/check?actorIds=alice`);
          first.child.kill("SIGTERM"); // at once: the 1 s flush timer has very likely not run since this check
          assert.equal(check.status, 200, check.text);
          assert.deepEqual(check.body, { enabled: true });
        } finally {
          const exit = await first.stop("SIGTERM");
          assert.deepEqual(exit, { code: 0, signal: null }, first.describe());
        }
        const stoppedAt = Date.now();

        const second = await launch({ database: database.url, env });
        try {
          assert.equal((await second.request("GET", `/projects/${project}`)).status, 200);
          const got = await second.request("GET", base);
          assert.equal(got.status, 200, got.text);
          const { latestCheckedAt, ...rest } = got.body;
          const { latestCheckedAt: _before, ...expected } = flagBefore;
          assert.deepEqual(rest, expected);
          assert.equal(rest.status, "conditional");
          assert.equal(rest.percentageActors, 25);
          assert.equal(rest.percentageCalls, 0);
          assert.notEqual(latestCheckedAt, null, "latestCheckedAt was flushed at shutdown");
          assert.match(latestCheckedAt, ISO_MS);
          const checkedAt = Date.parse(latestCheckedAt);
          assert.ok(
            checkedAt >= checkStarted && checkedAt <= stoppedAt,
            `latestCheckedAt ${latestCheckedAt} not within the last check (${new Date(checkStarted).toISOString()})`,
          );

          const alice = await second.request("GET", `${base}/check?actorIds=alice`);
          assert.deepEqual([alice.status, alice.body], [200, { enabled: true }]);
          for (const actor of [outside, inside]) {
            const res = await second.request("GET", `${base}/check?actorIds=${actor}`);
            assert.deepEqual([res.status, res.body], [200, { enabled: answers[actor] }], actor);
          }
          const noActor = await second.request("GET", `${base}/check`);
          assert.deepEqual([noActor.status, noActor.body], [200, { enabled: false }]);
          const actor = await second.request("GET", `/projects/${project}/actors/alice`);
          assert.equal(actor.status, 200, actor.text);
          assert.equal(actor.body.actorId, "alice");
          const forAlice = await second.request("GET", `/projects/${project}/actors/alice/flags`);
          assert.deepEqual(
            forAlice.body.data.map((f: any) => f.name),
            [flagName],
          );
        } finally {
          await second.stop("SIGTERM");
        }
      },
    );

    test("SIGINT exits 0 and keeps what was written", TEST_TIMEOUT, async () => {
      const database = await newDatabase(dialect);
      const env = { ADMIN_API_KEY: ADMIN_KEY };
      const first = await launch({ database: database.url, env });
      try {
        assert.equal((await first.request("POST", "/projects", { body: { id: "sigint", name: "I" } })).status, 201);
        const created = await first.request("POST", "/projects/sigint/flags/kept", { body: { description: "k" } });
        assert.equal(created.status, 201, created.text);
      } finally {
        const exit = await first.stop("SIGINT");
        assert.deepEqual(exit, { code: 0, signal: null }, first.describe());
      }
      const second = await launch({ database: database.url, env });
      try {
        const got = await second.request("GET", "/projects/sigint/flags/kept");
        assert.equal(got.status, 200, got.text);
        assert.equal(got.body.description, "k");
      } finally {
        await second.stop("SIGTERM");
      }
    });

    test(
      "SIGTERM during a burst of 50 PATCHes: exit 0, and every acknowledged write survives a restart",
      TEST_TIMEOUT,
      async () => {
        const database = await newDatabase(dialect);
        const env = { ADMIN_API_KEY: ADMIN_KEY };
        const first = await launch({ database: database.url, env });
        const base = "/projects/burst/flags/burst-flag";
        const actors = Array.from({ length: 50 }, (_, i) => `burst-actor-${i}`);
        let results: { actor: string; status: number; error?: string }[] = [];
        let exit: Exit | Error | undefined;
        try {
          assert.equal((await first.request("POST", "/projects", { body: { id: "burst", name: "B" } })).status, 201);
          assert.equal((await first.request("POST", base, { body: {} })).status, 201);
          assert.equal((await first.request("PATCH", base, { body: { status: "conditional" } })).status, 200);

          const pending = actors.map((actor) =>
            first.request("PATCH", base, { body: { addActors: [actor] }, timeoutMs: 20_000 }).then(
              (res) => ({ actor, status: res.status }),
              (error: unknown) => ({ actor, status: 0, error: String(error) }),
            ),
          );
          // All 50 are on their way; signal as soon as the first one is answered, while the rest are in flight.
          await Promise.race([Promise.race(pending), sleep(5_000)]);
          first.child.kill("SIGTERM");
          results = await Promise.all(pending);
        } finally {
          // A stop that misses its deadline (SIGKILL) is asserted below, after the durability check: what was
          // acknowledged must be in the database whatever happened to the process afterwards.
          exit = await first.stop("SIGTERM").catch((error: Error) => error);
        }
        const acknowledged = results.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.actor);
        assert.ok(acknowledged.length >= 1, `no PATCH was acknowledged: ${JSON.stringify(results)}`);

        const second = await launch({ database: database.url, env });
        try {
          for (const actor of acknowledged) {
            const check = await second.request("GET", `${base}/check?actorIds=${actor}`);
            assert.deepEqual([check.status, check.body], [200, { enabled: true }], `acknowledged ${actor} was lost`);
            const stored = await second.request("GET", `/projects/burst/actors/${actor}`);
            assert.equal(stored.status, 200, `acknowledged actor ${actor} was lost: ${stored.text}`);
          }
        } finally {
          await second.stop("SIGTERM");
        }
        if (exit instanceof Error) throw exit;
        assert.deepEqual(exit, { code: 0, signal: null }, first.describe());
      },
    );

    const badConfigurations: { label: string; env: Record<string, string | undefined>; names: RegExp }[] = [
      { label: "DATABASE_URL=mysql://x", env: { DATABASE_URL: "mysql://x" }, names: /DATABASE_URL/ },
      { label: "PORT=abc", env: { PORT: "abc" }, names: /PORT/ },
      { label: "PORT=70000", env: { PORT: "70000" }, names: /PORT/ },
      { label: "LOG_LEVEL=loud", env: { LOG_LEVEL: "loud" }, names: /LOG_LEVEL/ },
      { label: "ADMIN_API_KEY of 15 characters", env: { ADMIN_API_KEY: "a".repeat(15) }, names: /ADMIN_API_KEY/ },
    ];
    for (const bad of badConfigurations) {
      test(
        `bad configuration ${bad.label}: exit 1 with a clear message on stderr, never listening`,
        TEST_TIMEOUT,
        async () => {
          const database = await newDatabase(dialect);
          const server = await spawnServer({ database: database.url, env: bad.env });
          const exit = await server.waitExit(10_000);
          assert.deepEqual(exit, { code: 1, signal: null }, server.describe());
          assert.match(server.stderr, bad.names, server.describe());
          assert.doesNotMatch(server.stderr, /\n\s+at /, "a configuration error is a message, not a stack trace");
          assert.doesNotMatch(server.stdout, /http:\/\/127\.0\.0\.1:\d+/, `it listened${server.describe()}`);
          assert.deepEqual(allGeneratedKeys(server.stdout), [], "no admin key was created");
        },
      );
    }

    test("GET /healthz, /readyz without a key and GET /openapi.json", TEST_TIMEOUT, async () => {
      const database = await newDatabase(dialect);
      const server = await launch({ database: database.url, env: { ADMIN_API_KEY: ADMIN_KEY } });
      try {
        const health = await server.request("GET", "/healthz", { key: null });
        assert.equal(health.status, 200);
        assert.match(health.headers.get("content-type") ?? "", /^application\/json/);
        assert.deepEqual(health.body, { status: "ok" });
        const ready = await server.request("GET", "/readyz", { key: null });
        assert.equal(ready.status, 200);
        assert.deepEqual(ready.body, { status: "ok" });
        const openapi = await server.request("GET", "/openapi.json");
        assert.equal(openapi.status, 200, openapi.text);
        assert.match(openapi.headers.get("content-type") ?? "", /^application\/json/);
        assert.equal(openapi.body.openapi, "3.1.0");
        assert.ok(
          Object.hasOwn(openapi.body.paths ?? {}, "/projects/{projectId}/flags/{flagName}/check"),
          Object.keys(openapi.body.paths ?? {}).join(", "),
        );
        assert.ok(Object.hasOwn(openapi.body.paths, "/projects/{projectId}/flags/{flagName}"));
      } finally {
        const exit = await server.stop("SIGTERM");
        assert.deepEqual(exit, { code: 0, signal: null }, server.describe());
      }
    });
  });
}

if (DIALECTS.includes("postgres")) {
  describe("lifecycle: database gone [postgres]", () => {
    test(
      "/readyz turns 503 unavailable when the database is dropped; checks keep answering from memory",
      TEST_TIMEOUT,
      async () => {
        const database = await newDatabase("postgres");
        const server = await launch({ database: database.url, env: { ADMIN_API_KEY: ADMIN_KEY } });
        try {
          assert.equal((await server.request("POST", "/projects", { body: { id: "gone", name: "G" } })).status, 201);
          assert.equal((await server.request("POST", "/projects/gone/flags/on", { body: {} })).status, 201);
          assert.equal(
            (await server.request("PATCH", "/projects/gone/flags/on", { body: { status: "enabled" } })).status,
            200,
          );
          const before = await server.request("GET", "/projects/gone/flags/on/check");
          assert.deepEqual([before.status, before.body], [200, { enabled: true }]);
          assert.deepEqual((await server.request("GET", "/readyz", { key: null })).body, { status: "ok" });

          await database.drop();

          const deadline = Date.now() + 10_000;
          let ready: ApiResponse | undefined;
          while (Date.now() < deadline) {
            ready = await server.request("GET", "/readyz", { key: null, timeoutMs: 8_000 });
            if (ready.status === 503) break;
            await sleep(100);
          }
          assert.equal(ready?.status, 503, `readyz never answered 503: ${ready?.status} ${ready?.text}`);
          assert.deepEqual(ready?.body, { status: "unavailable" });

          for (let i = 0; i < 5; i++) {
            const check = await server.request("GET", "/projects/gone/flags/on/check");
            assert.deepEqual([check.status, check.body], [200, { enabled: true }], check.text);
          }
          const health = await server.request("GET", "/healthz", { key: null });
          assert.deepEqual([health.status, health.body], [200, { status: "ok" }]);
        } finally {
          await server.stop("SIGTERM", 15_000).catch(() => server.kill());
        }
      },
    );
  });
}

describe("lifecycle: default DATABASE_URL [sqlite]", () => {
  test(
    "without DATABASE_URL the server creates ./data/flags.db (folder and file) in its working directory",
    TEST_TIMEOUT,
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), "flagstaff-default-db-"));
      tempDirs.push(cwd);
      const dataDir = join(cwd, "data");
      const file = join(dataDir, "flags.db");
      assert.equal(existsSync(dataDir), false);
      const server = await launch({ cwd, env: { ADMIN_API_KEY: ADMIN_KEY } });
      try {
        assert.ok(statSync(dataDir).isDirectory(), "data/ is a folder");
        assert.ok(statSync(file).isFile(), "data/flags.db is a file");
        const created = await server.request("POST", "/projects", { body: { id: "in-default-db", name: "D" } });
        assert.equal(created.status, 201, created.text);
      } finally {
        const exit = await server.stop("SIGTERM");
        assert.deepEqual(exit, { code: 0, signal: null }, server.describe());
      }
      const tables = await dumpTables("sqlite", `file:${file}`);
      assert.deepEqual(
        (tables.projects ?? []).map((p) => p.id),
        ["in-default-db"],
      );
    },
  );
});
