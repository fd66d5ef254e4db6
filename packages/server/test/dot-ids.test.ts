import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createProject, DIALECTS, expectProblem, startServer, type TestServer } from "@flagstaff/test-harness";

// "." and ".." are path steps to every HTTP client (fetch, browsers and curl resolve them), so an id
// spelled that way could be created but never addressed again: both are refused as ids.
describe(`ids that are path steps [${DIALECTS[0]}]`, () => {
  let server: TestServer;
  let project: string;
  before(async () => {
    server = await startServer({ dialect: DIALECTS[0] ?? "sqlite" });
    project = await createProject(server);
    await server.request("POST", `/projects/${project}/flags/f`, {});
  });
  after(() => server.close());

  test("project ids . and .. are refused; ... and .a are fine", async () => {
    for (const id of [".", ".."]) {
      const res = await server.request("POST", "/projects", { body: { id, name: "x" } });
      expectProblem(res, 400, "invalid_request");
      assert.equal(res.body.errors[0].path, "/id");
    }
    for (const id of ["...", ".a"]) {
      assert.equal((await server.request("POST", "/projects", { body: { id, name: "x" } })).status, 201);
    }
  });

  test("actor ids . and .. are refused in flag and segment updates and in checks", async () => {
    for (const id of [".", ".."]) {
      const patch = await server.request("PATCH", `/projects/${project}/flags/f`, { body: { addActors: [id] } });
      expectProblem(patch, 400, "invalid_request");
      assert.equal(patch.body.errors[0].path, "/addActors/0");
      const check = await server.request("GET", `/projects/${project}/flags/f/check?actorIds=${id}`);
      expectProblem(check, 400, "invalid_request");
    }
    assert.equal(
      (await server.request("PATCH", `/projects/${project}/flags/f`, { body: { addActors: ["..."] } })).status,
      200,
    );
  });
});
