import type { GrantRole, UserRole } from "@flagstaff/core";
import type { Principal, Role } from "./principal.js";

/**
 * What the rules below read of people and their grants: the snapshot's PeopleState (every instance holds
 * it in memory), seen as no more than this.
 */
export interface PeopleDirectory {
  person(id: string): { readonly id: string; readonly role: UserRole; readonly disabled: boolean } | undefined;
  grant(userId: string, projectId: string): GrantRole | undefined;
}

/** A role on one project: a key's (check, read, write), a grant's (read, write, admin), or admin of all. */
export type ProjectRank = Role | GrantRole;

/** Higher rank, more rights; a project's `admin` (a grant) and an admin of everything rank alike on it. */
export const RANK: Record<ProjectRank, number> = { check: 1, read: 2, write: 3, admin: 4 };

const lesser = (a: ProjectRank, b: ProjectRank): ProjectRank => (RANK[a] <= RANK[b] ? a : b);

/**
 * Whether a principal stands for someone who may act at all: a service key always (its revocation removes
 * it from the snapshot); a person's session or key only while the person exists and is not disabled.
 */
export function isActive(principal: Principal, people: PeopleDirectory): boolean {
  if (principal.userId === undefined) return true;
  const person = people.person(principal.userId);
  return person !== undefined && !person.disabled;
}

/** Whether a principal is an admin of everything: an admin key, an admin's session, or an admin's admin key of no project. */
export function isAdmin(principal: Principal, people: PeopleDirectory): boolean {
  if (principal.userId === undefined) return principal.role === "admin";
  if (people.person(principal.userId)?.role !== "admin") return false;
  return principal.via === "session" || (principal.role === "admin" && principal.projectId === null);
}

/**
 * The role a principal holds on a project, or undefined when it holds none. The one place this is
 * decided, for every route, the check's fast path and the streams alike.
 * - A service key: an admin key holds admin everywhere; a project key its role on its project.
 * - A session: the person's role (an admin holds admin everywhere) or their grant on the project.
 * - A personal key: the lesser of its role and what its person holds on the project now, and only on its
 *   project when it names one.
 */
export function roleOn(principal: Principal, projectId: string, people: PeopleDirectory): ProjectRank | undefined {
  if (principal.userId === undefined) {
    if (principal.role === "admin") return "admin";
    return principal.projectId === projectId ? principal.role : undefined;
  }
  const person = people.person(principal.userId);
  if (!person || person.disabled) return undefined;
  const held = person.role === "admin" ? "admin" : people.grant(person.id, projectId);
  if (held === undefined) return undefined;
  if (principal.via === "session") return held;
  if (principal.projectId !== null && principal.projectId !== projectId) return undefined;
  return lesser(principal.role, held);
}

/**
 * What a person holds on a project now, whoever asks: admin for an admin of everything, otherwise their
 * grant; undefined when they hold nothing, are disabled or are gone (a change request's approvals are
 * counted so: by what each reviewer may do now, not when they reviewed).
 */
export function personRankOn(people: PeopleDirectory, userId: string, projectId: string): ProjectRank | undefined {
  const person = people.person(userId);
  if (!person || person.disabled) return undefined;
  return person.role === "admin" ? "admin" : people.grant(userId, projectId);
}
