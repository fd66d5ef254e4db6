// Sign-in: the key lives in sessionStorage only (never localStorage, never a URL). The API has no endpoint
// that names a key's role or project, so sign-in finds the role by probing read-only requests (see roleOf).
import { type FetchLike, FlagstaffClient, FlagstaffError, isFlagstaffError } from "@flagstaff/sdk";
import { Extensions } from "./extensions.js";

export type Role = "admin" | "write" | "read";

export interface Session {
  key: string;
  role: Role;
  /** The key's project (project keys), or the project an admin last opened. */
  project: string | undefined;
}

const STORAGE = "flagstaff.console.session";

export function loadSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE);
    if (!raw) return undefined;
    const value = JSON.parse(raw) as Session;
    return typeof value.key === "string" && typeof value.role === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session | undefined): void {
  if (session === undefined) sessionStorage.removeItem(STORAGE);
  else sessionStorage.setItem(STORAGE, JSON.stringify(session));
}

/** How a key is shown: its first characters only. */
export function maskKey(key: string): string {
  return key.length <= 10 ? "•".repeat(key.length) : `${key.slice(0, 8)}…${key.slice(-2)}`;
}

export const baseUrl = (): string => window.location.origin;

export interface Connection {
  client: FlagstaffClient;
  ext: Extensions;
}

export interface Observer {
  /** The key was refused (401): revoked or deleted meanwhile. */
  unauthorized(): void;
  /** 503 or no answer at all. */
  unavailable(reason: string): void;
  /** Any other answer. */
  answered(): void;
}

export function connect(key: string, observer?: Observer): Connection {
  const fetchImpl: FetchLike = async (url, init) => {
    let response: Response;
    try {
      response = await globalThis.fetch(url, init);
    } catch (error) {
      observer?.unavailable("The server cannot be reached.");
      throw error;
    }
    if (response.status === 401) observer?.unauthorized();
    else if (response.status === 503) observer?.unavailable("The server is unavailable (503).");
    else observer?.answered();
    return response;
  };
  return {
    client: new FlagstaffClient({ baseUrl: baseUrl(), apiKey: key, fetch: fetchImpl, retries: 1, timeoutMs: 10_000 }),
    ext: new Extensions(baseUrl(), key, fetchImpl),
  };
}

/** A name no flag can have (flag names start with a letter or digit), so probing it never touches a flag. */
const PROBE_FLAG = "-console-role-probe";

/**
 * Finds a key's role by what it may do, with requests that change nothing:
 * admin lists projects; otherwise, in the given project, read may GET the project, write gets 404 (not
 * 403) for a PATCH of a flag that cannot exist, and a check key may only check.
 */
export async function roleOf(key: string, project: string | undefined): Promise<Session> {
  const { client } = connect(key);
  try {
    await client.projects.list().page({ limit: 1 });
    return { key, role: "admin", project: project || undefined };
  } catch (error) {
    if (!isFlagstaffError(error)) throw error;
    if (error.status === 401)
      throw new FlagstaffError({
        status: 401,
        code: "unauthorized",
        detail: "This key is not valid: it is unknown or was revoked.",
      });
    if (error.status !== 403) throw error;
  }
  if (!project) {
    throw new FlagstaffError({
      status: 0,
      code: "project_needed",
      detail: "This is a project key: enter its project id too.",
    });
  }
  try {
    await client.projects.get(project);
  } catch (error) {
    if (!isFlagstaffError(error) || error.status !== 403) throw error;
    try {
      await client.flags.check(project, PROBE_FLAG);
    } catch (inner) {
      if (isFlagstaffError(inner) && inner.status === 403) {
        throw new FlagstaffError({
          status: 403,
          code: "forbidden",
          detail: `This key does not belong to project "${project}".`,
        });
      }
    }
    throw new FlagstaffError({
      status: 403,
      code: "check_key",
      detail:
        "This is a check key: it may only check flags, so it cannot sign in to the console. Use a read, write or admin key.",
    });
  }
  try {
    await client.flags.update(project, PROBE_FLAG, {});
  } catch (error) {
    if (isFlagstaffError(error) && error.status === 403) return { key, role: "read", project };
    if (isFlagstaffError(error) && (error.status === 404 || error.status === 400))
      return { key, role: "write", project };
    throw error;
  }
  return { key, role: "write", project };
}
