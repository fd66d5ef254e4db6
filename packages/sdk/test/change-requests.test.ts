import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ADMIN_KEY, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import { FlagstaffClient, type FlagstaffError } from "../src/index.js";

// The SDK's change requests (issue 35): every operation of `client.changeRequests` against a real server,
// and the errors it answers as FlagstaffError with their codes.

const PASSWORD = "correct horse battery staple";

for (const dialect of DIALECTS) {
  describe(`SDK: change requests against a real server (${dialect})`, () => {
    let server: TestServer;
    let admin: FlagstaffClient;
    let project: string;
    /** A person with write on the project, through a personal key of theirs. */
    let person: FlagstaffClient;

    before(async () => {
      server = await startServer({ dialect });
      admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
      project = await createProject(server);
      const user = await admin.users.create({ email: `p-${project}@example.com`, name: "Pat", password: PASSWORD });
      await admin.access.grant(project, user.id, "write");
      const session = await server.request("POST", "/auth/login", {
        key: null,
        body: { email: `p-${project}@example.com`, password: PASSWORD },
      });
      const cookie = (session.headers.getSetCookie()[0] ?? "").split(";")[0] as string;
      const key = await server.request("POST", "/users/me/keys", {
        key: null,
        headers: { cookie, "sec-fetch-site": "same-origin" },
        body: { name: "sdk", project, role: "write" },
      });
      assert.equal(key.status, 201, key.text);
      person = new FlagstaffClient({ baseUrl: server.url, apiKey: key.body.key });
      await admin.flags.create(project, "checkout");
    });
    after(() => server.close());

    test("create, list, get, review, apply, cancel and the schedule", async () => {
      const env = await admin.environments.update(project, "production", { requiredApprovals: 1 });
      assert.equal(env.requiredApprovals, 1);
      await assert.rejects(
        admin.flags.update(project, "checkout", { status: "enabled" }),
        (error: FlagstaffError) => error.code === "approval_required" && error.status === 409,
      );
      const created = await admin.changeRequests.create(project, {
        environment: "production",
        title: "On",
        changes: [{ flag: "checkout", patch: { status: "enabled" } }],
      });
      assert.equal(created.state, "open");
      const later = await admin.changeRequests.create(project, {
        environment: "production",
        title: "Later",
        changes: [{ flag: "checkout", patch: { percentageCalls: 5 } }],
        scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      assert.deepEqual(
        (await admin.changeRequests.list(project, { state: ["open"] }).toArray()).map((r) => r.title),
        ["Later", "On"],
      );
      assert.deepEqual(
        (await admin.changeRequests.schedule(project)).map((e) => e.changeRequest?.id),
        [later.id],
      );
      const reviewed = await person.changeRequests.review(project, created.id, { decision: "approve" });
      assert.equal(reviewed.state, "approved");
      const edited = await admin.changeRequests.update(project, later.id, { title: "Later still" });
      assert.equal(edited.title, "Later still");
      const applied = await admin.changeRequests.apply(project, created.id);
      assert.equal(applied.state, "applied");
      assert.equal((await admin.changeRequests.get(project, created.id)).appliedBy?.type, "key");
      assert.equal((await admin.changeRequests.cancel(project, later.id)).state, "cancelled");
      await assert.rejects(
        admin.changeRequests.apply(project, later.id, { reason: "x" }),
        (error: FlagstaffError) => error.code === "change_request_state",
      );
      await assert.rejects(
        admin.changeRequests.get(project, "cr_nope"),
        (error: FlagstaffError) => error.code === "change_request_not_found" && error.status === 404,
      );
    });
  });
}
