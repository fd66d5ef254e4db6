import { compareText, type FlagState, ProjectState } from "@flagstaff/core";
import { environmentNotFound, projectNotFound } from "../../kernel/errors.js";
import { type Change, type ChangeSet, FIRST_ENVIRONMENT } from "../../write-path/changes.js";
import type { Principal, Role } from "../../access/principal.js";
import { ProjectEnvironments } from "./project-environments.js";
import { PeopleState } from "../../access/people-state.js";

// The project state and its rules live in @flagstaff/core, shared with the SDK's local evaluator.
export { compareText, type FlagState, ProjectEnvironments, ProjectState };

/** Told of every change set the snapshot applies (after it applied it), and of every stream reloaded. */
export interface SnapshotListener {
  applied?(set: ChangeSet): void;
  reloaded?(stream: string): void;
}

/**
 * Everything a check needs, in memory: projects, their flags with attached actors and segments, segment
 * members, and the hashes of valid keys. Writes reach it only as change sets, applied in version order.
 */
export class Snapshot {
  readonly projects = new Map<string, ProjectEnvironments>();
  /** People and their grants (the global stream). */
  readonly people = new PeopleState();
  private readonly keysByHash = new Map<string, Principal>();
  private readonly hashByKeyId = new Map<string, string>();
  /** Highest version applied, per stream. */
  readonly versions = new Map<string, number>();
  private listeners: SnapshotListener[] = [];

  /** Adds a listener; answers the function that removes it. */
  listen(listener: SnapshotListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Tells listeners a stream was read afresh from the database (its changes in between are not known). */
  reloaded(stream: string): void {
    for (const listener of this.listeners) listener.reloaded?.(stream);
  }

  /**
   * An environment's evaluation state and its id (`environment` null: the project's default); throws the
   * 404 of an unknown project or environment.
   */
  environmentState(projectId: string, environment: string | null): { state: ProjectState; environment: string } {
    const project = this.projects.get(projectId);
    if (!project) throw projectNotFound(projectId);
    const id = project.resolve(environment);
    const state = project.environments.get(id);
    if (!state) throw environmentNotFound(id);
    return { state, environment: id };
  }

  principal(keyHash: string): Principal | undefined {
    return this.keysByHash.get(keyHash);
  }

  /** A valid key's principal and hash, by key id (for tokens derived from the key, such as stream tokens). */
  keyById(keyId: string): { principal: Principal; hash: string } | undefined {
    const hash = this.hashByKeyId.get(keyId);
    const principal = hash === undefined ? undefined : this.keysByHash.get(hash);
    return principal && hash !== undefined ? { principal, hash } : undefined;
  }

  putKey(
    id: string,
    hash: string,
    role: Role,
    projectId: string | null,
    name: string,
    environment: string | null,
    userId?: string | null,
  ): void {
    const principal: Principal =
      userId === undefined || userId === null
        ? { keyId: id, keyName: name, role, projectId, environment }
        : { keyId: id, keyName: name, role, projectId, environment, userId, via: "key" };
    this.keysByHash.set(hash, principal);
    this.hashByKeyId.set(id, hash);
  }

  deleteKey(id: string): void {
    const hash = this.hashByKeyId.get(id);
    if (hash === undefined) return;
    this.hashByKeyId.delete(id);
    this.keysByHash.delete(hash);
  }

  /** Forgets the global stream's keys (admin keys and every personal key), before it is read afresh. */
  dropGlobalKeys(): void {
    for (const [id, hash] of this.hashByKeyId) {
      const key = this.keysByHash.get(hash);
      if (key?.projectId === null || key?.userId !== undefined) this.deleteKey(id);
    }
  }

  /** Drops a project with its flags, segments, keys and (unless kept, for a reread) its grants. */
  dropProject(projectId: string, options: { keepGrants?: boolean } = {}): void {
    this.projects.delete(projectId);
    if (!options.keepGrants) this.people.dropProject(projectId);
    for (const [id, hash] of this.hashByKeyId) {
      if (this.keysByHash.get(hash)?.projectId === projectId) this.deleteKey(id);
    }
  }

  get keyCount(): number {
    return this.keysByHash.size;
  }

  /** Applies one committed change set; the caller guarantees version order. */
  apply(set: ChangeSet): void {
    for (const change of set.changes) {
      for (const state of this.applyChange(change)) state.evaluationVersion = set.version;
    }
    this.versions.set(set.stream, set.version);
    for (const listener of this.listeners) listener.applied?.(set);
  }

  /** Applies one change; answers the environments' states whose evaluations may now answer differently. */
  private applyChange(change: Change): ProjectState[] {
    switch (change.kind) {
      case "project.created": {
        if (this.projects.has(change.projectId)) return [];
        const environments = change.environments ?? [FIRST_ENVIRONMENT];
        const project = new ProjectEnvironments(environments, environments[0] ?? FIRST_ENVIRONMENT);
        this.projects.set(change.projectId, project);
        return [...project.environments.values()];
      }
      case "project.deleted":
        this.dropProject(change.projectId);
        return [];
      case "key.created":
        this.putKey(
          change.id,
          change.hash,
          change.role,
          change.projectId,
          change.name ?? "",
          // Keys logged before environments were all of the first one (admin keys of none).
          change.environment !== undefined ? change.environment : change.projectId === null ? null : FIRST_ENVIRONMENT,
          change.userId,
        );
        return [];
      case "key.deleted":
        this.deleteKey(change.id);
        return [];
      case "user.put":
        this.people.putPerson({
          id: change.id,
          email: change.email,
          name: change.name,
          role: change.role,
          disabled: change.disabled,
        });
        return [];
      case "user.deleted":
        this.people.deletePerson(change.id);
        for (const [id, hash] of this.hashByKeyId) {
          if (this.keysByHash.get(hash)?.userId === change.id) this.deleteKey(id);
        }
        return [];
      case "grant.put":
        this.people.putGrant(change.userId, change.grantProject, change.role);
        return [];
      case "grant.deleted":
        this.people.deleteGrant(change.userId, change.grantProject);
        return [];
      default: {
        const project = this.projects.get(change.projectId);
        return project ? project.apply(change) : [];
      }
    }
  }
}
