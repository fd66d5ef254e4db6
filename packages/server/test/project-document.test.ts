// A project as one document (issue 37; docs/flags-as-code.md): `GET /projects/{p}/export` answers every
// environment, segment and flag with each environment's configuration, in a fixed order, valid against the
// JSON Schema the server serves and the repository keeps, with the project's revision as its ETag; the same
// project built on SQLite and on PostgreSQL exports the same document; every refusal. Real servers over
// real HTTP.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { createKey, DIALECTS, expectProblem, startServer, type TestServer } from "@flagstaff/test-harness";

const REPOSITORY_SCHEMA = JSON.parse(
  readFileSync(new URL("../../../../schemas/project-document.schema.json", import.meta.url), "utf8"),
);

/** Builds the same project on a server: two environments, a segment, flags of two types, one archived. */
async function build(server: TestServer, project: string): Promise<void> {
  const ok = async (method: string, path: string, body: unknown, status = 200) => {
    const res = await server.request(method, path, { body });
    assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
    return res.body;
  };
  const p = `/projects/${project}`;
  await ok("POST", "/projects", { id: project, name: "Shop" }, 201);
  await ok("POST", `${p}/environments`, { id: "staging", name: "Staging", description: "Before production" }, 201);
  await ok("PATCH", `${p}/environments/production`, { protected: true, requiredApprovals: 0 });
  const segment = await ok("POST", `${p}/segments`, { name: "beta", description: "Beta testers" }, 201);
  await ok("PATCH", `${p}/segments/${segment.id}`, {
    addActors: ["zoe", "adam"],
    conditions: [{ attribute: "plan", operator: "in", values: ["pro"] }],
  });
  await ok(
    "POST",
    `${p}/flags/theme`,
    {
      type: "string",
      variants: [
        { key: "light", value: "#fff" },
        { key: "dark", value: "#000" },
      ],
      kind: "experiment",
    },
    201,
  );
  await ok("POST", `${p}/flags/checkout`, { description: "New checkout", kind: "release" }, 201);
  await ok("POST", `${p}/flags/kill`, { kind: "kill-switch", permanent: true }, 201);
  await ok("POST", `${p}/flags/retired`, {}, 201);
  await ok("PATCH", `${p}/flags/checkout?environment=staging`, {
    status: "conditional",
    percentageActors: 25,
    addActors: ["bob", "alice"],
    addSegments: [segment.id],
    prerequisites: [{ flag: "kill", variants: ["off"] }],
    rolloutPlan: { steps: [{ at: "2030-01-01T00:00:00.000Z", percentage: 50 }] },
  });
  await ok("PATCH", `${p}/flags/theme?environment=staging`, {
    status: "conditional",
    rules: [
      {
        id: "pros",
        conditions: [{ attribute: "plan", operator: "in", values: ["pro"] }],
        serve: { variant: "dark" },
      },
    ],
  });
  await ok("POST", `${p}/flags/retired/archive`, undefined);
}

for (const dialect of DIALECTS) {
  describe(`a project as one document [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startServer({ dialect });
      await build(server, "shop");
    });
    after(() => server.close());

    test("every environment, segment and flag with each configuration, in order, valid against the schema", async () => {
      const res = await server.request("GET", "/projects/shop/export");
      assert.equal(res.status, 200, res.text);
      const doc = res.body;
      assert.equal(doc.$schema, `${server.url}/schemas/project-document.json`);
      assert.equal(doc.version, 1);
      assert.deepEqual(doc.project, { id: "shop", name: "Shop" });
      assert.deepEqual(
        doc.environments.map((e: any) => [e.id, e.default, e.protected, e.description]),
        [
          ["production", true, true, ""],
          ["staging", false, false, "Before production"],
        ],
      );
      assert.equal(doc.segments.length, 1);
      assert.equal("members" in doc.segments[0], false, "members only when asked");
      assert.deepEqual(doc.segments[0].conditions, [{ attribute: "plan", operator: "in", values: ["pro"] }]);
      assert.deepEqual(
        doc.flags.map((f: any) => f.name),
        ["checkout", "kill", "theme"],
        "by name, the archived one left out",
      );
      const checkout = doc.flags[0];
      assert.deepEqual([checkout.kind, checkout.permanent, checkout.type], ["release", false, "boolean"]);
      assert.deepEqual(Object.keys(checkout.environments), ["production", "staging"]);
      const staging = checkout.environments.staging;
      assert.deepEqual(staging.actors, ["alice", "bob"], "sorted");
      assert.deepEqual(staging.segments, [doc.segments[0].id]);
      assert.deepEqual(staging.prerequisites, [{ flag: "kill", variants: ["off"] }]);
      assert.deepEqual(staging.rolloutPlan, { steps: [{ at: "2030-01-01T00:00:00.000Z", percentage: 50 }] });
      assert.equal(staging.percentageActors, 25);
      assert.equal("rolloutPlan" in checkout.environments.production, false);
      assert.deepEqual(doc.flags[2].environments.staging.rules[0].serve, { variant: "dark" });

      // Valid against the schema the server serves, which is the one the repository keeps.
      const served = await server.request("GET", "/schemas/project-document.json", { key: null });
      assert.equal(served.status, 200);
      assert.match(served.headers.get("content-type") ?? "", /^application\/schema\+json/);
      assert.deepEqual(
        served.body,
        REPOSITORY_SCHEMA,
        "schemas/project-document.schema.json is up to date (node scripts/write-schemas.mjs)",
      );
      const ajv = new Ajv({ allErrors: true, strict: false });
      addFormats.default(ajv);
      const validate = ajv.compile(served.body);
      assert.equal(validate(doc), true, JSON.stringify(validate.errors));
      const members = (await server.request("GET", "/projects/shop/export?members=true")).body;
      assert.deepEqual(members.segments[0].members, ["adam", "zoe"]);
      assert.equal(validate(members), true, JSON.stringify(validate.errors));
      // A document that is not one is refused by the schema (what an editor shows).
      assert.equal(validate({ ...doc, version: 2 }), false);
      assert.equal(validate({ ...doc, flags: [{ ...checkout, kind: "forever" }] }), false);
    });

    test("the same state exports the same bytes; its ETag is the project's revision and moves with a write", async () => {
      const first = await server.request("GET", "/projects/shop/export");
      const again = await server.request("GET", "/projects/shop/export");
      assert.equal(again.text, first.text);
      const etag = first.headers.get("etag");
      assert.match(etag ?? "", /^"r\d+"$/);
      assert.equal(again.headers.get("etag"), etag);
      // A poller that has this revision gets 304 and no body, until the project changes.
      const unchanged = await server.request("GET", "/projects/shop/export", {
        headers: { "if-none-match": etag as string },
      });
      assert.equal(unchanged.status, 304);
      assert.equal(unchanged.text, "");
      assert.equal(unchanged.headers.get("etag"), etag);
      const otherTag = await server.request("GET", "/projects/shop/export", { headers: { "if-none-match": '"r1"' } });
      assert.equal(otherTag.status, 200);
      const patched = await server.request("PATCH", "/projects/shop/flags/kill", {
        body: { description: "Stops payments" },
      });
      assert.equal(patched.status, 200, patched.text);
      const after = await server.request("GET", "/projects/shop/export");
      assert.notEqual(after.headers.get("etag"), etag);
      assert.notEqual(after.text, first.text);
      const stale = await server.request("GET", "/projects/shop/export", {
        headers: { "if-none-match": etag as string },
      });
      assert.equal(stale.status, 200, "the project changed since");
    });

    test("refusals: no key, a check key, a key bound to one environment, another project, unknown project, bad query", async () => {
      expectProblem(await server.request("GET", "/projects/shop/export", { key: null }), 401, "unauthorized");
      const check = await createKey(server, "shop", "check");
      expectProblem(await server.request("GET", "/projects/shop/export", { key: check.key }), 403, "forbidden");
      // A key bound to one environment reads only that one's configurations (here are two).
      const bound = await createKey(server, "shop", "read");
      const refused = await server.request("GET", "/projects/shop/export", { key: bound.key });
      expectProblem(refused, 403, "forbidden");
      assert.match(refused.body.detail, /bound to environment "production"/);
      const unbound = await server.request("POST", "/projects/shop/keys", {
        body: { role: "write", name: "exporter", environment: null },
      });
      assert.equal((await server.request("GET", "/projects/shop/export", { key: unbound.body.key })).status, 200);
      expectProblem(await server.request("GET", "/projects/none/export"), 404, "project_not_found");
      expectProblem(await server.request("GET", "/projects/shop/export?members=maybe"), 400, "invalid_request");
      expectProblem(await server.request("GET", "/projects/shop/export?other=1"), 400, "invalid_request");
    });
  });
}

describe("the same project on every dialect exports the same document", { skip: DIALECTS.length < 2 }, () => {
  test("SQLite and PostgreSQL answer the same document", async () => {
    const documents: string[] = [];
    for (const dialect of DIALECTS) {
      const server = await startServer({ dialect });
      try {
        await build(server, "twin");
        const doc = (await server.request("GET", "/projects/twin/export?members=true")).body;
        // The segment's id is made by each server; the schema URL names each server.
        const id = doc.segments[0].id;
        documents.push(JSON.stringify({ ...doc, $schema: "" }).replaceAll(id, "SEGMENT"));
      } finally {
        await server.close();
      }
    }
    assert.equal(documents[1], documents[0]);
  });
});
