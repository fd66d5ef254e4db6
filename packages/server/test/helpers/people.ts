// Small tools shared by the people tests (docs/people.md): people made by the admin key, password sign-in
// that answers the session cookie, requests made with that cookie as the console makes them, personal keys.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { ApiResponse, RequestOptions, TestServer } from "@flagstaff/test-harness";

type Requester = Pick<TestServer, "request">;

/** The tables that people and sign-in write to. */
export const PEOPLE_TABLES = ["users", "sessions", "sign_in_tokens", "sign_in_failures", "events", "api_keys"] as const;

/**
 * How many rows each of `tables` holds, read from the server's database: equal before and after a refused
 * request shows that it wrote nothing. (On a server of the test's own, where nothing else writes or prunes.)
 */
export async function rowCounts(
  server: Pick<TestServer, "database">,
  tables: readonly (typeof PEOPLE_TABLES)[number][] = PEOPLE_TABLES,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const row = await server.database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

/** A password long enough for the contract (12 to 256 characters). */
export const PASSWORD = "correct horse battery staple";

export interface Person {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly role: "admin" | "member";
}

export const uniqueEmail = (prefix = "p") => `${prefix}-${randomBytes(4).toString("hex")}@example.com`;

/** Creates a person with the admin key (with PASSWORD unless `password: null`). */
export async function createPerson(
  server: Requester,
  options: { email?: string; name?: string; role?: "admin" | "member"; password?: string | null } = {},
): Promise<Person> {
  const email = options.email ?? uniqueEmail();
  const body = {
    email,
    name: options.name ?? `Person ${email.slice(0, email.indexOf("@"))}`,
    ...(options.role === undefined ? {} : { role: options.role }),
    ...(options.password === null ? {} : { password: options.password ?? PASSWORD }),
  };
  const res = await server.request("POST", "/users", { body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** The `name=value` of the session cookie a response sets, or undefined when it sets none. */
export function sessionCookieOf(res: ApiResponse): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(";")[0] ?? "";
    if (/^(__Host-)?flagstaff_session=./.test(pair)) return pair;
  }
  return undefined;
}

/** Signs in with a password; answers the session cookie (`name=value`), as a browser would send it. */
export async function signIn(server: Requester, email: string, password = PASSWORD): Promise<string> {
  const res = await server.request("POST", "/auth/login", { key: null, body: { email, password } });
  assert.equal(res.status, 200, res.text);
  const cookie = sessionCookieOf(res);
  assert.ok(cookie, `no session cookie in ${JSON.stringify(res.headers.getSetCookie())}`);
  return cookie;
}

/**
 * Request options for a request made with a session cookie from the console's own pages (Sec-Fetch-Site:
 * same-origin, as a browser sends it), without a key.
 */
export function asSession(cookie: string, more: RequestOptions = {}): RequestOptions {
  return {
    ...more,
    key: null,
    headers: { cookie, "sec-fetch-site": "same-origin", ...(more.headers ?? {}) },
  };
}

/** Request options for a request made with a key (admin key when omitted). */
export const asKey = (key: string, more: RequestOptions = {}): RequestOptions => ({ ...more, key });

/** Grants a person a role on a project with the admin key. */
export async function grant(
  server: Requester,
  project: string,
  userId: string,
  role: "admin" | "write" | "read",
): Promise<void> {
  const res = await server.request("PUT", `/projects/${project}/access/${userId}`, { body: { role } });
  assert.equal(res.status, 200, res.text);
}

/** Creates a personal key in a session; answers its secret and id. */
export async function personalKey(
  server: Requester,
  cookie: string,
  body: { name?: string; project?: string; environment?: string | null; role?: "admin" | "write" | "read" | "check" },
): Promise<{ key: string; id: string }> {
  const res = await server.request("POST", "/users/me/keys", asSession(cookie, { body: { name: "a key", ...body } }));
  assert.equal(res.status, 201, res.text);
  return { key: res.body.key, id: res.body.id };
}

/** The status and, for a problem, its code, as one short string: "200", "403 forbidden". */
export function outcome(res: ApiResponse): string {
  return res.status < 400 ? String(res.status) : `${res.status} ${res.body?.code ?? res.text}`;
}
