// What targeting may cost one evaluation, over HTTP (issue 31): a `matches` pattern whose automaton is too
// large, too many patterns or states in one configuration, refused where they are written (flags and
// segments) with nothing stored; an evaluation past the characters it may match answers an error rather
// than holding the instance; and a configuration at the limits still answers everywhere.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createKey, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import { check, createFlag, expectRefusal, patch, setRules } from "./helpers/targeting.js";

const PROBE = ".{0,1000}.{0,1000}[^b]";
const matches = (values: string[]) => ({ attribute: "text", operator: "matches", values });
const ruleWith = (values: string[], id = "r") => ({ id, conditions: [matches(values)], serve: { variant: "on" } });

for (const dialect of DIALECTS) {
  describe(`targeting: what a pattern may cost [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let checkKey: string;
    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
    });
    after(() => server?.stop());

    test("the probe's pattern is refused on a flag (400, at the value, saying why), and nothing changes", async () => {
      await createFlag(server, project, "probe");
      // And, in a second rule, one whose automaton is too large.
      const res = await patch(server, project, "probe", {
        status: "conditional",
        rules: [ruleWith(["ok", PROBE]), ruleWith(["x.{0,9}[^b]$"], "r2")],
      });
      expectRefusal(res, 400, "invalid_request", {
        "/rules/0/conditions/0/values/1": /too large: its repetitions expand it to about 4,001 instructions/,
        "/rules/1/conditions/0/values/0":
          /too complex to match in bounded time: its automaton needs more than 1,000 states/,
      });
      const flag = await server.request("GET", `/projects/${project}/flags/probe`);
      assert.equal(flag.body.status, "disabled");
      assert.deepEqual(flag.body.rules ?? [], []);
    });

    test("and on a segment's conditions, created or changed", async () => {
      const created = await server.request("POST", `/projects/${project}/segments`, {
        body: { name: "Probe", conditions: [matches(["a[ab]{12}b$"])] },
      });
      expectRefusal(created, 400, "invalid_request", { "/conditions/0/values/0": "too complex" });
      const segment = await server.request("POST", `/projects/${project}/segments`, { body: { name: "Fine" } });
      assert.equal(segment.status, 201, segment.text);
      const changed = await server.request("PATCH", `/projects/${project}/segments/${segment.body.id}`, {
        body: { conditions: [matches(["@example\\.com$", PROBE])] },
      });
      expectRefusal(changed, 400, "invalid_request", { "/conditions/0/values/1": "too large" });
      const after = await server.request("GET", `/projects/${project}/segments/${segment.body.id}`);
      assert.deepEqual(after.body.conditions ?? [], []);
    });

    test("more than 100 distinct patterns in one configuration: 400 at /rules", async () => {
      await createFlag(server, project, "many");
      const values = (from: number, n: number) => Array.from({ length: n }, (_, i) => `^p${from + i}-`);
      const res = await patch(server, project, "many", {
        status: "conditional",
        rules: [ruleWith(values(0, 60), "a"), ruleWith(values(60, 41), "b")],
      });
      expectRefusal(res, 400, "invalid_request", { "/rules": "more than 100 distinct matches patterns" });
      await setRules(server, project, "many", [ruleWith(values(0, 60), "a"), ruleWith(values(60, 40), "b")]);
      const on = await check(server, project, "many", { attributes: { text: "p99-x" }, key: checkKey });
      assert.equal(on.enabled, true);
    });

    test("an evaluation past the characters it may match answers an error (GENERAL), and the server answers on", async () => {
      await createFlag(server, project, "budget");
      // 20 patterns × 10,001 characters > 200,000: the evaluation stops there.
      await setRules(server, project, "budget", [ruleWith(Array.from({ length: 20 }, (_, i) => `^z${i}`))]);
      const evaluate = (text: string) =>
        server.request("POST", "/ofrep/v1/evaluate/flags/budget", { key: checkKey, body: { context: { text } } });
      const past = await evaluate("a".repeat(10_001));
      assert.equal(past.body.errorCode, "GENERAL", past.text);
      assert.match(past.body.errorDetails, /matched more than 200,000 characters against patterns/);
      const within = await evaluate("a".repeat(10_000));
      assert.equal(within.status, 200, within.text);
      assert.equal(within.body.value, false);
      const matched = await evaluate(`z7${"a".repeat(10_000)}`);
      assert.equal(matched.body.value, true);
      const health = await server.request("GET", "/healthz", { key: null });
      assert.equal(health.status, 200);
    });
  });
}
