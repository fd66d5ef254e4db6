// Change requests (issue 35; docs/change-requests.md): an environment's approval policy and the gate on
// direct changes, the requests' life (open, reviewed, changed, applied, rejected, overridden, cancelled,
// in conflict, failed), who may do what (people with write or admin, never a service key; the author only
// where self-approval is allowed; admins only on a protected environment), the history and the webhook of
// an override, the list's filters and pages, and the errors. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ApiResponse,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
  waitFor,
  WebhookReceiver,
} from "@flagstaff/test-harness";
import { addEnvironment } from "./helpers/environments.js";
import { asKey, asSession, createPerson, grant, personalKey, signIn } from "./helpers/people.js";

const crs = (p: string) => `/projects/${p}/change-requests`;

interface Team {
  readonly project: string;
  /** Session cookies of people with write on the project. */
  readonly alice: string;
  readonly bob: string;
  readonly aliceId: string;
  readonly bobId: string;
  /** A project admin's session. */
  readonly carol: string;
  /** A person with read only. */
  readonly dave: string;
}

async function team(server: TestServer): Promise<Team> {
  const project = await createProject(server);
  const people = await Promise.all(["alice", "bob", "carol", "dave"].map((name) => createPerson(server, { name })));
  const [alice, bob, carol, dave] = people as [
    (typeof people)[0],
    (typeof people)[0],
    (typeof people)[0],
    (typeof people)[0],
  ];
  await grant(server, project, alice.id, "write");
  await grant(server, project, bob.id, "write");
  await grant(server, project, carol.id, "admin");
  await grant(server, project, dave.id, "read");
  const [a, b, c, d] = await Promise.all(people.map((p) => signIn(server, p.email)));
  return { project, alice: a!, bob: b!, carol: c!, dave: d!, aliceId: alice.id, bobId: bob.id };
}

async function requireApprovals(server: TestServer, project: string, environment: string, n: number, self = false) {
  const res = await server.request("PATCH", `/projects/${project}/environments/${environment}`, {
    body: { requiredApprovals: n, allowSelfApproval: self },
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function flag(server: TestServer, project: string, name: string) {
  const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body: {} });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function open(server: TestServer, cookie: string, project: string, body: unknown): Promise<any> {
  const res = await server.request("POST", crs(project), asSession(cookie, { body }));
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const review = (server: TestServer, cookie: string, project: string, id: string, decision: string, comment?: string) =>
  server.request(
    "POST",
    `${crs(project)}/${id}/reviews`,
    asSession(cookie, { body: { decision, ...(comment === undefined ? {} : { comment }) } }),
  );

const apply = (server: TestServer, cookie: string | null, project: string, id: string, body?: unknown) =>
  server.request(
    "POST",
    `${crs(project)}/${id}/apply`,
    cookie === null ? { body: body ?? {} } : asSession(cookie, { body: body ?? {} }),
  );

async function history(server: TestServer, project: string): Promise<any[]> {
  const res = await server.request("GET", `/projects/${project}/events?limit=100`);
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

const statusIn = async (server: TestServer, project: string, name: string, environment = "production") =>
  (await server.request("GET", `/projects/${project}/flags/${name}?environment=${environment}`)).body.status;

function expectInvalid(res: ApiResponse, path: string): void {
  expectProblem(res, 400, "invalid_request");
  const paths = ((res.body.errors ?? []) as { path: string }[]).map((e) => e.path);
  assert.ok(
    paths.some((p) => p.startsWith(path)),
    `expected an error at ${path}, got ${res.text}`,
  );
}

for (const dialect of DIALECTS) {
  describe(`change requests [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startServer({ dialect });
    });
    after(() => server.close());

    test("an environment's policy: 0 to 5 approvals, self-approval, in its answer and its history", async () => {
      const project = await createProject(server);
      const env = await requireApprovals(server, project, "production", 2, true);
      assert.equal(env.requiredApprovals, 2);
      assert.equal(env.allowSelfApproval, true);
      const got = await server.request("GET", `/projects/${project}/environments/production`);
      assert.equal(got.body.requiredApprovals, 2);
      for (const bad of [-1, 6, 1.5, "2"]) {
        const res = await server.request("PATCH", `/projects/${project}/environments/production`, {
          body: { requiredApprovals: bad },
        });
        expectInvalid(res, "/requiredApprovals");
      }
      const created = await server.request("POST", `/projects/${project}/environments`, {
        body: { id: "staging", name: "Staging", requiredApprovals: 1 },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.requiredApprovals, 1);
      assert.equal(created.body.allowSelfApproval, false);
      const updated = (await history(server, project)).find((e) => e.type === "environment.updated");
      assert.equal(updated.after.requiredApprovals, 2);
      assert.equal(updated.before.requiredApprovals, 0);
      // A write key may not set the policy (environments are the project admins').
      const { key } = await createKey(server, project, "write");
      const refused = await server.request("PATCH", `/projects/${project}/environments/production`, {
        key,
        body: { requiredApprovals: 0 },
      });
      expectProblem(refused, 403, "forbidden");
    });

    test("where approvals are required, a direct change to a configuration is refused, for admins too; elsewhere not", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "staging");
      await flag(server, project, "f");
      const staging = await server.request("PATCH", `/projects/${project}/flags/f?environment=staging`, {
        body: { status: "enabled" },
      });
      assert.equal(staging.status, 200, staging.text);
      await requireApprovals(server, project, "production", 1);
      const direct = await server.request("PATCH", `/projects/${project}/flags/f?environment=production`, {
        body: { status: "enabled" },
      });
      expectProblem(direct, 409, "approval_required");
      assert.match(direct.body.detail, /change-requests/);
      const copy = await server.request("POST", `/projects/${project}/flags/f/copy`, {
        body: { from: "staging", to: "production" },
      });
      expectProblem(copy, 409, "approval_required");
      assert.equal(await statusIn(server, project, "f"), "disabled");
      // The definition is every environment's, not this one's configuration: it changes as before.
      const described = await server.request("PATCH", `/projects/${project}/flags/f?environment=production`, {
        body: { description: "what it does" },
      });
      assert.equal(described.status, 200, described.text);
      const again = await server.request("PATCH", `/projects/${project}/flags/f?environment=staging`, {
        body: { percentageCalls: 5 },
      });
      assert.equal(again.status, 200, again.text);
    });

    test("open → approved → applied: one write, the flag events linked to the request, the people named", async () => {
      const t = await team(server);
      await flag(server, t.project, "checkout");
      await flag(server, t.project, "banner");
      await requireApprovals(server, t.project, "production", 1);
      const created = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Launch checkout",
        description: "Turns the new checkout on for a quarter of actors",
        changes: [
          { flag: "checkout", patch: { status: "conditional", percentageActors: 25 } },
          { flag: "banner", patch: { status: "enabled" } },
        ],
      });
      assert.equal(created.state, "open");
      assert.equal(created.requiredApprovals, 1);
      assert.equal(created.approvals, 0);
      assert.equal(created.author.id, t.aliceId);
      assert.equal(created.author.type, "user");
      assert.match(created.id, /^cr_/);
      const diff = created.changes[0].diff;
      assert.deepEqual(
        diff.map((d: any) => [d.field, d.current, d.proposed]),
        [
          ["status", "disabled", "conditional"],
          ["percentageActors", 0, 25],
        ],
      );
      assert.equal(created.changes[0].stale, false);

      // Not approved yet: applying is refused, and nothing changes.
      expectProblem(await apply(server, t.alice, t.project, created.id), 409, "approval_required");
      assert.equal(await statusIn(server, t.project, "checkout"), "disabled");

      const approved = await review(server, t.bob, t.project, created.id, "approve", "Looks right");
      assert.equal(approved.status, 200, approved.text);
      assert.equal(approved.body.state, "approved");
      assert.equal(approved.body.approvals, 1);
      assert.deepEqual(
        approved.body.reviews.map((r: any) => [r.reviewer.id, r.decision, r.comment, r.counts]),
        [[t.bobId, "approve", "Looks right", true]],
      );

      const applied = await apply(server, t.alice, t.project, created.id);
      assert.equal(applied.status, 200, applied.text);
      assert.equal(applied.body.state, "applied");
      assert.equal(applied.body.appliedBy.id, t.aliceId);
      assert.ok(applied.body.appliedAt);
      assert.equal(await statusIn(server, t.project, "checkout"), "conditional");
      assert.equal(await statusIn(server, t.project, "banner"), "enabled");

      const events = await history(server, t.project);
      const ofRequest = events.filter((e) => e.changeRequest === created.id);
      assert.deepEqual(ofRequest.map((e) => e.type).sort(), [
        "change_request.applied",
        "change_request.reviewed",
        "flag.updated",
        "flag.updated",
      ]);
      const flagEvents = ofRequest.filter((e) => e.type === "flag.updated");
      assert.deepEqual(new Set(flagEvents.map((e) => e.target.name)), new Set(["checkout", "banner"]));
      // One write: the flag events and the request's applied event share one time and one request.
      assert.equal(
        new Set(ofRequest.filter((e) => e.type !== "change_request.reviewed").map((e) => e.requestId)).size,
        1,
      );
      const reviewed = ofRequest.find((e) => e.type === "change_request.reviewed");
      assert.equal(reviewed.actor.id, t.bobId);
      assert.deepEqual(reviewed.after.review, { decision: "approve", comment: "Looks right" });
      const createdEvent = events.find((e) => e.type === "change_request.created" && e.target.id === created.id);
      assert.equal(createdEvent.environment, "production");
      assert.equal(createdEvent.actor.id, t.aliceId);

      // Applied is final.
      expectProblem(await apply(server, t.alice, t.project, created.id), 409, "change_request_state");
      expectProblem(await review(server, t.bob, t.project, created.id, "approve"), 409, "change_request_state");
    });

    test("who may approve: a person with write, not a service key, not the author unless allowed, admins only where protected", async () => {
      const t = await team(server);
      await flag(server, t.project, "f");
      await requireApprovals(server, t.project, "production", 1);
      const request = await open(server, t.alice, t.project, {
        environment: "production",
        title: "On",
        changes: [{ flag: "f", patch: { status: "enabled" } }],
      });
      const path = `${crs(t.project)}/${request.id}/reviews`;
      const { key } = await createKey(server, t.project, "write");
      expectProblem(await server.request("POST", path, { key, body: { decision: "approve" } }), 403, "forbidden");
      expectProblem(await server.request("POST", path, { body: { decision: "approve" } }), 403, "forbidden");
      expectProblem(await review(server, t.alice, t.project, request.id, "approve"), 403, "forbidden");
      expectProblem(await review(server, t.dave, t.project, request.id, "approve"), 403, "forbidden");
      expectInvalid(await review(server, t.bob, t.project, request.id, "maybe"), "/decision");
      // A person's personal key is the person.
      const bobsKey = await personalKey(server, t.bob, { project: t.project, role: "write" });
      const byKey = await server.request("POST", path, asKey(bobsKey.key, { body: { decision: "approve" } }));
      assert.equal(byKey.status, 200, byKey.text);
      assert.equal(byKey.body.state, "approved");

      // Self-approval where the environment allows it.
      await requireApprovals(server, t.project, "production", 1, true);
      const own = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Off",
        changes: [{ flag: "f", patch: { percentageCalls: 10 } }],
      });
      const self = await review(server, t.alice, t.project, own.id, "approve");
      assert.equal(self.status, 200, self.text);
      assert.equal(self.body.state, "approved");

      // A protected environment: only the project's admins' approvals.
      const protectedEnv = await server.request("PATCH", `/projects/${t.project}/environments/production`, {
        body: { protected: true, allowSelfApproval: false },
      });
      assert.equal(protectedEnv.status, 200, protectedEnv.text);
      const guarded = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Guarded",
        changes: [{ flag: "f", patch: { percentageCalls: 25 } }],
      });
      expectProblem(await review(server, t.bob, t.project, guarded.id, "approve"), 403, "forbidden");
      const byAdmin = await review(server, t.carol, t.project, guarded.id, "approve");
      assert.equal(byAdmin.body.state, "approved", byAdmin.text);
      // The bob-approved request no longer counts his approval now the environment is protected.
      const earlier = await server.request("GET", `${crs(t.project)}/${request.id}`);
      assert.equal(earlier.body.approvals, 0);
      assert.equal(earlier.body.reviews[0].counts, false);
      // A writer applies the admin-approved request to the protected environment.
      const applied = await apply(server, t.alice, t.project, guarded.id);
      assert.equal(applied.status, 200, applied.text);
      assert.equal(applied.body.state, "applied");
    });

    test("the author's change clears the approvals; only the author changes it; one rejection rejects", async () => {
      const t = await team(server);
      await flag(server, t.project, "f");
      await requireApprovals(server, t.project, "production", 1);
      const request = await open(server, t.alice, t.project, {
        environment: "production",
        title: "On",
        changes: [{ flag: "f", patch: { status: "enabled" } }],
      });
      assert.equal((await review(server, t.bob, t.project, request.id, "approve")).body.state, "approved");
      const path = `${crs(t.project)}/${request.id}`;
      expectProblem(
        await server.request("PATCH", path, asSession(t.bob, { body: { title: "Hijacked" } })),
        403,
        "forbidden",
      );
      const changed = await server.request(
        "PATCH",
        path,
        asSession(t.alice, {
          body: { title: "On, for real", changes: [{ flag: "f", patch: { status: "conditional" } }] },
        }),
      );
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.body.state, "open");
      assert.equal(changed.body.approvals, 0);
      assert.deepEqual(changed.body.reviews, []);
      assert.equal(changed.body.title, "On, for real");
      expectProblem(await apply(server, t.alice, t.project, request.id), 409, "approval_required");

      const rejected = await review(server, t.bob, t.project, request.id, "reject", "Not on a Friday");
      assert.equal(rejected.body.state, "rejected");
      // A second reviewer's approval does not undo a rejection.
      assert.equal((await review(server, t.carol, t.project, request.id, "approve")).body.state, "rejected");
      // The rejecter changes their mind: their latest decision is the one that counts.
      assert.equal((await review(server, t.bob, t.project, request.id, "approve")).body.state, "approved");
    });

    test("an override: project admins only, with a reason, recorded as such", async () => {
      const t = await team(server);
      await flag(server, t.project, "kill");
      await requireApprovals(server, t.project, "production", 2);
      const request = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Kill it now",
        changes: [{ flag: "kill", patch: { status: "enabled" } }],
      });
      expectInvalid(await apply(server, t.carol, t.project, request.id, { override: {} }), "/override");
      expectProblem(
        await apply(server, t.bob, t.project, request.id, { override: { reason: "incident" } }),
        403,
        "forbidden",
      );
      assert.equal(await statusIn(server, t.project, "kill"), "disabled");
      const overridden = await apply(server, t.carol, t.project, request.id, {
        override: { reason: "Incident 4411: payments down" },
      });
      assert.equal(overridden.status, 200, overridden.text);
      assert.equal(overridden.body.state, "applied");
      assert.equal(overridden.body.overrideReason, "Incident 4411: payments down");
      assert.equal(await statusIn(server, t.project, "kill"), "enabled");
      const events = (await history(server, t.project)).filter((e) => e.changeRequest === request.id);
      const override = events.find((e) => e.type === "change_request.overridden");
      assert.equal(override.after.overrideReason, "Incident 4411: payments down");
      assert.equal(override.actor.name, "carol");
    });

    test("a conflict: a flag that moved since leaves everything untouched and the request in conflict", async () => {
      const t = await team(server);
      await flag(server, t.project, "a");
      await flag(server, t.project, "b");
      await requireApprovals(server, t.project, "production", 1);
      const request = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Both on",
        changes: [
          { flag: "a", patch: { status: "enabled" } },
          { flag: "b", patch: { status: "enabled" } },
        ],
      });
      await review(server, t.bob, t.project, request.id, "approve");
      // b's definition moves (its revision with it) after the request was made.
      const moved = await server.request("PATCH", `/projects/${t.project}/flags/b`, { body: { description: "new" } });
      assert.equal(moved.status, 200, moved.text);
      const stale = await server.request("GET", `${crs(t.project)}/${request.id}`);
      assert.deepEqual(
        stale.body.changes.map((c: any) => c.stale),
        [false, true],
      );
      const res = await apply(server, t.alice, t.project, request.id);
      expectProblem(res, 409, "change_request_conflict");
      assert.equal(await statusIn(server, t.project, "a"), "disabled", "nothing applied, not even the first change");
      assert.equal(await statusIn(server, t.project, "b"), "disabled");
      const after = await server.request("GET", `${crs(t.project)}/${request.id}`);
      assert.equal(after.body.state, "conflict");
      assert.match(after.body.failureReason, /flag "b" changed/);
      const types = (await history(server, t.project)).filter((e) => e.changeRequest === request.id).map((e) => e.type);
      assert.ok(types.includes("change_request.conflict"));
      assert.ok(!types.includes("flag.updated"));
      // With If-Match at creation, a request against an old ETag is refused at once.
      const old = await server.request(
        "POST",
        crs(t.project),
        asSession(t.alice, {
          body: {
            environment: "production",
            title: "Old",
            changes: [{ flag: "b", patch: { status: "enabled" }, ifMatch: '"nope.1"' }],
          },
        }),
      );
      expectProblem(old, 412, "precondition_failed");
    });

    test("a conflict on the configuration itself: two requests on one flag, the second applied after the first", async () => {
      const t = await team(server);
      await flag(server, t.project, "a");
      await requireApprovals(server, t.project, "production", 1);
      const first = await open(server, t.alice, t.project, {
        environment: "production",
        title: "On",
        changes: [{ flag: "a", patch: { status: "enabled" } }],
      });
      const second = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Half",
        changes: [{ flag: "a", patch: { status: "conditional", percentageActors: 50 } }],
      });
      await review(server, t.bob, t.project, first.id, "approve");
      await review(server, t.bob, t.project, second.id, "approve");
      assert.equal((await apply(server, t.alice, t.project, first.id)).status, 200);
      const res = await apply(server, t.alice, t.project, second.id);
      expectProblem(res, 409, "change_request_conflict");
      assert.equal(await statusIn(server, t.project, "a"), "enabled", "the first request's change stays");
      const after = await server.request("GET", `${crs(t.project)}/${second.id}`);
      assert.equal(after.body.state, "conflict");
    });

    test("a change that can no longer be made fails the request, with the reason, and changes nothing", async () => {
      const t = await team(server);
      await flag(server, t.project, "f");
      const segment = await server.request("POST", `/projects/${t.project}/segments`, { body: { name: "Beta" } });
      assert.equal(segment.status, 201, segment.text);
      const beta = segment.body.id as string;
      await requireApprovals(server, t.project, "production", 1);
      const request = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Beta",
        changes: [{ flag: "f", patch: { status: "conditional", addSegments: [beta] } }],
      });
      await review(server, t.bob, t.project, request.id, "approve");
      assert.equal((await server.request("DELETE", `/projects/${t.project}/segments/${beta}`)).status, 204);
      const res = await apply(server, t.alice, t.project, request.id);
      expectProblem(res, 404, "segment_not_found");
      const after = await server.request("GET", `${crs(t.project)}/${request.id}`);
      assert.equal(after.body.state, "failed");
      assert.ok(after.body.failureReason.includes(beta), after.body.failureReason);
      assert.equal(await statusIn(server, t.project, "f"), "disabled");
    });

    test("cancel: the author or a project admin; a cancelled request does nothing more", async () => {
      const t = await team(server);
      await flag(server, t.project, "f");
      await requireApprovals(server, t.project, "production", 1);
      const mine = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Mine",
        changes: [{ flag: "f", patch: { status: "enabled" } }],
      });
      const cancel = (cookie: string, id: string) =>
        server.request("POST", `${crs(t.project)}/${id}/cancel`, asSession(cookie, { body: {} }));
      expectProblem(await cancel(t.bob, mine.id), 403, "forbidden");
      expectProblem(await cancel(t.dave, mine.id), 403, "forbidden");
      const cancelled = await cancel(t.alice, mine.id);
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.equal(cancelled.body.state, "cancelled");
      expectProblem(await cancel(t.alice, mine.id), 409, "change_request_state");
      expectProblem(
        await apply(server, t.carol, t.project, mine.id, { override: { reason: "x" } }),
        409,
        "change_request_state",
      );
      const other = await open(server, t.bob, t.project, {
        environment: "production",
        title: "Bob's",
        changes: [{ flag: "f", patch: { status: "enabled" } }],
      });
      assert.equal((await cancel(t.carol, other.id)).body.state, "cancelled");
    });

    test("no approvals required: a request is approved at once and its author applies it", async () => {
      const t = await team(server);
      await flag(server, t.project, "f");
      const request = await open(server, t.alice, t.project, {
        environment: "production",
        title: "Quick",
        changes: [{ flag: "f", patch: { status: "enabled" } }],
      });
      assert.equal(request.state, "approved");
      assert.equal((await apply(server, t.alice, t.project, request.id)).body.state, "applied");
      assert.equal(await statusIn(server, t.project, "f"), "enabled");
      // A service key with write opens and applies requests too.
      const { key } = await createKey(server, t.project, "write");
      const byKey = await server.request("POST", crs(t.project), {
        key,
        body: { environment: "production", title: "By key", changes: [{ flag: "f", patch: { status: "disabled" } }] },
      });
      assert.equal(byKey.status, 201, byKey.text);
      assert.equal(byKey.body.author.type, "key");
      const applied = await server.request("POST", `${crs(t.project)}/${byKey.body.id}/apply`, { key, body: {} });
      assert.equal(applied.body.state, "applied", applied.text);
    });

    test("bad requests are refused with what is wrong, and nothing is stored", async () => {
      const t = await team(server);
      await flag(server, t.project, "f");
      const post = (body: unknown, cookie = t.alice) =>
        server.request("POST", crs(t.project), asSession(cookie, { body }));
      const base = { environment: "production", title: "T", changes: [{ flag: "f", patch: { status: "enabled" } }] };
      expectProblem(await post({ ...base, changes: [{ flag: "nope", patch: {} }] }), 404, "flag_not_found");
      expectProblem(await post({ ...base, environment: "nowhere" }), 404, "environment_not_found");
      expectInvalid(await post({ ...base, changes: [] }), "/changes");
      expectInvalid(await post({ ...base, title: "" }), "/title");
      expectInvalid(
        await post({ ...base, changes: [{ flag: "f", patch: { percentageActors: 33 } }] }),
        "/changes/0/patch",
      );
      expectInvalid(await post({ ...base, changes: [{ flag: "f", patch: { comment: "no" } }] }), "/changes/0/patch");
      expectInvalid(await post({ ...base, changes: [base.changes[0], base.changes[0]] }), "/changes/1/flag");
      expectInvalid(await post({ ...base, scheduledAt: "2001-01-01T00:00:00.000Z" }), "/scheduledAt");
      expectInvalid(await post({ ...base, scheduledAt: "tomorrow" }), "/scheduledAt");
      expectInvalid(await post({ ...base, extra: 1 }), "");
      expectProblem(
        await post({ ...base, changes: [{ flag: "f", patch: { addSegments: ["ghost"] } }] }),
        404,
        "segment_not_found",
      );
      const bad = await server.request(
        "POST",
        crs(t.project),
        asSession(t.alice, {
          rawBody: "{not json",
          headers: { "content-type": "application/json" },
        }),
      );
      expectProblem(bad, 400, "invalid_request");
      expectProblem(await post(base, t.dave), 403, "forbidden");
      const { key: readKey } = await createKey(server, t.project, "read");
      expectProblem(await server.request("POST", crs(t.project), { key: readKey, body: base }), 403, "forbidden");
      expectProblem(await server.request("POST", crs(t.project), { key: null, body: base }), 401, "unauthorized");
      expectProblem(await server.request("GET", `${crs(t.project)}/cr_nope`), 404, "change_request_not_found");
      expectProblem(await server.request("GET", crs("no-such-project")), 404, "project_not_found");
      expectInvalid(await server.request("GET", `${crs(t.project)}?state=opened`), "/query/state");
      const list = await server.request("GET", crs(t.project));
      assert.deepEqual(list.body.data, [], "nothing was stored");
      assert.equal(await statusIn(server, t.project, "f"), "disabled", "the dry runs changed nothing");
    });

    test("the list: newest first, filtered by state, environment and author, in pages", async () => {
      const t = await team(server);
      await flag(server, t.project, "f");
      await addEnvironment(server, t.project, "staging");
      await requireApprovals(server, t.project, "production", 1);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        const request = await open(server, i % 2 === 0 ? t.alice : t.bob, t.project, {
          environment: i < 3 ? "production" : "staging",
          title: `R${i}`,
          changes: [{ flag: "f", patch: { percentageCalls: 10 } }],
        });
        made.push(request.id);
      }
      const all = await server.request("GET", crs(t.project));
      assert.deepEqual(
        all.body.data.map((r: any) => r.id),
        [...made].reverse(),
      );
      const ids = async (query: string) =>
        (await server.request("GET", `${crs(t.project)}?${query}`)).body.data.map((r: any) => r.title);
      assert.deepEqual(await ids("state=open"), ["R2", "R1", "R0"]);
      assert.deepEqual(await ids("state=approved"), ["R4", "R3"]);
      assert.deepEqual(await ids("state=open,approved&environment=staging"), ["R4", "R3"]);
      assert.deepEqual(await ids(`author=${t.bobId}`), ["R3", "R1"]);
      const first = await server.request("GET", `${crs(t.project)}?limit=2`);
      assert.deepEqual(
        first.body.data.map((r: any) => r.title),
        ["R4", "R3"],
      );
      assert.equal(first.body.pagination.before, null);
      const second = await server.request("GET", `${crs(t.project)}?limit=2&after=${first.body.pagination.after}`);
      assert.deepEqual(
        second.body.data.map((r: any) => r.title),
        ["R2", "R1"],
      );
      const last = await server.request("GET", `${crs(t.project)}?limit=2&after=${second.body.pagination.after}`);
      assert.deepEqual(
        last.body.data.map((r: any) => r.title),
        ["R0"],
      );
      assert.equal(last.body.pagination.after, null);
      const back = await server.request("GET", `${crs(t.project)}?limit=2&before=${last.body.pagination.before}`);
      assert.deepEqual(
        back.body.data.map((r: any) => r.title),
        ["R2", "R1"],
      );
      // A key bound to staging sees staging's requests only, and may not ask for production's.
      const bound = await server.request("POST", `/projects/${t.project}/keys`, {
        body: { role: "read", name: "staging reader", environment: "staging" },
      });
      const mine = await server.request("GET", crs(t.project), { key: bound.body.key });
      assert.deepEqual(
        mine.body.data.map((r: any) => r.title),
        ["R4", "R3"],
      );
      expectProblem(
        await server.request("GET", `${crs(t.project)}?environment=production`, { key: bound.body.key }),
        403,
        "forbidden",
      );
      expectProblem(
        await server.request("GET", `${crs(t.project)}/${made[0]}`, { key: bound.body.key }),
        403,
        "forbidden",
      );
    });

    test("deleting an environment deletes its requests; their events stay in the history", async () => {
      const project = await createProject(server);
      await addEnvironment(server, project, "staging");
      await flag(server, project, "f");
      const res = await server.request("POST", crs(project), {
        body: { environment: "staging", title: "S", changes: [{ flag: "f", patch: { status: "enabled" } }] },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal((await server.request("DELETE", `/projects/${project}/environments/staging`)).status, 204);
      expectProblem(await server.request("GET", `${crs(project)}/${res.body.id}`), 404, "change_request_not_found");
      assert.ok((await history(server, project)).some((e) => e.type === "change_request.created"));
    });
  });
}

describe("change request webhooks [sqlite]", () => {
  test("change_request.* events are delivered, the override's among them", async () => {
    const server = await startServer({ dialect: "sqlite", env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
    const receiver = await WebhookReceiver.start();
    try {
      const project = await createProject(server);
      const hook = await server.request("POST", `/projects/${project}/webhooks`, {
        body: { url: `${receiver.url}/cr`, events: ["change_request.*"] },
      });
      assert.equal(hook.status, 201, hook.text);
      await flag(server, project, "f");
      await requireApprovals(server, project, "production", 1);
      const request = await server.request("POST", crs(project), {
        body: { environment: "production", title: "Now", changes: [{ flag: "f", patch: { status: "enabled" } }] },
      });
      const applied = await server.request("POST", `${crs(project)}/${request.body.id}/apply`, {
        body: { override: { reason: "on call" } },
      });
      assert.equal(applied.status, 200, applied.text);
      const received = await waitFor("three deliveries", () => receiver.at("/cr"), { until: (r) => r.length >= 3 });
      const types = received.map((r) => JSON.parse(r.body).type).sort();
      assert.deepEqual(types, ["change_request.applied", "change_request.created", "change_request.overridden"]);
      const overridden = received.map((r) => JSON.parse(r.body)).find((e) => e.type === "change_request.overridden");
      assert.equal(overridden.after.overrideReason, "on call");
      assert.equal(overridden.changeRequest, request.body.id);
    } finally {
      await receiver.close();
      await server.close();
    }
  });
});
