// The flags list's search goes through an index (issue 34, migration 010): SQLite's FTS5 trigram table,
// kept by triggers, and PostgreSQL's pg_trgm indexes. The index must follow every write, and a
// PostgreSQL where pg_trgm cannot be installed must still start and search (by a scan).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import {
  createProject,
  DIALECTS,
  type FreshDatabase,
  freshDatabase,
  newDatabaseName,
  POSTGRES_URL,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const names = async (server: TestServer, project: string, query: string) => {
  const res = await server.request("GET", `/projects/${project}/flags?${query}`);
  assert.equal(res.status, 200, res.text);
  return (res.body.data as { name: string }[]).map((f) => f.name);
};

/** The search index's objects in a database: SQLite's table and triggers, PostgreSQL's indexes. */
async function searchIndexes(database: FreshDatabase): Promise<string[]> {
  if (database.dialect === "sqlite") {
    const db = new Database(database.url.slice("file:".length), { readonly: true });
    try {
      const rows = db
        .prepare("select name from sqlite_master where name like 'flags_search%' and type in ('table', 'trigger')")
        .all() as { name: string }[];
      return rows.map((r) => r.name).filter((n) => !/_(data|idx|docsize|config|content)$/.test(n));
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ indexname: string }>(
      "select indexname from pg_indexes where tablename = 'flags' and indexname like '%trgm'",
    );
    return rows.map((r) => r.indexname);
  } finally {
    await client.end();
  }
}

for (const dialect of DIALECTS) {
  describe(`flag search through its index [${dialect}]`, () => {
    let database: FreshDatabase;
    let server: TestServer;
    let project: string;

    before(async () => {
      database = await freshDatabase(dialect);
      server = await startServer({ dialect, database });
      project = await createProject(server);
    });
    after(async () => {
      await server.close();
      await database.drop();
    });

    test("the migration made the index", async () => {
      const made = (await searchIndexes(database)).sort();
      assert.deepEqual(
        made,
        dialect === "sqlite"
          ? ["flags_search", "flags_search_delete", "flags_search_insert", "flags_search_update"]
          : ["flags_description_trgm", "flags_name_trgm"],
      );
    });

    test("the index follows creates, description changes and deletes, in any letter case", async () => {
      const create = (name: string, description: string) =>
        server.request("POST", `/projects/${project}/flags/${name}`, { body: { description } });
      assert.equal((await create("Alpha-Search", "the first BLUE one")).status, 201);
      assert.equal((await create("beta-search", "green")).status, 201);
      assert.equal((await create("gamma", "Blue and green")).status, 201);
      assert.deepEqual(await names(server, project, "q=SEARCH"), ["Alpha-Search", "beta-search"]);
      assert.deepEqual(await names(server, project, "q=blue"), ["Alpha-Search", "gamma"]);
      assert.deepEqual(await names(server, project, "name=pha-sea"), ["Alpha-Search"]);
      assert.deepEqual(await names(server, project, "name=blue"), [], "name= reads names only");

      const described = await server.request("PATCH", `/projects/${project}/flags/gamma`, {
        body: { description: "now purple" },
      });
      assert.equal(described.status, 200, described.text);
      assert.deepEqual(await names(server, project, "q=blue"), ["Alpha-Search"], "the old description is gone");
      assert.deepEqual(await names(server, project, "q=PURPLE"), ["gamma"], "the new one is found");

      assert.equal((await server.request("DELETE", `/projects/${project}/flags/beta-search`)).status, 204);
      assert.deepEqual(await names(server, project, "q=search"), ["Alpha-Search"]);
      assert.equal((await create("beta-search", "again")).status, 201);
      assert.deepEqual(await names(server, project, "q=search"), ["Alpha-Search", "beta-search"], "found once");
      const counted = await server.request("GET", `/projects/${project}/flags?q=search&total=true`);
      assert.equal(counted.body.total, 2);
    });

    test("a project's search finds only its own flags; short and wildcard texts still search", async () => {
      const other = await createProject(server);
      await server.request("POST", `/projects/${other}/flags/Alpha-Search-elsewhere`, { body: {} });
      assert.deepEqual(await names(server, project, "q=alpha"), ["Alpha-Search"]);
      assert.deepEqual(await names(server, other, "q=alpha"), ["Alpha-Search-elsewhere"]);
      assert.deepEqual(await names(server, project, "q=MM"), ["gamma"], "under three characters");
      assert.deepEqual(await names(server, project, "q=HA-s"), ["Alpha-Search"]);
      assert.deepEqual(await names(server, project, "q=%25"), [], "% is a character, not a wildcard");
    });
  });
}

describe("PostgreSQL where pg_trgm cannot be installed", { skip: !DIALECTS.includes("postgres") }, () => {
  const role = `flagstaff_test_role_${randomBytes(5).toString("hex")}`;
  const name = newDatabaseName();
  const admin = () => new pg.Client({ connectionString: POSTGRES_URL });
  const administer = async (...statements: string[]) => {
    const client = admin();
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  };
  let server: TestServer | undefined;
  let database: FreshDatabase;

  before(async () => {
    // A role that may create tables in the database's public schema but not extensions (no CREATE on the
    // database itself), as on a database handed to an application by its administrator.
    await administer(`create role ${role} login`, `create database ${name}`);
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query(`grant usage, create on schema public to ${role}`);
    await client.end();
    url.username = role;
    database = { url: url.toString(), dialect: "postgres", drop: async () => {} };
  });
  after(async () => {
    await server?.close();
    await administer(`drop database if exists ${name} with (force)`, `drop role if exists ${role}`);
  });

  test("the server starts without the trigram indexes, and searches by a scan", async () => {
    server = await startServer({ dialect: "postgres", database });
    assert.deepEqual(await searchIndexes(database), []);
    const project = await createProject(server);
    await server.request("POST", `/projects/${project}/flags/Some-Search`, { body: { description: "Blue" } });
    await server.request("POST", `/projects/${project}/flags/other`, { body: {} });
    assert.deepEqual(await names(server, project, "q=SEARCH"), ["Some-Search"]);
    assert.deepEqual(await names(server, project, "q=blue"), ["Some-Search"]);
  });
});

// On SQLite a first page in name order reads the next 1,000 flags one by one before it asks the trigram
// index (flag-list.repository.ts, probedPage): a common text fills its page there. Seeded straight into the
// database (the triggers keep the index), past the probe's 1,000 rows.
describe("flag search on SQLite: the probe in name order, and the index past it", () => {
  let database: FreshDatabase;
  let server: TestServer;
  let project: string;
  const BULK = 2500;
  const bulkName = (i: number) => `bulk-${String(i).padStart(4, "0")}`;

  before(async () => {
    database = await freshDatabase("sqlite");
    server = await startServer({ dialect: "sqlite", database });
    project = await createProject(server);
    const environment = (await server.request("GET", `/projects/${project}/environments`)).body.data[0].id;
    const db = new Database(database.url.slice("file:".length));
    try {
      const now = new Date().toISOString();
      const flag = db.prepare(
        "insert into flags (id, project_id, name, description, created_at) values (?, ?, ?, ?, ?)",
      );
      const config = db.prepare(
        "insert into flag_configs (config_id, flag_id, environment_id, status, percentage_actors, percentage_calls, updated_at, status_changed_at, revision, actors_count, segments_count) values (?, ?, ?, 'disabled', 0, 0, ?, ?, 1, 0, 0)",
      );
      db.transaction(() => {
        for (let i = 0; i < BULK; i++) {
          // Every tenth holds the common text; bulk-0005 and bulk-2401 the text found once inside the
          // probe's rows and once past them.
          const description = i % 10 === 0 ? "needle-common" : i === 5 || i === 2401 ? "split-pair" : "other";
          flag.run(`flg_bulk_${i}`, project, bulkName(i), description, now);
          config.run(`flg_bulk_${i}@${environment}`, `flg_bulk_${i}`, environment, now, now);
        }
      })();
    } finally {
      db.close();
    }
  });
  after(async () => {
    await server.close();
    await database.drop();
  });

  /** Every page of a search in name order, following `after`. */
  async function allPages(query: string): Promise<string[][]> {
    const pages: string[][] = [];
    let next = `/projects/${project}/flags?${query}`;
    for (;;) {
      const res = await server.request("GET", next);
      assert.equal(res.status, 200, res.text);
      pages.push((res.body.data as { name: string }[]).map((f) => f.name));
      const after = res.body.pagination.after;
      if (after === null) return pages;
      next = `/projects/${project}/flags?${query}&after=${encodeURIComponent(after)}`;
    }
  }

  test("a common text's pages, from the probe, are exactly the matches in name order", async () => {
    const expected = Array.from({ length: BULK / 10 }, (_, i) => bulkName(i * 10));
    const pages = await allPages("q=needle-common&limit=100");
    assert.deepEqual(
      pages.map((p) => p.length),
      [100, 100, 50],
    );
    assert.deepEqual(pages.flat(), expected);
    assert.deepEqual((await names(server, project, "q=NEEDLE-COMMON&limit=20")).slice(0, 3), expected.slice(0, 3));
  });

  test("a text matched inside the probe's rows and past them is found whole, through the index", async () => {
    assert.deepEqual(await names(server, project, "q=split-pair"), [bulkName(5), bulkName(2401)]);
    assert.deepEqual(await names(server, project, "q=split-pair&total=true"), [bulkName(5), bulkName(2401)]);
    const res = await server.request("GET", `/projects/${project}/flags?q=split-pair&total=true`);
    assert.equal(res.body.total, 2);
  });

  test("the same searches backwards (before) agree", async () => {
    const forward = await allPages("q=needle-common&limit=100");
    const res = await server.request(
      "GET",
      `/projects/${project}/flags?q=needle-common&limit=100&before=${encodeURIComponent(
        (
          await server.request(
            "GET",
            `/projects/${project}/flags?q=needle-common&limit=100&after=${encodeURIComponent(
              (
                await server.request("GET", `/projects/${project}/flags?q=needle-common&limit=100`)
              ).body.pagination.after,
            )}`,
          )
        ).body.pagination.before,
      )}`,
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      (res.body.data as { name: string }[]).map((f) => f.name),
      forward[0],
    );
  });
});
