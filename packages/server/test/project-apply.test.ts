// Applying a project's document (issue 37; docs/flags-as-code.md, "Apply"): `POST /projects/{p}/apply`
// plans, object by object, what takes the project to the document, and makes it in one write (one event
// per change, one request id); a dry run changes nothing; If-Match with a stale revision is 412 with nothing
// applied; prune deletes what the document lacks; an environment that requires approvals gets a change
// request instead; every refusal. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { createKey, DIALECTS, expectProblem, startServer, type TestServer } from "@flagstaff/test-harness";

type Doc = Record<string, any>;

const clone = <T>(value: T): T => structuredClone(value);

for (const dialect of DIALECTS) {
  describe(`applying a project's document [${dialect}]`, () => {
    let server: TestServer;
    let n = 0;
    let project: string;
    let p: string;

    const ok = async (method: string, path: string, body?: unknown, status = 200) => {
      const res = await server.request(method, path, { body });
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      return res.body;
    };
    const exportOf = async () => {
      const res = await server.request("GET", `${p}/export?members=true`);
      assert.equal(res.status, 200, res.text);
      return { doc: res.body as Doc, etag: res.headers.get("etag") as string };
    };
    const apply = (doc: Doc, query = "", options: { key?: string; headers?: Record<string, string> } = {}) =>
      server.request("POST", `${p}/apply${query}`, { body: doc, ...options });
    const history = async () => (await ok("GET", `${p}/events?limit=100`)).data as Doc[];

    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    beforeEach(async () => {
      project = `apply-${++n}`;
      p = `/projects/${project}`;
      await ok("POST", "/projects", { id: project, name: "Shop" }, 201);
      await ok("POST", `${p}/environments`, { id: "staging", name: "Staging" }, 201);
      await ok("POST", `${p}/flags/checkout`, { description: "New checkout" }, 201);
      await ok(
        "POST",
        `${p}/flags/theme`,
        {
          type: "string",
          variants: [
            { key: "light", value: "#fff" },
            { key: "dark", value: "#000" },
          ],
        },
        201,
      );
    });

    test("a project's own export is an empty plan: nothing is written, the revision stays", async () => {
      const { doc, etag } = await exportOf();
      const events = (await history()).length;
      for (const query of ["?dryRun=true", "", "?prune=true"]) {
        const res = await apply(doc, query);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.changes, []);
        assert.equal(`"r${res.body.revision}"`, etag);
        assert.equal(res.body.baseRevision, res.body.revision);
      }
      assert.equal((await history()).length, events);
      assert.equal((await exportOf()).etag, etag);
    });

    test("changes every kind of object in one write, one event per change under one request id", async () => {
      const { doc } = await exportOf();
      const next = clone(doc);
      next.environments[1].description = "Before production";
      next.segments.push({
        id: "seg_beta",
        name: "beta",
        description: "Beta testers",
        conditions: [{ attribute: "plan", operator: "in", values: ["pro"] }],
        members: ["adam", "zoe"],
      });
      const checkout = next.flags.find((f: Doc) => f.name === "checkout");
      checkout.description = "The new checkout";
      Object.assign(checkout.environments.staging, {
        status: "conditional",
        percentageActors: 25,
        actors: ["alice", "bob"],
        segments: ["seg_beta"],
        prerequisites: [{ flag: "kill", variants: ["off"] }],
        rolloutPlan: { steps: [{ at: "2030-01-01T00:00:00.000Z", percentage: 50 }] },
      });
      const kill = clone(checkout);
      Object.assign(kill, { name: "kill", description: "", kind: "kill-switch", permanent: true });
      kill.environments = {
        production: { ...clone(doc.flags[0].environments.production), status: "enabled" },
        // Left out: a new flag's staging configuration is as created.
      };
      next.flags.push(kill);
      const theme = next.flags.find((f: Doc) => f.name === "theme");
      theme.variants.push({ key: "blue", value: "#00f" });
      theme.environments.production.rules = [
        { id: "pros", conditions: [{ operator: "in_segment", values: ["seg_beta"] }], serve: { variant: "blue" } },
      ];
      theme.environments.production.status = "conditional";
      next.flags.sort((a: Doc, b: Doc) => (a.name < b.name ? -1 : 1));

      const dry = await apply(next, "?dryRun=true");
      assert.equal(dry.status, 200, dry.text);
      assert.equal(dry.body.dryRun, true);
      const plan = dry.body.changes.map(
        (c: Doc) => `${c.action} ${c.object} ${c.id}${c.environment ? ` in ${c.environment}` : ""}`,
      );
      assert.deepEqual(plan, [
        "update environment staging",
        "create segment seg_beta",
        "update flag checkout",
        "create flag kill",
        "update flag theme",
        "update configuration kill in production",
        "update configuration theme in production",
        "update configuration checkout in staging",
      ]);
      const staging = dry.body.changes.at(-1);
      assert.deepEqual(
        staging.fields.find((f: Doc) => f.field === "actors"),
        { field: "actors", added: ["alice", "bob"], removed: [] },
      );
      assert.deepEqual(
        staging.fields.find((f: Doc) => f.field === "status"),
        {
          field: "status",
          before: "disabled",
          after: "conditional",
        },
      );
      // A dry run changed nothing.
      assert.deepEqual((await exportOf()).doc, doc);

      const res = await apply(next);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.dryRun, false);
      assert.deepEqual(res.body.changes, dry.body.changes);
      assert.equal(res.body.revision, res.body.baseRevision + 1);
      assert.equal(res.headers.get("etag"), `"r${res.body.revision}"`);
      const after = await exportOf();
      assert.equal(after.etag, `"r${res.body.revision}"`);
      const { $schema: _a, ...got } = after.doc;
      const { $schema: _b, ...want } = clone(next);
      want.flags[1].environments.staging = clone(doc.flags[0].environments.staging);
      assert.deepEqual(got, want);

      const all = await history();
      const requestId = all.find((e) => e.type === "flag.created" && e.target.name === "kill")?.requestId;
      assert.ok(requestId);
      const events = all.filter((e) => e.requestId === requestId);
      assert.deepEqual(events.map((e) => `${e.type} ${e.target.name}`).sort(), [
        "environment.updated Staging",
        "flag.created kill",
        "flag.updated checkout",
        "flag.updated checkout",
        "flag.updated kill",
        "flag.updated theme",
        "flag.updated theme",
        "segment.created beta",
        "segment.updated beta",
      ]);
      // Applying the same document again is an empty plan.
      const again = await apply(next);
      assert.deepEqual(again.body.changes, []);
    });

    test("environments' settings, the default and the order are applied", async () => {
      await ok("POST", `${p}/environments`, { id: "qa", name: "QA" }, 201);
      const { doc } = await exportOf();
      const next = clone(doc);
      next.environments.reverse();
      next.environments[0].default = true;
      next.environments[2].default = false;
      Object.assign(next.environments[1], {
        name: "Stage",
        protected: true,
        requiredApprovals: 2,
        allowSelfApproval: true,
      });
      const res = await apply(next);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.changes.map((c: Doc) => `${c.id}: ${c.fields.map((f: Doc) => f.field).join()}`),
        [
          "qa: default,position",
          // Moving qa first and staging second leaves production last.
          "staging: name,protected,requiredApprovals,allowSelfApproval,position",
        ],
      );
      const { $schema: _a, ...got } = (await exportOf()).doc;
      const { $schema: _b, ...want } = next;
      assert.deepEqual(got, want);
      assert.deepEqual((await apply(next)).body.changes, []);
    });

    test("If-Match with a stale revision is 412 and nothing is applied; the current one applies", async () => {
      const { doc, etag } = await exportOf();
      await ok("PATCH", `${p}/flags/checkout`, { status: "enabled" });
      const next = clone(doc);
      next.flags[0].description = "changed";
      const stale = await apply(next, "", { headers: { "if-match": etag } });
      expectProblem(stale, 412, "precondition_failed");
      const dryStale = await apply(next, "?dryRun=true", { headers: { "if-match": etag } });
      expectProblem(dryStale, 412, "precondition_failed");
      const now = await exportOf();
      assert.equal(now.doc.flags[0].description, "New checkout");
      const fresh = await apply(next, "", { headers: { "if-match": now.etag } });
      assert.equal(fresh.status, 200, fresh.text);
      // The document set production back to disabled (the PATCH above enabled it).
      assert.deepEqual(
        fresh.body.changes.map((c: Doc) => c.fields.map((f: Doc) => f.field).join()),
        ["description", "status"],
      );
    });

    test("prune deletes the flags and segments the document lacks; without it they stay", async () => {
      const segment = await ok("POST", `${p}/segments`, { name: "old" }, 201);
      const { doc } = await exportOf();
      const next = clone(doc);
      next.flags = next.flags.filter((f: Doc) => f.name !== "theme");
      next.segments = [];
      const kept = await apply(next);
      assert.deepEqual(kept.body.changes, []);
      const dry = await apply(next, "?prune=true&dryRun=true");
      assert.deepEqual(
        dry.body.changes.map((c: Doc) => `${c.action} ${c.object} ${c.id}`),
        ["delete flag theme", `delete segment ${segment.id}`],
      );
      assert.equal((await exportOf()).doc.flags.length, 2);
      const pruned = await apply(next, "?prune=true");
      assert.equal(pruned.status, 200, pruned.text);
      const after = (await exportOf()).doc;
      assert.deepEqual(
        after.flags.map((f: Doc) => f.name),
        ["checkout"],
      );
      assert.deepEqual(after.segments, []);
    });

    test("an environment that requires approvals gets one change request; the others are applied", async () => {
      await ok("PATCH", `${p}/environments/production`, { requiredApprovals: 1 });
      const { doc } = await exportOf();
      const next = clone(doc);
      for (const flag of next.flags) {
        flag.environments.production.status = "enabled";
        flag.environments.staging.status = "enabled";
      }
      const dry = await apply(next, "?dryRun=true");
      assert.equal(dry.status, 200, dry.text);
      assert.deepEqual(
        dry.body.changes.filter((c: Doc) => c.changeRequest).map((c: Doc) => `${c.id} in ${c.environment}`),
        ["checkout in production", "theme in production"],
      );
      assert.deepEqual(dry.body.changeRequests, []);
      const res = await apply(next);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.changeRequests.length, 1);
      const [opened] = res.body.changeRequests;
      assert.equal(opened.environment, "production");
      const request = await ok("GET", `${p}/change-requests/${opened.id}`);
      assert.equal(request.state, "open");
      assert.deepEqual(
        request.changes.map((c: Doc) => [c.flag, c.patch]),
        [
          ["checkout", { status: "enabled" }],
          ["theme", { status: "enabled" }],
        ],
      );
      const after = (await exportOf()).doc;
      assert.equal(after.flags[0].environments.production.status, "disabled");
      assert.equal(after.flags[0].environments.staging.status, "enabled");
      // A change the request could never apply refuses the document, and nothing is applied.
      const bad = clone(after);
      bad.flags[1].environments.production.onVariant = "purple";
      bad.flags[1].environments.staging.status = "disabled";
      const refused = await apply(bad);
      assert.equal(refused.status, 400, refused.text);
      assert.equal((await exportOf()).doc.flags[1].environments.staging.status, "enabled");
    });

    test("approvals: a document cannot lower its own bar, a variant still served waits, many changes make several requests", async () => {
      await ok("PATCH", `${p}/environments/production`, { requiredApprovals: 2 });
      const { doc } = await exportOf();
      // Lowering the environment's approvals and changing its flags in one document: the settings apply,
      // the flags' changes still go through a request.
      const lowered = clone(doc);
      lowered.environments[0].requiredApprovals = 0;
      lowered.flags[0].environments.production.status = "enabled";
      const res = await apply(lowered);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.changeRequests.length, 1);
      assert.equal((await exportOf()).doc.flags[0].environments.production.status, "disabled");
      await ok("POST", `${p}/change-requests/${res.body.changeRequests[0].id}/cancel`);
      await ok("PATCH", `${p}/environments/production`, { requiredApprovals: 1 });

      // Dropping a variant production still serves, while production's change waits: refused, and why.
      await ok("PATCH", `${p}/environments/production`, { requiredApprovals: 0 });
      await ok("PATCH", `${p}/flags/theme`, {
        variants: [
          { key: "light", value: "#fff" },
          { key: "dark", value: "#000" },
          { key: "blue", value: "#00f" },
        ],
      });
      await ok("PATCH", `${p}/flags/theme`, { onVariant: "blue" });
      await ok("PATCH", `${p}/environments/production`, { requiredApprovals: 1 });
      const served = clone((await exportOf()).doc);
      const theme = served.flags.find((f: Doc) => f.name === "theme");
      theme.variants = theme.variants.filter((v: Doc) => v.key !== "blue");
      theme.environments.production.onVariant = "light";
      const refused = await apply(served);
      expectProblem(refused, 409, "approval_required");
      assert.match(refused.body.detail, /drops a variant that environment "production" still serves/);

      // More than 100 configuration changes there: several requests, each of at most 100.
      const many = clone((await exportOf()).doc);
      for (let i = 0; i < 101; i++) {
        const flag = clone(many.flags.find((f: Doc) => f.name === "checkout"));
        flag.name = `bulk-${String(i).padStart(3, "0")}`;
        flag.environments.production.status = "enabled";
        many.flags.push(flag);
      }
      many.flags.sort((a: Doc, b: Doc) => (a.name < b.name ? -1 : 1));
      const bulk = await apply(many);
      assert.equal(bulk.status, 200, bulk.text);
      assert.deepEqual(
        bulk.body.changeRequests.map((r: Doc) => r.title),
        ["Apply: 100 changes in production (1 of 2)", "Apply: 1 change in production (2 of 2)"],
      );
    });

    test("a variant nothing serves is dropped in the same write, even from a flag of 50 variants", async () => {
      const variants = Array.from({ length: 50 }, (_, i) => ({ key: `v${i}`, value: `value ${i}` }));
      await ok("POST", `${p}/flags/wide`, { type: "string", variants }, 201);
      const { doc } = await exportOf();
      const next = clone(doc);
      const wide = next.flags.find((f: Doc) => f.name === "wide");
      wide.variants = [...wide.variants.filter((v: Doc) => v.key !== "v49"), { key: "v50", value: "value 50" }];
      const res = await apply(next);
      assert.equal(res.status, 200, res.text);
      const { $schema: _a, ...got } = (await exportOf()).doc;
      const { $schema: _b, ...want } = next;
      assert.deepEqual(got, want);
    });

    test("a document of 1,200 new flags: 2,400 events in one write (past SQLite's bound-parameter limit)", async () => {
      const { doc } = await exportOf();
      const next = clone(doc);
      const template = next.flags.find((f: Doc) => f.name === "checkout");
      for (let i = 0; i < 1200; i++) {
        const flag = clone(template);
        flag.name = `many-${String(i).padStart(4, "0")}`;
        flag.description = "";
        flag.environments.staging.status = "enabled";
        next.flags.push(flag);
      }
      next.flags.sort((a: Doc, b: Doc) => (a.name < b.name ? -1 : 1));
      const res = await apply(next);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.changes.length, 2400);
      const page = await ok("GET", `${p}/events?limit=1`);
      assert.equal(page.data[0].requestId, (await history()).find((e) => e.target.name === "many-1199")?.requestId);
      assert.equal((await exportOf()).doc.flags.length, 1202);
    });

    test("rights: each change needs the right its own route needs", async () => {
      const { doc } = await exportOf();
      const read = await createKey(server, project, "read");
      const write = await ok("POST", `${p}/keys`, { role: "write", name: "unbound", environment: null }, 201);
      const next = clone(doc);
      next.flags[0].environments.staging.status = "enabled";
      expectProblem(await apply(next, "", { key: read.key }), 403, "forbidden");
      expectProblem(await server.request("POST", `${p}/apply`, { body: next, key: null }), 401, "unauthorized");
      const bound = await ok("POST", `${p}/keys`, { role: "write", name: "bound", environment: "staging" }, 201);
      expectProblem(await apply(next, "", { key: bound.key }), 403, "forbidden");
      const written = await apply(next, "", { key: write.key });
      assert.equal(written.status, 200, written.text);
      // An environment's settings are a project admin's.
      const settings = clone(next);
      settings.environments[1].name = "Stage";
      expectProblem(await apply(settings, "?dryRun=true", { key: write.key }), 403, "forbidden");
      // A protected environment's configurations too.
      await ok("PATCH", `${p}/environments/production`, { protected: true });
      const protectedChange = clone(next);
      protectedChange.environments[0].protected = true;
      protectedChange.flags[0].environments.production.status = "enabled";
      expectProblem(await apply(protectedChange, "", { key: write.key }), 403, "environment_protected");
      assert.equal((await exportOf()).doc.flags[0].environments.production.status, "disabled");
    });

    test("documents that cannot be applied are refused with what is wrong, and nothing is applied", async () => {
      const { doc, etag } = await exportOf();
      const refuse = async (change: (d: Doc) => void, status: number, code: string, text?: RegExp) => {
        const next = clone(doc);
        change(next);
        const res = await apply(next);
        expectProblem(res, status, code);
        if (text) assert.match(res.text, text);
      };
      await refuse((d) => (d.project.id = "other"), 400, "invalid_request", /another project/);
      await refuse((d) => d.flags.push(clone(d.flags[0])), 400, "invalid_request", /listed twice/);
      await refuse(
        (d) => {
          d.environments.pop();
          for (const flag of d.flags) delete flag.environments.staging;
        },
        400,
        "invalid_request",
        /lacks the project's environment/,
      );
      await refuse(
        (d) => d.environments.push({ ...d.environments[1], id: "qa", default: false }),
        400,
        "invalid_request",
        /does not have/,
      );
      await refuse((d) => (d.environments[1].default = true), 400, "invalid_request", /exactly one/);
      await refuse((d) => (d.flags[0].environments.qa = d.flags[0].environments.staging), 400, "invalid_request");
      await refuse((d) => (d.flags[1].type = "number"), 400, "invalid_request", /type does not change/);
      await refuse((d) => (d.flags[0].environments.staging.onVariant = "nope"), 400, "invalid_request");
      await refuse((d) => (d.flags[0].environments.staging.percentageActors = 33), 400, "invalid_request");
      await refuse((d) => (d.version = 2), 400, "invalid_request");
      await refuse((d) => (d.flags[0].extra = true), 400, "invalid_request");
      // A flag named as a prerequisite that does not exist: refused in the write, which rolls back whole.
      await refuse(
        (d) => {
          d.flags[0].description = "would be applied first";
          d.flags[0].environments.staging.prerequisites = [{ flag: "ghost", variants: ["on"] }];
        },
        400,
        "invalid_request",
      );
      expectProblem(
        await server.request("POST", `${p}/apply`, {
          rawBody: "{not json",
          headers: { "content-type": "application/json" },
        }),
        400,
        "invalid_request",
      );
      expectProblem(
        await server.request("POST", `/projects/nope/apply`, { body: { ...doc, project: { id: "nope", name: "x" } } }),
        404,
        "project_not_found",
      );
      assert.equal((await exportOf()).etag, etag);
    });
  });
}
