// Evaluation of targeting (issue 25) over HTTP: every operator through the check with attributes that
// hold and that do not, splits, prerequisites, the check's answers and how it reads attributes, explain
// with attributes, and OFREP (native context attributes, typed values and reasons, the stock provider).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { ErrorCode, OpenFeature } from "@openfeature/server-sdk";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  ManualClock,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { addSegment } from "./helpers/environments.js";
import {
  check,
  contextQuery,
  createFlag,
  patchOk,
  type QueryAttributes,
  setRules,
  stringVariants,
} from "./helpers/targeting.js";

interface Case {
  readonly actors?: string[];
  readonly attributes?: QueryAttributes;
}

const iso = (ms: number) => new Date(ms).toISOString();

for (const dialect of DIALECTS) {
  describe(`targeting: check, explain and OFREP [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let checkKey: string;
    let vip: string;
    const clock = new ManualClock();
    const base = () => `/projects/${project}`;

    /** OFREP's single evaluation with a check key. */
    const ofrep = (flag: string, context: Record<string, unknown>) =>
      server.request("POST", `/ofrep/v1/evaluate/flags/${flag}`, { key: checkKey, body: { context } });
    const explain = async (flag: string, options: Case = {}) => {
      const res = await server.request("GET", `${base()}/flags/${flag}/explain${contextQuery(options)}`);
      assert.equal(res.status, 200, res.text);
      return res.body;
    };

    before(async () => {
      server = await startServer({ dialect, clock, random: () => 0.999 });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      vip = await addSegment(server, project, "vip", ["m1", "m2"]);
      // "op": serves yes when its one rule holds, otherwise no.
      await createFlag(server, project, "op", { type: "string", variants: stringVariants("yes", "no") });
    });
    after(() => server.close());

    /** Sets op's only rule to these conditions; answers whether it holds for each context. */
    const holdsFor = async (conditions: unknown[], cases: Case[]) => {
      await setRules(server, project, "op", [{ id: "r", conditions, serve: { variant: "yes" } }]);
      const answers: boolean[] = [];
      for (const c of cases) {
        const answer = await check(server, project, "op", c);
        assert.equal(answer.enabled, answer.variant === "yes");
        answers.push(answer.variant === "yes");
      }
      return answers;
    };
    /** One condition: each context in `holding` makes it hold, none in `failing` does. */
    const operator = async (condition: Record<string, unknown>, holding: Case[], failing: Case[]) => {
      const answers = await holdsFor([condition], [...holding, ...failing]);
      const expected = [...holding.map(() => true), ...failing.map(() => false)];
      assert.deepEqual(answers, expected, JSON.stringify({ condition, holding, failing }));
    };
    const attrs = (attributes: QueryAttributes): Case => ({ actors: ["u"], attributes });
    const none: Case = { actors: ["u"] };

    test("string operators: in, not_in, starts_with, ends_with, contains, matches; case and negation", async () => {
      const country = (v: string) => attrs({ country: v });
      await operator(
        { attribute: "country", operator: "in", values: ["DE", "FR"] },
        [country("FR"), country("DE")],
        [country("US"), country("de"), none],
      );
      await operator(
        { attribute: "country", operator: "in", values: ["DE"], caseInsensitive: true },
        [country("de"), country("DE")],
        [country("dk"), none],
      );
      // A missing attribute fails not_in and a negated condition alike.
      await operator(
        { attribute: "country", operator: "not_in", values: ["DE"] },
        [country("US")],
        [country("DE"), none],
      );
      await operator(
        { attribute: "country", operator: "in", values: ["DE"], negate: true },
        [country("US")],
        [country("DE"), none, attrs({ other: "DE" })],
      );
      const email = (v: string) => attrs({ email: v });
      await operator(
        { attribute: "email", operator: "starts_with", values: ["admin@", "root@"] },
        [email("root@x.io")],
        [email("bob@x.io"), email("ADMIN@x.io")],
      );
      await operator(
        { attribute: "email", operator: "ends_with", values: ["@example.com"] },
        [email("a@example.com")],
        [email("a@example.org"), email("a@EXAMPLE.COM")],
      );
      await operator(
        { attribute: "email", operator: "ends_with", values: ["@example.com"], caseInsensitive: true },
        [email("A@EXAMPLE.COM")],
        [email("a@example.co")],
      );
      await operator(
        { attribute: "email", operator: "contains", values: ["beta"] },
        [email("pre-beta-1@x")],
        [email("alpha@x")],
      );
      await operator(
        { attribute: "email", operator: "contains", values: ["beta"], negate: true },
        [email("alpha@x")],
        [email("pre-beta-1@x"), none],
      );
      await operator(
        { attribute: "email", operator: "matches", values: ["^[a-z]+@corp\\.io$"] },
        [email("ann@corp.io")],
        [email("ann@corp.iox"), email("Ann@corp.io"), none],
      );
      await operator(
        { attribute: "email", operator: "matches", values: ["^[a-z]+@corp\\.io$"], caseInsensitive: true },
        [email("Ann@CORP.io")],
        [email("ann@corp.io.evil")],
      );
      // A pathological pattern against a long input still answers (linear-time matching).
      await operator(
        { attribute: "email", operator: "matches", values: ["(a+)+$"] },
        [email("aaa")],
        [email(`${"a".repeat(1000)}!`)],
      );
    });

    test("number operators read numeric strings from the query; anything else never matches, negated or not", async () => {
      const seats = (v: string) => attrs({ seats: v });
      await operator(
        { attribute: "seats", operator: "eq", values: [3, 7] },
        [seats("3"), seats("7"), seats("3.0")],
        [seats("4"), seats("abc"), none],
      );
      await operator(
        { attribute: "seats", operator: "gt", values: [18] },
        [seats("19"), seats("1e3")],
        [seats("18"), seats("x")],
      );
      await operator({ attribute: "seats", operator: "gte", values: [18] }, [seats("18")], [seats("17.5")]);
      await operator({ attribute: "seats", operator: "lt", values: [10] }, [seats("-1"), seats("9.99")], [seats("10")]);
      await operator({ attribute: "seats", operator: "lte", values: [10] }, [seats("10")], [seats("10.5")]);
      await operator(
        { attribute: "seats", operator: "gt", values: [18], negate: true },
        [seats("3")],
        [seats("30"), seats("many"), none],
      );
    });

    test("semantic versions: lenient reading (1, v1.2), prerelease precedence; an unreadable version never matches", async () => {
      const v = (text: string) => attrs({ version: text });
      await operator(
        { attribute: "version", operator: "semver_eq", values: ["1.0.0"] },
        [v("1"), v("v1.0"), v("1.0.0")],
        [v("1.0.1"), v("1.0.0-rc.1")],
      );
      await operator(
        { attribute: "version", operator: "semver_gt", values: ["1.2"] },
        [v("v1.10"), v("1.2.1")],
        [v("1.2.0"), v("1.2.0-rc.1"), v("not-a-version"), none],
      );
      await operator(
        { attribute: "version", operator: "semver_gte", values: ["2.0.0-rc.1"] },
        [v("2.0.0"), v("2.0.0-rc.1"), v("2.0.0-rc.2")],
        [v("2.0.0-beta"), v("1.9")],
      );
      await operator(
        { attribute: "version", operator: "semver_lt", values: ["2"] },
        [v("1.99.99"), v("2.0.0-alpha")],
        [v("2"), v("v2.0.1")],
      );
      await operator(
        { attribute: "version", operator: "semver_lte", values: ["v2.1"] },
        [v("2.1.0"), v("2.0")],
        [v("2.1.1")],
      );
      await operator(
        { attribute: "version", operator: "semver_lt", values: ["2"], negate: true },
        [v("3.0.0")],
        [v("1.0.0"), v("garbage"), none],
      );
    });

    test("instants: before and after on an attribute, and on $now for time windows", async () => {
      const signup = (t: string) => attrs({ signup: t });
      await operator(
        { attribute: "signup", operator: "before", values: ["2026-01-01T00:00:00Z"] },
        [signup("2025-06-01T00:00:00Z"), signup("2025-12-31T23:59:59.999Z")],
        [signup("2026-06-01T00:00:00Z"), signup("yesterday"), none],
      );
      await operator(
        { attribute: "signup", operator: "after", values: ["2026-01-01T00:00:00Z"] },
        [signup("2026-01-01T00:00:01Z")],
        [signup("2025-06-01T00:00:00Z")],
      );
      // A window on the server's clock: from an hour from now to three hours from now.
      const now = clock.now();
      const window = [
        { attribute: "$now", operator: "after", values: [iso(now + 3_600_000)] },
        { attribute: "$now", operator: "before", values: [iso(now + 3 * 3_600_000)] },
      ];
      assert.deepEqual(await holdsFor(window, [none]), [false], "the window has not opened yet");
      clock.advance(2 * 3_600_000);
      assert.deepEqual(await holdsFor(window, [none, { actors: [] }]), [true, true], "open; $now needs no context");
      // $now is the server's clock, not an attribute a caller can set.
      assert.deepEqual(await holdsFor(window, [attrs({ $now: iso(now) })]), [true]);
      clock.advance(2 * 3_600_000);
      assert.deepEqual(await holdsFor(window, [none]), [false], "the window has closed");
    });

    test("OFREP's bulk ETag follows a $now window: 304 while nothing crosses, a new answer as it opens and closes", async () => {
      // The tag also moves with the stream-token window (15 minutes): the whole test stays inside one.
      const tokenWindow = 15 * 60_000;
      clock.advance(tokenWindow - (clock.now() % tokenWindow) + 1000);
      const now = clock.now();
      await setRules(server, project, "op", [
        {
          id: "window",
          conditions: [
            { attribute: "$now", operator: "after", values: [iso(now + 5 * 60_000)] },
            { attribute: "$now", operator: "before", values: [iso(now + 10 * 60_000)] },
          ],
          serve: { variant: "yes" },
        },
      ]);
      const bulk = (etag?: string) =>
        server.request("POST", "/ofrep/v1/evaluate/flags", {
          key: checkKey,
          body: { context: { targetingKey: "someone" } },
          headers: etag === undefined ? {} : { "if-none-match": etag },
        });
      const served = (res: { body: { flags: { key: string; variant?: string }[] } }) =>
        res.body.flags.find((f) => f.key === "op")?.variant;
      const closed = await bulk();
      assert.equal(closed.status, 200, closed.text);
      assert.equal(served(closed), "no");
      const tag = closed.headers.get("etag") as string;
      clock.advance(2 * 60_000);
      assert.equal((await bulk(tag)).status, 304, "no boundary crossed: still fresh");
      clock.advance(4 * 60_000);
      const open = await bulk(tag);
      assert.equal(open.status, 200, "the window opened: the old tag is stale");
      assert.equal(served(open), "yes");
      const openTag = open.headers.get("etag") as string;
      assert.equal((await bulk(openTag)).status, 304);
      clock.advance(5 * 60_000);
      const shut = await bulk(openTag);
      assert.equal(shut.status, 200, "the window closed");
      assert.equal(served(shut), "no");
    });

    test("present, segments, lists, several conditions and rule order", async () => {
      await operator(
        { attribute: "plan", operator: "present", values: [] },
        [attrs({ plan: "x" })],
        [none, attrs({ p: "x" })],
      );
      // present is the one condition a missing attribute makes hold, negated.
      await operator(
        { attribute: "plan", operator: "present", values: [], negate: true },
        [none],
        [attrs({ plan: "x" })],
      );
      await operator(
        { operator: "in_segment", values: [vip] },
        [{ actors: ["m1"] }, { actors: ["x", "m2"] }],
        [{ actors: ["x"] }, { actors: [] }],
      );
      await operator(
        { operator: "not_in_segment", values: [vip] },
        [{ actors: ["x"] }, { actors: [] }],
        [{ actors: ["m2"] }],
      );
      // A list (attributes[tags][]=… per element): it holds when any element does; negation applies to the whole list.
      const tags = (...values: string[]) => attrs({ tags: values });
      await operator({ attribute: "tags", operator: "in", values: ["b"] }, [tags("a", "b")], [tags("a", "c")]);
      await operator(
        { attribute: "tags", operator: "in", values: ["a"], negate: true },
        [tags("b", "c")],
        [tags("c", "a")],
      );
      await operator({ attribute: "tags", operator: "not_in", values: ["c"] }, [tags("a", "b")], [tags("a", "c")]);
      await operator(
        { attribute: "ids", operator: "gt", values: [10] },
        [attrs({ ids: ["1", "20"] })],
        [attrs({ ids: ["1", "2"] })],
      );
      // All conditions of a rule must hold.
      const both = [
        { attribute: "country", operator: "in", values: ["DE"] },
        { attribute: "plan", operator: "in", values: ["pro"] },
      ];
      assert.deepEqual(
        await holdsFor(both, [
          attrs({ country: "DE", plan: "pro" }),
          attrs({ country: "DE", plan: "free" }),
          attrs({ country: "FR", plan: "pro" }),
        ]),
        [true, false, false],
      );
      // The first rule that holds decides.
      await createFlag(server, project, "order", {
        type: "number",
        variants: [
          { key: "one", value: 1 },
          { key: "two", value: 2 },
          { key: "zero", value: 0 },
        ],
        offVariant: "zero",
      });
      await setRules(server, project, "order", [
        {
          id: "first",
          conditions: [{ attribute: "plan", operator: "in", values: ["pro"] }],
          serve: { variant: "one" },
        },
        {
          id: "second",
          conditions: [{ attribute: "country", operator: "present", values: [] }],
          serve: { variant: "two" },
        },
      ]);
      const order = (attributes: QueryAttributes) => check(server, project, "order", { actors: ["u"], attributes });
      assert.deepEqual(await order({ plan: "pro", country: "DE" }), { enabled: true, variant: "one", value: 1 });
      assert.deepEqual(await order({ plan: "free", country: "DE" }), { enabled: true, variant: "two", value: 2 });
      assert.deepEqual(await order({ plan: "free" }), { enabled: false, variant: "zero", value: 0 });
      // Attached actors and segments come before rules; enabled ignores rules; disabled serves offVariant.
      await patchOk(server, project, "order", { addActors: ["attached"], addSegments: [vip] });
      const onVariant = { enabled: true, variant: "one", value: 1 };
      assert.deepEqual(
        await check(server, project, "order", { actors: ["attached"], attributes: { country: "x" } }),
        onVariant,
      );
      assert.deepEqual(
        await check(server, project, "order", { actors: ["m1"], attributes: { country: "x" } }),
        onVariant,
      );
      await patchOk(server, project, "order", { status: "enabled" });
      assert.deepEqual(await order({ country: "DE" }), onVariant);
      await patchOk(server, project, "order", { status: "disabled" });
      assert.deepEqual(await order({ plan: "pro" }), { enabled: false, variant: "zero", value: 0 });
    });

    test("a list of one is a list: attributes[NAME][] in the check and explain answers as OFREP's JSON list", async () => {
      // "neg" holds for a list none of whose elements reads as a number above 10, and never for a single
      // value that is not a number (the missing-attribute rule); "by-tags" buckets by a single value only.
      await createFlag(server, project, "listy", {
        type: "string",
        variants: stringVariants("neg", "left", "right", "none"),
        offVariant: "none",
      });
      await setRules(server, project, "listy", [
        {
          id: "neg",
          conditions: [{ attribute: "age", operator: "gt", values: [10], negate: true }],
          serve: { variant: "neg" },
        },
        {
          id: "by-tags",
          conditions: [],
          serve: {
            split: {
              bucketBy: "tags",
              weights: [
                { variant: "left", weight: 50 },
                { variant: "right", weight: 50 },
              ],
            },
          },
        },
      ]);
      const variantOf = async (query: string) => {
        const res = await server.request("GET", `${base()}/flags/listy/check?${query}`, { key: checkKey });
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        return res.body.variant as string;
      };
      const ofrepVariant = async (context: Record<string, unknown>) => {
        const res = await ofrep("listy", context);
        assert.equal(res.status, 200, res.text);
        return res.body.variant as string;
      };
      const split = await ofrepVariant({ tags: "beta" });
      assert.ok(split === "left" || split === "right", split);
      // [query, the same context as OFREP's JSON]: brackets plain (the fast path reads them), percent-encoded,
      // and values that need decoding (Fastify reads them).
      const cases: [string, Record<string, unknown>][] = [
        ["attributes[age]=abc", { age: "abc" }],
        ["attributes[age][]=abc", { age: ["abc"] }],
        ["attributes%5Bage%5D%5B%5D=abc", { age: ["abc"] }],
        ["attributes%5bage%5d%5b%5d=ab%63", { age: ["abc"] }],
        ["attributes[age][]=a+b", { age: ["a b"] }],
        ["attributes[age][]=5", { age: ["5"] }],
        ["attributes[age][]=50", { age: ["50"] }],
        ["attributes[age]=5", { age: "5" }],
        ["attributes[age][]=abc&attributes[age][]=50", { age: ["abc", "50"] }],
        ["attributes[age]=abc&attributes[age]=def", { age: ["abc", "def"] }],
        ["attributes[age][]=", { age: [""] }],
        ["attributes[tags]=beta&attributes[age]=50", { tags: "beta", age: "50" }],
        ["attributes[tags][]=beta&attributes[age]=50", { tags: ["beta"], age: "50" }],
        ["attributes[tags][]=beta&attributes[tags][]=x&attributes[age]=50", { tags: ["beta", "x"], age: "50" }],
      ];
      for (const [query, context] of cases) {
        assert.equal(await variantOf(query), await ofrepVariant(context), `${query} / ${JSON.stringify(context)}`);
      }
      // The answers themselves: a single value that is not a number never holds, negated or not; a list of
      // one holds when none of its elements is above 10. A single value buckets; a list does not.
      assert.equal(await variantOf("attributes[age][]=abc"), "neg");
      assert.equal(await variantOf("attributes[age]=abc"), "none");
      assert.equal(await variantOf("attributes[tags]=beta&attributes[age]=50"), split);
      assert.equal(await variantOf("attributes[tags][]=beta&attributes[age]=50"), "none");

      // Explain reads the same query.
      const why = await explain("listy", { attributes: { age: ["abc"] } });
      assert.deepEqual([why.variant, why.matchedRule?.id], ["neg", "neg"]);
      const single = await explain("listy", { attributes: { age: "abc", tags: ["beta"] } });
      assert.deepEqual([single.variant, single.reason, single.matchedRule], ["none", "DEFAULT", null]);

      // One name written both ways says two things: refused, whichever spelling of the brackets.
      for (const query of [
        "attributes[age]=abc&attributes[age][]=def",
        "attributes[age][]=def&attributes[age]=abc",
        "attributes%5Bage%5D=abc&attributes%5Bage%5D%5B%5D=def",
        "attributes[tags][]=a&attributes[tags]=b&attributes[tags][]=c",
      ]) {
        for (const route of ["check", "explain"]) {
          const res = await server.request("GET", `${base()}/flags/listy/${route}?${query}`);
          expectProblem(res, 400, "invalid_request");
          const name = query.includes("tags") ? "tags" : "age";
          assert.equal(res.body.errors?.[0]?.path, `/query/attributes/${name}`, `${route}?${query}: ${res.text}`);
          assert.match(res.body.detail, /written one way/);
        }
      }
      // Another name's other spelling is fine.
      assert.equal(await variantOf("attributes[age][]=abc&attributes[tags]=beta"), "neg");
      // The limits are the same for a list's elements: 100 values, 50 names.
      const elements = (n: number) => Array.from({ length: n }, (_, i) => `attributes[age][]=${i + 100}`).join("&");
      assert.equal(await variantOf(elements(100)), "none");
      const tooMany = await server.request("GET", `${base()}/flags/listy/check?${elements(101)}`);
      expectProblem(tooMany, 400, "invalid_request");
      const names = Array.from({ length: 51 }, (_, i) => `attributes[a${i}][]=v`).join("&");
      expectProblem(await server.request("GET", `${base()}/flags/listy/check?${names}`), 400, "invalid_request");
      const long = await server.request("GET", `${base()}/flags/listy/check?attributes[age][]=${"x".repeat(1025)}`);
      expectProblem(long, 400, "invalid_request");

      // The OpenAPI document says so, for the check and explain: a value or a list, and the list's spelling.
      const document = await server.request("GET", "/openapi.json", { key: null });
      for (const route of ["check", "explain"]) {
        const operation = document.body.paths[`/projects/{projectId}/flags/{flagName}/${route}`].get;
        const parameter = operation.parameters.find((p: { name: string }) => p.name === "attributes");
        assert.equal(parameter.style, "deepObject", route);
        assert.deepEqual(parameter.schema.additionalProperties.type, ["string", "array"], route);
        assert.match(parameter.description, /attributes\[NAME\]\[\]=value an element of the list NAME/, route);
      }
    });

    test("splits: sticky per actor, bucketBy an attribute, roughly the weights over many actors, nothing to bucket on falls through", async () => {
      await createFlag(server, project, "split", {
        type: "string",
        variants: stringVariants("a", "b", "c", "fallback", "off"),
        onVariant: "fallback",
        offVariant: "off",
      });
      const weights = (a: number, b: number, c: number) => [
        { variant: "a", weight: a },
        { variant: "b", weight: b },
        { variant: "c", weight: c },
      ];
      await setRules(server, project, "split", [
        { id: "s", conditions: [], serve: { split: { weights: weights(20, 30, 50) } } },
      ]);
      const actors = Array.from({ length: 400 }, (_, i) => `actor-${i}`);
      const served = async () => {
        const out: string[] = [];
        for (const actor of actors) out.push((await check(server, project, "split", { actors: [actor] })).variant);
        return out;
      };
      const first = await served();
      const count = (list: string[], v: string) => list.filter((x) => x === v).length;
      // Deterministic (the buckets are a hash of flag, rule and actor): roughly 80, 120 and 200 of 400.
      assert.ok(Math.abs(count(first, "a") - 80) <= 32, `a: ${count(first, "a")}`);
      assert.ok(Math.abs(count(first, "b") - 120) <= 36, `b: ${count(first, "b")}`);
      assert.ok(Math.abs(count(first, "c") - 200) <= 40, `c: ${count(first, "c")}`);
      assert.deepEqual(await served(), first, "an actor keeps its variant");
      // Moving 10 points from b to a moves only actors of b to a: a's and c's keep theirs.
      await setRules(server, project, "split", [
        { id: "s", conditions: [], serve: { split: { weights: weights(30, 20, 50) } } },
      ]);
      const moved = await served();
      first.forEach((v, i) => {
        if (v === "a" || v === "c") assert.equal(moved[i], v, actors[i]);
        else assert.ok(moved[i] === "a" || moved[i] === "b", actors[i]);
      });
      assert.ok(count(moved, "a") > count(first, "a"));
      // OFREP calls it a SPLIT.
      const res = await ofrep("split", { targetingKey: "actor-1" });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.body.value, res.body.variant, res.body.reason], [moved[1], moved[1], "SPLIT"]);

      // bucketBy: actors of one company share a variant; without the attribute the rule falls through.
      await setRules(server, project, "split", [
        { id: "by-company", conditions: [], serve: { split: { bucketBy: "company", weights: weights(50, 0, 50) } } },
        { id: "anyone", conditions: [], serve: { split: { weights: [{ variant: "b", weight: 100 }] } } },
      ]);
      const companies = Array.from({ length: 40 }, (_, i) => `co-${i}`);
      const byCompany: string[] = [];
      for (const company of companies) {
        const answers = new Set<string>();
        for (const actor of ["x1", "x2", "x3"]) {
          answers.add((await check(server, project, "split", { actors: [actor], attributes: { company } })).variant);
        }
        assert.equal(answers.size, 1, `one variant for ${company}`);
        byCompany.push([...answers][0] as string);
      }
      assert.ok(byCompany.includes("a") && byCompany.includes("c") && !byCompany.includes("b"), byCompany.join());
      // No company: the next rule (bucketed on the actor) decides.
      assert.equal((await check(server, project, "split", { actors: ["x1"] })).variant, "b");
      // No company and no actor: nothing to bucket on anywhere; the flag's default.
      assert.deepEqual(await check(server, project, "split"), { enabled: false, variant: "off", value: "off" });
      const defaulted = await ofrep("split", {});
      assert.deepEqual([defaulted.body.variant, defaulted.body.reason], ["off", "DEFAULT"]);
    });

    test("prerequisites: served only while the prerequisite serves a listed variant; a disabled flag ignores them", async () => {
      await createFlag(server, project, "gate");
      await createFlag(server, project, "tier", {
        type: "string",
        variants: stringVariants("bronze", "gold", "none"),
        offVariant: "none",
      });
      await setRules(server, project, "tier", [
        {
          id: "gold",
          conditions: [{ attribute: "plan", operator: "in", values: ["pro"] }],
          serve: { variant: "gold" },
        },
      ]);
      await createFlag(server, project, "child", { type: "string", variants: stringVariants("x", "y") });
      await patchOk(server, project, "child", {
        status: "enabled",
        prerequisites: [
          { flag: "gate", variants: ["on"] },
          { flag: "tier", variants: ["gold", "bronze"] },
        ],
      });
      const pro = { actors: ["u1"], attributes: { plan: "pro" } };
      // gate is disabled: the first prerequisite fails.
      assert.deepEqual(await check(server, project, "child", pro), { enabled: false, variant: "y", value: "y" });
      let res = await ofrep("child", { targetingKey: "u1", plan: "pro" });
      assert.deepEqual([res.body.variant, res.body.reason], ["y", "PREREQUISITE_FAILED"]);
      let why = await explain("child", pro);
      assert.deepEqual(
        [why.rule, why.prerequisite, why.reason, why.variant, why.enabled],
        ["prerequisite", "gate", "PREREQUISITE_FAILED", "y", false],
      );
      await patchOk(server, project, "gate", { status: "enabled" });
      assert.deepEqual(await check(server, project, "child", pro), { enabled: true, variant: "x", value: "x" });
      res = await ofrep("child", { targetingKey: "u1", plan: "pro" });
      assert.deepEqual([res.body.value, res.body.reason], ["x", "STATIC"]);
      // tier serves "none" to a free plan: the second prerequisite fails, for that context only.
      const free = { actors: ["u1"], attributes: { plan: "free" } };
      assert.deepEqual(await check(server, project, "child", free), { enabled: false, variant: "y", value: "y" });
      why = await explain("child", free);
      assert.deepEqual([why.rule, why.prerequisite, why.matchedRule], ["prerequisite", "tier", null]);
      // A disabled flag serves its offVariant without looking at its prerequisites.
      await patchOk(server, project, "child", { status: "disabled" });
      res = await ofrep("child", { targetingKey: "u1", plan: "free" });
      assert.deepEqual([res.body.variant, res.body.reason], ["y", "DISABLED"]);
      why = await explain("child", free);
      assert.deepEqual([why.rule, why.prerequisite, why.reason], ["status", null, "DISABLED"]);
    });

    test("the check's answers: a boolean flag still {enabled} only, a typed flag {enabled, variant, value}", async () => {
      await createFlag(server, project, "bool");
      await setRules(server, project, "bool", [
        { id: "de", conditions: [{ attribute: "country", operator: "in", values: ["DE"] }], serve: { variant: "on" } },
      ]);
      const res = await server.request("GET", `${base()}/flags/bool/check?actorIds=u&attributes[country]=DE`);
      assert.equal(res.text, '{"enabled":true}');
      assert.deepEqual(await check(server, project, "bool", { attributes: { country: "FR" } }), { enabled: false });
      await createFlag(server, project, "obj", {
        type: "object",
        variants: [
          { key: "rich", value: { theme: { dark: true }, items: [1, 2] } },
          { key: "plain", value: {} },
        ],
      });
      await setRules(server, project, "obj", [
        {
          id: "de",
          conditions: [{ attribute: "country", operator: "in", values: ["DE"] }],
          serve: { variant: "rich" },
        },
      ]);
      const typed = await server.request("GET", `${base()}/flags/obj/check?attributes[country]=DE`);
      assert.deepEqual(JSON.parse(typed.text), {
        enabled: true,
        variant: "rich",
        value: { theme: { dark: true }, items: [1, 2] },
      });
      assert.deepEqual(Object.keys(JSON.parse(typed.text)), ["enabled", "variant", "value"]);
      assert.deepEqual(await check(server, project, "obj"), { enabled: false, variant: "plain", value: {} });
    });

    test("attributes are read alike plainly, with percent-encoded brackets, and in forms only Fastify reads", async () => {
      await createFlag(server, project, "city", { type: "string", variants: stringVariants("match", "miss") });
      await setRules(server, project, "city", [
        {
          id: "cities",
          conditions: [
            { attribute: "city", operator: "in", values: ["Berlin", "New York", "São Paulo", "a&b=c", "100%"] },
          ],
          serve: { variant: "match" },
        },
        {
          id: "spaced",
          conditions: [{ attribute: "user type", operator: "in", values: ["staff"] }],
          serve: { variant: "match" },
        },
        {
          id: "tags",
          conditions: [{ attribute: "tags", operator: "in", values: ["t2"] }],
          serve: { variant: "match" },
        },
      ]);
      const variantOf = async (query: string) => {
        const res = await server.request("GET", `${base()}/flags/city/check?${query}`);
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        return res.body.variant;
      };
      const matching = [
        "attributes[city]=Berlin",
        "actorIds=u1&attributes[city]=Berlin&cache=5",
        "attributes%5Bcity%5D=Berlin",
        "attributes%5bcity%5d=Berlin&actorIds=u1",
        "attributes[city]=New%20York",
        "attributes[city]=New+York",
        "attributes%5Bcity%5D=S%C3%A3o%20Paulo",
        "attributes[city]=a%26b%3Dc",
        "attributes[city]=100%25",
        "attributes[user%20type]=staff",
        "attributes[tags]=t1&attributes[tags]=t2",
        "attributes[tags][]=t1&attributes[tags][]=t2",
        "attributes%5Btags%5D=t3&attributes%5Btags%5D=t2",
        "actorIds=%C3%A9&attributes[city]=Berlin",
      ];
      for (const query of matching) assert.equal(await variantOf(query), "match", query);
      const missing = [
        "attributes[city]=berlin",
        "attributes[city]=New",
        "attributes[City]=Berlin",
        "attributes[tags]=t1&attributes[tags]=t3",
        "attributes[user type]=visitor",
        "actorIds=u1",
        "",
      ];
      for (const query of missing) assert.equal(await variantOf(query), "miss", query);
    });

    test("hostile attribute names are only names; limits on attributes are 400s", async () => {
      await createFlag(server, project, "hostile", { type: "string", variants: stringVariants("hit", "miss") });
      await setRules(server, project, "hostile", [
        {
          id: "ctor",
          conditions: [{ attribute: "constructor", operator: "present", values: [] }],
          serve: { variant: "hit" },
        },
        {
          id: "proto",
          conditions: [{ attribute: "__proto__", operator: "in", values: ["x"] }],
          serve: { variant: "hit" },
        },
        {
          id: "tostring",
          conditions: [{ attribute: "toString", operator: "contains", values: ["function"] }],
          serve: { variant: "hit" },
        },
      ]);
      const variantOf = async (query: string) => {
        const res = await server.request("GET", `${base()}/flags/hostile/check?${query}`);
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        return res.body.variant;
      };
      // Object.prototype's members are not attributes of a context that does not name them.
      assert.equal(await variantOf("actorIds=u"), "miss");
      assert.equal(await variantOf("attributes[hasOwnProperty]=1&attributes[valueOf]=2"), "miss");
      assert.equal(await variantOf("attributes[__proto__]=y"), "miss");
      assert.equal(await variantOf("attributes[__proto__]=x"), "hit");
      assert.equal(await variantOf("attributes%5B__proto__%5D=x&actorIds=u"), "hit");
      assert.equal(await variantOf("attributes[constructor]=anything"), "hit");
      assert.equal(await variantOf("attributes[toString]=function"), "hit");
      // And nothing leaked into later answers: the same empty context still misses.
      assert.equal(await variantOf(""), "miss");
      assert.equal(await variantOf("attributes[__proto__][]=x"), "hit");
      assert.equal(await variantOf("attributes[__proto__][]=y&attributes[__proto__][]=x"), "hit");
      const ofrepNone = await ofrep("hostile", { targetingKey: "u" });
      assert.equal(ofrepNone.body.variant, "miss");

      // 50 names are fine; 51 are a 400, whichever reader takes the query.
      const names = (n: number, value = "v", bracket = "[") =>
        Array.from({ length: n }, (_, i) => `attributes${bracket}a${i}${bracket === "[" ? "]" : "%5D"}=${value}`).join(
          "&",
        );
      for (const [query, status] of [
        [names(50), 200],
        [names(51), 400],
        [names(51, "v", "%5B"), 400],
        [names(51, "with%20space"), 400],
        [Array.from({ length: 100 }, () => "attributes[t]=x").join("&"), 200],
        [Array.from({ length: 101 }, () => "attributes[t]=x").join("&"), 400],
        [`attributes[long]=${"x".repeat(1024)}`, 200],
        [`attributes[long]=${"x".repeat(1025)}`, 400],
        [`attributes[${"n".repeat(129)}]=x`, 400],
        ["attributes=plain", 400],
      ] as const) {
        const res = await server.request("GET", `${base()}/flags/hostile/check?${query}`);
        if (status === 400) assert.equal(`${res.status} ${res.body?.code}`, "400 invalid_request", query.slice(0, 80));
        else assert.equal(res.status, 200, `${query.slice(0, 80)}: ${res.text}`);
      }
    });

    test("OFREP reads a context member named __proto__ as an attribute, single and bulk, as the check does; nothing is polluted", async () => {
      await createFlag(server, project, "proto", { type: "string", variants: stringVariants("hit", "miss") });
      await setRules(server, project, "proto", [
        {
          id: "proto",
          conditions: [{ attribute: "__proto__", operator: "in", values: ["x"] }],
          serve: { variant: "hit" },
        },
        {
          id: "proto-absent",
          conditions: [{ attribute: "__proto__", operator: "present", values: [], negate: true }],
          serve: { variant: "miss" },
        },
      ]);
      // JSON.parse makes "__proto__" an own member; a JavaScript object literal would set a prototype instead,
      // so the bodies are written out as text.
      const single = (body: string) =>
        server.request("POST", "/ofrep/v1/evaluate/flags/proto", {
          key: checkKey,
          rawBody: body,
          headers: { "content-type": "application/json" },
        });
      const bulk = (body: string) =>
        server.request("POST", "/ofrep/v1/evaluate/flags", {
          key: checkKey,
          rawBody: body,
          headers: { "content-type": "application/json" },
        });
      const checked = async (query: string) => {
        const res = await server.request("GET", `${base()}/flags/proto/check?${query}`, { key: checkKey });
        assert.equal(res.status, 200, res.text);
        return res.body.variant as string;
      };
      // [OFREP context as JSON text, the same context as the check's query, the variant and reason served]
      const cases: [string, string, string, string][] = [
        ['{"targetingKey":"u","__proto__":"x"}', "actorIds=u&attributes[__proto__]=x", "hit", "TARGETING_MATCH"],
        ['{"__proto__":"x"}', "attributes%5B__proto__%5D=x", "hit", "TARGETING_MATCH"],
        ['{"__proto__":["y","x"]}', "attributes[__proto__][]=y&attributes[__proto__][]=x", "hit", "TARGETING_MATCH"],
        ['{"targetingKey":"u","__proto__":["x"]}', "actorIds=u&attributes[__proto__][]=x", "hit", "TARGETING_MATCH"],
        // Present but not x: neither rule holds, and the flag serves its offVariant.
        ['{"targetingKey":"u","__proto__":"y"}', "actorIds=u&attributes[__proto__]=y", "miss", "DEFAULT"],
        // Absent: the second rule holds.
        ['{"targetingKey":"u"}', "actorIds=u", "miss", "TARGETING_MATCH"],
      ];
      for (const [context, query, variant, reason] of cases) {
        const one = await single(`{"context":${context}}`);
        assert.equal(one.status, 200, `${context}: ${one.text}`);
        const all = await bulk(`{"context":${context}}`);
        assert.equal(all.status, 200, `${context}: ${all.text}`);
        const fromBulk = (all.body.flags as { key: string; variant: string; reason: string }[]).find(
          (f) => f.key === "proto",
        );
        assert.deepEqual(
          [one.body.variant, one.body.reason, fromBulk?.variant, fromBulk?.reason, await checked(query)],
          [variant, reason, variant, reason, variant],
          context,
        );
      }
      // The bulk ETag hashes the member like any other: another value is another tag.
      const tagOf = async (context: string) => (await bulk(`{"context":${context}}`)).headers.get("etag");
      assert.notEqual(await tagOf('{"__proto__":"x"}'), await tagOf('{"__proto__":"y"}'));
      assert.notEqual(await tagOf('{"__proto__":"x"}'), await tagOf("{}"));

      // Members that would pollute a prototype if assigned, at every level: evaluated, and nothing polluted.
      const hostile = [
        '{"context":{"__proto__":{"polluted":"yes"}}}',
        '{"context":{"targetingKey":"u","constructor":{"prototype":{"polluted":"yes"}}}}',
        '{"__proto__":{"polluted":"yes"},"context":{"__proto__":"x"}}',
        '{"context":{"__proto__":"x","tags":[{"__proto__":{"polluted":"yes"}}]}}',
      ];
      for (const body of hostile) {
        for (const send of [single, bulk]) {
          const res = await send(body);
          assert.equal(res.status, 200, `${body}: ${res.text}`);
        }
      }
      const polluted = (res: { body: any }) =>
        res.body.variant ?? res.body.flags?.find((f: any) => f.key === "proto")?.variant;
      assert.equal(polluted(await single(hostile[2] as string)), "hit");
      assert.equal(polluted(await bulk(hostile[3] as string)), "hit");
      assert.equal(polluted(await single(hostile[0] as string)), "miss", "an object is not a string: no rule holds");
      // The server runs in this process: a polluted prototype would show here, and in later answers.
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(Object.hasOwn(Object.prototype, "polluted"), false);
      assert.equal((await single('{"context":{"targetingKey":"u"}}')).body.variant, "miss");
      assert.equal(await checked("actorIds=u"), "miss");
      // Every other route still refuses such a body: what they read reaches services and the database.
      const refused = await server.request("POST", `${base()}/segments`, {
        rawBody: '{"name":"s","__proto__":{"x":1}}',
        headers: { "content-type": "application/json" },
      });
      expectProblem(refused, 400, "invalid_request");
    });

    test("unknown projects and flags are 404; keys of the wrong project or role are refused", async () => {
      const res404 = await server.request("GET", `${base()}/flags/nope/check?attributes[a]=b`);
      expectProblem(res404, 404, "flag_not_found");
      const noProject = await server.request("GET", "/projects/no-such-project/flags/op/check?attributes[a]=b");
      assert.equal(noProject.status, 404, noProject.text);
      const other = await createProject(server);
      const foreign = (await createKey(server, other, "check")).key;
      expectProblem(
        await server.request("GET", `${base()}/flags/op/check?attributes[a]=b`, { key: foreign }),
        403,
        "forbidden",
      );
      assert.equal(
        (await server.request("GET", `${base()}/flags/op/check?attributes[a]=b`, { key: null })).status,
        401,
      );
      assert.equal(
        (await server.request("GET", `${base()}/flags/op/check?attributes[a]=b`, { key: "fsk_nope" })).status,
        401,
      );
      // A check key may check but not explain.
      const explained = await server.request("GET", `${base()}/flags/op/explain?attributes[a]=b`, { key: checkKey });
      expectProblem(explained, 403, "forbidden");
      assert.equal(
        (await server.request("POST", "/ofrep/v1/evaluate/flags/op", { key: ADMIN_KEY, body: {} })).status,
        403,
      );
    });

    test("explain with attributes names the rule, its index, id and conditions", async () => {
      await createFlag(server, project, "explained", {
        type: "string",
        variants: stringVariants("eu", "beta", "off"),
        offVariant: "off",
      });
      const conditions = [
        { attribute: "country", operator: "in", values: ["DE", "FR"] },
        { attribute: "version", operator: "semver_gte", values: ["2.0.0"] },
      ];
      await setRules(server, project, "explained", [
        {
          id: "beta",
          description: "Beta testers",
          conditions: [{ operator: "in_segment", values: [vip] }],
          serve: { variant: "beta" },
        },
        { id: "eu-modern", description: "EU on 2.x", conditions, serve: { variant: "eu" } },
      ]);
      const why = await explain("explained", { actors: ["u9"], attributes: { country: "FR", version: "v2.1" } });
      assert.equal(why.rule, "rule");
      assert.deepEqual(why.matchedRule, { index: 1, id: "eu-modern", description: "EU on 2.x", conditions });
      assert.deepEqual(
        [why.reason, why.variant, why.value, why.enabled, why.prerequisite],
        ["TARGETING_MATCH", "eu", "eu", true, null],
      );
      const member = await explain("explained", { actors: ["m2"] });
      assert.deepEqual(
        [member.rule, member.matchedRule.index, member.matchedRule.id, member.variant],
        ["rule", 0, "beta", "beta"],
      );
      const nobody = await explain("explained", { actors: ["u9"], attributes: { country: "FR", version: "1.9" } });
      assert.deepEqual(
        [nobody.rule, nobody.matchedRule, nobody.reason, nobody.variant, nobody.enabled],
        ["none", null, "DEFAULT", "off", false],
      );
      // A split rule is named too, with reason SPLIT.
      await setRules(server, project, "explained", [
        {
          id: "halves",
          conditions: [],
          serve: {
            split: {
              weights: [
                { variant: "eu", weight: 50 },
                { variant: "beta", weight: 50 },
              ],
            },
          },
        },
      ]);
      const split = await explain("explained", { actors: ["u9"] });
      assert.deepEqual([split.rule, split.matchedRule.id, split.reason], ["rule", "halves", "SPLIT"]);
      assert.equal(split.variant, (await check(server, project, "explained", { actors: ["u9"] })).variant);
    });

    test("OFREP: typed values and every reason; context attributes read natively; bulk carries typed values", async () => {
      await createFlag(server, project, "o-str", { type: "string", variants: stringVariants("blue", "grey") });
      await createFlag(server, project, "o-num", {
        type: "number",
        variants: [
          { key: "many", value: 100 },
          { key: "few", value: 2.5 },
        ],
      });
      const objectValue = { layout: "grid", columns: [1, 2, 3], nested: { deep: { ok: true } } };
      await createFlag(server, project, "o-obj", {
        type: "object",
        variants: [
          { key: "grid", value: objectValue },
          { key: "list", value: ["a"] },
        ],
      });
      await setRules(server, project, "o-str", [
        {
          id: "native",
          conditions: [
            { attribute: "seats", operator: "gt", values: [10] },
            { attribute: "tags", operator: "in", values: ["beta"] },
            { attribute: "country", operator: "in", values: ["de"], caseInsensitive: true },
          ],
          serve: { variant: "blue" },
        },
      ]);
      await patchOk(server, project, "o-num", { status: "enabled" });
      await setRules(server, project, "o-obj", [
        {
          id: "eu",
          conditions: [{ attribute: "country", operator: "in", values: ["DE"] }],
          serve: { variant: "grid" },
        },
      ]);
      const context = { targetingKey: "u1", seats: 25, tags: ["alpha", "beta"], country: "DE" };
      let res = await ofrep("o-str", context);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        key: "o-str",
        value: "blue",
        reason: "TARGETING_MATCH",
        variant: "blue",
        metadata: {},
      });
      res = await ofrep("o-str", { ...context, seats: 5 });
      assert.deepEqual([res.body.value, res.body.reason], ["grey", "DEFAULT"]);
      res = await ofrep("o-str", { ...context, seats: "25" });
      assert.equal(res.body.value, "blue", "a numeric string reads as a number");
      res = await ofrep("o-num", {});
      assert.deepEqual([res.body.value, res.body.variant, res.body.reason], [100, "many", "STATIC"]);
      res = await ofrep("o-obj", { country: "DE" });
      assert.deepEqual([res.body.value, res.body.reason], [objectValue, "TARGETING_MATCH"]);
      res = await ofrep("o-obj", { country: "FR" });
      assert.deepEqual([res.body.value, res.body.reason], [["a"], "DEFAULT"]);
      await patchOk(server, project, "o-obj", { status: "disabled" });
      res = await ofrep("o-obj", { country: "DE" });
      assert.deepEqual([res.body.value, res.body.reason], [["a"], "DISABLED"]);
      await patchOk(server, project, "o-obj", { status: "conditional" });

      const bulk = await server.request("POST", "/ofrep/v1/evaluate/flags", { key: checkKey, body: { context } });
      assert.equal(bulk.status, 200, bulk.text);
      const byKey = new Map((bulk.body.flags as any[]).map((f) => [f.key, f]));
      assert.deepEqual(byKey.get("o-str"), {
        key: "o-str",
        value: "blue",
        reason: "TARGETING_MATCH",
        variant: "blue",
        metadata: {},
      });
      assert.deepEqual(byKey.get("o-num")?.value, 100);
      assert.deepEqual(byKey.get("o-obj")?.value, objectValue);
      assert.equal(byKey.get("bool")?.value, true, "bool's rule reads country: DE");
      assert.equal(byKey.get("child")?.reason, "DISABLED");
    });

    test("the stock @openfeature/ofrep-provider resolves string, number and object flags; TYPE_MISMATCH and FLAG_NOT_FOUND", async () => {
      const domain = `targeting-${dialect}`;
      await OpenFeature.setProviderAndWait(
        domain,
        new OFREPProvider({ baseUrl: server.url, headers: [["Authorization", `Bearer ${checkKey}`]] }),
      );
      try {
        const client = OpenFeature.getClient(domain);
        const context = { targetingKey: "u1", seats: 25, tags: ["beta"], country: "de" };
        const str = await client.getStringDetails("o-str", "fallback", context);
        assert.deepEqual(
          [str.value, str.variant, str.reason, str.errorCode],
          ["blue", "blue", "TARGETING_MATCH", undefined],
        );
        assert.equal(await client.getStringValue("o-str", "fallback", { targetingKey: "u1" }), "grey");
        const obj = await client.getObjectDetails("o-obj", { fallback: true }, { targetingKey: "u1", country: "DE" });
        assert.deepEqual(obj.value, { layout: "grid", columns: [1, 2, 3], nested: { deep: { ok: true } } });
        assert.equal(obj.reason, "TARGETING_MATCH");
        assert.equal(await client.getNumberValue("o-num", -1), 100);
        const mismatch = await client.getBooleanDetails("o-str", true, context);
        assert.equal(mismatch.value, true, "the caller's default");
        assert.equal(mismatch.errorCode, ErrorCode.TYPE_MISMATCH);
        const numberOfString = await client.getNumberDetails("o-str", 7, context);
        assert.deepEqual([numberOfString.value, numberOfString.errorCode], [7, ErrorCode.TYPE_MISMATCH]);
        const missing = await client.getStringDetails("does-not-exist", "dflt", context);
        assert.deepEqual([missing.value, missing.errorCode], ["dflt", ErrorCode.FLAG_NOT_FOUND]);
      } finally {
        await OpenFeature.clearProviders();
      }
    });
  });
}
