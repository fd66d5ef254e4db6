import { flagBucket, inCallRollout, inFlagRollout, rolloutThreshold } from "./bucketing.js";
import { PREREQUISITE_DEPTH_MAX } from "../contract/limits.js";
import { type CompiledSplit, compiled, errorAnswer } from "./compile.js";
import { inSegment } from "./conditions.js";
import { ConfigurationError, MatchingBudgetExceeded, nextEvaluation, type Scope } from "./scope.js";
import { resolutionOf, resolvedAs } from "./resolution.js";
import { bucketingValue, splitBucket, weightIndex } from "./split.js";
import { planView } from "./rollout-plan.js";
import type {
  ActorStanding,
  DecisionOptions,
  EvaluableFlag,
  EvaluationContext,
  FlagDecision,
  FlagEvaluation,
  SegmentMembership,
  TargetedFlag,
  TargetingResolver,
} from "./types.js";

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
  /** Whether the evaluated flag's own call rollout is left out (a decision in detail draws nothing for it). */
  withoutCallRollout = false;
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

/** The weight's answer for the context, or null when the split has nothing to bucket on. */
function splitAnswer(flag: TargetedFlag, ruleId: string, split: CompiledSplit, scope: Scope): FlagEvaluation | null {
  const value = bucketingValue(split.bucketBy, scope.attributes, scope.actorIds);
  if (value === undefined) return null;
  const bucket = splitBucket(flag.name, ruleId, value);
  return split.answers[weightIndex(split.bounds, bucket)] as FlagEvaluation;
}

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

/** The evaluation's time (`$now`): read from the resolver's clock once per evaluation, when first needed. */
function nowOf(scope: EvaluationScope): number {
  if (Number.isNaN(scope.now)) scope.now = scope.resolver.now ? scope.resolver.now() : Date.now();
  return scope.now;
}

/** Evaluates one flag within an evaluation (`depth` counts the prerequisites walked to reach it). */
function evaluateIn(
  planned: TargetedFlag,
  scope: EvaluationScope,
  resolver: TargetingResolver,
  depth: number,
): FlagEvaluation {
  // A timed rollout's steps in force at this evaluation's time (the flag itself when it has no plan); a
  // plan the validator refuses answers its error, as the rest of a configuration would.
  let flag = planned;
  if (planned.rolloutPlan != null) {
    const own = compiled(planned);
    if (own.error !== null) return own.error;
    flag = planView(planned, nowOf(scope));
  }
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
    (depth > 0 || !scope.withoutCallRollout) &&
    inCallRollout(flag.percentageCalls, resolver.random ? resolver.random() : Math.random())
  ) {
    return c.answers.SPLIT;
  }
  return c.answers.DEFAULT;
}

/**
 * The answer a flag gives every context, or undefined when the context, the clock, a draw or another flag
 * may change it: a disabled flag, an enabled one without prerequisites, a conditional one that targets
 * nothing, and one whose configuration cannot be evaluated. It is evaluateIn's answer for any context,
 * so a caller may reuse it for every client until the flag's configuration changes (OFREP's bulk answer).
 */
export function constantAnswer(flag: TargetedFlag): FlagEvaluation | undefined {
  const c = compiled(flag);
  if (c.error !== null) return c.error;
  if (flag.status === "disabled") return c.answers.DISABLED;
  // Its steps change the answer as time passes.
  if (flag.rolloutPlan != null && flag.rolloutPlan.steps.length > 0 && flag.status === "conditional") return undefined;
  if (c.prerequisitesCompiled.length > 0) return undefined;
  if (flag.status === "enabled") return c.answers.STATIC;
  const targets =
    flag.actors.size > 0 ||
    flag.segments.size > 0 ||
    c.rulesCompiled.length > 0 ||
    flag.percentageActors > 0 ||
    flag.percentageCalls > 0;
  return targets ? undefined : c.answers.DEFAULT;
}

/**
 * How an actor is targeted by a flag's attachments, in the order a decision names them: undefined when it
 * is not, null when it is attached directly, otherwise the first of the flag's attached segments (in the
 * flag's order) it is a listed member of.
 */
export function attachmentOf(
  flag: EvaluableFlag,
  actorId: string,
  isMember: SegmentMembership,
): string | null | undefined {
  if (flag.actors.has(actorId)) return null;
  for (const segmentId of flag.segments) if (isMember(segmentId, actorId)) return segmentId;
  return undefined;
}

/** How each actor of the context stands with the flag (ActorStanding). */
function standings(flag: TargetedFlag, actorIds: readonly string[], isMember: SegmentMembership): ActorStanding[] {
  return actorIds.map((actorId) => ({
    actorId,
    attached: flag.actors.has(actorId),
    segments: [...flag.segments].filter((segmentId) => isMember(segmentId, actorId)),
    bucket: flagBucket(flag, actorId),
    inRollout: inFlagRollout(flag, actorId),
  }));
}

/**
 * What decided `answer`, the answer to `flag` in this evaluation (its scope still holds the context): the
 * engine's answer names the status, a prerequisite or a rule itself; an answer by the flag's attachments
 * is named in the order of the actors (FlagDecision), and one by the actor rollout by its first actor in it.
 */
function decisionOf(flag: TargetedFlag, answer: FlagEvaluation, scope: EvaluationScope): FlagDecision {
  const actorIds = scope.actorIds;
  const isMember = scope.resolver.isMember;
  let rule: FlagDecision["rule"] = "none";
  let actorId: string | null = null;
  let segmentId: string | null = null;
  let ruleIndex: number | null = null;
  if (answer.reason === "DISABLED" || answer.reason === "STATIC") rule = "status";
  else if (answer.reason === "PREREQUISITE_FAILED") rule = "prerequisite";
  else if (answer.ruleId !== undefined) {
    rule = "rule";
    ruleIndex = compiled(flag).rulesCompiled.findIndex((r) => r.id === answer.ruleId);
  } else if (answer.reason === "TARGETING_MATCH") {
    rule = "segment";
    for (const id of actorIds) {
      const through = attachmentOf(flag, id, isMember);
      if (through === undefined) continue;
      rule = through === null ? "actor" : "segment";
      actorId = id;
      segmentId = through;
      break;
    }
    // No actor is attached or listed: the first attached segment whose conditions hold decided.
    if (actorId === null) {
      for (const id of flag.segments) {
        if (inSegment(scope, id)) {
          segmentId = id;
          break;
        }
      }
    }
  } else if (answer.reason === "SPLIT") {
    // Not a rule's split, and the flag's own call rollout is left out: the actor rollout decided.
    rule = "actor_rollout";
    actorId = actorIds.find((id) => inFlagRollout(flag, id)) ?? null;
  }
  const decision: FlagDecision = {
    ...answer,
    rule,
    actorId,
    segmentId,
    ruleIndex,
    threshold: rolloutThreshold(flag.percentageActors),
    callRolloutPercentage: answer.reason === "DEFAULT" ? flag.percentageCalls : 0,
    actors: standings(flag, actorIds, isMember),
  };
  return resolvedAs(decision, answer);
}

/** What the last evaluation that threw threw, until `thrown()` takes it. */
let lastThrown: { readonly error: unknown } | null = null;

/**
 * The answer of an evaluation that threw: ERROR with PARSE_ERROR for a configuration the validator
 * refuses, GENERAL otherwise. What was thrown is kept for `thrown()`.
 */
function errorFor(error: unknown): FlagEvaluation {
  lastThrown = { error };
  if (error instanceof ConfigurationError) return errorAnswer("PARSE_ERROR", error.message);
  if (error instanceof MatchingBudgetExceeded) return errorAnswer("GENERAL", error.message);
  return errorAnswer("GENERAL", error instanceof Error ? error.message : String(error));
}

/**
 * What the last evaluation that answered ERROR because something threw (a resolver, a draw) threw, taken
 * once: the seed's evaluate and explain throw it again, as they always let such an error through.
 */
export function thrown(): { readonly error: unknown } | null {
  const taken = lastThrown;
  lastThrown = null;
  return taken;
}

/**
 * Evaluates a flag for a context: which variant it serves, and why. The one evaluation engine: the
 * server's check, explain and OFREP, the SDK's local evaluator and the OpenFeature providers answer with
 * it, and `resolutionOf` maps its answer to theirs. It never throws: a configuration the validator would
 * refuse (an unknown variant, an invalid pattern, a prerequisite cycle) answers reason ERROR with errorCode
 * PARSE_ERROR, a resolver that throws answers ERROR with GENERAL; then variant and value are null and the
 * caller serves its own default, as OpenFeature does.
 *
 * Order: `disabled` serves offVariant (DISABLED). Otherwise every prerequisite flag, evaluated for the
 * same context, must serve one of its listed variants, or the flag serves offVariant
 * (PREREQUISITE_FAILED). Then `enabled` serves onVariant (STATIC); `conditional` serves onVariant to an
 * attached actor or a context in an attached segment (TARGETING_MATCH), else the first rule whose
 * conditions all hold decides (TARGETING_MATCH, or SPLIT for a split), else the actor rollout and the call
 * rollout serve onVariant (SPLIT), else offVariant (DEFAULT). A boolean flag with no rules and no
 * prerequisites is the seed's flag: `evaluate` is this, answer for answer and draw for draw.
 *
 * With `{ detail: true }` it answers a FlagDecision: the same answer with what decided and how each actor
 * stands (explain reads it), the flag's own call rollout left out (nothing drawn for it).
 */
export function evaluateFlag(
  flag: TargetedFlag,
  context: EvaluationContext,
  resolver: TargetingResolver | SegmentMembership,
): FlagEvaluation;
export function evaluateFlag(
  flag: TargetedFlag,
  context: EvaluationContext,
  resolver: TargetingResolver | SegmentMembership,
  options: DecisionOptions,
): FlagDecision;
export function evaluateFlag(
  flag: TargetedFlag,
  context: EvaluationContext,
  resolver: TargetingResolver | SegmentMembership,
  options?: DecisionOptions,
): FlagEvaluation {
  const project: TargetingResolver = typeof resolver === "function" ? { isMember: resolver } : resolver;
  const detail = options !== undefined && options.detail === true;
  let scope = spare;
  if (scope === null) scope = new EvaluationScope(project);
  else {
    spare = null;
    scope.resolver = project;
  }
  try {
    let answer: FlagEvaluation;
    try {
      scope.attributes = context.attributes ?? undefined;
      scope.actorIds = context.actorIds ?? NO_ACTORS;
      scope.now = Number.NaN;
      scope.evaluation = nextEvaluation();
      scope.matched = 0;
      scope.withoutCallRollout = detail;
      answer = evaluateIn(flag, scope, project, 0);
    } catch (error) {
      answer = errorFor(error);
    }
    if (!detail) return answer;
    return decisionOf(flag.rolloutPlan == null ? flag : planView(flag, nowOf(scope)), answer, scope);
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
    return resolutionOf(flag, evaluateFlag(flag, context, deterministic)).enabled;
  };
}
