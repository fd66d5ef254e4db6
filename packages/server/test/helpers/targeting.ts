// Small tools shared by the targeting tests (issue 25): typed flags made and configured over the API,
// checks with attributes, and refusals read as their codes and paths.
import assert from "node:assert/strict";
import { type ApiResponse, expectProblem, type TestServer } from "@flagstaff/test-harness";
import { inEnvironment } from "./environments.js";

type Server = Pick<TestServer, "request">;

/** Attributes of a check: a value, or a list (`attributes[NAME][]=…` for each element, so a list of one stays one). */
export type QueryAttributes = Record<string, string | readonly string[]>;

/** Creates a flag (as admin) and insists on 201; answers the flag. */
export async function createFlag(server: Server, project: string, name: string, body: unknown = {}): Promise<any> {
  const res = await server.request("POST", `/projects/${project}/flags/${name}`, { body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** A string flag with the given variant keys, each serving its own key as its value. */
export const stringVariants = (...keys: string[]) => keys.map((key) => ({ key, value: key }));

/**
 * The query of a check or explain: actorIds, attributes (brackets written plainly: `attributes[NAME]=value`
 * for a value, `attributes[NAME][]=element` for each element of a list), environment.
 */
export function contextQuery(
  options: { actors?: readonly string[]; attributes?: QueryAttributes; environment?: string } = {},
): string {
  const parts: string[] = [];
  for (const a of options.actors ?? []) parts.push(`actorIds=${encodeURIComponent(a)}`);
  for (const [name, value] of Object.entries(options.attributes ?? {})) {
    const list = typeof value !== "string";
    for (const v of list ? value : [value]) {
      parts.push(`attributes[${encodeURIComponent(name)}]${list ? "[]" : ""}=${encodeURIComponent(v)}`);
    }
  }
  if (options.environment !== undefined) parts.push(`environment=${encodeURIComponent(options.environment)}`);
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}

/** A check's answer (insisting on 200). */
export async function check(
  server: Server,
  project: string,
  flag: string,
  options: { actors?: readonly string[]; attributes?: QueryAttributes; environment?: string; key?: string } = {},
): Promise<any> {
  const res = await server.request("GET", `/projects/${project}/flags/${flag}/check${contextQuery(options)}`, {
    key: options.key,
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** PATCHes a flag (as admin) in an environment; answers the response whatever it is. */
export const patch = (server: Server, project: string, flag: string, body: unknown, environment?: string) =>
  server.request("PATCH", inEnvironment(`/projects/${project}/flags/${flag}`, environment), { body });

/** Insists on a 200 PATCH; answers the flag. */
export async function patchOk(
  server: Server,
  project: string,
  flag: string,
  body: unknown,
  environment?: string,
): Promise<any> {
  const res = await patch(server, project, flag, body, environment);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Sets a flag conditional with these rules (and whatever else `extra` says). */
export const setRules = (
  server: Server,
  project: string,
  flag: string,
  rules: unknown[],
  extra: Record<string, unknown> = {},
  environment?: string,
) => patchOk(server, project, flag, { status: "conditional", rules, ...extra }, environment);

/**
 * Insists on a problem with this status and code whose `errors` include every path given, and whose
 * messages at those paths include the given words (the rule and condition they name); answers the errors.
 */
export function expectRefusal(
  res: ApiResponse,
  status: number,
  code: string,
  expected: Record<string, string | RegExp> = {},
): { path: string; message: string }[] {
  expectProblem(res, status, code);
  const errors = (res.body.errors ?? []) as { path: string; message: string }[];
  for (const [path, words] of Object.entries(expected)) {
    const error = errors.find((e) => e.path === path);
    assert.ok(error, `no error at ${path}: ${res.text}`);
    if (typeof words === "string") assert.ok(error.message.includes(words), `${path}: ${error.message} lacks ${words}`);
    else assert.match(error.message, words, path);
  }
  return errors;
}
