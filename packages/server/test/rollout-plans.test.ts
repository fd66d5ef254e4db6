// Timed rollouts through the API (issue 35; docs/targeting.md, "Timed rollouts"): a flag's PATCH sets,
// pauses, resumes and removes a plan; the flag answers it with the step in force; bad plans are refused
// with what is wrong; the history records it; a copy to another environment carries it; the explanation
// names the threshold in force; and on the project stream a state with a plan is format 3 and a plan's
// change is a `flag.rollout` change, so an SDK that does not know plans stops instead of answering the
// flag's own percentage. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ApiResponse,
  createKey,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { addEnvironment } from "./helpers/environments.js";

const HOUR = 3_600_000;

function expectInvalid(res: ApiResponse, path: string): void {
  expectProblem(res, 400, "invalid_request");
  const paths = ((res.body.errors ?? []) as { path: string }[]).map((e) => e.path);
  assert.ok(
    paths.some((p) => p.startsWith(path)),
    `expected an error at ${path}, got ${res.text}`,
  );
}

for (const dialect of DIALECTS) {
  describe(`timed rollouts through the API [${dialect}]`, () => {
    const clock = new ManualClock();
    const at = (hours: number) => new Date(clock.now() + hours * HOUR).toISOString();
    let server: TestServer;

    before(async () => {
      server = await startServer({ dialect, clock, random: () => 0.999 });
    });
    after(() => server.close());

    async function planned(project: string, name: string, body: Record<string, unknown> = {}) {
      assert.equal((await server.request("POST", `/projects/${project}/flags/${name}`, { body: {} })).status, 201);
      const res = await server.request("PATCH", `/projects/${project}/flags/${name}`, {
        body: {
          status: "conditional",
          rolloutPlan: {
            steps: [
              { at: at(1), percentage: 10 },
              { at: at(2), percentage: 50 },
            ],
          },
          ...body,
        },
      });
      assert.equal(res.status, 200, res.text);
      return res.body;
    }

    test("a PATCH sets the plan; the flag answers it with the step in force; null removes it", async () => {
      const project = await createProject(server);
      const flag = await planned(project, "ramp");
      assert.deepEqual(flag.rolloutPlan, {
        steps: [
          { at: at(1), percentage: 10 },
          { at: at(2), percentage: 50 },
        ],
        paused: false,
        pausedAt: null,
        current: -1,
        percentageActors: 0,
        nextAt: at(1),
      });
      assert.equal(flag.percentageActors, 0);
      clock.advance(HOUR);
      const now = (await server.request("GET", `/projects/${project}/flags/ramp`)).body;
      assert.equal(now.rolloutPlan.current, 0);
      assert.equal(now.rolloutPlan.percentageActors, 10);
      const explained = await server.request("GET", `/projects/${project}/flags/ramp/explain?actorIds=a`);
      assert.equal(explained.status, 200, explained.text);
      assert.equal(explained.body.threshold, 10_000, "the explanation's threshold is the plan's in force");
      const schedule = await server.request("GET", `/projects/${project}/schedule`);
      assert.deepEqual(
        schedule.body.data.map((e: any) => [e.kind, e.flag, e.at, e.description]),
        [["rollout_step", "ramp", at(1), "ramp: actor rollout to 50 %"]],
      );

      const removed = await server.request("PATCH", `/projects/${project}/flags/ramp`, { body: { rolloutPlan: null } });
      assert.equal(removed.status, 200, removed.text);
      assert.equal(removed.body.rolloutPlan, undefined);
      const history = await server.request("GET", `/projects/${project}/flags/ramp/events`);
      const [last, set] = history.body.data;
      assert.ok(set.after.rolloutPlan, "the history records the plan set");
      assert.equal(set.before.rolloutPlan, undefined);
      assert.deepEqual(last.before.rolloutPlan, set.after.rolloutPlan);
      assert.equal(last.after.rolloutPlan, undefined, "and its removal");
    });

    test("bad plans are refused with where they are wrong, and nothing changes", async () => {
      const project = await createProject(server);
      assert.equal((await server.request("POST", `/projects/${project}/flags/f`, { body: {} })).status, 201);
      const patch = (rolloutPlan: unknown) =>
        server.request("PATCH", `/projects/${project}/flags/f`, { body: { rolloutPlan } });
      expectInvalid(await patch({ steps: [] }), "/rolloutPlan/steps");
      expectInvalid(await patch({ steps: [{ at: at(1), percentage: 33 }] }), "/rolloutPlan/steps/0");
      expectInvalid(await patch({ steps: [{ at: "next week", percentage: 5 }] }), "/rolloutPlan/steps/0/at");
      expectInvalid(
        await patch({
          steps: [
            { at: at(2), percentage: 5 },
            { at: at(1), percentage: 10 },
          ],
        }),
        "/rolloutPlan/steps/1/at",
      );
      expectInvalid(
        await patch({ steps: [{ at: at(1), ruleId: "nope", weights: [{ variant: "on", weight: 100 }] }] }),
        "/rolloutPlan/steps/0/ruleId",
      );
      expectInvalid(await patch({ steps: [{ at: at(1), percentage: 5 }], pausedAt: at(0) }), "/rolloutPlan");
      expectInvalid(await patch("soon"), "/rolloutPlan");
      const flag = (await server.request("GET", `/projects/${project}/flags/f`)).body;
      assert.equal(flag.rolloutPlan, undefined);
      assert.equal(flag.revision, undefined);
      // A rule a plan steps cannot be removed while the plan names it.
      const split = {
        id: "s",
        conditions: [],
        serve: {
          split: {
            weights: [
              { variant: "on", weight: 0 },
              { variant: "off", weight: 100 },
            ],
          },
        },
      };
      const withRule = await server.request("PATCH", `/projects/${project}/flags/f`, {
        body: {
          rules: [split],
          rolloutPlan: {
            steps: [
              {
                at: at(1),
                ruleId: "s",
                weights: [
                  { variant: "on", weight: 50 },
                  { variant: "off", weight: 50 },
                ],
              },
            ],
          },
        },
      });
      assert.equal(withRule.status, 200, withRule.text);
      expectInvalid(
        await server.request("PATCH", `/projects/${project}/flags/f`, { body: { rules: [] } }),
        "/rolloutPlan/steps/0/ruleId",
      );
    });

    test("a copy to another environment carries the plan; an environment copied at creation too", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "staging");
      await planned(project, "ramp");
      const copied = await server.request("POST", `/projects/${project}/flags/ramp/copy`, {
        body: { from: "production", to: "staging" },
      });
      assert.equal(copied.status, 200, copied.text);
      assert.deepEqual(copied.body.rolloutPlan?.steps.length, 2);
      await addEnvironment(server, project, "qa", { copyFrom: "production" });
      const qa = await server.request("GET", `/projects/${project}/flags/ramp?environment=qa`);
      assert.equal(qa.body.rolloutPlan?.steps.length, 2);
    });

    test("on the stream: format 3 with a plan, and a plan's change is a flag.rollout change", async () => {
      const project = await createProject(server);
      const reader = (await createKey(server, project, "read")).key;
      assert.equal((await server.request("POST", `/projects/${project}/flags/plain`, { body: {} })).status, 201);
      const plainStream = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, { key: reader });
      try {
        const snapshot = await plainStream.next("the snapshot", (e) => e.event === "snapshot");
        assert.equal(snapshot.data.state.format, 2, "without plans, older SDKs still read the state");
        await planned(project, "ramp");
        const change = await plainStream.next(
          "the plan's change",
          (e) => e.event === "change" && e.data.changes.some((c: { kind: string }) => c.kind === "flag.rollout"),
        );
        const rollout = change.data.changes.find((c: { kind: string }) => c.kind === "flag.rollout");
        assert.equal(rollout.rolloutPlan.steps.length, 2);
        const upserted = change.data.changes.find((c: { kind: string }) => c.kind === "flag.upserted");
        assert.equal(upserted?.flag.rolloutPlan, undefined, "the plan is not a field older SDKs would ignore");
      } finally {
        plainStream.close();
      }
      const stream = await EventStreamClient.open(`${server.url}/projects/${project}/stream`, { key: reader });
      try {
        const snapshot = await stream.next("the snapshot", (e) => e.event === "snapshot");
        assert.equal(snapshot.data.state.format, 3);
        const ramp = snapshot.data.state.flags.find((f: { name: string }) => f.name === "ramp");
        assert.equal(ramp.rolloutPlan.steps.length, 2);
      } finally {
        stream.close();
      }
    });

    test("OFREP's bulk ETag moves when a step's time passes", async () => {
      const project = await createProject(server);
      await planned(project, "ramp");
      const key = (await createKey(server, project, "check")).key;
      const bulk = (etag?: string) =>
        server.request("POST", "/ofrep/v1/evaluate/flags", {
          key,
          body: { context: { targetingKey: "a" } },
          ...(etag === undefined ? {} : { headers: { "if-none-match": etag } }),
        });
      const first = await bulk();
      const etag = first.headers.get("etag") ?? "";
      assert.equal((await bulk(etag)).status, 304);
      clock.advance(HOUR);
      assert.equal((await bulk(etag)).status, 200, "a step passed: a fresh answer");
    });
  });
}
