import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  ManualClock,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import type { RolloutStepInput } from "@flagstaff/core/schemas";
import { createLocalEvaluator, type Flag, FlagstaffClient, type LocalEvaluator } from "../src/index.js";

// Timed rollouts (issue 35; docs/targeting.md, "Timed rollouts"): a plan steps a flag's actor percentage
// and a rule's split weights at set times, and the step in force is read from the clock at evaluation
// time. With one manual clock read by the server and by the SDK's local evaluator, both answer every actor
// alike on each side of every step's instant (1 ms before, at it), over the check, OFREP and the local
// evaluator; an actor in the rollout stays in as it grows; a paused plan holds its step on both, and a
// resumed one moves its remaining steps later by the pause.

const HOUR = 3_600_000;

/** A flag's plan steps as a PATCH sends them back. */
const stepsOf = (flag: Flag) => (flag.rolloutPlan?.steps ?? []) as RolloutStepInput[];
const ACTORS = Array.from({ length: 300 }, (_, i) => `actor-${i}`);

for (const dialect of DIALECTS) {
  describe(`timed rollouts: server and local evaluator alike [${dialect}]`, () => {
    const clock = new ManualClock();
    const start = clock.now();
    const at = (hours: number) => new Date(start + hours * HOUR).toISOString();
    let server: TestServer;
    let project: string;
    let admin: FlagstaffClient;
    let checker: FlagstaffClient;
    let checkKey: string;
    let local: LocalEvaluator;
    let markers = 0;

    /** Waits until the local evaluator has every change written so far (a new flag written last). */
    async function caughtUp(): Promise<void> {
      const marker = `marker-${++markers}`;
      await admin.flags.create(project, marker);
      await waitFor(`the local evaluator has ${marker}`, () => local.flagNames().includes(marker));
    }

    before(async () => {
      server = await startServer({ dialect, clock, random: () => 0.999 });
      project = await createProject(server);
      admin = new FlagstaffClient({ baseUrl: server.url, apiKey: (await createKey(server, project, "write")).key });
      checkKey = (await createKey(server, project, "check")).key;
      checker = new FlagstaffClient({ baseUrl: server.url, apiKey: checkKey });
      await admin.flags.create(project, "ramp");
      await admin.flags.update(project, "ramp", {
        status: "conditional",
        percentageActors: 1,
        rolloutPlan: {
          steps: [
            { at: at(1), percentage: 5 },
            { at: at(2), percentage: 25 },
            { at: at(3), percentage: 100 },
          ],
        },
      });
      await admin.flags.create(project, "layout", {
        type: "string",
        variants: [
          { key: "old", value: "old" },
          { key: "new", value: "new" },
        ],
      });
      await admin.flags.update(project, "layout", {
        status: "conditional",
        rules: [
          {
            id: "everyone",
            conditions: [],
            serve: {
              split: {
                weights: [
                  { variant: "old", weight: 100 },
                  { variant: "new", weight: 0 },
                ],
              },
            },
          },
        ],
        rolloutPlan: {
          steps: [
            {
              at: at(1),
              ruleId: "everyone",
              weights: [
                { variant: "old", weight: 90 },
                { variant: "new", weight: 10 },
              ],
            },
            {
              at: at(2),
              ruleId: "everyone",
              weights: [
                { variant: "old", weight: 50 },
                { variant: "new", weight: 50 },
              ],
            },
          ],
        },
      });
      local = createLocalEvaluator({
        url: server.url,
        key: (await createKey(server, project, "read")).key,
        projectId: project,
        now: () => clock.now(),
        random: () => 0.999,
      });
      await local.ready(10_000);
      await caughtUp();
    });
    after(async () => {
      await local?.close();
      await server?.close();
    });

    /** Every actor's answer to a flag from the local evaluator, the check and OFREP, compared; the local ones. */
    async function answersAlike(flag: string): Promise<Map<string, string | null>> {
      const mine = new Map<string, string | null>();
      for (const actor of ACTORS) {
        const answer = local.evaluate(flag, { actorIds: [actor] });
        mine.set(actor, answer.variant);
      }
      const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", {
        key: checkKey,
        body: { context: { targetingKey: ACTORS[0] } },
      });
      assert.equal(bulk.status, 200, bulk.text);
      // The check and OFREP for a sample of actors (every one would be 600 requests per instant).
      for (const actor of ACTORS.filter((_, i) => i % 15 === 0)) {
        const theirs = await checker.flags.evaluate(project, flag, { actorIds: [actor] });
        assert.equal(
          theirs.variant,
          mine.get(actor),
          `${flag} for ${actor} at ${new Date(clock.now()).toISOString()}: check`,
        );
        const single = await server.request("POST", `/ofrep/v1/evaluate/flags/${flag}`, {
          key: checkKey,
          body: { context: { targetingKey: actor } },
        });
        assert.equal(single.body.variant, mine.get(actor), `${flag} for ${actor}: OFREP`);
      }
      const first = bulk.body.flags.find((f: { key: string }) => f.key === flag);
      assert.equal(first.variant, mine.get(ACTORS[0] as string), `${flag}: OFREP bulk`);
      return mine;
    }

    const onCount = (answers: Map<string, string | null>, variant: string) =>
      [...answers.values()].filter((v) => v === variant).length;

    test("at every step's instant and the millisecond before it, every evaluator answers alike", async () => {
      const seen: Map<string, string | null>[] = [];
      for (const hours of [0, 1, 2, 3]) {
        for (const offset of [-1, 0]) {
          const target = start + hours * HOUR + offset;
          if (target < clock.now()) continue;
          clock.advance(target - clock.now());
          const ramp = await answersAlike("ramp");
          const layout = await answersAlike("layout");
          seen.push(ramp);
          const on = onCount(ramp, "on");
          const expected = hours === 0 || offset === -1 ? [1, 1, 5, 25][hours] : [1, 5, 25, 100][hours];
          // The share of 300 actors in a rollout of p % is p % within sampling error (a bucket is uniform).
          const share = (on / ACTORS.length) * 100;
          assert.ok(
            Math.abs(share - (expected as number)) <= Math.max(4, (expected as number) * 0.35),
            `ramp at ${hours} h ${offset} ms: ${share} % on, ${expected} % planned`,
          );
          const newShare = (onCount(layout, "new") / ACTORS.length) * 100;
          const planned =
            hours === 0 || (hours === 1 && offset === -1) ? 0 : hours === 1 || (hours === 2 && offset === -1) ? 10 : 50;
          assert.ok(
            Math.abs(newShare - planned) <= Math.max(4, planned * 0.35),
            `layout at ${hours} h ${offset} ms: ${newShare} % new, ${planned} % planned`,
          );
        }
      }
      // An actor in the rollout stays in as it grows.
      for (let i = 1; i < seen.length; i++) {
        for (const [actor, variant] of seen[i - 1] as Map<string, string | null>) {
          if (variant === "on")
            assert.equal((seen[i] as Map<string, string | null>).get(actor), "on", `${actor} left the rollout`);
        }
      }
      const flag = await admin.flags.get(project, "ramp");
      assert.equal(flag.rolloutPlan?.current, 2);
      assert.equal(flag.rolloutPlan?.percentageActors, 100);
      assert.equal(flag.rolloutPlan?.nextAt, null);
      assert.equal(flag.percentageActors, 1, "the configuration's own percentage is unchanged");
    });

    test("a paused plan holds its step on every evaluator; resumed, its remaining steps move later by the pause", async () => {
      await admin.flags.create(project, "paused");
      await admin.flags.update(project, "paused", {
        status: "conditional",
        rolloutPlan: {
          steps: [
            { at: new Date(clock.now() + HOUR).toISOString(), percentage: 10 },
            { at: new Date(clock.now() + 2 * HOUR).toISOString(), percentage: 50 },
          ],
        },
      });
      clock.advance(HOUR + 30 * 60_000);
      const before = await admin.flags.update(project, "paused", {
        rolloutPlan: { steps: stepsOf(await admin.flags.get(project, "paused")), paused: true },
      });
      assert.equal(before.rolloutPlan?.paused, true);
      assert.equal(before.rolloutPlan?.pausedAt, new Date(clock.now()).toISOString());
      await caughtUp();
      clock.advance(2 * HOUR);
      const held = await answersAlike("paused");
      const share = (onCount(held, "on") / ACTORS.length) * 100;
      assert.ok(Math.abs(share - 10) <= 5, `paused at 10 %: ${share} % on`);
      const schedule = await server.request("GET", `/projects/${project}/schedule`);
      assert.ok(
        !schedule.body.data.some((e: { flag?: string }) => e.flag === "paused"),
        "a paused plan's steps are not due",
      );

      const resumed = await admin.flags.update(project, "paused", {
        rolloutPlan: { steps: stepsOf(before), paused: false },
      });
      assert.equal(resumed.rolloutPlan?.paused, false);
      // Paused for two hours: the 50 % step, due 30 minutes after the pause, is now 30 minutes from now.
      assert.equal(resumed.rolloutPlan?.nextAt, new Date(clock.now() + 30 * 60_000).toISOString());
      const due = await server.request("GET", `/projects/${project}/schedule`);
      assert.deepEqual(
        due.body.data
          .filter((e: { flag?: string }) => e.flag === "paused")
          .map((e: { at: string; kind: string }) => [e.at, e.kind]),
        [[new Date(clock.now() + 30 * 60_000).toISOString(), "rollout_step"]],
      );
      await caughtUp();
      clock.advance(30 * 60_000);
      const grown = await answersAlike("paused");
      const now = (onCount(grown, "on") / ACTORS.length) * 100;
      assert.ok(Math.abs(now - 50) <= 12, `resumed to 50 %: ${now} % on`);
    });
  });
}
