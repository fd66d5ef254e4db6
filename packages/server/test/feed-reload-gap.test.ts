// A stream read afresh (after the log was pruned, say) must swap the new state in at once: a valid key,
// a flag or a person's grant is never missing from memory while the read is under way. Requests run
// while the stream is reread again and again; not one of them may be refused or answer differently.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import { asSession, createPerson, grant, signIn } from "./helpers/people.js";

const RELOADS = 40;

for (const dialect of DIALECTS) {
  describe(`a stream reread during traffic [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      const res = await server.request("POST", `/projects/${project}/flags/lit`, {});
      assert.equal(res.status, 201, res.text);
      const on = await server.request("PATCH", `/projects/${project}/flags/lit`, { body: { status: "enabled" } });
      assert.equal(on.status, 200, on.text);
    });
    after(() => server.close());

    /** Runs `request` without a pause until `reloading` settles; answers every status it got. */
    async function during(reloading: Promise<unknown>, request: () => Promise<string>): Promise<Map<string, number>> {
      let done = false;
      const settled = reloading.finally(() => {
        done = true;
      });
      const seen = new Map<string, number>();
      const worker = async () => {
        while (!done) {
          const answer = await request();
          seen.set(answer, (seen.get(answer) ?? 0) + 1);
        }
      };
      await Promise.all([settled, worker(), worker(), worker(), worker()]);
      return seen;
    }

    const rereadMany = async (stream: string) => {
      for (let i = 0; i < RELOADS; i++) await server.service.feed.reloadStream(stream);
    };

    test("a project's keys and flags stay answerable while its stream is reread", async () => {
      const { key } = await createKey(server, project, "write");
      const seen = await during(rereadMany(project), async () => {
        const res = await server.request("GET", `/projects/${project}/flags/lit/check`, { key });
        return `${res.status} ${res.status === 200 ? res.body.enabled : res.text}`;
      });
      assert.deepEqual([...seen.keys()], ["200 true"], `answers during the rereads: ${JSON.stringify([...seen])}`);
    });

    test("a person's grant on the project survives a reread of the project's stream", async () => {
      const person = await createPerson(server, { role: "member" });
      await grant(server, project, person.id, "write");
      const cookie = await signIn(server, person.email);
      const seen = await during(rereadMany(project), async () => {
        const res = await server.request("GET", `/projects/${project}/flags/lit`, asSession(cookie));
        return String(res.status);
      });
      assert.deepEqual([...seen.keys()], ["200"], `answers during the rereads: ${JSON.stringify([...seen])}`);
      const res = await server.request("GET", `/projects/${project}/flags/lit`, asSession(cookie));
      assert.equal(res.status, 200, "the grant is still known after the rereads");
    });

    test("admin keys and people stay known while the global stream (people and admin keys) is reread", async () => {
      const person = await createPerson(server, { role: "admin" });
      const cookie = await signIn(server, person.email);
      const seen = await during(rereadMany(""), async () => {
        const [byKey, bySession] = await Promise.all([
          server.request("GET", "/projects"),
          server.request("GET", "/projects", asSession(cookie)),
        ]);
        return `${byKey.status}/${bySession.status}`;
      });
      assert.deepEqual([...seen.keys()], ["200/200"], `answers during the rereads: ${JSON.stringify([...seen])}`);
    });

    test("catching up while writes commit never mistakes a fresh write for a pruned log", async () => {
      let rereads = 0;
      const unlisten = server.service.feed.snapshot.listen({ reloaded: () => rereads++ });
      try {
        let done = false;
        const writes = (async () => {
          for (let i = 0; i < 30; i++) {
            const status = i % 2 === 0 ? "disabled" : "enabled";
            const res = await server.request("PATCH", `/projects/${project}/flags/lit`, { body: { status } });
            assert.equal(res.status, 200, res.text);
          }
        })().finally(() => {
          done = true;
        });
        // Each round yields to the event loop (SQLite's driver answers in microtasks) so the writes go on.
        const catchUps = async () => {
          while (!done) {
            await server.service.feed.catchUp(project);
            await new Promise((resolve) => setImmediate(resolve));
          }
        };
        await Promise.all([writes, catchUps(), catchUps()]);
      } finally {
        unlisten();
      }
      assert.equal(rereads, 0, "no stream was reread: the log held every change");
    });
  });
}
