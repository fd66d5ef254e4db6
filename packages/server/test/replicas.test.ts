// Several real server processes (`node dist/src/main.js`) on ONE PostgreSQL database. A write answered by
// one instance must reach the in-memory snapshot of the others: through NOTIFY on `flagstaff_changes`, and,
// when notifications were lost, through the change log (reconnect + periodic reconcile). Every wait has a
// deadline; every child process is stopped and every database dropped in `after`.
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { after, before, describe, test, type TestContext } from "node:test";
import { inActorRollout } from "@flagstaff/core";
import {
  ADMIN_KEY,
  checkState,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  expectStatus as must,
  httpRequest as call,
  launchServer,
  type ServerProcess,
  TcpProxy,
  timeUntil,
  waitFor,
} from "@flagstaff/test-harness";

const SKIP = DIALECTS.includes("postgres") ? false : "PostgreSQL not available";
/** How long a change may take to reach another instance through notifications. */
const PROPAGATION_MS = 2000;
/** How long an instance that lost its connection may take to catch up once the database is back. */
const REPAIR_MS = 3000;

interface Instance {
  readonly name: string;
  readonly proc: ServerProcess;
  readonly url: string;
}

const started = new Set<ServerProcess>();

async function startInstance(name: string, databaseUrl: string, env: Record<string, string> = {}): Promise<Instance> {
  const proc = await launchServer({ env: { DATABASE_URL: databaseUrl, ADMIN_API_KEY: ADMIN_KEY, ...env } });
  started.add(proc);
  return { name, proc, url: proc.url };
}

async function stopAll(procs: Iterable<ServerProcess>) {
  await Promise.all(
    [...procs].map(async (proc) => {
      await proc.stop("SIGTERM", 3000).catch(() => proc.stop("SIGKILL", 1000));
      started.delete(proc);
    }),
  );
}

let projectCounter = 0;
const newProjectId = () => `rp-${process.pid}-${Date.now().toString(36)}-${projectCounter++}`;

/** The URL of `databaseUrl` with its host and port replaced by a proxy on loopback. */
function throughProxy(databaseUrl: string, proxy: TcpProxy): string {
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${proxy.port}`;
  return url.toString();
}

/** Records delays and reports them as test diagnostics. */
class Delays {
  readonly all: { what: string; ms: number }[] = [];
  add(what: string, ms: number) {
    this.all.push({ what, ms });
  }
  report(t: TestContext) {
    for (const { what, ms } of this.all) t.diagnostic(`${what}: ${ms.toFixed(1)} ms`);
  }
}

/**
 * Waits until every given instance answers `expected` for a check, measuring each delay from `since`.
 */
async function propagated(
  delays: Delays,
  label: string,
  instances: readonly Instance[],
  expected: string,
  probe: (instance: Instance) => Promise<string>,
  since: number,
  timeoutMs = PROPAGATION_MS,
) {
  await Promise.all(
    instances.map(async (instance) => {
      const ms = await timeUntil(`${label} on ${instance.name}`, expected, () => probe(instance), timeoutMs, since);
      delays.add(`${label} → ${instance.name}`, ms);
    }),
  );
}

describe("replicas: three server processes on one PostgreSQL database", { skip: SKIP, timeout: 180_000 }, () => {
  let database: FreshDatabase | undefined;
  let A: Instance;
  let B: Instance;
  let C: Instance;
  const all = () => [A, B, C];

  before(async () => {
    database = await freshDatabase("postgres");
    // Started together: migrations must be safe when several instances start at once. The periodic
    // reconcile is pushed out of the way (60 s), so what these tests see arrives through notifications.
    const env = { FEED_POLL_INTERVAL_MS: "60000" };
    [A, B, C] = await Promise.all([
      startInstance("A", database.url, env),
      startInstance("B", database.url, env),
      startInstance("C", database.url, env),
    ]);
  });

  after(async () => {
    await stopAll([...started]);
    await database?.drop();
  });

  test("flag status, actors, segments, percentages and deletes made on one instance reach the others", async (t) => {
    const delays = new Delays();
    const p = newProjectId();
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "replicas" } });
    await must(201, A.url, "POST", `/projects/${p}/flags/f`, { body: {} });
    let since = performance.now();
    await propagated(delays, "flag create", [B, C], "false", (i) => checkState(i.url, p, "f"), since);

    // Status enabled on A → true on B and C.
    await must(200, A.url, "PATCH", `/projects/${p}/flags/f`, { body: { status: "enabled" } });
    since = performance.now();
    await propagated(delays, "status enabled", [B, C], "true", (i) => checkState(i.url, p, "f"), since);

    // Conditional + addActors.
    await must(200, A.url, "PATCH", `/projects/${p}/flags/f`, {
      body: { status: "conditional", addActors: ["alice"] },
    });
    since = performance.now();
    // Waited for on bob: alice was already enabled (status enabled), so only bob tells the change arrived.
    await propagated(
      delays,
      "conditional + addActors",
      [B, C],
      "false",
      (i) => checkState(i.url, p, "f", ["bob"]),
      since,
    );
    for (const i of all()) assert.equal(await checkState(i.url, p, "f", ["alice"]), "true", `alice on ${i.name}`);
    for (const i of all()) assert.equal(await checkState(i.url, p, "f"), "false", `no actors on ${i.name}`);

    // removeActors.
    await must(200, A.url, "PATCH", `/projects/${p}/flags/f`, { body: { removeActors: ["alice"] } });
    since = performance.now();
    await propagated(delays, "removeActors", [B, C], "false", (i) => checkState(i.url, p, "f", ["alice"]), since);

    // Segment membership changed on B is seen by C (and A).
    await must(201, A.url, "POST", `/projects/${p}/flags/g`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/g`, { body: { status: "conditional" } });
    const segment = await must(201, B.url, "POST", `/projects/${p}/segments`, { body: { name: "beta" } });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/g`, { body: { addSegments: [segment.id] } });
    since = performance.now();
    await propagated(delays, "flag g conditional", [B, C], "false", (i) => checkState(i.url, p, "g", ["carol"]), since);
    await must(200, B.url, "PATCH", `/projects/${p}/segments/${segment.id}`, {
      body: { addActors: ["carol", "dave"] },
    });
    since = performance.now();
    await propagated(
      delays,
      "segment addActors (on B)",
      [A, C],
      "true",
      (i) => checkState(i.url, p, "g", ["carol"]),
      since,
    );
    assert.equal(await checkState(B.url, p, "g", ["carol"]), "true", "the writing instance answers at once");
    await must(200, B.url, "PATCH", `/projects/${p}/segments/${segment.id}`, { body: { removeActors: ["carol"] } });
    since = performance.now();
    await propagated(
      delays,
      "segment removeActors (on B)",
      [A, C],
      "false",
      (i) => checkState(i.url, p, "g", ["carol"]),
      since,
    );
    for (const i of all())
      assert.equal(await checkState(i.url, p, "g", ["dave"]), "true", `dave still a member on ${i.name}`);
    await must(204, B.url, "DELETE", `/projects/${p}/segments/${segment.id}`);
    since = performance.now();
    await propagated(
      delays,
      "segment delete (on B)",
      [A, C],
      "false",
      (i) => checkState(i.url, p, "g", ["dave"]),
      since,
    );

    // Percentages: an actor inside the 50 % rollout but outside the 25 % one.
    const x = Array.from({ length: 1000 }, (_, n) => `user-${n}`).find(
      (a) => inActorRollout("g", a, 50) && !inActorRollout("g", a, 25),
    );
    assert.ok(x, "some actor falls between 25 % and 50 %");
    await must(200, A.url, "PATCH", `/projects/${p}/flags/g`, { body: { percentageActors: 50 } });
    since = performance.now();
    await propagated(delays, "percentageActors 50", [B, C], "true", (i) => checkState(i.url, p, "g", [x]), since);
    await must(200, A.url, "PATCH", `/projects/${p}/flags/g`, { body: { percentageActors: 25 } });
    since = performance.now();
    await propagated(delays, "percentageActors 25", [B, C], "false", (i) => checkState(i.url, p, "g", [x]), since);
    await must(200, A.url, "PATCH", `/projects/${p}/flags/g`, { body: { percentageCalls: 100 } });
    since = performance.now();
    await propagated(delays, "percentageCalls 100", [B, C], "true", (i) => checkState(i.url, p, "g"), since);
    await must(200, A.url, "PATCH", `/projects/${p}/flags/g`, { body: { percentageCalls: 0 } });
    since = performance.now();
    await propagated(delays, "percentageCalls 0", [B, C], "false", (i) => checkState(i.url, p, "g"), since);

    // Flag delete → 404 everywhere; a new flag of the same name starts clean everywhere.
    await must(200, A.url, "PATCH", `/projects/${p}/flags/f`, { body: { addActors: ["alice"] } });
    since = performance.now();
    await propagated(delays, "addActors", [B, C], "true", (i) => checkState(i.url, p, "f", ["alice"]), since);
    await must(204, A.url, "DELETE", `/projects/${p}/flags/f`);
    since = performance.now();
    await propagated(
      delays,
      "flag delete",
      [B, C],
      "404 flag_not_found",
      (i) => checkState(i.url, p, "f", ["alice"]),
      since,
    );
    await must(201, A.url, "POST", `/projects/${p}/flags/f`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/f`, { body: { status: "conditional", addActors: ["bob"] } });
    since = performance.now();
    await propagated(delays, "flag re-create", [B, C], "true", (i) => checkState(i.url, p, "f", ["bob"]), since);
    for (const i of all()) assert.equal(await checkState(i.url, p, "f", ["alice"]), "false", `alice gone on ${i.name}`);

    delays.report(t);
  });

  test("project delete reaches the others: 404 for admins, its keys dead; a re-created project starts clean", async (t) => {
    const delays = new Delays();
    const p = newProjectId();
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "doomed" } });
    await must(201, A.url, "POST", `/projects/${p}/flags/on`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/on`, { body: { status: "enabled" } });
    const { key } = await must(201, A.url, "POST", `/projects/${p}/keys`, { body: { role: "check", name: "k" } });
    let since = performance.now();
    await propagated(delays, "key + flag", [B, C], "true", (i) => checkState(i.url, p, "on", [], key), since);

    await must(204, A.url, "DELETE", `/projects/${p}`);
    since = performance.now();
    await propagated(
      delays,
      "project delete (admin check)",
      [B, C],
      "404 project_not_found",
      (i) => checkState(i.url, p, "on"),
      since,
    );
    await propagated(
      delays,
      "project delete (its key)",
      [B, C],
      "401 unauthorized",
      (i) => checkState(i.url, p, "on", [], key),
      since,
    );
    for (const i of all()) {
      expectProblem(await call(i.url, "GET", `/projects/${p}`), 404, "project_not_found");
      expectProblem(await call(i.url, "GET", `/projects/${p}/flags/on/check`, { key }), 401, "unauthorized");
    }

    // The same id again: a new, empty project, on every instance; the old key stays dead.
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "reborn" } });
    await must(201, A.url, "POST", `/projects/${p}/flags/on`, { body: {} });
    since = performance.now();
    await propagated(delays, "project re-create", [B, C], "false", (i) => checkState(i.url, p, "on"), since);
    for (const i of all())
      assert.equal(await checkState(i.url, p, "on", [], key), "401 unauthorized", `old key on ${i.name}`);
    delays.report(t);
  });

  test("a key created on A works on B and C; revoked on A it stops on B and C within 2 s", async (t) => {
    const delays = new Delays();
    const p = newProjectId();
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "keys" } });
    await must(201, A.url, "POST", `/projects/${p}/flags/on`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/on`, { body: { status: "enabled" } });
    const created = await must(201, A.url, "POST", `/projects/${p}/keys`, { body: { role: "check", name: "k" } });
    let since = performance.now();
    await propagated(delays, "key create", [B, C], "true", (i) => checkState(i.url, p, "on", [], created.key), since);
    const write = await must(201, A.url, "POST", `/projects/${p}/keys`, { body: { role: "write", name: "w" } });
    since = performance.now();
    await propagated(delays, "write key create", [C], "true", (i) => checkState(i.url, p, "on", [], write.key), since);
    // The write key created on A writes on C.
    await must(201, C.url, "POST", `/projects/${p}/flags/by-c`, { body: {}, key: write.key });

    await must(204, A.url, "DELETE", `/projects/${p}/keys/${created.id}`);
    assert.equal(await checkState(A.url, p, "on", [], created.key), "401 unauthorized", "revoked at once on A");
    since = performance.now();
    await propagated(
      delays,
      "key revoke",
      [B, C],
      "401 unauthorized",
      (i) => checkState(i.url, p, "on", [], created.key),
      since,
    );
    // The other key is untouched.
    for (const i of all())
      assert.equal(await checkState(i.url, p, "on", [], write.key), "true", `write key on ${i.name}`);
    delays.report(t);
  });

  test("no lost updates: 50 concurrent PATCHes over three instances each add an actor to one flag", async (t) => {
    const p = newProjectId();
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "race" } });
    await must(201, A.url, "POST", `/projects/${p}/flags/race`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/race`, { body: { status: "conditional" } });
    await timeUntil("flag on C", "false", () => checkState(C.url, p, "race", ["a0"]), PROPAGATION_MS);
    await timeUntil("flag on B", "false", () => checkState(B.url, p, "race", ["a0"]), PROPAGATION_MS);

    const actors = Array.from({ length: 50 }, (_, n) => `a${n}`);
    const started = performance.now();
    const answers = await Promise.all(
      actors.map((a, n) =>
        call(all()[n % 3]!.url, "PATCH", `/projects/${p}/flags/race`, { body: { addActors: [a] }, timeoutMs: 20_000 }),
      ),
    );
    t.diagnostic(`50 concurrent PATCHes over 3 instances took ${(performance.now() - started).toFixed(0)} ms`);
    assert.deepEqual(
      answers.map((r, n) => `${actors[n]} ${r.status}`).filter((s) => !s.endsWith(" 200")),
      [],
      "every PATCH answers 200",
    );
    const since = performance.now();
    let slowest = 0;
    await Promise.all(
      all().map(async (i) => {
        for (const a of actors) {
          const ms = await timeUntil(
            `${a} on ${i.name}`,
            "true",
            () => checkState(i.url, p, "race", [a]),
            PROPAGATION_MS,
            since,
          );
          slowest = Math.max(slowest, ms);
        }
      }),
    );
    t.diagnostic(
      `all 50 actors verified attached on every instance (150 checks) by ${slowest.toFixed(1)} ms after the last answer`,
    );
    for (const [n, a] of actors.entries()) {
      const res = await call(all()[n % 3]!.url, "GET", `/projects/${p}/actors/${a}`);
      assert.equal(res.status, 200, `actor ${a} exists: ${res.text}`);
    }
  });

  test("no lost updates: 50 concurrent segment addActors over three instances", async (t) => {
    const p = newProjectId();
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "segrace" } });
    const segment = await must(201, B.url, "POST", `/projects/${p}/segments`, { body: { name: "crowd" } });
    await must(201, A.url, "POST", `/projects/${p}/flags/crowd`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/crowd`, {
      body: { status: "conditional", addSegments: [segment.id] },
    });
    const members = Array.from({ length: 50 }, (_, n) => `m${n}`);
    const answers = await Promise.all(
      members.map((m, n) =>
        call(all()[n % 3]!.url, "PATCH", `/projects/${p}/segments/${segment.id}`, {
          body: { addActors: [m] },
          timeoutMs: 20_000,
        }),
      ),
    );
    assert.deepEqual(
      answers.map((r, n) => `${members[n]} ${r.status}`).filter((s) => !s.endsWith(" 200")),
      [],
      "every segment PATCH answers 200",
    );
    const since = performance.now();
    let slowest = 0;
    await Promise.all(
      all().map(async (i) => {
        for (const m of members) {
          const ms = await timeUntil(
            `${m} on ${i.name}`,
            "true",
            () => checkState(i.url, p, "crowd", [m]),
            PROPAGATION_MS,
            since,
          );
          slowest = Math.max(slowest, ms);
        }
      }),
    );
    t.diagnostic(
      `all 50 members verified on every instance (150 checks) by ${slowest.toFixed(1)} ms after the last answer`,
    );
    for (const [n, m] of members.entries()) {
      const page = await must(200, all()[n % 3]!.url, "GET", `/projects/${p}/actors/${m}/segments`);
      assert.deepEqual(
        page.data.map((s: { id: string }) => s.id),
        [segment.id],
        `${m} is a member of the segment`,
      );
    }
    const stored = await must(200, C.url, "GET", `/projects/${p}/segments/${segment.id}`);
    assert.equal(stored.latestActors.length, 10);
  });

  test("20 concurrent creates of one flag name over three instances: exactly one 201, the rest 409", async () => {
    const p = newProjectId();
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "create race" } });
    await timeUntil("project on B", "404 flag_not_found", () => checkState(B.url, p, "dup"), PROPAGATION_MS);
    await timeUntil("project on C", "404 flag_not_found", () => checkState(C.url, p, "dup"), PROPAGATION_MS);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        call(all()[n % 3]!.url, "POST", `/projects/${p}/flags/dup`, {
          body: { description: `#${n}` },
          timeoutMs: 20_000,
        }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 201).length, 1, `exactly one 201: ${statuses.join(",")}`);
    assert.equal(statuses.filter((s) => s === 409).length, 19, `the rest 409: ${statuses.join(",")}`);
    for (const res of answers.filter((r) => r.status === 409)) expectProblem(res, 409, "flag_exists");
    const winner = answers.find((r) => r.status === 201)!;
    for (const i of all()) {
      await timeUntil(`flag on ${i.name}`, "false", () => checkState(i.url, p, "dup"), PROPAGATION_MS);
      const flag = await must(200, i.url, "GET", `/projects/${p}/flags/dup`);
      assert.equal(flag.id, winner.body.id);
      assert.equal(flag.description, winner.body.description);
    }
    const list = await must(200, A.url, "GET", `/projects/${p}/flags`);
    assert.equal(list.data.length, 1);
  });
});

describe("replicas: repair after lost notifications (an instance cut off from PostgreSQL)", {
  skip: SKIP,
  timeout: 180_000,
}, () => {
  let database: FreshDatabase | undefined;
  const proxies: TcpProxy[] = [];
  let A: Instance;
  let B: Instance;
  let C: Instance;
  let proxyB: TcpProxy;
  const p = newProjectId();

  before(async () => {
    database = await freshDatabase("postgres");
    proxyB = new TcpProxy("127.0.0.1", Number(new URL(database.url).port || 5432));
    proxies.push(proxyB);
    await proxyB.start();
    const env = { FEED_POLL_INTERVAL_MS: "200" };
    [A, B, C] = await Promise.all([
      startInstance("A", database.url, env),
      startInstance("B", throughProxy(database.url, proxyB), env),
      startInstance("C", database.url, env),
    ]);
    await must(201, A.url, "POST", "/projects", { body: { id: p, name: "repair" } });
    for (const flag of ["r1", "r2", "r3"]) {
      await must(201, A.url, "POST", `/projects/${p}/flags/${flag}`, { body: {} });
    }
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r2`, { body: { status: "conditional" } });
    for (const i of [B, C]) {
      await timeUntil(`setup on ${i.name}`, "false", () => checkState(i.url, p, "r3"), PROPAGATION_MS);
      await timeUntil(`setup on ${i.name}`, "false", () => checkState(i.url, p, "r2", ["x1"]), PROPAGATION_MS);
    }
  });

  after(async () => {
    for (const proxy of proxies) proxy.restore();
    await stopAll([...started]);
    for (const proxy of proxies) await proxy.stop();
    await database?.drop();
  });

  /** Fails, with the tail of its standard error, when an instance's process has exited. */
  function assertAlive(instance: Instance) {
    const child = instance.proc.child;
    assert.ok(
      child.exitCode === null && child.signalCode === null,
      `${instance.name} exited (${child.exitCode ?? child.signalCode}): ${instance.proc.describe()}`,
    );
  }

  /**
   * Cuts a proxy and waits until the instance behind it reports the database unreachable. (Its notification
   * listener lost its connection with the cut: the proxy dropped it, and refuses new ones until the restore.)
   */
  async function cutOff(instance: Instance, proxy: TcpProxy) {
    proxy.cut();
    await waitFor(
      `${instance.name} /readyz to answer 503 during the cut`,
      () => call(instance.url, "GET", "/readyz", { key: null, timeoutMs: 5000 }),
      { until: (res) => res.status === 503, timeoutMs: 10_000 },
    );
  }

  test("B cut off while A writes; after restore (and one more write) B reflects every write within 3 s", async (t) => {
    await cutOff(B, proxyB);
    // Several writes on A while B hears nothing.
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r1`, { body: { status: "enabled" } });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r2`, { body: { addActors: ["x1", "x2"] } });
    const segment = await must(201, A.url, "POST", `/projects/${p}/segments`, { body: { name: "s" } });
    await must(200, A.url, "PATCH", `/projects/${p}/segments/${segment.id}`, { body: { addActors: ["s1"] } });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r2`, {
      body: { addSegments: [segment.id], removeActors: ["x2"] },
    });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r2`, { body: { addActors: ["x3"] } });
    await must(201, A.url, "POST", `/projects/${p}/flags/r4`, { body: {} });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r4`, { body: { status: "enabled" } });
    // C, still connected, has them; B still answers checks from memory (its old state).
    await timeUntil("r4 on C", "true", () => checkState(C.url, p, "r4"), PROPAGATION_MS);
    assert.equal(await checkState(B.url, p, "r1"), "false", "B answers from its (stale) memory while cut off");
    assert.equal(await checkState(B.url, p, "r4"), "404 flag_not_found", "B cannot have heard of r4");
    proxyB.restore();
    assertAlive(B);
    const since = performance.now();
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r2`, { body: { addActors: ["x4"] } });
    const expectations: [string, string[], string][] = [
      ["r1", [], "true"],
      ["r2", ["x1"], "true"],
      ["r2", ["x2"], "false"],
      ["r2", ["x3"], "true"],
      ["r2", ["x4"], "true"],
      ["r2", ["s1"], "true"],
      ["r3", [], "false"],
      ["r4", [], "true"],
    ];
    let slowest = 0;
    for (const [flag, actors, expected] of expectations) {
      const ms = await timeUntil(
        `B: ${flag} ${actors.join(",")}`,
        expected,
        () => checkState(B.url, p, flag, actors),
        REPAIR_MS,
        since,
      );
      slowest = Math.max(slowest, ms);
    }
    t.diagnostic(`B converged ${slowest.toFixed(1)} ms after the restore`);
  });

  test("B cut off while A writes; restored with no further write, B converges through the periodic reconcile", async (t) => {
    await cutOff(B, proxyB);
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r3`, { body: { status: "enabled" } });
    await must(200, A.url, "PATCH", `/projects/${p}/flags/r2`, { body: { addActors: ["y1"], removeActors: ["x1"] } });
    await must(204, A.url, "DELETE", `/projects/${p}/flags/r4`);
    await timeUntil("r4 gone on C", "404 flag_not_found", () => checkState(C.url, p, "r4"), PROPAGATION_MS);
    assert.equal(await checkState(B.url, p, "r4"), "true", "B still has r4 in memory while cut off");
    proxyB.restore();
    assertAlive(B);
    const since = performance.now();
    const expectations: [string, string[], string][] = [
      ["r3", [], "true"],
      ["r2", ["y1"], "true"],
      ["r2", ["x1"], "false"],
      ["r4", [], "404 flag_not_found"],
    ];
    let slowest = 0;
    for (const [flag, actors, expected] of expectations) {
      const ms = await timeUntil(
        `B: ${flag} ${actors.join(",")}`,
        expected,
        () => checkState(B.url, p, flag, actors),
        REPAIR_MS,
        since,
      );
      slowest = Math.max(slowest, ms);
    }
    t.diagnostic(`B converged ${slowest.toFixed(1)} ms after the restore, with no further write`);
  });

  test("without the periodic reconcile (60 s), the reconnect of the listener alone repairs a replica", async (t) => {
    assert.ok(database);
    const proxyD = new TcpProxy("127.0.0.1", Number(new URL(database.url).port || 5432));
    proxies.push(proxyD);
    await proxyD.start();
    const D = await startInstance("D", throughProxy(database.url, proxyD), { FEED_POLL_INTERVAL_MS: "60000" });
    try {
      await must(201, A.url, "POST", `/projects/${p}/flags/d1`, { body: {} });
      await timeUntil("d1 on D", "false", () => checkState(D.url, p, "d1"), PROPAGATION_MS);
      await cutOff(D, proxyD);
      await must(200, A.url, "PATCH", `/projects/${p}/flags/d1`, {
        body: { status: "conditional", addActors: ["z1"] },
      });
      await must(200, A.url, "PATCH", `/projects/${p}/flags/r1`, { body: { status: "disabled" } });
      assert.equal(await checkState(D.url, p, "r1"), "true", "D still has r1 enabled in memory while cut off");
      proxyD.restore();
      assertAlive(D);
      const since = performance.now();
      // pg-listen retries with backoff (up to 5 s between attempts); after it reconnects the feed reconciles.
      const a = await timeUntil("D: d1 z1", "true", () => checkState(D.url, p, "d1", ["z1"]), 8000, since);
      const b = await timeUntil("D: r1", "false", () => checkState(D.url, p, "r1"), 8000, since);
      t.diagnostic(`D (no periodic reconcile) converged ${Math.max(a, b).toFixed(1)} ms after the restore`);
    } finally {
      proxyD.restore();
      await stopAll([D.proc]);
    }
  });
});
