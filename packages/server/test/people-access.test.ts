// The role matrix for people (docs/people.md, "Roles"): an admin, members with an admin, write or read
// grant, a member without one, a disabled person, each by session and by personal key, against
// representative routes of a project. A personal key holds the lesser of its role and its person's rights
// at every request. Then protected environments. Real servers over real HTTP, on every dialect.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  type ApiResponse,
  createProject,
  DIALECTS,
  expectProblem,
  type RequestOptions,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { asKey, asSession, createPerson, grant, type Person, personalKey, signIn } from "./helpers/people.js";

type Rank = "check" | "read" | "write" | "admin";
const RANK: Record<Rank, number> = { check: 1, read: 2, write: 3, admin: 4 };

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

interface Operation {
  readonly name: string;
  /** What it needs on the project. */
  readonly needs: Rank;
  readonly success: number;
  /** Only a person signed in may, not their personal key (it makes a credential: docs/people.md). */
  readonly sessionOnly?: boolean;
  /**
   * What it reaches beyond a flag's configuration: an environment, or null for the whole project. A key
   * bound to another environment is refused (docs/environments.md); undefined: no environment's own.
   */
  readonly reaches?: string | null;
  /** The request, after setting up (as the admin key) what it acts on in `project`. */
  readonly prepare: (server: TestServer, project: string) => Promise<{ method: string; path: string; body?: unknown }>;
}

async function admin(server: TestServer, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  const res = await server.request(method, path, body === undefined ? {} : { body });
  if (res.status >= 300) throw new Error(`setup ${method} ${path}: ${res.status} ${res.text}`);
  return res;
}

/** A flag of the project (made once, and again after a delete). */
async function flag(server: TestServer, project: string, name = "shared"): Promise<string> {
  const res = await server.request("GET", `/projects/${project}/flags/${name}`);
  if (res.status === 404) await admin(server, "POST", `/projects/${project}/flags/${name}`, { description: "d" });
  return name;
}

const OPERATIONS: readonly Operation[] = [
  {
    name: "GET project",
    needs: "read",
    success: 200,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}` }),
  },
  {
    name: "list flags",
    needs: "read",
    success: 200,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}/flags` }),
  },
  {
    name: "get a flag",
    needs: "read",
    success: 200,
    prepare: async (s, p) => ({ method: "GET", path: `/projects/${p}/flags/${await flag(s, p)}` }),
  },
  {
    name: "create a flag",
    needs: "write",
    success: 201,
    prepare: async (_, p) => ({ method: "POST", path: `/projects/${p}/flags/${unique("new")}`, body: {} }),
  },
  {
    name: "patch a flag",
    needs: "write",
    success: 200,
    prepare: async (s, p) => ({
      method: "PATCH",
      path: `/projects/${p}/flags/${await flag(s, p)}`,
      body: { description: "changed", status: "enabled", addActors: ["u1"] },
    }),
  },
  {
    name: "delete a flag",
    needs: "write",
    success: 204,
    prepare: async (s, p) => ({ method: "DELETE", path: `/projects/${p}/flags/${await flag(s, p, unique("doomed"))}` }),
  },
  {
    name: "check a flag",
    needs: "check",
    success: 200,
    prepare: async (s, p) => ({ method: "GET", path: `/projects/${p}/flags/${await flag(s, p)}/check?actorIds=u1` }),
  },
  {
    name: "list segments",
    needs: "read",
    success: 200,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}/segments` }),
  },
  {
    name: "create a segment",
    needs: "write",
    success: 201,
    prepare: async (_, p) => ({ method: "POST", path: `/projects/${p}/segments`, body: { name: unique("seg") } }),
  },
  {
    name: "list keys",
    needs: "admin",
    success: 200,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}/keys` }),
  },
  {
    name: "create a key",
    needs: "admin",
    success: 201,
    sessionOnly: true,
    prepare: async (_, p) => ({ method: "POST", path: `/projects/${p}/keys`, body: { role: "read", name: "k" } }),
  },
  {
    name: "list webhooks",
    needs: "admin",
    success: 200,
    reaches: null,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}/webhooks` }),
  },
  {
    name: "create a webhook",
    needs: "admin",
    success: 201,
    reaches: null,
    prepare: async (_, p) => ({
      method: "POST",
      path: `/projects/${p}/webhooks`,
      body: { url: "http://127.0.0.1:9/hook", enabled: false },
    }),
  },
  {
    name: "list environments",
    needs: "read",
    success: 200,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}/environments` }),
  },
  {
    name: "create an environment",
    needs: "admin",
    success: 201,
    reaches: null,
    prepare: async (_, p) => ({
      method: "POST",
      path: `/projects/${p}/environments`,
      body: { id: unique("e"), name: "E" },
    }),
  },
  {
    name: "patch an environment",
    needs: "admin",
    success: 200,
    prepare: async (s, p) => {
      const id = unique("e");
      await admin(s, "POST", `/projects/${p}/environments`, { id, name: "E" });
      return { method: "PATCH", path: `/projects/${p}/environments/${id}`, body: { description: "changed" } };
    },
    // A new environment: not the one a project's personal key is bound to (the default, production).
    reaches: "another",
  },
  {
    name: "patch the default environment",
    needs: "admin",
    success: 200,
    reaches: "production",
    prepare: async (_, p) => ({
      method: "PATCH",
      path: `/projects/${p}/environments/production`,
      body: { description: unique("changed") },
    }),
  },
  {
    name: "delete an environment",
    needs: "admin",
    success: 204,
    reaches: "another", // a new environment, as above
    prepare: async (s, p) => {
      const id = unique("e");
      await admin(s, "POST", `/projects/${p}/environments`, { id, name: "E" });
      return { method: "DELETE", path: `/projects/${p}/environments/${id}` };
    },
  },
  {
    name: "revoke a key bound to the default environment",
    needs: "admin",
    success: 204,
    reaches: "production",
    prepare: async (s, p) => {
      const key = await admin(s, "POST", `/projects/${p}/keys`, { role: "read", name: "doomed" });
      return { method: "DELETE", path: `/projects/${p}/keys/${key.body.id}` };
    },
  },
  {
    name: "revoke a key bound to none",
    needs: "admin",
    success: 204,
    reaches: null,
    prepare: async (s, p) => {
      const key = await admin(s, "POST", `/projects/${p}/keys`, { role: "write", name: "doomed", environment: null });
      return { method: "DELETE", path: `/projects/${p}/keys/${key.body.id}` };
    },
  },
  {
    name: "grant access",
    needs: "admin",
    success: 200,
    reaches: null,
    prepare: async (s, p) => ({
      method: "PUT",
      path: `/projects/${p}/access/${(await createPerson(s)).id}`,
      body: { role: "read" },
    }),
  },
  {
    name: "list access",
    needs: "admin",
    success: 200,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}/access` }),
  },
  {
    name: "list events",
    needs: "read",
    success: 200,
    prepare: async (_, p) => ({ method: "GET", path: `/projects/${p}/events` }),
  },
];

/** Someone making requests, and what they hold on the matrix's project (undefined: nothing at all). */
interface Caller {
  readonly label: string;
  readonly options: RequestOptions;
  /** What they hold on the project; "none": the person has no grant (404); "refused": a grant, but this key not. */
  readonly holds: Rank | "none" | "refused" | "disabled";
  /**
   * A personal key that names a project (the matrix's, or another): it acts on no other, and is bound to
   * its default environment (production).
   */
  readonly ofProject?: boolean;
}

/** The answer a caller should get for an operation: the success status, or the status and code of its refusal. */
function expected(caller: Caller, op: Operation): string {
  switch (caller.holds) {
    case "disabled":
      return "401 unauthorized";
    case "none":
      return "404 project_not_found";
    case "refused":
      return "403 forbidden";
    default:
      if (RANK[caller.holds] < RANK[op.needs]) return "403 forbidden";
      // A key bound to an environment reaches that one only (docs/environments.md).
      if (caller.ofProject && op.reaches !== undefined && op.reaches !== "production") return "403 forbidden";
      return op.sessionOnly && typeof caller.options.key === "string" ? "403 forbidden" : String(op.success);
  }
}

const outcome = (res: ApiResponse) => (res.status < 400 ? String(res.status) : `${res.status} ${res.body?.code}`);

for (const dialect of DIALECTS) {
  describe(`people's access [${dialect}]`, () => {
    let server: TestServer;
    /** The matrix's project, and another project that nothing of the matrix may reach through it. */
    let project: string;
    let other: string;
    const callers: Caller[] = [];
    const people: Record<string, { person: Person; cookie: string }> = {};

    before(async () => {
      server = await startServer({
        dialect,
        env: {
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
          // The matrix makes an environment per caller and operation.
          ENVIRONMENTS_MAX_PER_PROJECT: "100",
        },
      });
      project = await createProject(server);
      other = await createProject(server);
      const make = async (
        label: string,
        role: "admin" | "member",
        grants: Record<string, "admin" | "write" | "read">,
      ) => {
        const person = await createPerson(server, { role, name: label });
        for (const [p, r] of Object.entries(grants)) await grant(server, p, person.id, r);
        people[label] = { person, cookie: await signIn(server, person.email) };
        return people[label];
      };
      const key = async (label: string, body: Parameters<typeof personalKey>[2]) =>
        asKey((await personalKey(server, people[label]!.cookie, { name: `${label}'s key`, ...body })).key);

      await make("admin", "admin", {});
      await make("owner", "member", { [project]: "admin" });
      await make("writer", "member", { [project]: "write", [other]: "write" });
      await make("reader", "member", { [project]: "read" });
      await make("stranger", "member", { [other]: "admin" });
      await make("gone", "member", { [project]: "write" });

      callers.push(
        { label: "admin by session", options: asSession(people.admin!.cookie), holds: "admin" },
        { label: "admin's key of no project (admin)", options: await key("admin", { role: "admin" }), holds: "admin" },
        {
          label: "admin's key of the project (write)",
          options: await key("admin", { project, role: "write" }),
          holds: "write",
          ofProject: true,
        },
        { label: "owner by session", options: asSession(people.owner!.cookie), holds: "admin" },
        {
          label: "owner's key (admin)",
          options: await key("owner", { project, role: "admin" }),
          holds: "admin",
          ofProject: true,
        },
        {
          label: "owner's key (read)",
          options: await key("owner", { project, role: "read" }),
          holds: "read",
          ofProject: true,
        },
        { label: "writer by session", options: asSession(people.writer!.cookie), holds: "write" },
        {
          label: "writer's key (write)",
          options: await key("writer", { project, role: "write" }),
          holds: "write",
          ofProject: true,
        },
        {
          label: "writer's key of no project (write)",
          options: await key("writer", { role: "write" }),
          holds: "write",
        },
        {
          label: "writer's key of another project",
          options: await key("writer", { project: other, role: "write" }),
          holds: "refused",
          ofProject: true,
        },
        { label: "reader by session", options: asSession(people.reader!.cookie), holds: "read" },
        {
          label: "reader's key (read)",
          options: await key("reader", { project, role: "read" }),
          holds: "read",
          ofProject: true,
        },
        {
          label: "reader's key (check)",
          options: await key("reader", { project, role: "check" }),
          holds: "check",
          ofProject: true,
        },
        { label: "stranger by session", options: asSession(people.stranger!.cookie), holds: "none" },
        { label: "stranger's key of no project", options: await key("stranger", { role: "read" }), holds: "none" },
      );
      const goneKey = await key("gone", { project, role: "write" });
      const disabled = await server.request("PATCH", `/users/${people.gone!.person.id}`, { body: { disabled: true } });
      assert.equal(disabled.status, 200, disabled.text);
      callers.push(
        { label: "disabled person by session", options: asSession(people.gone!.cookie), holds: "disabled" },
        { label: "disabled person's key", options: goneKey, holds: "disabled" },
      );
    });
    after(() => server.close());

    test("every caller × every representative route of the project answers as its rights say", async () => {
      const wrong: string[] = [];
      const seen = new Set<string>();
      for (const op of OPERATIONS) {
        for (const caller of callers) {
          const { method, path, body } = await op.prepare(server, project);
          const res = await server.request(method, path, {
            ...caller.options,
            ...(body === undefined ? {} : { body }),
          });
          const want = expected(caller, op);
          seen.add(outcome(res));
          if (outcome(res) !== want) wrong.push(`${caller.label}: ${op.name} → ${outcome(res)}, expected ${want}`);
          if (res.status === 401) assert.match(res.headers.get("www-authenticate") ?? "", /Bearer/);
        }
      }
      assert.deepEqual(wrong, []);
      // The matrix is not trivially right: it saw every kind of answer.
      for (const kind of ["200", "201", "204", "401 unauthorized", "403 forbidden", "404 project_not_found"]) {
        assert.ok(seen.has(kind), `no ${kind} in the matrix`);
      }
    });

    test("deleting the project: its admins only; a member without a grant sees no project", async () => {
      for (const caller of callers) {
        const doomed = await createProject(server);
        // The members hold on it what they hold on the matrix's project.
        for (const [label, role] of [
          ["owner", "admin"],
          ["writer", "write"],
          ["reader", "read"],
        ] as const) {
          await grant(server, doomed, people[label]!.person.id, role);
        }
        const res = await server.request("DELETE", `/projects/${doomed}`, caller.options);
        // The keys of the matrix's project are not keys of this one.
        const want =
          caller.holds === "disabled"
            ? "401 unauthorized"
            : caller.holds === "none"
              ? "404 project_not_found"
              : caller.ofProject
                ? "403 forbidden"
                : caller.holds === "admin"
                  ? "204"
                  : "403 forbidden";
        assert.equal(outcome(res), want, caller.label);
        const still = await server.request("GET", `/projects/${doomed}`);
        assert.equal(still.status, want === "204" ? 404 : 200, `${caller.label}: the project is there or not`);
      }
    });

    test("GET /projects lists every project to an admin, and to a member only those granted", async () => {
      const ids = async (options: RequestOptions) => {
        const res = await server.request("GET", "/projects?limit=100", options);
        assert.equal(res.status, 200, res.text);
        return res.body.data.map((p: { id: string }) => p.id) as string[];
      };
      const all = await ids({});
      assert.ok(all.includes(project) && all.includes(other));
      assert.deepEqual(await ids(asSession(people.admin!.cookie)), all);
      // A member sees exactly the projects of their grants (other tests grant more).
      for (const [label, sees, seesNot] of [
        ["owner", project, other],
        ["writer", project, undefined],
        ["writer", other, undefined],
        ["reader", project, other],
        ["stranger", other, project],
      ] as const) {
        const cookie = people[label]!.cookie;
        const granted = (await server.request("GET", "/whoami", asSession(cookie))).body.grants.map(
          (g: { projectId: string }) => g.projectId,
        );
        const listed = await ids(asSession(cookie));
        assert.deepEqual([...listed].sort(), [...granted].sort(), label);
        assert.ok(listed.includes(sees), `${label} sees ${sees}`);
        if (seesNot !== undefined) assert.ok(!listed.includes(seesNot), `${label} does not see ${seesNot}`);
      }
      const nobody = await createPerson(server);
      assert.deepEqual(await ids(asSession(await signIn(server, nobody.email))), []);
      expectProblem(await server.request("GET", "/projects", asSession(people.gone!.cookie)), 401, "unauthorized");
      // Only admins create projects.
      for (const label of ["owner", "writer", "reader"]) {
        expectProblem(
          await server.request("POST", "/projects", {
            ...asSession(people[label]!.cookie),
            body: { id: unique("mine"), name: "Mine" },
          }),
          403,
          "forbidden",
        );
      }
      const made = await server.request("POST", "/projects", {
        ...asSession(people.admin!.cookie),
        body: { id: unique("theirs"), name: "Theirs" },
      });
      assert.equal(made.status, 201, made.text);
    });

    test("nothing crosses a project: an owner of one sees nothing of the other", async () => {
      const ownerKey = callers.find((c) => c.label === "owner's key (admin)")!.options;
      for (const options of [asSession(people.owner!.cookie), ownerKey]) {
        for (const path of [`/projects/${other}`, `/projects/${other}/flags`, `/projects/${other}/access`]) {
          expectProblem(await server.request("GET", path, options), 404, "project_not_found");
        }
        expectProblem(
          await server.request("POST", `/projects/${other}/flags/intruder`, { ...options, body: {} }),
          404,
          "project_not_found",
        );
      }
      // A key of the project cannot be made for another, nor hold more than its person.
      const writer = people.writer!.cookie;
      const owner = people.owner!.cookie;
      const refused = async (cookie: string, body: unknown) =>
        server.request("POST", "/users/me/keys", asSession(cookie, { body }));
      expectProblem(await refused(owner, { name: "k", project: other }), 404, "project_not_found");
      expectProblem(await refused(writer, { name: "k", project, role: "admin" }), 403, "forbidden");
      expectProblem(await refused(writer, { name: "k", role: "admin" }), 403, "forbidden");
      expectProblem(await refused(people.reader!.cookie, { name: "k", project, role: "write" }), 403, "forbidden");
      expectProblem(await refused(writer, { name: "k", environment: "production" }), 400, "invalid_request");
      // Bound to none, as a service write key may be: admin and write keys only.
      for (const role of ["read", "check"]) {
        expectProblem(await refused(owner, { name: "k", project, role, environment: null }), 400, "invalid_request");
      }
      const unbound = await server.request(
        "POST",
        "/users/me/keys",
        asSession(owner, { body: { name: "k", project, role: "admin", environment: null } }),
      );
      assert.equal(unbound.status, 201, unbound.text);
      assert.equal(unbound.body.environment, null);
    });

    test("nothing crosses an environment: a key bound to one may not act on another", async () => {
      await admin(server, "POST", `/projects/${project}/environments`, { id: "qa", name: "QA" });
      await flag(server, project);
      const key = await personalKey(server, people.writer!.cookie, { project, environment: "qa", role: "write" });
      const patch = (environment: string) =>
        server.request("PATCH", `/projects/${project}/flags/shared?environment=${environment}`, {
          ...asKey(key.key),
          body: { status: "enabled" },
        });
      assert.equal((await patch("qa")).status, 200);
      expectProblem(await patch("production"), 403, "forbidden");
      const read = await server.request(
        "GET",
        `/projects/${project}/flags/shared?environment=production`,
        asKey(key.key),
      );
      expectProblem(read, 403, "forbidden");
    });

    test("a grant changed or removed shrinks a personal key at once", async () => {
      const p = await createProject(server);
      await flag(server, p);
      const person = await createPerson(server);
      await grant(server, p, person.id, "write");
      const cookie = await signIn(server, person.email);
      const key = asKey((await personalKey(server, cookie, { role: "write" })).key);
      const patch = () =>
        server.request("PATCH", `/projects/${p}/flags/shared`, {
          ...key,
          body: { description: randomBytes(3).toString("hex") },
        });
      const read = () => server.request("GET", `/projects/${p}/flags/shared`, key);
      assert.equal((await patch()).status, 200);

      await grant(server, p, person.id, "read");
      expectProblem(await patch(), 403, "forbidden");
      assert.equal((await read()).status, 200);

      assert.equal((await server.request("DELETE", `/projects/${p}/access/${person.id}`)).status, 204);
      expectProblem(await read(), 404, "project_not_found");
      expectProblem(
        await server.request("GET", `/projects/${p}/flags/shared`, asSession(cookie)),
        404,
        "project_not_found",
      );
      // The key itself still works where nothing is asked of the project: it is the person's still.
      assert.equal((await server.request("GET", "/whoami", key)).status, 200);

      await grant(server, p, person.id, "write");
      assert.equal((await patch()).status, 200, "granted again, the key acts again");
    });

    test("a person demoted from admin loses their key of no project's admin powers at once", async () => {
      const person = await createPerson(server, { role: "admin" });
      const cookie = await signIn(server, person.email);
      const key = asKey((await personalKey(server, cookie, { role: "admin" })).key);
      const made = await server.request("POST", "/projects", { ...key, body: { id: unique("by-key"), name: "K" } });
      assert.equal(made.status, 201, made.text);
      assert.equal((await server.request("GET", `/projects/${project}/keys`, key)).status, 200);
      assert.equal((await server.request("GET", "/users", key)).status, 200);

      assert.equal((await server.request("PATCH", `/users/${person.id}`, { body: { role: "member" } })).status, 200);
      expectProblem(
        await server.request("POST", "/projects", { ...key, body: { id: unique("by-key"), name: "K" } }),
        403,
        "forbidden",
      );
      expectProblem(await server.request("GET", "/users", key), 403, "forbidden");
      expectProblem(await server.request("GET", `/projects/${project}/keys`, key), 404, "project_not_found");
      expectProblem(await server.request("GET", `/projects/${made.body.id}/flags`, key), 404, "project_not_found");
      // A grant gives back what it grants, and no more.
      await grant(server, project, person.id, "read");
      assert.equal((await server.request("GET", `/projects/${project}/flags`, key)).status, 200);
      expectProblem(await server.request("GET", `/projects/${project}/keys`, key), 403, "forbidden");
    });

    describe("protected environments", () => {
      let p: string;
      let writerCookie: string;
      let ownerCookie: string;
      before(async () => {
        p = await createProject(server);
        await admin(server, "POST", `/projects/${p}/environments`, { id: "staging", name: "Staging" });
        await admin(server, "POST", `/projects/${p}/flags/guarded`, {});
        writerCookie = people.writer!.cookie;
        ownerCookie = people.owner!.cookie;
        await grant(server, p, people.writer!.person.id, "write");
        await grant(server, p, people.owner!.person.id, "admin");
      });

      const patch = (options: RequestOptions, body: unknown, environment = "staging") =>
        server.request("PATCH", `/projects/${p}/flags/guarded?environment=${environment}`, { ...options, body });

      test("only the project's admins protect an environment", async () => {
        expectProblem(
          await server.request("PATCH", `/projects/${p}/environments/staging`, {
            ...asSession(writerCookie),
            body: { protected: true },
          }),
          403,
          "forbidden",
        );
        const res = await server.request("PATCH", `/projects/${p}/environments/staging`, {
          ...asSession(ownerCookie),
          body: { protected: true },
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.protected, true);
      });

      test("a writer (session, personal key, write key) may not change its configurations, only definitions", async () => {
        const serviceKey = await server.request("POST", `/projects/${p}/keys`, {
          body: { role: "write", name: "ci", environment: "staging" },
        });
        assert.equal(serviceKey.status, 201, serviceKey.text);
        const personal = await personalKey(server, writerCookie, { project: p, environment: "staging", role: "write" });
        const writers: [string, RequestOptions][] = [
          ["writer by session", asSession(writerCookie)],
          ["writer's personal key", asKey(personal.key)],
          ["a write key", asKey(serviceKey.body.key)],
        ];
        const configurations = [
          { status: "enabled" },
          { percentageActors: 50 },
          { percentageCalls: 10 },
          { addActors: ["vip"] },
          { description: "with a configuration change too", status: "enabled" },
        ];
        for (const [label, options] of writers) {
          for (const body of configurations) {
            const res = await patch(options, body);
            assert.equal(outcome(res), "403 environment_protected", `${label}: ${JSON.stringify(body)}`);
          }
          const described = await patch(options, { description: `described by ${label}` });
          assert.equal(described.status, 200, `${label}: ${described.text}`);
        }
        // The refusals changed nothing there.
        const flag = await server.request("GET", `/projects/${p}/flags/guarded?environment=staging`);
        assert.equal(flag.body.status, "disabled");
        assert.deepEqual(flag.body.actors ?? [], []);
        // The unprotected default environment stays theirs.
        assert.equal((await patch(asSession(writerCookie), { status: "enabled" }, "production")).status, 200);
      });

      test("a copy into a protected environment is refused to writers; out of it is allowed", async () => {
        const copy = (options: RequestOptions, from: string, to: string) =>
          server.request("POST", `/projects/${p}/flags/guarded/copy`, { ...options, body: { from, to } });
        const writerKey = asKey((await personalKey(server, writerCookie, { role: "write" })).key);
        for (const options of [asSession(writerCookie), writerKey]) {
          // A copy that would change nothing is no change: production differs first.
          await admin(server, "PATCH", `/projects/${p}/flags/guarded?environment=production`, { status: "enabled" });
          expectProblem(await copy(options, "production", "staging"), 403, "environment_protected");
          assert.equal((await copy(options, "staging", "production")).status, 200);
        }
        assert.equal((await copy(asSession(ownerCookie), "production", "staging")).status, 200);
      });

      test("the project's admins (member, admin person, admin key) change protected configurations", async () => {
        const ownerKey = asKey(
          (await personalKey(server, ownerCookie, { project: p, environment: "staging", role: "admin" })).key,
        );
        for (const options of [asSession(ownerCookie), ownerKey, asSession(people.admin!.cookie), {}]) {
          for (const status of ["enabled", "disabled"]) {
            const res = await patch(options, { status });
            assert.equal(res.status, 200, res.text);
          }
        }
        // An owner's key capped at write is a writer's.
        const capped = asKey(
          (await personalKey(server, ownerCookie, { project: p, environment: "staging", role: "write" })).key,
        );
        expectProblem(await patch(capped, { status: "enabled" }), 403, "environment_protected");
        // Unprotected again, the writer may.
        await admin(server, "PATCH", `/projects/${p}/environments/staging`, { protected: false });
        assert.equal((await patch(asSession(writerCookie), { status: "enabled" })).status, 200);
      });
    });
  });
}
