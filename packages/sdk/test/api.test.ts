import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  createKey,
  createProject,
  DIALECTS,
  ManualClock,
  type ReceivedWebhook,
  startServer,
  type TestServer,
  WebhookReceiver,
  waitFor,
} from "@flagstaff/test-harness";
import {
  type FetchLike,
  type Flag,
  type FlagListOptions,
  FlagstaffClient,
  FlagstaffError,
  isFlagstaffError,
  type WebhookPayload,
} from "../src/index.js";

/** Actor ids that need percent-encoding, or that a naive client would mangle. */
const SPECIAL_IDS = [
  "team/a b",
  "user@example.com",
  "ünïcødé 🚀",
  "a,b",
  "100%",
  "x?y#z&w=1",
  "+plus+",
  "...",
  "%2e%2e",
  "back\\slash",
];

/** Asserts a promise rejects with a FlagstaffError of this status and code, and answers it. */
async function rejectsWith(promise: Promise<unknown>, status: number, code: string): Promise<FlagstaffError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FlagstaffError, `expected a FlagstaffError, got ${String(error)}`);
    assert.ok(isFlagstaffError(error, code), `expected code ${code}, got ${error.code}: ${error.message}`);
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    return error;
  }
  assert.fail(`expected ${status} ${code}, but the call succeeded`);
}

/** Whether a delivery carries a Standard Webhooks signature made with this secret over its exact bytes. */
function signedWith(secret: string, delivery: ReceivedWebhook): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature } = delivery.headers;
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${delivery.body}`).digest("base64");
  return String(signature).split(" ").includes(`v1,${expected}`);
}

/** A fetch that counts the requests it sends. */
function countingFetch(): { fetch: FetchLike; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: (url, init) => {
      urls.push(url);
      return globalThis.fetch(url, init);
    },
  };
}

for (const dialect of DIALECTS) {
  describe(`SDK against a real server (${dialect})`, () => {
    let server: TestServer;
    let admin: FlagstaffClient;
    const client = (apiKey: string, extra: Partial<ConstructorParameters<typeof FlagstaffClient>[0]> = {}) =>
      new FlagstaffClient({ baseUrl: server.url, apiKey, retryDelayMs: 5, ...extra });

    before(async () => {
      // The webhook tests deliver to a receiver on 127.0.0.1, which the server refuses by default.
      server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
      admin = client(ADMIN_KEY);
    });
    after(async () => {
      await server?.close();
    });

    test("health and ready answer without a key", async () => {
      const anonymous = new FlagstaffClient({ baseUrl: `${server.url}/` });
      assert.deepEqual(await anonymous.health(), { status: "ok" });
      assert.deepEqual(await anonymous.ready(), { status: "ok" });
    });

    test("projects: create, get, list, delete", async () => {
      const created = await admin.projects.create({ id: "proj-a", name: "Project A" });
      assert.equal(created.id, "proj-a");
      assert.equal(created.name, "Project A");
      assert.match(created.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      await admin.projects.create({ id: "proj-b", name: "Project B" });
      assert.deepEqual(await admin.projects.get("proj-a"), created);

      const ids: string[] = [];
      for await (const project of admin.projects.list({ limit: 1 })) ids.push(project.id);
      assert.ok(ids.includes("proj-a") && ids.includes("proj-b"));
      assert.deepEqual(ids, [...ids].sort());

      const first = await admin.projects.list().page({ limit: 1 });
      assert.equal(first.data.length, 1);
      assert.equal(first.pagination.before, null);
      assert.equal(typeof first.pagination.after, "string");

      assert.equal(await admin.projects.delete("proj-b"), undefined);
      await rejectsWith(admin.projects.get("proj-b"), 404, "project_not_found");
      await rejectsWith(admin.projects.delete("proj-b"), 404, "project_not_found");
    });

    test("keys: create, list, revoke; the roles work and a revoked key gets 401", async () => {
      const projectId = await createProject(server);
      const write = await admin.keys.create(projectId, { role: "write", name: "writer" });
      assert.match(write.key, /^fsk_[A-Za-z0-9_-]{43}$/);
      assert.match(write.id, /^key_/);
      assert.equal(write.role, "write");
      assert.equal(write.projectId, projectId);
      const read = await admin.keys.create(projectId, { role: "read", name: "reader" });
      const check = await admin.keys.create(projectId, { role: "check", name: "checker" });

      const listed = await admin.keys.list(projectId, { limit: 2 }).toArray();
      assert.deepEqual(
        listed.map((k) => [k.id, k.name, k.role]),
        [
          [write.id, "writer", "write"],
          [read.id, "reader", "read"],
          [check.id, "checker", "check"],
        ],
      );
      assert.ok(
        listed.every((k) => !("key" in k)),
        "lists never include the secret",
      );

      const writer = client(write.key);
      await writer.flags.create(projectId, "by-writer");
      assert.equal((await client(read.key).flags.get(projectId, "by-writer")).name, "by-writer");
      assert.equal(await client(check.key).flags.check(projectId, "by-writer"), false);

      const renamed = await admin.keys.rename(projectId, write.id, "ci pipeline");
      assert.deepEqual([renamed.id, renamed.name, renamed.role], [write.id, "ci pipeline", "write"]);
      await rejectsWith(admin.keys.rename(projectId, "key_nope", "x"), 404, "key_not_found");

      await admin.keys.revoke(projectId, read.id);
      await rejectsWith(client(read.key).flags.get(projectId, "by-writer"), 401, "unauthorized");
      await rejectsWith(admin.keys.revoke(projectId, read.id), 404, "key_not_found");
      assert.equal((await admin.keys.list(projectId).toArray()).length, 2);
    });

    test("flags: create, get, update, delete, list with search", async () => {
      const projectId = await createProject(server);
      const created = await admin.flags.create(projectId, "new-checkout", { description: "One-page checkout" });
      assert.equal(created.name, "new-checkout");
      assert.equal(created.projectId, projectId);
      assert.equal(created.status, "disabled");
      assert.equal(created.percentageActors, 0);
      assert.equal(created.percentageCalls, 0);
      assert.equal(created.latestCheckedAt, null);
      assert.equal(created.statusChangedAt, created.createdAt);
      assert.match(created.id, /^flg_/);

      const bare = await admin.flags.create(projectId, "dark-mode");
      assert.equal(bare.description, "");
      assert.deepEqual(await admin.flags.get(projectId, "new-checkout"), created);

      const updated = await admin.flags.update(projectId, "new-checkout", {
        status: "conditional",
        percentageActors: 25,
        percentageCalls: 0,
        description: "One-page checkout flow",
        addActors: ["alice"],
      });
      assert.equal(updated.status, "conditional");
      assert.equal(updated.percentageActors, 25);
      assert.equal(updated.description, "One-page checkout flow");
      const unchanged = await admin.flags.update(projectId, "new-checkout", {});
      assert.equal(unchanged.updatedAt, updated.updatedAt);

      const names = async (options: { name?: string; q?: string } = {}) =>
        (await admin.flags.list(projectId, options).toArray()).map((f) => f.name);
      assert.deepEqual(await names(), ["dark-mode", "new-checkout"]);
      assert.deepEqual(await names({ q: "CHECKOUT FLOW" }), ["new-checkout"]);
      assert.deepEqual(await names({ name: "dark" }), ["dark-mode"]);
      assert.deepEqual(await names({ name: "dark", q: "checkout" }), []);
      // The order, the status filter and the count (extensions).
      const list = (options: FlagListOptions) => admin.flags.list(projectId, options);
      assert.deepEqual(
        (await list({ sort: "-name" }).toArray()).map((f) => f.name),
        ["new-checkout", "dark-mode"],
      );
      assert.deepEqual(
        (await list({ status: "conditional" }).toArray()).map((f) => f.name),
        ["new-checkout"],
      );
      const counted = await list({ status: "disabled", total: true }).page();
      assert.deepEqual([counted.data.map((f) => f.name), counted.total], [["dark-mode"], 1]);
      assert.equal((await list({}).page()).total, undefined, "no total unless asked");
      const oldest = (await list({ sort: "createdAt" }).toArray()).map((f) => f.id);
      const newest = (await list({ sort: "-createdAt", limit: 1 }).toArray()).map((f) => f.id);
      assert.deepEqual(newest, [...oldest].reverse(), "paged by one, newest first, each once");

      assert.equal(await admin.flags.delete(projectId, "dark-mode"), undefined);
      await rejectsWith(admin.flags.get(projectId, "dark-mode"), 404, "flag_not_found");
      await rejectsWith(admin.flags.delete(projectId, "dark-mode"), 404, "flag_not_found");
      assert.deepEqual(await names(), ["new-checkout"]);
    });

    test("segments and the relationship lists", async () => {
      const projectId = await createProject(server);
      const beta = await admin.segments.create(projectId, { name: "  Beta testers ", description: "Opted in" });
      assert.match(beta.id, /^seg_/);
      assert.equal(beta.name, "Beta testers");
      assert.deepEqual(beta.latestActors, []);
      const staff = await admin.segments.create(projectId, { name: "Staff" });
      assert.equal(staff.description, "");

      const withMembers = await admin.segments.update(projectId, beta.id, { addActors: ["carol", "team/a b"] });
      assert.deepEqual(
        withMembers.latestActors.map((a) => a.actorId),
        ["team/a b", "carol"],
      );
      const renamed = await admin.segments.update(projectId, beta.id, { name: "Beta", removeActors: ["carol"] });
      assert.equal(renamed.name, "Beta");
      assert.deepEqual(
        renamed.latestActors.map((a) => a.actorId),
        ["team/a b"],
      );
      assert.deepEqual(await admin.segments.get(projectId, beta.id), renamed);
      assert.deepEqual(
        (await admin.segments.list(projectId, { limit: 1 }).toArray()).map((s) => s.name),
        ["Beta", "Staff"],
      );

      await admin.flags.create(projectId, "on-flag");
      await admin.flags.update(projectId, "on-flag", { status: "enabled" });
      await admin.flags.create(projectId, "targeted");
      await admin.flags.update(projectId, "targeted", { status: "conditional", addSegments: [beta.id] });
      await admin.flags.create(projectId, "off-flag");

      const flagNames = (flags: Flag[]) => flags.map((f) => f.name);
      assert.deepEqual(flagNames(await admin.flags.listForSegment(projectId, beta.id).toArray()), [
        "on-flag",
        "targeted",
      ]);
      assert.deepEqual(flagNames(await admin.flags.listForSegment(projectId, staff.id).toArray()), ["on-flag"]);
      assert.deepEqual(flagNames(await admin.flags.listForActor(projectId, "team/a b").toArray()), [
        "on-flag",
        "targeted",
      ]);
      assert.deepEqual(flagNames(await admin.flags.listForActor(projectId, "stranger").toArray()), ["on-flag"]);
      assert.deepEqual(
        (await admin.segments.listForFlag(projectId, "targeted").toArray()).map((s) => s.id),
        [beta.id],
      );
      assert.deepEqual(
        (await admin.segments.listForActor(projectId, "team/a b").toArray()).map((s) => s.id),
        [beta.id],
      );
      assert.deepEqual(await admin.segments.listForActor(projectId, "carol").toArray(), []);

      assert.equal(await admin.segments.delete(projectId, beta.id), undefined);
      await rejectsWith(admin.segments.get(projectId, beta.id), 404, "segment_not_found");
      await rejectsWith(admin.flags.listForSegment(projectId, beta.id).page(), 404, "segment_not_found");
      assert.deepEqual(await admin.segments.listForFlag(projectId, "targeted").toArray(), []);
    });

    test("whoami: any key learns its id, name, role, project and environment; an unknown key gets 401", async () => {
      const projectId = await createProject(server);
      const me = await admin.whoami();
      assert.equal(me.role, "admin");
      assert.equal(me.projectId, null);
      assert.equal(me.environment, null);
      for (const role of ["write", "read", "check"] as const) {
        const made = await admin.keys.create(projectId, { role, name: `${role} key` });
        assert.deepEqual(await client(made.key).whoami(), {
          keyId: made.id,
          name: `${role} key`,
          role,
          projectId,
          environment: "production",
        });
      }
      await rejectsWith(client("fsk_unknown-key-0000000000000000000000").whoami(), 401, "unauthorized");
    });

    test("actors of a flag and members of a segment: searched, paged both ways; counts on the resources", async () => {
      const projectId = await createProject(server);
      const ids = Array.from({ length: 25 }, (_, i) => `user-${String(i).padStart(2, "0")}`);
      await admin.flags.create(projectId, "paged");
      const flag = await admin.flags.update(projectId, "paged", { addActors: [...ids, "team/a b"] });
      assert.equal(flag.actorsCount, 26);
      assert.equal(flag.segmentsCount, 0);
      const segment = await admin.segments.create(projectId, { name: "Paged" });
      assert.equal(segment.actorsCount, 0);
      const grown = await admin.segments.update(projectId, segment.id, { addActors: ids });
      assert.equal(grown.actorsCount, 25);
      assert.equal((await admin.flags.update(projectId, "paged", { addSegments: [segment.id] })).segmentsCount, 1);

      const all = await admin.flags.actors(projectId, "paged", { limit: 10 }).toArray();
      assert.deepEqual(
        all.map((a) => a.actorId),
        ["team/a b", ...ids],
      );
      assert.match(all[0]?.addedAt ?? "", /^\d{4}-\d\d-\d\dT/);
      const first = await admin.segments.actors(projectId, segment.id).page({ limit: 10 });
      assert.equal(first.data.length, 10);
      assert.equal(first.pagination.before, null);
      const second = await admin.segments
        .actors(projectId, segment.id)
        .page({ limit: 10, after: first.pagination.after! });
      assert.equal(second.data[0]?.actorId, "user-10", "bytewise by actor id");
      const back = await admin.segments
        .actors(projectId, segment.id)
        .page({ limit: 10, before: second.pagination.before! });
      assert.deepEqual(back.data, first.data);
      // q: a case-insensitive substring of the id; % and _ match themselves.
      const found = await admin.flags.actors(projectId, "paged", { q: "USER-1" }).toArray();
      assert.equal(found.length, 10);
      assert.deepEqual(await admin.flags.actors(projectId, "paged", { q: "a b" }).toArray(), [all[0]]);
      assert.deepEqual(await admin.segments.actors(projectId, segment.id, { q: "%" }).toArray(), []);

      const read = await admin.keys.create(projectId, { role: "read", name: "reader" });
      assert.equal((await client(read.key).flags.actors(projectId, "paged").page()).data.length, 20);
      const check = await admin.keys.create(projectId, { role: "check", name: "checker" });
      await rejectsWith(client(check.key).segments.actors(projectId, segment.id).page(), 403, "forbidden");
      await rejectsWith(admin.flags.actors(projectId, "missing").page(), 404, "flag_not_found");
      await rejectsWith(admin.segments.actors(projectId, "seg_missing").page(), 404, "segment_not_found");
      await rejectsWith(admin.flags.actors(projectId, "paged").page({ limit: 0 }), 400, "invalid_request");
    });

    test("explain: the rule, actor, segment, buckets and threshold, without recording a check", async () => {
      const projectId = await createProject(server);
      const vips = await admin.segments.create(projectId, { name: "VIPs" });
      await admin.segments.update(projectId, vips.id, { addActors: ["vip-1"] });
      await admin.flags.create(projectId, "why");
      const off = await admin.flags.explain(projectId, "why", ["vip-1"]);
      assert.equal(off.enabled, false);
      assert.equal(off.rule, "status");
      assert.equal(off.reason, "DISABLED");
      await admin.flags.update(projectId, "why", {
        status: "conditional",
        percentageActors: 25,
        addActors: ["alice"],
        addSegments: [vips.id],
      });
      const bySegment = await admin.flags.explain(projectId, "why", ["nobody-in-particular", "vip-1"]);
      assert.equal(bySegment.enabled, true);
      assert.equal(bySegment.rule, "segment");
      assert.equal(bySegment.reason, "TARGETING_MATCH");
      assert.equal(bySegment.actorId, "vip-1");
      assert.deepEqual(bySegment.segment, { id: vips.id, name: "VIPs" });
      assert.equal(bySegment.threshold, 25_000);
      assert.deepEqual(
        bySegment.actors.map((a) => a.actorId),
        ["nobody-in-particular", "vip-1"],
      );
      for (const a of bySegment.actors) {
        assert.ok(a.bucket >= 0 && a.bucket < 100_000);
        assert.equal(a.inRollout, a.bucket < bySegment.threshold);
      }
      const byActor = await admin.flags.explain(projectId, "why", ["alice"]);
      assert.equal(byActor.rule, "actor");
      assert.equal(byActor.actorId, "alice");
      assert.equal(byActor.actors[0]?.attached, true);
      const nobody = await admin.flags.explain(projectId, "why");
      assert.deepEqual(nobody.actors, []);
      assert.equal((await admin.flags.get(projectId, "why")).latestCheckedAt, null, "explain records no check");
      await rejectsWith(
        admin.flags.explain(
          projectId,
          "why",
          Array.from({ length: 101 }, (_, i) => `a${i}`),
        ),
        400,
        "invalid_request",
      );
      await rejectsWith(admin.flags.explain(projectId, "missing", []), 404, "flag_not_found");
    });

    test("ETags: getWithETag, updateWithETag and ifMatch; a stale tag is 412 precondition_failed and changes nothing", async () => {
      const projectId = await createProject(server);
      await admin.flags.create(projectId, "guarded");
      const read = await admin.flags.getWithETag(projectId, "guarded");
      assert.equal(read.value.name, "guarded");
      assert.match(read.etag, /^"flg_[^"]+\.\d+"$/);
      // Two writers read the same version; the first one's write moves the tag, the second one's is refused.
      const first = await admin.flags.updateWithETag(
        projectId,
        "guarded",
        { status: "enabled" },
        { ifMatch: read.etag },
      );
      assert.equal(first.value.status, "enabled");
      assert.notEqual(first.etag, read.etag);
      const stale = await rejectsWith(
        admin.flags.update(projectId, "guarded", { status: "disabled" }, { ifMatch: read.etag }),
        412,
        "precondition_failed",
      );
      assert.match(stale.detail, /changed/);
      assert.equal((await admin.flags.get(projectId, "guarded")).status, "enabled", "nothing applied");
      await rejectsWith(admin.flags.delete(projectId, "guarded", { ifMatch: read.etag }), 412, "precondition_failed");
      // A no-op keeps the tag; update (plain) with the current tag applies.
      assert.equal(
        (await admin.flags.updateWithETag(projectId, "guarded", {}, { ifMatch: first.etag })).etag,
        first.etag,
      );
      const plain = await admin.flags.update(projectId, "guarded", { description: "x" }, { ifMatch: first.etag });
      assert.equal(plain.description, "x");
      const current = await admin.flags.getWithETag(projectId, "guarded");
      await admin.flags.delete(projectId, "guarded", { ifMatch: current.etag });
      await rejectsWith(admin.flags.get(projectId, "guarded"), 404, "flag_not_found");
      // Without ifMatch, writes apply as before.
      await admin.flags.create(projectId, "guarded");
      await rejectsWith(
        admin.flags.update(projectId, "guarded", {}, { ifMatch: current.etag }),
        412,
        "precondition_failed",
      );
      assert.equal((await admin.flags.update(projectId, "guarded", { status: "enabled" })).status, "enabled");

      const segment = await admin.segments.create(projectId, { name: "Guarded" });
      const seg = await admin.segments.getWithETag(projectId, segment.id);
      assert.match(seg.etag, /^"seg_[^"]+\.\d+"$/);
      const grown = await admin.segments.updateWithETag(
        projectId,
        segment.id,
        { addActors: ["a"] },
        { ifMatch: seg.etag },
      );
      assert.equal(grown.value.actorsCount, 1);
      await rejectsWith(
        admin.segments.update(projectId, segment.id, { name: "Other" }, { ifMatch: seg.etag }),
        412,
        "precondition_failed",
      );
      assert.equal((await admin.segments.get(projectId, segment.id)).name, "Guarded");
      await rejectsWith(
        admin.segments.delete(projectId, segment.id, { ifMatch: seg.etag }),
        412,
        "precondition_failed",
      );
      await admin.segments.delete(projectId, segment.id, { ifMatch: grown.etag });
      await rejectsWith(admin.segments.get(projectId, segment.id), 404, "segment_not_found");
    });

    test("actors: put creates then replaces the profile, get reads it; ids with special characters", async () => {
      const projectId = await createProject(server);
      await rejectsWith(admin.actors.get(projectId, "alice"), 404, "actor_not_found");
      const alice = await admin.actors.put(projectId, "alice", {
        name: "Alice",
        imageURL: "https://example.com/alice.png",
      });
      assert.deepEqual(
        { ...alice, createdAt: "" },
        { actorId: "alice", name: "Alice", imageURL: "https://example.com/alice.png", createdAt: "" },
      );
      const replaced = await admin.actors.put(projectId, "alice", { name: "Alice L." });
      assert.equal(replaced.imageURL, null, "a PUT replaces the whole profile");
      assert.equal(replaced.createdAt, alice.createdAt);
      const cleared = await admin.actors.put(projectId, "alice");
      assert.equal(cleared.name, null);
      assert.deepEqual(await admin.actors.get(projectId, "alice"), cleared);

      for (const id of SPECIAL_IDS) {
        const actor = await admin.actors.put(projectId, id, { name: `name of ${id}` });
        assert.equal(actor.actorId, id);
        assert.equal((await admin.actors.get(projectId, id)).name, `name of ${id}`);
      }
    });

    test("events: the history lists newest first, filtered by type, prefix and flag", async () => {
      const projectId = await createProject(server);
      await admin.flags.create(projectId, "audited");
      await admin.flags.update(projectId, "audited", { status: "enabled" });
      await admin.segments.create(projectId, { name: "s" });
      const all = await admin.events.list(projectId, { limit: 2 }).toArray();
      assert.deepEqual(
        all.map((e) => e.type),
        ["segment.created", "flag.updated", "flag.created", "project.created"],
      );
      const actor = all[0]!.actor;
      assert.ok("keyName" in actor && actor.keyName === "ADMIN_API_KEY");
      const flagsOnly = await admin.events.list(projectId, { type: "flag." }).toArray();
      assert.deepEqual(
        flagsOnly.map((e) => e.type),
        ["flag.updated", "flag.created"],
      );
      const two = await admin.events.list(projectId, { type: ["flag.created", "segment.created"] }).toArray();
      assert.equal(two.length, 2);
      const ofFlag = await admin.events.listForFlag(projectId, "audited", { type: "flag.updated" }).toArray();
      assert.deepEqual(ofFlag[0]!.after?.status, "enabled");
      await rejectsWith(admin.events.list(projectId, { type: "flag.renamed" }).page(), 400, "invalid_request");
    });

    test("webhooks: create, receive a flag change, list deliveries", async () => {
      const projectId = await createProject(server);
      const receiver = await WebhookReceiver.start();
      const created = await admin.webhooks.create(projectId, {
        url: `${receiver.url}/sdk`,
        events: ["flag.*"],
        description: "Deploy notifier",
      });
      assert.match(created.id, /^wh_/);
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(created.projectId, projectId);
      assert.equal(created.url, `${receiver.url}/sdk`);
      assert.deepEqual(created.events, ["flag.*"]);
      assert.equal(created.description, "Deploy notifier");
      assert.equal(created.enabled, true);
      assert.equal(created.disabledReason, null);
      assert.equal(created.updatedAt, created.createdAt);

      await admin.flags.create(projectId, "hooked");
      await admin.flags.update(projectId, "hooked", { status: "enabled" });
      await admin.segments.create(projectId, { name: "not subscribed" });
      const received = await waitFor("two flag events at the receiver", () => receiver.at("/sdk"), {
        until: (r) => r.length >= 2,
      });
      // Deliveries are not ordered: receivers order by event id.
      const payloads = received.map((r) => JSON.parse(r.body) as WebhookPayload).sort((a, b) => (a.id < b.id ? -1 : 1));
      assert.deepEqual(
        payloads.map((p) => p.type),
        ["flag.created", "flag.updated"],
      );
      for (const delivery of received) {
        const payload = JSON.parse(delivery.body) as WebhookPayload;
        assert.equal(delivery.headers["webhook-id"], payload.id, "webhook-id is the event id");
        assert.match(String(delivery.headers["webhook-timestamp"]), /^\d+$/);
        assert.ok(signedWith(created.secret, delivery), "signed with the secret the create call answered");
        assert.match(String(delivery.headers["content-type"]), /^application\/json/);
      }
      // The body is the event as the history shows it.
      const history = await admin.events.list(projectId, { type: "flag." }).toArray();
      assert.deepEqual([...history].reverse(), payloads);

      const deliveries = await waitFor(
        "both deliveries recorded as succeeded",
        () => admin.webhooks.deliveries(projectId, created.id).toArray(),
        { until: (list) => list.length === 2 && list.every((d) => d.status === "succeeded") },
      );
      assert.deepEqual(
        deliveries.map((d) => [d.eventType, d.eventId]),
        [...payloads].reverse().map((p) => [p.type, p.id]),
        "newest first",
      );
      for (const delivery of deliveries) {
        assert.match(delivery.id, /^dlv_/);
        assert.equal(delivery.webhookId, created.id);
        assert.equal(delivery.attempts, 1);
        assert.equal(delivery.lastStatusCode, 200);
        assert.equal(delivery.lastError, null);
        assert.equal(delivery.nextAttemptAt, null);
        assert.equal(typeof delivery.lastDurationMs, "number");
        assert.equal(typeof delivery.finishedAt, "string");
      }
      const paged = await admin.webhooks.deliveries(projectId, created.id, { limit: 1 }).toArray();
      assert.deepEqual(paged, deliveries, "the same list across pages of 1");
      assert.equal(
        (await admin.webhooks.deliveries(projectId, created.id, { status: "succeeded" }).toArray()).length,
        2,
      );
      assert.deepEqual(await admin.webhooks.deliveries(projectId, created.id, { status: "failed" }).toArray(), []);
      assert.deepEqual(await admin.webhooks.deliveries(projectId, created.id, { status: "pending" }).toArray(), []);
    });

    test("webhooks: get, list, update, test (ping), delete", async () => {
      const projectId = await createProject(server);
      const receiver = await WebhookReceiver.start();
      const { secret: _firstSecret, ...first } = await admin.webhooks.create(projectId, {
        url: `${receiver.url}/first`,
      });
      assert.deepEqual(first.events, ["*"], "every event by default");
      assert.equal(first.description, "");
      const { secret: _secondSecret, ...second } = await admin.webhooks.create(projectId, {
        url: `${receiver.url}/second`,
        events: ["segment.updated", "webhook.*"],
        enabled: false,
      });
      assert.equal(second.enabled, false);
      // The backlog is live (the webhook.created events are being delivered meanwhile): compared apart.
      const settled = <T extends { backlog?: unknown }>({ backlog: _backlog, ...rest }: T) => rest;
      const got = await admin.webhooks.get(projectId, first.id);
      assert.deepEqual(settled(got), settled(first));
      assert.equal(typeof got.backlog?.pending, "number");

      const listed = await admin.webhooks.list(projectId, { limit: 1 }).toArray();
      assert.deepEqual(listed.map(settled), [first, second].map(settled), "oldest first, across pages");
      assert.ok(
        listed.every((w) => !("secret" in w)),
        "lists never include the secret",
      );

      const described = await admin.webhooks.update(projectId, first.id, { description: "Audit log" });
      assert.equal(described.description, "Audit log");
      assert.deepEqual(described.events, ["*"]);
      const unchanged = await admin.webhooks.update(projectId, first.id, {});
      assert.equal(unchanged.updatedAt, described.updatedAt);
      const narrowed = await admin.webhooks.update(projectId, first.id, { events: ["flag.created", "segment.*"] });
      assert.deepEqual(narrowed.events, ["flag.created", "segment.*"]);
      assert.equal(narrowed.description, "Audit log");

      // A ping goes to a disabled webhook too, and is tried once.
      const ping = await admin.webhooks.test(projectId, second.id);
      assert.match(ping.id, /^dlv_/);
      assert.equal(ping.eventType, "ping");
      assert.equal(ping.status, "pending");
      assert.equal(ping.attempts, 0);
      const [pinged] = await waitFor("the ping at the receiver", () => receiver.at("/second"), {
        until: (r) => r.length === 1,
      });
      const payload = JSON.parse(pinged!.body) as WebhookPayload;
      assert.equal(payload.type, "ping");
      assert.equal(payload.id, ping.eventId);
      assert.deepEqual([payload.before, payload.after], [null, null]);
      assert.deepEqual(payload.target, { kind: "webhook", id: second.id, name: second.url });
      const opened = await admin.webhooks.delivery(projectId, second.id, ping.id);
      assert.deepEqual(opened.payload, payload, "the delivery's payload is the body the receiver got");
      await rejectsWith(admin.webhooks.delivery(projectId, second.id, "dlv_nope"), 404, "delivery_not_found");
      await waitFor("the ping recorded as succeeded", () => admin.webhooks.deliveries(projectId, second.id).toArray(), {
        until: (list) => list.length === 1 && list[0]!.status === "succeeded",
      });

      receiver.answer = (request) => ({ status: request.path === "/first" ? 500 : 200 });
      const failing = await admin.webhooks.test(projectId, first.id);
      const [failed] = await waitFor(
        "the failed ping recorded",
        () => admin.webhooks.deliveries(projectId, first.id, { status: "failed" }).toArray(),
        { until: (list) => list.some((d) => d.id === failing.id) },
      );
      assert.equal(failed!.attempts, 1, "a ping is not retried");
      assert.equal(failed!.lastStatusCode, 500);
      assert.equal(failed!.lastError, "HTTP 500");
      assert.equal(failed!.nextAttemptAt, null);
      assert.equal((await admin.webhooks.get(projectId, first.id)).enabled, true, "a failed ping disables nothing");

      const enabled = await admin.webhooks.update(projectId, second.id, { enabled: true });
      assert.equal(enabled.enabled, true);
      assert.equal(enabled.disabledReason, null);

      assert.equal(await admin.webhooks.delete(projectId, second.id), undefined);
      await rejectsWith(admin.webhooks.get(projectId, second.id), 404, "webhook_not_found");
      await rejectsWith(admin.webhooks.delete(projectId, second.id), 404, "webhook_not_found");
      await rejectsWith(admin.webhooks.deliveries(projectId, second.id).page(), 404, "webhook_not_found");
      await rejectsWith(admin.webhooks.test(projectId, second.id), 404, "webhook_not_found");
      await rejectsWith(admin.webhooks.update(projectId, second.id, { enabled: true }), 404, "webhook_not_found");
      assert.deepEqual(
        (await admin.webhooks.list(projectId).toArray()).map((w) => w.id),
        [first.id],
      );
    });

    test("webhooks: errors map to FlagstaffError (404, 403, 400)", async () => {
      const projectId = await createProject(server);
      const hook = await admin.webhooks.create(projectId, { url: "http://127.0.0.1:9/never" });
      await rejectsWith(admin.webhooks.get(projectId, "wh_nope"), 404, "webhook_not_found");
      await rejectsWith(admin.webhooks.list("no-such-project").page(), 404, "project_not_found");
      await rejectsWith(admin.webhooks.get("no-such-project", hook.id), 404, "project_not_found");
      await rejectsWith(
        admin.webhooks.create("no-such-project", { url: "http://127.0.0.1:9/" }),
        404,
        "project_not_found",
      );

      // Webhooks are the admin's: a write key of the project may not even list them.
      const write = await createKey(server, projectId, "write");
      const writer = client(write.key);
      await rejectsWith(writer.webhooks.list(projectId).page(), 403, "forbidden");
      await rejectsWith(writer.webhooks.get(projectId, hook.id), 403, "forbidden");
      await rejectsWith(writer.webhooks.create(projectId, { url: "http://127.0.0.1:9/" }), 403, "forbidden");
      await rejectsWith(writer.webhooks.update(projectId, hook.id, { enabled: false }), 403, "forbidden");
      await rejectsWith(writer.webhooks.deliveries(projectId, hook.id).page(), 403, "forbidden");
      await rejectsWith(writer.webhooks.test(projectId, hook.id), 403, "forbidden");
      await rejectsWith(writer.webhooks.delete(projectId, hook.id), 403, "forbidden");

      const scheme = await rejectsWith(
        admin.webhooks.create(projectId, { url: "ftp://example.com/hook" }),
        400,
        "invalid_request",
      );
      assert.equal(scheme.errors[0]?.path, "/url");
      assert.match(scheme.errors[0]?.message ?? "", /http or https/);
      const pattern = await rejectsWith(
        admin.webhooks.update(projectId, hook.id, { events: ["flag.renamed" as never] }),
        400,
        "invalid_request",
      );
      assert.match(pattern.errors[0]?.path ?? "", /^\/events/);
      await rejectsWith(
        admin.webhooks.deliveries(projectId, hook.id, { status: "lost" as never }).page(),
        400,
        "invalid_request",
      );
      await rejectsWith(admin.webhooks.get(projectId, ".."), 0, "invalid_argument");
    });

    test("errors carry status, code, detail, problem and field errors", async () => {
      const projectId = await createProject(server);
      await admin.flags.create(projectId, "taken");

      const invalid = await rejectsWith(
        admin.flags.update(projectId, "taken", { percentageActors: 30 as never }),
        400,
        "invalid_request",
      );
      assert.deepEqual(invalid.errors, [
        { path: "/percentageActors", message: "must be one of 0, 1, 2, 5, 10, 25, 50, 75, 100" },
      ]);
      assert.equal(invalid.problem?.type, "urn:flagstaff:problem:invalid_request");
      assert.equal(invalid.problem?.status, 400);
      assert.equal(invalid.problem?.title, "Invalid request");
      assert.equal(invalid.detail, invalid.problem?.detail);
      assert.equal(invalid.method, "PATCH");
      assert.ok(invalid instanceof Error);
      assert.equal(invalid.name, "FlagstaffError");
      assert.match(invalid.message, /^400 invalid_request: /);

      const badName = await rejectsWith(admin.flags.create(projectId, "-bad name"), 400, "invalid_request");
      assert.equal(badName.errors[0]?.path, "/params/flagName");
      const badLimit = await rejectsWith(admin.flags.list(projectId).page({ limit: 101 }), 400, "invalid_request");
      assert.equal(badLimit.errors[0]?.path, "/query/limit");

      const unauthorized = await rejectsWith(
        client("fsk_not-a-real-key").flags.get(projectId, "taken"),
        401,
        "unauthorized",
      );
      assert.equal(unauthorized.problem?.code, "unauthorized");
      assert.deepEqual(unauthorized.errors, []);
      await rejectsWith(new FlagstaffClient({ baseUrl: server.url }).projects.get(projectId), 401, "unauthorized");

      const read = await createKey(server, projectId, "read");
      await rejectsWith(client(read.key).flags.update(projectId, "taken", { description: "x" }), 403, "forbidden");
      await rejectsWith(client(read.key).projects.list().page(), 403, "forbidden");
      await rejectsWith(client(read.key).flags.get("another-project", "taken"), 403, "forbidden");

      await rejectsWith(admin.flags.get(projectId, "nope"), 404, "flag_not_found");
      await rejectsWith(admin.flags.check(projectId, "nope"), 404, "flag_not_found");
      await rejectsWith(admin.projects.get("no-such-project"), 404, "project_not_found");
      await rejectsWith(admin.segments.get(projectId, "seg_nope"), 404, "segment_not_found");
      await rejectsWith(
        admin.flags.update(projectId, "taken", { addSegments: ["seg_nope"] }),
        404,
        "segment_not_found",
      );

      const exists = await rejectsWith(admin.flags.create(projectId, "taken"), 409, "flag_exists");
      assert.equal(exists.problem?.title, "Flag already exists");
      await rejectsWith(admin.projects.create({ id: projectId, name: "again" }), 409, "project_exists");
      await admin.segments.create(projectId, { name: "Dup" });
      await rejectsWith(admin.segments.create(projectId, { name: "Dup" }), 409, "segment_exists");

      // Path parameters no URL can carry are refused before anything is sent.
      const counter = countingFetch();
      const counted = client(ADMIN_KEY, { fetch: counter.fetch });
      await rejectsWith(counted.flags.get(projectId, ""), 0, "invalid_argument");
      await rejectsWith(counted.actors.get(projectId, ".."), 0, "invalid_argument");
      await rejectsWith(counted.actors.get(projectId, "."), 0, "invalid_argument");
      await rejectsWith(counted.flags.listForActor(projectId, "..").page(), 0, "invalid_argument");
      assert.equal(counter.urls.length, 0);
    });

    test("async iteration visits 45 flags across pages of 10, each once and in order", async () => {
      const projectId = await createProject(server);
      const expected = Array.from({ length: 45 }, (_, i) => `flag-${String(i).padStart(2, "0")}`);
      for (const name of [...expected].reverse()) await admin.flags.create(projectId, name, { description: name });

      const counter = countingFetch();
      const counted = client(ADMIN_KEY, { fetch: counter.fetch });
      const seen: string[] = [];
      for await (const flag of counted.flags.list(projectId, { limit: 10 })) seen.push(flag.name);
      assert.deepEqual(seen, expected);
      assert.equal(counter.urls.length, 5, "five pages of 10, 10, 10, 10 and 5");
      assert.ok(counter.urls.every((url) => url.includes("limit=10")));

      // Search is kept on every page.
      const searched: string[] = [];
      for await (const flag of counted.flags.list(projectId, { q: "FLAG-1", limit: 3 })) searched.push(flag.name);
      assert.deepEqual(
        searched,
        expected.filter((name) => name.startsWith("flag-1")),
      );

      // Breaking out early stops fetching.
      const before = counter.urls.length;
      for await (const flag of counted.flags.list(projectId, { limit: 10 })) {
        assert.equal(flag.name, "flag-00");
        break;
      }
      assert.equal(counter.urls.length, before + 1);

      const pages: number[] = [];
      for await (const page of counted.flags.list(projectId, { limit: 20 }).pages()) pages.push(page.data.length);
      assert.deepEqual(pages, [20, 20, 5]);
    });

    test(".page() answers one page with cursors that walk both ways", async () => {
      const projectId = await createProject(server);
      const expected = Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, "0")}`);
      for (const name of expected) await admin.flags.create(projectId, name);
      const list = admin.flags.list(projectId, { limit: 10 });

      const first = await list.page();
      assert.deepEqual(
        first.data.map((f) => f.name),
        expected.slice(0, 10),
      );
      assert.equal(first.pagination.before, null);
      assert.ok(first.pagination.after);

      const second = await list.page({ after: first.pagination.after });
      assert.deepEqual(
        second.data.map((f) => f.name),
        expected.slice(10, 20),
      );
      assert.ok(second.pagination.before);

      const third = await list.page({ after: second.pagination.after!, limit: 10 });
      assert.deepEqual(
        third.data.map((f) => f.name),
        expected.slice(20),
      );
      assert.equal(third.pagination.after, null);

      const back = await list.page({ before: second.pagination.before! });
      assert.deepEqual(back, first);

      const small = await list.page({ limit: 3 });
      assert.equal(small.data.length, 3, "the page's own limit wins over the list's");

      await rejectsWith(list.page({ after: "not-a-cursor" }), 400, "invalid_request");
      await rejectsWith(
        list.page({ after: first.pagination.after!, before: first.pagination.after! }),
        400,
        "invalid_request",
      );
    });

    test("check: actorIds sent repeated; attached actors on, others off; special characters", async () => {
      const projectId = await createProject(server);
      await admin.flags.create(projectId, "beta");
      await admin.flags.update(projectId, "beta", { status: "conditional", addActors: ["alice", ...SPECIAL_IDS] });
      const check = (await createKey(server, projectId, "check")).key;
      const checker = client(check);

      assert.equal(await checker.flags.check(projectId, "beta"), false, "without actors only the call rollout");
      assert.equal(await checker.flags.check(projectId, "beta", { actorIds: [] }), false);
      assert.equal(await checker.flags.check(projectId, "beta", { actorIds: ["alice"] }), true);
      assert.equal(await checker.flags.check(projectId, "beta", { actorIds: ["bob"] }), false);
      assert.equal(await checker.flags.check(projectId, "beta", { actorIds: ["bob", "alice"] }), true);
      assert.equal(await checker.flags.check(projectId, "beta", { actorIds: ["alice,bob"] }), false);
      for (const id of SPECIAL_IDS) {
        assert.equal(await checker.flags.check(projectId, "beta", { actorIds: [id] }), true, `attached ${id}`);
        assert.equal(await checker.flags.check(projectId, "beta", { actorIds: [`${id}x`] }), false, `other ${id}`);
      }
      assert.equal(await checker.flags.check(projectId, "beta", { actorIds: ["team/a"] }), false);
      assert.equal(await checker.flags.check(projectId, "beta", { actorIds: ["bob"], cache: 30.5 }), false);

      // The same ids work in the paths of the actor lists.
      for (const id of SPECIAL_IDS) {
        assert.deepEqual(
          (await admin.flags.listForActor(projectId, id).toArray()).map((f) => f.name),
          ["beta"],
          `flags for ${id}`,
        );
      }

      await admin.flags.update(projectId, "beta", { status: "enabled" });
      assert.equal(await checker.flags.check(projectId, "beta"), true);
      const invalid = await rejectsWith(
        checker.flags.check(projectId, "beta", { cache: 86401 }),
        400,
        "invalid_request",
      );
      assert.equal(invalid.errors[0]?.path, "/query/cache");
      await rejectsWith(checker.flags.check(projectId, "beta", { actorIds: [""] }), 400, "invalid_request");
      await rejectsWith(checker.flags.get(projectId, "beta"), 403, "forbidden");
    });

    test("check cache: answers with cache=N are reused for N seconds, others are not cached", async () => {
      const projectId = await createProject(server);
      await admin.flags.create(projectId, "cached");
      await admin.flags.update(projectId, "cached", { status: "conditional", addActors: ["alice"] });
      const counter = countingFetch();
      const cached = client(ADMIN_KEY, { fetch: counter.fetch, checkCache: true });

      assert.equal(await cached.flags.check(projectId, "cached", { actorIds: ["bob", "alice"], cache: 60 }), true);
      assert.equal(counter.urls.length, 1);
      assert.match(counter.urls[0]!, /\/check\?actorIds=bob&actorIds=alice&cache=60$/);
      assert.equal(await cached.flags.check(projectId, "cached", { actorIds: ["alice", "bob"], cache: 60 }), true);
      assert.equal(counter.urls.length, 1, "the same check again, actor ids in another order: no request");
      assert.equal(
        await cached.flags.check(projectId, "cached", { actorIds: ["alice", "bob", "alice"], cache: 60 }),
        true,
      );
      assert.equal(counter.urls.length, 1, "duplicates do not change the key");

      await cached.flags.check(projectId, "cached", { actorIds: ["alice"], cache: 60 });
      assert.equal(counter.urls.length, 2, "other actors: another entry");
      await cached.flags.check(projectId, "cached", { actorIds: ["bob", "alice"] });
      await cached.flags.check(projectId, "cached", { actorIds: ["bob", "alice"] });
      assert.equal(counter.urls.length, 4, "without cache every check is sent");
      await cached.flags.check(projectId, "cached", { actorIds: ["carol"], cache: 0 });
      await cached.flags.check(projectId, "cached", { actorIds: ["carol"], cache: 0 });
      assert.equal(counter.urls.length, 6, "cache=0 keeps nothing");

      // A change on the server is not seen while the answer is cached, and is once the cache is cleared.
      await admin.flags.update(projectId, "cached", { status: "disabled" });
      assert.equal(await cached.flags.check(projectId, "cached", { actorIds: ["alice", "bob"], cache: 60 }), true);
      assert.equal(counter.urls.length, 6);
      cached.clearCheckCache();
      assert.equal(await cached.flags.check(projectId, "cached", { actorIds: ["alice", "bob"], cache: 60 }), false);
      assert.equal(counter.urls.length, 7);

      // An expired entry is fetched again: on a clock the test moves, so no second has to pass.
      const clock = new ManualClock();
      const timed = client(ADMIN_KEY, { fetch: counter.fetch, checkCache: true, now: () => clock.now() });
      await timed.flags.check(projectId, "cached", { cache: 1 });
      await timed.flags.check(projectId, "cached", { cache: 1 });
      assert.equal(counter.urls.length, 8);
      clock.advance(999);
      await timed.flags.check(projectId, "cached", { cache: 1 });
      assert.equal(counter.urls.length, 8, "still fresh after 999 ms");
      clock.advance(1);
      await timed.flags.check(projectId, "cached", { cache: 1 });
      assert.equal(counter.urls.length, 9, "expired after 1 s");

      // Without checkCache, cache=N is only passed on to the server.
      const plain = countingFetch();
      const uncached = client(ADMIN_KEY, { fetch: plain.fetch });
      await uncached.flags.check(projectId, "cached", { cache: 60 });
      await uncached.flags.check(projectId, "cached", { cache: 60 });
      assert.equal(plain.urls.length, 2);
    });
  });
}
