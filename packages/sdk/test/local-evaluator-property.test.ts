import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { createKey, createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import { createLocalEvaluator, type LocalEvaluator } from "../src/index.js";

// For random projects (flags with any status, the allowed percentages, attached actors and segments with
// members) and random actor sets, the local evaluator and the server's check agree on every
// deterministic answer. Written through the real API, read back through the real stream.

/** FUZZ_RUNS scales the run count as in the server's fuzz tests (1 is the full count). */
const SCALE = Number(process.env.FUZZ_RUNS ?? "1");
const RUNS = Math.max(3, Math.round(12 * SCALE));

const PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100] as const;
const ACTORS = ["ana", "bo", "cy", "dee", "eli", "fay", "gus", "hal", "ivy", "jo"];

const actor = fc.constantFrom(...ACTORS);
const flagArb = fc.record({
  status: fc.constantFrom("enabled", "disabled", "conditional"),
  percentageActors: fc.constantFrom(...PERCENTAGES),
  // Calls at 0 or 100 % are deterministic; 10 % is compared only where an earlier rule decides.
  percentageCalls: fc.constantFrom(0, 0, 10, 100),
  actors: fc.uniqueArray(actor, { maxLength: 3 }),
  segments: fc.uniqueArray(fc.integer({ min: 0, max: 1 }), { maxLength: 2 }),
});
const projectArb = fc.record({
  flags: fc.array(flagArb, { minLength: 1, maxLength: 3 }),
  members: fc.tuple(fc.uniqueArray(actor, { maxLength: 4 }), fc.uniqueArray(actor, { maxLength: 4 })),
  actorSets: fc.array(fc.uniqueArray(actor, { maxLength: 3 }), { minLength: 1, maxLength: 5 }),
});

for (const dialect of DIALECTS) {
  describe(`local evaluator agrees with the server's check [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let reader: string;
    let checker: string;
    let local: LocalEvaluator;

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "property");
      reader = (await createKey(server, project, "read")).key;
      checker = (await createKey(server, project, "check")).key;
      // Its call draws always miss a call rollout under 100 %: an answer it gives "on" is then on by a
      // deterministic rule, which the server must give too, whatever its own draw.
      local = createLocalEvaluator({ url: server.url, key: reader, projectId: project, random: () => 0.999_999 });
      await local.ready(10_000);
    });
    after(async () => {
      local.close();
      server.service.app.server.closeAllConnections();
      await server.close();
    });

    const write = async (method: string, path: string, body: unknown) => {
      const res = await server.request(method, `/projects/${project}${path}`, { body });
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
      return res.body;
    };

    test(`${RUNS} random projects, every flag, every actor set`, async () => {
      let run = 0;
      let compared = 0;
      await fc.assert(
        fc.asyncProperty(projectArb, async ({ flags, members, actorSets }) => {
          const prefix = `r${run++}`;
          const segments: string[] = [];
          for (const [i, list] of members.entries()) {
            const segment = await write("POST", "/segments", { name: `${prefix}-s${i}` });
            if (list.length > 0) await write("PATCH", `/segments/${segment.id}`, { addActors: list });
            segments.push(segment.id);
          }
          const names: string[] = [];
          for (const [i, flag] of flags.entries()) {
            const name = `${prefix}-f${i}`;
            await write("POST", `/flags/${name}`, {});
            await write("PATCH", `/flags/${name}`, {
              status: flag.status,
              percentageActors: flag.percentageActors,
              percentageCalls: flag.percentageCalls,
              addActors: flag.actors,
              addSegments: flag.segments.map((n) => segments[n]),
            });
            names.push(name);
          }
          // Changes arrive in order: once the marker is here, so is everything before it.
          await write("POST", `/flags/${prefix}-marker`, {});
          await waitFor(`the marker of ${prefix}`, () => local.flagNames().includes(`${prefix}-marker`));
          for (const [i, name] of names.entries()) {
            for (const actors of actorSets) {
              const mine = local.evaluate(name, actors);
              const calls = flags[i]!.percentageCalls;
              // At 10 %, "off" here may be "on" there by the server's call draw: only "on" is compared.
              if (calls === 10 && !mine.enabled) continue;
              const query = actors.map((a) => `actorIds=${a}`).join("&");
              const res = await server.request("GET", `/projects/${project}/flags/${name}/check?${query}`, {
                key: checker,
              });
              assert.equal(res.status, 200, res.text);
              assert.equal(
                mine.enabled,
                res.body.enabled,
                `${name} for [${actors.join(",")}]: ${JSON.stringify(mine)}`,
              );
              compared++;
            }
          }
        }),
        { numRuns: RUNS },
      );
      assert.ok(compared > RUNS, `compared ${compared} answers`);
    });
  });
}
