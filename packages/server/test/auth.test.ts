import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  type ApiResponse,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type RequestOptions,
  type TestServer,
} from "@flagstaff/test-harness";
import { asSession, createPerson, grant, personalKey, signIn } from "./helpers/people.js";

// Authentication and the role × operation matrix (decisions.md §2):
//   admin  every project, everything (projects and keys included)
//   write  its own project: every operation of interface.md, plus segment delete and actor PUT
//   read   its own project: every GET, check included
//   check  its own project: only the check operation
// Missing, malformed, unknown or revoked key → 401 unauthorized + WWW-Authenticate: Bearer;
// a known key without the role or the project → 403 forbidden.

type Role = "admin" | "write" | "read" | "check";
type Params = Record<string, string>;

const ROLES: readonly Role[] = ["admin", "write", "read", "check"];

/** Who may run an operation on the key's own project (admin: on any project). */
const ADMIN_ONLY: readonly Role[] = ["admin"];
const WRITERS: readonly Role[] = ["admin", "write"];
const READERS: readonly Role[] = ["admin", "write", "read"];
const CHECKERS: readonly Role[] = ["admin", "write", "read", "check"];

interface Operation {
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The route as the server registers it, e.g. /projects/:projectId/flags/:flagName. */
  route: string;
  /** Roles that may perform it on their own project. */
  roles: readonly Role[];
  /** The status of a successful answer. */
  success: number;
  /** Creates (as admin) what the operation needs in the target project; answers the path parameters. */
  setup?: (server: TestServer, projectId: string) => Promise<Params>;
  /** A valid request body. */
  body?: (params: Params) => unknown;
  /** A path read as admin before and after a refused request: a refused request must change nothing. */
  probe?: (params: Params) => string;
  /** A query string the operation needs (with its ?). */
  query?: string;
}

/** Path parameters used when nothing was set up (unknown or absent projects). */
const DEFAULT_PARAMS: Params = {
  flagName: "some-flag",
  segmentId: "seg_doesnotexist00000000",
  actorId: "some-actor",
  keyId: "key_doesnotexist00000000",
  webhookId: "wh_doesnotexist00000000",
  deliveryId: "dlv_doesnotexist00000000",
  environmentId: "no-such-environment",
  userId: "usr_doesnotexist00000000",
  changeRequestId: "cr_doesnotexist00000000",
};

const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString("hex")}`;

async function admin(server: TestServer, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  const res = await server.request(method, path, body === undefined ? {} : { body });
  if (res.status >= 300) throw new Error(`setup ${method} ${path} failed: ${res.status} ${res.text}`);
  return res;
}

const withFlag = async (server: TestServer, projectId: string): Promise<Params> => {
  await admin(server, "POST", `/projects/${projectId}/flags/some-flag`, { description: "a flag" });
  return { flagName: "some-flag" };
};
const withSegment = async (server: TestServer, projectId: string): Promise<Params> => {
  const res = await admin(server, "POST", `/projects/${projectId}/segments`, { name: "beta", description: "d" });
  return { segmentId: res.body.id as string };
};
const withActor = async (server: TestServer, projectId: string): Promise<Params> => {
  await admin(server, "PUT", `/projects/${projectId}/actors/some-actor`, { name: "Some Actor" });
  return { actorId: "some-actor" };
};
const withWebhook = async (server: TestServer, projectId: string): Promise<Params> => {
  // Nothing listens on port 9 (the server allows loopback targets, see below). It subscribes to an event
  // the matrix never causes, so its deliveries list changes only when a ping is queued.
  const res = await admin(server, "POST", `/projects/${projectId}/webhooks`, {
    url: "http://127.0.0.1:9/hook",
    events: ["segment.deleted"],
  });
  return { webhookId: res.body.id as string };
};
const withDelivery = async (server: TestServer, projectId: string): Promise<Params> => {
  const { webhookId } = await withWebhook(server, projectId);
  const res = await admin(server, "POST", `/projects/${projectId}/webhooks/${webhookId}/test`);
  return { webhookId: webhookId as string, deliveryId: res.body.id as string };
};
const withEnvironment = async (server: TestServer, projectId: string): Promise<Params> => {
  const res = await admin(server, "POST", `/projects/${projectId}/environments`, { id: unique("env"), name: "Env" });
  return { environmentId: res.body.id as string };
};
/** A change request the admin key made (so it is its author), approved at once (no approvals required). */
const withChangeRequest = async (server: TestServer, projectId: string): Promise<Params> => {
  await withFlag(server, projectId);
  const res = await admin(server, "POST", `/projects/${projectId}/change-requests`, {
    environment: "production",
    title: "On",
    changes: [{ flag: "some-flag", patch: { status: "enabled" } }],
  });
  return { changeRequestId: res.body.id as string };
};
/** A flag, and a second environment (staging) to copy its configuration into. */
const withFlagAndStaging = async (server: TestServer, projectId: string): Promise<Params> => {
  await admin(server, "POST", `/projects/${projectId}/environments`, { id: "staging", name: "Staging" });
  return withFlag(server, projectId);
};
const withUser = async (server: TestServer): Promise<Params> => {
  const res = await admin(server, "POST", "/users", { email: `${unique("person")}@example.com`, name: "Person" });
  return { userId: res.body.id as string };
};
const withGrant = async (server: TestServer, projectId: string): Promise<Params> => {
  const { userId } = await withUser(server);
  await admin(server, "PUT", `/projects/${projectId}/access/${userId}`, { role: "read" });
  return { userId: userId as string };
};
const withKey = async (server: TestServer, projectId: string): Promise<Params> => {
  const res = await admin(server, "POST", `/projects/${projectId}/keys`, { role: "check", name: "victim" });
  return { keyId: res.body.id as string };
};

/** Every operation the server registers, except /healthz, /readyz and /openapi.json. */
const OPERATIONS: readonly Operation[] = [
  // Projects (extension)
  {
    method: "POST",
    route: "/projects",
    roles: ADMIN_ONLY,
    success: 201,
    setup: async () => ({ newProjectId: unique("new") }),
    body: (p) => ({ id: p.newProjectId, name: "New project" }),
    probe: (p) => `/projects/${p.newProjectId}`,
  },
  { method: "GET", route: "/projects", roles: ADMIN_ONLY, success: 200 },
  // Operations: metrics are admin-only unless METRICS_PUBLIC is set
  { method: "GET", route: "/metrics", roles: ADMIN_ONLY, success: 200 },
  // Any key may ask who it is
  { method: "GET", route: "/whoami", roles: CHECKERS, success: 200 },
  { method: "GET", route: "/projects/:projectId", roles: READERS, success: 200 },
  {
    method: "DELETE",
    route: "/projects/:projectId",
    roles: ADMIN_ONLY,
    success: 204,
    probe: (p) => `/projects/${p.projectId}`,
  },
  // Keys (extension)
  {
    method: "POST",
    route: "/projects/:projectId/keys",
    roles: ADMIN_ONLY,
    success: 201,
    body: () => ({ role: "read", name: "another key" }),
    probe: (p) => `/projects/${p.projectId}/keys`,
  },
  { method: "GET", route: "/projects/:projectId/keys", roles: ADMIN_ONLY, success: 200 },
  // People (extension): admin keys manage people and every project's access (people.test.ts covers people)
  { method: "GET", route: "/users", roles: ADMIN_ONLY, success: 200 },
  {
    method: "POST",
    route: "/users",
    roles: ADMIN_ONLY,
    success: 201,
    setup: async () => ({ email: `${unique("new")}@example.com` }),
    body: (p) => ({ email: p.email, name: "New person" }),
  },
  { method: "GET", route: "/users/:userId", roles: ADMIN_ONLY, success: 200, setup: withUser },
  {
    method: "PATCH",
    route: "/users/:userId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withUser,
    body: () => ({ name: "Renamed" }),
    probe: (p) => `/users/${p.userId}`,
  },
  {
    method: "DELETE",
    route: "/users/:userId",
    roles: ADMIN_ONLY,
    success: 204,
    setup: withUser,
    probe: (p) => `/users/${p.userId}`,
  },
  { method: "GET", route: "/projects/:projectId/access", roles: ADMIN_ONLY, success: 200 },
  {
    method: "PUT",
    route: "/projects/:projectId/access/:userId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withUser,
    body: () => ({ role: "write" }),
    probe: (p) => `/projects/${p.projectId}/access`,
  },
  {
    method: "DELETE",
    route: "/projects/:projectId/access/:userId",
    roles: ADMIN_ONLY,
    success: 204,
    setup: withGrant,
    probe: (p) => `/projects/${p.projectId}/access`,
  },
  {
    method: "PATCH",
    route: "/projects/:projectId/keys/:keyId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withKey,
    body: () => ({ name: "renamed" }),
    probe: (p) => `/projects/${p.projectId}/keys`,
  },
  {
    method: "DELETE",
    route: "/projects/:projectId/keys/:keyId",
    roles: ADMIN_ONLY,
    success: 204,
    setup: withKey,
    probe: (p) => `/projects/${p.projectId}/keys`,
  },
  // Environments (extension): any key of the project reads them; only admin keys change them
  { method: "GET", route: "/projects/:projectId/environments", roles: READERS, success: 200 },
  {
    method: "POST",
    route: "/projects/:projectId/environments",
    roles: ADMIN_ONLY,
    success: 201,
    setup: async () => ({ newEnvironmentId: unique("env") }),
    body: (p) => ({ id: p.newEnvironmentId ?? "fresh-env", name: "New environment" }),
    probe: (p) => `/projects/${p.projectId}/environments`,
  },
  {
    method: "GET",
    route: "/projects/:projectId/environments/:environmentId",
    roles: READERS,
    success: 200,
    setup: withEnvironment,
  },
  {
    method: "PATCH",
    route: "/projects/:projectId/environments/:environmentId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withEnvironment,
    body: () => ({ description: "changed" }),
    probe: (p) => `/projects/${p.projectId}/environments/${p.environmentId}`,
  },
  {
    method: "DELETE",
    route: "/projects/:projectId/environments/:environmentId",
    roles: ADMIN_ONLY,
    success: 204,
    setup: withEnvironment,
    probe: (p) => `/projects/${p.projectId}/environments/${p.environmentId}`,
  },
  // A copy reaches two environments: the matrix's project keys are bound to one (the default, as keys
  // are unless made otherwise), so only admin keys may; an unbound write key may too
  // (environments.test.ts covers the bindings).
  {
    method: "POST",
    route: "/projects/:projectId/flags/:flagName/copy",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withFlagAndStaging,
    body: () => ({ from: "production", to: "staging" }),
    probe: (p) => `/projects/${p.projectId}/flags/${p.flagName}?environment=staging`,
  },
  // Webhooks (extension)
  {
    method: "POST",
    route: "/projects/:projectId/webhooks",
    roles: ADMIN_ONLY,
    success: 201,
    body: () => ({ url: "http://127.0.0.1:9/new" }),
    probe: (p) => `/projects/${p.projectId}/webhooks`,
  },
  { method: "GET", route: "/projects/:projectId/webhooks", roles: ADMIN_ONLY, success: 200 },
  {
    method: "GET",
    route: "/projects/:projectId/webhooks/:webhookId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withWebhook,
  },
  {
    method: "PATCH",
    route: "/projects/:projectId/webhooks/:webhookId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withWebhook,
    body: () => ({ description: "changed", enabled: false }),
    probe: (p) => `/projects/${p.projectId}/webhooks/${p.webhookId}`,
  },
  {
    method: "DELETE",
    route: "/projects/:projectId/webhooks/:webhookId",
    roles: ADMIN_ONLY,
    success: 204,
    setup: withWebhook,
    probe: (p) => `/projects/${p.projectId}/webhooks/${p.webhookId}`,
  },
  {
    method: "GET",
    route: "/projects/:projectId/webhooks/:webhookId/deliveries",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withWebhook,
  },
  {
    method: "GET",
    route: "/projects/:projectId/webhooks/:webhookId/deliveries/:deliveryId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withDelivery,
  },
  {
    method: "POST",
    route: "/projects/:projectId/webhooks/:webhookId/test",
    roles: ADMIN_ONLY,
    success: 202,
    setup: withWebhook,
    probe: (p) => `/projects/${p.projectId}/webhooks/${p.webhookId}/deliveries`,
  },
  // History
  { method: "GET", route: "/projects/:projectId/events", roles: READERS, success: 200 },
  {
    method: "GET",
    route: "/projects/:projectId/flags/:flagName/events",
    roles: READERS,
    success: 200,
    setup: withFlag,
  },
  // Flags
  { method: "GET", route: "/projects/:projectId/flags", roles: READERS, success: 200 },
  {
    method: "POST",
    route: "/projects/:projectId/flags/:flagName",
    roles: WRITERS,
    success: 201,
    setup: async () => ({ flagName: "fresh-flag" }),
    body: () => ({ description: "created by the matrix" }),
    probe: (p) => `/projects/${p.projectId}/flags/fresh-flag`,
  },
  { method: "GET", route: "/projects/:projectId/flags/:flagName", roles: READERS, success: 200, setup: withFlag },
  {
    method: "PATCH",
    route: "/projects/:projectId/flags/:flagName",
    roles: WRITERS,
    success: 200,
    setup: withFlag,
    body: () => ({ description: "changed", status: "enabled", addActors: ["u1"] }),
    probe: (p) => `/projects/${p.projectId}/flags/${p.flagName}`,
  },
  {
    method: "DELETE",
    route: "/projects/:projectId/flags/:flagName",
    roles: WRITERS,
    success: 204,
    setup: withFlag,
    probe: (p) => `/projects/${p.projectId}/flags/${p.flagName}`,
  },
  // Evaluation
  {
    method: "GET",
    route: "/projects/:projectId/flags/:flagName/check",
    roles: CHECKERS,
    success: 200,
    setup: withFlag,
  },
  // Cross listings
  {
    method: "GET",
    route: "/projects/:projectId/flags/:flagName/segments",
    roles: READERS,
    success: 200,
    setup: withFlag,
  },
  {
    method: "GET",
    route: "/projects/:projectId/actors/:actorId/flags",
    roles: READERS,
    success: 200,
    setup: withActor,
  },
  {
    method: "GET",
    route: "/projects/:projectId/actors/:actorId/segments",
    roles: READERS,
    success: 200,
    setup: withActor,
  },
  {
    method: "GET",
    route: "/projects/:projectId/segments/:segmentId/flags",
    roles: READERS,
    success: 200,
    setup: withSegment,
  },
  // Actors (extension)
  { method: "GET", route: "/projects/:projectId/actors/:actorId", roles: READERS, success: 200, setup: withActor },
  {
    method: "PUT",
    route: "/projects/:projectId/actors/:actorId",
    roles: WRITERS,
    success: 201,
    setup: async () => ({ actorId: "new-actor" }),
    body: () => ({ name: "New Actor", imageURL: "https://example.com/a.png" }),
    probe: (p) => `/projects/${p.projectId}/actors/new-actor`,
  },
  // Console extensions: member lists and explanations
  {
    method: "GET",
    route: "/projects/:projectId/flags/:flagName/actors",
    roles: READERS,
    success: 200,
    setup: withFlag,
  },
  {
    method: "GET",
    route: "/projects/:projectId/flags/:flagName/explain",
    roles: READERS,
    success: 200,
    setup: withFlag,
  },
  {
    method: "GET",
    route: "/projects/:projectId/segments/:segmentId/actors",
    roles: READERS,
    success: 200,
    setup: withSegment,
  },
  // Segments
  { method: "GET", route: "/projects/:projectId/segments", roles: READERS, success: 200 },
  {
    method: "POST",
    route: "/projects/:projectId/segments",
    roles: WRITERS,
    success: 201,
    body: () => ({ name: "fresh-segment", description: "created by the matrix" }),
    probe: (p) => `/projects/${p.projectId}/segments`,
  },
  {
    method: "GET",
    route: "/projects/:projectId/segments/:segmentId",
    roles: READERS,
    success: 200,
    setup: withSegment,
  },
  {
    method: "PATCH",
    route: "/projects/:projectId/segments/:segmentId",
    roles: WRITERS,
    success: 200,
    setup: withSegment,
    body: () => ({ description: "changed", addActors: ["u1"] }),
    probe: (p) => `/projects/${p.projectId}/segments/${p.segmentId}`,
  },
  {
    method: "DELETE",
    route: "/projects/:projectId/segments/:segmentId",
    roles: WRITERS,
    success: 204,
    setup: withSegment,
    probe: (p) => `/projects/${p.projectId}/segments/${p.segmentId}`,
  },
  // Change requests (extension). Reviews are people's only (no key may): change-requests.test.ts covers them.
  { method: "GET", route: "/projects/:projectId/change-requests", roles: READERS, success: 200 },
  {
    method: "POST",
    route: "/projects/:projectId/change-requests",
    roles: WRITERS,
    success: 201,
    setup: withFlag,
    body: () => ({
      environment: "production",
      title: "On",
      changes: [{ flag: "some-flag", patch: { status: "enabled" } }],
    }),
    probe: (p) => `/projects/${p.projectId}/change-requests`,
  },
  {
    method: "GET",
    route: "/projects/:projectId/change-requests/:changeRequestId",
    roles: READERS,
    success: 200,
    setup: withChangeRequest,
  },
  // Only its author changes a request (here the admin key, which made it).
  {
    method: "PATCH",
    route: "/projects/:projectId/change-requests/:changeRequestId",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withChangeRequest,
    body: () => ({ title: "On, now" }),
    probe: (p) => `/projects/${p.projectId}/change-requests/${p.changeRequestId}`,
  },
  {
    method: "POST",
    route: "/projects/:projectId/change-requests/:changeRequestId/apply",
    roles: WRITERS,
    success: 200,
    setup: withChangeRequest,
    body: () => ({}),
    probe: (p) => `/projects/${p.projectId}/change-requests/${p.changeRequestId}`,
  },
  // Its author or a project admin.
  {
    method: "POST",
    route: "/projects/:projectId/change-requests/:changeRequestId/cancel",
    roles: ADMIN_ONLY,
    success: 200,
    setup: withChangeRequest,
    probe: (p) => `/projects/${p.projectId}/change-requests/${p.changeRequestId}`,
  },
  { method: "GET", route: "/projects/:projectId/schedule", roles: READERS, success: 200 },
  // Flags as code (extension)
  { method: "GET", route: "/projects/:projectId/export", roles: READERS, success: 200 },
  { method: "GET", route: "/projects/:projectId/flagd.json", roles: READERS, success: 200 },
  // Apply reaches every environment: the matrix's keys are bound to one, so only admin keys may
  // (project-apply.test.ts covers unbound write keys).
  {
    method: "POST",
    route: "/projects/:projectId/apply",
    roles: ADMIN_ONLY,
    success: 200,
    setup: async (server, projectId) => {
      await withFlag(server, projectId);
      const exported = await admin(server, "GET", `/projects/${projectId}/export`);
      const document = exported.body;
      document.flags[0].description = "applied by the matrix";
      return { document: JSON.stringify(document) };
    },
    // A project that was not set up (a missing one) gets a document of its own id with no flag.
    body: (p) =>
      p.document === undefined
        ? {
            version: 1,
            project: { id: p.projectId, name: "Missing" },
            environments: [
              {
                id: "production",
                name: "Production",
                description: "",
                default: true,
                protected: false,
                requiredApprovals: 0,
                allowSelfApproval: false,
              },
            ],
            segments: [],
            flags: [],
          }
        : JSON.parse(p.document),
    probe: (p) => `/projects/${p.projectId}/flags/some-flag`,
  },
  // Usage and lifecycle (extension)
  {
    method: "POST",
    route: "/projects/:projectId/usage",
    roles: READERS,
    success: 200,
    setup: withFlag,
    body: () => ({ counts: [{ flag: "some-flag", variant: "on", minute: new Date().toISOString(), count: 1 }] }),
  },
  {
    method: "GET",
    route: "/projects/:projectId/flags/:flagName/usage",
    roles: READERS,
    success: 200,
    setup: withFlag,
  },
  {
    method: "GET",
    route: "/projects/:projectId/usage",
    roles: READERS,
    success: 200,
    setup: withFlag,
    query: "?flags=some-flag",
  },
  {
    method: "POST",
    route: "/projects/:projectId/flags/:flagName/archive",
    roles: WRITERS,
    success: 200,
    setup: withFlag,
    probe: (p) => `/projects/${p.projectId}/flags/${p.flagName}`,
  },
  {
    method: "POST",
    route: "/projects/:projectId/flags/:flagName/restore",
    roles: WRITERS,
    success: 200,
    setup: async (server, projectId) => {
      const params = await withFlag(server, projectId);
      await admin(server, "POST", `/projects/${projectId}/flags/some-flag/archive`);
      return params;
    },
    probe: (p) => `/projects/${p.projectId}/flags/${p.flagName}`,
  },
];

/** Fastify answers HEAD for every GET route; HEAD must be guarded exactly like its GET. */
const HEAD_OPERATIONS: readonly Operation[] = OPERATIONS.filter((op) => op.method === "GET").map((op) => ({
  method: "HEAD",
  route: op.route,
  roles: op.roles,
  success: op.success,
  ...(op.setup ? { setup: op.setup } : {}),
  ...(op.query ? { query: op.query } : {}),
}));

const MATRIX: readonly Operation[] = [...OPERATIONS, ...HEAD_OPERATIONS];

const scoped = (op: Operation) => op.route.includes(":projectId");
const display = (op: Operation) => `${op.method} ${op.route.replace(/:(\w+)/g, "{$1}")}`;
const pathOf = (op: Operation, params: Params) =>
  op.route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? DEFAULT_PARAMS[name] ?? name)) +
  (op.query ?? "");

function expectUnauthorized(res: ApiResponse, context: string): void {
  assert.equal(res.status, 401, `${context}: ${res.status} ${res.text}`);
  expectProblem(res, 401, "unauthorized");
  assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/, `${context}: WWW-Authenticate`);
}

function expectForbidden(res: ApiResponse, method: string, context: string): void {
  if (method === "HEAD") {
    assert.equal(res.status, 403, `${context}: ${res.status}`);
    assert.match(res.headers.get("content-type") ?? "", /^application\/problem\+json/, context);
    return;
  }
  assert.equal(res.status, 403, `${context}: ${res.status} ${res.text}`);
  expectProblem(res, 403, "forbidden");
}

for (const dialect of DIALECTS) {
  describe(`authentication and roles [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
    });
    after(() => server.close());

    test("the matrix lists every operation the server registers (from /openapi.json)", async () => {
      const res = await server.request("GET", "/openapi.json", { key: null });
      assert.equal(res.status, 200);
      const documented: string[] = [];
      for (const [path, item] of Object.entries(res.body.paths as Record<string, Record<string, unknown>>)) {
        if (path === "/healthz" || path === "/readyz" || path === "/openapi.json") continue;
        // Public: the project document's JSON Schema, for editors (below, and project-document.test.ts).
        if (path === "/schemas/project-document.json") continue;
        // OFREP takes its project from the key, not the path; ofrep.test.ts covers its authentication.
        if (path.startsWith("/ofrep/")) continue;
        // A stream's answer never ends; stream.test.ts covers its authentication.
        if (path.endsWith("/stream")) continue;
        // A person's own routes (no key may use them) and sign-in (no key at all): people.test.ts and
        // sessions.test.ts cover them; below, every key is refused them.
        if (path === "/users/me" || path.startsWith("/users/me/") || path.startsWith("/auth/")) continue;
        // A change request's reviews are people's (no key may review): change-requests.test.ts covers them.
        if (path.endsWith("/change-requests/{changeRequestId}/reviews")) continue;
        for (const method of Object.keys(item)) {
          if (["get", "put", "post", "delete", "patch", "head", "options"].includes(method)) {
            documented.push(`${method.toUpperCase()} ${path}`);
          }
        }
      }
      const listed = OPERATIONS.map(display);
      assert.deepEqual([...documented].sort(), [...listed].sort());
      for (const op of MATRIX) {
        assert.ok(server.service.app.hasRoute({ method: op.method, url: op.route }), `${display(op)} is registered`);
      }
    });

    test("no key, the admin key included, may use a person's own routes (403: sign in, or a personal key)", async () => {
      const home = await createProject(server);
      for (const key of [ADMIN_KEY, (await createKey(server, home, "write")).key]) {
        for (const [method, path] of [
          ["GET", "/users/me"],
          ["GET", "/users/me/keys"],
          ["POST", "/users/me/keys"],
          ["DELETE", "/users/me/keys/key_x"],
          ["DELETE", "/users/me/sessions"],
        ] as const) {
          const res = await server.request(method, path, {
            key,
            ...(method === "POST" ? { body: { name: "k" } } : {}),
          });
          expectProblem(res, 403, "forbidden");
        }
      }
    });

    // Each case makes its own projects and keys: they run eight at a time (a few thousand requests; one at a
    // time they took two minutes a database).
    describe("role × operation matrix", { concurrency: 8 }, () => {
      for (const op of MATRIX) {
        for (const role of ROLES) {
          const targets = scoped(op) ? (["own", "other"] as const) : (["none"] as const);
          for (const target of targets) {
            const allowed = role === "admin" || (op.roles.includes(role) && target !== "other");
            const where =
              target === "none" ? "" : target === "own" ? " on its own project" : " on another existing project";
            const name = `${role} key${where}: ${display(op)} → ${allowed ? op.success : "403 forbidden"}`;
            test(name, async () => {
              const home = await createProject(server);
              const other = await createProject(server);
              const key = role === "admin" ? ADMIN_KEY : (await createKey(server, home, role)).key;
              const projectId = target === "other" ? other : home;
              const params: Params = { projectId, ...(op.setup ? await op.setup(server, projectId) : {}) };
              const path = pathOf(op, params);
              const probePath = op.probe?.(params);
              const before = probePath ? await server.request("GET", probePath) : undefined;
              const res = await server.request(op.method, path, {
                key,
                ...(op.body ? { body: op.body(params) } : {}),
              });
              if (allowed) {
                assert.equal(res.status, op.success, `${name}: ${res.status} ${res.text}`);
              } else {
                expectForbidden(res, op.method, name);
                if (probePath && before) {
                  const afterwards = await server.request("GET", probePath);
                  assert.equal(afterwards.status, before.status, `a refused ${display(op)} changed ${probePath}`);
                  assert.deepEqual(afterwards.body, before.body, `a refused ${display(op)} changed ${probePath}`);
                }
              }
            });
          }
        }
      }
    });

    describe("no key, or an unknown key, is 401 on every operation", { concurrency: 8 }, () => {
      for (const op of MATRIX) {
        test(`no Authorization: ${display(op)} → 401`, async () => {
          const projectId = await createProject(server);
          const params: Params = { projectId, ...(op.setup ? await op.setup(server, projectId) : {}) };
          const res = await server.request(op.method, pathOf(op, params), {
            key: null,
            ...(op.body ? { body: op.body(params) } : {}),
          });
          if (op.method === "HEAD") {
            assert.equal(res.status, 401);
            assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
          } else expectUnauthorized(res, display(op));
        });
        test(`unknown key: ${display(op)} → 401`, async () => {
          const projectId = await createProject(server);
          const params: Params = { projectId, ...(op.setup ? await op.setup(server, projectId) : {}) };
          const res = await server.request(op.method, pathOf(op, params), {
            key: `fsk_${randomBytes(32).toString("base64url")}`,
            ...(op.body ? { body: op.body(params) } : {}),
          });
          if (op.method === "HEAD") {
            assert.equal(res.status, 401);
            assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
          } else expectUnauthorized(res, display(op));
        });
      }
    });

    describe("a project key never reaches a project that does not exist (403, no existence leak)", {
      concurrency: 8,
    }, () => {
      for (const op of OPERATIONS.filter(scoped)) {
        for (const role of ["write", "read", "check"] as const) {
          test(`${role} key: ${display(op)} on a missing project → 403 forbidden`, async () => {
            const home = await createProject(server);
            const { key } = await createKey(server, home, role);
            const params: Params = { projectId: unique("missing") };
            const res = await server.request(op.method, pathOf(op, params), {
              key,
              ...(op.body ? { body: op.body(params) } : {}),
            });
            expectForbidden(res, op.method, display(op));
          });
        }
      }

      test("the answer for a missing project is the same as for an existing foreign one", async () => {
        const home = await createProject(server);
        const other = await createProject(server);
        await admin(server, "POST", `/projects/${other}/flags/some-flag`, {});
        const { key } = await createKey(server, home, "read");
        const existing = await server.request("GET", `/projects/${other}/flags/some-flag`, { key });
        const missing = await server.request("GET", `/projects/${unique("missing")}/flags/some-flag`, { key });
        expectProblem(existing, 403, "forbidden");
        expectProblem(missing, 403, "forbidden");
        assert.equal(missing.body.title, existing.body.title);
        assert.equal(missing.body.type, existing.body.type);
      });
    });

    describe("admin on a project that does not exist → 404 project_not_found", () => {
      for (const op of OPERATIONS.filter(scoped)) {
        test(`admin: ${display(op)} on a missing project → 404 project_not_found`, async () => {
          const params: Params = { projectId: unique("missing") };
          const res = await server.request(op.method, pathOf(op, params), {
            ...(op.body ? { body: op.body(params) } : {}),
          });
          expectProblem(res, 404, "project_not_found");
          if (op.method !== "GET") {
            const again = await server.request("GET", `/projects/${params.projectId}`);
            expectProblem(again, 404, "project_not_found");
          }
        });
      }
    });

    describe("malformed Authorization headers → 401", () => {
      const cases: Array<[string, (valid: string) => string]> = [
        ["Basic with a valid key", (valid) => `Basic ${valid}`],
        ["Basic x", () => "Basic x"],
        ["Bearer with no token", () => "Bearer"],
        ["Bearer and a space, no token", () => "Bearer "],
        ["Bearer with two tokens", (valid) => `Bearer ${valid} b`],
        ["Bearer a b", () => "Bearer a b"],
        ["the bare key without a scheme", (valid) => valid],
        ["empty header", () => ""],
      ];
      for (const [label, header] of cases) {
        test(`${label} → 401 unauthorized`, async () => {
          const project = await createProject(server);
          const { key } = await createKey(server, project, "write");
          for (const valid of [ADMIN_KEY, key]) {
            const res = await server.request("GET", `/projects/${project}/flags`, {
              key: null,
              headers: { authorization: header(valid) },
            });
            expectUnauthorized(res, `${label} (${valid === ADMIN_KEY ? "admin" : "write"} key)`);
          }
          // The same key, sent properly, works: the header form is what failed.
          const ok = await server.request("GET", `/projects/${project}/flags`, { key });
          assert.equal(ok.status, 200);
        });
      }
    });

    test("missing Authorization → 401 unauthorized problem with WWW-Authenticate: Bearer", async () => {
      const project = await createProject(server);
      const res = await server.request("GET", `/projects/${project}/flags`, { key: null });
      expectUnauthorized(res, "no Authorization");
      assert.equal(res.body.status, 401);
      assert.equal(res.body.code, "unauthorized");
    });

    test("unknown key → 401; a key of the wrong shape → 401", async () => {
      const project = await createProject(server);
      for (const key of [`fsk_${randomBytes(32).toString("base64url")}`, "not-a-key", ADMIN_KEY.slice(0, -1)]) {
        expectUnauthorized(await server.request("GET", `/projects/${project}/flags`, { key }), key);
      }
    });

    test("a revoked key stops working at once (401) while the project's other keys keep working", async () => {
      const project = await createProject(server);
      await admin(server, "POST", `/projects/${project}/flags/some-flag`, { description: "original" });
      const doomed = await createKey(server, project, "write");
      const kept = await createKey(server, project, "write");
      const checker = await createKey(server, project, "check");
      const path = `/projects/${project}/flags/some-flag`;
      assert.equal((await server.request("GET", path, { key: doomed.key })).status, 200);

      const revoke = await server.request("DELETE", `/projects/${project}/keys/${doomed.id}`);
      assert.equal(revoke.status, 204);
      assert.equal(revoke.text, "");

      expectUnauthorized(await server.request("GET", path, { key: doomed.key }), "revoked key, read");
      expectUnauthorized(
        await server.request("PATCH", path, { key: doomed.key, body: { description: "after revoke" } }),
        "revoked key, write",
      );
      expectUnauthorized(await server.request("GET", `${path}/check`, { key: doomed.key }), "revoked key, check");
      const unchanged = await server.request("GET", path);
      assert.equal(unchanged.body.description, "original", "the revoked key's PATCH changed nothing");

      assert.equal((await server.request("GET", path, { key: kept.key })).status, 200);
      const patched = await server.request("PATCH", path, { key: kept.key, body: { description: "still works" } });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.description, "still works");
      assert.equal((await server.request("GET", `${path}/check`, { key: checker.key })).status, 200);
      assert.equal((await server.request("GET", path)).status, 200, "admin key still works");
    });

    test("a revoked key is 401 (not 403) on other projects too", async () => {
      const project = await createProject(server);
      const other = await createProject(server);
      const doomed = await createKey(server, project, "read");
      expectProblem(await server.request("GET", `/projects/${other}/flags`, { key: doomed.key }), 403, "forbidden");
      assert.equal((await server.request("DELETE", `/projects/${project}/keys/${doomed.id}`)).status, 204);
      expectUnauthorized(await server.request("GET", `/projects/${other}/flags`, { key: doomed.key }), "other");
      expectUnauthorized(await server.request("GET", "/projects", { key: doomed.key }), "GET /projects");
    });

    test("a project key used on its own project works with every role it holds, and only there", async () => {
      const project = await createProject(server);
      const other = await createProject(server);
      await admin(server, "POST", `/projects/${project}/flags/shared-name`, {});
      await admin(server, "POST", `/projects/${other}/flags/shared-name`, {});
      for (const role of ["write", "read", "check"] as const) {
        const { key } = await createKey(server, project, role);
        const own = await server.request("GET", `/projects/${project}/flags/shared-name/check`, { key });
        assert.equal(own.status, 200, `${role} on own project`);
        assert.deepEqual(own.body, { enabled: false });
        const foreign = await server.request("GET", `/projects/${other}/flags/shared-name/check`, { key });
        expectProblem(foreign, 403, "forbidden");
      }
    });

    test("project matching is exact: a key of one project does not reach a project whose id differs in case", async () => {
      const suffix = randomBytes(4).toString("hex");
      const upper = await createProject(server, `Case-${suffix}`);
      const lower = await createProject(server, `case-${suffix}`);
      const { key } = await createKey(server, upper, "write");
      assert.equal((await server.request("GET", `/projects/${upper}/flags`, { key })).status, 200);
      expectProblem(await server.request("GET", `/projects/${lower}/flags`, { key }), 403, "forbidden");
      expectProblem(
        await server.request("POST", `/projects/${lower}/flags/sneaky`, { key, body: {} }),
        403,
        "forbidden",
      );
      expectProblem(await server.request("GET", `/projects/${lower}/flags/sneaky`), 404, "flag_not_found");
    });

    test("a forbidden answer reveals nothing of the resource", async () => {
      const project = await createProject(server);
      const other = await createProject(server);
      await admin(server, "POST", `/projects/${other}/flags/secret-flag`, { description: "top secret text" });
      const { key } = await createKey(server, project, "write");
      const res = await server.request("GET", `/projects/${other}/flags/secret-flag`, { key });
      expectProblem(res, 403, "forbidden");
      assert.ok(!res.text.includes("top secret text"));
    });

    test("/healthz, /readyz, /openapi.json and the project document's schema need no key", async () => {
      const health = await server.request("GET", "/healthz", { key: null });
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: "ok" });
      const ready = await server.request("GET", "/readyz", { key: null });
      assert.equal(ready.status, 200);
      const openapi = await server.request("GET", "/openapi.json", { key: null });
      assert.equal(openapi.status, 200);
      assert.match(String(openapi.body.openapi), /^3\.1\./);
      const schema = await server.request("GET", "/schemas/project-document.json", { key: null });
      assert.equal(schema.status, 200);
    });

    describe("people × operation matrix: sessions and personal keys (docs/people.md)", { concurrency: 8 }, () => {
      // Who: an admin's session; members' sessions with an admin, write or read grant on the project, or
      // none; a disabled person's session; a writer's personal key of no project (role write); an admin's
      // personal key of no project with role read (a key never holds more than its role).
      const CALLERS = [
        "admin",
        "project admin",
        "writer",
        "reader",
        "member without a grant",
        "disabled person",
        "writer's write key",
        "admin's read key",
      ] as const;
      type Caller = (typeof CALLERS)[number];
      const GRANT: Partial<Record<Caller, "admin" | "write" | "read">> = {
        "project admin": "admin",
        writer: "write",
        reader: "read",
        "writer's write key": "write",
      };
      const callers = new Map<Caller, { userId: string; options: RequestOptions }>();

      before(async () => {
        const admin = await createPerson(server, { role: "admin" });
        const adminCookie = await signIn(server, admin.email);
        const writer = await createPerson(server);
        const writerCookie = await signIn(server, writer.email);
        const session = async () => {
          const person = await createPerson(server);
          return { userId: person.id, options: asSession(await signIn(server, person.email)) };
        };
        callers.set("admin", { userId: admin.id, options: asSession(adminCookie) });
        callers.set("writer", { userId: writer.id, options: asSession(writerCookie) });
        for (const caller of ["project admin", "reader", "member without a grant", "disabled person"] as const)
          callers.set(caller, await session());
        const disabled = callers.get("disabled person")!;
        assert.equal(
          (await server.request("PATCH", `/users/${disabled.userId}`, { body: { disabled: true } })).status,
          200,
        );
        const writerKey = await personalKey(server, writerCookie, { role: "write" });
        callers.set("writer's write key", { userId: writer.id, options: { key: writerKey.key } });
        const adminKey = await personalKey(server, adminCookie, { role: "read" });
        callers.set("admin's read key", { userId: admin.id, options: { key: adminKey.key } });
      });

      /** What the caller gets: the operation's success, or the refusal's status. */
      const expected = (op: Operation, caller: Caller): number => {
        if (caller === "disabled person") return 401;
        const listing = op.route === "/projects" && (op.method === "GET" || op.method === "HEAD");
        if (!scoped(op)) {
          if (op.route === "/whoami" || listing) return op.success;
          return caller === "admin" ? op.success : 403;
        }
        if (caller === "member without a grant") return 404;
        // Only its author changes a change request, and the matrix's are the admin key's.
        if (op.method === "PATCH" && op.route.includes("/change-requests/")) return 403;
        if (caller === "admin" || caller === "project admin") return op.success;
        const role = caller === "reader" || caller === "admin's read key" ? "read" : "write";
        // A copy writes another environment than the one a project key is bound to, and apply every
        // environment, so they need an unbound key; people and their keys of no project are bound to none.
        if (op.route.endsWith("/copy") || op.route.endsWith("/apply")) return role === "write" ? op.success : 403;
        return op.roles.includes(role) ? op.success : 403;
      };

      for (const op of MATRIX) {
        for (const caller of CALLERS) {
          const name = `${caller}: ${display(op)} → ${expected(op, caller)}`;
          test(name, async () => {
            const projectId = await createProject(server);
            const who = callers.get(caller)!;
            const role = GRANT[caller];
            if (role !== undefined) await grant(server, projectId, who.userId, role);
            const params: Params = { projectId, ...(op.setup ? await op.setup(server, projectId) : {}) };
            const probePath = op.probe?.(params);
            const before = probePath ? await server.request("GET", probePath) : undefined;
            const res = await server.request(op.method, pathOf(op, params), {
              ...who.options,
              ...(op.body ? { body: op.body(params) } : {}),
            });
            const want = expected(op, caller);
            assert.equal(res.status, want, `${name}: ${res.status} ${res.text}`);
            if (want === 404 && op.method !== "HEAD") expectProblem(res, 404, "project_not_found");
            if (want >= 400 && probePath && before) {
              const afterwards = await server.request("GET", probePath);
              assert.deepEqual(afterwards.body, before.body, `a refused ${display(op)} changed ${probePath}`);
            }
          });
        }
      }
    });
  });
}
