// The check, OFREP (single, bulk, event stream) and the project stream follow the key's environment
// (issue 24): on one instance of each engine, and on PostgreSQL across two instances sharing a database.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { evaluate, ProjectState, type ProjectStateJSON } from "@flagstaff/core";
import {
  ADMIN_KEY,
  createProject,
  DIALECTS,
  EventStreamClient,
  expectProblem,
  type FreshDatabase,
  freshDatabase,
  type StreamEvent,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import { addEnvironment, bindKey, checkIn, type Key, patchFlag } from "./helpers/environments.js";

const isRefetch = (e: StreamEvent) => e.event === "message" && e.data?.type === "refetchEvaluation";
const isChange = (e: StreamEvent) => e.event === "change";
/** Actors that fall on both sides of a 50 % actor rollout of most flag names. */
const ACTORS = ["alice", "bob", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"];

/** The state a project stream's client holds: its snapshot, then each change applied in order. */
function followed(stream: EventStreamClient): ProjectState {
  let state = new ProjectState();
  for (const event of stream.events) {
    if (event.event === "snapshot") state = ProjectState.fromJSON(event.data.state as ProjectStateJSON);
    else if (event.event === "change") for (const change of event.data.changes) state.apply(change);
  }
  return state;
}

/** What a followed state answers for a flag and one actor (the call rollout never drawing a call in). */
const localAnswer = (state: ProjectState, flag: string, actor: string) => {
  const found = state.flagsByName.get(flag);
  return found === undefined ? "absent" : String(evaluate(found, [actor], state.isMember, () => 0.999).enabled);
};

/** An OFREP request as a provider sends it; a query sends it past the node:http adapter, to the route. */
function ofrep(server: Pick<TestServer, "request">, key: string, flag?: string, headers: Record<string, string> = {}) {
  const path = flag === undefined ? "/ofrep/v1/evaluate/flags" : `/ofrep/v1/evaluate/flags/${flag}`;
  return server.request("POST", path, { key, body: { context: { targetingKey: "alice" } }, headers });
}

for (const dialect of DIALECTS) {
  describe(`evaluation follows the key's environment [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let production: Key;
    let staging: Key;
    let stagingReader: Key;

    before(async () => {
      server = await startServer({ dialect, random: () => 0.999, env: { STREAM_HEARTBEAT_MS: "200" } });
      project = await createProject(server);
      await addEnvironment(server, project, "staging");
      production = await bindKey(server, project, "check", "production");
      staging = await bindKey(server, project, "check", "staging");
      stagingReader = await bindKey(server, project, "read", "staging");
      await server.request("POST", `/projects/${project}/flags/banner`, { body: {} });
      await patchFlag(server, project, "banner", "staging", { status: "conditional", addActors: ["alice"] });
    });
    after(() => server.close());

    test("the check answers in the key's environment, on the fast path and on the route", async () => {
      for (const [key, expected] of [
        [production, "false"],
        [staging, "true"],
      ] as const) {
        assert.equal(await checkIn(server, project, "banner", { actors: ["alice"], key: key.key }), expected);
        // Percent-encoding sends the request past the node:http adapter, to the Fastify route.
        const res = await server.request("GET", `/projects/${project}/flags/banner/check?actorIds=%61lice`, {
          key: key.key,
        });
        assert.equal(String(res.body.enabled), expected);
        assert.equal(
          await checkIn(server, project, "banner", { actors: ["alice"], key: key.key, environment: key.environment! }),
          expected,
        );
      }
      assert.equal(await checkIn(server, project, "banner", { actors: ["alice"] }), "false", "admin: the default");
      assert.equal(await checkIn(server, project, "banner", { actors: ["alice"], environment: "staging" }), "true");
      expectProblem(
        await server.request("GET", `/projects/${project}/flags/banner/check?environment=production`, {
          key: staging.key,
        }),
        403,
        "forbidden",
      );
    });

    test("OFREP single and bulk evaluate in the key's environment; bulk ETags are per environment", async () => {
      const value = async (key: Key, path = "") =>
        (
          await server.request("POST", `/ofrep/v1/evaluate/flags/banner${path}`, {
            key: key.key,
            body: { context: { targetingKey: "alice" } },
          })
        ).body.value;
      assert.equal(await value(production), false);
      assert.equal(await value(staging), true);
      // A query sends it past the node:http adapter, to the route: the same answers.
      assert.equal(await value(production, "?via=route"), false);
      assert.equal(await value(staging, "?via=route"), true);
      expectProblem(await ofrep(server, ADMIN_KEY, "banner"), 403, "forbidden");

      const bulkOf = async (key: Key, etag?: string) =>
        ofrep(server, key.key, undefined, etag === undefined ? {} : { "if-none-match": etag });
      const productionBulk = await bulkOf(production);
      const stagingBulk = await bulkOf(staging);
      assert.deepEqual(
        productionBulk.body.flags.map((f: any) => [f.key, f.value]),
        [["banner", false]],
      );
      assert.deepEqual(
        stagingBulk.body.flags.map((f: any) => [f.key, f.value]),
        [["banner", true]],
      );
      const productionTag = productionBulk.headers.get("etag") as string;
      const stagingTag = stagingBulk.headers.get("etag") as string;
      assert.notEqual(productionTag, stagingTag);
      assert.equal((await bulkOf(production, productionTag)).status, 304);
      assert.equal((await bulkOf(staging, stagingTag)).status, 304);

      // A change in staging: staging's ETag moves, production's does not.
      await patchFlag(server, project, "banner", "staging", { removeActors: ["alice"] });
      assert.equal((await bulkOf(production, productionTag)).status, 304, "production's answers did not change");
      const stagingNow = await bulkOf(staging, stagingTag);
      assert.equal(stagingNow.status, 200);
      assert.equal(stagingNow.body.flags[0].value, false);
      // And a change in production moves production's only.
      const stagingTagNow = stagingNow.headers.get("etag") as string;
      await patchFlag(server, project, "banner", "production", { percentageActors: 1 });
      assert.equal((await bulkOf(production, productionTag)).status, 200);
      assert.equal((await bulkOf(staging, stagingTagNow)).status, 304);
      // Back as it was for the tests after this one.
      await patchFlag(server, project, "banner", "staging", { addActors: ["alice"] });
      await patchFlag(server, project, "banner", "production", { percentageActors: 0 });
    });

    test("an OFREP event stream says refetch for its key's environment's changes only", async () => {
      const open = async (key: Key) => {
        const bulk = await ofrep(server, key.key);
        const url = new URL(bulk.body.eventStreams[0].endpoint.requestUri, server.url).href;
        const stream = await EventStreamClient.open(url, { key: null });
        assert.equal(stream.status, 200);
        await stream.next("the first refetch", isRefetch);
        return stream;
      };
      const productionStream = await open(production);
      const stagingStream = await open(staging);
      const refetches = (s: EventStreamClient) => s.events.filter(isRefetch).length;

      await patchFlag(server, project, "banner", "staging", { addActors: ["s-1"] });
      await waitFor("staging's refetch", () => refetches(stagingStream), { until: (n) => n === 2 });
      await patchFlag(server, project, "banner", "production", { addActors: ["p-1"] });
      await waitFor("production's refetch", () => refetches(productionStream), { until: (n) => n === 2 });
      // Production's stream heard its own change only (the staging one came first); and staging's the other way.
      await patchFlag(server, project, "banner", "staging", { addActors: ["s-2"] });
      await waitFor("staging's second refetch", () => refetches(stagingStream), { until: (n) => n === 3 });
      assert.equal(refetches(productionStream), 2);
      assert.equal(refetches(stagingStream), 3);
      const [, productionRefetch] = productionStream.events.filter(isRefetch);
      const [, firstStaging, secondStaging] = stagingStream.events.filter(isRefetch);
      assert.ok(Number(firstStaging!.id) < Number(productionRefetch!.id));
      assert.ok(Number(productionRefetch!.id) < Number(secondStaging!.id));
      await productionStream.close();
      await stagingStream.close();
    });

    test("the project stream follows the key's environment: its snapshot, then its changes only", async () => {
      const url = `${server.url}/projects/${project}/stream`;
      const stream = await EventStreamClient.open(url, { key: stagingReader.key });
      assert.equal(stream.status, 200);
      const snapshot = await stream.next("the snapshot", (e) => e.event === "snapshot");
      const banner = snapshot.data.state.flags.find((f: any) => f.name === "banner");
      assert.equal(banner.status, "conditional", "staging's configuration");
      assert.ok(banner.actors.includes("alice"));

      await patchFlag(server, project, "banner", "production", { status: "enabled" });
      await patchFlag(server, project, "banner", "staging", { percentageActors: 50, addActors: ["marker"] });
      await stream.next("staging's change", (e) => isChange(e) && JSON.stringify(e.data).includes("marker"));
      const changes = stream.events.filter(isChange);
      assert.equal(changes.length, 1, `production's change was not sent: ${JSON.stringify(changes)}`);
      assert.equal("environment" in changes[0]!.data.changes[0], false, "the stream implies its environment");
      const state = followed(stream);
      for (const actor of ACTORS) {
        assert.equal(
          localAnswer(state, "banner", actor),
          await checkIn(server, project, "banner", { actors: [actor], key: staging.key }),
          actor,
        );
      }
      // A new flag (every environment) reaches it, disabled.
      await server.request("POST", `/projects/${project}/flags/later`, { body: {} });
      await stream.next("the new flag", (e) => isChange(e) && JSON.stringify(e.data).includes("later"));
      assert.equal(localAnswer(followed(stream), "later", "alice"), "false");
      await stream.close();

      // Keys bound to none follow the one they name, else the default; a bound key may not name another.
      const unbound = await bindKey(server, project, "write", null);
      for (const [query, status] of [
        ["", "enabled"],
        ["?environment=staging", "conditional"],
        ["?environment=production", "enabled"],
      ]) {
        const s = await EventStreamClient.open(`${url}${query}`, { key: unbound.key });
        const snap = await s.next("a snapshot", (e) => e.event === "snapshot");
        assert.equal(snap.data.state.flags.find((f: any) => f.name === "banner").status, status, query);
        await s.close();
      }
      const refused = await server.request("GET", `/projects/${project}/stream?environment=production`, {
        key: stagingReader.key,
      });
      expectProblem(refused, 403, "forbidden");
      expectProblem(
        await server.request("GET", `/projects/${project}/stream?environment=nowhere`),
        404,
        "environment_not_found",
      );
      await patchFlag(server, project, "banner", "production", { status: "disabled" });
      await patchFlag(server, project, "banner", "staging", { percentageActors: 0, removeActors: ["marker"] });
    });

    test("a stream following the default starts over when the default moves; one of a deleted environment ends", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "qa");
      await server.request("POST", `/projects/${p}/flags/f`, { body: {} });
      await patchFlag(server, p, "f", "qa", { status: "enabled" });
      const unbound = await bindKey(server, p, "write", null);
      const qaReader = await bindKey(server, p, "read", "qa");
      const url = `${server.url}/projects/${p}/stream`;
      const following = await EventStreamClient.open(url, { key: unbound.key });
      const first = await following.next("the snapshot", (e) => e.event === "snapshot");
      assert.equal(first.data.state.flags[0].status, "disabled", "production's");
      const named = await EventStreamClient.open(`${url}?environment=qa`, { key: unbound.key });
      const bound = await EventStreamClient.open(url, { key: qaReader.key });
      const bulkStream = await (async () => {
        const qaCheck = await bindKey(server, p, "check", "qa");
        const bulk = await ofrep(server, qaCheck.key);
        return EventStreamClient.open(new URL(bulk.body.eventStreams[0].endpoint.requestUri, server.url).href, {
          key: null,
        });
      })();
      for (const s of [named, bound]) await s.next("a snapshot", (e) => e.event === "snapshot");
      await bulkStream.next("the first refetch", isRefetch);
      // An OFREP event stream of a key bound to none follows the default too.
      const unboundBulk = await ofrep(server, unbound.key);
      assert.deepEqual(
        unboundBulk.body.flags.map((f: any) => f.value),
        [false],
      );
      const unboundRefetch = await EventStreamClient.open(
        new URL(unboundBulk.body.eventStreams[0].endpoint.requestUri, server.url).href,
        { key: null },
      );
      await unboundRefetch.next("the first refetch", isRefetch);

      assert.equal(
        (await server.request("PATCH", `/projects/${p}/environments/qa`, { body: { default: true } })).status,
        200,
      );
      const second = await following.next("a fresh snapshot", (e) => e.event === "snapshot" && e !== first);
      assert.equal(second.data.state.flags[0].status, "enabled", "qa's, the default now");
      await waitFor("a refetch for the new default", () => unboundRefetch.events.filter(isRefetch).length, {
        until: (n) => n === 2,
      });
      const refetched = await ofrep(server, unbound.key, undefined, {
        "if-none-match": unboundBulk.headers.get("etag") as string,
      });
      assert.equal(refetched.status, 200, "the default's answers, under another ETag");
      assert.deepEqual(
        refetched.body.flags.map((f: any) => f.value),
        [true],
      );
      await unboundRefetch.close();
      // Deleting an environment ends every stream that follows it: its keys are revoked, and a key bound
      // to none that named it has nothing left to follow.
      assert.equal(
        (await server.request("PATCH", `/projects/${p}/environments/production`, { body: { default: true } })).status,
        200,
      );
      assert.equal((await server.request("DELETE", `/projects/${p}/environments/qa`)).status, 204);
      await waitFor("the streams that followed qa to end", () => named.isEnded && bound.isEnded && bulkStream.isEnded);
      const third = await following.next(
        "a snapshot of production",
        (e) => e.event === "snapshot" && e !== first && e !== second,
      );
      assert.equal(third.data.state.flags[0].status, "disabled");
      assert.equal(following.isEnded, false, "a stream that follows the default goes on");
      await following.close();
    });
    test("a bound key resuming with Last-Event-ID gets its environment's missed changes only", async () => {
      const url = `${server.url}/projects/${project}/stream`;
      const first = await EventStreamClient.open(url, { key: stagingReader.key });
      const snapshot = await first.next("the snapshot", (e) => e.event === "snapshot");
      await first.close();
      await patchFlag(server, project, "banner", "production", { addActors: ["missed-production"] });
      await patchFlag(server, project, "banner", "staging", { addActors: ["missed-staging"] });
      const resumed = await EventStreamClient.open(url, { key: stagingReader.key, lastEventId: snapshot.id });
      await resumed.next(
        "the missed staging change",
        (e) => isChange(e) && JSON.stringify(e.data).includes("missed-staging"),
      );
      assert.equal(
        resumed.events.some((e) => e.event === "snapshot"),
        false,
        "a replay, not a snapshot",
      );
      assert.ok(!JSON.stringify(resumed.events).includes("missed-production"), "production's change is not replayed");
      const last = resumed.events.at(-1) as StreamEvent;
      await resumed.close();
      // A resume across an environment's creation starts over with a snapshot.
      await addEnvironment(server, project, `later-${Date.now()}`);
      const again = await EventStreamClient.open(url, { key: stagingReader.key, lastEventId: last.id });
      const fresh = await again.next("a snapshot", (e) => e.event === "snapshot");
      assert.equal(
        fresh.data.state.flags.find((f: any) => f.name === "banner").actors.includes("missed-staging"),
        true,
      );
      await again.close();
    });
  });
}

if (DIALECTS.includes("postgres")) {
  describe("evaluation follows the key's environment across two instances [postgres]", () => {
    let fresh: FreshDatabase;
    let a: TestServer;
    let b: TestServer;
    let project: string;
    let production: Key;
    let staging: Key;
    let stagingReader: Key;

    before(async () => {
      fresh = await freshDatabase("postgres");
      const env = { STREAM_HEARTBEAT_MS: "200" };
      a = await startServer({ dialect: "postgres", database: fresh, env, random: () => 0.999 });
      b = await startServer({ dialect: "postgres", database: fresh, env, random: () => 0.999 });
      project = await createProject(a);
      await addEnvironment(a, project, "staging");
      production = await bindKey(a, project, "check", "production");
      staging = await bindKey(a, project, "check", "staging");
      stagingReader = await bindKey(a, project, "read", "staging");
      await a.request("POST", `/projects/${project}/flags/banner`, { body: {} });
      await waitFor(
        "B to know the project's keys and flag",
        async () => checkIn(b, project, "banner", { key: stagingReader.key }),
        { until: (answer) => answer === "false" },
      );
    });
    after(async () => {
      await a.stop();
      await b.stop();
      await fresh.drop();
    });

    test("a write on A in staging reaches B's staging keys, checks, OFREP and streams; production's see nothing", async () => {
      const bulkOf = (key: Key, etag?: string) =>
        ofrep(b, key.key, undefined, etag === undefined ? {} : { "if-none-match": etag });
      const productionBulk = await bulkOf(production);
      const stagingBulk = await bulkOf(staging);
      const openRefetch = async (bulk: any) => {
        const s = await EventStreamClient.open(new URL(bulk.body.eventStreams[0].endpoint.requestUri, b.url).href, {
          key: null,
        });
        await s.next("the first refetch", isRefetch);
        return s;
      };
      const productionRefetch = await openRefetch(productionBulk);
      const stagingRefetch = await openRefetch(stagingBulk);
      const projectStream = await EventStreamClient.open(`${b.url}/projects/${project}/stream`, {
        key: stagingReader.key,
      });
      await projectStream.next("the snapshot", (e) => e.event === "snapshot");

      await patchFlag(a, project, "banner", "staging", { status: "conditional", addActors: ["alice"] });
      await waitFor("B's staging check", () => checkIn(b, project, "banner", { actors: ["alice"], key: staging.key }), {
        until: (answer) => answer === "true",
      });
      assert.equal(await checkIn(b, project, "banner", { actors: ["alice"], key: production.key }), "false");
      assert.equal((await ofrep(b, staging.key, "banner")).body.value, true);
      assert.equal((await ofrep(b, production.key, "banner")).body.value, false);
      assert.equal((await bulkOf(production, productionBulk.headers.get("etag") as string)).status, 304);
      assert.equal((await bulkOf(staging, stagingBulk.headers.get("etag") as string)).status, 200);
      await stagingRefetch.next(
        "B's refetch for staging",
        (e) => isRefetch(e) && stagingRefetch.events.filter(isRefetch).length === 2,
      );
      await projectStream.next(
        "A's staging change on B's stream",
        (e) => isChange(e) && JSON.stringify(e.data).includes("alice"),
      );

      // Then a change in production: production's streams hear it, staging's do not.
      await patchFlag(a, project, "banner", "production", { status: "enabled", addActors: ["p-marker"] });
      await waitFor("B's production refetch", () => productionRefetch.events.filter(isRefetch).length, {
        until: (n) => n === 2,
      });
      // A staging marker after it: when it arrives, anything of production's would have come before.
      await patchFlag(a, project, "banner", "staging", { addActors: ["s-marker"] });
      await projectStream.next("the staging marker", (e) => isChange(e) && JSON.stringify(e.data).includes("s-marker"));
      await waitFor("B's staging refetch for the marker", () => stagingRefetch.events.filter(isRefetch).length, {
        until: (n) => n === 3,
      });
      assert.ok(
        !JSON.stringify(projectStream.events).includes("p-marker"),
        "production's change never reached staging's stream",
      );
      assert.equal(productionRefetch.events.filter(isRefetch).length, 2);
      const state = followed(projectStream);
      for (const actor of [...ACTORS, "s-marker", "p-marker"]) {
        assert.equal(
          localAnswer(state, "banner", actor),
          await checkIn(b, project, "banner", { actors: [actor], key: staging.key }),
          actor,
        );
      }
      for (const s of [productionRefetch, stagingRefetch, projectStream]) await s.close();
    });

    test("environments made, moved and deleted on A take effect on B", async () => {
      const p = await createProject(a);
      await a.request("POST", `/projects/${p}/flags/f`, { body: {} });
      await patchFlag(a, p, "f", undefined, { status: "enabled" });
      await addEnvironment(a, p, "qa", { copyFrom: "production" });
      const qa = await bindKey(a, p, "read", "qa");
      const unbound = await bindKey(a, p, "write", null);
      await waitFor("B to know qa and its key", () => checkIn(b, p, "f", { key: qa.key }), {
        until: (answer) => answer === "true",
      });
      const qaStream = await EventStreamClient.open(`${b.url}/projects/${p}/stream`, { key: qa.key });
      await qaStream.next("the snapshot", (e) => e.event === "snapshot");
      await patchFlag(a, p, "f", "qa", { status: "disabled" });
      await waitFor("B's qa check", () => checkIn(b, p, "f", { key: qa.key }), {
        until: (answer) => answer === "false",
      });
      assert.equal(await checkIn(b, p, "f", { key: unbound.key }), "true", "production's, the default");

      assert.equal(
        (await a.request("PATCH", `/projects/${p}/environments/qa`, { body: { default: true } })).status,
        200,
      );
      await waitFor("B's unbound key to follow the default", () => checkIn(b, p, "f", { key: unbound.key }), {
        until: (answer) => answer === "false",
      });
      assert.equal(
        (await a.request("PATCH", `/projects/${p}/environments/production`, { body: { default: true } })).status,
        200,
      );
      assert.equal((await a.request("DELETE", `/projects/${p}/environments/qa`)).status, 204);
      await waitFor("B to end the stream of qa's revoked key", () => qaStream.isEnded);
      await waitFor("B to refuse qa's key", () => checkIn(b, p, "f", { key: qa.key }), {
        until: (answer) => answer === "401 unauthorized",
      });
      assert.equal(await checkIn(b, p, "f", { key: unbound.key }), "true");
      expectProblem(
        await b.request("GET", `/projects/${p}/flags/f/check?environment=qa`),
        404,
        "environment_not_found",
      );
    });
  });
}
