// People, project access, personal keys and sign-in (docs/people.md): routes the SDK does not cover yet,
// called with the same fetch as the SDK's (so 401 and 503 reach the console's observer), and failing with
// the SDK's FlagstaffError, so that every page shows their problems as it shows the others'.
import {
  type FetchLike,
  FlagstaffError,
  isProblemDetails,
  type KeyRole,
  type Page,
  PageList,
  type PageOptions,
} from "@flagstaff/sdk";

export type PersonRole = "admin" | "member";
export type GrantRole = "admin" | "write" | "read";

/** A person as whoami names them. */
export interface Person {
  id: string;
  email: string;
  name: string;
  role: PersonRole;
}

/** A person as the Users page lists them. */
export interface User extends Person {
  disabled: boolean;
  createdAt: string;
  lastSignInAt: string | null;
  hasPassword: boolean;
}

/** A person's role on a project. */
export interface Grant {
  projectId: string;
  role: GrantRole;
}

/** A grant as a project's Access page lists it. */
export interface ProjectAccess {
  userId: string;
  email: string;
  name: string;
  role: GrantRole;
  createdAt: string;
}

/** A personal key, without its secret. */
export interface PersonalKey {
  id: string;
  name: string;
  role: KeyRole | "admin";
  projectId: string | null;
  environment?: string | null;
  createdAt: string;
}

/** A personal key as created: the only time its secret is shown. */
export interface CreatedPersonalKey extends PersonalKey {
  key: string;
}

export interface AuthMethods {
  password: boolean;
  oidc: { name: string } | null;
}

export interface CreateUserInput {
  email: string;
  name: string;
  role?: PersonRole;
  password?: string;
}

export interface UpdateUserInput {
  name?: string;
  role?: PersonRole;
  disabled?: boolean;
  /** A new password, or null to remove it. */
  password?: string | null;
}

export interface CreatePersonalKeyInput {
  name: string;
  project?: string;
  role?: KeyRole | "admin";
}

const segment = encodeURIComponent;

/** Seconds to wait, from a Retry-After header (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A wait in words: "45 seconds", "2 minutes". */
export function waitText(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

export class PeopleApi {
  constructor(
    private readonly base: string,
    private readonly key: string | undefined,
    private readonly fetchImpl: FetchLike,
  ) {}

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json, application/problem+json" };
    if (this.key !== undefined) headers.authorization = `Bearer ${this.key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const url = `${this.base}${path}`;
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new FlagstaffError({
        status: 0,
        code: "network_error",
        detail: `${method} ${url} failed: the server cannot be reached.`,
        method,
        url,
        cause: error,
      });
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return parsed as T;
    if (isProblemDetails(parsed)) {
      const wait = retryAfterSeconds(response.headers.get("retry-after"));
      throw new FlagstaffError({
        status: response.status,
        code: parsed.code,
        detail: typeof parsed.detail === "string" ? parsed.detail : (parsed.title ?? `HTTP ${response.status}`),
        // The wait travels with the problem, for a message that says how long.
        problem: wait === undefined ? parsed : { ...parsed, retryAfterSeconds: wait },
        method,
        url,
      });
    }
    throw new FlagstaffError({
      status: response.status,
      code: "http_error",
      detail: `${method} ${url} answered ${response.status} without problem details.`,
      method,
      url,
    });
  }

  private list<T>(path: string, limit?: number): PageList<T> {
    return new PageList(async (page: PageOptions) => {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(page)) if (value !== undefined) query.set(name, String(value));
      const qs = query.toString();
      return this.request<Page<T>>("GET", `${path}${qs ? `?${qs}` : ""}`);
    }, limit);
  }

  // ---- Signing in ----

  /** What the sign-in page offers (`GET /auth/methods`). */
  methods(): Promise<AuthMethods> {
    return this.request("GET", "/auth/methods");
  }

  /**
   * Whether the browser's session cookie signs a person in (`GET /auth/session`): 200 either way, where
   * whoami would answer 401, which the browser logs as an error, at every load of a signed-out console.
   */
  async signedIn(): Promise<boolean> {
    return (await this.request<{ signedIn: boolean }>("GET", "/auth/session")).signedIn;
  }

  /** Signs in with a password (`POST /auth/login`); the server sets the session cookie. */
  login(email: string, password: string): Promise<{ user: Person }> {
    return this.request("POST", "/auth/login", { email, password });
  }

  /** Ends this session and clears the cookie (`POST /auth/logout`). */
  async logout(): Promise<void> {
    await this.request("POST", "/auth/logout");
  }

  /** Ends every session of the person, on every instance (`DELETE /users/me/sessions`). */
  async signOutEverywhere(): Promise<void> {
    await this.request("DELETE", "/users/me/sessions");
  }

  // ---- People (admins) ----

  users(limit?: number): PageList<User> {
    return this.list("/users", limit);
  }

  createUser(input: CreateUserInput): Promise<User> {
    return this.request("POST", "/users", input);
  }

  updateUser(userId: string, input: UpdateUserInput): Promise<User> {
    return this.request("PATCH", `/users/${segment(userId)}`, input);
  }

  async deleteUser(userId: string): Promise<void> {
    await this.request("DELETE", `/users/${segment(userId)}`);
  }

  // ---- Project access (project admins) ----

  access(projectId: string): Promise<{ data: ProjectAccess[] }> {
    return this.request("GET", `/projects/${segment(projectId)}/access`);
  }

  grant(projectId: string, userId: string, role: GrantRole): Promise<ProjectAccess> {
    return this.request("PUT", `/projects/${segment(projectId)}/access/${segment(userId)}`, { role });
  }

  async revoke(projectId: string, userId: string): Promise<void> {
    await this.request("DELETE", `/projects/${segment(projectId)}/access/${segment(userId)}`);
  }

  // ---- Oneself (a signed-in person) ----

  /** The person signed in, as the users API shows them: whether they have a password (`GET /users/me`). */
  me(): Promise<User> {
    return this.request("GET", "/users/me");
  }

  /**
   * Sets or changes one's own password, in a session only (`PUT /users/me/password`): the current one is
   * needed when there is one (a wrong one is 401 invalid_credentials, counted like a failed sign-in). The
   * person's other sessions end; this one stays.
   */
  setMyPassword(input: { currentPassword?: string; newPassword: string }): Promise<User> {
    return this.request("PUT", "/users/me/password", input);
  }

  // ---- Personal keys (a signed-in person) ----

  myKeys(): Promise<{ data: PersonalKey[] }> {
    return this.request("GET", "/users/me/keys");
  }

  createMyKey(input: CreatePersonalKeyInput): Promise<CreatedPersonalKey> {
    return this.request("POST", "/users/me/keys", input);
  }

  async revokeMyKey(keyId: string): Promise<void> {
    await this.request("DELETE", `/users/me/keys/${segment(keyId)}`);
  }
}
