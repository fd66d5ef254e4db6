import { type Condition, defaultVariants, ProjectState } from "@flagstaff/core";
import type { Change } from "../../write-path/changes.js";

type ProjectScopedChange = Exclude<
  Change,
  {
    kind:
      | "project.created"
      | "project.deleted"
      | "key.created"
      | "key.deleted"
      | "user.put"
      | "user.deleted"
      | "grant.put"
      | "grant.deleted";
  }
>;

/**
 * A project's evaluation state in memory: one `ProjectState` per environment (each with its own
 * configuration of every flag), all over one map of segment members, since segments belong to the
 * project. A key bound to an environment reads that environment's state; a key bound to none, the
 * default's.
 */
export class ProjectEnvironments {
  readonly environments = new Map<string, ProjectState>();
  readonly segmentMembers = new Map<string, Set<string>>();
  readonly segmentConditions = new Map<string, readonly Condition[]>();

  constructor(
    environmentIds: readonly string[],
    public defaultEnvironment: string,
  ) {
    for (const id of environmentIds)
      this.environments.set(id, new ProjectState(this.segmentMembers, this.segmentConditions));
  }

  /** The state of an environment, or of the default one when none is named; undefined for an unknown one. */
  state(environment: string | null | undefined): ProjectState | undefined {
    return this.environments.get(environment ?? this.defaultEnvironment);
  }

  /** The id an environment resolves to: the one named, or the default. */
  resolve(environment: string | null | undefined): string {
    return environment ?? this.defaultEnvironment;
  }

  /**
   * Applies one change to the environments it concerns; answers the states of those whose evaluations
   * may now answer differently.
   */
  apply(change: ProjectScopedChange): ProjectState[] {
    switch (change.kind) {
      case "environment.created": {
        if (this.environments.has(change.environment)) return [];
        const source = change.copyFrom === undefined ? undefined : this.environments.get(change.copyFrom);
        const state = source ? source.copy() : this.disabledCopy();
        this.environments.set(change.environment, state);
        return [state];
      }
      case "environment.deleted":
        this.environments.delete(change.environment);
        return [];
      case "environment.default": {
        this.defaultEnvironment = change.environment;
        return [];
      }
      case "flag.upserted": {
        if (change.environment !== undefined) {
          const state = this.environments.get(change.environment);
          return state?.apply(change) ? [state] : [];
        }
        return [...this.environments.values()].filter((state) => state.apply(change));
      }
      case "flag.rollout": {
        // A configuration's: of one environment.
        const state = change.environment === undefined ? undefined : this.environments.get(change.environment);
        return state?.apply(change) ? [state] : [];
      }
      case "flag.deleted":
      case "flag.variants":
        return [...this.environments.values()].filter((state) => state.apply(change));
      case "segment.conditions":
      case "segment.members": {
        // One shared map: the first state applies the change to it, and every environment may answer anew.
        const first = this.environments.values().next().value;
        return first?.apply(change) ? [...this.environments.values()] : [];
      }
      case "segment.deleted":
        for (const state of this.environments.values()) state.apply(change);
        return [...this.environments.values()];
    }
  }

  /** Every flag of the project, disabled, with nothing attached: a new environment not copied from another. */
  private disabledCopy(): ProjectState {
    const state = new ProjectState(this.segmentMembers, this.segmentConditions);
    const any = this.environments.values().next().value;
    if (!any) return state;
    for (const flag of any.flagsById.values()) {
      state.putFlag({
        id: flag.id,
        name: flag.name,
        status: "disabled",
        percentageActors: 0,
        percentageCalls: 0,
        actors: new Set(),
        segments: new Set(),
        // The definition is the flag's; the configuration starts at its defaults.
        type: flag.type,
        variants: flag.variants,
        ...defaultVariants(flag.type, flag.variants),
      });
    }
    return state;
  }
}
