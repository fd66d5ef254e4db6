import { refuseOtherEnvironment } from "./environment.js";
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../errors.js";
import type { Role } from "../features/evaluation/changes.js";
import type { Principal, Snapshot } from "../features/evaluation/snapshot.js";
import { hashApiKey } from "../ids.js";

/**
 * What an operation requires. `evaluate`: a key of any role of one project, which names the project
 * (the OpenFeature remote evaluation endpoints have no project in their path). `admin`: an admin key. `write`, `read`, `check`: a key of the project named
 * in the path with at least that role (write > read > check), or an admin key. `identify`: any valid key
 * (it learns only about itself). `public`: no key.
 */
export type Access = "public" | "admin" | "write" | "read" | "check" | "evaluate" | "identify";

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
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

const RANK: Record<Exclude<Role, "admin">, number> = { check: 1, read: 2, write: 3 };

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

/** Whether a principal may perform an operation of the given access level on a project. */
export function allows(
  principal: Principal,
  access: Exclude<Access, "public">,
  projectId: string | undefined,
): boolean {
  if (access === "identify") return true;
  if (access === "evaluate") return principal.role !== "admin";
  if (principal.role === "admin") return true;
  if (access === "admin") return false;
  if (projectId === undefined || principal.projectId !== projectId) return false;
  return RANK[principal.role] >= RANK[access];
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
 * Authenticates every request against the key hashes in the snapshot (no database I/O), then
 * authorises it against the route's declared access and the project in its path.
 */
export function authenticate(credentials: Credentials, tokens?: TokenVerifier) {
  /** Throws the 401 or 403 a request deserves, or answers its principal (undefined for public routes). */
  const principalFor = (request: FastifyRequest): Principal | undefined => {
    const access = request.routeOptions.config.access;
    if (access === undefined || access === "public") return undefined;
    const token = presentedToken(request);
    let principal: Principal | undefined;
    if (token !== undefined) {
      principal = tokens?.verify(token);
      if (!principal)
        throw unauthorized(
          "The stream token is malformed, expired or set to last longer than the server allows, or its key has been revoked.",
        );
    } else {
      const key = presentedKey(request.headers);
      if (key === undefined) throw missingKeyProblem(request.headers);
      principal = credentials.principalOf(key);
    }
    if (!principal) throw unauthorized("The API key is unknown or has been revoked.");
    const projectId = (request.params as { projectId?: string } | undefined)?.projectId;
    if (!allows(principal, access, projectId)) {
      throw new AppError(
        403,
        "forbidden",
        access === "admin"
          ? "This operation needs an admin key."
          : access === "evaluate"
            ? "Remote evaluation needs a project key (any role): the key names the project."
            : `This key may not ${access === "write" ? "change" : access === "read" ? "read" : "check"} this project.`,
      );
    }
    const environment = (request.query as { environment?: unknown } | undefined)?.environment;
    if (typeof environment === "string") refuseOtherEnvironment(principal, environment);
    return principal;
  };
  // Callback style, not async: the check path then creates no promise for authentication.
  return function authHook(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    try {
      request.principal = principalFor(request);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
}
