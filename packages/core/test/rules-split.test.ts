import assert from "node:assert/strict";
import { describe, it } from "node:test";
import zlib from "node:zlib";
import fc from "fast-check";
import { evaluateFlag, type Split, splitBucket, type TargetedFlag } from "../src/index.js";
import { resolver, stringFlag } from "./rules-helpers.js";

// Splits: the bucket formula, stickiness, distribution, and what moves when the weights change.

/** Independent oracle: zlib's CRC-32 of the UTF-8 of "<flag>:<rule>:<value>", modulo 100,000. */
const zlibBucket = (flag: string, ruleId: string, value: string) =>
  (zlib.crc32(Buffer.from(`${flag}:${ruleId}:${value}`, "utf8")) >>> 0) % 100_000;

const splitFlag = (split: Split, name = "checkout", ruleId = "ab"): TargetedFlag =>
  stringFlag({ name, rules: [{ id: ruleId, conditions: [], serve: { split } }] });

const weights = (...entries: [string, number][]) => entries.map(([variant, weight]) => ({ variant, weight }));

const variantOf = (f: TargetedFlag, actorId: string, attributes?: Record<string, string>) =>
  evaluateFlag(f, { actorIds: [actorId], ...(attributes ? { attributes } : {}) }, resolver()).variant;

/** An actor whose bucket for the flag's rule is exactly `bucket` (searched deterministically). */
function actorAt(bucket: number, flagName = "checkout", ruleId = "ab"): string {
  for (let i = 0; i < 20_000_000; i++) if (zlibBucket(flagName, ruleId, `u${i}`) === bucket) return `u${i}`;
  throw new Error(`no actor at ${bucket}`);
}

describe("the split bucket", () => {
  it("is crc32 of the UTF-8 of flag name, rule id and value, joined by ':', modulo 100,000", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/),
        fc.string({ unit: "binary" }),
        (f, r, v) => {
          assert.equal(splitBucket(f, r, v), zlibBucket(f, r, v));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("decides the variant by cumulative weights: weight i takes the buckets from the sum before it up to its own sum", () => {
    const f = splitFlag({ weights: weights(["red", 33], ["green", 0], ["blue", 67]) });
    assert.equal(variantOf(f, actorAt(0)), "red");
    assert.equal(variantOf(f, actorAt(32_999)), "red");
    assert.equal(variantOf(f, actorAt(33_000)), "blue", "a weight of 0 takes no bucket");
    assert.equal(variantOf(f, actorAt(99_999)), "blue");
  });

  it("counts thousandths of a percent: 0.001 % is one bucket", () => {
    const f = splitFlag({ weights: weights(["red", 0.001], ["blue", 99.999]) });
    assert.equal(variantOf(f, actorAt(0)), "red");
    assert.equal(variantOf(f, actorAt(1)), "blue");
  });
});

describe("stickiness", () => {
  const split = { weights: weights(["red", 33.333], ["green", 33.333], ["blue", 33.334]) };

  it("an actor keeps its variant across evaluations and copies of the flag while the weights stay", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (actorId) => {
        const first = variantOf(splitFlag(split), actorId);
        assert.equal(variantOf(splitFlag(split), actorId), first);
        assert.equal(variantOf(splitFlag({ ...split }), actorId), first);
      }),
      { numRuns: 500 },
    );
  });

  it("moving weight between two variants moves only the actors in between; the rest keep theirs", () => {
    const before = splitFlag({ weights: weights(["red", 50], ["blue", 50]) });
    const after = splitFlag({ weights: weights(["red", 60], ["blue", 40]) });
    let moved = 0;
    for (let i = 0; i < 20_000; i++) {
      const actor = `user-${i}`;
      const [was, is] = [variantOf(before, actor), variantOf(after, actor)];
      if (was === is) continue;
      moved++;
      assert.equal(was, "blue");
      const bucket = zlibBucket("checkout", "ab", actor);
      assert.ok(bucket >= 50_000 && bucket < 60_000, `moved from bucket ${bucket}`);
    }
    assert.ok(moved > 1500 && moved < 2500, `${moved} of 20,000 moved (about 10 % expected)`);
  });

  it("buckets on bucketBy when given: everyone sharing the value shares the variant", () => {
    const f = splitFlag({ bucketBy: "company", weights: weights(["red", 50], ["blue", 50]) });
    for (let c = 0; c < 50; c++) {
      const company = `company-${c}`;
      const seen = new Set(Array.from({ length: 10 }, (_, i) => variantOf(f, `person-${i}`, { company })));
      assert.equal(seen.size, 1, company);
      assert.equal([...seen][0], zlibBucket("checkout", "ab", company) < 50_000 ? "red" : "blue");
    }
  });
});

describe("distribution", () => {
  it("100,000 actors fall into each weight's share within 5 sigma", () => {
    const f = splitFlag({ weights: weights(["red", 33.333], ["green", 33.333], ["blue", 33.334]) });
    const counts: Record<string, number> = { red: 0, green: 0, blue: 0 };
    const N = 100_000;
    for (let i = 0; i < N; i++) {
      const v = variantOf(f, `${i}-${(i * 2654435761) >>> 0}`) as string;
      counts[v] = (counts[v] ?? 0) + 1;
    }
    for (const [variant, share] of [
      ["red", 0.33333],
      ["green", 0.33333],
      ["blue", 0.33334],
    ] as const) {
      const sigma = Math.sqrt((share * (1 - share)) / N);
      const got = (counts[variant] as number) / N;
      assert.ok(Math.abs(got - share) < 5 * sigma, `${variant}: ${got} vs ${share} ± ${5 * sigma}`);
    }
  });

  it("different rules (and flags) split independently of each other", () => {
    const a = splitFlag({ weights: weights(["red", 50], ["blue", 50]) }, "checkout", "first");
    const b = splitFlag({ weights: weights(["red", 50], ["blue", 50]) }, "checkout", "second");
    const c = splitFlag({ weights: weights(["red", 50], ["blue", 50]) }, "search", "first");
    const N = 20_000;
    let bothAB = 0;
    let bothAC = 0;
    for (let i = 0; i < N; i++) {
      const actor = `user-${i}`;
      const first = variantOf(a, actor) === "red";
      if (first && variantOf(b, actor) === "red") bothAB++;
      if (first && variantOf(c, actor) === "red") bothAC++;
    }
    // Independent halves overlap on a quarter: sigma = sqrt(0.25 * 0.75 / N) ≈ 0.003.
    for (const overlap of [bothAB, bothAC]) assert.ok(Math.abs(overlap / N - 0.25) < 0.015, `${overlap / N}`);
  });
});
