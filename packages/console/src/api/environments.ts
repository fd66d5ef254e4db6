// Environments as the console uses them: which routes take `?environment=`, the calls the SDK does not make
// yet (the environment list, a flag's copy between environments), and the choice remembered per project.
import { FlagstaffError, type FetchLike, isProblemDetails } from "@flagstaff/sdk";

/** An environment of a project, as `GET /projects/{p}/environments` lists it. */
export interface Environment {
  id: string;
  name: string;
  description: string;
  default: boolean;
}

/**
 * The routes that read or change a flag's configuration in one environment, and so take `?environment=`:
 * the flag list, a flag (create, get, update, delete), its attached actors and segments and its explanation,
 * and the flags on for an actor or a segment. A flag's history is not among them: there `environment` is a
 * filter that would hide the flag's creation, so the console lists every environment's events, each labelled.
 */
const ENVIRONMENT_ROUTE =
  /^\/projects\/[^/]+\/(?:flags(?:\/[^/]+(?:\/(?:actors|segments|explain))?)?|(?:actors|segments)\/[^/]+\/flags)$/;

/** The URL with `environment` set when it is one of those routes; any other URL as it is. */
export function withEnvironment(url: string, environment: string | undefined): string {
  if (environment === undefined) return url;
  const parsed = new URL(url);
  if (!ENVIRONMENT_ROUTE.test(parsed.pathname)) return url;
  parsed.searchParams.set("environment", environment);
  return parsed.toString();
}

/** A request outside the SDK's operations, answered as the SDK answers: the body, or a FlagstaffError. */
export type Send = <T>(
  method: "GET" | "POST",
  path: string,
  options?: { body?: unknown; headers?: Record<string, string> },
) => Promise<{ body: T; etag: string | null }>;

/** A `Send` over a fetch (the console's, which reports 401 and 503) with the key. */
export function sender(baseUrl: string, key: string, fetchImpl: FetchLike): Send {
  return async <T>(
    method: "GET" | "POST",
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const url = `${baseUrl}${path}`;
    const headers: Record<string, string> = {
      accept: "application/json, application/problem+json",
      authorization: `Bearer ${key}`,
      ...options.headers,
    };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new FlagstaffError({ status: 0, code: "network_error", detail: `${method} ${url} failed.`, cause: error });
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return { body: parsed as T, etag: response.headers.get("etag") };
    if (isProblemDetails(parsed)) {
      throw new FlagstaffError({ status: response.status, code: parsed.code, detail: parsed.detail, problem: parsed });
    }
    throw new FlagstaffError({
      status: response.status,
      code: "http_error",
      detail: `${method} ${url} answered ${response.status}.`,
    });
  };
}

const enc = encodeURIComponent;

/** The project's environments in their order, the default among them (at most 20: one page). */
export async function listEnvironments(send: Send, project: string): Promise<Environment[]> {
  const page = await send<{ data: Environment[] }>("GET", `/projects/${enc(project)}/environments?limit=100`);
  return page.body.data;
}

/**
 * Copies a flag's configuration (status, percentages, attached actors and segments) from one environment to
 * another (`POST …/flags/{flag}/copy`), only while the target's configuration still has the ETag `ifMatch`.
 */
export async function copyFlag(
  send: Send,
  project: string,
  flag: string,
  input: { from: string; to: string },
  ifMatch: string | undefined,
): Promise<void> {
  await send("POST", `/projects/${enc(project)}/flags/${enc(flag)}/copy`, {
    body: input,
    headers: ifMatch === undefined ? {} : { "if-match": ifMatch },
  });
}

// ---- The choice, per project ----

/** The environment is not a secret (the key stays in sessionStorage): remembered across tabs and visits. */
const STORAGE_PREFIX = "flagstaff.console.environment.";

export function rememberedEnvironment(project: string): string | undefined {
  try {
    return localStorage.getItem(STORAGE_PREFIX + project) ?? undefined;
  } catch {
    return undefined;
  }
}

export function rememberEnvironment(project: string, environment: string): void {
  try {
    if (rememberedEnvironment(project) !== environment) localStorage.setItem(STORAGE_PREFIX + project, environment);
  } catch {
    // Storage refused (private mode, quota): the choice lasts as long as the page.
  }
}

/**
 * The environments a key may see: its own only when it is bound to one (the server answers 403 for the
 * others), every one otherwise.
 */
export function visibleEnvironments(all: readonly Environment[], bound: string | null | undefined): Environment[] {
  return bound ? all.filter((e) => e.id === bound) : [...all];
}

/**
 * The environment shown: the one the URL names (a shared link), else the one remembered for the project,
 * else the project's default; each only if the key may see it. Undefined while there is none to show.
 */
export function chooseEnvironment(
  visible: readonly Environment[],
  named: string | null,
  remembered: string | undefined,
): Environment | undefined {
  const find = (id: string | null | undefined) => (id ? visible.find((e) => e.id === id) : undefined);
  return find(named) ?? find(remembered) ?? visible.find((e) => e.default) ?? visible[0];
}
