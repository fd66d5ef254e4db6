import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import zlib from "node:zlib";
import fc from "fast-check";
import {
  ALLOWED_PERCENTAGES,
  actorBucket,
  BUCKET_COUNT,
  crc32Utf8,
  inActorRollout,
  inCallRollout,
} from "../src/index.js";

interface BucketingVector {
  flagName: string;
  actorId: string;
  crc32: number;
  bucket: number;
}

// Compiled to packages/core/dist/test/, so the JSON in packages/core/test/ is two levels up.
const vectors = JSON.parse(readFileSync(new URL("../../test/vectors.json", import.meta.url), "utf8")) as {
  bucketCount: number;
  allowedPercentages: number[];
  bucketing: BucketingVector[];
};

/** Independent oracle: zlib's CRC-32 of the UTF-8 bytes (Buffer encodes a lone surrogate as U+FFFD). */
const zlibCrc = (text: string): number => zlib.crc32(Buffer.from(text, "utf8")) >>> 0;
const zlibBucket = (flagName: string, actorId: string): number => zlibCrc(`${flagName}:${actorId}`) % 100_000;

/** Any UTF-16 string, lone surrogates included (fast-check's built-in units never produce those). */
const utf16Unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
/** Mostly well-formed text from every UTF-8 length class, with the occasional raw code unit. */
const textUnit = fc.oneof(
  { arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }), weight: 3 },
  { arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }), weight: 3 },
  { arbitrary: utf16Unit, weight: 1 },
);
const anyText = fc.string({ unit: textUnit, maxLength: 40 });

const PARTIAL_PERCENTAGES = ALLOWED_PERCENTAGES.filter((p) => p > 0 && p < 100);

/** Small seeded PRNG (mulberry32) so the statistical tests are reproducible rather than flaky. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uuidLike(rand: () => number): string {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${hex(4)}-${hex(12)}`;
}

describe("bucketing vectors", () => {
  it("vectors.json matches the constants of the core package", () => {
    assert.equal(vectors.bucketCount, BUCKET_COUNT);
    assert.deepEqual(vectors.allowedPercentages, [...ALLOWED_PERCENTAGES]);
    assert.ok(vectors.bucketing.length >= 60, `only ${vectors.bucketing.length} bucketing vectors`);
  });

  it("the lone-surrogate vector survived the JSON round trip as a lone surrogate", () => {
    assert.ok(vectors.bucketing.some((v) => v.actorId === "\ud800"));
  });

  for (const [i, v] of vectors.bucketing.entries()) {
    const label = `#${i} ${JSON.stringify(v.flagName).slice(0, 40)} / ${JSON.stringify(v.actorId).slice(0, 40)}`;
    it(`crc32Utf8, actorBucket and inActorRollout: ${label}`, () => {
      assert.equal(crc32Utf8(`${v.flagName}:${v.actorId}`), v.crc32);
      assert.equal(actorBucket(v.flagName, v.actorId), v.bucket);
      for (const p of ALLOWED_PERCENTAGES) {
        assert.equal(inActorRollout(v.flagName, v.actorId, p), v.bucket < p * 1000, `at ${p}%`);
      }
    });
  }
});

describe("crc32Utf8", () => {
  it("has the standard CRC-32 check value", () => {
    assert.equal(crc32Utf8("123456789"), 0xcbf43926);
    assert.equal(crc32Utf8(""), 0);
  });

  it("agrees with zlib on any UTF-16 string, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: utf16Unit, maxLength: 64 }), (s) => {
        assert.equal(crc32Utf8(s), zlibCrc(s));
      }),
      { numRuns: 2000 },
    );
  });

  it("agrees with zlib on mixed text", () => {
    fc.assert(
      fc.property(anyText, (s) => {
        assert.equal(crc32Utf8(s), zlibCrc(s));
      }),
      { numRuns: 2000 },
    );
  });

  it("agrees with zlib on long strings either side of the internal buffer size", () => {
    // crc32Utf8 encodes strings of up to 1365 UTF-16 units into a reused 4096-byte buffer and longer ones
    // into a fresh array; exercise lengths around that switch with 1-, 2-, 3- and 4-byte characters.
    fc.assert(
      fc.property(
        fc.integer({ min: 1300, max: 1450 }),
        fc.constantFrom("a", "é", "日", "😀", "\ud800", "\udc00"),
        fc.string({ unit: utf16Unit, maxLength: 8 }),
        (length, ch, tail) => {
          const s = (ch.repeat(length) + tail).slice(0, length);
          assert.equal(crc32Utf8(s), zlibCrc(s));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("is not affected by earlier calls (the scratch buffer is not leaked between calls)", () => {
    fc.assert(
      fc.property(anyText, anyText, (a, b) => {
        const first = crc32Utf8(a);
        crc32Utf8(b.repeat(20));
        crc32Utf8(b);
        assert.equal(crc32Utf8(a), first);
      }),
      { numRuns: 500 },
    );
  });

  it("returns an unsigned 32-bit integer", () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const c = crc32Utf8(s);
        assert.ok(Number.isInteger(c) && c >= 0 && c <= 0xffffffff, String(c));
      }),
    );
  });
});

describe("actorBucket", () => {
  it("is deterministic, in range, and equals crc32(flagName + ':' + actorId) % 100000 by zlib", () => {
    fc.assert(
      fc.property(anyText, anyText, (flag, actor) => {
        const b = actorBucket(flag, actor);
        assert.ok(Number.isInteger(b) && b >= 0 && b < BUCKET_COUNT, String(b));
        assert.equal(actorBucket(flag, actor), b);
        assert.equal(b, zlibBucket(flag, actor));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("inActorRollout", () => {
  it("is bucket < p * 1000 for every allowed percentage", () => {
    fc.assert(
      fc.property(anyText, anyText, fc.constantFrom(...ALLOWED_PERCENTAGES), (flag, actor, p) => {
        assert.equal(inActorRollout(flag, actor, p), zlibBucket(flag, actor) < p * 1000);
      }),
      { numRuns: 2000 },
    );
  });

  it("is monotonic: in at p implies in at every higher allowed percentage", () => {
    fc.assert(
      fc.property(anyText, anyText, (flag, actor) => {
        let seenIn = false;
        for (const p of ALLOWED_PERCENTAGES) {
          const inside = inActorRollout(flag, actor, p);
          if (seenIn) assert.ok(inside, `in at a lower percentage but not at ${p}%`);
          seenIn ||= inside;
        }
        assert.equal(inActorRollout(flag, actor, 0), false);
        assert.equal(inActorRollout(flag, actor, 100), true);
      }),
      { numRuns: 1000 },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(anyText, anyText, fc.constantFrom(...ALLOWED_PERCENTAGES), (flag, actor, p) => {
        const first = inActorRollout(flag, actor, p);
        for (let i = 0; i < 3; i++) assert.equal(inActorRollout(flag, actor, p), first);
      }),
    );
  });

  // Rollout share. For N independent actors each in the rollout with probability p, the count is
  // Binomial(N, p): the observed fraction has standard deviation sigma = sqrt(p * (1 - p) / N). With
  // N = 20,000 and p = 0.25, sigma ~= 0.00306, so the 5-sigma bound is +-0.0153 (fraction in [0.2347, 0.2653]).
  // A 5-sigma two-sided deviation has probability below 1e-6 under the normal approximation. The ids are
  // fixed (sequential and seeded pseudo-random), so the test is reproducible, but they are not chosen with
  // any knowledge of the hash. A wrong modulus or a wrong scale (e.g. p * 100) is far outside these bounds.
  const N = 20_000;
  const idSets: Array<[string, string[]]> = [
    ["sequential ids", Array.from({ length: N }, (_, i) => `user-${i}`)],
    [
      "random uuids",
      (() => {
        const rand = mulberry32(0x5eed);
        return Array.from({ length: N }, () => uuidLike(rand));
      })(),
    ],
  ];
  for (const [setName, ids] of idSets) {
    for (const flagName of ["checkout.new-flow", "search_v2"]) {
      it(`puts each allowed share of ${N} ${setName} in the rollout of ${flagName}, within 5 sigma`, () => {
        for (const p of ALLOWED_PERCENTAGES) {
          const share = ids.filter((id) => inActorRollout(flagName, id, p)).length / N;
          const q = p / 100;
          const bound = 5 * Math.sqrt((q * (1 - q)) / N); // 0 for 0% and 100%: those must be exact
          assert.ok(Math.abs(share - q) <= bound, `${p}%: share ${share}, allowed ${q} +- ${bound.toFixed(5)}`);
        }
      });
    }
  }

  it("buckets an actor independently across flags (a 25% rollout of two flags overlaps in ~6.25%)", () => {
    // Joint membership is Bernoulli(1/16) if the flags' buckets are independent; same 5-sigma bound.
    // Hashing the actor id alone (ignoring the flag name) would give an overlap of 25%.
    const ids = idSets[0]?.[1] ?? [];
    const both = ids.filter((id) => inActorRollout("flag-a", id, 25) && inActorRollout("flag-b", id, 25)).length;
    const q = 1 / 16;
    const bound = 5 * Math.sqrt((q * (1 - q)) / ids.length);
    assert.ok(Math.abs(both / ids.length - q) <= bound, `overlap ${both / ids.length}`);
  });
});

describe("inCallRollout", () => {
  it("is draw < p / 100", () => {
    assert.equal(inCallRollout(50, 0.4999), true);
    assert.equal(inCallRollout(50, 0.5), false);
    assert.equal(inCallRollout(0, 0), false);
    assert.equal(inCallRollout(100, 1 - 2 ** -53), true);
    fc.assert(
      fc.property(
        fc.constantFrom(...ALLOWED_PERCENTAGES),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (p, draw) => {
          assert.equal(inCallRollout(p, draw), draw < p / 100);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("is exclusive exactly at the threshold for every allowed percentage", () => {
    for (const p of PARTIAL_PERCENTAGES) {
      assert.equal(inCallRollout(p, p / 100), false, `${p}% at ${p / 100}`);
      assert.equal(inCallRollout(p, p / 100 - 1e-9), true, `${p}% just below ${p / 100}`);
    }
  });

  it("is monotonic in the percentage for a fixed draw", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (draw) => {
        let seenIn = false;
        for (const p of ALLOWED_PERCENTAGES) {
          const inside = inCallRollout(p, draw);
          if (seenIn) assert.ok(inside, `draw ${draw} in at a lower percentage but not at ${p}%`);
          seenIn ||= inside;
        }
      }),
    );
  });
});
