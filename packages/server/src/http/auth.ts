import { refuseBeyond, refuseOtherEnvironment } from "../access/environment-scope.js";
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, projectNotFound } from "../errors.js";
import type { Snapshot } from "../features/evaluation/snapshot.js";
import type { Principal } from "../access/principal.js";
import type { PeopleState, PersonState } from "../features/people/people-state.js";
import type { SessionVerifier } from "../features/people/sessions.js";
import { hashApiKey } from "../ids.js";
import { isActive, isAdmin, type ProjectRank, RANK, roleOn } from "../access/roles.js";
import { refuseCrossSite } from "./same-origin.js";

/**
 * What an operation requires. `evaluate`: a key of any role of one project, which names the project
 * (the OpenFeature remote evaluation endpoints have no project in their path). `admin`: an admin (key or
 * person), or, on a route with a project in its path, an admin of that project. `write`, `read`, `check`:
 * that role or more on the project named in the path (write > read > check), or an admin. `identify`: any
 * valid key or session (it learns only about itself). `person`: a person (session or personal key).
 * `session`: a person signed in (not a key: a leaked key cannot mint more). `listing`: an admin or any
 * person (the route filters what it answers). `public`: nothing.
 */
export type Access =
  | "public"
  | "admin"
  | "write"
  | "read"
  | "check"
  | "evaluate"
  | "identify"
  | "person"
  | "session"
  | "listing";

declare module "fastify" {
  interface FastifyContextConfig {
    access?: Access;
    /** false: the route's requests are not logged one by one (the check: logging would cost more than answering). */
    requestLogging?: boolean;
    /**
     * true: a request without a key header may present a stream token as `?token=` instead (the OFREP event
     * stream, which a browser's EventSource opens without headers). See StreamTokens.
     */
    streamToken?: boolean;
    /**
     * true: the route makes a key (a project's service key). A person makes one only while signed in, never
     * through a personal key (`403 forbidden`): a leaked key cannot mint more, and a key made by a personal
     * key would outlive the person, whose disabling revokes their personal keys only. Service keys a person
     * made in a session are the project's: they outlive their maker, and the history names who made them.
     */
    mintsKey?: boolean;
    /**
     * The route acts on what belongs to the whole project, beyond any one environment; the words say what,
     * for the refusal ("use webhooks"). A key bound to an environment is refused (403), whatever its role:
     * see mayReach in access/environment-scope.ts, where what such a key may reach is decided.
     */
    projectWide?: string;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** The person behind the principal (a session or a personal key), as the snapshot knew them then. */
    person?: PersonState;
    /** The principal's role on the project in the path, when there is one (protected environments need it). */
    projectRole?: ProjectRank;
  }
}

const BEARER = /^Bearer +([^\s]+) *$/i;

const unauthorized = (detail: string) => new AppError(401, "unauthorized", detail);

/**
 * The key a request presents: `Authorization: Bearer <key>`, or `X-API-Key: <key>` as OFREP clients may
 * send. Undefined when there is none or the header is malformed (`missingKeyProblem` says which).
 */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization;
  if (header === undefined) {
    const apiKey = headers["x-api-key"];
    return typeof apiKey === "string" && apiKey !== "" ? apiKey : undefined;
  }
  return BEARER.exec(header)?.[1];
}

/** The 401 for a request whose key `presentedKey` could not read. */
function missingKeyProblem(headers: IncomingHttpHeaders): AppError {
  return headers.authorization === undefined
    ? unauthorized("Send an API key as Authorization: Bearer <key>.")
    : unauthorized("The Authorization header must be Bearer <key>.");
}

/** Keys whose hashes are remembered; applications reuse a handful of keys, so this bounds a tiny cache. */
const HASH_CACHE_SIZE = 1024;

/**
 * Finds the principal of a presented key in the snapshot (no database I/O). SHA-256 of presented keys
 * is remembered for the keys seen most recently, so the check path costs a map lookup instead of a hash.
 * The cache holds hashes of keys, valid or not, never principals, so a revocation takes effect as soon
 * as it is in this instance's snapshot.
 */
export class Credentials {
  private readonly hashes = new Map<string, string>();

  constructor(private readonly snapshot: Snapshot) {}

  principalOf(key: string): Principal | undefined {
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      hash = hashApiKey(key);
      if (this.hashes.size >= HASH_CACHE_SIZE) this.hashes.delete(this.hashes.keys().next().value as string);
      this.hashes.set(key, hash);
    }
    return this.snapshot.principal(hash);
  }
}

/**
 * Whether a principal may perform an operation of the given access level on a project. `held` is the
 * principal's role on that project, when the caller has it already (authentication keeps it for the route).
 */
export function allows(
  principal: Principal,
  access: Exclude<Access, "public">,
  projectId: string | undefined,
  people: PeopleState,
  held: ProjectRank | undefined = projectId === undefined ? undefined : roleOn(principal, projectId, people),
): boolean {
  switch (access) {
    case "identify":
      return true;
    case "person":
      return principal.userId !== undefined;
    case "session":
      return principal.via === "session";
    case "listing":
      return principal.userId !== undefined || principal.role === "admin";
    case "evaluate":
      return principal.projectId !== null && roleOn(principal, principal.projectId, people) !== undefined;
    default: {
      if (projectId === undefined) return isAdmin(principal, people);
      return held !== undefined && RANK[held] >= RANK[access];
    }
  }
}

/** The 403 (or, for a person with no access to the project at all, the 404) of a refused request. */
function refusal(
  principal: Principal,
  access: Exclude<Access, "public">,
  projectId: string | undefined,
  people: PeopleState,
) {
  const person = principal.userId === undefined ? undefined : people.person(principal.userId);
  // A member sees nothing of a project they were not granted, not even that it exists.
  if (person && person.role !== "admin" && projectId !== undefined && people.grant(person.id, projectId) === undefined)
    return projectNotFound(projectId);
  const who = person ? (principal.via === "key" ? "This personal key" : "Your account") : "This key";
  const detail =
    access === "admin"
      ? projectId === undefined || person === undefined
        ? person
          ? "This operation needs an admin."
          : "This operation needs an admin key."
        : `${who} may not administer this project: it needs the project's admin role.`
      : access === "evaluate"
        ? "Remote evaluation needs a project key (any role): the key names the project."
        : access === "person" || access === "session"
          ? access === "session"
            ? "Sign in to the console to do this: a key cannot."
            : "This operation is for a person: sign in, or use a personal key."
          : access === "listing"
            ? "This operation needs an admin key or a person."
            : `${who} may not ${access === "write" ? "change" : access === "read" ? "read" : "check"} this project.`;
  return new AppError(403, "forbidden", detail);
}

/** Checks tokens that stand for a key (stream tokens); answers the key's principal or undefined. */
export interface TokenVerifier {
  verify(token: string): Principal | undefined;
}

/** The `token` query parameter of a route that takes one, when the request sends no key header. */
function presentedToken(request: FastifyRequest): string | undefined {
  if (!request.routeOptions.config.streamToken) return undefined;
  if (request.headers.authorization !== undefined || request.headers["x-api-key"] !== undefined) return undefined;
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof token === "string" ? token : undefined;
}

/**
 * Authenticates every request against the key hashes in the snapshot (no database I/O), or, for a request
 * with no key, its session cookie (one read), then authorises it against the route's declared access and
 * the project in its path.
 */
export function authenticate(
  credentials: Credentials,
  people: PeopleState,
  tokens?: TokenVerifier,
  sessions?: SessionVerifier,
  ownOrigin?: (request: FastifyRequest) => string,
) {
  /** Checks a found principal against the route; throws the 401, 403 or 404 the request deserves. */
  const authorize = (request: FastifyRequest, principal: Principal | undefined, what: "key" | "session") => {
    const access = request.routeOptions.config.access as Exclude<Access, "public">;
    if (!principal || !isActive(principal, people)) {
      throw unauthorized(
        what === "session"
          ? "The session has ended (signed out, expired, or the person was disabled): sign in again."
          : "The API key is unknown or has been revoked.",
      );
    }
    const projectId = (request.params as { projectId?: string } | undefined)?.projectId;
    // Decided once: the route's access check and the route itself (protected environments) both use it.
    const held = projectId === undefined ? undefined : roleOn(principal, projectId, people);
    if (!allows(principal, access, projectId, people, held)) throw refusal(principal, access, projectId, people);
    if (request.routeOptions.config.mintsKey && principal.via === "key") {
      throw new AppError(
        403,
        "forbidden",
        "A personal key cannot make keys: sign in to the console to make one (a leaked key must not mint more).",
      );
    }
    const projectWide = request.routeOptions.config.projectWide;
    if (projectWide !== undefined) refuseBeyond(principal.environment, null, projectWide);
    const environment = (request.query as { environment?: unknown } | undefined)?.environment;
    if (typeof environment === "string") refuseOtherEnvironment(principal, environment);
    if (principal.userId !== undefined) request.person = people.person(principal.userId);
    if (held !== undefined) request.projectRole = held;
    return principal;
  };
  /** The principal of a key or token the request presents (synchronous); undefined: it presents neither. */
  const keyPrincipal = (request: FastifyRequest): { principal: Principal | undefined } | undefined => {
    const token = presentedToken(request);
    if (token !== undefined) {
      const principal = tokens?.verify(token);
      if (!principal)
        throw unauthorized(
          "The stream token is malformed, expired or set to last longer than the server allows, or its key has been revoked.",
        );
      return { principal };
    }
    const key = presentedKey(request.headers);
    if (key !== undefined) return { principal: credentials.principalOf(key) };
    if (request.headers.authorization !== undefined) throw missingKeyProblem(request.headers);
    return undefined;
  };
  // Callback style, not async: the check path then creates no promise for authentication.
  return function authHook(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    const access = request.routeOptions.config.access;
    if (access === undefined || access === "public") {
      done();
      return;
    }
    let sessionId: string | undefined;
    try {
      const byKey = keyPrincipal(request);
      if (byKey !== undefined) request.principal = authorize(request, byKey.principal, "key");
      else {
        sessionId = sessions?.presented(request);
        if (sessionId === undefined) throw missingKeyProblem(request.headers);
      }
    } catch (error) {
      done(error as Error);
      return;
    }
    if (sessionId === undefined || sessions === undefined) {
      done();
      return;
    }
    sessions.principalOf(sessionId).then(
      (principal) => {
        try {
          // The cookie goes along with any request the browser makes, whichever site asks for it: a change
          // must come from the console's own origin (see same-origin.ts).
          if (ownOrigin) refuseCrossSite(request, ownOrigin(request));
          request.principal = authorize(request, principal, "session");
        } catch (error) {
          done(error as Error);
          return;
        }
        done();
      },
      (error) => done(error as Error),
    );
  };
}
