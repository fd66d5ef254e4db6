// What targeting may cost one evaluation (issue 31): `matches` patterns are held to a small automaton where
// they are written (so re2js never leaves its DFA for the slow NFA), an evaluation matches a bounded number
// of characters, and a prerequisite reached by several paths is evaluated once. Timings live in
// bench/rules.mjs; these tests pin the answers and the counts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Condition,
  evaluateFlag,
  MATCHED_CHARACTERS_MAX,
  MATCHED_CHARACTERS_PER_TEST,
  expandedSize,
  PATTERN_SIZE_MAX,
  PATTERN_SIZE_TOTAL_MAX,
  PATTERN_STATES_MAX,
  PATTERN_STATES_TOTAL_MAX,
  PATTERNS_MAX,
  patternCost,
  type TargetedFlag,
  validateConfiguration,
  validateSegmentConditions,
} from "../src/index.js";
import { flag, resolver, rule } from "./rules-helpers.js";

const matches = (values: string[], attribute = "text"): Condition => ({ attribute, operator: "matches", values });

describe("a pattern's automaton", () => {
  it("is counted by building it in re2js's DFA (these pin what complexity reads of re2js's internals)", () => {
    assert.deepEqual(patternCost("beta", false), { states: 0, work: 0 }, "a literal needs no DFA");
    assert.deepEqual(patternCost("^[a-z]+@example\\.com$", false), { states: 0, work: 0 }, "nor a one-pass pattern");
    const domain = patternCost("@example\\.com$", false);
    assert.ok(domain.states > 10 && domain.states < 30, JSON.stringify(domain));
    const agent = patternCost("(?i)(chrome|firefox|safari)/[0-9]+", false);
    assert.ok(agent.states > 10 && agent.states < 100, JSON.stringify(agent));
    assert.ok(patternCost("\\bbeta\\b", false).states > 0, "word boundaries");
    assert.ok(patternCost("\\pL+x", false).states > 0, "Unicode classes");
  });

  it("is Infinity past the limit: bounded repetitions after a wildcard multiply states", () => {
    for (const pattern of [".{0,1000}.{0,1000}[^b]", "a[ab]{10}b$", "^.{1,64}@.{1,255}$", "x.{0,9}[^b]$"]) {
      assert.equal(patternCost(pattern, false).states, Number.POSITIVE_INFINITY, pattern);
    }
    // 2^9 subsets of "where an a was seen" fit; 2^10 do not.
    assert.ok(patternCost("a[ab]{8}b$", false).states <= PATTERN_STATES_MAX);
  });

  it("matches as before: counting states changes no answer", () => {
    const f = flag({ rules: [rule([matches(["@example\\.com$", "(?i)chrome/[0-9]+"])])] });
    const project = resolver();
    for (const [text, on] of [
      ["ann@example.com", true],
      ["ann@example.com.evil", false],
      ["Mozilla CHROME/120", true],
      ["chrome/", false],
    ] as const) {
      assert.equal(evaluateFlag(f, { attributes: { text } }, project).variant, on ? "on" : "off", text);
    }
  });
});

describe("the validator refuses costly patterns where they are written", () => {
  it("one pattern past PATTERN_SIZE_MAX: invalid_regex before it is even compiled", () => {
    const problems = validateConfiguration(flag({ rules: [rule([matches(["ok", ".{0,1000}.{0,1000}[^b]"])])] }));
    assert.deepEqual(
      problems.map((p) => [p.code, p.path]),
      [["invalid_regex", "/rules/0/conditions/0/values/1"]],
    );
    assert.match(
      problems[0]?.message ?? "",
      /too large: its repetitions expand it to about 4,001 instructions, more than 500/,
    );
    assert.equal(expandedSize(".{0,1000}"), 2000);
    assert.equal(expandedSize("(a{10}){10}"), 220, "nested repetitions multiply");
    assert.equal(expandedSize("\\d{4}-\\d{2}-\\d{2}"), 18);
    assert.equal(expandedSize("a\\{1000\\}"), 7, "an escaped brace repeats nothing");
    assert.equal(expandedSize("[{}]{3}"), 6, "nor one in a class");
    assert.equal(expandedSize("\\Qa{1000}\\E"), 7, "nor one quoted");
    assert.ok(expandedSize("(abcdefghij){0,100}") > PATTERN_SIZE_MAX);
  });

  it(`the patterns of a configuration past ${PATTERN_SIZE_TOTAL_MAX} instructions in all: limit, the rest not compiled`, () => {
    const values = Array.from({ length: 11 }, (_, i) => `^q${i}(abcdefghij){0,40}`);
    const problems = validateConfiguration(flag({ rules: [rule([matches(values)])] }));
    assert.ok(problems.length > 0 && problems.every((p) => p.code === "limit"), JSON.stringify(problems));
    assert.match(problems[0]?.message ?? "", /expand to about .* instructions in all, more than 5,000/);
  });

  it("one pattern past PATTERN_STATES_MAX: 400 invalid_regex at the value, saying what to write instead", () => {
    const problems = validateConfiguration(flag({ rules: [rule([matches(["ok", "x.{0,9}[^b]$"])])] }));
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.code, "invalid_regex");
    assert.equal(problems[0]?.path, "/rules/0/conditions/0/values/1");
    assert.match(
      problems[0]?.message ?? "",
      /too complex to match in bounded time: its automaton needs more than 1,000 states/,
    );
    assert.match(problems[0]?.message ?? "", /write \.\* or \[\^@\]\+ rather than/);
  });

  it("in a segment's conditions too", () => {
    const problems = validateSegmentConditions([matches(["a[ab]{12}b$"])]);
    assert.deepEqual(
      problems.map((p) => [p.code, p.path]),
      [["invalid_regex", "/conditions/0/values/0"]],
    );
  });

  it(`more than ${PATTERNS_MAX} distinct patterns in one configuration: limit`, () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `^p${i}-`);
    const atLimit = flag({
      rules: [rule([matches(values(50))], "a"), rule([matches(values(PATTERNS_MAX).slice(50))], "b")],
    });
    assert.deepEqual(validateConfiguration(atLimit), []);
    const past = flag({
      rules: [rule([matches(values(50))], "a"), rule([matches(values(PATTERNS_MAX + 1).slice(50))], "b")],
    });
    const problems = validateConfiguration(past);
    assert.deepEqual(
      problems.map((p) => [p.code, p.path]),
      [["limit", "/rules"]],
    );
    assert.match(problems[0]?.message ?? "", /more than 100 distinct matches patterns/);
    // The same pattern in several rules counts once.
    const repeated = flag({
      rules: Array.from({ length: 100 }, (_, i) => rule([matches(values(PATTERNS_MAX))], `r${i}`)),
    });
    assert.deepEqual(validateConfiguration(repeated), []);
  });

  it(`patterns needing more than ${PATTERN_STATES_TOTAL_MAX} states in all: limit`, () => {
    // a[ab]{8}b$ needs 769 states (2^9 subsets of where an a was seen, and a few more); seven such need more
    // than 5,000.
    const values = ["ab", "cd", "ef", "gh", "ij", "kl", "mn"].map(([x, y]) => `${x}[${x}${y}]{8}${y}$`);
    const states = values.reduce((n, v) => n + patternCost(v, false).states, 0);
    assert.ok(states > PATTERN_STATES_TOTAL_MAX, `${states}`);
    const problems = validateConfiguration(flag({ rules: [rule([matches(values)])] }));
    assert.deepEqual(
      problems.map((p) => p.code),
      ["limit"],
    );
    assert.match(problems[0]?.message ?? "", /automaton states in all, more than 5,000/);
  });

  it("a configuration stored before these limits still evaluates (they hold where it is written)", () => {
    const f = flag({ rules: [rule([matches(["x.{0,9}[^b]$"])])] });
    assert.equal(validateConfiguration(f)[0]?.code, "invalid_regex");
    assert.deepEqual(validateConfiguration(f, undefined, { patternCosts: false }), []);
    assert.equal(evaluateFlag(f, { attributes: { text: "x123" } }, resolver()).variant, "on");
  });
});

describe("an evaluation matches at most MATCHED_CHARACTERS_MAX characters", () => {
  const values = Array.from({ length: 20 }, (_, i) => `^z${i}`);
  const f = flag({ rules: [rule([matches(values)])] });

  it("past it, the evaluation answers ERROR (GENERAL) and serves no variant", () => {
    // 20 patterns × 10,001 characters > 200,000.
    const result = evaluateFlag(f, { attributes: { text: "a".repeat(10_001) } }, resolver());
    assert.equal(result.reason, "ERROR");
    assert.equal(result.errorCode, "GENERAL");
    assert.equal(result.variant, null);
    assert.match(result.errorMessage ?? "", /matched more than 200,000 characters against patterns/);
  });

  it("up to it, it answers; a value shorter than MATCHED_CHARACTERS_PER_TEST counts as that many", () => {
    assert.equal(MATCHED_CHARACTERS_MAX / values.length, 10_000);
    assert.equal(evaluateFlag(f, { attributes: { text: "a".repeat(10_000) } }, resolver()).reason, "DEFAULT");
    // A list's elements are matched one by one, each counted: 100 short elements × 20 patterns = 200,000.
    const list = Array.from(
      { length: MATCHED_CHARACTERS_MAX / values.length / MATCHED_CHARACTERS_PER_TEST },
      () => "a",
    );
    assert.equal(evaluateFlag(f, { attributes: { text: list } }, resolver()).reason, "DEFAULT");
    assert.equal(evaluateFlag(f, { attributes: { text: [...list, "a"] } }, resolver()).reason, "ERROR");
  });

  it("a match ends the condition's matching (the first pattern that holds is the last counted)", () => {
    const result = evaluateFlag(f, { attributes: { text: `z0${"a".repeat(150_000)}` } }, resolver());
    assert.equal(result.variant, "on");
  });

  it("each evaluation has its own budget", () => {
    const text = "a".repeat(9_000);
    for (let i = 0; i < 5; i++) assert.equal(evaluateFlag(f, { attributes: { text } }, resolver()).reason, "DEFAULT");
  });
});

describe("prerequisites are evaluated once per evaluation", () => {
  it("a diamond: d, reached through b and c, draws its call rollout once", () => {
    const d = flag({ name: "d", percentageCalls: 50 });
    const b = flag({ name: "b", status: "enabled", prerequisites: [{ flag: "d", variants: ["on", "off"] }] });
    const c = flag({ name: "c", status: "enabled", prerequisites: [{ flag: "d", variants: ["on", "off"] }] });
    const a = flag({
      name: "a",
      status: "enabled",
      prerequisites: [
        { flag: "b", variants: ["on"] },
        { flag: "c", variants: ["on"] },
      ],
    });
    const project = resolver({ flags: [b, c, d] });
    assert.equal(evaluateFlag(a, {}, project).reason, "STATIC");
    assert.equal(project.calls.random, 1);
    // The next evaluation evaluates d afresh.
    evaluateFlag(a, {}, project);
    assert.equal(project.calls.random, 2);
  });

  it("20 prerequisites over 5 levels: each flag once, not 20^5 times", () => {
    // Level k holds 20 flags, each needing all 20 flags of level k + 1; level 5 draws a call rollout.
    const flags: TargetedFlag[] = [];
    const level = (k: number) => Array.from({ length: 20 }, (_, i) => `l${k}-${i}`);
    for (let k = 1; k <= 5; k++) {
      for (const name of level(k)) {
        const below = k < 5 ? level(k + 1).map((f) => ({ flag: f, variants: ["on"] })) : undefined;
        flags.push(flag({ name, status: "enabled", percentageCalls: 0, ...(below ? { prerequisites: below } : {}) }));
      }
    }
    const top = flag({
      name: "top",
      status: "enabled",
      prerequisites: level(1).map((f) => ({ flag: f, variants: ["on"] })),
    });
    const project = resolver({ flags });
    assert.equal(evaluateFlag(top, {}, project).reason, "STATIC");
    // Each of the 100 flags is resolved once per reference (20 + 4 × 400), evaluated once.
    assert.equal(project.calls.flag.length, 20 + 4 * 20 * 20);
    assert.equal(new Set(project.calls.flag).size, 100);
  });
});
