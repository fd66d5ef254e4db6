// Sign-in, two ways. A person signs in with single sign-on or a password: the server sets an HttpOnly
// session cookie the console never sees; its requests carry no Authorization header and the browser sends
// the cookie (fetch's default same-origin credentials). An API key (a service key, or a person's own) lives
// in sessionStorage only (never localStorage, never a URL) and is sent as a bearer token. `GET /whoami`
// names the caller either way: the key's role and project, and for a person their account and grants.
// Every request goes through the SDK (@flagstaff/sdk), whose shapes are core's schemas.
import {
  type FetchLike,
  FlagstaffClient,
  FlagstaffError,
  type GrantRole,
  isFlagstaffError,
  type Person,
  type WhoAmI,
  type WhoAmIGrant,
} from "@flagstaff/sdk";

export type Role = GrantRole;

export interface Session {
  /** The API key signed in with; undefined when a person signed in (the browser holds their session cookie). */
  key?: string;
  /** The key's role (undefined for a person's session: their rights are `user.role` and `grants`). */
  role?: Role;
  /** The key's name, as whoami answered it. */
  name?: string;
  /** The key's project (project keys), or the project last opened. */
  project: string | undefined;
  /** The environment the key is bound to (whoami's `environment`); null or absent: bound to none. */
  environment?: string | null;
  /** The person signed in, or whose personal key this is. */
  user?: Person;
  /** The person's project grants, as whoami answered them. */
  grants?: WhoAmIGrant[];
}

const STORAGE = "flagstaff.console.session";

/** A key sign-in saved in this tab; a person's session is not saved (the cookie is the credential). */
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
  if (session?.key === undefined) sessionStorage.removeItem(STORAGE);
  else sessionStorage.setItem(STORAGE, JSON.stringify(session));
}

/** How a key is shown: its first characters only, then one ellipsis ("fsk_WjYa…"). */
export function maskKey(key: string): string {
  return key.length <= 10 ? "•".repeat(key.length) : `${key.slice(0, 8)}…`;
}

export const baseUrl = (): string => window.location.origin;

export interface Connection {
  /**
   * The API, acting on the selected environment: the SDK names it (`?environment=`) in every flag call and
   * in a flag's segment list. What is project-wide (segments, actors, keys, the history, people, access,
   * personal keys, signing in) does not take it.
   */
  client: FlagstaffClient;
  /** The selected environment, or undefined outside a project (the key's own, or the default, then). */
  environment: string | undefined;
  /** The same API acting on another environment (Copy to… reads the target's configuration with it). */
  clientIn(environment: string): FlagstaffClient;
}

export interface Observer {
  /** The key or the session was refused (401): revoked, expired or ended elsewhere. */
  unauthorized(): void;
  /** 503 or no answer at all. */
  unavailable(reason: string): void;
  /** Any other answer. */
  answered(): void;
}

/** The `code` of a problem answer, read from a copy (the caller still reads the answer itself). */
async function problemCode(response: Response): Promise<unknown> {
  try {
    return ((await response.clone().json()) as { code?: unknown } | null)?.code;
  } catch {
    return undefined;
  }
}

/** A connection with a key, or with the session cookie when `key` is undefined. */
export function connect(key: string | undefined, observer?: Observer, environment?: string): Connection {
  const fetchImpl: FetchLike = async (url, init) => {
    let response: Response;
    try {
      response = await globalThis.fetch(url, init);
    } catch (error) {
      observer?.unavailable("The server cannot be reached.");
      throw error;
    }
    // A wrong current password (changing one's own) is a 401 too, but the session lives: only the others sign out.
    if (response.status === 401) {
      if ((await problemCode(response)) !== "invalid_credentials") observer?.unauthorized();
    } else if (response.status === 503) observer?.unavailable("The server is unavailable (503).");
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

/** The person's part of a whoami answer, when it has one. */
function personOf(me: WhoAmI): Pick<Session, "user" | "grants"> {
  return me.user ? { user: me.user, grants: me.grants ?? [] } : {};
}

/**
 * Signs in with a key: `GET /whoami` names its role and project (and, for a personal key, its person and
 * their grants). A project key opens its own project; an admin key (no project) opens the project list. A
 * check key may only check flags, so it is refused.
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
    return {
      key,
      role: me.role,
      name: me.name,
      project: me.projectId ?? undefined,
      environment: me.environment,
      ...personOf(me),
    };
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

/**
 * The person signed in by the session cookie, if any (the console cannot read the HttpOnly cookie itself):
 * `GET /auth/session` says whether there is one, 200 either way, then `GET /whoami` names them. Asking
 * whoami first would answer 401 to every signed-out load, which the browser logs as an error.
 */
export async function resumeSession(): Promise<Session | undefined> {
  const { client } = connect(undefined);
  if (!(await client.auth.signedIn())) return undefined;
  try {
    const me = await client.whoami();
    return me.user ? { project: undefined, ...personOf(me) } : undefined;
  } catch (error) {
    if (isFlagstaffError(error) && error.status === 401) return undefined;
    throw error;
  }
}

/** Reads whoami again for a signed-in session: grants given or taken away since show without signing in again. */
export async function refreshSession(session: Session, conn: Connection): Promise<Session> {
  const me = await conn.client.whoami();
  return { ...session, ...personOf(me) };
}
