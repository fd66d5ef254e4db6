import { flagBucket, inActorRollout } from "./rules/bucketing.js";
import type { EvaluationReason, ExplainedRule, FlagStatus } from "./contract/enums.js";
import { attachmentOf, evaluateFlag, thrown } from "./rules/evaluate.js";
import { resolutionOf } from "./rules/resolution.js";
import type { ActorStanding, EvaluableFlag, FlagEvaluation, SegmentMembership, TargetedFlag } from "./rules/types.js";
import { BOOLEAN_VARIANTS } from "./rules/variants.js";
import { ALLOWED_PERCENTAGES, type Percentage } from "./contract/limits.js";

export { inActorRollout };

export type { EvaluationReason, ExplainedRule, FlagStatus };

export { ALLOWED_PERCENTAGES, type Percentage };

// What evaluation needs of a flag and of segment membership: defined with the engine's other types.
export type { EvaluableFlag, SegmentMembership } from "./rules/types.js";

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

/** The membership function of a resolver (or the function itself): the seed reads listed members alone. */
const membership = (project: ProjectResolver | SegmentMembership): SegmentMembership =>
  typeof project === "function" ? project : project.isMember;

export interface Evaluation {
  readonly enabled: boolean;
  readonly reason: EvaluationReason;
}

// Shared frozen answers: the seed's evaluate allocates no result object.
const RESULTS: Readonly<Record<EvaluationReason, Evaluation>> = Object.freeze({
  DISABLED: Object.freeze({ enabled: false, reason: "DISABLED" }),
  STATIC: Object.freeze({ enabled: true, reason: "STATIC" }),
  TARGETING_MATCH: Object.freeze({ enabled: true, reason: "TARGETING_MATCH" }),
  SPLIT: Object.freeze({ enabled: true, reason: "SPLIT" }),
  DEFAULT: Object.freeze({ enabled: false, reason: "DEFAULT" }),
});

/**
 * A flag's seed fields alone, read live (ProjectState changes them in place): what the seed's functions
 * evaluate, so that a flag's targeting fields (type, variants, rules, prerequisites) are not read by them.
 */
class SeedFlag implements TargetedFlag {
  constructor(private readonly flag: EvaluableFlag) {}
  get name(): string {
    return this.flag.name;
  }
  get status(): FlagStatus {
    return this.flag.status;
  }
  get percentageActors(): number {
    return this.flag.percentageActors;
  }
  get percentageCalls(): number {
    return this.flag.percentageCalls;
  }
  get actors(): ReadonlySet<string> {
    return this.flag.actors;
  }
  get segments(): ReadonlySet<string> {
    return this.flag.segments;
  }
  readonly bucketOf = (actorId: string): number => flagBucket(this.flag, actorId);
}

const seedFlags = new WeakMap<EvaluableFlag, SeedFlag>();

/**
 * The flag as the seed's rules read it: itself when it is a boolean flag with no rules and no
 * prerequisites (the seed's flag, evaluateFlag's answers then being the seed's), otherwise its seed fields.
 */
function seedFlag(flag: EvaluableFlag): TargetedFlag {
  const t = flag as TargetedFlag;
  if (
    (t.type === undefined || t.type === "boolean") &&
    (t.variants === undefined || t.variants === BOOLEAN_VARIANTS) &&
    (t.onVariant === undefined || t.onVariant === "on") &&
    (t.offVariant === undefined || t.offVariant === "off") &&
    (t.rules === undefined || t.rules.length === 0) &&
    (t.prerequisites === undefined || t.prerequisites.length === 0) &&
    (t.rolloutPlan === undefined || t.rolloutPlan === null)
  ) {
    return t;
  }
  let seed = seedFlags.get(flag);
  if (seed === undefined) {
    seed = new SeedFlag(flag);
    seedFlags.set(flag, seed);
  }
  return seed;
}

/** Whether rule 1 or 2 holds: the actor is attached to the flag directly or through a segment (listed members). */
export function isTargeted(
  flag: EvaluableFlag,
  actorId: string,
  project: ProjectResolver | SegmentMembership,
): boolean {
  return attachmentOf(flag, actorId, membership(project)) !== undefined;
}

/**
 * `evaluateFlag` on a seed flag (seedFlag), throwing what the evaluation caught (the membership function's
 * error, the draw's), as the seed's functions always let it through where evaluateFlag answers ERROR.
 */
function evaluateSeed<T extends FlagEvaluation>(run: () => T): T {
  thrown(); // what an earlier evaluation threw is not this one's
  const answer = run();
  if (answer.reason === "ERROR") {
    const taken = thrown();
    throw taken === null ? new Error(answer.errorMessage ?? "the flag could not be evaluated") : taken.error;
  }
  return answer;
}

/** A draw no call rollout takes. */
const NEVER_IN_CALL_ROLLOUT = () => 1;

/**
 * Whether the flag is on for an actor by its deterministic rules (random call rollout excluded): `evaluate`
 * for that actor alone with no draw in the call rollout.
 */
export function isEnabledForActor(
  flag: EvaluableFlag,
  actorId: string,
  isMember: ProjectResolver | SegmentMembership,
): boolean {
  return evaluate(flag, [actorId], isMember, NEVER_IN_CALL_ROLLOUT).enabled;
}

/** Whether a flag counts as enabled for a segment: enabled, or conditional with that segment attached (not rollouts). */
export function isEnabledForSegment(flag: EvaluableFlag, segmentId: string): boolean {
  return flag.status === "enabled" || (flag.status === "conditional" && flag.segments.has(segmentId));
}

/**
 * The seed's check, kept for the package's users: `evaluateFlag` (the one engine) on the flag's seed fields
 * (status, rollouts, attached actors, attached segments by their listed members), its answer as
 * `{enabled, reason}`. Disabled → off; enabled → on; conditional → on when any actor is attached, is in an
 * attached segment, or falls in the actor rollout, or when the call falls in the call rollout. `random`
 * is drawn at most once per evaluation and must return a uniform number in [0, 1). What throws (the
 * membership function, `random`) is thrown.
 */
export function evaluate(
  flag: EvaluableFlag,
  actorIds: readonly string[],
  project: ProjectResolver | SegmentMembership,
  random: () => number,
): Evaluation {
  const resolver = { isMember: membership(project), random };
  const answer = evaluateSeed(() => evaluateFlag(seedFlag(flag), { actorIds }, resolver));
  return RESULTS[answer.reason as EvaluationReason];
}

/** How one actor stands with a flag (`evaluateFlag`'s ActorStanding). */
export type ActorExplanation = ActorStanding;

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
 * The seed's explanation, kept for the package's users: `evaluateFlag`'s decision in detail (the one
 * engine, `{ detail: true }`) on the flag's seed fields, as `evaluate` would answer without a draw. It
 * draws nothing, so it answers the same every time: `enabled` is `evaluate`'s answer for every draw when
 * it is true, and for a draw outside the call rollout when it is false.
 */
export function explain(
  flag: EvaluableFlag,
  actorIds: readonly string[],
  project: ProjectResolver | SegmentMembership,
): Explanation {
  const seed = seedFlag(flag);
  const decision = evaluateSeed(() => evaluateFlag(seed, { actorIds }, membership(project), { detail: true }));
  return {
    threshold: decision.threshold,
    actors: decision.actors,
    actorId: decision.actorId,
    segmentId: decision.segmentId,
    callRolloutPercentage: decision.callRolloutPercentage,
    enabled: resolutionOf(seed, decision).enabled,
    reason: decision.reason as EvaluationReason,
    rule: decision.rule,
  };
}
