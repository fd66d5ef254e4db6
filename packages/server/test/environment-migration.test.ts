// The migration to environments (005, issue 24) keeps every flag's answers. A database is built as it
// stood at migration 004, before environments, with flags in every status, both percentages, attached
// actors and segments, keys of every role and an old history event; a server then starts on it (which
// migrates it) and must answer exactly as the data says, with every project key bound to production and
// admin keys bound to none.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { evaluate, ProjectState, type ProjectStateJSON } from "@flagstaff/core";
import { Migrator } from "kysely/migration";
import { loadConfig } from "../src/kernel/config.js";
import { openDatabase } from "../src/db/database.js";
import { InCodeMigrations, migrateToLatest } from "../src/db/migrate.js";
import { hashApiKey, newApiKey, newEventId, newId, newKeyId } from "../src/kernel/ids.js";
import {
  ADMIN_KEY,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const PROJECT = "legacy";
const OTHER = "legacy-other";
const AT = "2026-01-01T00:00:00.000Z";
const LATER = "2026-02-01T00:00:00.000Z";
const CHECKED = "2026-03-01T00:00:00.000Z";
/** Never draws a call into the call rollout below 100 %: the oracle and the server draw the same. */
const RANDOM = () => 0.999;

interface OldFlag {
  readonly name: string;
  readonly status: "enabled" | "disabled" | "conditional";
  readonly percentageActors: number;
  readonly percentageCalls: number;
  readonly actors: readonly string[];
  /** Segment names (ids are made below). */
  readonly segments: readonly string[];
  readonly description: string;
  readonly revision: number;
  readonly latestCheckedAt: string | null;
}

const SEGMENTS: Record<string, readonly string[]> = { beta: ["m1", "m2"], empty: [] };

const flag = (name: string, fields: Partial<OldFlag>): OldFlag => ({
  name,
  status: "conditional",
  percentageActors: 0,
  percentageCalls: 0,
  actors: [],
  segments: [],
  description: `The ${name} flag`,
  revision: 1,
  latestCheckedAt: null,
  ...fields,
});

const FLAGS: readonly OldFlag[] = [
  flag("enabled", { status: "enabled", revision: 2 }),
  flag("disabled", { status: "disabled", actors: ["alice"], segments: ["beta"], percentageActors: 100, revision: 5 }),
  flag("conditional-none", {}),
  flag("actors", { actors: ["alice", "bob"], revision: 3 }),
  flag("segment", { segments: ["beta"] }),
  flag("rollout-actors", { percentageActors: 50, latestCheckedAt: CHECKED }),
  flag("rollout-calls-all", { percentageCalls: 100 }),
  flag("rollout-calls-some", { percentageCalls: 25 }),
  flag("mixed", {
    actors: ["carol"],
    segments: ["beta", "empty"],
    percentageActors: 25,
    percentageCalls: 10,
    revision: 7,
    latestCheckedAt: CHECKED,
  }),
];

const ACTOR_SETS: readonly (readonly string[])[] = [
  [],
  ["alice"],
  ["bob"],
  ["carol"],
  ["m1"],
  ["m2"],
  ["dave"],
  ["dave", "m2"],
  ...Array.from({ length: 12 }, (_, i) => [`user-${i}`]),
];

interface Fixture {
  readonly flagIds: Map<string, string>;
  readonly segmentIds: Map<string, string>;
  readonly keys: Record<"admin" | "write" | "read" | "check" | "otherRead", { secret: string; id: string }>;
  readonly eventId: string;
}

/** Builds the database as it stood at migration 004 (before environments), with the fixture's rows. */
async function buildAt004(fresh: FreshDatabase): Promise<Fixture> {
  const handle = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
  try {
    const migrator = new Migrator({ db: handle.db, provider: new InCodeMigrations(handle.dialect) });
    const { error } = await migrator.migrateTo("004-counts-revisions");
    assert.equal(error, undefined);
    const db = handle.db as any;
    for (const id of [PROJECT, OTHER]) {
      await db
        .insertInto("projects")
        .values({ id, name: `Project ${id}`, created_at: AT })
        .execute();
    }
    const segmentIds = new Map<string, string>();
    for (const [name, members] of Object.entries(SEGMENTS)) {
      const id = newId("seg");
      segmentIds.set(name, id);
      await db
        .insertInto("segments")
        .values({
          id,
          project_id: PROJECT,
          name,
          description: "",
          created_at: AT,
          updated_at: AT,
          next_actor_seq: members.length + 1,
          revision: 1,
          actors_count: members.length,
        })
        .execute();
      for (const [index, actor_id] of members.entries()) {
        await db
          .insertInto("segment_actors")
          .values({ segment_id: id, project_id: PROJECT, actor_id, seq: index + 1, added_at: AT })
          .execute();
      }
    }
    const actors = new Set([...FLAGS.flatMap((f) => f.actors), ...Object.values(SEGMENTS).flat()]);
    for (const actor_id of actors) {
      await db
        .insertInto("actors")
        .values({ project_id: PROJECT, actor_id, name: null, image_url: null, created_at: AT })
        .execute();
    }
    const flagIds = new Map<string, string>();
    for (const f of FLAGS) {
      const id = newId("flg");
      flagIds.set(f.name, id);
      await db
        .insertInto("flags")
        .values({
          id,
          project_id: PROJECT,
          name: f.name,
          description: f.description,
          status: f.status,
          percentage_actors: f.percentageActors,
          percentage_calls: f.percentageCalls,
          created_at: AT,
          updated_at: LATER,
          latest_checked_at: f.latestCheckedAt,
          status_changed_at: LATER,
          revision: f.revision,
          actors_count: f.actors.length,
          segments_count: f.segments.length,
        })
        .execute();
      for (const actor_id of f.actors) {
        await db
          .insertInto("flag_actors")
          .values({ flag_id: id, project_id: PROJECT, actor_id, created_at: AT })
          .execute();
      }
      for (const segment of f.segments) {
        await db
          .insertInto("flag_segments")
          .values({ flag_id: id, segment_id: segmentIds.get(segment), created_at: AT })
          .execute();
      }
    }
    // The other project has a flag of the same name, on for everyone.
    await db
      .insertInto("flags")
      .values({
        id: newId("flg"),
        project_id: OTHER,
        name: "disabled",
        description: "",
        status: "enabled",
        percentage_actors: 0,
        percentage_calls: 0,
        created_at: AT,
        updated_at: AT,
        latest_checked_at: null,
        status_changed_at: AT,
        revision: 1,
        actors_count: 0,
        segments_count: 0,
      })
      .execute();
    const key = async (project_id: string | null, role: string) => {
      const secret = newApiKey();
      const id = newKeyId(Date.parse(AT));
      await db
        .insertInto("api_keys")
        .values({ id, project_id, role, name: `old ${role}`, key_hash: hashApiKey(secret), created_at: AT })
        .execute();
      return { secret, id };
    };
    const keys = {
      admin: await key(null, "admin"),
      write: await key(PROJECT, "write"),
      read: await key(PROJECT, "read"),
      check: await key(PROJECT, "check"),
      otherRead: await key(OTHER, "read"),
    };
    // An event of the history before environments: it has none.
    const eventId = newEventId(Date.parse(LATER));
    await db
      .insertInto("events")
      .values({
        id: eventId,
        project_id: PROJECT,
        type: "flag.updated",
        target_kind: "flag",
        target_id: flagIds.get("actors"),
        target_name: "actors",
        actor: JSON.stringify({ keyId: keys.write.id, keyName: "old write", role: "write" }),
        before: JSON.stringify({
          name: "actors",
          description: "",
          status: "disabled",
          percentageActors: 0,
          percentageCalls: 0,
        }),
        after: JSON.stringify({
          name: "actors",
          description: "",
          status: "conditional",
          percentageActors: 0,
          percentageCalls: 0,
          addedActors: ["alice", "bob"],
          removedActors: [],
          addedSegments: [],
          removedSegments: [],
        }),
        request_id: null,
        created_at: LATER,
      })
      .execute();
    return { flagIds, segmentIds, keys, eventId };
  } finally {
    await handle.close();
  }
}

/** The answers the data itself gives, by the evaluation rules of @flagstaff/core. */
function oracle(fixture: Fixture): ProjectState {
  const json: ProjectStateJSON = {
    format: 1,
    flags: FLAGS.map((f) => ({
      id: fixture.flagIds.get(f.name) as string,
      name: f.name,
      status: f.status,
      percentageActors: f.percentageActors,
      percentageCalls: f.percentageCalls,
      actors: [...f.actors],
      segments: f.segments.map((s) => fixture.segmentIds.get(s) as string),
    })),
    segments: Object.fromEntries(
      Object.entries(SEGMENTS)
        .filter(([, members]) => members.length > 0)
        .map(([name, members]) => [fixture.segmentIds.get(name) as string, [...members]]),
    ),
  } as ProjectStateJSON;
  return ProjectState.fromJSON(json);
}

for (const dialect of DIALECTS) {
  describe(`migration to environments keeps every answer [${dialect}]`, () => {
    let fresh: FreshDatabase;
    let fixture: Fixture;
    let server: TestServer;
    let expected: ProjectState;
    const query = (actors: readonly string[]) => actors.map((a) => `actorIds=${a}`).join("&");

    before(async () => {
      fresh = await freshDatabase(dialect);
      fixture = await buildAt004(fresh);
      expected = oracle(fixture);
      server = await startServer({ dialect, database: fresh, random: RANDOM });
    });
    after(() => server.close());

    test("the oracle agrees with the plain rules the data was written for", () => {
      const answer = (name: string, actors: string[]) =>
        evaluate(expected.flagsByName.get(name)!, actors, expected.isMember, RANDOM).enabled;
      assert.equal(answer("enabled", []), true);
      assert.equal(answer("disabled", ["alice"]), false);
      assert.equal(answer("actors", ["bob"]), true);
      assert.equal(answer("actors", ["dave"]), false);
      assert.equal(answer("segment", ["m2"]), true);
      assert.equal(answer("segment", ["alice"]), false);
      assert.equal(answer("rollout-calls-all", []), true);
      assert.equal(answer("rollout-calls-some", []), false);
    });

    // Read before anything is checked: a check moves latestCheckedAt.
    test("every flag reads as before, in production, with its revision's ETag and its attachments", async () => {
      for (const f of FLAGS) {
        const id = fixture.flagIds.get(f.name) as string;
        const res = await server.request("GET", `/projects/${PROJECT}/flags/${f.name}`, {
          key: fixture.keys.read.secret,
        });
        assert.equal(res.status, 200, res.text);
        // Targeting (migration 006) reads every migrated flag as boolean with no rules.
        const { environments, type, variants, onVariant, offVariant, rules, prerequisites, ...rest } = res.body;
        // Lifecycle (migration 012): every migrated flag is a release flag, neither permanent nor archived.
        // (Whether it is stale is the stale rules' to say, at start-up: lifecycle tests cover them.)
        const { kind, permanent, stale: _stale, staleReason: _r, staleSince: _s, archived, archivedAt, ...seed } = rest;
        assert.deepEqual(
          { kind, permanent, archived, archivedAt },
          { kind: "release", permanent: false, archived: false, archivedAt: null },
        );
        assert.deepEqual(
          { type, variants, onVariant, offVariant, rules, prerequisites },
          {
            type: "boolean",
            variants: [
              { key: "on", value: true },
              { key: "off", value: false },
            ],
            onVariant: "on",
            offVariant: "off",
            rules: [],
            prerequisites: [],
          },
        );
        assert.deepEqual(seed, {
          id,
          projectId: PROJECT,
          name: f.name,
          description: f.description,
          status: f.status,
          percentageActors: f.percentageActors,
          percentageCalls: f.percentageCalls,
          createdAt: AT,
          updatedAt: LATER,
          latestCheckedAt: f.latestCheckedAt,
          statusChangedAt: LATER,
          actorsCount: f.actors.length,
          segmentsCount: f.segments.length,
          environment: "production",
        });
        const production = {
          status: f.status,
          percentageActors: f.percentageActors,
          percentageCalls: f.percentageCalls,
          statusChangedAt: LATER,
        };
        assert.deepEqual(environments, { production });
        assert.equal(res.headers.get("etag"), `"${id}@production.${f.revision}"`);
        const actors = await server.request("GET", `/projects/${PROJECT}/flags/${f.name}/actors`);
        assert.deepEqual(
          actors.body.data.map((m: any) => m.actorId),
          [...f.actors].sort(),
        );
        const segments = await server.request("GET", `/projects/${PROJECT}/flags/${f.name}/segments`);
        assert.deepEqual(segments.body.data.map((s: any) => s.name).sort(), [...f.segments].sort());
      }
      // Lists answer as before too.
      const list = await server.request("GET", `/projects/${PROJECT}/flags?limit=100`);
      assert.deepEqual(
        list.body.data.map((f: any) => f.name),
        FLAGS.map((f) => f.name).sort(),
      );
      const conditional = await server.request("GET", `/projects/${PROJECT}/flags?status=conditional&total=true`);
      assert.equal(conditional.body.total, FLAGS.filter((f) => f.status === "conditional").length);
      const forM1 = await server.request("GET", `/projects/${PROJECT}/actors/m1/flags?limit=100`);
      // The flags on for m1 by the rules that do not draw (no call rollout).
      const wantForM1 = FLAGS.filter(
        (f) => evaluate(expected.flagsByName.get(f.name)!, ["m1"], expected.isMember, () => 1).enabled,
      ).map((f) => f.name);
      assert.deepEqual(
        forM1.body.data.map((f: any) => f.name),
        wantForM1.sort(),
      );
    });

    test("every flag answers every actor as before, with every key and both evaluation paths", async () => {
      const { check, read, write } = fixture.keys;
      let compared = 0;
      for (const f of FLAGS) {
        for (const actors of ACTOR_SETS) {
          const want = String(evaluate(expected.flagsByName.get(f.name)!, actors, expected.isMember, RANDOM).enabled);
          const path = `/projects/${PROJECT}/flags/${f.name}/check?${query(actors)}`;
          for (const [key, suffix] of [
            [check.secret, ""],
            [read.secret, ""],
            [write.secret, ""],
            [ADMIN_KEY, ""],
            [fixture.keys.admin.secret, "&environment=production"],
            // `cache` in a form the node:http adapter leaves to the route.
            [check.secret, "&cache=0.5"],
          ] as const) {
            const res = await server.request("GET", `${path}${suffix}`, { key });
            assert.equal(res.status, 200, res.text);
            assert.equal(String(res.body.enabled), want, `${f.name} for [${actors}] ${suffix}`);
            compared++;
          }
          if (actors.length === 1) {
            const ofrep = await server.request("POST", `/ofrep/v1/evaluate/flags/${f.name}`, {
              key: check.secret,
              body: { context: { targetingKey: actors[0] } },
            });
            assert.equal(String(ofrep.body.value), want, `OFREP ${f.name} for ${actors[0]}`);
          }
        }
      }
      assert.equal(compared, FLAGS.length * ACTOR_SETS.length * 6);
      // The other project's flag of the same name answers as its own data says.
      const other = await server.request("GET", `/projects/${OTHER}/flags/disabled/check`, {
        key: fixture.keys.otherRead.secret,
      });
      assert.equal(other.body.enabled, true);
    });

    test("each project has one environment, production, its default", async () => {
      for (const project of [PROJECT, OTHER]) {
        const res = await server.request("GET", `/projects/${project}/environments`);
        assert.deepEqual(res.body.data, [
          {
            id: "production",
            projectId: project,
            name: "Production",
            description: "",
            default: true,
            protected: false,
            requiredApprovals: 0,
            allowSelfApproval: false,
            createdAt: AT,
            updatedAt: AT,
          },
        ]);
      }
    });

    test("every project key works and is bound to production; admin keys are bound to none", async () => {
      const whoami = async (secret: string) => (await server.request("GET", "/whoami", { key: secret })).body;
      for (const role of ["write", "read", "check"] as const) {
        const key = fixture.keys[role];
        assert.deepEqual(await whoami(key.secret), {
          keyId: key.id,
          name: `old ${role}`,
          role,
          projectId: PROJECT,
          environment: "production",
        });
      }
      assert.deepEqual(await whoami(fixture.keys.admin.secret), {
        keyId: fixture.keys.admin.id,
        name: "old admin",
        role: "admin",
        projectId: null,
        environment: null,
      });
      assert.equal((await whoami(fixture.keys.otherRead.secret)).environment, "production");
      const listed = await server.request("GET", `/projects/${PROJECT}/keys`, { key: fixture.keys.admin.secret });
      assert.deepEqual(listed.body.data.map((k: any) => [k.role, k.environment]).sort(), [
        ["check", "production"],
        ["read", "production"],
        ["write", "production"],
      ]);
      // The old keys still do what their roles allow, and nothing more.
      const { write, read, check } = fixture.keys;
      const patched = await server.request("PATCH", `/projects/${PROJECT}/flags/conditional-none`, {
        key: write.secret,
        body: { addActors: ["erin"] },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.environment, "production");
      assert.equal(patched.headers.get("etag"), `"${fixture.flagIds.get("conditional-none")}@production.2"`);
      const checked = await server.request("GET", `/projects/${PROJECT}/flags/conditional-none/check?actorIds=erin`, {
        key: check.secret,
      });
      assert.equal(checked.body.enabled, true);
      expectProblem(
        await server.request("PATCH", `/projects/${PROJECT}/flags/enabled`, {
          key: read.secret,
          body: { status: "disabled" },
        }),
        403,
        "forbidden",
      );
      expectProblem(await server.request("GET", `/projects/${PROJECT}/flags`, { key: check.secret }), 403, "forbidden");
      expectProblem(
        await server.request("GET", `/projects/${PROJECT}/flags/enabled`, { key: fixture.keys.otherRead.secret }),
        403,
        "forbidden",
      );
      // A write key bound to production still deletes flags while production is the only environment.
      await server.request("POST", `/projects/${PROJECT}/flags/temporary`, { body: {} });
      const deleted = await server.request("DELETE", `/projects/${PROJECT}/flags/temporary`, { key: write.secret });
      assert.equal(deleted.status, 204, deleted.text);
    });

    test("the history from before keeps its events, with no environment, visible to the bound keys", async () => {
      for (const key of [fixture.keys.read.secret, ADMIN_KEY]) {
        const res = await server.request("GET", `/projects/${PROJECT}/flags/actors/events`, { key });
        assert.equal(res.status, 200, res.text);
        const old = res.body.data.find((e: any) => e.id === fixture.eventId);
        assert.ok(old, "the old event is listed");
        assert.equal("environment" in old, false);
        assert.deepEqual(old.after.addedActors, ["alice", "bob"]);
      }
      const production = await server.request("GET", `/projects/${PROJECT}/events?environment=production`);
      assert.ok(!production.body.data.some((e: any) => e.id === fixture.eventId), "not of an environment");
    });

    test("a restart on the migrated database migrates nothing more and answers the same", async () => {
      await server.stop();
      server = await startServer({ dialect, database: fresh, random: RANDOM });
      assert.deepEqual(await migrateToLatest(server.database), []);
      for (const f of FLAGS) {
        for (const actors of ACTOR_SETS.slice(0, 8)) {
          const want = String(evaluate(expected.flagsByName.get(f.name)!, actors, expected.isMember, RANDOM).enabled);
          const res = await server.request("GET", `/projects/${PROJECT}/flags/${f.name}/check?${query(actors)}`, {
            key: fixture.keys.check.secret,
          });
          // conditional-none has erin now, who is in none of these sets.
          assert.equal(String(res.body.enabled), want, `${f.name} for [${actors}]`);
        }
      }
    });
  });
}

if (DIALECTS.includes("postgres")) {
  describe("migration to environments by two instances starting at once [postgres]", () => {
    test("both migrate the same database once and answer as the data says", async () => {
      const fresh = await freshDatabase("postgres");
      const fixture = await buildAt004(fresh);
      const expected = oracle(fixture);
      const [a, b] = await Promise.all([
        startServer({ dialect: "postgres", database: fresh, random: RANDOM }),
        startServer({ dialect: "postgres", database: fresh, random: RANDOM }),
      ]);
      try {
        const environments = await (a.database.db as any).selectFrom("environments").selectAll().execute();
        assert.deepEqual(environments.map((e: any) => `${e.project_id} ${e.id}`).sort(), [
          `${PROJECT} production`,
          `${OTHER} production`,
        ]);
        for (const server of [a, b]) {
          for (const f of FLAGS) {
            for (const actors of ACTOR_SETS.slice(0, 8)) {
              const want = String(
                evaluate(expected.flagsByName.get(f.name)!, actors, expected.isMember, RANDOM).enabled,
              );
              const query = actors.map((actor) => `actorIds=${actor}`).join("&");
              const res = await server.request("GET", `/projects/${PROJECT}/flags/${f.name}/check?${query}`, {
                key: fixture.keys.check.secret,
              });
              assert.equal(String(res.body.enabled), want, `${f.name} for [${actors}]`);
            }
          }
        }
      } finally {
        await a.stop();
        await b.stop();
        await fresh.drop();
      }
    });
  });
}
