import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createProject, DIALECTS, expectProblem, ManualClock, startServer, type TestServer } from "./helpers/server.js";

for (const dialect of DIALECTS) {
  describe(`flags [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const clock = new ManualClock();
    before(async () => {
      server = await startServer({ dialect, clock });
      project = await createProject(server);
    });
    after(() => server.close());

    test("create answers 201 with Location, disabled, 0 %, latestCheckedAt null, statusChangedAt = createdAt", async () => {
      const res = await server.request("POST", `/projects/${project}/flags/new-checkout`, {
        body: { description: "The new checkout" },
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("location"), `/projects/${project}/flags/new-checkout`);
      const flag = res.body;
      assert.equal(flag.name, "new-checkout");
      assert.equal(flag.projectId, project);
      assert.equal(flag.description, "The new checkout");
      assert.equal(flag.status, "disabled");
      assert.equal(flag.percentageActors, 0);
      assert.equal(flag.percentageCalls, 0);
      assert.equal(flag.latestCheckedAt, null);
      assert.equal(flag.createdAt, "2026-11-22T10:00:00.000Z");
      assert.equal(flag.updatedAt, flag.createdAt);
      assert.equal(flag.statusChangedAt, flag.createdAt);
      assert.match(flag.id, /^flg_/);
      const got = await server.request("GET", `/projects/${project}/flags/new-checkout`);
      assert.deepEqual(got.body, flag);
    });

    test("create of a taken name answers 409 flag_exists", async () => {
      await server.request("POST", `/projects/${project}/flags/dup`, { body: {} });
      expectProblem(await server.request("POST", `/projects/${project}/flags/dup`, { body: {} }), 409, "flag_exists");
    });

    test("update moves updatedAt on change, statusChangedAt only on a real status change", async () => {
      await server.request("POST", `/projects/${project}/flags/times`, { body: {} });
      clock.advance(1000);
      const a = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { description: "d" } });
      assert.equal(a.status, 200);
      assert.equal(a.body.updatedAt, "2026-11-22T10:00:01.000Z");
      assert.equal(a.body.statusChangedAt, "2026-11-22T10:00:00.000Z");
      clock.advance(1000);
      const b = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { status: "disabled" } });
      assert.equal(b.body.updatedAt, "2026-11-22T10:00:01.000Z", "same status is no change");
      const c = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { status: "enabled" } });
      assert.equal(c.body.statusChangedAt, "2026-11-22T10:00:02.000Z");
      assert.equal(c.body.updatedAt, "2026-11-22T10:00:02.000Z");
      clock.advance(1000);
      const d = await server.request("PATCH", `/projects/${project}/flags/times`, { body: { addActors: ["u1"] } });
      assert.equal(d.body.updatedAt, "2026-11-22T10:00:03.000Z", "membership change moves updatedAt");
      assert.equal(d.body.statusChangedAt, "2026-11-22T10:00:02.000Z");
      const e = await server.request("PATCH", `/projects/${project}/flags/times`, { body: {} });
      assert.deepEqual(e.body, d.body, "{} changes nothing");
    });
  });
}
