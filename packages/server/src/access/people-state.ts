import type { GrantRole, UserRole } from "@flagstaff/core";

/** What authorisation needs of a person, in memory on every instance. */
export interface PersonState {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly role: UserRole;
  readonly disabled: boolean;
}

/**
 * People and their project grants, as the snapshot holds them: every request made by a person (session or
 * personal key) is authorised against this, with no database I/O, and a change (a person disabled, a grant
 * removed) takes effect on an instance as soon as the global stream's change reaches it.
 */
export class PeopleState {
  private readonly people = new Map<string, PersonState>();
  /** userId → projectId → role. */
  private readonly grants = new Map<string, Map<string, GrantRole>>();

  person(id: string): PersonState | undefined {
    return this.people.get(id);
  }

  /** The person's grant on a project; undefined when none. */
  grant(userId: string, projectId: string): GrantRole | undefined {
    return this.grants.get(userId)?.get(projectId);
  }

  /** Every grant of a person, by project id. */
  grantsOf(userId: string): ReadonlyMap<string, GrantRole> {
    return this.grants.get(userId) ?? new Map();
  }

  putPerson(person: PersonState): void {
    this.people.set(person.id, person);
  }

  deletePerson(id: string): void {
    this.people.delete(id);
    this.grants.delete(id);
  }

  putGrant(userId: string, projectId: string, role: GrantRole): void {
    let mine = this.grants.get(userId);
    if (!mine) {
      mine = new Map();
      this.grants.set(userId, mine);
    }
    mine.set(projectId, role);
  }

  deleteGrant(userId: string, projectId: string): void {
    this.grants.get(userId)?.delete(projectId);
  }

  /** A deleted project's grants go with it. */
  dropProject(projectId: string): void {
    for (const mine of this.grants.values()) mine.delete(projectId);
  }

  /** Forgets everyone, before the global stream is read afresh. */
  clear(): void {
    this.people.clear();
    this.grants.clear();
  }
}
