import { actorBucket, inActorRollout, inCallRollout } from "./bucketing.js";
import type { EvaluationReason, ExplainedRule, FlagStatus } from "./contract/enums.js";

export { inActorRollout };

export type { EvaluationReason, ExplainedRule, FlagStatus };

/** The only percentages a flag's rollouts may take. */
export const ALLOWED_PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100] as const;
export type Percentage = (typeof ALLOWED_PERCENTAGES)[number];

/** What evaluation needs to know about a flag. */
export interface EvaluableFlag {
  readonly name: string;
  readonly status: FlagStatus;
  readonly percentageActors: number;
  readonly percentageCalls: number;
  /** Actor ids attached to the flag directly. */
  readonly actors: ReadonlySet<string>;
  /** Ids of the segments attached to the flag. */
  readonly segments: ReadonlySet<string>;
  /**
   * The actor's bucket for this flag, when its holder caches them (`ProjectState` does); otherwise it is
   * computed (`actorBucket`). Either way the same number: a cache only saves the CRC-32.
   */
  readonly bucketOf?: (actorId: string) => number;
}

/** Whether an actor falls in the flag's actor rollout, through the flag's bucket cache when it has one. */
function inFlagRollout(flag: EvaluableFlag, actorId: string): boolean {
  const percentage = flag.percentageActors;
  if (percentage <= 0) return false;
  if (percentage >= 100) return true;
  const bucket = flag.bucketOf ? flag.bucketOf(actorId) : actorBucket(flag.name, actorId);
  return bucket < percentage * 1000;
}

/** Answers whether an actor is a member of a segment. */
export type SegmentMembership = (segmentId: string, actorId: string) => boolean;

/**
 * What an evaluation may look up in the rest of its project: segment membership today; other flags
 * (for prerequisites) when a rule needs them. `ProjectState` is one. A bare membership function is
 * accepted too.
 */
export interface ProjectResolver {
  readonly isMember: SegmentMembership;
  /** A flag of the project by name, for rules that depend on other flags. */
  flag?(name: string): EvaluableFlag | undefined;
}

/** The membership function of a resolver (or the function itself). */
const membership = (project: ProjectResolver | SegmentMembership): SegmentMembership =>
  typeof project === "function" ? project : project.isMember;

export interface Evaluation {
  readonly enabled: boolean;
  readonly reason: EvaluationReason;
}

// Shared frozen answers: the check path allocates no result object.
const RESULTS: Readonly<Record<EvaluationReason, Evaluation>> = Object.freeze({
  DISABLED: Object.freeze({ enabled: false, reason: "DISABLED" }),
  STATIC: Object.freeze({ enabled: true, reason: "STATIC" }),
  TARGETING_MATCH: Object.freeze({ enabled: true, reason: "TARGETING_MATCH" }),
  SPLIT: Object.freeze({ enabled: true, reason: "SPLIT" }),
  DEFAULT: Object.freeze({ enabled: false, reason: "DEFAULT" }),
});

/** Whether rule 1 or 2 holds: the actor is attached to the flag directly or through a segment. */
export function isTargeted(
  flag: EvaluableFlag,
  actorId: string,
  project: ProjectResolver | SegmentMembership,
): boolean {
  const isMember = membership(project);
  if (flag.actors.has(actorId)) return true;
  for (const segmentId of flag.segments) {
    if (isMember(segmentId, actorId)) return true;
  }
  return false;
}

/** Whether the flag is on for an actor by its deterministic rules (random call rollout excluded). */
export function isEnabledForActor(
  flag: EvaluableFlag,
  actorId: string,
  isMember: ProjectResolver | SegmentMembership,
): boolean {
  if (flag.status === "enabled") return true;
  if (flag.status === "disabled") return false;
  return isTargeted(flag, actorId, isMember) || inFlagRollout(flag, actorId);
}

/** Whether a flag counts as enabled for a segment: enabled, or conditional with that segment attached (not rollouts). */
export function isEnabledForSegment(flag: EvaluableFlag, segmentId: string): boolean {
  return flag.status === "enabled" || (flag.status === "conditional" && flag.segments.has(segmentId));
}

/**
 * Evaluates a check: disabled → off; enabled → on; conditional → on when any actor is attached, is in an
 * attached segment, or falls in the actor rollout, or when the call falls in the call rollout.
 * `random` is drawn at most once per evaluation and must return a uniform number in [0, 1).
 */
export function evaluate(
  flag: EvaluableFlag,
  actorIds: readonly string[],
  project: ProjectResolver | SegmentMembership,
  random: () => number,
): Evaluation {
  if (flag.status === "disabled") return RESULTS.DISABLED;
  if (flag.status === "enabled") return RESULTS.STATIC;
  const isMember = membership(project);
  for (const actorId of actorIds) {
    if (isTargeted(flag, actorId, isMember)) return RESULTS.TARGETING_MATCH;
  }
  for (const actorId of actorIds) {
    if (inFlagRollout(flag, actorId)) return RESULTS.SPLIT;
  }
  if (flag.percentageCalls > 0 && inCallRollout(flag.percentageCalls, random())) return RESULTS.SPLIT;
  return RESULTS.DEFAULT;
}

/** Which rule decided an explained evaluation. */
/** How one actor stands with a flag. */
export interface ActorExplanation {
  readonly actorId: string;
  /** Attached to the flag directly. */
  readonly attached: boolean;
  /** The flag's attached segments the actor is a member of. */
  readonly segments: readonly string[];
  /** The actor's bucket for this flag, 0 to 99,999: in the actor rollout when below `threshold`. */
  readonly bucket: number;
  readonly inRollout: boolean;
}

/** Why a flag answers as it does for some actors: the deterministic rules, rule by rule. */
export interface Explanation {
  /** The answer by the deterministic rules; a call may still be on by the call rollout. */
  readonly enabled: boolean;
  /** As `evaluate` names it, leaving out the call rollout (DEFAULT where only a call draw could turn it on). */
  readonly reason: EvaluationReason;
  readonly rule: ExplainedRule;
  /** The actor that matched (attached, in a segment, or in the rollout), if any. */
  readonly actorId: string | null;
  /** The attached segment it matched through, if any. */
  readonly segmentId: string | null;
  /** percentageActors × 1,000: buckets below it are in the actor rollout. */
  readonly threshold: number;
  /** The chance a call is on anyway when no deterministic rule holds (percentageCalls; 0 otherwise). */
  readonly callRolloutPercentage: number;
  readonly actors: readonly ActorExplanation[];
}

/**
 * Explains an evaluation: the same rules, in the same order, as `evaluate`, with what each actor matched.
 * It draws nothing, so it answers the same every time: `enabled` is `evaluate`'s answer for every draw
 * when it is true, and for a draw outside the call rollout when it is false.
 */
export function explain(
  flag: EvaluableFlag,
  actorIds: readonly string[],
  project: ProjectResolver | SegmentMembership,
): Explanation {
  const isMember = membership(project);
  const threshold = Math.max(0, Math.min(100, flag.percentageActors)) * 1000;
  const actors = actorIds.map((actorId) => ({
    actorId,
    attached: flag.actors.has(actorId),
    segments: [...flag.segments].filter((segmentId) => isMember(segmentId, actorId)),
    bucket: actorBucket(flag.name, actorId),
    inRollout: inActorRollout(flag.name, actorId, flag.percentageActors),
  }));
  const base = { threshold, actors, actorId: null, segmentId: null, callRolloutPercentage: 0 };
  if (flag.status !== "conditional") {
    const enabled = flag.status === "enabled";
    return { ...base, enabled, reason: enabled ? "STATIC" : "DISABLED", rule: "status" };
  }
  for (const actor of actors) {
    if (actor.attached)
      return { ...base, enabled: true, reason: "TARGETING_MATCH", rule: "actor", actorId: actor.actorId };
    const segmentId = actor.segments[0];
    if (segmentId !== undefined) {
      return { ...base, enabled: true, reason: "TARGETING_MATCH", rule: "segment", actorId: actor.actorId, segmentId };
    }
  }
  const inRollout = actors.find((actor) => actor.inRollout);
  if (inRollout) return { ...base, enabled: true, reason: "SPLIT", rule: "actor_rollout", actorId: inRollout.actorId };
  return { ...base, enabled: false, reason: "DEFAULT", rule: "none", callRolloutPercentage: flag.percentageCalls };
}
