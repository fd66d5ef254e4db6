import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { crc32 } from "node:zlib";
import {
  type ApiResponse,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  freshDatabase,
  ManualClock,
  startServer,
  type TestServer,
  withDeadline,
} from "@flagstaff/test-harness";
import { connectClient } from "./helpers/postgres-clients.js";

// Evaluation (decisions.md §6) over real HTTP: the check operation, its query encoding and limits,
// latestCheckedAt, and the two lists that depend on evaluation (flags for an actor, flags for a segment).

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The actor bucket computed independently of the server and of @flagstaff/core: zlib's CRC-32. */
const bucket = (flagName: string, actorId: string): number =>
  crc32(Buffer.from(`${flagName}:${actorId}`, "utf8")) % 100000;
const inRollout = (flagName: string, actorId: string, percentage: number): boolean =>
  bucket(flagName, actorId) < percentage * 1000;

/** actorIds repeated: actorIds=a&actorIds=b. */
const repeated = (ids: readonly string[]): string => ids.map((id) => `actorIds=${encodeURIComponent(id)}`).join("&");
/** actorIds bracketed, brackets percent-encoded: actorIds%5B%5D=a&actorIds%5B%5D=b. */
const bracketed = (ids: readonly string[]): string =>
  ids.map((id) => `actorIds%5B%5D=${encodeURIComponent(id)}`).join("&");

/** A small seeded PRNG (mulberry32): uniform in [0, 1), reproducible run to run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `work` over `items`, at most `limit` at a time, answers in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await work(items[i] as T);
    }
  });
  await Promise.all(runners);
  return out;
}

const checkPath = (project: string, flag: string, query = ""): string =>
  `/projects/${project}/flags/${encodeURIComponent(flag)}/check${query === "" ? "" : `?${query}`}`;

/** One check; asserts 200 with exactly {"enabled": boolean} as JSON and answers the boolean. */
async function check(server: TestServer, project: string, flag: string, query = "", key?: string): Promise<boolean> {
  const res = await server.request("GET", checkPath(project, flag, query), key === undefined ? {} : { key });
  assert.equal(res.status, 200, `check ${flag}?${query}: ${res.status} ${res.text}`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(Object.keys(res.body).length, 1, `check body has only "enabled": ${res.text}`);
  assert.equal(typeof res.body.enabled, "boolean", `check body: ${res.text}`);
  return res.body.enabled as boolean;
}

async function createFlag(server: TestServer, project: string, name: string, patch?: object): Promise<any> {
  const res = await server.request("POST", `/projects/${project}/flags/${encodeURIComponent(name)}`, { body: {} });
  assert.equal(res.status, 201, `create flag ${name}: ${res.text}`);
  return patch === undefined ? res.body : patchFlag(server, project, name, patch);
}

async function patchFlag(server: TestServer, project: string, name: string, body: object): Promise<any> {
  const res = await server.request("PATCH", `/projects/${project}/flags/${encodeURIComponent(name)}`, { body });
  assert.equal(res.status, 200, `patch flag ${name} ${JSON.stringify(body)}: ${res.text}`);
  return res.body;
}

async function createSegment(server: TestServer, project: string, name: string, members: string[] = []) {
  const res = await server.request("POST", `/projects/${project}/segments`, { body: { name } });
  assert.equal(res.status, 201, `create segment ${name}: ${res.text}`);
  const id = res.body.id as string;
  if (members.length > 0) await patchSegment(server, project, id, { addActors: members });
  return id;
}

async function patchSegment(server: TestServer, project: string, id: string, body: object): Promise<void> {
  const res = await server.request("PATCH", `/projects/${project}/segments/${id}`, { body });
  assert.equal(res.status, 200, `patch segment ${JSON.stringify(body)}: ${res.text}`);
}

const names = (res: ApiResponse): string[] => (res.body.data as { name: string }[]).map((f) => f.name);

for (const dialect of DIALECTS) {
  describe(`evaluation [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const clock = new ManualClock();
    // The server's random source: tests choose what it returns and see every draw it takes.
    let drawFrom: () => number = () => 0.999999;
    let draws: number[] = [];
    before(async () => {
      server = await startServer({
        dialect,
        clock,
        random: () => {
          const value = drawFrom();
          draws.push(value);
          return value;
        },
      });
      project = await createProject(server);
    });
    after(() => server.close());

    test("status: disabled → false, enabled → true with and without actorIds, conditional with nothing → false", async () => {
      await createFlag(server, project, "status-flag");
      assert.equal(await check(server, project, "status-flag"), false, "a new flag is disabled");
      assert.equal(await check(server, project, "status-flag", repeated(["u1"])), false);

      await patchFlag(server, project, "status-flag", { status: "enabled" });
      assert.equal(await check(server, project, "status-flag"), true);
      assert.equal(await check(server, project, "status-flag", repeated(["u1"])), true);
      assert.equal(await check(server, project, "status-flag", repeated(["u1", "u2"])), true);

      await patchFlag(server, project, "status-flag", { status: "conditional" });
      assert.equal(await check(server, project, "status-flag"), false);
      assert.equal(await check(server, project, "status-flag", repeated(["u1"])), false);
      assert.equal(await check(server, project, "status-flag", repeated(["u1", "u2"])), false);

      // Disabled wins over everything that would turn a conditional flag on.
      const seg = await createSegment(server, project, "status-seg", ["u3"]);
      await patchFlag(server, project, "status-flag", {
        status: "disabled",
        addActors: ["u1"],
        addSegments: [seg],
        percentageActors: 100,
        percentageCalls: 100,
      });
      drawFrom = () => 0;
      try {
        assert.equal(await check(server, project, "status-flag"), false);
        assert.equal(await check(server, project, "status-flag", repeated(["u1", "u3", "u9"])), false);
      } finally {
        drawFrom = () => 0.999999;
      }
    });

    test("rule 1: an actor attached with addActors turns a conditional flag on for that actor only", async () => {
      await createFlag(server, project, "rule1", { status: "conditional", addActors: ["alice"] });
      assert.equal(await check(server, project, "rule1", repeated(["alice"])), true);
      assert.equal(await check(server, project, "rule1", repeated(["bob"])), false);
      assert.equal(await check(server, project, "rule1", repeated(["bob", "alice"])), true);
      assert.equal(await check(server, project, "rule1", repeated(["Alice"])), false, "ids are case-sensitive");
      await patchFlag(server, project, "rule1", { removeActors: ["alice"] });
      assert.equal(await check(server, project, "rule1", repeated(["alice"])), false, "removed actor is off");
    });

    test("rule 2: a member of an attached segment is on; membership and attachment changes take effect", async () => {
      const attached = await createSegment(server, project, "rule2-attached", ["carol", "dave"]);
      await createSegment(server, project, "rule2-other", ["erin"]);
      await createFlag(server, project, "rule2", { status: "conditional", addSegments: [attached] });

      assert.equal(await check(server, project, "rule2", repeated(["carol"])), true);
      assert.equal(await check(server, project, "rule2", repeated(["dave"])), true);
      assert.equal(
        await check(server, project, "rule2", repeated(["erin"])),
        false,
        "member of a segment not attached",
      );
      assert.equal(await check(server, project, "rule2", repeated(["frank"])), false);

      await patchSegment(server, project, attached, { addActors: ["erin"] });
      assert.equal(await check(server, project, "rule2", repeated(["erin"])), true, "added to the attached segment");

      await patchSegment(server, project, attached, { removeActors: ["carol"] });
      assert.equal(await check(server, project, "rule2", repeated(["carol"])), false, "removed from the segment");
      assert.equal(await check(server, project, "rule2", repeated(["dave"])), true);

      await patchFlag(server, project, "rule2", { removeSegments: [attached] });
      assert.equal(await check(server, project, "rule2", repeated(["dave"])), false, "segment detached");

      await patchFlag(server, project, "rule2", { addSegments: [attached] });
      assert.equal(await check(server, project, "rule2", repeated(["dave"])), true, "segment attached again");

      const del = await server.request("DELETE", `/projects/${project}/segments/${attached}`);
      assert.equal(del.status, 204);
      assert.equal(await check(server, project, "rule2", repeated(["dave"])), false, "segment deleted");
      assert.equal(await check(server, project, "rule2", repeated(["erin"])), false, "segment deleted");
    });

    // ~300 actor ids, ASCII and non-ASCII (so the UTF-8 encoding of the hashed text matters).
    const rolloutActors = [
      ...Array.from({ length: 240 }, (_, i) => `user-${i}`),
      ...Array.from({ length: 20 }, (_, i) => `émile-${i}`),
      ...Array.from({ length: 20 }, (_, i) => `用户${i}`),
      ...Array.from({ length: 20 }, (_, i) => `😀 ${i}@example.com`),
    ];

    test("rule 3: at percentageActors 25 every actor's answer is crc32(flagName:actorId) % 100000 < 25000", async () => {
      const flag = "rollout:checkout.v2";
      await createFlag(server, project, flag, { status: "conditional", percentageActors: 25 });
      const expected = rolloutActors.map((id) => inRollout(flag, id, 25));
      const on = expected.filter(Boolean).length;
      assert.ok(on > 30 && on < 120, `the sample holds both answers (${on} of ${rolloutActors.length} on)`);
      const answers = await mapLimit(rolloutActors, 16, (id) => check(server, project, flag, repeated([id])));
      const wrong = rolloutActors.filter((_id, i) => answers[i] !== expected[i]);
      assert.deepEqual(wrong, [], "actors answered against the bucket formula");
      // The same actor gets the same answer on every call.
      const again = await mapLimit(rolloutActors.slice(0, 50), 16, (id) =>
        check(server, project, flag, repeated([id])),
      );
      assert.deepEqual(again, expected.slice(0, 50));
    });

    test("rule 3: the rollout is monotone: every actor on at 10 % stays on at 25, 50, 75 and 100 %", async () => {
      const flag = "monotone";
      await createFlag(server, project, flag, { status: "conditional" });
      let previous: Set<string> | undefined;
      for (const percentage of [0, 10, 25, 50, 75, 100]) {
        await patchFlag(server, project, flag, { percentageActors: percentage });
        const answers = await mapLimit(rolloutActors, 16, (id) => check(server, project, flag, repeated([id])));
        const onNow = new Set(rolloutActors.filter((_, i) => answers[i]));
        const expected = rolloutActors.filter((id) => inRollout(flag, id, percentage));
        assert.deepEqual([...onNow], expected, `answers at ${percentage} %`);
        if (previous) {
          const lost = [...previous].filter((id) => !onNow.has(id));
          assert.deepEqual(lost, [], `actors on before and off at ${percentage} %`);
        }
        if (percentage === 0) assert.equal(onNow.size, 0);
        if (percentage === 100) assert.equal(onNow.size, rolloutActors.length);
        previous = onNow;
      }
    });

    test("percentages take effect only while conditional: 100 % while disabled → false; enabled → true", async () => {
      const flag = "pct-status";
      await createFlag(server, project, flag, { percentageActors: 100, percentageCalls: 100 });
      drawFrom = () => 0;
      try {
        assert.equal(await check(server, project, flag, repeated(["x"])), false, "disabled at 100 %");
        assert.equal(await check(server, project, flag), false, "disabled at 100 % of calls");
        await patchFlag(server, project, flag, { status: "enabled", percentageActors: 0, percentageCalls: 0 });
        assert.equal(await check(server, project, flag, repeated(["x"])), true, "enabled at 0 %");
        assert.equal(await check(server, project, flag), true);
        await patchFlag(server, project, flag, { status: "conditional" });
        assert.equal(await check(server, project, flag, repeated(["x"])), false, "conditional at 0 %");
        await patchFlag(server, project, flag, { percentageActors: 100 });
        assert.equal(await check(server, project, flag, repeated(["x"])), true, "conditional at 100 % of actors");
      } finally {
        drawFrom = () => 0.999999;
      }
    });

    test("rule 4: a draw below percentageCalls/100 turns the call on, at or above it does not; one draw per call", async () => {
      const flag = "calls";
      await createFlag(server, project, flag, { status: "conditional", percentageCalls: 50 });
      const at = async (value: number, query = "") => {
        drawFrom = () => value;
        draws = [];
        const enabled = await check(server, project, flag, query);
        assert.deepEqual(draws, [value], "exactly one draw per request");
        return enabled;
      };
      try {
        assert.equal(await at(0.4999), true);
        assert.equal(await at(0.5), false);
        assert.equal(await at(0), true);
        assert.equal(await at(0.999999), false);
        assert.equal(await at(0.4999, repeated(["n1", "n2", "n3"])), true, "actors that match nothing");
        assert.equal(await at(0.5, repeated(["n1", "n2", "n3"])), false, "actors that match nothing");
        await patchFlag(server, project, flag, { percentageCalls: 25 });
        assert.equal(await at(0.2499), true);
        assert.equal(await at(0.25), false);
        await patchFlag(server, project, flag, { percentageCalls: 1 });
        assert.equal(await at(0.0099), true);
        assert.equal(await at(0.01), false);
        await patchFlag(server, project, flag, { percentageCalls: 100 });
        assert.equal(await at(0.999999), true);
        await patchFlag(server, project, flag, { percentageCalls: 0 });
        drawFrom = () => 0;
        assert.equal(await check(server, project, flag), false, "0 % of calls is never on");
      } finally {
        drawFrom = () => 0.999999;
      }
    });

    test("rule 4: over 4,000 calls at 25 % with a seeded PRNG the share is within 5 sigma", async () => {
      const flag = "calls-share";
      await createFlag(server, project, flag, { status: "conditional", percentageCalls: 25 });
      const n = 4000;
      // Binomial(n = 4000, p = 0.25): mean 1000, sigma = sqrt(4000 · 0.25 · 0.75) = sqrt(750) ≈ 27.39.
      // 5 sigma ≈ 136.9, so the count of enabled answers must lie in [864, 1136].
      drawFrom = mulberry32(20261122);
      draws = [];
      try {
        const answers = await mapLimit(
          Array.from({ length: n }, (_, i) => i),
          32,
          () => check(server, project, flag),
        );
        const on = answers.filter(Boolean).length;
        assert.ok(on >= 864 && on <= 1136, `${on} of ${n} on, outside [864, 1136]`);
        // Each request drew once, and the answer is exactly "draw < 0.25".
        assert.equal(draws.length, n);
        assert.equal(on, draws.filter((d) => d < 0.25).length);
      } finally {
        drawFrom = () => 0.999999;
      }
    });

    test("without actorIds only rule 4 applies: attached actors, segments and actor rollout do not count", async () => {
      const seg = await createSegment(server, project, "no-actors-seg", ["zed"]);
      const flag = "no-actors";
      await createFlag(server, project, flag, {
        status: "conditional",
        addActors: ["zed"],
        addSegments: [seg],
        percentageActors: 100,
      });
      drawFrom = () => 0;
      try {
        assert.equal(await check(server, project, flag), false, "percentageCalls 0, no actorIds");
        assert.equal(await check(server, project, flag, repeated(["zed"])), true, "the same flag with actorIds");
        await patchFlag(server, project, flag, { percentageCalls: 50 });
        drawFrom = () => 0.7;
        assert.equal(await check(server, project, flag), false, "draw 0.7 at 50 %");
        drawFrom = () => 0.3;
        assert.equal(await check(server, project, flag), true, "draw 0.3 at 50 %");
      } finally {
        drawFrom = () => 0.999999;
      }
    });

    test("any-of over actorIds, repeated and bracketed (raw and percent-encoded brackets)", async () => {
      const flag = "any-of";
      await createFlag(server, project, flag, { status: "conditional", addActors: ["alpha"] });
      assert.equal(await check(server, project, flag, "actorIds=alpha"), true);
      assert.equal(await check(server, project, flag, "actorIds=zzz&actorIds=alpha"), true);
      assert.equal(await check(server, project, flag, "actorIds=alpha&actorIds=zzz"), true);
      assert.equal(await check(server, project, flag, "actorIds=zzz&actorIds=yyy"), false);
      assert.equal(await check(server, project, flag, "actorIds%5B%5D=alpha"), true);
      assert.equal(await check(server, project, flag, "actorIds%5B%5D=zzz&actorIds%5B%5D=alpha"), true);
      assert.equal(await check(server, project, flag, "actorIds%5B%5D=zzz&actorIds%5B%5D=yyy"), false);
      assert.equal(await check(server, project, flag, "actorIds[]=zzz&actorIds[]=alpha"), true);
      assert.equal(await check(server, project, flag, "actorIds[]=zzz&actorIds[]=yyy"), false);
    });

    test("a comma inside an actorIds value is part of the id", async () => {
      const flag = "comma";
      await createFlag(server, project, flag, { status: "conditional", addActors: ["a,b"] });
      assert.equal(await check(server, project, flag, "actorIds=a,b"), true);
      assert.equal(await check(server, project, flag, "actorIds=a%2Cb"), true);
      assert.equal(await check(server, project, flag, "actorIds%5B%5D=a,b"), true);
      assert.equal(await check(server, project, flag, "actorIds=a"), false);
      assert.equal(await check(server, project, flag, "actorIds=b"), false);
      assert.equal(await check(server, project, flag, "actorIds=a&actorIds=b"), false);
      assert.equal(await check(server, project, flag, "actorIds%5B%5D=a&actorIds%5B%5D=b"), false);
    });

    test("percent-encoded unicode and reserved characters in actorIds round-trip", async () => {
      const flag = "unicode";
      const ids = ["émile", "用户-1", "😀", "tom & jerry=1", "a+b"];
      await createFlag(server, project, flag, { status: "conditional", addActors: ids });
      for (const id of ids) {
        assert.equal(await check(server, project, flag, repeated([id])), true, `repeated ${id}`);
        assert.equal(await check(server, project, flag, bracketed(["nobody", id])), true, `bracketed ${id}`);
      }
      assert.equal(await check(server, project, flag, repeated(["emile"])), false);
      assert.equal(await check(server, project, flag, repeated(["用户-2"])), false);
      assert.equal(await check(server, project, flag, repeated(["tom "])), false);
      assert.equal(await check(server, project, flag, repeated(["a b"])), false);
    });

    test("limits: 100 actorIds are fine, 101 → 400; an empty or invalid id → 400; an unknown parameter → 400", async () => {
      const flag = "limits";
      await createFlag(server, project, flag, { status: "conditional", addActors: ["target"] });
      const hundred = [...Array.from({ length: 99 }, (_, i) => `n${i}`), "target"];
      assert.equal(await check(server, project, flag, repeated(hundred)), true, "the 100th id is considered");
      assert.equal(await check(server, project, flag, bracketed(hundred)), true, "bracketed, 100 ids");
      assert.equal(await check(server, project, flag, repeated(hundred.slice(0, 99))), false);

      const hundredOne = [...Array.from({ length: 100 }, (_, i) => `n${i}`), "target"];
      const bad = async (query: string) =>
        expectProblem(await server.request("GET", checkPath(project, flag, query)), 400, "invalid_request");
      await bad(repeated(hundredOne));
      await bad(bracketed(hundredOne));
      await bad("actorIds=");
      await bad("actorIds=target&actorIds=");
      await bad("actorIds%5B%5D=");
      await bad(repeated(["x".repeat(257)]));
      await bad("actorIds=a%01b");
      await bad("foo=1");
      await bad("actorId=target");
      await bad("actorIds=target&extra=");
      assert.equal(await check(server, project, flag, repeated(["x".repeat(256)])), false, "256 characters is fine");
    });

    test("cache: absent → no-store; cache=N → private, max-age=N (fractions rounded down); out of range → 400", async () => {
      const flag = "cached";
      await createFlag(server, project, flag, { status: "enabled" });
      const header = async (query: string) => {
        const res = await server.request("GET", checkPath(project, flag, query));
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        assert.deepEqual(res.body, { enabled: true });
        return res.headers.get("cache-control");
      };
      assert.equal(await header(""), "no-store");
      assert.equal(await header("actorIds=u1"), "no-store");
      assert.equal(await header("cache=30"), "private, max-age=30");
      assert.equal(await header("cache=30&actorIds=u1"), "private, max-age=30");
      assert.equal(await header("cache=0"), "private, max-age=0");
      assert.equal(await header("cache=2.9"), "private, max-age=2");
      assert.equal(await header("cache=86400"), "private, max-age=86400");
      for (const value of ["86401", "-1", "abc", "", "1e6"]) {
        expectProblem(await server.request("GET", checkPath(project, flag, `cache=${value}`)), 400, "invalid_request");
      }
    });

    test("unknown project → 404 project_not_found; unknown flag → 404 flag_not_found", async () => {
      expectProblem(await server.request("GET", checkPath("no-such-project", "x")), 404, "project_not_found");
      expectProblem(
        await server.request("GET", checkPath("no-such-project", "x", "actorIds=a")),
        404,
        "project_not_found",
      );
      expectProblem(await server.request("GET", checkPath(project, "no-such-flag")), 404, "flag_not_found");
      expectProblem(
        await server.request("GET", checkPath(project, "no-such-flag", "actorIds=a&cache=5")),
        404,
        "flag_not_found",
      );
    });

    test("a check never creates an actor: after checking actorIds=ghost the actor is still unknown", async () => {
      const flag = "ghostly";
      await createFlag(server, project, flag, { status: "conditional", percentageActors: 100, addActors: ["seen"] });
      assert.equal(await check(server, project, flag, repeated(["ghost"])), true, "an unknown actor is evaluated");
      assert.equal(await check(server, project, flag, bracketed(["ghost", "ghost2"])), true);
      await patchFlag(server, project, flag, { status: "enabled" });
      assert.equal(await check(server, project, flag, repeated(["ghost"])), true);
      expectProblem(await server.request("GET", `/projects/${project}/actors/ghost`), 404, "actor_not_found");
      expectProblem(await server.request("GET", `/projects/${project}/actors/ghost2`), 404, "actor_not_found");
      const seen = await server.request("GET", `/projects/${project}/actors/seen`);
      assert.equal(seen.status, 200, "an attached actor exists");
      assert.equal(seen.body.actorId, "seen");
    });

    test("flags for an actor: enabled, or conditional with rule 1, 2 or 3 for that actor; never by percentageCalls", async () => {
      const p = await createProject(server);
      const segBob = await createSegment(server, p, "has-bob", ["bob"]);
      const segCarl = await createSegment(server, p, "has-carl", ["carl"]);
      const nameWhere = (prefix: string, ok: (name: string) => boolean): string => {
        for (let i = 0; ; i++) if (ok(`${prefix}-${i}`)) return `${prefix}-${i}`;
      };
      const r3in = nameWhere("r3-in", (n) => inRollout(n, "bob", 25));
      const r3out = nameWhere("r3-out", (n) => !inRollout(n, "bob", 25));
      await createFlag(server, p, "a-enabled", { status: "enabled" });
      await createFlag(server, p, "b-disabled-all", {
        addActors: ["bob"],
        addSegments: [segBob],
        percentageActors: 100,
        percentageCalls: 100,
      });
      await createFlag(server, p, "c-rule1", { status: "conditional", addActors: ["bob"] });
      await createFlag(server, p, "d-rule2", { status: "conditional", addSegments: [segBob] });
      await createFlag(server, p, "e-calls", { status: "conditional", percentageCalls: 100 });
      await createFlag(server, p, "f-other-seg", { status: "conditional", addSegments: [segCarl] });
      await createFlag(server, p, "g-other-actor", { status: "conditional", addActors: ["carl"] });
      await createFlag(server, p, r3in, { status: "conditional", percentageActors: 25 });
      await createFlag(server, p, r3out, { status: "conditional", percentageActors: 25 });

      const list = async (actor: string) => {
        const res = await server.request("GET", `/projects/${p}/actors/${encodeURIComponent(actor)}/flags`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.pagination, { before: null, after: null });
        return names(res);
      };
      const rollout = (actor: string) => [r3in, r3out].filter((n) => inRollout(n, actor, 25));
      assert.deepEqual(await list("bob"), ["a-enabled", "c-rule1", "d-rule2", r3in].sort());
      assert.deepEqual(await list("carl"), ["a-enabled", "f-other-seg", "g-other-actor", ...rollout("carl")].sort());
      assert.deepEqual(await list("nobody"), ["a-enabled", ...rollout("nobody")].sort(), "an unknown actor");

      // The flag objects listed are the flags as GET answers them.
      const res = await server.request("GET", `/projects/${p}/actors/bob/flags`);
      const got = await server.request("GET", `/projects/${p}/flags/c-rule1`);
      assert.deepEqual(
        (res.body.data as { name: string }[]).find((f) => f.name === "c-rule1"),
        got.body,
      );

      await patchFlag(server, p, "c-rule1", { status: "disabled" });
      await patchSegment(server, p, segBob, { removeActors: ["bob"] });
      assert.deepEqual(await list("bob"), ["a-enabled", r3in].sort(), "after disabling rule 1 and leaving the segment");
      await patchFlag(server, p, r3in, { status: "enabled" });
      await patchFlag(server, p, "a-enabled", { status: "disabled" });
      assert.deepEqual(await list("bob"), [r3in]);

      expectProblem(
        await server.request("GET", `/projects/no-such-project/actors/bob/flags`),
        404,
        "project_not_found",
      );
    });

    test("flags for a segment: enabled, or conditional with that segment attached; unknown segment → 404", async () => {
      const p = await createProject(server);
      const s = await createSegment(server, p, "seg-s", ["sam"]);
      const t = await createSegment(server, p, "seg-t", ["tia"]);
      const empty = await createSegment(server, p, "seg-empty");
      await createFlag(server, p, "e-enabled", { status: "enabled" });
      await createFlag(server, p, "e-disabled-with-s", { addSegments: [s] });
      await createFlag(server, p, "e-cond-s", { status: "conditional", addSegments: [s] });
      await createFlag(server, p, "e-cond-t", { status: "conditional", addSegments: [t] });
      await createFlag(server, p, "e-cond-member", {
        status: "conditional",
        addActors: ["sam"],
        percentageActors: 100,
        percentageCalls: 100,
      });
      const list = async (segment: string) => {
        const res = await server.request("GET", `/projects/${p}/segments/${segment}/flags`);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.pagination, { before: null, after: null });
        return names(res);
      };
      assert.deepEqual(await list(s), ["e-cond-s", "e-enabled"]);
      assert.deepEqual(await list(t), ["e-cond-t", "e-enabled"]);
      assert.deepEqual(await list(empty), ["e-enabled"]);

      await patchFlag(server, p, "e-cond-s", { removeSegments: [s] });
      await patchFlag(server, p, "e-disabled-with-s", { status: "conditional" });
      assert.deepEqual(await list(s), ["e-disabled-with-s", "e-enabled"]);

      expectProblem(
        await server.request("GET", `/projects/${p}/segments/seg_doesnotexist/flags`),
        404,
        "segment_not_found",
      );
      expectProblem(
        await server.request("GET", `/projects/no-such-project/segments/${s}/flags`),
        404,
        "project_not_found",
      );
    });

    test("checks do no database I/O: with the database closed they answer, while reading a flag fails", async () => {
      const database = await freshDatabase(dialect);
      const own = await startServer({ dialect, database, random: () => 0.999999 });
      try {
        const p = await createProject(own);
        const { key } = await createKey(own, p, "check");
        const seg = await createSegment(own, p, "closed-seg", ["member"]);
        await createFlag(own, p, "on", { status: "enabled" });
        await createFlag(own, p, "off", { addActors: ["vip"] });
        await createFlag(own, p, "cond", { status: "conditional", addActors: ["vip"], addSegments: [seg] });
        await createFlag(own, p, "everyone", { status: "conditional", percentageActors: 100 });
        const expected: [string, string, boolean][] = [
          ["on", "", true],
          ["on", "actorIds=x", true],
          ["off", "actorIds=vip", false],
          ["cond", "actorIds=vip", true],
          ["cond", "actorIds=member", true],
          ["cond", "actorIds=stranger", false],
          ["cond", "", false],
          ["everyone", "actorIds=stranger", true],
        ];
        for (const [flag, query, want] of expected) assert.equal(await check(own, p, flag, query), want);

        await own.database.close();

        for (const [flag, query, want] of expected) {
          assert.equal(await check(own, p, flag, query), want, `${flag}?${query} with the database closed`);
          assert.equal(await check(own, p, flag, query, key), want, `${flag}?${query} with a check key`);
        }
        const cached = await own.request("GET", checkPath(p, "on", "cache=10"));
        assert.equal(cached.status, 200);
        assert.equal(cached.headers.get("cache-control"), "private, max-age=10");
        expectProblem(await own.request("GET", checkPath(p, "nope")), 404, "flag_not_found");

        const read = await own.request("GET", `/projects/${p}/flags/on`);
        assert.ok(read.status === 503 || read.status === 500, `GET of a flag answered ${read.status} ${read.text}`);
        expectProblem(read, read.status, read.status === 503 ? "unavailable" : "internal");
      } finally {
        try {
          await own.stop();
        } catch {
          await own.service.app.close().catch(() => {});
        }
        await database.drop();
      }
    });

    test("latestCheckedAt with the system clock: set after a check, ISO with ms, not before the check", async () => {
      const own = await startServer({ dialect });
      try {
        const p = await createProject(own);
        await createFlag(own, p, "timed");
        const before = Date.now();
        assert.equal(await check(own, p, "timed"), false);
        const res = await own.request("GET", `/projects/${p}/flags/timed`);
        const afterGet = Date.now();
        assert.equal(res.status, 200);
        assert.match(res.body.latestCheckedAt, ISO_MS);
        const at = Date.parse(res.body.latestCheckedAt);
        assert.ok(at >= before && at <= afterGet, `${res.body.latestCheckedAt} not within the check`);
      } finally {
        await own.close();
      }
    });

    describe("latestCheckedAt with a manual clock", () => {
      let own: TestServer;
      let p: string;
      const ownClock = new ManualClock();
      before(async () => {
        own = await startServer({ dialect, clock: ownClock });
        p = await createProject(own);
      });
      after(() => own.close());

      const stored = async (id: string) =>
        (
          await own.database.db
            .selectFrom("flag_configs")
            .select("latest_checked_at")
            .where("flag_id", "=", id)
            .executeTakeFirstOrThrow()
        ).latest_checked_at;
      const latest = async (flag: string) => {
        const res = await own.request("GET", `/projects/${p}/flags/${flag}`);
        assert.equal(res.status, 200);
        return res.body.latestCheckedAt as string | null;
      };

      test("a check shows in GET before any flush, is stored by flush, and only ever moves forward", async () => {
        const created = await createFlag(own, p, "tracked");
        assert.equal(created.latestCheckedAt, null);
        assert.equal(await latest("tracked"), null, "never checked");
        assert.equal(await stored(created.id), null);

        // Before any flush: the GET must show the check although the row does not hold it yet. The
        // background flush may run at any moment; an attempt counts only when the row was still
        // behind after the GET (the stored value only moves forward, so it was behind during the GET).
        let seenBeforeFlush = false;
        for (let attempt = 0; attempt < 5 && !seenBeforeFlush; attempt++) {
          ownClock.advance(1000);
          const now = new Date(ownClock.now()).toISOString();
          assert.equal(await check(own, p, "tracked"), false);
          const shown = await latest("tracked");
          assert.equal(shown, now, "GET shows the time of the last check");
          assert.match(shown as string, ISO_MS);
          if ((await stored(created.id)) !== now) seenBeforeFlush = true;
        }
        assert.ok(seenBeforeFlush, "no attempt observed the GET ahead of the stored row");

        await own.service.recorder.flush();
        const t1 = new Date(ownClock.now()).toISOString();
        assert.equal(await stored(created.id), t1, "flush stores the check time");
        assert.equal(await latest("tracked"), t1);

        ownClock.advance(60_000);
        const t2 = new Date(ownClock.now()).toISOString();
        assert.equal(await check(own, p, "tracked", "actorIds=x"), false);
        assert.equal(await latest("tracked"), t2, "a later check moves it forward");
        await own.service.recorder.flush();
        assert.equal(await stored(created.id), t2);

        // A check stamped earlier (the clock stepped back) never moves it backward, shown or stored.
        ownClock.advance(-30_000);
        assert.equal(await check(own, p, "tracked"), false);
        assert.equal(await latest("tracked"), t2, "GET never goes backward");
        await own.service.recorder.flush();
        assert.equal(await stored(created.id), t2, "the stored value never goes backward");
        assert.equal(await latest("tracked"), t2);

        ownClock.advance(40_000);
        const t3 = new Date(ownClock.now()).toISOString();
        assert.equal(await check(own, p, "tracked"), false);
        await own.service.recorder.flush();
        assert.equal(await stored(created.id), t3);
        assert.equal(await latest("tracked"), t3);
      });

      test("PostgreSQL: a flush skips the rows a write holds, never waits for them, and writes them next time", {
        skip: dialect !== "postgres",
      }, async () => {
        const held = await createFlag(own, p, "held-row");
        const free = await createFlag(own, p, "free-row");
        ownClock.advance(1000);
        const now = new Date(ownClock.now()).toISOString();
        assert.equal(await check(own, p, "held-row"), false);
        assert.equal(await check(own, p, "free-row"), false);
        // Another transaction holds held-row's configuration, as a write detaching a segment does.
        const side = await connectClient(own.databaseUrl);
        try {
          await side.query("begin");
          await side.query("select 1 from flag_configs where flag_id = $1 for update", [held.id]);
          // The flush answers while the lock is held (a flush that waited would time out here).
          await withDeadline(own.service.recorder.flush(), 5000, "a flush beside a held row");
          assert.equal(await stored(free.id), now, "the free row is written");
          assert.equal(await stored(held.id), null, "the held row is skipped");
          assert.equal(await latest("held-row"), now, "and still shown");
          await side.query("rollback");
        } finally {
          await side.end();
        }
        await own.service.recorder.flush();
        assert.equal(await stored(held.id), now, "the next flush writes it");
      });

      test("a check of one flag does not touch another flag's latestCheckedAt", async () => {
        const a = await createFlag(own, p, "checked-a");
        const b = await createFlag(own, p, "checked-b");
        ownClock.advance(1000);
        const now = new Date(ownClock.now()).toISOString();
        assert.equal(await check(own, p, "checked-a"), false);
        assert.equal(await latest("checked-a"), now);
        assert.equal(await latest("checked-b"), null);
        await own.service.recorder.flush();
        assert.equal(await stored(a.id), now);
        assert.equal(await stored(b.id), null);
      });
    });
  });
}
