// Where a segment is used, rules included (issue 32, finding 3): a segment that a rule names (in_segment,
// not_in_segment, in any environment's configuration) is listed among the segment's flags and cannot be
// deleted (409 segment_in_use, naming the flags and environments); a segment only attached is detached as
// before. The actor's flags list a flag whose rules serve the actor by its id alone.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createProject, DIALECTS, expectProblem, startServer, type TestServer } from "@flagstaff/test-harness";
import { createFlag, patchOk, setRules, stringVariants } from "./helpers/targeting.js";

const inSegment = (id: string, segment: string, variant = "on") => ({
  id,
  conditions: [{ operator: "in_segment", values: [segment] }],
  serve: { variant },
});

for (const dialect of DIALECTS) {
  describe(`segments in use [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    const base = () => `/projects/${project}`;
    const ok = async (method: string, path: string, body?: unknown, status = 200) => {
      const res = await server.request(method, path, body === undefined ? {} : { body });
      assert.equal(res.status, status, res.text);
      return res.body;
    };
    const names = async (path: string) => (await ok("GET", path)).data.map((f: { name: string }) => f.name);
    const segment = async (name: string, body: Record<string, unknown> = {}) =>
      (await ok("POST", `${base()}/segments`, { name, ...body }, 201)).id as string;

    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    test("a segment named by rules is among its flags, in that environment, whatever the flag's status", async () => {
      project = await createProject(server);
      await ok("POST", `${base()}/environments`, { id: "staging", name: "Staging" }, 201);
      const beta = await segment("beta", {
        conditions: [{ attribute: "plan", operator: "in", values: ["beta"] }],
      });
      // The team lead's flag: a rule-based segment used by a rule of checkout-button.
      await createFlag(server, project, "checkout-button", {
        type: "string",
        variants: stringVariants("blue", "green"),
        onVariant: "green",
        offVariant: "blue",
      });
      await setRules(server, project, "checkout-button", [inSegment("beta-testers", beta, "green")]);
      // A disabled flag whose rule excludes the segment is still using it.
      await createFlag(server, project, "outsiders");
      await patchOk(server, project, "outsiders", {
        rules: [{ id: "rest", conditions: [{ operator: "not_in_segment", values: [beta] }], serve: { variant: "on" } }],
      });
      // The seed's meaning, unchanged: enabled, or conditional with the segment attached; not disabled.
      for (const name of ["always", "attached", "attached-off", "unrelated"]) await createFlag(server, project, name);
      await patchOk(server, project, "always", { status: "enabled" });
      await patchOk(server, project, "attached", { status: "conditional", addSegments: [beta] });
      await patchOk(server, project, "attached-off", { addSegments: [beta] });

      assert.deepEqual(await names(`${base()}/segments/${beta}/flags`), [
        "always",
        "attached",
        "checkout-button",
        "outsiders",
      ]);
      // Rules are per environment: staging's configurations name no segment.
      assert.deepEqual(await names(`${base()}/segments/${beta}/flags?environment=staging`), []);
      // Paged one by one, the walk sees the same flags, each once.
      const walked: string[] = [];
      let after: string | null = null;
      do {
        const page: any = await ok(
          "GET",
          `${base()}/segments/${beta}/flags?limit=1${after === null ? "" : `&after=${after}`}`,
        );
        walked.push(...page.data.map((f: { name: string }) => f.name));
        after = page.pagination.after;
      } while (after !== null);
      assert.deepEqual(walked, ["always", "attached", "checkout-button", "outsiders"]);
    });

    test("deleting a segment that rules name is refused 409 segment_in_use, naming flags and environments", async () => {
      project = await createProject(server);
      await ok("POST", `${base()}/environments`, { id: "staging", name: "Staging" }, 201);
      const beta = await segment("beta");
      await createFlag(server, project, "checkout-button");
      await setRules(server, project, "checkout-button", [inSegment("beta", beta)]);
      await setRules(server, project, "checkout-button", [inSegment("beta", beta)], {}, "staging");
      await createFlag(server, project, "banner");
      await patchOk(
        server,
        project,
        "banner",
        {
          rules: [
            { id: "not-beta", conditions: [{ operator: "not_in_segment", values: [beta] }], serve: { variant: "on" } },
          ],
        },
        "staging",
      );
      await patchOk(server, project, "banner", { status: "conditional", addSegments: [beta] });
      const before = await ok("GET", `${base()}/segments/${beta}`);
      const version = (await ok("GET", `${base()}/events?limit=1`)).data[0].id;

      const refused = await server.request("DELETE", `${base()}/segments/${beta}`);
      expectProblem(refused, 409, "segment_in_use");
      assert.match(refused.body.detail, /flag "banner" in environment "staging"/);
      assert.match(refused.body.detail, /flag "checkout-button" in environment "production"/);
      assert.match(refused.body.detail, /flag "checkout-button" in environment "staging"/);
      // Nothing changed: the segment, its attachment to banner, the history.
      assert.deepEqual(await ok("GET", `${base()}/segments/${beta}`), before);
      assert.deepEqual(await names(`${base()}/flags/banner/segments`), ["beta"]);
      assert.equal((await ok("GET", `${base()}/events?limit=1`)).data[0].id, version);

      // Once no rule names it, it goes, detached from where it was attached, as before.
      await patchOk(server, project, "checkout-button", { rules: [] });
      await patchOk(server, project, "checkout-button", { rules: [] }, "staging");
      const still = await server.request("DELETE", `${base()}/segments/${beta}`);
      expectProblem(still, 409, "segment_in_use");
      assert.doesNotMatch(still.body.detail, /checkout-button/);
      await patchOk(server, project, "banner", { rules: [] }, "staging");
      assert.equal((await server.request("DELETE", `${base()}/segments/${beta}`)).status, 204);
      assert.deepEqual(await names(`${base()}/flags/banner/segments`), []);
      const banner = await ok("GET", `${base()}/flags/banner`);
      assert.equal(banner.segmentsCount, 0);
    });

    test("an actor's flags include flags whose rules serve it by its id alone; the call rollout never counts", async () => {
      project = await createProject(server);
      const vip = await segment("vip");
      await ok("PATCH", `${base()}/segments/${vip}`, { addActors: ["alice"] });
      await createFlag(server, project, "checkout-button", {
        type: "string",
        variants: stringVariants("blue", "green", "red"),
        onVariant: "green",
        offVariant: "blue",
      });
      await setRules(server, project, "checkout-button", [inSegment("vip", vip, "red")]);
      await createFlag(server, project, "for-others");
      await setRules(server, project, "for-others", [
        { id: "rest", conditions: [{ operator: "not_in_segment", values: [vip] }], serve: { variant: "on" } },
      ]);
      // Served to the offVariant by a rule: not on. By an attribute: not decided by the id alone.
      await createFlag(server, project, "served-off", {
        type: "string",
        variants: stringVariants("a", "b"),
        onVariant: "a",
        offVariant: "b",
      });
      await setRules(server, project, "served-off", [inSegment("vip", vip, "b")]);
      await createFlag(server, project, "by-country");
      await setRules(server, project, "by-country", [
        { id: "fr", conditions: [{ attribute: "country", operator: "in", values: ["FR"] }], serve: { variant: "on" } },
      ]);
      await createFlag(server, project, "by-calls");
      await patchOk(server, project, "by-calls", { status: "conditional", percentageCalls: 100 });
      // The seed's: enabled, attached.
      await createFlag(server, project, "everyone");
      await patchOk(server, project, "everyone", { status: "enabled" });
      await createFlag(server, project, "bob-only");
      await patchOk(server, project, "bob-only", { status: "conditional", addActors: ["bob"] });

      assert.deepEqual(await names(`${base()}/actors/alice/flags`), ["checkout-button", "everyone"]);
      assert.deepEqual(await names(`${base()}/actors/bob/flags`), ["bob-only", "everyone", "for-others"]);
      assert.deepEqual(await names(`${base()}/actors/never-seen/flags`), ["everyone", "for-others"]);
      // What the check answers for the actor alone agrees.
      for (const [actor, flag, enabled] of [
        ["alice", "checkout-button", true],
        ["bob", "checkout-button", false],
        ["alice", "for-others", false],
        ["alice", "served-off", false],
      ] as const) {
        const check = await ok("GET", `${base()}/flags/${flag}/check?actorIds=${actor}`);
        assert.equal(check.enabled, enabled, `${flag} for ${actor}`);
      }
    });
  });
}
