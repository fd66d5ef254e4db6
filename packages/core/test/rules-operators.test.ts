import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { CONDITION_OPERATORS, type Condition, type ConditionOperator, evaluateFlag } from "../src/index.js";
import { flag, holds, resolver, rule } from "./rules-helpers.js";

// Every operator at its edges, through evaluateFlag (a boolean flag whose one rule serves on).

const c = (
  attribute: string,
  operator: ConditionOperator,
  values: (string | number)[],
  extra: Partial<Condition> = {},
): Condition => ({ attribute, operator, values, ...extra });

/** holds() for the condition, and for it negated. */
const both = (condition: Condition, context: Record<string, unknown>) => [
  holds(condition, context),
  holds({ ...condition, negate: !condition.negate }, context),
];

describe("in and not_in", () => {
  it("hold when the attribute is (not) one of the values", () => {
    assert.equal(holds(c("plan", "in", ["pro", "team"]), { plan: "team" }), true);
    assert.equal(holds(c("plan", "in", ["pro", "team"]), { plan: "free" }), false);
    assert.equal(holds(c("plan", "not_in", ["pro", "team"]), { plan: "free" }), true);
    assert.equal(holds(c("plan", "not_in", ["pro", "team"]), { plan: "pro" }), false);
    assert.equal(holds(c("plan", "in", [""]), { plan: "" }), true, "the empty string is a value like any");
  });

  it("are exact unless caseInsensitive", () => {
    assert.equal(holds(c("country", "in", ["FR"]), { country: "fr" }), false);
    assert.equal(holds(c("country", "in", ["FR"], { caseInsensitive: true }), { country: "fr" }), true);
    assert.equal(holds(c("country", "in", ["fr"], { caseInsensitive: true }), { country: "FR" }), true);
    assert.equal(holds(c("city", "in", ["ÉCOLE"], { caseInsensitive: true }), { city: "école" }), true);
    assert.equal(holds(c("country", "not_in", ["FR"], { caseInsensitive: true }), { country: "fr" }), false);
  });

  it("read numbers and booleans as text, so a query string's and OFREP's contexts agree", () => {
    assert.equal(holds(c("seats", "in", ["30"]), { seats: 30 }), true);
    assert.equal(holds(c("seats", "in", ["30"]), { seats: "30" }), true);
    assert.equal(holds(c("seats", "in", ["30"]), { seats: 30.5 }), false);
    assert.equal(holds(c("beta", "in", ["true"]), { beta: true }), true);
    assert.equal(holds(c("beta", "in", ["true"]), { beta: false }), false);
  });

  it("a list holds when any element does; not_in when none does; negate applies to the whole list", () => {
    assert.equal(holds(c("groups", "in", ["admins"]), { groups: ["users", "admins"] }), true);
    assert.equal(holds(c("groups", "in", ["admins"]), { groups: ["users"] }), false);
    assert.equal(holds(c("groups", "not_in", ["banned"]), { groups: ["users", "admins"] }), true);
    assert.equal(holds(c("groups", "not_in", ["banned"]), { groups: ["users", "banned"] }), false);
    assert.equal(holds(c("groups", "in", ["x"]), { groups: [] }), false, "an empty list has no element that holds");
    assert.equal(holds(c("groups", "not_in", ["x"]), { groups: [] }), true, "…so not_in holds");
    assert.equal(holds(c("groups", "in", ["x"], { negate: true }), { groups: [] }), true);
  });

  it("negate turns in into not_in and not_in into in", () => {
    for (const plan of ["pro", "free"]) {
      assert.equal(
        holds(c("plan", "in", ["pro"], { negate: true }), { plan }),
        holds(c("plan", "not_in", ["pro"]), { plan }),
      );
      assert.equal(
        holds(c("plan", "not_in", ["pro"], { negate: true }), { plan }),
        holds(c("plan", "in", ["pro"]), { plan }),
      );
    }
  });

  it("a missing attribute (or null, or an object) fails both, negated or not", () => {
    for (const context of [{}, { plan: null }, { other: "pro" }, { plan: { tier: "pro" } }]) {
      for (const operator of ["in", "not_in"] as const) {
        assert.deepEqual(
          both(c("plan", operator, ["pro"]), context),
          [false, false],
          `${operator} ${JSON.stringify(context)}`,
        );
      }
    }
  });

  it("more than eight values (hashed rather than scanned) answer alike", () => {
    const many = Array.from({ length: 20 }, (_, i) => `v${i}`);
    assert.equal(holds(c("x", "in", many), { x: "v17" }), true);
    assert.equal(holds(c("x", "in", many), { x: "v20" }), false);
    assert.equal(
      holds(
        c(
          "x",
          "in",
          many.map((v) => v.toUpperCase()),
          { caseInsensitive: true },
        ),
        { x: "v3" },
      ),
      true,
    );
  });
});

describe("starts_with, ends_with, contains", () => {
  it("hold when the text starts with, ends with or contains any of the values", () => {
    assert.equal(holds(c("email", "ends_with", ["@example.com", "@example.org"]), { email: "ann@example.org" }), true);
    assert.equal(holds(c("email", "ends_with", ["@example.com"]), { email: "ann@example.com.evil" }), false);
    assert.equal(holds(c("email", "starts_with", ["test-", "qa-"]), { email: "qa-1@x" }), true);
    assert.equal(holds(c("email", "starts_with", ["test-"]), { email: "a-test-1" }), false);
    assert.equal(holds(c("agent", "contains", ["Mobile"]), { agent: "Mozilla/5.0 (Mobile)" }), true);
    assert.equal(holds(c("agent", "contains", ["Mobile"]), { agent: "Mozilla/5.0" }), false);
  });

  it("honour caseInsensitive and negate", () => {
    assert.equal(holds(c("email", "ends_with", ["@EXAMPLE.COM"]), { email: "a@example.com" }), false);
    assert.equal(
      holds(c("email", "ends_with", ["@EXAMPLE.COM"], { caseInsensitive: true }), { email: "a@Example.com" }),
      true,
    );
    assert.deepEqual(both(c("agent", "contains", ["bot"], { caseInsensitive: true }), { agent: "GoogleBot" }), [
      true,
      false,
    ]);
  });

  it("read numbers as text and lists element by element; missing fails negated too", () => {
    assert.equal(holds(c("zip", "starts_with", ["75"]), { zip: 75011 }), true);
    assert.equal(holds(c("tags", "contains", ["beta"]), { tags: ["x", "public-beta"] }), true);
    assert.equal(holds(c("tags", "contains", ["beta"], { negate: true }), { tags: ["x", "public-beta"] }), false);
    for (const operator of ["starts_with", "ends_with", "contains"] as const) {
      assert.deepEqual(both(c("email", operator, ["a"]), {}), [false, false]);
    }
  });
});

describe("matches", () => {
  it("finds the pattern anywhere (anchors are written out), in RE2's syntax", () => {
    assert.equal(holds(c("email", "matches", ["@example\\.(com|org)$"]), { email: "ann@example.org" }), true);
    assert.equal(holds(c("email", "matches", ["@example\\.(com|org)$"]), { email: "ann@example.org.x" }), false);
    assert.equal(holds(c("path", "matches", ["admin"]), { path: "/x/admin/y" }), true);
    assert.equal(holds(c("path", "matches", ["^admin"]), { path: "/x/admin/y" }), false);
    assert.equal(holds(c("name", "matches", ["^\\p{Lu}"]), { name: "Émile" }), true, "Unicode classes");
    assert.equal(holds(c("id", "matches", ["^(?P<kind>[a-z]+)-\\d+$"]), { id: "user-42" }), true, "RE2 named groups");
  });

  it("honours caseInsensitive through RE2's own case folding", () => {
    assert.equal(holds(c("agent", "matches", ["bot"]), { agent: "GoogleBOT" }), false);
    assert.equal(holds(c("agent", "matches", ["bot"], { caseInsensitive: true }), { agent: "GoogleBOT" }), true);
    assert.equal(holds(c("agent", "matches", ["(?i)bot"]), { agent: "GoogleBOT" }), true, "or the pattern's own flag");
  });

  it("any of several patterns; lists; missing fails negated too", () => {
    assert.equal(holds(c("v", "matches", ["^a", "^b"]), { v: "bee" }), true);
    assert.equal(holds(c("v", "matches", ["^a$"]), { v: ["x", "a"] }), true);
    assert.deepEqual(both(c("v", "matches", ["x"]), {}), [false, false]);
    assert.deepEqual(both(c("v", "matches", ["x"]), { v: "yxy" }), [true, false]);
  });

  it("answers (a+)+$ against 10,000 a's and a '!' (linear time: a backtracking engine would never return)", () => {
    // Only the answers are tested here; how long it takes (about 0.05 ms) is measured by bench/rules.mjs.
    const f = flag({ rules: [rule([c("text", "matches", ["(a+)+$"])])] });
    const project = resolver();
    assert.equal(evaluateFlag(f, { attributes: { text: `${"a".repeat(10_000)}!` } }, project).variant, "off");
    assert.equal(evaluateFlag(f, { attributes: { text: "a".repeat(10_000) } }, project).variant, "on");
  });
});

describe("eq, gt, gte, lt, lte", () => {
  it("compare numbers, at the bounds", () => {
    const cases: [ConditionOperator, number, boolean][] = [
      ["eq", 18, true],
      ["eq", 17, false],
      ["gt", 18, false],
      ["gt", 18.001, true],
      ["gte", 18, true],
      ["gte", 17.999, false],
      ["lt", 18, false],
      ["lt", 17.999, true],
      ["lte", 18, true],
      ["lte", 18.001, false],
    ];
    for (const [operator, age, expected] of cases) {
      assert.equal(holds(c("age", operator, [18]), { age }), expected, `${age} ${operator} 18`);
    }
    assert.equal(holds(c("n", "eq", [0]), { n: -0 }), true, "-0 equals 0");
  });

  it("take numeric strings in JSON's number syntax (a query string's attributes are strings)", () => {
    assert.equal(holds(c("age", "gte", [18]), { age: "21" }), true);
    assert.equal(holds(c("age", "gte", [18]), { age: "1.8e1" }), true);
    assert.equal(holds(c("age", "eq", [18]), { age: "18.0" }), true);
  });

  it("any of several values: eq any, gt the least, lt the greatest", () => {
    assert.equal(holds(c("n", "eq", [1, 2, 3]), { n: 2 }), true);
    assert.equal(holds(c("n", "gt", [10, 5]), { n: 6 }), true);
    assert.equal(holds(c("n", "lt", [10, 5]), { n: 9 }), true);
    assert.equal(holds(c("n", "lte", [10, 5]), { n: 11 }), false);
  });

  it("a value that is not a finite number never matches, negated or not", () => {
    for (const n of ["abc", "", " 18", "0x12", "Infinity", Number.NaN, Number.POSITIVE_INFINITY, true, {}]) {
      for (const operator of ["eq", "gt", "gte", "lt", "lte"] as const) {
        assert.deepEqual(both(c("age", operator, [18]), { age: n }), [false, false], `${String(n)} ${operator}`);
      }
    }
    assert.deepEqual(both(c("age", "gt", [18]), {}), [false, false], "missing");
  });

  it("lists: any element that reads as a number", () => {
    assert.equal(holds(c("scores", "gt", [90]), { scores: ["12", "abc", "95"] }), true);
    assert.equal(holds(c("scores", "gt", [90]), { scores: ["12", "abc"] }), false);
    assert.equal(holds(c("scores", "gt", [90], { negate: true }), { scores: ["12", "abc"] }), true);
  });
});

describe("semver_eq, semver_gt, semver_gte, semver_lt, semver_lte", () => {
  it("compare by SemVer 2.0 precedence, prereleases before their release", () => {
    const cases: [ConditionOperator, string, boolean][] = [
      ["semver_eq", "2.0.0", true],
      ["semver_eq", "2.0.0+build.7", true],
      ["semver_eq", "2.0.0-rc.1", false],
      ["semver_gt", "2.0.1", true],
      ["semver_gt", "2.0.0", false],
      ["semver_gte", "2.0.0", true],
      ["semver_gte", "2.0.0-rc.1", false],
      ["semver_lt", "2.0.0-rc.1", true],
      ["semver_lt", "10.0.0", false],
      ["semver_lte", "2.0.0", true],
      ["semver_lte", "2.0.1-alpha", false],
    ];
    for (const [operator, version, expected] of cases) {
      assert.equal(
        holds(c("appVersion", operator, ["2.0.0"]), { appVersion: version }),
        expected,
        `${version} ${operator}`,
      );
    }
  });

  it("read 1 and 1.2 as 1.0.0 and 1.2.0 and accept a leading v, in values and attributes alike", () => {
    assert.equal(holds(c("v", "semver_eq", ["1.2"]), { v: "v1.2.0" }), true);
    assert.equal(holds(c("v", "semver_gte", ["v2"]), { v: "2.0.0" }), true);
    assert.equal(holds(c("v", "semver_lt", ["2"]), { v: "1.99.99" }), true);
    assert.equal(holds(c("v", "semver_eq", ["3.0.0"]), { v: 3 }), true, "a number attribute reads as text");
    assert.equal(holds(c("v", "semver_eq", ["1.5.0"]), { v: 1.5 }), true);
  });

  it("an attribute that is not a version never matches, negated or not; lists by element", () => {
    for (const v of ["latest", "1.2.3.4", "", " 1.0.0", true, {}]) {
      assert.deepEqual(both(c("v", "semver_gt", ["1.0.0"]), { v }), [false, false], JSON.stringify(v));
    }
    assert.deepEqual(both(c("v", "semver_gt", ["1.0.0"]), {}), [false, false]);
    assert.equal(holds(c("v", "semver_gt", ["1.0.0"]), { v: ["junk", "0.9", "1.1"] }), true);
  });

  it("several values: eq any, gt the least, lt the greatest", () => {
    assert.equal(holds(c("v", "semver_eq", ["1.0.0", "2.0.0"]), { v: "2.0" }), true);
    assert.equal(holds(c("v", "semver_gt", ["3.0.0", "1.0.0"]), { v: "1.5.0" }), true);
    assert.equal(holds(c("v", "semver_lt", ["3.0.0", "1.0.0"]), { v: "2.5.0" }), true);
  });
});

describe("before and after", () => {
  const at = "2026-12-01T09:00:00Z";

  it("compare ISO 8601 instants, strictly", () => {
    assert.equal(holds(c("signup", "before", [at]), { signup: "2026-12-01T08:59:59.999Z" }), true);
    assert.equal(holds(c("signup", "before", [at]), { signup: at }), false);
    assert.equal(holds(c("signup", "after", [at]), { signup: at }), false);
    assert.equal(holds(c("signup", "after", [at]), { signup: "2026-12-01T10:00:00.001+01:00" }), true);
  });

  it("take milliseconds since the epoch as the attribute", () => {
    assert.equal(holds(c("signup", "after", [at]), { signup: Date.parse(at) + 1 }), true);
    assert.equal(holds(c("signup", "before", [at]), { signup: Date.parse(at) - 1 }), true);
  });

  it("$now is the evaluation time from the resolver's clock, read once however many conditions read it", () => {
    const now = Date.parse("2026-12-24T12:00:00Z");
    const window = [
      c("$now", "after", ["2026-12-24T00:00:00Z"]),
      c("$now", "before", ["2026-12-26T00:00:00Z"]),
      c("$now", "before", ["2027-01-01T00:00:00Z"]),
    ];
    const f = flag({ rules: [rule(window)] });
    const inside = resolver({ now });
    assert.equal(evaluateFlag(f, {}, inside).variant, "on");
    assert.equal(inside.calls.now, 1);
    assert.equal(evaluateFlag(f, {}, resolver({ now: Date.parse("2026-12-26T00:00:00Z") })).variant, "off");
    // A context's own "$now" is not the clock.
    assert.equal(evaluateFlag(f, { attributes: { $now: now } }, resolver({ now: 0 })).variant, "off");
  });

  it("$now falls back to Date.now without a clock, and is never read when no condition needs it", () => {
    const f = flag({ rules: [rule([c("$now", "after", ["2020-01-01T00:00:00Z"])])] });
    assert.equal(evaluateFlag(f, {}, { isMember: () => false }).variant, "on");
    const project = resolver();
    evaluateFlag(flag({ rules: [rule([c("x", "in", ["y"])])] }), {}, project);
    assert.equal(project.calls.now, 0);
  });

  it("an attribute that is not an instant never matches, negated or not", () => {
    for (const signup of ["2026-12-01", "yesterday", "", true, Number.NaN, {}]) {
      assert.deepEqual(both(c("signup", "before", [at]), { signup }), [false, false], JSON.stringify(signup));
    }
    assert.deepEqual(both(c("signup", "after", [at]), {}), [false, false]);
  });

  it("several values: before the latest, after the earliest", () => {
    assert.equal(
      holds(c("t", "before", ["2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"]), { t: "2026-06-01T00:00:00Z" }),
      true,
    );
    assert.equal(
      holds(c("t", "after", ["2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"]), { t: "2026-06-01T00:00:00Z" }),
      true,
    );
  });
});

describe("present", () => {
  it("holds when the attribute is set, to anything but null; negated, exactly when it is missing", () => {
    for (const value of ["", "x", 0, false, [], ["a"]]) {
      assert.deepEqual(both(c("email", "present", []), { email: value }), [true, false], JSON.stringify(value));
    }
    for (const context of [{}, { email: null }, { other: 1 }]) {
      assert.deepEqual(both(c("email", "present", []), context), [false, true], JSON.stringify(context));
    }
  });

  it("does not find what every object inherits", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      assert.equal(holds(c(name, "present", []), {}), false, name);
      assert.equal(holds(c(name, "in", ["x"], { negate: true }), {}), false, name);
    }
    assert.equal(holds(c("toString", "in", ["x"]), { toString: "x" }), true, "an own attribute of that name is read");
    assert.equal(holds(c("constructor", "present", []), JSON.parse('{"constructor": "a"}')), true);
  });
});

describe("in_segment and not_in_segment", () => {
  const project = resolver({
    members: { beta: ["alice"], staff: ["bob"] },
    segmentConditions: { "eu-customers": [c("country", "in", ["FR", "DE"])] },
  });
  const seg = (operator: "in_segment" | "not_in_segment", values: string[], negate?: boolean): Condition => ({
    operator,
    values,
    ...(negate === undefined ? {} : { negate }),
  });

  it("hold when an actor of the context is a listed member of one of the segments", () => {
    assert.equal(holds(seg("in_segment", ["beta"]), { actorIds: ["alice"] }, project), true);
    assert.equal(holds(seg("in_segment", ["beta"]), { actorIds: ["carol", "alice"] }, project), true);
    assert.equal(holds(seg("in_segment", ["beta", "staff"]), { actorIds: ["bob"] }, project), true);
    assert.equal(holds(seg("in_segment", ["beta"]), { actorIds: ["bob"] }, project), false);
    assert.equal(holds(seg("not_in_segment", ["beta"]), { actorIds: ["bob"] }, project), true);
    assert.equal(holds(seg("not_in_segment", ["beta"]), { actorIds: ["alice"] }, project), false);
    assert.equal(holds(seg("in_segment", ["beta"], true), { actorIds: ["alice"] }, project), false);
  });

  it("hold when the segment's conditions hold, with or without actors", () => {
    assert.equal(holds(seg("in_segment", ["eu-customers"]), { attributes: { country: "FR" } }, project), true);
    assert.equal(
      holds(seg("in_segment", ["eu-customers"]), { actorIds: ["x"], attributes: { country: "US" } }, project),
      false,
    );
    assert.equal(holds(seg("not_in_segment", ["eu-customers"]), { attributes: { country: "US" } }, project), true);
  });

  it("without actors or conditions, no one is in a segment (and so not_in_segment holds)", () => {
    assert.equal(holds(seg("in_segment", ["beta"]), {}, project), false);
    assert.equal(holds(seg("not_in_segment", ["beta"]), {}, project), true);
    assert.equal(holds(seg("in_segment", ["no-such-segment"]), { actorIds: ["alice"] }, project), false);
  });
});

describe("the missing-attribute rule", () => {
  it("a condition on an attribute the context lacks is false, negated or not, for every operator but present and the segment ones", () => {
    const valuesFor: Record<string, (string | number)[]> = {
      eq: [1],
      gt: [1],
      gte: [1],
      lt: [1],
      lte: [1],
      semver_eq: ["1.0.0"],
      semver_gt: ["1.0.0"],
      semver_gte: ["1.0.0"],
      semver_lt: ["1.0.0"],
      semver_lte: ["1.0.0"],
      before: ["2026-01-01T00:00:00Z"],
      after: ["2026-01-01T00:00:00Z"],
    };
    const operators = CONDITION_OPERATORS.filter((o) => !["present", "in_segment", "not_in_segment"].includes(o));
    fc.assert(
      fc.property(
        fc.constantFrom(...operators),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom<Record<string, unknown>>({}, { a: null }, { b: "x" }),
        (operator, negate, ci, context) => {
          const text = !(operator in valuesFor);
          const condition = c("a", operator, valuesFor[operator] ?? ["x"], {
            negate,
            ...(text && ci ? { caseInsensitive: true } : {}),
          });
          assert.equal(holds(condition, context), false);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("conditions shared between rules, decided once per evaluation", () => {
  const country = c("country", "in", ["FR", "DE"]);
  const f = flag({
    rules: [
      rule([country, c("v", "semver_gte", ["9.0.0"])], "old"),
      rule([country, c("v", "semver_gte", ["2.0.0"]), c("seats", "gte", [10])], "mid"),
      rule([country, c("seats", "gte", [10])], "any"),
    ],
  });
  const at = (attributes: Record<string, unknown>) =>
    evaluateFlag(f, { attributes: attributes as never }, resolver()).ruleId ?? null;

  it("a repeated condition answers for each context anew, in every rule that repeats it", () => {
    assert.equal(at({ country: "DE", v: "9.1.0", seats: 1 }), "old");
    assert.equal(at({ country: "DE", v: "2.1.0", seats: 10 }), "mid");
    assert.equal(at({ country: "DE", v: "1.0.0", seats: 10 }), "any");
    assert.equal(at({ country: "GB", v: "9.1.0", seats: 10 }), null);
    assert.equal(at({ country: "FR", v: ["0.1", "9.0.0-rc.1", "2.0.0"], seats: "12" }), "mid");
    assert.equal(at({ country: "FR", v: "junk", seats: 10 }), "any");
  });

  it("an evaluation started inside another (by the resolver's clock) does not see the outer one's results", () => {
    const timed = flag({
      rules: [
        rule([country, c("$now", "after", ["2026-01-01T00:00:00Z"])], "late"),
        rule([country, c("seats", "gte", [10])], "de"),
      ],
    });
    const inner: string[] = [];
    const nested = {
      ...resolver(),
      now: () => {
        inner.push(evaluateFlag(timed, { attributes: { country: "GB", seats: 50 } }, resolver({ now: 0 })).reason);
        return 0;
      },
    };
    const outer = evaluateFlag(timed, { attributes: { country: "DE", seats: 50 } }, nested);
    assert.deepEqual(inner, ["DEFAULT"]);
    assert.equal(outer.ruleId, "de");
  });

  it("versions compare by SemVer precedence through the numeric shortcut and past it", () => {
    const big = "1234567890123456789";
    const cases: [string, string, boolean][] = [
      [`${big}.0.0`, `${big}.0.1`, false],
      [`${big}.0.2`, `${big}.0.1`, true],
      [`1.${big}.0`, "1.999999999999999.0", true],
      ["1.2.3-rc.2", "1.2.3-rc.10", false],
      ["1.2.3", "1.2.3-rc.10", true],
      ["1.2.4-alpha", "1.2.3", true],
      ["01.002.3", "1.2.3", true],
    ];
    for (const [value, bound, gte] of cases) {
      assert.equal(holds(c("v", "semver_gte", [bound]), { v: value }), gte, `${value} >= ${bound}`);
      assert.equal(holds(c("v", "semver_lt", [bound]), { v: value }), !gte, `${value} < ${bound}`);
    }
  });
});
