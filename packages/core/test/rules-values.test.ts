import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import fc from "fast-check";
import { compareSemver, parseInstant, parseSemver, type SemVer } from "../src/index.js";
import { toInstant, toNumber, toText } from "../src/rules/values.js";

// The readings the operators rest on: semantic versions, ISO 8601 instants, numbers and text.
// `semver` (npm) is the oracle for SemVer 2.0 precedence on strict versions.
const semverPackage = createRequire(import.meta.url)("semver") as {
  compare(a: string, b: string): number;
  valid(v: string): string | null;
};

const v = (text: string): SemVer => {
  const parsed = parseSemver(text);
  assert.ok(parsed, `${text} should parse`);
  return parsed;
};
const cmp = (a: string, b: string) => compareSemver(v(a), v(b));

describe("parseSemver", () => {
  it("reads MAJOR.MINOR.PATCH, prereleases and build metadata", () => {
    assert.deepEqual(parseSemver("1.2.3"), { major: "1", minor: "2", patch: "3", prerelease: [] });
    assert.deepEqual(parseSemver("1.0.0-alpha.1+build.5"), {
      major: "1",
      minor: "0",
      patch: "0",
      prerelease: ["alpha", "1"],
    });
    assert.deepEqual(parseSemver("0.0.0-0"), { major: "0", minor: "0", patch: "0", prerelease: ["0"] });
  });

  it("reads 1 and 1.2 as 1.0.0 and 1.2.0, with or without a leading v", () => {
    for (const [text, same] of [
      ["1", "1.0.0"],
      ["1.2", "1.2.0"],
      ["v1.2.3", "1.2.3"],
      ["V2", "2.0.0"],
      ["v1.2-rc.1", "1.2.0-rc.1"],
      ["1+build", "1.0.0"],
    ]) {
      assert.equal(cmp(text as string, same as string), 0, `${text} = ${same}`);
    }
  });

  it("reads leading zeros in the version core as the number (CalVer), not in numeric prerelease identifiers", () => {
    assert.equal(cmp("2024.01.15", "2024.1.15"), 0);
    assert.equal(cmp("01.002.0003", "1.2.3"), 0);
    assert.equal(parseSemver("1.0.0-01"), null);
    assert.ok(parseSemver("1.0.0-0a"), "0a is alphanumeric, not numeric");
  });

  it("refuses what is not a version", () => {
    for (const text of [
      "",
      "v",
      "vv1",
      " 1.2.3",
      "1.2.3 ",
      "1.2.3.4",
      "1..2",
      "1.2.",
      ".1",
      "-1",
      "1.2.3-",
      "1.2.3-a..b",
      "1.2.3+",
      "1.2.3+a..b",
      "1.2.3-a_b",
      "a.b.c",
      "1.2.x",
      "=1.2.3",
      "^1.2.3",
      "１.２.３",
    ]) {
      assert.equal(parseSemver(text), null, JSON.stringify(text));
    }
  });

  it("compares numbers of any size exactly", () => {
    assert.ok(cmp("99999999999999999999.0.0", "99999999999999999998.0.0") > 0);
    assert.ok(cmp("1.0.0-99999999999999999999", "1.0.0-100000000000000000000") < 0);
    assert.ok(cmp("10.0.0", "9.0.0") > 0, "numerically, not as text");
  });
});

describe("compareSemver", () => {
  it("orders SemVer 2.0's example chain (§11)", () => {
    const chain = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.1",
      "1.1.0",
      "2.0.0",
    ];
    for (let i = 0; i < chain.length; i++) {
      for (let j = 0; j < chain.length; j++) {
        assert.equal(cmp(chain[i] as string, chain[j] as string), Math.sign(i - j), `${chain[i]} vs ${chain[j]}`);
      }
    }
  });

  it("ignores build metadata", () => {
    assert.equal(cmp("1.0.0+a", "1.0.0+b"), 0);
    assert.equal(cmp("1.0.0-rc.1+a", "1.0.0-rc.1"), 0);
  });

  const core = fc.integer({ min: 0, max: 30 });
  const identifier = fc.oneof(
    fc.constantFrom("0", "1", "2", "10", "11", "alpha", "beta", "rc", "a1", "1a", "-", "-x", "A", "Z", "z"),
    fc.integer({ min: 0, max: 1000 }).map(String),
  );
  const strict = fc
    .record({
      major: core,
      minor: core,
      patch: core,
      pre: fc.array(identifier, { maxLength: 3 }),
      build: fc.option(fc.constantFrom("b1", "exp.sha.5114f85", "001"), { nil: undefined }),
    })
    .map(
      ({ major, minor, patch, pre, build }) =>
        `${major}.${minor}.${patch}${pre.length ? `-${pre.join(".")}` : ""}${build ? `+${build}` : ""}`,
    );

  it("agrees with the semver package on strict versions", () => {
    fc.assert(
      fc.property(strict, strict, (a, b) => {
        assert.ok(semverPackage.valid(a), a);
        assert.equal(cmp(a, b), semverPackage.compare(a, b), `${a} vs ${b}`);
      }),
      { numRuns: 5000 },
    );
  });

  it("is a total order: antisymmetric and transitive", () => {
    fc.assert(
      fc.property(strict, strict, strict, (a, b, c) => {
        // `|| 0`: the negation of an equal pair's 0 is -0, which strict equality tells from 0.
        assert.equal(cmp(a, b), -cmp(b, a) || 0);
        if (cmp(a, b) <= 0 && cmp(b, c) <= 0) assert.ok(cmp(a, c) <= 0);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("parseInstant", () => {
  it("reads RFC 3339 instants with Z or an offset, seconds optional, fractions to the millisecond", () => {
    assert.equal(parseInstant("2026-12-01T09:00:00Z"), Date.UTC(2026, 11, 1, 9));
    assert.equal(parseInstant("2026-12-01T09:00Z"), Date.UTC(2026, 11, 1, 9));
    assert.equal(parseInstant("2026-12-01t10:00:00+01:00"), Date.UTC(2026, 11, 1, 9));
    assert.equal(parseInstant("2026-12-01T04:30:00-04:30"), Date.UTC(2026, 11, 1, 9));
    assert.equal(parseInstant("2026-12-01T09:00:00.5z"), Date.UTC(2026, 11, 1, 9, 0, 0, 500));
    assert.equal(parseInstant("2026-12-01T09:00:00.123456789Z"), Date.UTC(2026, 11, 1, 9, 0, 0, 123));
    assert.equal(parseInstant("2024-02-29T00:00:00Z"), Date.UTC(2024, 1, 29));
    assert.equal(parseInstant("2000-02-29T00:00:00Z"), Date.UTC(2000, 1, 29));
    assert.equal(parseInstant("0001-01-01T00:00:00Z"), -62135596800000);
    assert.equal(parseInstant("1969-12-31T23:59:59.999Z"), -1);
    assert.equal(parseInstant("9999-12-31T23:59:59Z"), 253402300799000);
  });

  it("refuses dates without a time or a zone, impossible dates and leap seconds", () => {
    for (const text of [
      "",
      "2026-12-01",
      "2026-12-01T09:00:00",
      "2026-12-01 09:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-00-01T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2026-12-00T00:00:00Z",
      "2026-12-01T24:00:00Z",
      "2026-12-01T09:60:00Z",
      "2026-12-31T23:59:60Z",
      "2026-12-01T09:00:00+24:00",
      "2026-12-01T09:00:00+01:60",
      "2026-12-01T09:00:00+0100",
      "2026-12-01T09:00:00.Z",
      "2026-12-01T09:00:00.1234567890Z",
      "+2026-12-01T09:00:00Z",
      "26-12-01T09:00:00Z",
      "1733043600000",
      "Tue, 01 Dec 2026 09:00:00 GMT",
    ]) {
      assert.ok(Number.isNaN(parseInstant(text)), JSON.stringify(text));
    }
  });

  it("agrees with Date.parse on ECMAScript's own date-time format", () => {
    const pad = (n: number, w = 2) => String(n).padStart(w, "0");
    const instant = fc
      .record({
        y: fc.integer({ min: 1970, max: 2200 }),
        mo: fc.integer({ min: 1, max: 12 }),
        d: fc.integer({ min: 1, max: 28 }),
        h: fc.integer({ min: 0, max: 23 }),
        mi: fc.integer({ min: 0, max: 59 }),
        s: fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }),
        ms: fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }),
        zone: fc.oneof(
          fc.constant("Z"),
          fc
            .tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
            .map(([sign, oh, om]) => `${sign}${pad(oh)}:${pad(om)}`),
        ),
      })
      .map(({ y, mo, d, h, mi, s, ms, zone }) => {
        const seconds = s === undefined ? "" : `:${pad(s)}${ms === undefined ? "" : `.${pad(ms, 3)}`}`;
        return `${y}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}${seconds}${zone}`;
      });
    fc.assert(
      fc.property(instant, (text) => assert.equal(parseInstant(text), Date.parse(text), text)),
      { numRuns: 3000 },
    );
  });
});

describe("an attribute read as a number, as text, as an instant", () => {
  it("numbers: finite numbers, and strings in JSON's number syntax", () => {
    for (const [value, n] of [
      [30, 30],
      [-0, -0],
      [1.5, 1.5],
      ["30", 30],
      ["-1.5e3", -1500],
      ["0", 0],
      ["1E2", 100],
      ["0.5", 0.5],
    ] as const) {
      assert.equal(toNumber(value), n, JSON.stringify(value));
    }
    for (const value of [
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "",
      " 30",
      "30 ",
      "0x1E",
      "1_000",
      "Infinity",
      "NaN",
      "+1",
      "01",
      ".5",
      "5.",
      "1e400",
      true,
      null,
      ["30"],
    ]) {
      assert.ok(Number.isNaN(toNumber(value)), JSON.stringify(value));
    }
  });

  it("text: strings as they are, finite numbers as JavaScript writes them, booleans as true/false", () => {
    assert.equal(toText("Pro"), "Pro");
    assert.equal(toText(30), "30");
    assert.equal(toText(1.5), "1.5");
    assert.equal(toText(-0), "0");
    assert.equal(toText(true), "true");
    assert.equal(toText(false), "false");
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, null, undefined, ["a"], {}]) {
      assert.equal(toText(value), undefined, String(value));
    }
  });

  it("instants: ISO strings and milliseconds since the epoch", () => {
    assert.equal(toInstant("1970-01-01T00:00:01Z"), 1000);
    assert.equal(toInstant(1000), 1000);
    assert.ok(Number.isNaN(toInstant(Number.POSITIVE_INFINITY)));
    assert.ok(Number.isNaN(toInstant(true)));
    assert.ok(Number.isNaN(toInstant("yesterday")));
  });
});
