// Small tools shared by the environment tests (issue 24): keys bound to an environment, environments,
// flags patched in one environment, and answers read as short strings for compact assertions.
import assert from "node:assert/strict";
import type { ApiResponse, TestServer } from "@flagstaff/test-harness";

export type Role = "write" | "read" | "check";

export interface Key {
  readonly key: string;
  readonly id: string;
  readonly environment: string | null;
}

/**
 * Creates a project key (as admin) bound to `environment`; `undefined` leaves the field out (the project's
 * default), `null` asks for a key bound to none.
 */
export async function bindKey(
  server: Pick<TestServer, "request">,
  project: string,
  role: Role,
  environment?: string | null,
): Promise<Key> {
  const body = {
    role,
    name: `${role} ${environment ?? "unbound"}`,
    ...(environment === undefined ? {} : { environment }),
  };
  const res = await server.request("POST", `/projects/${project}/keys`, { body });
  assert.equal(res.status, 201, res.text);
  return { key: res.body.key, id: res.body.id, environment: res.body.environment };
}

/** Creates an environment (as admin), optionally copied from another; answers it. */
export async function addEnvironment(
  server: Pick<TestServer, "request">,
  project: string,
  id: string,
  extra: { name?: string; description?: string; copyFrom?: string } = {},
): Promise<any> {
  const res = await server.request("POST", `/projects/${project}/environments`, {
    body: { id, name: extra.name ?? id[0]!.toUpperCase() + id.slice(1), ...extra },
  });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** `?environment=<env>` or nothing, for joining to a path (`&` when the path has a query already). */
export function inEnvironment(path: string, environment: string | undefined): string {
  if (environment === undefined) return path;
  return `${path}${path.includes("?") ? "&" : "?"}environment=${encodeURIComponent(environment)}`;
}

/** What a check answers as a short string, through `?environment=` when given: "true", "false" or "<status> <code>". */
export async function checkIn(
  server: Pick<TestServer, "request">,
  project: string,
  flag: string,
  options: { actors?: readonly string[]; environment?: string; key?: string } = {},
): Promise<string> {
  const actors = (options.actors ?? []).map((a) => `actorIds=${encodeURIComponent(a)}`);
  if (options.environment !== undefined) actors.push(`environment=${encodeURIComponent(options.environment)}`);
  const query = actors.length === 0 ? "" : `?${actors.join("&")}`;
  const res = await server.request("GET", `/projects/${project}/flags/${flag}/check${query}`, { key: options.key });
  return outcome(res, () => String(res.body.enabled));
}

/** A response as a short string: `ok()` for a 2xx, "<status> <code>" otherwise. */
export function outcome(res: ApiResponse, ok: () => string = () => String(res.status)): string {
  if (res.status >= 200 && res.status < 300) return ok();
  return `${res.status} ${res.body?.code ?? res.text}`;
}

/** PATCHes a flag in an environment (as admin unless a key is given) and insists on 200; answers the flag. */
export async function patchFlag(
  server: Pick<TestServer, "request">,
  project: string,
  flag: string,
  environment: string | undefined,
  body: unknown,
  key?: string,
): Promise<any> {
  const res = await server.request("PATCH", inEnvironment(`/projects/${project}/flags/${flag}`, environment), {
    body,
    key,
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Creates a segment with members (as admin); answers its id. */
export async function addSegment(
  server: Pick<TestServer, "request">,
  project: string,
  name: string,
  members: string[] = [],
): Promise<string> {
  const res = await server.request("POST", `/projects/${project}/segments`, { body: { name, description: "" } });
  assert.equal(res.status, 201, res.text);
  if (members.length > 0) {
    const added = await server.request("PATCH", `/projects/${project}/segments/${res.body.id}`, {
      body: { addActors: members },
    });
    assert.equal(added.status, 200, added.text);
  }
  return res.body.id as string;
}
