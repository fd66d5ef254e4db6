import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { constantAnswer, evaluateFlag, type Rule, type TargetedFlag } from "../src/index.js";
import { flag, resolver, stringFlag } from "./rules-helpers.js";

// constantAnswer: the answer a flag gives every context, which OFREP's bulk answer reuses for every client.

const inCountry: Rule = {
  id: "gb",
  conditions: [{ attribute: "country", operator: "in", values: ["GB"] }],
  serve: { variant: "blue" },
};

describe("constantAnswer", () => {
  it("is the answer of a flag that targets nothing, by its status", () => {
    assert.equal(constantAnswer(stringFlag({ status: "disabled", rules: [inCountry] }))?.reason, "DISABLED");
    assert.equal(constantAnswer(stringFlag({ status: "enabled", rules: [inCountry] }))?.reason, "STATIC");
    assert.equal(constantAnswer(stringFlag())?.reason, "DEFAULT");
    assert.equal(constantAnswer(stringFlag())?.variant, "red");
  });

  it("is undefined where a context, a draw or another flag may change the answer", () => {
    assert.equal(constantAnswer(stringFlag({ actors: new Set(["carol"]) })), undefined);
    assert.equal(constantAnswer(stringFlag({ segments: new Set(["beta"]) })), undefined);
    assert.equal(constantAnswer(stringFlag({ rules: [inCountry] })), undefined);
    assert.equal(constantAnswer(flag({ percentageActors: 5 })), undefined);
    assert.equal(constantAnswer(flag({ percentageCalls: 5 })), undefined);
    const gated = flag({ status: "enabled", prerequisites: [{ flag: "other", variants: ["on"] }] });
    assert.equal(constantAnswer(gated), undefined);
    // Nothing turns a disabled flag on: its prerequisites are not even read.
    assert.equal(constantAnswer({ ...gated, status: "disabled" })?.reason, "DISABLED");
  });

  it("answers an ERROR for a configuration that cannot be evaluated, as evaluateFlag does", () => {
    const broken = stringFlag({ onVariant: "purple" });
    assert.equal(constantAnswer(broken)?.reason, "ERROR");
    assert.equal(constantAnswer(broken), evaluateFlag(broken, {}, resolver()));
  });

  it("is, whenever defined, the very answer evaluateFlag gives any context at any time with any draw", () => {
    const flagArb: fc.Arbitrary<TargetedFlag> = fc
      .record({
        status: fc.constantFrom("enabled", "disabled", "conditional" as const),
        actors: fc.boolean(),
        segments: fc.boolean(),
        rules: fc.boolean(),
        percentageActors: fc.constantFrom(0, 0, 50, 100),
        percentageCalls: fc.constantFrom(0, 0, 50, 100),
        prerequisite: fc.boolean(),
      })
      .map((f) =>
        stringFlag({
          status: f.status,
          actors: new Set(f.actors ? ["carol"] : []),
          segments: new Set(f.segments ? ["beta"] : []),
          rules: f.rules ? [inCountry] : [],
          percentageActors: f.percentageActors,
          percentageCalls: f.percentageCalls,
          prerequisites: f.prerequisite ? [{ flag: "gate", variants: ["on"] }] : [],
        }),
      );
    const contextArb = fc.record({
      actorIds: fc.array(fc.constantFrom("carol", "bob", "dave", "erin"), { maxLength: 3 }),
      country: fc.constantFrom("GB", "FR", undefined),
      random: fc.double({ min: 0, max: 0.999, noNaN: true }),
      gate: fc.constantFrom("enabled", "disabled" as const),
    });
    let constants = 0;
    fc.assert(
      fc.property(flagArb, fc.array(contextArb, { minLength: 1, maxLength: 5 }), (f, contexts) => {
        const constant = constantAnswer(f);
        if (constant === undefined) return;
        constants++;
        for (const c of contexts) {
          const project = resolver({
            members: { beta: ["bob"] },
            flags: [flag({ name: "gate", status: c.gate })],
            random: c.random,
          });
          const attributes = c.country === undefined ? {} : { country: c.country };
          assert.equal(evaluateFlag(f, { actorIds: c.actorIds, attributes }, project), constant);
        }
      }),
      {
        numRuns: 300,
        examples: [
          [stringFlag({ status: "enabled" }), [{ actorIds: [], country: undefined, random: 0, gate: "enabled" }]],
        ],
      },
    );
    assert.ok(constants > 0, "some random flags were constant");
  });
});
