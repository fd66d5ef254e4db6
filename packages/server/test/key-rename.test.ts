// Renaming a key (issue 32, finding 13): the first admin key is "generated at first start" in every history
// row until renamed. A project's key is renamed with PATCH /projects/{p}/keys/{id} {name} (admins); an
// admin key with `flagstaff-server admin-key rename` (admin keys are not managed over the API). The history
// records key.updated; every change made with the key afterwards names it so, on every instance.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { runAdminKeyCommand } from "../src/admin-key-command.js";
import { asSession, createPerson, grant, personalKey, signIn } from "./helpers/people.js";

/** Runs `admin-key <argv>` in this process; answers its exit code and output. */
async function adminKey(argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = {
    env: {},
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  };
  const code = await runAdminKeyCommand(argv, io);
  return { code, stdout, stderr };
}

for (const dialect of DIALECTS) {
  describe(`renaming keys [${dialect}]`, () => {
    let database: FreshDatabase;
    let a: TestServer;
    let b: TestServer;

    before(async () => {
      database = await freshDatabase(dialect);
      const env = { FEED_POLL_INTERVAL_MS: "100" };
      a = await startServer({ dialect, database, env });
      b = await startServer({ dialect, database, env });
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await database?.drop();
    });

    /** The actor of the newest event of a project, as the history names it. */
    const newestActor = async (server: TestServer, project: string) =>
      (await server.request("GET", `/projects/${project}/events?limit=1`)).body.data[0].actor;

    test("PATCH a project's key {name}: answered, listed, recorded as key.updated, and its later changes name it so", async () => {
      const project = await createProject(a);
      const { key, id } = await createKey(a, project, "write");
      const renamed = await a.request("PATCH", `/projects/${project}/keys/${id}`, { body: { name: "ci pipeline" } });
      assert.equal(renamed.status, 200, renamed.text);
      assert.deepEqual(
        {
          id: renamed.body.id,
          name: renamed.body.name,
          role: renamed.body.role,
          environment: renamed.body.environment,
        },
        { id, name: "ci pipeline", role: "write", environment: "production" },
      );
      const listed = (await a.request("GET", `/projects/${project}/keys`)).body.data;
      assert.equal(listed.find((k: { id: string }) => k.id === id).name, "ci pipeline");

      const event = (await a.request("GET", `/projects/${project}/events?type=key.updated`)).body.data[0];
      assert.equal(event.type, "key.updated");
      assert.deepEqual(event.target, { kind: "key", id, name: "ci pipeline" });
      assert.equal(event.before.name, "write key");
      assert.equal(event.after.name, "ci pipeline");
      assert.ok(!JSON.stringify(event).includes(key), "never the secret");

      // The key keeps working, and what it changes is recorded under its new name, on this instance and the other.
      for (const [server, flag] of [
        [a, "by-a"],
        [b, "by-b"],
      ] as const) {
        await waitFor(
          "the instance to name the key by its new name",
          async () => {
            const res = await server.request("POST", `/projects/${project}/flags/${flag}-${Date.now()}`, {
              key,
              body: {},
            });
            assert.equal(res.status, 201, res.text);
            return (await newestActor(server, project)).keyName;
          },
          { until: (name) => name === "ci pipeline" },
        );
      }

      // The same name again, or nothing, changes nothing and records nothing.
      const events = (await a.request("GET", `/projects/${project}/events?type=key.`)).body.data.length;
      for (const body of [{ name: "ci pipeline" }, {}]) {
        const same = await a.request("PATCH", `/projects/${project}/keys/${id}`, { body });
        assert.equal(same.status, 200, same.text);
        assert.equal(same.body.name, "ci pipeline");
      }
      assert.equal((await a.request("GET", `/projects/${project}/events?type=key.`)).body.data.length, events);
    });

    test("refusals: not an admin, an unknown or personal key, another project's key, a bad name", async () => {
      const project = await createProject(a);
      const other = await createProject(a);
      const writer = await createKey(a, project, "write");
      const foreign = await createKey(a, other, "read");
      const path = (id: string, p = project) => `/projects/${p}/keys/${id}`;
      expectProblem(
        await a.request("PATCH", path(writer.id), { key: writer.key, body: { name: "mine" } }),
        403,
        "forbidden",
      );
      expectProblem(await a.request("PATCH", path("key_nope"), { body: { name: "x" } }), 404, "key_not_found");
      expectProblem(await a.request("PATCH", path(foreign.id), { body: { name: "x" } }), 404, "key_not_found");
      const person = await createPerson(a, { role: "member" });
      await grant(a, project, person.id, "admin");
      const cookie = await signIn(a, person.email);
      const personal = await personalKey(a, cookie, { project, role: "read" });
      expectProblem(await a.request("PATCH", path(personal.id), { body: { name: "x" } }), 404, "key_not_found");
      for (const body of [{ name: "" }, { name: "x".repeat(129) }, { name: "ok", role: "admin" }]) {
        expectProblem(await a.request("PATCH", path(writer.id), { body }), 400, "invalid_request");
      }
      // A project admin (a person) may rename the project's keys.
      const byOwner = await a.request("PATCH", path(writer.id), { ...asSession(cookie), body: { name: "renamed" } });
      assert.equal(byOwner.status, 200, byOwner.text);
    });

    test("admin-key rename: the first admin key gets a name; the running servers name its changes so", async () => {
      const database_ = ["--database-url", database.url];
      const created = JSON.parse(
        (await adminKey(["create", "--name", "generated at first start", "--json", ...database_])).stdout,
      );
      await waitFor(
        "A to accept the new admin key",
        async () => (await a.request("GET", "/projects", { key: created.key })).status,
        {
          until: (status) => status === 200,
        },
      );
      const renamed = await adminKey(["rename", created.id, "--name", "ops laptop", ...database_]);
      assert.equal(renamed.code, 0, renamed.stderr);
      assert.match(renamed.stdout, new RegExp(`Renamed admin key ${created.id} to "ops laptop"`));
      const listed = JSON.parse((await adminKey(["list", "--json", ...database_])).stdout);
      assert.equal(listed.find((k: { id: string }) => k.id === created.id).name, "ops laptop");
      for (const server of [a, b]) {
        await waitFor(
          "the instance to name the admin key by its new name",
          async () => {
            const id = `renamed-${Math.random().toString(36).slice(2, 10)}`;
            const made = await server.request("POST", "/projects", { key: created.key, body: { id, name: id } });
            assert.equal(made.status, 201, made.text);
            return (await server.request("GET", `/projects/${id}/events?limit=1`)).body.data[0].actor.keyName;
          },
          { until: (name) => name === "ops laptop" },
        );
      }
      // Refusals: no --name, an unknown key, a project's key (admin keys only).
      assert.equal((await adminKey(["rename", created.id, ...database_])).code, 2);
      const unknown = await adminKey(["rename", "key_nope", "--name", "x", ...database_]);
      assert.equal(unknown.code, 3);
      assert.match(unknown.stderr, /No admin key with id "key_nope"/);
      const projectKey = await createKey(a, await createProject(a), "write");
      assert.equal((await adminKey(["rename", projectKey.id, "--name", "x", ...database_])).code, 3);
    });
  });
}
