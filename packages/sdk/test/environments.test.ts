// Environments through the SDK, against a real server on a real database: the environments API, the
// client's `environment` option on every flag call and relation list, keys bound to one environment,
// copying a flag's configuration, the history's filter, and the local evaluator of a bound key.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ADMIN_KEY, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import { rejectsWith } from "./assertions.js";
import {
  createLocalEvaluator,
  type FetchLike,
  type FlagstaffClientOptions,
  FlagstaffClient,
  type LocalChange,
} from "../src/index.js";

/** A fetch that records the URL of every request it sends. */
function recordingFetch(): { fetch: FetchLike; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: (url, init) => {
      urls.push(url);
      return globalThis.fetch(url, init);
    },
  };
}

/** The `environment` query parameter of a recorded URL, or null when it has none. */
const environmentOf = (url: string) => new URL(url).searchParams.get("environment");

let projects = 0;

for (const dialect of DIALECTS) {
  describe(`SDK: environments against a real server (${dialect})`, () => {
    let server: TestServer;
    let admin: FlagstaffClient;
    const client = (apiKey: string, extra: Partial<FlagstaffClientOptions> = {}) =>
      new FlagstaffClient({ baseUrl: server.url, apiKey, retryDelayMs: 5, ...extra });

    /** A project with production (the default) and staging, as POST /projects names them. */
    async function twoEnvironments(): Promise<string> {
      const id = `env-${dialect}-${++projects}`;
      const project = await admin.projects.create({
        id,
        name: `Project ${id}`,
        environments: [
          { id: "production", name: "Production" },
          { id: "staging", name: "Staging", description: "Before production" },
        ],
      });
      assert.equal(project.id, id);
      return id;
    }

    before(async () => {
      server = await startServer({ dialect, env: { STREAM_HEARTBEAT_MS: "200" } });
      admin = client(ADMIN_KEY);
    });
    after(async () => {
      server?.service.app.server.closeAllConnections();
      await server?.close();
    });

    test("environments: list (a page and every item), get, create, update, delete", async () => {
      const projectId = await twoEnvironments();
      const all = await admin.environments.list(projectId).toArray();
      assert.deepEqual(
        all.map((e) => [e.id, e.name, e.description, e.default, e.projectId]),
        [
          ["production", "Production", "", true, projectId],
          ["staging", "Staging", "Before production", false, projectId],
        ],
      );
      const first = await admin.environments.list(projectId).page({ limit: 1 });
      assert.deepEqual(
        first.data.map((e) => e.id),
        ["production"],
      );
      assert.equal(first.pagination.before, null);
      assert.equal(typeof first.pagination.after, "string");
      const second = await admin.environments
        .list(projectId)
        .page({ limit: 1, after: first.pagination.after as string });
      assert.deepEqual(
        second.data.map((e) => e.id),
        ["staging"],
      );
      assert.equal(second.pagination.after, null);
      const iterated: string[] = [];
      for await (const environment of admin.environments.list(projectId, { limit: 1 })) iterated.push(environment.id);
      assert.deepEqual(iterated, ["production", "staging"]);
      assert.deepEqual(await admin.environments.get(projectId, "staging"), all[1]);

      const created = await admin.environments.create(projectId, {
        id: "dev",
        name: "Development",
        description: "Laptops",
      });
      assert.deepEqual(
        { ...created, createdAt: undefined, updatedAt: undefined },
        {
          id: "dev",
          projectId,
          name: "Development",
          description: "Laptops",
          default: false,
          protected: false,
          requiredApprovals: 0,
          allowSelfApproval: false,
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      assert.match(created.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(
        (await admin.environments.list(projectId).toArray()).map((e) => e.id),
        ["production", "staging", "dev"],
      );

      const renamed = await admin.environments.update(projectId, "dev", { name: "Dev", description: "" });
      assert.equal(renamed.name, "Dev");
      assert.equal(renamed.description, "");
      const moved = await admin.environments.update(projectId, "staging", { default: true });
      assert.equal(moved.default, true);
      assert.equal((await admin.environments.get(projectId, "production")).default, false);
      // The default moves back; the other loses it again.
      await admin.environments.update(projectId, "production", { default: true });
      assert.equal((await admin.environments.get(projectId, "staging")).default, false);

      assert.equal(await admin.environments.delete(projectId, "dev"), undefined);
      await rejectsWith(admin.environments.get(projectId, "dev"), 404, "environment_not_found");
      await rejectsWith(admin.environments.delete(projectId, "dev"), 404, "environment_not_found");
      await rejectsWith(admin.environments.update(projectId, "dev", { name: "x" }), 404, "environment_not_found");
    });

    test("environments: the errors of each method", async () => {
      const projectId = await twoEnvironments();
      await rejectsWith(admin.environments.list("no-such-project").page(), 404, "project_not_found");
      await rejectsWith(admin.environments.get("no-such-project", "staging"), 404, "project_not_found");
      await rejectsWith(admin.environments.get(projectId, "nope"), 404, "environment_not_found");
      await rejectsWith(
        admin.environments.create(projectId, { id: "staging", name: "Again" }),
        409,
        "environment_exists",
      );
      await rejectsWith(
        admin.environments.create(projectId, { id: "qa", name: "QA", copyFrom: "nope" }),
        404,
        "environment_not_found",
      );
      const invalid = await rejectsWith(
        admin.environments.create(projectId, { id: "a b", name: "Spaces" }),
        400,
        "invalid_request",
      );
      assert.ok(
        invalid.errors.some((e) => e.path === "/id"),
        JSON.stringify(invalid.errors),
      );
      const isDefault = await rejectsWith(
        admin.environments.delete(projectId, "production"),
        409,
        "environment_is_default",
      );
      assert.match(isDefault.detail, /default/);
      await rejectsWith(admin.environments.get(projectId, ".."), 0, "invalid_argument");

      // Only an admin key creates, changes and deletes; any key of the project lists and reads.
      const writer = client((await admin.keys.create(projectId, { role: "write", name: "w", environment: null })).key);
      await rejectsWith(writer.environments.create(projectId, { id: "qa", name: "QA" }), 403, "forbidden");
      await rejectsWith(writer.environments.update(projectId, "staging", { name: "S" }), 403, "forbidden");
      await rejectsWith(writer.environments.delete(projectId, "staging"), 403, "forbidden");
      assert.equal((await writer.environments.list(projectId).toArray()).length, 2);
      assert.equal((await writer.environments.get(projectId, "staging")).id, "staging");

      // The most a project may have (20 by default): the 21st is refused.
      for (let i = 3; i <= 20; i++) await admin.environments.create(projectId, { id: `e${i}`, name: `E${i}` });
      await rejectsWith(admin.environments.create(projectId, { id: "e21", name: "E21" }), 409, "environment_limit");
      assert.equal((await admin.environments.list(projectId, { limit: 7 }).toArray()).length, 20);
    });

    test("create with copyFrom starts every flag as in that environment", async () => {
      const projectId = await twoEnvironments();
      const staging = client(ADMIN_KEY, { environment: "staging" });
      await staging.flags.create(projectId, "beta");
      await staging.flags.update(projectId, "beta", {
        status: "conditional",
        addActors: ["alice"],
        percentageActors: 25,
      });
      await admin.environments.create(projectId, { id: "qa", name: "QA", copyFrom: "staging" });
      await admin.environments.create(projectId, { id: "fresh", name: "Fresh" });
      const qa = await client(ADMIN_KEY, { environment: "qa" }).flags.get(projectId, "beta");
      assert.deepEqual([qa.environment, qa.status, qa.percentageActors, qa.actorsCount], ["qa", "conditional", 25, 1]);
      const fresh = await client(ADMIN_KEY, { environment: "fresh" }).flags.get(projectId, "beta");
      assert.deepEqual([fresh.status, fresh.percentageActors, fresh.actorsCount], ["disabled", 0, 0]);
    });

    test("the environment option: every flag call and relation list names it and acts on that configuration", async () => {
      const projectId = await twoEnvironments();
      const recorded = recordingFetch();
      const staging = client(ADMIN_KEY, { environment: "staging", fetch: recorded.fetch });
      assert.equal(staging.environment, "staging");
      const segment = await admin.segments.create(projectId, { name: "Beta testers" });
      await admin.segments.update(projectId, segment.id, { addActors: ["bob"] });

      const created = await staging.flags.create(projectId, "checkout", { description: "One page" });
      assert.equal(created.environment, "staging");
      assert.deepEqual(Object.keys(created.environments).sort(), ["production", "staging"]);
      const updated = await staging.flags.update(projectId, "checkout", {
        status: "conditional",
        addActors: ["alice"],
        addSegments: [segment.id],
      });
      assert.deepEqual([updated.environment, updated.status, updated.actorsCount], ["staging", "conditional", 1]);
      assert.equal(updated.environments.staging?.status, "conditional");
      assert.equal(updated.environments.production?.status, "disabled");

      // Production, the default, is untouched.
      const production = await admin.flags.get(projectId, "checkout");
      assert.deepEqual(
        [production.environment, production.status, production.actorsCount, production.segmentsCount],
        ["production", "disabled", 0, 0],
      );

      const tagged = await staging.flags.getWithETag(projectId, "checkout");
      assert.equal(tagged.value.environment, "staging");
      assert.match(tagged.etag, /@staging\.\d+"$/);
      const next = await staging.flags.updateWithETag(
        projectId,
        "checkout",
        { percentageActors: 10 },
        { ifMatch: tagged.etag },
      );
      assert.notEqual(next.etag, tagged.etag);
      await rejectsWith(
        staging.flags.update(projectId, "checkout", { percentageActors: 25 }, { ifMatch: tagged.etag }),
        412,
        "precondition_failed",
      );

      assert.equal(await staging.flags.check(projectId, "checkout", { actorIds: ["alice"] }), true);
      assert.equal(await admin.flags.check(projectId, "checkout", { actorIds: ["alice"] }), false);
      assert.equal((await staging.flags.explain(projectId, "checkout", ["bob"])).rule, "segment");
      assert.equal((await admin.flags.explain(projectId, "checkout", ["bob"])).rule, "status");
      assert.deepEqual(
        (await staging.flags.actors(projectId, "checkout").toArray()).map((m) => m.actorId),
        ["alice"],
      );
      assert.deepEqual(await admin.flags.actors(projectId, "checkout").toArray(), []);
      assert.deepEqual(
        (await staging.flags.list(projectId, { status: "conditional" }).toArray()).map((f) => f.name),
        ["checkout"],
      );
      assert.deepEqual(await admin.flags.list(projectId, { status: "conditional" }).toArray(), []);
      assert.deepEqual(
        (await staging.flags.listForActor(projectId, "alice").toArray()).map((f) => [f.name, f.environment]),
        [["checkout", "staging"]],
      );
      assert.deepEqual(await admin.flags.listForActor(projectId, "alice").toArray(), []);
      assert.deepEqual(
        (await staging.flags.listForSegment(projectId, segment.id).toArray()).map((f) => f.name),
        ["checkout"],
      );
      assert.deepEqual(await admin.flags.listForSegment(projectId, segment.id).toArray(), []);
      assert.deepEqual(
        (await staging.segments.listForFlag(projectId, "checkout").toArray()).map((s) => s.id),
        [segment.id],
      );
      assert.deepEqual(await admin.segments.listForFlag(projectId, "checkout").toArray(), []);

      // Segments are project-wide: their own calls do not name an environment.
      await staging.segments.get(projectId, segment.id);
      await staging.environments.list(projectId).toArray();
      await staging.flags.delete(projectId, "checkout");
      await rejectsWith(admin.flags.get(projectId, "checkout"), 404, "flag_not_found");

      const segmentGet = recorded.urls.filter((u) => new URL(u).pathname.endsWith(`/segments/${segment.id}`));
      const environmentList = recorded.urls.filter((u) => new URL(u).pathname.endsWith("/environments"));
      const flagCalls = recorded.urls.filter((u) => !segmentGet.includes(u) && !environmentList.includes(u));
      assert.equal(flagCalls.length, 13, flagCalls.join("\n"));
      assert.deepEqual(
        flagCalls.filter((u) => environmentOf(u) !== "staging"),
        [],
        "every flag call names the environment",
      );
      assert.deepEqual([...segmentGet, ...environmentList].map(environmentOf), [null, null]);
    });

    test("without the option nothing names an environment; a bound key acts on its own", async () => {
      const projectId = await twoEnvironments();
      await admin.flags.create(projectId, "f");
      await client(ADMIN_KEY, { environment: "staging" }).flags.update(projectId, "f", { status: "enabled" });
      const readKey = await admin.keys.create(projectId, {
        role: "read",
        name: "staging reader",
        environment: "staging",
      });
      const checkKey = await admin.keys.create(projectId, {
        role: "check",
        name: "staging app",
        environment: "staging",
      });
      assert.deepEqual([readKey.environment, checkKey.environment], ["staging", "staging"]);
      const defaultKey = await admin.keys.create(projectId, { role: "read", name: "default reader" });
      assert.equal(defaultKey.environment, "production");
      const unbound = await admin.keys.create(projectId, { role: "write", name: "anywhere", environment: null });
      assert.equal(unbound.environment, null);
      assert.deepEqual(
        (await admin.keys.list(projectId).toArray()).map((k) => [k.name, k.environment]),
        [
          ["staging reader", "staging"],
          ["staging app", "staging"],
          ["default reader", "production"],
          ["anywhere", null],
        ],
      );
      await rejectsWith(
        admin.keys.create(projectId, { role: "read", name: "x", environment: "nope" }),
        404,
        "environment_not_found",
      );
      await rejectsWith(
        admin.keys.create(projectId, { role: "read", name: "x", environment: null }),
        400,
        "invalid_request",
      );

      const recorded = recordingFetch();
      const reader = client(readKey.key, { fetch: recorded.fetch });
      assert.equal(reader.environment, undefined);
      assert.equal((await reader.whoami()).environment, "staging");
      const seen = await reader.flags.get(projectId, "f");
      assert.deepEqual([seen.environment, seen.status], ["staging", "enabled"]);
      assert.deepEqual(Object.keys(seen.environments), ["staging"], "a bound key sees its own environment only");
      assert.equal((await reader.flags.list(projectId).toArray())[0]?.status, "enabled");
      const checker = client(checkKey.key, { fetch: recorded.fetch });
      assert.equal(await checker.flags.check(projectId, "f"), true);
      assert.equal(await client(defaultKey.key).flags.check(projectId, "f"), false);
      assert.deepEqual(recorded.urls.map(environmentOf), [null, null, null, null], recorded.urls.join("\n"));

      // Naming its own environment is allowed; naming another is 403, on every kind of call.
      assert.equal(await client(checkKey.key, { environment: "staging" }).flags.check(projectId, "f"), true);
      const elsewhere = client(readKey.key, { environment: "production" });
      const forbidden = await rejectsWith(elsewhere.flags.get(projectId, "f"), 403, "forbidden");
      assert.match(forbidden.detail, /staging/);
      await rejectsWith(elsewhere.flags.list(projectId).page(), 403, "forbidden");
      await rejectsWith(elsewhere.flags.actors(projectId, "f").page(), 403, "forbidden");
      await rejectsWith(elsewhere.segments.listForFlag(projectId, "f").page(), 403, "forbidden");
      await rejectsWith(
        client(checkKey.key, { environment: "production" }).flags.check(projectId, "f"),
        403,
        "forbidden",
      );

      // An environment that does not exist: 404 for a key that may name any.
      const nowhere = client(ADMIN_KEY, { environment: "nope" });
      const notFound = await rejectsWith(nowhere.flags.get(projectId, "f"), 404, "environment_not_found");
      assert.match(notFound.detail, /nope/);
      await rejectsWith(nowhere.flags.list(projectId).page(), 404, "environment_not_found");
      await rejectsWith(nowhere.flags.check(projectId, "f"), 404, "environment_not_found");
      await rejectsWith(nowhere.flags.update(projectId, "f", { status: "enabled" }), 404, "environment_not_found");
      await rejectsWith(nowhere.flags.listForActor(projectId, "alice").page(), 404, "environment_not_found");

      assert.throws(() => client(ADMIN_KEY, { environment: "" }), TypeError);
    });

    test("flags.copy: one environment's configuration onto another, with If-Match, in one history event", async () => {
      const projectId = await twoEnvironments();
      const segment = await admin.segments.create(projectId, { name: "Beta testers" });
      const staging = client(ADMIN_KEY, { environment: "staging" });
      const production = client(ADMIN_KEY, { environment: "production" });
      await admin.flags.create(projectId, "checkout");
      await production.flags.update(projectId, "checkout", { addActors: ["old"] });
      await staging.flags.update(projectId, "checkout", {
        status: "conditional",
        percentageActors: 25,
        percentageCalls: 5,
        addActors: ["alice", "carol"],
        addSegments: [segment.id],
      });

      const { etag: before } = await production.flags.getWithETag(projectId, "checkout");
      const copied = await staging.flags.copyWithETag(
        projectId,
        "checkout",
        { from: "staging", to: "production" },
        { ifMatch: before },
      );
      assert.match(copied.etag, /@production\.\d+"$/);
      assert.notEqual(copied.etag, before);
      const flag = copied.value;
      assert.deepEqual(
        [
          flag.environment,
          flag.status,
          flag.percentageActors,
          flag.percentageCalls,
          flag.actorsCount,
          flag.segmentsCount,
        ],
        ["production", "conditional", 25, 5, 2, 1],
      );
      assert.deepEqual(
        (await production.flags.actors(projectId, "checkout").toArray()).map((m) => m.actorId),
        ["alice", "carol"],
      );
      assert.equal(await admin.flags.check(projectId, "checkout", { actorIds: ["carol"] }), true);
      const old = await admin.flags.explain(projectId, "checkout", ["old"]);
      assert.equal(old.actors[0]?.attached, false, "production's own actor is detached");

      // One flag.updated event, in the target environment, saying where it came from.
      const events = await admin.events.list(projectId, { type: "flag.updated", environment: "production" }).toArray();
      const copyEvents = events.filter((e) => (e.after as { copiedFrom?: string } | null)?.copiedFrom !== undefined);
      assert.equal(copyEvents.length, 1);
      assert.equal(copyEvents[0]?.environment, "production");
      assert.equal((copyEvents[0]?.after as { copiedFrom?: string } | undefined)?.copiedFrom, "staging");
      const stagingEvents = await admin.events.list(projectId, { environment: "staging" }).toArray();
      assert.ok(stagingEvents.length > 0);
      assert.ok(stagingEvents.every((e) => e.environment === "staging"));
      const flagEvents = await admin.events.listForFlag(projectId, "checkout", { environment: "production" }).toArray();
      assert.ok(flagEvents.every((e) => e.environment === "production"));
      assert.ok(flagEvents.some((e) => e.id === copyEvents[0]?.id));

      // The stale ETag: 412, nothing copied. copy (without ETag) answers the flag alone.
      await production.flags.update(projectId, "checkout", { status: "disabled" });
      await rejectsWith(
        admin.flags.copy(projectId, "checkout", { from: "staging", to: "production" }, { ifMatch: before }),
        412,
        "precondition_failed",
      );
      assert.equal((await production.flags.get(projectId, "checkout")).status, "disabled");
      const again = await admin.flags.copy(projectId, "checkout", { from: "staging", to: "production" });
      assert.equal(again.status, "conditional");

      // The errors.
      const same = await rejectsWith(
        admin.flags.copy(projectId, "checkout", { from: "staging", to: "staging" }),
        400,
        "invalid_request",
      );
      assert.match(same.detail, /same environment/);
      await rejectsWith(
        admin.flags.copy(projectId, "checkout", { from: "nope", to: "production" }),
        404,
        "environment_not_found",
      );
      await rejectsWith(
        admin.flags.copy(projectId, "checkout", { from: "staging", to: "nope" }),
        404,
        "environment_not_found",
      );
      await rejectsWith(
        admin.flags.copy(projectId, "nope", { from: "staging", to: "production" }),
        404,
        "flag_not_found",
      );
      const stagingWriter = client(
        (await admin.keys.create(projectId, { role: "write", name: "staging writer", environment: "staging" })).key,
      );
      await rejectsWith(
        stagingWriter.flags.copy(projectId, "checkout", { from: "staging", to: "production" }),
        403,
        "forbidden",
      );
      const reader = client((await admin.keys.create(projectId, { role: "read", name: "reader" })).key);
      await rejectsWith(
        reader.flags.copy(projectId, "checkout", { from: "staging", to: "production" }),
        403,
        "forbidden",
      );
      const unboundWriter = client(
        (await admin.keys.create(projectId, { role: "write", name: "unbound writer", environment: null })).key,
      );
      const back = await unboundWriter.flags.copy(projectId, "checkout", { from: "production", to: "staging" });
      assert.equal(back.environment, "staging");
    });

    test("a local evaluator on a staging key follows staging's configuration, never production's", async () => {
      const projectId = await twoEnvironments();
      const staging = client(ADMIN_KEY, { environment: "staging" });
      await admin.flags.create(projectId, "banner");
      await admin.flags.update(projectId, "banner", { status: "enabled" });
      await staging.flags.update(projectId, "banner", { status: "conditional", addActors: ["tester"] });
      const readKey = await admin.keys.create(projectId, { role: "read", name: "staging", environment: "staging" });

      const local = createLocalEvaluator({ url: server.url, key: readKey.key, projectId });
      try {
        const changes: LocalChange[] = [];
        local.on("change", (change) => changes.push(change));
        await local.ready(10_000);
        assert.deepEqual(local.evaluate("banner", ["tester"]), {
          enabled: true,
          reason: "TARGETING_MATCH",
          variant: "on",
          value: true,
        });
        assert.equal(local.evaluate("banner", ["someone"]).enabled, false, "production has it enabled for everyone");

        // A change in production, then one in staging: the staging one arrives, the other never does.
        await admin.flags.update(projectId, "banner", { status: "disabled", addActors: ["prod-only"] });
        await staging.flags.update(projectId, "banner", { addActors: ["second"] });
        await waitFor("staging's change", () => local.evaluate("banner", ["second"]).enabled);
        assert.equal(local.evaluate("banner", ["prod-only"]).enabled, false);
        assert.equal(local.evaluate("banner", ["tester"]).enabled, true);
        assert.equal(local.evaluate("banner", ["someone"]).enabled, false);
        assert.ok(changes.length > 0);
        // The same answers as the server's check for a check key of staging.
        const checker = client(
          (await admin.keys.create(projectId, { role: "check", name: "c", environment: "staging" })).key,
        );
        for (const actor of ["tester", "second", "prod-only", "someone"]) {
          assert.equal(
            local.isEnabled("banner", [actor]),
            await checker.flags.check(projectId, "banner", { actorIds: [actor] }),
          );
        }
      } finally {
        await local.close();
      }
    });
  });
}
