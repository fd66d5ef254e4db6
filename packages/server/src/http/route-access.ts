import type { Principal } from "../access/principal.js";
import { isAdmin, type ProjectRank, RANK, roleOn } from "../access/roles.js";
import { AppError, projectNotFound } from "../kernel/errors.js";
import type { PeopleState, PersonState } from "../access/people-state.js";

// What each route requires of its caller (its `config.access`, and the other route options
// authentication reads), and whether a principal has it: the rules of roles.ts applied to a route.

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
export function refusal(
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
