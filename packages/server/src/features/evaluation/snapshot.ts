import type { EvaluableFlag, FlagStatus } from "@flagstaff/core";
import type { Change, ChangeSet, Role } from "./changes.js";

/** A flag as evaluation sees it. Mutable only inside the snapshot. */
export interface FlagState extends EvaluableFlag {
  readonly id: string;
  name: string;
  status: FlagStatus;
  percentageActors: number;
  percentageCalls: number;
  readonly actors: Set<string>;
  readonly segments: Set<string>;
}

export interface Principal {
  readonly keyId: string;
  /** The key's name, recorded with each write it makes. */
  readonly keyName: string;
  readonly role: Role;
  /** null for admin keys. */
  readonly projectId: string | null;
}

export class ProjectState {
  readonly flagsByName = new Map<string, FlagState>();
  readonly flagsById = new Map<string, FlagState>();
  /** Members of every segment that has any, by segment id. */
  readonly segmentMembers = new Map<string, Set<string>>();
  /**
   * The stream version of the last change that could make any check of this project answer
   * differently; writes that evaluation does not see (keys, descriptions, segment names) leave it.
   */
  evaluationVersion = 0;
  private sortedNames: string[] | undefined;

  /** Flag names in ascending (code unit) order, rebuilt lazily after a create or delete. */
  flagNamesInOrder(): readonly string[] {
    this.sortedNames ??= [...this.flagsByName.keys()].sort(compareText);
    return this.sortedNames;
  }

  readonly isMember = (segmentId: string, actorId: string): boolean =>
    this.segmentMembers.get(segmentId)?.has(actorId) === true;

  putFlag(flag: FlagState): void {
    // Names never change (they are the flag's address), so only a new flag reorders the list.
    if (!this.flagsById.has(flag.id)) this.sortedNames = undefined;
    this.flagsByName.set(flag.name, flag);
    this.flagsById.set(flag.id, flag);
  }

  deleteFlag(id: string): void {
    const flag = this.flagsById.get(id);
    if (!flag) return;
    this.flagsById.delete(id);
    this.flagsByName.delete(flag.name);
    this.sortedNames = undefined;
  }

  deleteSegment(segmentId: string): void {
    this.segmentMembers.delete(segmentId);
    for (const flag of this.flagsById.values()) flag.segments.delete(segmentId);
  }
}

/** Compares as the database does with bytewise collation, for the ASCII names flags are allowed. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Everything a check needs, in memory: projects, their flags with attached actors and segments, segment
 * members, and the hashes of valid keys. Writes reach it only as change sets, applied in version order.
 */
export class Snapshot {
  readonly projects = new Map<string, ProjectState>();
  private readonly keysByHash = new Map<string, Principal>();
  private readonly hashByKeyId = new Map<string, string>();
  /** Highest version applied, per stream. */
  readonly versions = new Map<string, number>();

  principal(keyHash: string): Principal | undefined {
    return this.keysByHash.get(keyHash);
  }

  putKey(id: string, hash: string, role: Role, projectId: string | null, name: string): void {
    this.keysByHash.set(hash, { keyId: id, keyName: name, role, projectId });
    this.hashByKeyId.set(id, hash);
  }

  deleteKey(id: string): void {
    const hash = this.hashByKeyId.get(id);
    if (hash === undefined) return;
    this.hashByKeyId.delete(id);
    this.keysByHash.delete(hash);
  }

  /** Forgets every admin key, before the global stream is read afresh. */
  dropAdminKeys(): void {
    for (const [id, hash] of this.hashByKeyId) {
      if (this.keysByHash.get(hash)?.projectId === null) this.deleteKey(id);
    }
  }

  /** Drops a project with its flags, segments and keys. */
  dropProject(projectId: string): void {
    this.projects.delete(projectId);
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
      if (!this.applyChange(change)) continue;
      const project = "projectId" in change && change.projectId ? this.projects.get(change.projectId) : undefined;
      if (project) project.evaluationVersion = set.version;
    }
    this.versions.set(set.stream, set.version);
  }

  /** Applies one change; answers whether any evaluation of its project may now answer differently. */
  private applyChange(change: Change): boolean {
    switch (change.kind) {
      case "project.created":
        if (this.projects.has(change.projectId)) return false;
        this.projects.set(change.projectId, new ProjectState());
        return true;
      case "project.deleted":
        this.dropProject(change.projectId);
        return false;
      case "key.created":
        this.putKey(change.id, change.hash, change.role, change.projectId, change.name ?? "");
        return false;
      case "key.deleted":
        this.deleteKey(change.id);
        return false;
      case "flag.upserted": {
        const project = this.projects.get(change.projectId);
        if (!project) return false;
        const current = project.flagsById.get(change.flag.id);
        const changed =
          current === undefined ||
          current.status !== change.flag.status ||
          current.percentageActors !== change.flag.percentageActors ||
          current.percentageCalls !== change.flag.percentageCalls ||
          change.addActors.some((id) => !current.actors.has(id)) ||
          change.removeActors.some((id) => current.actors.has(id)) ||
          change.addSegments.some((id) => !current.segments.has(id)) ||
          change.removeSegments.some((id) => current.segments.has(id));
        const flag: FlagState = current ?? {
          ...change.flag,
          actors: new Set<string>(),
          segments: new Set<string>(),
        };
        flag.status = change.flag.status;
        flag.percentageActors = change.flag.percentageActors;
        flag.percentageCalls = change.flag.percentageCalls;
        flag.name = change.flag.name;
        for (const actorId of change.addActors) flag.actors.add(actorId);
        for (const actorId of change.removeActors) flag.actors.delete(actorId);
        for (const segmentId of change.addSegments) flag.segments.add(segmentId);
        for (const segmentId of change.removeSegments) flag.segments.delete(segmentId);
        project.putFlag(flag);
        return changed;
      }
      case "flag.deleted": {
        const project = this.projects.get(change.projectId);
        if (!project?.flagsById.has(change.id)) return false;
        project.deleteFlag(change.id);
        return true;
      }
      case "segment.members": {
        const project = this.projects.get(change.projectId);
        if (!project) return false;
        let members = project.segmentMembers.get(change.segmentId);
        if (!members) {
          members = new Set<string>();
          project.segmentMembers.set(change.segmentId, members);
        }
        let changed = false;
        for (const actorId of change.add) {
          if (!members.has(actorId)) {
            members.add(actorId);
            changed = true;
          }
        }
        for (const actorId of change.remove) changed = members.delete(actorId) || changed;
        return changed;
      }
      case "segment.deleted": {
        const project = this.projects.get(change.projectId);
        if (!project) return false;
        project.deleteSegment(change.segmentId);
        return true;
      }
    }
  }
}
