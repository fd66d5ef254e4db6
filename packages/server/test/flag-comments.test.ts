// A flag's PATCH may say why (`comment`): the console's pending-changes bar sends one with every save. The
// comment is recorded with the change's history event, shown by the history routes, and nothing else:
// a PATCH that changes nothing records nothing, a failed one records nothing, later events carry none.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { COMMENT_MAX_LENGTH } from "@flagstaff/core";
import {
  ADMIN_KEY,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

for (const dialect of DIALECTS) {
  describe(`a change's comment [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    const flagEvents = async (project: string, flag: string) => {
      const res = await server.request("GET", `/projects/${project}/flags/${flag}/events`, { key: ADMIN_KEY });
      assert.equal(res.status, 200, res.text);
      return res.body.data as { type: string; comment?: string; after: Record<string, unknown> }[];
    };

    test("is recorded with the change, shown by both history routes, and only with that change", async () => {
      const project = await createProject(server);
      assert.equal((await server.request("POST", `/projects/${project}/flags/f`, { key: ADMIN_KEY })).status, 201);
      const comment = "Turn on for the beta: approved by <b>Ana</b> & ops \u{1F680}";
      const patched = await server.request("PATCH", `/projects/${project}/flags/f`, {
        key: ADMIN_KEY,
        body: { status: "enabled", comment },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal("comment" in patched.body, false, "the flag itself carries no comment");
      await server.request("PATCH", `/projects/${project}/flags/f`, { key: ADMIN_KEY, body: { status: "disabled" } });

      const events = await flagEvents(project, "f");
      assert.deepEqual(
        events.map((e) => [e.type, e.after.status, e.comment]),
        [
          ["flag.updated", "disabled", undefined],
          ["flag.updated", "enabled", comment],
          ["flag.created", "disabled", undefined],
        ],
      );
      const all = await server.request("GET", `/projects/${project}/events?flag=f`, { key: ADMIN_KEY });
      assert.equal(all.body.data[1].comment, comment, "the project's history shows it too");
      assert.equal("comment" in all.body.data[0], false, "an event without one has no comment member");
    });

    test("a PATCH that changes nothing, or fails, records nothing", async () => {
      const project = await createProject(server);
      await server.request("POST", `/projects/${project}/flags/f`, { key: ADMIN_KEY });
      const same = await server.request("PATCH", `/projects/${project}/flags/f`, {
        key: ADMIN_KEY,
        body: { status: "disabled", comment: "nothing to do" },
      });
      assert.equal(same.status, 200, same.text);
      const stale = await server.request("PATCH", `/projects/${project}/flags/f`, {
        key: ADMIN_KEY,
        headers: { "if-match": '"stale"' },
        body: { status: "enabled", comment: "too late" },
      });
      expectProblem(stale, 412, "precondition_failed");
      const unknownSegment = await server.request("PATCH", `/projects/${project}/flags/f`, {
        key: ADMIN_KEY,
        body: { status: "enabled", addSegments: ["missing"], comment: "refused" },
      });
      assert.equal(unknownSegment.status >= 400, true, unknownSegment.text);
      assert.deepEqual(
        (await flagEvents(project, "f")).map((e) => e.type),
        ["flag.created"],
      );
    });

    test("an empty, too long or non-string comment is refused with 400, and nothing changes", async () => {
      const project = await createProject(server);
      await server.request("POST", `/projects/${project}/flags/f`, { key: ADMIN_KEY });
      for (const comment of ["", "x".repeat(COMMENT_MAX_LENGTH + 1), 42, null, ["why"]]) {
        const res = await server.request("PATCH", `/projects/${project}/flags/f`, {
          key: ADMIN_KEY,
          body: { status: "enabled", comment },
        });
        expectProblem(res, 400, "invalid_request");
      }
      const longest = "y".repeat(COMMENT_MAX_LENGTH);
      const ok = await server.request("PATCH", `/projects/${project}/flags/f`, {
        key: ADMIN_KEY,
        body: { status: "enabled", comment: longest },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal((await flagEvents(project, "f"))[0]!.comment, longest);
      assert.equal((await flagEvents(project, "f")).length, 2, "the refused PATCHes changed nothing");
    });
  });
}
