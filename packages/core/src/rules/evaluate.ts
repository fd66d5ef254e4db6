import { actorBucket, inCallRollout } from "../bucketing.js";
import { PREREQUISITE_DEPTH_MAX } from "../contract/limits.js";
import type { SegmentMembership } from "../evaluation.js";
import { type CompiledSplit, compiled, errorAnswer } from "./compile.js";
import { ConfigurationError, inSegment, MatchingBudgetExceeded, nextEvaluation, type Scope } from "./conditions.js";
import { bucketingValue, splitBucket, weightIndex } from "./split.js";
import type { EvaluationContext, FlagEvaluation, TargetedFlag, TargetingResolver } from "./types.js";

const NO_ACTORS: readonly string[] = Object.freeze([]);

/** One evaluation's Scope, its fields set for each evaluation that reuses it. */
class EvaluationScope implements Scope {
  attributes: Readonly<Record<string, unknown>> | undefined = undefined;
  actorIds: readonly string[] = NO_ACTORS;
  resolver: TargetingResolver;
  now = Number.NaN;
  evaluation = 0;
  matched = 0;
  /**
   * The prerequisites evaluated so far in this evaluation, each once: flags that share prerequisites
   * (20 of them, 5 levels deep) would otherwise evaluate them again for every path that reaches them.
   */
  prerequisites: Map<TargetedFlag, FlagEvaluation> | null = null;
  constructor(resolver: TargetingResolver) {
    this.resolver = resolver;
  }
}

/**
 * A Scope no evaluation is using, taken by the next one (rather than a new object per evaluation). An
 * evaluation started inside another (through the resolver) finds none while the outer one holds it, and
 * makes its own; whichever ends last leaves its scope here.
 */
let spare: EvaluationScope | null = null;

/** Whether an actor falls in the flag's actor rollout, through the flag's bucket cache when it has one. */
function inFlagRollout(flag: TargetedFlag, actorId: string): boolean {
  const percentage = flag.percentageActors;
  if (percentage <= 0) return false;
  if (percentage >= 100) return true;
  const bucket = flag.bucketOf ? flag.bucketOf(actorId) : actorBucket(flag.name, actorId);
  return bucket < percentage * 1000;
}

/** The weight's answer for the context, or null when the split has nothing to bucket on. */
function splitAnswer(flag: TargetedFlag, ruleId: string, split: CompiledSplit, scope: Scope): FlagEvaluation | null {
  const value = bucketingValue(split.bucketBy, scope.attributes, scope.actorIds);
  if (value === undefined) return null;
  const bucket = splitBucket(flag.name, ruleId, value);
  return split.answers[weightIndex(split.bounds, bucket)] as FlagEvaluation;
}

/** Evaluates one flag within an evaluation (`depth` counts the prerequisites walked to reach it). */
/** A prerequisite's answer within an evaluation: evaluated the first time it is reached, then remembered. */
function prerequisiteAnswer(
  flag: TargetedFlag,
  scope: EvaluationScope,
  resolver: TargetingResolver,
  depth: number,
): FlagEvaluation {
  let seen = scope.prerequisites;
  if (seen === null) {
    seen = new Map();
    scope.prerequisites = seen;
  }
  let result = seen.get(flag);
  if (result === undefined) {
    result = evaluateIn(flag, scope, resolver, depth);
    seen.set(flag, result);
  }
  return result;
}

function evaluateIn(
  flag: TargetedFlag,
  scope: EvaluationScope,
  resolver: TargetingResolver,
  depth: number,
): FlagEvaluation {
  const c = compiled(flag);
  if (c.error !== null) return c.error;
  // Nothing turns a disabled flag on, so its prerequisites are not even evaluated (as LaunchDarkly's "off").
  if (flag.status === "disabled") return c.answers.DISABLED;

  for (const prerequisite of c.prerequisitesCompiled) {
    // The validator refuses cycles and chains deeper than 5; should one get through, it ends here.
    if (depth >= PREREQUISITE_DEPTH_MAX) {
      throw new ConfigurationError(
        `prerequisites of ${flag.name} go deeper than ${PREREQUISITE_DEPTH_MAX} (or in a cycle)`,
      );
    }
    const other = resolver.flag?.(prerequisite.flag);
    if (other === undefined) return prerequisite.failed;
    const result = prerequisiteAnswer(other, scope, resolver, depth + 1);
    if (result.reason === "ERROR") return result;
    if (result.variant === null || !prerequisite.variants.has(result.variant)) return prerequisite.failed;
  }

  if (flag.status === "enabled") return c.answers.STATIC;

  // conditional: attached actors, attached segments, rules in order, actor rollout, call rollout, offVariant.
  const actorIds = scope.actorIds;
  for (let i = 0; i < actorIds.length; i++)
    if (flag.actors.has(actorIds[i] as string)) return c.answers.TARGETING_MATCH;
  if (flag.segments.size > 0) {
    for (const segmentId of flag.segments) if (inSegment(scope, segmentId)) return c.answers.TARGETING_MATCH;
  }
  const rules = c.rulesCompiled;
  // Where the rule before failed (the index of its first condition that does not hold; its length when
  // all held but its split had nothing to bucket on). A rule sharing its first conditions with the one
  // before (CompiledRule.shared) fails at the same condition when that one failed among them, and is
  // otherwise tested from the first condition after them: the shared ones are not looked at again.
  let failed = 0;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as (typeof rules)[number];
    const shared = rule.shared;
    if (failed < shared) continue;
    const conditions = rule.conditions;
    failed = conditions.failure(scope, shared);
    if (failed < conditions.length) continue;
    if (!("bounds" in rule.answer)) return rule.answer;
    const answer = splitAnswer(flag, rule.id, rule.answer, scope);
    if (answer !== null) return answer;
  }
  if (flag.percentageActors > 0) {
    for (let i = 0; i < actorIds.length; i++) if (inFlagRollout(flag, actorIds[i] as string)) return c.answers.SPLIT;
  }
  if (
    flag.percentageCalls > 0 &&
    inCallRollout(flag.percentageCalls, resolver.random ? resolver.random() : Math.random())
  ) {
    return c.answers.SPLIT;
  }
  return c.answers.DEFAULT;
}

/**
 * Evaluates a flag for a context: which variant it serves, and why. It never throws: a configuration the
 * validator would refuse (an unknown variant, an invalid pattern, a prerequisite cycle) answers reason
 * ERROR with errorCode PARSE_ERROR, a resolver that throws answers ERROR with GENERAL; then variant and
 * value are null and the caller serves its own default, as OpenFeature does.
 *
 * Order: `disabled` serves offVariant (DISABLED). Otherwise every prerequisite flag, evaluated for the
 * same context, must serve one of its listed variants, or the flag serves offVariant
 * (PREREQUISITE_FAILED). Then `enabled` serves onVariant (STATIC); `conditional` serves onVariant to an
 * attached actor or a context in an attached segment (TARGETING_MATCH), else the first rule whose
 * conditions all hold decides (TARGETING_MATCH, or SPLIT for a split), else the actor rollout and the call
 * rollout serve onVariant (SPLIT), else offVariant (DEFAULT). For a boolean flag with no rules and no
 * prerequisites this is `evaluate`, answer for answer and draw for draw.
 */
export function evaluateFlag(
  flag: TargetedFlag,
  context: EvaluationContext,
  resolver: TargetingResolver | SegmentMembership,
): FlagEvaluation {
  const project: TargetingResolver = typeof resolver === "function" ? { isMember: resolver } : resolver;
  let scope = spare;
  if (scope === null) scope = new EvaluationScope(project);
  else {
    spare = null;
    scope.resolver = project;
  }
  try {
    scope.attributes = context.attributes ?? undefined;
    scope.actorIds = context.actorIds ?? NO_ACTORS;
    scope.now = Number.NaN;
    scope.evaluation = nextEvaluation();
    scope.matched = 0;
    return evaluateIn(flag, scope, project, 0);
  } catch (error) {
    if (error instanceof ConfigurationError) return errorAnswer("PARSE_ERROR", error.message);
    if (error instanceof MatchingBudgetExceeded) return errorAnswer("GENERAL", error.message);
    return errorAnswer("GENERAL", error instanceof Error ? error.message : String(error));
  } finally {
    // Nothing of the context is kept past the evaluation.
    scope.attributes = undefined;
    scope.actorIds = NO_ACTORS;
    scope.prerequisites = null;
    spare = scope;
  }
}

/** A draw no call rollout takes: `inCallRollout` holds when the draw is below percentage / 100, at most 1. */
const NEVER_IN_CALL_ROLLOUT = () => 1;

/**
 * Whether a flag serves an actor anything but its offVariant by what the actor id alone decides: the
 * answer of `evaluateFlag` for a context of just that actor id (no attributes), with the random call
 * rollout left out (the flag's and its prerequisites': no draw falls in one). Attached actors and segments,
 * rules (an `in_segment` on a segment the actor is a member of, a split bucketed by the actor id), the
 * actor rollout and prerequisites decide; an answer in error is not "on". For a boolean flag with no rules
 * and no prerequisites this is the seed's `isEnabledForActor`. Answers a function of (flag, actor id) over
 * one resolver (the environment's state, with its clock for `$now`).
 */
export function servedToActor(
  resolver: TargetingResolver | SegmentMembership,
): (flag: TargetedFlag, actorId: string) => boolean {
  const base: TargetingResolver = typeof resolver === "function" ? { isMember: resolver } : resolver;
  const deterministic: TargetingResolver = {
    isMember: base.isMember,
    segmentConditions: (segmentId) => base.segmentConditions?.(segmentId),
    flag: (name) => base.flag?.(name),
    now: () => (base.now ? base.now() : Date.now()),
    random: NEVER_IN_CALL_ROLLOUT,
  };
  const actorIds: string[] = [""];
  const context = { actorIds };
  return (flag, actorId) => {
    actorIds[0] = actorId;
    const result = evaluateFlag(flag, context, deterministic);
    return result.variant !== null && result.variant !== compiled(flag).answers.DEFAULT.variant;
  };
}
