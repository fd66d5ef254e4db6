import type { FastifyReply, FastifyRequest } from "fastify";
import { refuseBeyond, refuseOtherEnvironment } from "../access/environment-scope.js";
import type { Principal } from "../access/principal.js";
import { isActive, roleOn } from "../access/roles.js";
import { AppError } from "../kernel/errors.js";
import type { PeopleState } from "../access/people-state.js";
import type { SessionVerifier } from "../features/people/sessions.js";
import { type Credentials, missingKeyProblem, presentedKey, unauthorized } from "./key-credentials.js";
import { type Access, allows, refusal } from "./route-access.js";
import { refuseCrossSite } from "./same-origin.js";
import { presentedToken, type TokenVerifier } from "./stream-token-auth.js";

// Authentication decides the principal of a request, and nothing else does: from its key
// (key-credentials.ts), its stream token (stream-token-auth.ts) or its session (people's Sessions, through
// SessionVerifier); then it checks the principal against the route's access (route-access.ts). Features
// receive what it decided as plain values (access/).

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
