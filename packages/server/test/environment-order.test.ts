// Reordering a project's environments (docs/environments.md): PATCH …/environments/{e} {position} moves one
// to a place in the project's order, the list follows, the history records the move, a new environment
// goes last, out-of-range places are refused, and neither a writer nor a key bound to one environment may
// move one. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ApiResponse,
  createKey,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { createPerson, grant, personalKey, signIn } from "./helpers/people.js";

const ids = (res: ApiResponse) => (res.body.data as { id: string }[]).map((e) => e.id);

for (const dialect of DIALECTS) {
  describe(`environments' order [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    let counter = 0;
    /** A project with development, staging and production, in that order (development the default). */
    async function project(): Promise<string> {
      const id = `order-${dialect}-${++counter}`;
      const res = await server.request("POST", "/projects", {
        body: {
          id,
          name: id,
          environments: [
            { id: "development", name: "Development" },
            { id: "staging", name: "Staging" },
            { id: "production", name: "Production" },
          ],
        },
      });
      assert.equal(res.status, 201, res.text);
      return id;
    }
    const order = async (p: string) => ids(await server.request("GET", `/projects/${p}/environments`));
    const move = (p: string, e: string, body: unknown, key?: string) =>
      server.request("PATCH", `/projects/${p}/environments/${e}`, { body, ...(key ? { key } : {}) });

    test("position moves an environment to that place; the others keep their order; the history records it", async () => {
      const p = await project();
      assert.deepEqual(await order(p), ["development", "staging", "production"]);

      const first = await move(p, "production", { position: 1 });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.id, "production");
      assert.deepEqual(await order(p), ["production", "development", "staging"]);

      const last = await move(p, "production", { position: 3 });
      assert.equal(last.status, 200, last.text);
      assert.deepEqual(await order(p), ["development", "staging", "production"]);

      // A move and a rename in one PATCH: one event, with both.
      const both = await move(p, "staging", { position: 1, name: "Stage" });
      assert.equal(both.status, 200, both.text);
      assert.equal(both.body.name, "Stage");
      assert.deepEqual(await order(p), ["staging", "development", "production"]);

      const events = await server.request("GET", `/projects/${p}/events?type=environment.updated`);
      assert.equal(events.status, 200, events.text);
      const moves = (events.body.data as any[]).map((e) => [e.target.id, e.before.position, e.after.position]);
      // Newest first.
      assert.deepEqual(moves, [
        ["staging", 2, 1],
        ["production", 1, 3],
        ["production", 3, 1],
      ]);
      const renamed = (events.body.data as any[])[0];
      assert.deepEqual([renamed.before.name, renamed.after.name], ["Staging", "Stage"]);

      // Where it is already: nothing changes, and nothing is recorded.
      const same = await move(p, "staging", { position: 1 });
      assert.equal(same.status, 200, same.text);
      assert.equal(same.body.updatedAt, both.body.updatedAt);
      const after = await server.request("GET", `/projects/${p}/events?type=environment.updated`);
      assert.equal(after.body.data.length, 3);

      // A new environment goes last; pages of one walk the new order.
      const created = await server.request("POST", `/projects/${p}/environments`, {
        body: { id: "qa", name: "QA" },
      });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(await order(p), ["staging", "development", "production", "qa"]);
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const page: ApiResponse = await server.request(
          "GET",
          `/projects/${p}/environments?limit=1${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`,
        );
        assert.equal(page.status, 200, page.text);
        walked.push(...ids(page));
        cursor = page.body.pagination.after;
      } while (cursor !== null);
      assert.deepEqual(walked, ["staging", "development", "production", "qa"]);
    });

    test("a place past the last, or below 1, is refused (400 at /position) and changes nothing", async () => {
      const p = await project();
      for (const position of [4, 0, -1, 1.5, "1"]) {
        const res = await move(p, "staging", { position });
        expectProblem(res, 400, "invalid_request");
        assert.ok(
          (res.body.errors as { path: string }[]).some((e) => e.path === "/position"),
          `an error at /position for ${JSON.stringify(position)}: ${res.text}`,
        );
      }
      assert.deepEqual(await order(p), ["development", "staging", "production"]);
    });

    test("a writer may not move one; a key bound to one environment may rename its own but not move it (403)", async () => {
      const p = await project();
      const write = await createKey(server, p, "write");
      expectProblem(await move(p, "staging", { position: 1 }, write.key), 403, "forbidden");

      const admin = await createPerson(server);
      await grant(server, p, admin.id, "admin");
      const cookie = await signIn(server, admin.email);
      const bound = await personalKey(server, cookie, { project: p, environment: "staging", role: "admin" });
      const refused = await move(p, "staging", { position: 1 }, bound.key);
      expectProblem(refused, 403, "forbidden");
      // Where it already is, nothing moves: the bound key's rename of its own goes through as before.
      assert.equal((await move(p, "staging", { position: 2, name: "Stage" }, bound.key)).status, 200);
      expectProblem(await move(p, "staging", { position: 3 }, bound.key), 403, "forbidden");
      assert.deepEqual(await order(p), ["development", "staging", "production"]);

      // The same person signed in (not bound) moves it.
      const res = await server.request("PATCH", `/projects/${p}/environments/staging`, {
        key: null,
        headers: { cookie, "sec-fetch-site": "same-origin" },
        body: { position: 3 },
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(await order(p), ["development", "production", "staging"]);
    });
  });
}
