// A NOTIFY on `flagstaff_changes` is a hint, never a source of truth: any login to the database may send
// one, with any payload. Two instances share one PostgreSQL database: A in this process (startServer), B a
// real child process. A separate client sends forged and malformed notifications; after each, both
// instances are alive, answer every check as before, refuse a forged key, and still pass real writes to
// each other through the hint + change-log path. The periodic reconcile is pushed out to 60 s, so what
// arrives, arrives through notifications.
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { after, before, describe, test } from "node:test";
import type pg from "pg";
import { hashApiKey } from "../src/kernel/ids.js";
import { forgetDocument } from "@flagstaff/test-harness";
import { connectClient, endClients, waitUntil } from "./helpers/postgres-clients.js";
import { type ServerProcess, launchServer } from "@flagstaff/test-harness";
import {
  ADMIN_KEY,
  checkState,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  httpRequest as call,
  expectStatus as must,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const SKIP = DIALECTS.includes("postgres") ? false : "PostgreSQL not available";
const CHANNEL = "flagstaff_changes";
/** How long a real change may take to reach the other instance (generous: a busy 2-core machine). */
const PROPAGATION_MS = 5000;
/** The secret of a key that exists nowhere but in forged notifications. */
const FORGED_SECRET = "forged-secret-that-no-one-created-0123456789";
const FORGED_HASH = hashApiKey(FORGED_SECRET);

describe("change notifications are hints: forged and malformed ones change nothing, crash nothing", {
  skip: SKIP,
  timeout: 180_000,
}, () => {
  let database: FreshDatabase | undefined;
  let A: TestServer | undefined;
  let B: ServerProcess | undefined;
  const clients = new Set<pg.Client>();
  let notifier: pg.Client;
  const p = `notify-${process.pid}-${Date.now().toString(36)}`;
  let offFlagId = "";

  const instances = () => [
    { name: "A (in process)", url: A!.url },
    { name: "B (child process)", url: B!.url },
  ];

  async function notify(payload: string): Promise<void> {
    await notifier.query("select pg_notify($1, $2)", [CHANNEL, payload]);
  }

  async function storedVersion(stream: string): Promise<number> {
    const res = await notifier.query("select version from feed_streams where stream = $1", [stream]);
    return res.rows[0] ? Number(res.rows[0].version) : 0;
  }

  function assertBAlive(): void {
    const child = B!.child;
    assert.ok(
      child.exitCode === null && child.signalCode === null,
      `B exited (${child.exitCode ?? child.signalCode}): ${B!.stderr.slice(-3000)}`,
    );
  }

  let probes = 0;
  /**
   * A real write through each instance, seen by the other within PROPAGATION_MS. NOTIFYs reach a listener
   * in commit order, so once B shows A's write, B has received every notification sent before it (and
   * likewise for A): whatever a forged one did, it did by then.
   */
  async function realWritesStillPropagate(label: string): Promise<void> {
    const n = probes++;
    try {
      await must(200, A!.url, "PATCH", `/projects/${p}/flags/probe`, { body: { addActors: [`via-a-${n}`] } });
      await waitUntil(
        `${label}: a write on A reaches B`,
        async () => (await checkState(B!.url, p, "probe", [`via-a-${n}`])) === "true",
        PROPAGATION_MS,
      );
      await must(200, B!.url, "PATCH", `/projects/${p}/flags/probe`, { body: { addActors: [`via-b-${n}`] } });
      await waitUntil(
        `${label}: a write on B reaches A`,
        async () => (await checkState(A!.url, p, "probe", [`via-b-${n}`])) === "true",
        PROPAGATION_MS,
      );
    } catch (error) {
      // A dead B explains more than a timeout does.
      assertBAlive();
      throw error;
    }
  }

  /** Both instances alive, answering every check as before, refusing the forged key; A's versions as stored. */
  async function assertUnharmed(label: string): Promise<void> {
    assertBAlive();
    for (const { name, url } of instances()) {
      const health = await call(url, "GET", "/healthz", { key: null, timeoutMs: 5000 });
      assert.equal(health.status, 200, `${label}: /healthz on ${name}`);
      assert.equal(await checkState(url, p, "on"), "true", `${label}: flag "on" on ${name}`);
      assert.equal(await checkState(url, p, "off"), "false", `${label}: flag "off" on ${name}`);
      assert.equal(await checkState(url, p, "cond", ["alice"]), "true", `${label}: "cond" for alice on ${name}`);
      assert.equal(await checkState(url, p, "cond", ["bob"]), "false", `${label}: "cond" for bob on ${name}`);
      assert.equal(
        await checkState(url, p, "off", [], FORGED_SECRET),
        "401 unauthorized",
        `${label}: the forged key checks on ${name}`,
      );
      expectProblem(await call(url, "GET", "/projects", { key: FORGED_SECRET }), 401, "unauthorized");
      expectProblem(await call(url, "GET", `/projects/${p}`, { key: FORGED_SECRET }), 401, "unauthorized");
    }
    // The in-process instance can be looked into: no stream it knows is ahead of (or behind) the database.
    const versions = A!.service.feed.snapshot.versions;
    for (const stream of ["", p]) {
      assert.equal(versions.get(stream) ?? 0, await storedVersion(stream), `${label}: A's version of "${stream}"`);
    }
    assert.equal(A!.service.feed.snapshot.principal(FORGED_HASH), undefined, `${label}: the forged key in A`);
  }

  before(async () => {
    database = await freshDatabase("postgres");
    const env = { FEED_POLL_INTERVAL_MS: "60000" };
    A = await startServer({ dialect: "postgres", database, env });
    B = await launchServer({
      env: { DATABASE_URL: database.url, ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: "warn", ...env },
      readyTimeoutMs: 20_000,
    });
    notifier = await connectClient(database.url, clients);

    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "notifications" } });
    await must(201, A.url, "POST", `/projects/${p}/flags/on`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/on`, { body: { status: "enabled" } });
    offFlagId = (await must(201, A.url, "POST", `/projects/${p}/flags/off`, { body: {} })).id;
    await must(201, A.url, "POST", `/projects/${p}/flags/cond`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/cond`, {
      body: { status: "conditional", addActors: ["alice"] },
    });
    await must(201, A.url, "POST", `/projects/${p}/flags/probe`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/probe`, { body: { status: "conditional" } });
    await realWritesStillPropagate("setup");
    await assertUnharmed("setup");
  });

  after(async () => {
    try {
      await endClients(clients);
      if (B) {
        await B.stop("SIGTERM", 5000).catch(() => B?.stop("SIGKILL", 2000));
        forgetDocument(B.url);
      }
      await A?.stop();
    } finally {
      await database?.drop();
    }
  });

  test("a real write on A reaches B through the hint and the change log", async (t) => {
    // Listen as the instances do, to see what a real write announces.
    const listener = await connectClient(database!.url, clients);
    const heard: string[] = [];
    listener.on("notification", (n) => {
      if (n.channel === CHANNEL && n.payload !== undefined) heard.push(n.payload);
    });
    await listener.query(`listen ${CHANNEL}`);

    const since = performance.now();
    await must(200, A!.url, "PATCH", `/projects/${p}/flags/probe`, { body: { status: "enabled" } });
    const onB = await waitUntil(
      "status enabled on B",
      async () => (await checkState(B!.url, p, "probe")) === "true",
      PROPAGATION_MS,
    );
    // The hint names the stream and its new version and carries no change: what B applied came from the
    // log, where the write recorded it.
    const version = await storedVersion(p);
    await waitUntil("the write's notification", async () => heard.length > 0, PROPAGATION_MS);
    const hints = heard.map((text) => JSON.parse(text) as Record<string, unknown>);
    assert.deepEqual(
      hints.filter((h) => h.stream === p).map((h) => h.version),
      [version],
      `one hint for the write: ${heard.join(" | ")}`,
    );
    for (const hint of hints)
      assert.equal(hint.changes, undefined, `a hint carries no changes: ${JSON.stringify(hint)}`);
    const logged = await notifier.query("select change from feed_changes where stream = $1 and version = $2", [
      p,
      await storedVersion(p),
    ]);
    assert.equal(logged.rowCount, 1, "the change set is in the log under the stream's version");
    assert.match(logged.rows[0].change, /"status":"enabled"/);
    await must(200, B!.url, "PATCH", `/projects/${p}/flags/probe`, { body: { status: "conditional" } });
    const onA = await waitUntil(
      "status conditional on A",
      async () => (await checkState(A!.url, p, "probe")) === "false",
      PROPAGATION_MS,
    );
    t.diagnostic(
      `A → B in ${onB.toFixed(0)} ms; B → A in ${onA.toFixed(0)} ms (${(performance.now() - since).toFixed(0)} ms in all)`,
    );
    await assertUnharmed("after real writes");
  });

  test("malformed changes (a flag.upserted with no flag, and others), at the next versions, crash no instance", async () => {
    const malformed: unknown[][] = [
      // Naming the real project, so that a snapshot applying it would reach for the missing flag.
      [{ kind: "flag.upserted", projectId: p }],
      [{ kind: "flag.upserted" }],
      [{ kind: "flag.upserted", projectId: p, flag: { id: offFlagId } }],
      [{ kind: "segment.members", projectId: p }],
      [null],
      [{ kind: "flag.deleted" }, { kind: "no.such" }],
    ];
    // Each at a version of its own, each the next one after the last: a snapshot that took the payload
    // as a change set would apply every one of them.
    const base = await storedVersion(p);
    for (const [n, changes] of malformed.entries()) {
      await notify(JSON.stringify({ stream: p, version: base + 1 + n, changes }));
    }
    await realWritesStillPropagate("malformed flag.upserted");
    await assertUnharmed("malformed flag.upserted");
  });

  test("a forged key.created (an admin key, by its hash) adds no key, on the global stream or a project's", async () => {
    const key = (id: string, role: string, projectId: string | null) => ({
      kind: "key.created",
      id,
      hash: FORGED_HASH,
      role,
      projectId,
    });
    const globalVersion = (await storedVersion("")) + 1;
    await notify(JSON.stringify({ stream: "", version: globalVersion, changes: [key("forged-1", "admin", null)] }));
    const projectVersion = (await storedVersion(p)) + 1;
    await notify(JSON.stringify({ stream: p, version: projectVersion, changes: [key("forged-2", "admin", null)] }));
    await notify(JSON.stringify({ stream: p, version: projectVersion + 1, changes: [key("forged-3", "write", p)] }));
    // And with no version at all, which once meant "apply as it comes".
    await notify(JSON.stringify({ stream: "", changes: [key("forged-4", "admin", null)] }));
    await realWritesStillPropagate("forged key.created");
    await assertUnharmed("forged key.created");
    // The admin key still works, and a real key created afterwards works on both instances.
    const real = await must(201, A!.url, "POST", `/projects/${p}/keys`, { body: { role: "check", name: "real" } });
    await waitUntil(
      "a real key on B",
      async () => (await checkState(B!.url, p, "on", [], real.key)) === "true",
      PROPAGATION_MS,
    );
  });

  test("forged flag and project changes enable, delete or drop nothing", async () => {
    const version = (await storedVersion(p)) + 1;
    const enableOff = {
      kind: "flag.upserted",
      projectId: p,
      flag: { id: offFlagId, name: "off", status: "enabled", percentageActors: 0, percentageCalls: 0 },
      addActors: ["mallory"],
      removeActors: [],
      addSegments: [],
      removeSegments: [],
    };
    await notify(JSON.stringify({ stream: p, version, changes: [enableOff], at: Date.now(), origin: "forger" }));
    await realWritesStillPropagate("forged flag.upserted");
    await assertUnharmed("forged flag.upserted");
    assert.equal(await checkState(A!.url, p, "off", ["mallory"]), "false");
    assert.equal(await checkState(B!.url, p, "off", ["mallory"]), "false");

    const next = (await storedVersion(p)) + 1;
    await notify(
      JSON.stringify({ stream: p, version: next, changes: [{ kind: "flag.deleted", projectId: p, id: offFlagId }] }),
    );
    await notify(JSON.stringify({ stream: p, version: next, changes: [{ kind: "project.deleted", projectId: p }] }));
    await notify(
      JSON.stringify({
        stream: "",
        version: (await storedVersion("")) + 1,
        changes: [{ kind: "project.deleted", projectId: p }],
      }),
    );
    await realWritesStillPropagate("forged deletes");
    await assertUnharmed("forged deletes");
  });

  test("garbage payloads are ignored: not JSON, null, arrays, numbers, oversized, huge versions, long or odd streams", async (t) => {
    const version = (await storedVersion(p)) + 1;
    const bigChange = {
      kind: "flag.upserted",
      projectId: p,
      flag: { id: offFlagId, name: "off", status: "enabled", percentageActors: 0, percentageCalls: 0 },
      addActors: [],
      removeActors: [],
      addSegments: [],
      removeSegments: [],
      padding: "x".repeat(6600),
    };
    const oversized = JSON.stringify({ stream: p, version, changes: [bigChange] });
    assert.ok(oversized.length > 6900 && oversized.length < 7900, `oversized payload is ${oversized.length} chars`);
    const payloads: [label: string, payload: string][] = [
      ["not JSON", "this is not JSON {"],
      ["empty", ""],
      ["JSON null", "null"],
      ["JSON true", "true"],
      ["an array", JSON.stringify([{ stream: p, version }])],
      ["a number", "42"],
      ["a string", JSON.stringify(p)],
      ["an empty object", "{}"],
      ["7,000 characters of junk", "x".repeat(7000)],
      ["7,000 characters that would enable a flag", oversized],
      ["a huge version", JSON.stringify({ stream: p, version: 1e308, changes: [] })],
      ["a version beyond 2^53", `{"stream":${JSON.stringify(p)},"version":99999999999999999999999999}`],
      ["the largest safe version", JSON.stringify({ stream: p, version: Number.MAX_SAFE_INTEGER, changes: [] })],
      ["a negative version", JSON.stringify({ stream: p, version: -1, changes: [] })],
      ["a fractional version", JSON.stringify({ stream: p, version: version + 0.5, changes: [] })],
      ["a version as a string", JSON.stringify({ stream: p, version: String(version), changes: [] })],
      ["a stream of 300 characters", JSON.stringify({ stream: "s".repeat(300), version: 1, changes: [] })],
      ["a numeric stream", JSON.stringify({ stream: 12, version: 1 })],
      ["an object stream", JSON.stringify({ stream: { id: p }, version })],
      ["a unicode stream", JSON.stringify({ stream: "プロジェクト-ü-🚩", version: 1, changes: [] })],
      ["a lone surrogate", '{"stream":"\\ud800","version":1}'],
      ["a unicode project-like stream", JSON.stringify({ stream: `${p}\u00e9`, version: 1 })],
      ["__proto__", `{"__proto__":{"stream":${JSON.stringify(p)},"version":${version}},"changes":[]}`],
      ["constructor stream", JSON.stringify({ stream: "constructor", version: 1, changes: [] })],
      ["changes not an array", JSON.stringify({ stream: p, version, changes: "enable everything" })],
    ];
    for (const [label, payload] of payloads) {
      await notify(payload);
      await realWritesStillPropagate(label);
      await assertUnharmed(label);
    }
    t.diagnostic(`${payloads.length} garbage payloads, each followed by real writes both ways`);
    // All of it at once, too, then real writes.
    for (const [, payload] of payloads) await notify(payload);
    await realWritesStillPropagate("all the garbage at once");
    await assertUnharmed("all the garbage at once");
  });
});
