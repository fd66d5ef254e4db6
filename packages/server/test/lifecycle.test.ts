// Real server processes: `node dist/src/main.js` spawned with an environment, talked to over HTTP, stopped
// with signals and restarted on the same database. Every wait has a deadline; every child is killed in the end.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { crc32 } from "node:zlib";
import SQLite from "better-sqlite3";
import pg from "pg";
import type { Dialect } from "../src/kernel/config.js";
import {
  ADMIN_KEY,
  type ApiResponse,
  DIALECTS,
  type Exit,
  expectProblem,
  freshDatabase,
  type ServerProcess,
  spawnServer,
  waitFor,
} from "@flagstaff/test-harness";

const GENERATED_KEY = /fsk_[A-Za-z0-9_-]{20,}/g;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TEST_TIMEOUT = { timeout: 90_000 };

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const inActorRollout = (flagName: string, actorId: string, percentage: number) =>
  crc32(Buffer.from(`${flagName}:${actorId}`, "utf8")) % 100_000 < percentage * 1000;

interface LaunchOptions {
  /** DATABASE_URL; leave undefined to let the server use its default. */
  database?: string;
  /** More variables; a value of undefined removes the variable. PORT here overrides the free port picked. */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/**
 * Spawns a server process (not waiting for it). At LOG_LEVEL=info unless given: these tests read what it
 * logs, such as where it listens.
 */
function spawnAtInfo(options: LaunchOptions): Promise<ServerProcess> {
  return spawnServer({
    cwd: options.cwd,
    env: { LOG_LEVEL: "info", DATABASE_URL: options.database, ...options.env },
  });
}

/** Spawns a server and waits until it answers /healthz. */
async function launch(options: LaunchOptions): Promise<ServerProcess> {
  const server = await spawnAtInfo(options);
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

// The databases of these tests are left to the harness, which drops them when the file ends.
const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

for (const dialect of DIALECTS) {
  describe(`lifecycle: server processes [${dialect}]`, () => {
    test(
      "first start without ADMIN_API_KEY prints one generated admin key once; it works; a restart prints none",
      TEST_TIMEOUT,
      async () => {
        const database = await freshDatabase(dialect);
        const first = await launch({ database: database.url });
        let generated: string;
        try {
          generated = (await first.waitForOutput(GENERATED_KEY))[0];
          const ok = await first.request("GET", "/projects", { key: generated });
          assert.equal(ok.status, 200, ok.text);
          assert.deepEqual(ok.body.data, []);
          expectProblem(await first.request("GET", "/projects", { key: `${generated}x` }), 401, "unauthorized");
          expectProblem(await first.request("GET", "/projects"), 401, "unauthorized"); // ADMIN_KEY was never set
        } finally {
          const exit = await first.stop("SIGTERM");
          assert.deepEqual(exit, { code: 0, signal: null }, first.describe());
        }
        // Printed where it is created, and again in the box that ends the start-up output (startup-output.test).
        assert.deepEqual(allGeneratedKeys(first.stdout), [generated, generated], "exactly one key, at the one start");
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
      const database = await freshDatabase(dialect);
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
        const database = await freshDatabase(dialect);
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
      const database = await freshDatabase(dialect);
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
        const database = await freshDatabase(dialect);
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
          // All 50 are on their way; signal as soon as the first one is answered, while the rest are in flight
          // (each has its own deadline, so this cannot wait forever).
          await Promise.race(pending);
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
          const database = await freshDatabase(dialect);
          const server = await spawnAtInfo({ database: database.url, env: bad.env });
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
      const database = await freshDatabase(dialect);
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
        const database = await freshDatabase("postgres");
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

          const ready = await waitFor(
            "/readyz to answer 503",
            () => server.request("GET", "/readyz", { key: null, timeoutMs: 8_000 }),
            { until: (res: ApiResponse) => res.status === 503, timeoutMs: 20_000, intervalMs: 100 },
          );
          assert.deepEqual(ready.body, { status: "unavailable" });

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
