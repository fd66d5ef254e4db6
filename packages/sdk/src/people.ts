// People, project access, personal keys and sign-in (docs/people.md), typed from @flagstaff/core/schemas as
// the rest of the client is. A browser on the server's own origin (the console) sends the session cookie
// with these calls by itself; a program uses a key (an admin key, or a person's personal key).
import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type {
  AuthMethods,
  AuthSession,
  CreatedPersonalKey,
  CreatePersonalKeyInput,
  CreateUserInput,
  Grant,
  GrantRole,
  ListOptions,
  Page,
  PersonalKey,
  SetOwnPasswordInput,
  UpdateUserInput,
  User,
} from "./types.js";

/** People (admins: an admin key, an admin's session or key): who may sign in, and as what. */
export class UsersApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(userId: string): string {
    return `/users/${param("userId", userId)}`;
  }

  /** Lists people, oldest first (`GET /users`): iterate it, or call `.page()`. */
  list(options: ListOptions = {}): PageList<User> {
    return new PageList(
      async (page) =>
        (await this.http.request<Page<User>>({ method: "GET", path: "/users", query: pageQuery(page) })).body,
      options.limit,
    );
  }

  /**
   * The person signed in, or whose personal key this is, as this API shows a person: whether they have a
   * password, their last sign-in (`GET /users/me`). Any person may ask, admin or not; a service key may not.
   */
  async me(): Promise<User> {
    return (await this.http.request<User>({ method: "GET", path: "/users/me" })).body;
  }

  /** One person (`GET /users/{userId}`); 404 `user_not_found`. */
  async get(userId: string): Promise<User> {
    return (await this.http.request<User>({ method: "GET", path: this.path(userId) })).body;
  }

  /**
   * Creates a person (`POST /users`): `role` `member` (default) or `admin`, and a password or none (they then
   * sign in with single sign-on or a one-time link). 409 `user_exists` when the e-mail is taken.
   */
  async create(input: CreateUserInput): Promise<User> {
    return (await this.http.request<User>({ method: "POST", path: "/users", body: input })).body;
  }

  /**
   * Changes a person (`PATCH /users/{userId}`): name, role, `disabled`, `password` (null removes it). A new
   * password or `disabled: true` signs them out everywhere; 409 `cannot_change_self` for an admin's own.
   */
  async update(userId: string, input: UpdateUserInput): Promise<User> {
    return (await this.http.request<User>({ method: "PATCH", path: this.path(userId), body: input })).body;
  }

  /** Deletes a person with their grants, sessions and personal keys (`DELETE /users/{userId}`); their history stays. */
  async delete(userId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: this.path(userId) });
  }
}

/** Who may work on a project (its admins): grants of `admin`, `write` or `read` to people. */
export class AccessApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(projectId: string, userId?: string): string {
    const base = `/projects/${param("projectId", projectId)}/access`;
    return userId === undefined ? base : `${base}/${param("userId", userId)}`;
  }

  /** The project's grants, by e-mail (`GET /projects/{projectId}/access`). */
  async list(projectId: string): Promise<Grant[]> {
    return (await this.http.request<{ data: Grant[] }>({ method: "GET", path: this.path(projectId) })).body.data;
  }

  /** Grants a person a role on the project, or changes it (`PUT …/access/{userId}`); 404 `user_not_found`. */
  async grant(projectId: string, userId: string, role: GrantRole): Promise<Grant> {
    const path = this.path(projectId, userId);
    return (await this.http.request<Grant>({ method: "PUT", path, body: { role } })).body;
  }

  /** Removes a person's grant (`DELETE …/access/{userId}`); 404 `grant_not_found` when there was none. */
  async revoke(projectId: string, userId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: this.path(projectId, userId) });
  }
}

/** The signed-in person's own keys (`/users/me/keys`): they act for the person, never with more. */
export class PersonalKeysApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** The person's keys, oldest first, without secrets (`GET /users/me/keys`). */
  async list(): Promise<PersonalKey[]> {
    return (await this.http.request<{ data: PersonalKey[] }>({ method: "GET", path: "/users/me/keys" })).body.data;
  }

  /**
   * Creates a key (`POST /users/me/keys`); the secret is in this answer only. Only a session creates one
   * (a key cannot mint more); never with more than the person holds (403 `forbidden`).
   */
  async create(input: CreatePersonalKeyInput): Promise<CreatedPersonalKey> {
    return (await this.http.request<CreatedPersonalKey>({ method: "POST", path: "/users/me/keys", body: input })).body;
  }

  /** Revokes one of the person's keys (`DELETE /users/me/keys/{keyId}`). */
  async revoke(keyId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: `/users/me/keys/${param("keyId", keyId)}` });
  }
}

/** Signing in and out. The session lives in a cookie the server sets: a browser keeps and sends it. */
export class AuthApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** What the sign-in page offers (`GET /auth/methods`): password sign-in, and single sign-on's label. */
  async methods(): Promise<AuthMethods> {
    return (await this.http.request<AuthMethods>({ method: "GET", path: "/auth/methods", auth: false })).body;
  }

  /**
   * Whether the browser's session cookie signs a person in (`GET /auth/session`): 200 either way, where
   * `whoami` would answer 401, which a browser logs as an error, at every load of a signed-out page.
   */
  async signedIn(): Promise<boolean> {
    return (await this.http.request<AuthSession>({ method: "GET", path: "/auth/session", auth: false })).body.signedIn;
  }

  /**
   * Signs in with an e-mail and a password (`POST /auth/login`): the server sets the session cookie and
   * answers the person. A wrong e-mail or password is 401 `invalid_credentials`; too many, 429
   * `too_many_attempts` (with `Retry-After`). Never retried.
   */
  async login(email: string, password: string): Promise<User> {
    const body = { email, password };
    return (await this.http.request<{ user: User }>({ method: "POST", path: "/auth/login", body, auth: false })).body
      .user;
  }

  /** Ends this session and clears its cookie (`POST /auth/logout`). */
  async logout(): Promise<void> {
    await this.http.request<void>({ method: "POST", path: "/auth/logout", auth: false });
  }

  /**
   * Sets or changes the signed-in person's own password (`PUT /users/me/password`), in a session only (a
   * key is refused, 403). `currentPassword` is needed when they have one: a wrong one is 401
   * `invalid_credentials`, counted as a failed sign-in (429 `too_many_attempts` past the limit, with
   * `retryAfterSeconds`). Never retried, so no attempt is counted twice. The person's other sessions end;
   * this one stays. Answers the person.
   */
  async setPassword(input: SetOwnPasswordInput): Promise<User> {
    const spec = { method: "PUT", path: "/users/me/password", body: input, retries: 0 } as const;
    return (await this.http.request<User>(spec)).body;
  }

  /** Signs the person out everywhere: every session, on every instance (`DELETE /users/me/sessions`). */
  async signOutEverywhere(): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: "/users/me/sessions" });
  }
}
