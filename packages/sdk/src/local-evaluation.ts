import {
  ACTOR_ID_MAX_LENGTH,
  type AttributeValue,
  evaluateFlag,
  failedResolution,
  isActorId,
  MAX_ACTORS,
  type ProjectState,
  type Resolution,
  type ResolutionErrorCode,
  resolutionOf,
  type TargetingResolver,
} from "@flagstaff/core";

// The local evaluator's evaluation: a context checked as the server checks it, the flag looked up in the
// state, and core's engine (`evaluateFlag`, mapped by `resolutionOf`), with the state as its resolver.

/**
 * Why a local evaluation could not be made; the names are OpenFeature's (and OFREP's) error codes
 * (core's RESOLUTION_ERROR_CODES). PARSE_ERROR: the flag's configuration is one the server's validator
 * would refuse (it cannot come from a server of this version); GENERAL: anything else the engine could
 * not evaluate.
 */
export type LocalEvaluationErrorCode = ResolutionErrorCode;

/**
 * Who and what a flag is evaluated for: actors (any one attached or in the rollout turns it on) and the
 * context attributes its rules read (a string, a number, a boolean or a list of strings; null or
 * undefined counts as missing).
 */
export interface LocalEvaluationContext {
  readonly actorIds?: readonly string[];
  readonly attributes?: Readonly<Record<string, AttributeValue | null | undefined>>;
}

/**
 * A local evaluation: the variant served, its value, `enabled` (the variant is not the flag's offVariant;
 * a boolean flag: it serves `on`) and the reason, as the server's check and OFREP answer them (core's
 * Resolution, mapped by the same resolutionOf); `ruleId` names the rule that decided, `prerequisite` the
 * prerequisite flag that failed. When no evaluation could be made: `enabled: false`, reason `ERROR`,
 * variant and value null, and why.
 */
export type LocalEvaluation = Resolution;

/** The attributes' problem, if they are not an object of attributes. */
function attributesProblem(attributes: unknown): string | undefined {
  if (attributes === undefined || attributes === null) return undefined;
  if (typeof attributes !== "object" || Array.isArray(attributes)) {
    return "attributes must be an object of attribute names to values.";
  }
  return undefined;
}

/** The server's rule for actor ids (docs/api.md, Limits), so that a local answer is one the server would give. */
function actorIdProblem(actorIds: unknown): string | undefined {
  if (!Array.isArray(actorIds)) return "actorIds must be an array of strings.";
  if (actorIds.length > MAX_ACTORS) return `At most ${MAX_ACTORS} actor ids.`;
  for (let i = 0; i < actorIds.length; i++) {
    const id: unknown = actorIds[i];
    if (typeof id !== "string") return "actorIds must be an array of strings.";
    if (!isActorId(id)) {
      return `${JSON.stringify(id)} is not an actor id (1–${ACTOR_ID_MAX_LENGTH} characters, no control characters, other than . and ..).`;
    }
  }
  return undefined;
}

const NO_ACTORS: readonly string[] = Object.freeze([]);

/**
 * Evaluations in one project state: its resolver for the engine (segments' members and conditions, other
 * flags, the clock, the draw), made once with the state, and one context object handed to the engine on
 * every evaluation (the engine reads its two fields as it starts and keeps nothing of it), so that an
 * evaluation allocates no context.
 */
export class StateEvaluations {
  private readonly resolver: TargetingResolver;
  private readonly context: { actorIds: readonly string[]; attributes: LocalEvaluationContext["attributes"] } = {
    actorIds: NO_ACTORS,
    attributes: undefined,
  };

  constructor(
    readonly state: ProjectState,
    now: () => number,
    random: () => number,
  ) {
    this.resolver = {
      isMember: state.isMember,
      segmentConditions: (segmentId) => state.segmentConditions(segmentId),
      flag: (name) => state.flag(name),
      now,
      random,
    };
  }

  /**
   * Evaluates `flagName` for a context given as a list of actor ids or as `{actorIds, attributes}`: never
   * throws; a context the server would refuse or an unknown flag answers reason ERROR with its code.
   */
  evaluate(flagName: string, context: readonly string[] | LocalEvaluationContext): LocalEvaluation {
    const isList = Array.isArray(context);
    if (!isList && (typeof context !== "object" || context === null)) {
      return failedResolution("INVALID_CONTEXT", "The context must be a list of actor ids or {actorIds, attributes}.");
    }
    const actorIds = isList ? (context as readonly string[]) : ((context as LocalEvaluationContext).actorIds ?? []);
    const attributes = isList ? undefined : (context as LocalEvaluationContext).attributes;
    const problem = actorIdProblem(actorIds) ?? attributesProblem(attributes);
    if (problem !== undefined) return failedResolution("INVALID_CONTEXT", problem);
    const flag = typeof flagName === "string" ? this.state.flagsByName.get(flagName) : undefined;
    if (!flag) return failedResolution("FLAG_NOT_FOUND", `Flag ${JSON.stringify(flagName)} does not exist.`);
    const reused = this.context;
    reused.actorIds = actorIds;
    reused.attributes = attributes;
    const answer = evaluateFlag(flag, reused, this.resolver);
    // Nothing of the caller's context is kept past the evaluation.
    reused.actorIds = NO_ACTORS;
    reused.attributes = undefined;
    return resolutionOf(flag, answer);
  }
}
