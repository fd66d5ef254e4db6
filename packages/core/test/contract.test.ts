import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Value } from "typebox/value";
import {
  isActorId,
  isAttributeName,
  isEmail,
  isFlagName,
  isProjectId,
  isTargetingKey,
  normalizeEmail,
  queryAttributeParameter,
  readQueryAttributeParameter,
} from "../src/index.js";
import { ConditionSchema, CreateUserBody, Limits, RuleSchema } from "../src/schemas/index.js";

// Clients check ids with the contract's predicates; the server validates them with the contract's schemas.
// Both must take the same ids, or a client refuses what the server accepts (or the other way round).

const idCharacters = fc.constantFrom(..."aZ09._-:/$ \u0000\u001f\u007f\u009f\u00e9\u{1F600}".split(""), "\u{1F600}");
const idLike = fc.oneof(
  fc.string({ unit: idCharacters, maxLength: 300 }),
  fc.string({ maxLength: 300 }),
  fc.constantFrom(".", "..", "...", "", "a".repeat(64), "a".repeat(65), "a".repeat(128), "a".repeat(129)),
  fc.constantFrom("a".repeat(256), "a".repeat(257), "\u{1F600}".repeat(256), "\u{1F600}".repeat(257)),
  fc.constantFrom("$now", "$nowx", "$", "a$", "\u{1F600}".repeat(128), "\u{1F600}".repeat(129), `${"a".repeat(63)}.`),
);

describe("the contract's id predicates", () => {
  for (const [name, predicate, schema] of [
    ["project id", isProjectId, Limits.projectId],
    ["flag name", isFlagName, Limits.flagName],
    ["actor id", isActorId, Limits.actorId],
    ["variant key and rule id", isTargetingKey, RuleSchema.properties.id],
    ["attribute name", isAttributeName, ConditionSchema.properties.attribute],
  ] as const) {
    it(`take exactly the ${name}s the schema takes`, () => {
      fc.assert(
        fc.property(idLike, (id) => predicate(id) === Value.Check(schema, id)),
        { numRuns: 2000 },
      );
    });
  }

  it("count an actor id's length in characters, as the server does", () => {
    assert.equal(isActorId("\u{1F600}".repeat(256)), true);
    assert.equal(isActorId("\u{1F600}".repeat(257)), false);
    assert.equal(isActorId(".."), false);
    assert.equal(isActorId("a\u0085b"), false);
  });

  it("refuse what is not a string", () => {
    for (const value of [undefined, null, 1, ["a"], { id: "a" }]) {
      assert.equal(isProjectId(value) || isFlagName(value) || isActorId(value), false);
    }
  });
});

describe("the query's attribute grammar (query-attributes.ts)", () => {
  it("reads back what it writes: a value's parameter and a list's, for any name without ]", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }).filter((name) => !name.includes("]")),
        fc.boolean(),
        (name, list) => {
          const read = readQueryAttributeParameter(queryAttributeParameter(name, list));
          assert.deepEqual(read, { name, list });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("reads attributes[NAME] as a value, attributes[NAME][] as a list's element, and nothing else", () => {
    assert.deepEqual(readQueryAttributeParameter("attributes[age]"), { name: "age", list: false });
    assert.deepEqual(readQueryAttributeParameter("attributes[age][]"), { name: "age", list: true });
    assert.deepEqual(readQueryAttributeParameter("attributes[__proto__][]"), { name: "__proto__", list: true });
    assert.deepEqual(readQueryAttributeParameter("attributes[a[b]"), { name: "a[b", list: false });
    for (const other of [
      "attributes",
      "attributes[]",
      "attributes[age][][]",
      "attributes[age]x",
      "actorIds[]",
      "xattributes[a]",
    ]) {
      assert.equal(readQueryAttributeParameter(other), undefined, other);
    }
  });
});

describe("the contract's e-mail rule", () => {
  const emailCharacters = fc.constantFrom(
    ..."aZ0.@@ \t\u0000\u001f\u007f\u0085\u00a0\u00e9\u212a".split(""),
    "\u{1F600}",
  );
  const emailLike = fc.oneof(
    fc.string({ unit: emailCharacters, maxLength: 300 }),
    fc.constantFrom("a@b", "ab", "@b", "a@", `${"a".repeat(250)}@b.c`, `${"a".repeat(251)}@b.c`, "\u{1F600}@\u{1F600}"),
  );

  it("isEmail takes exactly the e-mails POST /users's schema takes", () => {
    fc.assert(
      fc.property(emailLike, (email) => isEmail(email) === Value.Check(CreateUserBody.properties.email, email)),
      { numRuns: 2000 },
    );
    // Strings the schema cannot see (the server's request hook refuses them before it validates).
    assert.equal(isEmail("a\uD800@example.com"), false);
    assert.equal(isEmail(undefined), false);
  });

  it("normalizeEmail lower-cases A–Z and nothing else", () => {
    assert.equal(normalizeEmail("Kate@Example.COM"), "kate@example.com");
    // The Kelvin sign and the dotted capital I would become ASCII letters with toLowerCase().
    assert.equal(normalizeEmail("\u212Aate@example.com"), "\u212Aate@example.com");
    assert.equal(normalizeEmail("\u0130DA@EXAMPLE.COM"), "\u0130da@example.com");
    assert.equal(normalizeEmail("J\u00D6RG@X.DE"), "j\u00D6rg@x.de");
  });
});
