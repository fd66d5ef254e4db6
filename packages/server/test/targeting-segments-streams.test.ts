// Rule-based segments, the project stream's format 2 and the history of targeting (issue 25), over HTTP:
// a context is in a segment by its conditions alone; the relation lists keep counting listed members;
// a client following the stream evaluates typed flags and rules exactly as the server's check answers,
// after rule, variant and segment-condition changes; history events carry rules and conditions.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { evaluateFlag, ProjectState, type ProjectStateJSON } from "@flagstaff/core";
import {
  createKey,
  createProject,
  DIALECTS,
  EventStreamClient,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import {
  check,
  contextQuery,
  createFlag,
  expectRefusal,
  patchOk,
  type QueryAttributes,
  setRules,
  stringVariants,
} from "./helpers/targeting.js";

/** Follows a stream the way a client would: the snapshot's state, then each change applied in order. */
function follow(stream: EventStreamClient): () => ProjectState {
  let state = new ProjectState();
  let seen = 0;
  return () => {
    for (; seen < stream.events.length; seen++) {
      const event = stream.events[seen]!;
      if (event.event === "snapshot") state = ProjectState.fromJSON(event.data.state as ProjectStateJSON);
      else if (event.event === "change") for (const change of event.data.changes) state.apply(change);
    }
    return state;
  };
}

interface Context {
  readonly actors: string[];
  readonly attributes?: QueryAttributes;
}

for (const dialect of DIALECTS) {
  describe(`targeting: segments, stream and history [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let reader: string;
    const clock = new ManualClock();
    const base = () => `/projects/${project}`;
    const ok = async (method: string, path: string, body?: unknown, status = 200) => {
      const res = await server.request(method, path, body === undefined ? {} : { body });
      assert.equal(res.status, status, res.text);
      return res.body;
    };
    const newestEvent = async () => (await ok("GET", `${base()}/events?limit=1`)).data[0];

    before(async () => {
      server = await startServer({ dialect, clock, random: () => 0.999 });
      project = await createProject(server);
      reader = (await createKey(server, project, "read")).key;
    });
    after(() => server.close());

    test("a segment's conditions: validated, shown, and a context is in it by them alone", async () => {
      const conditions = [
        { attribute: "email", operator: "ends_with", values: ["@corp.io"], caseInsensitive: true },
        { attribute: "plan", operator: "in", values: ["pro", "team"] },
      ];
      const created = await ok("POST", `${base()}/segments`, { name: "corp", conditions }, 201);
      assert.deepEqual(created.conditions, conditions);
      const corp = created.id as string;
      await ok("PATCH", `${base()}/segments/${corp}`, { addActors: ["listed"] });
      // Refused conditions: 400 naming the condition; in_segment is not allowed inside a segment.
      for (const [body, path] of [
        [{ conditions: [{ attribute: "n", operator: "gt", values: ["x"] }] }, "/conditions/0/values/0"],
        [{ conditions: [conditions[0], { operator: "in_segment", values: [corp] }] }, "/conditions/1/operator"],
        [{ conditions: [{ attribute: "e", operator: "matches", values: ["(x"] }] }, "/conditions/0/values/0"],
      ] as const) {
        const res = await server.request("PATCH", `${base()}/segments/${corp}`, { body });
        expectRefusal(res, 400, "invalid_request", { [path]: "conditions[" });
      }
      const refusedCreate = await server.request("POST", `${base()}/segments`, {
        body: { name: "bad", conditions: [{ attribute: "v", operator: "semver_eq", values: ["one"] }] },
      });
      expectRefusal(refusedCreate, 400, "invalid_request", { "/conditions/0/values/0": "semver_eq" });
      assert.deepEqual((await ok("GET", `${base()}/segments/${corp}`)).conditions, conditions);

      // A flag with the segment attached: listed members and contexts that meet the conditions.
      await createFlag(server, project, "corp-flag", { type: "string", variants: stringVariants("inside", "outside") });
      await patchOk(server, project, "corp-flag", { status: "conditional", addSegments: [corp] });
      const answer = async (context: Context) => (await check(server, project, "corp-flag", context)).variant;
      assert.equal(await answer({ actors: ["listed"] }), "inside");
      assert.equal(await answer({ actors: ["anyone"], attributes: { email: "Ann@CORP.io", plan: "team" } }), "inside");
      assert.equal(await answer({ actors: [], attributes: { email: "ann@corp.io", plan: "pro" } }), "inside");
      assert.equal(await answer({ actors: ["anyone"], attributes: { email: "ann@corp.io", plan: "free" } }), "outside");
      assert.equal(await answer({ actors: ["anyone"], attributes: { email: "ann@other.io", plan: "pro" } }), "outside");
      assert.equal(await answer({ actors: ["anyone"] }), "outside");
      // Explain names the segment the conditions put the context in.
      const why = await ok(
        "GET",
        `${base()}/flags/corp-flag/explain${contextQuery({ actors: ["anyone"], attributes: { email: "a@corp.io", plan: "pro" } })}`,
      );
      assert.deepEqual(
        [why.rule, why.segmentId, why.segment, why.variant],
        ["segment", corp, { id: corp, name: "corp" }, "inside"],
      );
      // in_segment and not_in_segment rules see members by conditions too.
      await createFlag(server, project, "by-rule", {
        type: "string",
        variants: stringVariants("member", "other", "off"),
        offVariant: "off",
      });
      await setRules(server, project, "by-rule", [
        { id: "in", conditions: [{ operator: "in_segment", values: [corp] }], serve: { variant: "member" } },
        { id: "out", conditions: [{ operator: "not_in_segment", values: [corp] }], serve: { variant: "other" } },
      ]);
      const byRule = async (context: Context) => (await check(server, project, "by-rule", context)).variant;
      assert.equal(await byRule({ actors: ["u"], attributes: { email: "u@corp.io", plan: "pro" } }), "member");
      assert.equal(await byRule({ actors: ["listed"] }), "member");
      assert.equal(await byRule({ actors: ["u"], attributes: { email: "u@corp.io", plan: "free" } }), "other");
      const ofrep = await server.request("POST", "/ofrep/v1/evaluate/flags/by-rule", {
        key: reader,
        body: { context: { targetingKey: "u", email: "u@corp.io", plan: "pro" } },
      });
      assert.deepEqual([ofrep.body.value, ofrep.body.reason], ["member", "TARGETING_MATCH"]);

      // The relation lists count listed members only.
      const segment = await ok("GET", `${base()}/segments/${corp}`);
      assert.equal(segment.actorsCount, 1);
      const members = await ok("GET", `${base()}/segments/${corp}/actors`);
      assert.deepEqual(
        members.data.map((m: any) => m.actorId),
        ["listed"],
      );
      const ofAnyone = await server.request("GET", `${base()}/actors/anyone/segments`);
      assert.ok(ofAnyone.status === 200 || ofAnyone.status === 404, ofAnyone.text);
      if (ofAnyone.status === 200) assert.deepEqual(ofAnyone.body.data, []);
      const ofListed = await ok("GET", `${base()}/actors/listed/segments`);
      assert.deepEqual(
        ofListed.data.map((s: any) => s.id),
        [corp],
      );

      // Conditions replaced by []: listed members only.
      await ok("PATCH", `${base()}/segments/${corp}`, { conditions: [] });
      assert.equal(await answer({ actors: ["anyone"], attributes: { email: "ann@corp.io", plan: "pro" } }), "outside");
      assert.equal(await answer({ actors: ["listed"] }), "inside");
      await ok("PATCH", `${base()}/segments/${corp}`, { conditions });
    });

    test("history: flag.updated carries rules before and after; segment events carry conditions", async () => {
      await createFlag(server, project, "hist", {
        type: "number",
        variants: [
          { key: "one", value: 1 },
          { key: "two", value: 2 },
        ],
      });
      const rules = [
        {
          id: "r1",
          description: "Germany",
          conditions: [{ attribute: "country", operator: "in", values: ["DE"] }],
          serve: { variant: "two" },
        },
      ];
      clock.advance(1000);
      await setRules(server, project, "hist", rules);
      let event = await newestEvent();
      assert.equal(event.type, "flag.updated");
      assert.equal(event.environment, "production");
      assert.deepEqual([event.before.rules, event.before.status], [[], "disabled"]);
      assert.deepEqual([event.after.rules, event.after.status, event.after.type], [rules, "conditional", "number"]);
      assert.deepEqual(event.after.variants, event.before.variants);
      const next = [
        {
          ...rules[0],
          serve: {
            split: {
              weights: [
                { variant: "one", weight: 50 },
                { variant: "two", weight: 50 },
              ],
            },
          },
        },
      ];
      await patchOk(server, project, "hist", {
        rules: next,
        onVariant: "two",
        offVariant: "one",
        variants: [
          { key: "one", value: 10 },
          { key: "two", value: 20 },
        ],
      });
      event = await newestEvent();
      assert.deepEqual(event.before.rules, rules);
      assert.deepEqual(event.after.rules, next);
      assert.deepEqual([event.before.onVariant, event.after.onVariant, event.after.offVariant], ["one", "two", "one"]);
      assert.deepEqual(event.after.variants, [
        { key: "one", value: 10 },
        { key: "two", value: 20 },
      ]);
      await createFlag(server, project, "hist-gate");
      await patchOk(server, project, "hist", { prerequisites: [{ flag: "hist-gate", variants: ["on"] }] });
      event = await newestEvent();
      assert.deepEqual(
        [event.before.prerequisites, event.after.prerequisites],
        [[], [{ flag: "hist-gate", variants: ["on"] }]],
      );

      const conditions = [{ attribute: "plan", operator: "in", values: ["pro"] }];
      const seg = await ok("POST", `${base()}/segments`, { name: "hist-seg", conditions }, 201);
      event = await newestEvent();
      assert.deepEqual([event.type, event.after.conditions], ["segment.created", conditions]);
      const more = [...conditions, { attribute: "age", operator: "gte", values: [18] }];
      await ok("PATCH", `${base()}/segments/${seg.id}`, { conditions: more });
      event = await newestEvent();
      assert.deepEqual(
        [event.type, event.before.conditions, event.after.conditions],
        ["segment.updated", conditions, more],
      );
    });

    test("a follower of the stream (format 2) evaluates as the check answers, through rule, variant and segment-condition changes", async () => {
      const stream = await EventStreamClient.open(`${server.url}${base()}/stream`, { key: reader });
      try {
        const snapshot = await stream.next("the snapshot", (e) => e.event === "snapshot");
        assert.equal(snapshot.data.state.format, 2);
        const state = follow(stream);
        const snapshotFlag = (snapshot.data.state.flags as any[]).find((f) => f.name === "by-rule");
        assert.deepEqual([snapshotFlag.type, snapshotFlag.offVariant], ["string", "off"]);
        assert.equal(snapshotFlag.rules.length, 2);
        const corp = (await ok("GET", `${base()}/segments?limit=100`)).data.find((s: any) => s.name === "corp").id;
        assert.ok(snapshot.data.state.segmentConditions[corp]?.length === 2, "segment conditions are in the snapshot");

        const contexts: Context[] = [
          { actors: ["listed"] },
          { actors: ["u1"], attributes: { email: "u1@corp.io", plan: "pro" } },
          { actors: ["u2"], attributes: { email: "u2@corp.io", plan: "free", country: "DE" } },
          { actors: ["u3"], attributes: { country: "DE", version: "2.3.0", tags: ["a", "b"] } },
          { actors: ["u4"], attributes: { country: "FR", version: "1.0", seats: "12" } },
          { actors: [], attributes: { country: "DE" } },
          ...Array.from({ length: 12 }, (_, i) => ({ actors: [`split-${i}`], attributes: { seats: String(i * 3) } })),
        ];
        /** Every flag named, every context: the follower's answer equals the check's. */
        const agree = async (label: string, flags: string[]) => {
          for (const name of flags) {
            for (const context of contexts) {
              const flag = state().flagsByName.get(name);
              assert.ok(flag, `${label}: the follower knows ${name}`);
              const local = evaluateFlag(flag, { actorIds: context.actors, attributes: context.attributes }, state());
              const remote = await check(server, project, name, context);
              const enabled = local.variant !== null && local.variant !== flag.offVariant;
              if (flag.type === "boolean")
                assert.deepEqual({ enabled }, remote, `${label}: ${name} ${JSON.stringify(context)}`);
              else {
                assert.deepEqual(
                  { enabled, variant: local.variant, value: local.value },
                  remote,
                  `${label}: ${name} ${JSON.stringify(context)}`,
                );
              }
            }
          }
        };
        /** Waits until the follower has seen the server's latest write (the newest change's version). */
        const caughtUp = async (what: string, predicate: (change: any) => boolean) => {
          await stream.next(what, (e) => e.event === "change" && e.data.changes.some(predicate));
        };
        await agree("snapshot", ["corp-flag", "by-rule", "hist"]);

        // Rules change: a typed flag with several operators and a split.
        await createFlag(server, project, "live", {
          type: "object",
          variants: [
            { key: "a", value: { n: 1 } },
            { key: "b", value: { n: 2 } },
            { key: "c", value: [3] },
          ],
          offVariant: "c",
        });
        await caughtUp("live created", (c) => c.kind === "flag.upserted" && c.flag.name === "live");
        await setRules(server, project, "live", [
          {
            id: "de-modern",
            conditions: [
              { attribute: "country", operator: "in", values: ["DE"] },
              { attribute: "version", operator: "semver_gte", values: ["2"] },
            ],
            serve: { variant: "b" },
          },
          {
            id: "big",
            conditions: [{ attribute: "seats", operator: "gte", values: [10] }],
            serve: {
              split: {
                weights: [
                  { variant: "a", weight: 40 },
                  { variant: "b", weight: 60 },
                ],
              },
            },
          },
          { id: "corp", conditions: [{ operator: "in_segment", values: [corp] }], serve: { variant: "a" } },
        ]);
        await caughtUp(
          "live's rules",
          (c) => c.kind === "flag.upserted" && c.flag.name === "live" && c.flag.rules?.length === 3,
        );
        await agree("rules", ["live"]);

        // Variants change: flag.variants.
        await patchOk(server, project, "live", {
          variants: [
            { key: "a", value: { n: 10 } },
            { key: "b", value: { n: 20, extra: true } },
            { key: "c", value: [30] },
          ],
        });
        const variantsChange = await stream.next(
          "live's variants",
          (e) => e.event === "change" && e.data.changes.some((c: any) => c.kind === "flag.variants"),
        );
        const change = variantsChange.data.changes.find((c: any) => c.kind === "flag.variants");
        assert.deepEqual(change.variants[1], { key: "b", value: { n: 20, extra: true } });
        await agree("variants", ["live", "hist"]);

        // Segment conditions change: segment.conditions.
        await ok("PATCH", `${base()}/segments/${corp}`, {
          conditions: [{ attribute: "country", operator: "in", values: ["DE"] }],
        });
        const conditionsChange = await stream.next(
          "corp's conditions",
          (e) => e.event === "change" && e.data.changes.some((c: any) => c.kind === "segment.conditions"),
        );
        const segChange = conditionsChange.data.changes.find((c: any) => c.kind === "segment.conditions");
        assert.deepEqual(segChange, {
          kind: "segment.conditions",
          segmentId: corp,
          conditions: [{ attribute: "country", operator: "in", values: ["DE"] }],
        });
        await agree("segment conditions", ["live", "corp-flag", "by-rule"]);

        // Prerequisites and served variants change.
        await createFlag(server, project, "live-gate");
        await setRules(server, project, "live-gate", [
          {
            id: "fr",
            conditions: [{ attribute: "country", operator: "in", values: ["FR"] }],
            serve: { variant: "on" },
          },
        ]);
        await patchOk(server, project, "live", {
          prerequisites: [{ flag: "live-gate", variants: ["off"] }],
          onVariant: "b",
        });
        await caughtUp(
          "live's prerequisites",
          (c) => c.kind === "flag.upserted" && c.flag.name === "live" && c.flag.prerequisites?.length === 1,
        );
        await agree("prerequisites", ["live", "live-gate"]);
      } finally {
        await stream.close();
      }
    });
  });
}
