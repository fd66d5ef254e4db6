// Bench fixtures: fresh databases and a project filled straight through the server's own database layer.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { openDatabase } from "../packages/server/dist/src/db/database.js";
import { migrateToLatest } from "../packages/server/dist/src/db/migrate.js";
import { hashApiKey } from "../packages/server/dist/src/kernel/ids.js";

export const FLAG = "checkout";
/** A flag of 10 rules of 3 conditions each, none holding until the last, for contexts of rulesCheckLoad. */
export const RULES_FLAG = "rules-10x3";

/**
 * Issue 25's measured flag (as bench/rules.mjs): each of the first nine rules fails on its third
 * condition (a version bound above the context's), so all 30 conditions are read; the last holds.
 */
/** 10 rules; the first nine fail on condition `failing` (0, 1 or 2), the last holds. */
export function rulesFailingAt(failing) {
  return Array.from({ length: 10 }, (_, i) => {
    const last = i === 9;
    const conditions = [
      { attribute: "country", operator: "in", values: ["FR", "DE", "NL", "BE", "LU"] },
      { attribute: "seats", operator: "gte", values: [10] },
      { attribute: "appVersion", operator: "semver_gte", values: ["3.0.0"] },
    ];
    // The contexts are DE, 10–59 seats, 3.4.0: these values are what they are not.
    if (!last && failing === 0) conditions[0] = { ...conditions[0], values: ["FR", "NL", "BE", "LU", "AT"] };
    if (!last && failing === 2) conditions[2] = { ...conditions[2], values: [`3.${5 + i}.0`] };
    return { id: `rule-${i}`, conditions, serve: { variant: "on" } };
  });
}

export function tenRules() {
  return Array.from({ length: 10 }, (_, i) => ({
    id: `rule-${i}`,
    conditions: [
      { attribute: "country", operator: "in", values: ["FR", "DE", "NL", "BE", "LU"] },
      { attribute: "seats", operator: "gte", values: [10] },
      { attribute: "appVersion", operator: "semver_gte", values: [i === 9 ? "3.0.0" : `3.${5 + i}.0`] },
    ],
    serve: { variant: "on" },
  }));
}

export async function freshDatabase(DIALECT, POSTGRES_URL) {
  if (DIALECT === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "flagstaff-bench-"));
    return { url: `file:${join(dir, "flags.db")}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `flagstaff_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Opens a bench database (a `file:` or `postgres://` URL) through the server's own database layer. */
export function openBenchDatabase(url, poolSize = 2) {
  return openDatabase(
    url.startsWith("file:")
      ? { dialect: "sqlite", databaseLocation: url.slice(5), databasePoolSize: poolSize }
      : { dialect: "postgres", databaseLocation: url, databasePoolSize: poolSize },
  );
}

/** Fills a project straight through the server's own database layer (far faster than the API for 1M rows). */
export async function seed(
  url,
  {
    flags,
    members,
    checkKey: CHECK_KEY,
    adminKey: ADMIN_KEY,
    memberId = (i) => `member-${i}`,
    // Every environment holds the same configuration of every flag; the check key is bound to the first.
    environments = ["production"],
  },
) {
  const handle = openBenchDatabase(url, 4);
  await migrateToLatest(handle);
  const db = handle.db;
  const now = new Date().toISOString();
  const chunk = async (rows, size, insert) => {
    for (let i = 0; i < rows.length; i += size) await insert(rows.slice(i, i + size));
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto("projects").values({ id: "bench", name: "Benchmark", created_at: now }).execute();
    await trx
      .insertInto("environments")
      .values(
        environments.map((id, i) => ({
          project_id: "bench",
          id,
          name: id,
          description: "",
          is_default: i === 0 ? 1 : 0,
          position: i + 1,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    await trx
      .insertInto("api_keys")
      .values([
        {
          id: "key_bench_check",
          project_id: "bench",
          role: "check",
          name: "bench",
          key_hash: hashApiKey(CHECK_KEY),
          environment_id: environments[0],
          created_at: now,
        },
        {
          id: "key_bench_admin",
          project_id: null,
          role: "admin",
          name: "bench",
          key_hash: hashApiKey(ADMIN_KEY),
          environment_id: null,
          created_at: now,
        },
      ])
      .execute();
    const flagRows = [];
    const configRows = [];
    for (let i = 0; i < flags; i++) {
      const name = i === 0 ? FLAG : `flag-${String(i).padStart(6, "0")}`;
      const id = `flg_bench_${i}`;
      flagRows.push({ id, project_id: "bench", name, description: `Benchmark flag ${i}`, created_at: now });
      for (const environment of environments) {
        configRows.push({
          config_id: `${id}@${environment}`,
          flag_id: id,
          environment_id: environment,
          status: i === 0 ? "conditional" : i % 3 === 0 ? "enabled" : "disabled",
          percentage_actors: i === 0 ? 25 : 0,
          percentage_calls: 0,
          updated_at: now,
          latest_checked_at: null,
          status_changed_at: now,
          revision: 1,
          // The counts the writes keep (migration 004), set as those writes would have.
          actors_count: i === 0 ? 1 : 0,
          segments_count: i === 0 ? 1 : 0,
        });
      }
    }
    // The rules flag: conditional, nothing attached, no rollout, so only its rules decide.
    flagRows.push({
      id: "flg_bench_rules",
      project_id: "bench",
      name: RULES_FLAG,
      description: "10 rules",
      created_at: now,
    });
    for (const environment of environments) {
      configRows.push({
        config_id: `flg_bench_rules@${environment}`,
        flag_id: "flg_bench_rules",
        environment_id: environment,
        status: "conditional",
        percentage_actors: 0,
        percentage_calls: 0,
        updated_at: now,
        latest_checked_at: null,
        status_changed_at: now,
        revision: 1,
        actors_count: 0,
        segments_count: 0,
        rules: JSON.stringify(tenRules()),
      });
    }
    await chunk(flagRows, 2000, (rows) => trx.insertInto("flags").values(rows).execute());
    await chunk(configRows, 2000, (rows) => trx.insertInto("flag_configs").values(rows).execute());
    await trx
      .insertInto("segments")
      .values({
        id: "seg_bench",
        project_id: "bench",
        name: "Members",
        description: "",
        created_at: now,
        updated_at: now,
        next_actor_seq: members + 1,
      })
      .execute();
    await trx
      .insertInto("flag_segments")
      .values(environments.map((e) => ({ config_id: `flg_bench_0@${e}`, segment_id: "seg_bench", created_at: now })))
      .execute();
    await trx
      .insertInto("actors")
      .values({ project_id: "bench", actor_id: "vip-1", name: null, image_url: null, created_at: now })
      .execute();
    await trx
      .insertInto("flag_actors")
      .values(
        environments.map((e) => ({
          config_id: `flg_bench_0@${e}`,
          project_id: "bench",
          actor_id: "vip-1",
          created_at: now,
        })),
      )
      .execute();
    for (let start = 0; start < members; start += 50_000) {
      const actors = [];
      const memberships = [];
      for (let i = start; i < Math.min(members, start + 50_000); i++) {
        const actor_id = memberId(i);
        actors.push({ project_id: "bench", actor_id, name: null, image_url: null, created_at: now });
        memberships.push({ segment_id: "seg_bench", project_id: "bench", actor_id, seq: i + 1, added_at: now });
      }
      await chunk(actors, 5000, (rows) => trx.insertInto("actors").values(rows).execute());
      await chunk(memberships, 5000, (rows) => trx.insertInto("segment_actors").values(rows).execute());
    }
    // The count the writes keep (migration 004), set as those writes would have.
    await trx.updateTable("segments").set({ actors_count: members }).where("id", "=", "seg_bench").execute();
  });
  await handle.close();
}

/**
 * 1,000 check paths with 1–3 actorIds each (segment members, the attached actor, and strangers, who
 * meet the rollout), and 1,000 OFREP bodies with the first of each as the targeting key.
 */
export function checkLoad(members) {
  const paths = [];
  const bodies = [];
  const rulesPaths = [];
  let seed = 42;
  // A fixed linear congruential generator, so every run checks the same mix of actors.
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let i = 0; i < 1000; i++) {
    const count = 1 + Math.floor(rand() * 3);
    const ids = [];
    for (let j = 0; j < count; j++) {
      const r = rand();
      ids.push(
        r < 0.4 ? `member-${Math.floor(rand() * members)}` : r < 0.45 ? "vip-1" : `user-${Math.floor(rand() * 1e9)}`,
      );
    }
    paths.push(
      `/projects/bench/flags/${FLAG}/check?${ids.map((id) => `actorIds=${encodeURIComponent(id)}`).join("&")}`,
    );
    bodies.push(JSON.stringify({ context: { targetingKey: ids[0] } }));
    // The same actors with the attributes the rules read, brackets percent-encoded as URLSearchParams writes them.
    const seats = 10 + Math.floor(rand() * 50);
    rulesPaths.push(
      `/projects/bench/flags/${RULES_FLAG}/check?${ids.map((id) => `actorIds=${encodeURIComponent(id)}`).join("&")}` +
        `&attributes%5Bcountry%5D=DE&attributes%5Bseats%5D=${seats}&attributes%5BappVersion%5D=3.4.0`,
    );
  }
  return { paths, bodies, rulesPaths };
}
