// What the caller may do, worked out once from whoami (docs/people.md, "Roles"), so that every page
// disables the same controls for the same reason. The server decides in the end; the console only avoids
// offering what it would refuse, and says why.
import type { GrantRole } from "@flagstaff/sdk";
import type { Session } from "./session.js";

const RANK: Record<GrantRole, number> = { read: 1, write: 2, admin: 3 };

const lesser = (a: GrantRole, b: GrantRole): GrantRole => (RANK[a] <= RANK[b] ? a : b);

/** What a person holds on a project: everything for an admin, their grant for a member. */
function personRole(session: Session, project: string): GrantRole | undefined {
  if (!session.user) return undefined;
  if (session.user.role === "admin") return "admin";
  return session.grants?.find((g) => g.projectId === project)?.role;
}

/**
 * The caller's role on a project, or undefined when they cannot reach it. A service key: its role in its
 * project (an admin key: admin everywhere). A person's session: their role. A personal key: the lesser of
 * its role and the person's, in its project only when it has one.
 */
export function roleIn(session: Session, project: string): GrantRole | undefined {
  // A key of one project (service or personal) reaches that project only.
  const bound = boundProject(session);
  if (bound !== undefined && project !== bound) return undefined;
  const keyRole = session.key !== undefined ? session.role : undefined;
  if (!session.user) return keyRole;
  const held = personRole(session, project);
  if (held === undefined) return undefined;
  return keyRole === undefined ? held : lesser(keyRole, held);
}

/** The project a project key is bound to (whoami's `projectId`); undefined for keys of every project and sessions. */
export function boundProject(session: Session): string | undefined {
  if (session.key === undefined) return undefined;
  // A service admin key has no project (a session saved by an older console may name the one last opened).
  return session.user || session.role !== "admin" ? session.project : undefined;
}

/**
 * Whether the caller may open any project by its link: an admin key, a person (the server lists and answers
 * what they were granted) and a personal key of no project. A project key reaches its own only.
 */
export function opensAnyProject(session: Session): boolean {
  if (session.user) return boundProject(session) === undefined;
  return session.role === "admin";
}

/** Admins: an admin key, an admin person signed in, or an admin person's admin key of no project. */
export function isAdmin(session: Session): boolean {
  if (!session.user) return session.role === "admin";
  if (session.user.role !== "admin") return false;
  return session.key === undefined || (session.role === "admin" && boundProject(session) === undefined);
}

/** Whether the Projects page lists several projects for this caller (admins, and people). */
export function listsProjects(session: Session): boolean {
  return isAdmin(session) || (session.user !== undefined && boundProject(session) === undefined);
}

/** Why the caller may not change a project they may read (undefined when they may). */
export function readOnlyReason(session: Session, project: string): string | undefined {
  const role = roleIn(session, project);
  if (role === undefined || role !== "read") return undefined;
  if (!session.user) return READ_ONLY_KEY;
  if (session.key !== undefined && session.role === "read") {
    return "Read-only: this personal key has the read role. Sign in with a write key or with your account to change anything.";
  }
  return "Your access to this project is read: you see everything and change nothing. A project admin can give you write access.";
}

/** Why a page or control of project admins is not offered (undefined when the caller is one). */
export function notProjectAdminReason(session: Session, project: string): string | undefined {
  if (roleIn(session, project) === "admin") return undefined;
  if (!session.user) return "This needs an admin key.";
  if (session.key !== undefined && session.role !== "admin") return "This needs a key with the admin role.";
  return "Only admins of this project manage this. Ask a project admin.";
}

/** Why controls for admins are disabled (undefined for admins). */
export function notAdminReason(session: Session): string | undefined {
  if (isAdmin(session)) return undefined;
  return session.user ? "Only admins do this: ask an admin." : "Only an admin key does this.";
}

/** Why a read key's controls are disabled (the wording the console always had). */
export const READ_ONLY_KEY =
  "Read-only: this key has the read role. Sign in with a write or admin key to change anything.";
