// Sign-in: the key lives in sessionStorage only (never localStorage, never a URL). `GET /whoami` tells the
// console the key's role and, for a project key, its project.
import { type FetchLike, FlagstaffClient, FlagstaffError, isFlagstaffError } from "@flagstaff/sdk";

export type Role = "admin" | "write" | "read";

export interface Session {
  key: string;
  role: Role;
  /** The key's name, as whoami answered it. */
  name?: string;
  /** The key's project (project keys), or the project an admin last opened. */
  project: string | undefined;
  /** The environment the key is bound to (whoami's `environment`); null or absent: bound to none. */
  environment?: string | null;
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
  /**
   * The API, acting on the selected environment: the SDK names it (`?environment=`) in every flag call and
   * in a flag's segment list. What is project-wide (segments, actors, keys, the history) does not take it.
   */
  client: FlagstaffClient;
  /** The selected environment, or undefined outside a project (the key's own, or the default, then). */
  environment: string | undefined;
  /** The same API acting on another environment (Copy to… reads the target's configuration with it). */
  clientIn(environment: string): FlagstaffClient;
}

export interface Observer {
  /** The key was refused (401): revoked or deleted meanwhile. */
  unauthorized(): void;
  /** 503 or no answer at all. */
  unavailable(reason: string): void;
  /** Any other answer. */
  answered(): void;
}

export function connect(key: string, observer?: Observer, environment?: string): Connection {
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
  // Every client of the session shares the fetch above, so every request, in any environment, reports 401 and 503.
  const clientIn = (env: string | undefined) =>
    new FlagstaffClient({
      baseUrl: baseUrl(),
      apiKey: key,
      environment: env,
      fetch: fetchImpl,
      retries: 1,
      timeoutMs: 10_000,
    });
  return { client: clientIn(environment), environment, clientIn };
}

/**
 * Signs in with a key: `GET /whoami` names its role and project. A project key opens its own project; an
 * admin key (no project) opens the project list. A check key may only check flags, so it is refused.
 */
export async function signIn(key: string): Promise<Session> {
  const { client } = connect(key);
  try {
    const me = await client.whoami();
    if (me.role === "check") {
      throw new FlagstaffError({
        status: 403,
        code: "check_key",
        detail:
          "This is a check key: it may only check flags, so it cannot sign in to the console. Use a read, write or admin key.",
      });
    }
    return { key, role: me.role, name: me.name, project: me.projectId ?? undefined, environment: me.environment };
  } catch (error) {
    if (isFlagstaffError(error) && error.status === 401) {
      throw new FlagstaffError({
        status: 401,
        code: "unauthorized",
        detail: "This key is not valid: it is unknown or was revoked.",
      });
    }
    throw error;
  }
}
