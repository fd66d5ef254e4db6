import type { FlagStatus } from "./evaluation.js";
import type { Condition, FlagType, Prerequisite, RolloutPlan, Rule, TargetedFlag, Variant } from "./rules/types.js";
import { BOOLEAN_VARIANTS } from "./rules/variants.js";

/**
 * The actors or segments of a flag that has none: one set shared by all of them (two empty sets for each
 * of 50,000 flags held 24 MiB). It is never added to: ProjectState replaces it with a set of the flag's
 * own before adding (ownIds).
 */
const NO_IDS: Set<string> = new Set();

/** A flag's set to add to: its own, or a new one in place of the shared empty one. */
function ownIds(ids: Set<string>): Set<string> {
  return ids === NO_IDS ? new Set() : ids;
}

/** Ids read from JSON or copied: the shared empty set when there are none. */
const idsOf = (ids: Iterable<string> & { readonly length?: number; readonly size?: number }): Set<string> =>
  (ids.length ?? ids.size) === 0 ? NO_IDS : new Set(ids);

/**
 * A flag of a state, from its JSON form or another state's flag (copied; targeting is immutable data, so
 * shared). Every field is written out, bucketCache included, so the object holds them all in itself (a
 * spread and a field added later cost a second object per flag); what most flags have none of (actors,
 * segments, rules, prerequisites) is shared.
 */
function flagStateOf(flag: FlagJSON | FlagState): FlagState {
  const type = flag.type ?? "boolean";
  return {
    id: flag.id,
    name: flag.name,
    status: flag.status,
    percentageActors: flag.percentageActors,
    percentageCalls: flag.percentageCalls,
    actors: idsOf(flag.actors),
    segments: idsOf(flag.segments),
    type,
    variants: type === "boolean" ? BOOLEAN_VARIANTS : (flag.variants ?? BOOLEAN_VARIANTS),
    onVariant: flag.onVariant ?? BOOLEAN_TARGETING.onVariant,
    offVariant: flag.offVariant ?? BOOLEAN_TARGETING.offVariant,
    rules: flag.rules?.length ? flag.rules : NONE,
    prerequisites: flag.prerequisites?.length ? flag.prerequisites : NONE,
    rolloutPlan: flag.rolloutPlan ?? null,
    bucketCache: null,
  };
}

/**
 * A project's evaluation state (flags with their attached actors and segments, segment members) and the
 * code that applies changes to it. The server's in-memory snapshot and the SDK's local evaluator hold the
 * same `ProjectState` and apply the same changes, so they cannot disagree.
 *
 * Its JSON form (`ProjectStateJSON`, `ProjectChange`) is what the project stream sends; it is versioned by
 * `STATE_FORMAT`, which moves only with a change a reader must understand.
 */
export const STATE_FORMAT = 2;
/**
 * The format of a state any flag of which has a timed rollout plan (issue 35): a reader that does not know
 * plans would answer the flag's own percentage where the plan's is in force, so it must stop instead
 * (`toJSON` answers it only then; a state without plans stays format 2, readable by older SDKs).
 */
export const PLANNED_STATE_FORMAT = 3;
/** The formats `fromJSON` reads: 1 (before targeting: boolean flags, no rules), 2, and 3 (rollout plans). */
export const READABLE_STATE_FORMATS: readonly number[] = [1, 2, 3];

/** A flag's targeting: its definition's type and variants, and one environment's variants, rules and prerequisites. */
export interface FlagTargeting {
  readonly type: FlagType;
  /** A boolean flag's are fixed: BOOLEAN_VARIANTS. */
  readonly variants: readonly Variant[];
  readonly onVariant: string;
  readonly offVariant: string;
  readonly rules: readonly Rule[];
  readonly prerequisites: readonly Prerequisite[];
}

const NONE: readonly never[] = Object.freeze([]);

/** The names of a flag's targeting fields (FlagTargeting's keys), for code that copies or compares them. */
export const TARGETING_FIELDS = ["type", "variants", "onVariant", "offVariant", "rules", "prerequisites"] as const;

/** A flag's targeting fields alone (shared, not copied: they are immutable data, replaced whole on change). */
export const pickTargeting = (flag: FlagTargeting): FlagTargeting => ({
  type: flag.type,
  variants: flag.variants,
  onVariant: flag.onVariant,
  offVariant: flag.offVariant,
  rules: flag.rules,
  prerequisites: flag.prerequisites,
});

/** A boolean flag with no rules: what every flag of a state of format 1 is. */
export const BOOLEAN_TARGETING: FlagTargeting = Object.freeze({
  type: "boolean",
  variants: BOOLEAN_VARIANTS,
  onVariant: "on",
  offVariant: "off",
  rules: NONE,
  prerequisites: NONE,
});

/**
 * The variants a configuration serves when none are named: a boolean flag's `on` and `off`; otherwise the
 * first and the second variant (as LaunchDarkly's new flags do).
 */
export function defaultVariants(
  type: FlagType,
  variants: readonly { readonly key: string }[],
): { onVariant: string; offVariant: string } {
  if (type === "boolean") return { onVariant: "on", offVariant: "off" };
  return { onVariant: variants[0]?.key ?? "", offVariant: variants[1]?.key ?? variants[0]?.key ?? "" };
}

/** A flag's variants as evaluation reads them: a boolean flag's fixed pair, or its declared ones. */
export const variantsOf = (flag: { readonly type?: FlagType; readonly variants?: readonly Variant[] }) =>
  flag.type === undefined || flag.type === "boolean" ? BOOLEAN_VARIANTS : (flag.variants ?? NONE);

/** A flag as `ProjectState.putFlag` takes it: targeting left out is a boolean flag's with no rules. */
export type FlagInput = Omit<FlagState, keyof FlagTargeting | "rolloutPlan"> &
  Partial<FlagTargeting> & { rolloutPlan?: RolloutPlan | null };

/** A flag as evaluation sees it. Mutable only through `ProjectState`. */
export interface FlagState extends TargetedFlag {
  readonly id: string;
  name: string;
  status: FlagStatus;
  percentageActors: number;
  percentageCalls: number;
  /** Attached actor ids: a set shared by every flag with none is replaced, never added to (see NO_IDS). */
  actors: Set<string>;
  /** Attached segment ids, alike. */
  segments: Set<string>;
  type: FlagType;
  variants: readonly Variant[];
  onVariant: string;
  offVariant: string;
  rules: readonly Rule[];
  prerequisites: readonly Prerequisite[];
  /** The configuration's timed rollout; null: none. Changed by its own change kind, `flag.rollout`. */
  rolloutPlan: RolloutPlan | null;
  /** Set to null by `ProjectState.putFlag`: the flag's bucket cache, made at its first actor rollout (flagBucket). */
  bucketCache?: Map<string, number> | null;
}

/** A flag in the JSON form of a project's state. */
export interface FlagJSON extends Partial<FlagTargeting> {
  readonly id: string;
  readonly name: string;
  readonly status: FlagStatus;
  readonly percentageActors: number;
  readonly percentageCalls: number;
  /** Actor ids attached directly. */
  readonly actors: readonly string[];
  /** Ids of the attached segments. */
  readonly segments: readonly string[];
  // Format 2 adds the flag's targeting (absent in format 1: a boolean flag with no rules).
  /** Format 3: the configuration's timed rollout plan (absent: none). */
  readonly rolloutPlan?: RolloutPlan;
}

/** The whole evaluation state of a project, as the stream's `snapshot` event carries it. */
export interface ProjectStateJSON {
  readonly format: number;
  readonly flags: readonly FlagJSON[];
  /** Members of every segment that has any, by segment id. */
  readonly segments: Readonly<Record<string, readonly string[]>>;
  /** Format 2: the conditions of every segment that has any, by segment id. */
  readonly segmentConditions?: Readonly<Record<string, readonly Condition[]>>;
}

/** A flag's fields in a `flag.upserted` change; a targeting field left out keeps its value (a new flag's default). */
export interface FlagChangeFields extends Partial<FlagTargeting> {
  readonly id: string;
  readonly name: string;
  readonly status: FlagStatus;
  readonly percentageActors: number;
  readonly percentageCalls: number;
}

/** One change to a project's evaluation state, as the stream's `change` events carry them. */
export type ProjectChange =
  | {
      readonly kind: "flag.upserted";
      readonly flag: FlagChangeFields;
      readonly addActors: readonly string[];
      readonly removeActors: readonly string[];
      readonly addSegments: readonly string[];
      readonly removeSegments: readonly string[];
    }
  | { readonly kind: "flag.deleted"; readonly id: string }
  | {
      readonly kind: "segment.members";
      readonly segmentId: string;
      readonly add: readonly string[];
      readonly remove: readonly string[];
    }
  | { readonly kind: "segment.deleted"; readonly segmentId: string }
  /** A flag's variants changed (they belong to its definition, so to every environment). */
  | { readonly kind: "flag.variants"; readonly id: string; readonly variants: readonly Variant[] }
  /** A segment's conditions changed (empty: listed members only). */
  | { readonly kind: "segment.conditions"; readonly segmentId: string; readonly conditions: readonly Condition[] }
  /**
   * A configuration's timed rollout plan changed (null: removed). A kind of its own, not a field of
   * `flag.upserted`: a reader that does not know plans stops at it rather than ignore the plan.
   */
  | { readonly kind: "flag.rollout"; readonly id: string; readonly rolloutPlan: RolloutPlan | null };

const PROJECT_CHANGE_KINDS: ReadonlySet<string> = new Set([
  "flag.upserted",
  "flag.deleted",
  "segment.members",
  "segment.deleted",
  "flag.variants",
  "segment.conditions",
  "flag.rollout",
]);

/** Whether a change's targeting field differs from the flag's (compared as JSON: both are plain data). */
const differs = (a: unknown, b: unknown): boolean => a !== b && JSON.stringify(a) !== JSON.stringify(b);

/** Whether a change (of any shape with a `kind`) is one a project's state applies. */
export function isProjectChange(change: { readonly kind: string }): change is ProjectChange {
  return PROJECT_CHANGE_KINDS.has(change.kind);
}

/** Compares as the database does with bytewise collation, for the ASCII names flags are allowed. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class ProjectState {
  readonly flagsByName = new Map<string, FlagState>();
  readonly flagsById = new Map<string, FlagState>();

  /**
   * @param segmentMembers Members of every segment that has any, by segment id. Segments belong to the
   * project, not to one environment: the server's states of a project's environments share one map.
   * @param conditionsBySegment The conditions of every segment that has any, shared alike.
   */
  constructor(
    readonly segmentMembers: Map<string, Set<string>> = new Map(),
    readonly conditionsBySegment: Map<string, readonly Condition[]> = new Map(),
  ) {}
  /**
   * The stream version of the last change that could make any evaluation of this project answer
   * differently; changes evaluation does not see leave it.
   */
  evaluationVersion = 0;
  private sortedNames: string[] | undefined;

  /**
   * A state with the same flags, configured alike but held apart (changing one leaves the other), over the
   * same segment members: a new environment copied from another.
   */
  copy(): ProjectState {
    const state = new ProjectState(this.segmentMembers, this.conditionsBySegment);
    for (const flag of this.flagsById.values()) {
      // Targeting is immutable data, replaced whole on change: the copies may share it.
      state.putFlag(flagStateOf(flag));
    }
    return state;
  }

  /** Flag names in ascending (code unit) order, rebuilt lazily after a create or delete. */
  flagNamesInOrder(): readonly string[] {
    this.sortedNames ??= [...this.flagsByName.keys()].sort(compareText);
    return this.sortedNames;
  }

  readonly isMember = (segmentId: string, actorId: string): boolean =>
    this.segmentMembers.get(segmentId)?.has(actorId) === true;

  /** A segment's conditions: with `isMember` and `flag`, this makes a ProjectState the resolver `evaluateFlag` takes. */
  segmentConditions(segmentId: string): readonly Condition[] | undefined {
    return this.conditionsBySegment.get(segmentId);
  }

  /** A flag by name: with `isMember`, this makes a ProjectState the resolver `evaluate` takes. */
  flag(name: string): FlagState | undefined {
    return this.flagsByName.get(name);
  }

  putFlag(input: FlagInput): void {
    // Filled in on the object itself: the state holds (and changes in place) the object it was given.
    const flag = input as FlagState;
    flag.type ??= "boolean";
    flag.variants ??= BOOLEAN_VARIANTS;
    flag.onVariant ??= "on";
    flag.offVariant ??= "off";
    flag.rules ??= NONE;
    flag.prerequisites ??= NONE;
    flag.rolloutPlan ??= null;
    // Names never change (they are the flag's address), so only a new flag reorders the list, and a
    // flag's bucket cache stays valid for its life.
    if (!this.flagsById.has(flag.id)) this.sortedNames = undefined;
    // Every flag of a state caches its buckets (flagBucket), from its first actor rollout on.
    flag.bucketCache ??= null;
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
    this.conditionsBySegment.delete(segmentId);
    for (const flag of this.flagsById.values()) flag.segments.delete(segmentId);
  }

  addMember(segmentId: string, actorId: string): boolean {
    let members = this.segmentMembers.get(segmentId);
    if (!members) {
      members = new Set<string>();
      this.segmentMembers.set(segmentId, members);
    }
    if (members.has(actorId)) return false;
    members.add(actorId);
    return true;
  }

  /** Applies one change; answers whether any evaluation of the project may now answer differently. */
  apply(change: ProjectChange): boolean {
    switch (change.kind) {
      case "flag.upserted": {
        const current = this.flagsById.get(change.flag.id);
        const given = change.flag;
        const changed =
          current === undefined ||
          current.status !== given.status ||
          current.percentageActors !== given.percentageActors ||
          current.percentageCalls !== given.percentageCalls ||
          TARGETING_FIELDS.some((field) => given[field] !== undefined && differs(given[field], current[field])) ||
          change.addActors.some((id) => !current.actors.has(id)) ||
          change.removeActors.some((id) => current.actors.has(id)) ||
          change.addSegments.some((id) => !current.segments.has(id)) ||
          change.removeSegments.some((id) => current.segments.has(id));
        const flag: FlagState = current ?? {
          ...BOOLEAN_TARGETING,
          id: given.id,
          name: given.name,
          status: given.status,
          percentageActors: given.percentageActors,
          percentageCalls: given.percentageCalls,
          actors: NO_IDS,
          segments: NO_IDS,
          rolloutPlan: null,
        };
        flag.status = given.status;
        flag.percentageActors = given.percentageActors;
        flag.percentageCalls = given.percentageCalls;
        flag.name = given.name;
        // Replaced only when they differ: evaluation keeps a flag's compiled rules while they stay the same arrays.
        if (given.type !== undefined && given.type !== flag.type) flag.type = given.type;
        if (given.variants !== undefined && differs(given.variants, flag.variants)) flag.variants = given.variants;
        if (given.onVariant !== undefined) flag.onVariant = given.onVariant;
        if (given.offVariant !== undefined) flag.offVariant = given.offVariant;
        if (given.rules !== undefined && differs(given.rules, flag.rules)) flag.rules = given.rules;
        if (given.prerequisites !== undefined && differs(given.prerequisites, flag.prerequisites)) {
          flag.prerequisites = given.prerequisites;
        }
        if (change.addActors.length > 0) flag.actors = ownIds(flag.actors);
        for (const actorId of change.addActors) flag.actors.add(actorId);
        for (const actorId of change.removeActors) flag.actors.delete(actorId);
        if (change.addSegments.length > 0) flag.segments = ownIds(flag.segments);
        for (const segmentId of change.addSegments) flag.segments.add(segmentId);
        for (const segmentId of change.removeSegments) flag.segments.delete(segmentId);
        this.putFlag(flag);
        return changed;
      }
      case "flag.rollout": {
        const flag = this.flagsById.get(change.id);
        if (flag === undefined || !differs(change.rolloutPlan, flag.rolloutPlan)) return false;
        flag.rolloutPlan = change.rolloutPlan;
        return true;
      }
      case "flag.variants": {
        const flag = this.flagsById.get(change.id);
        if (flag === undefined || !differs(change.variants, flag.variants)) return false;
        flag.variants = change.variants;
        return true;
      }
      case "segment.conditions": {
        const current = this.conditionsBySegment.get(change.segmentId) ?? NONE;
        if (!differs(change.conditions, current)) return false;
        if (change.conditions.length === 0) this.conditionsBySegment.delete(change.segmentId);
        else this.conditionsBySegment.set(change.segmentId, change.conditions);
        return true;
      }
      case "flag.deleted":
        if (!this.flagsById.has(change.id)) return false;
        this.deleteFlag(change.id);
        return true;
      case "segment.members": {
        let changed = false;
        for (const actorId of change.add) changed = this.addMember(change.segmentId, actorId) || changed;
        const members = this.segmentMembers.get(change.segmentId);
        for (const actorId of change.remove) changed = members?.delete(actorId) === true || changed;
        return changed;
      }
      case "segment.deleted":
        this.deleteSegment(change.segmentId);
        return true;
    }
  }

  /** The whole state in its JSON form, flags in name order. */
  toJSON(): ProjectStateJSON {
    const flags: FlagJSON[] = [];
    let planned = false;
    for (const name of this.flagNamesInOrder()) {
      const flag = this.flagsByName.get(name);
      if (!flag) continue;
      flags.push({
        id: flag.id,
        name: flag.name,
        status: flag.status,
        percentageActors: flag.percentageActors,
        percentageCalls: flag.percentageCalls,
        actors: [...flag.actors],
        segments: [...flag.segments],
        ...pickTargeting(flag),
        ...(flag.rolloutPlan === null ? {} : { rolloutPlan: flag.rolloutPlan }),
      });
      if (flag.rolloutPlan !== null) planned = true;
    }
    const segments: Record<string, string[]> = {};
    for (const [segmentId, members] of this.segmentMembers) if (members.size > 0) segments[segmentId] = [...members];
    const segmentConditions: Record<string, readonly Condition[]> = {};
    for (const [segmentId, conditions] of this.conditionsBySegment) segmentConditions[segmentId] = conditions;
    return { format: planned ? PLANNED_STATE_FORMAT : STATE_FORMAT, flags, segments, segmentConditions };
  }

  /** A state from its JSON form (format 1, 2 or 3); throws on a format this code does not know. */
  static fromJSON(json: ProjectStateJSON): ProjectState {
    if (!READABLE_STATE_FORMATS.includes(json.format)) {
      throw new Error(
        `unknown project state format ${String(json.format)}: this code reads formats ${READABLE_STATE_FORMATS.join(", ")}; upgrade it to read a newer server's state`,
      );
    }
    const state = new ProjectState();
    for (const flag of json.flags) {
      state.putFlag(flagStateOf(flag));
    }
    for (const [segmentId, members] of Object.entries(json.segments)) {
      state.segmentMembers.set(segmentId, new Set(members));
    }
    for (const [segmentId, conditions] of Object.entries(json.segmentConditions ?? {})) {
      if (conditions.length > 0) state.conditionsBySegment.set(segmentId, conditions);
    }
    return state;
  }
}
