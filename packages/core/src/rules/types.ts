import type {
  ConditionOperator,
  ExplainedRule,
  FlagType,
  ResolutionErrorCode,
  TargetingErrorCode,
  TargetingReason,
} from "../contract/enums.js";
import type { FlagStatus } from "../contract/enums.js";

export type { ConditionOperator, ExplainedRule, FlagType, ResolutionErrorCode, TargetingErrorCode, TargetingReason };

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

/** Answers whether an actor is a member of a segment. */
export type SegmentMembership = (segmentId: string, actorId: string) => boolean;

// The targeting model of issue 25, as evaluation reads it. The TypeBox schemas in ../schemas/targeting.ts
// describe the same shapes for the API (their Static types are assignable to these). Every array here is
// read as immutable: evaluation compiles a flag once and notices a change only when an array (or a key)
// is replaced, not when one is changed in place.

/** A variant's value: a boolean, a string, a finite number, or a JSON object or array. */
export type VariantValue = boolean | string | number | JsonObject | readonly JsonValue[];
export type JsonValue = null | boolean | string | number | JsonObject | readonly JsonValue[];
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

export interface Variant {
  readonly key: string;
  readonly value: VariantValue;
  readonly description?: string;
}

/** A condition on the evaluation context; a rule holds when all of its conditions hold. */
export interface Condition {
  /** The context attribute read (`$now` is the evaluation time); absent for in_segment and not_in_segment. */
  readonly attribute?: string;
  readonly operator: ConditionOperator;
  /** Numbers for eq/gt/gte/lt/lte, strings for every other operator, none for present. */
  readonly values: readonly (string | number)[];
  /** Inverts the condition, except that a missing (or unreadable) attribute still fails it. */
  readonly negate?: boolean;
  /** For in, not_in, starts_with, ends_with, contains and matches. */
  readonly caseInsensitive?: boolean;
}

export interface SplitWeight {
  readonly variant: string;
  /** Percent, 0–100, at most three decimals; a split's weights sum to 100. */
  readonly weight: number;
}

export interface Split {
  /** The attribute bucketed on (a string or an integer); by default the context's first actor id. */
  readonly bucketBy?: string;
  readonly weights: readonly SplitWeight[];
}

/** What a rule serves when it holds: one variant, or a sticky percentage split between variants. */
export type Serve = { readonly variant: string } | { readonly split: Split };

export interface Rule {
  /** Unique within the configuration; part of the split's bucketing salt. */
  readonly id: string;
  readonly description?: string;
  readonly conditions: readonly Condition[];
  readonly serve: Serve;
}

/** The flag is evaluated only when `flag`, evaluated for the same context, serves one of `variants`. */
export interface Prerequisite {
  readonly flag: string;
  readonly variants: readonly string[];
}

/** A step of a timed rollout's actor percentage: from `at` (ISO 8601), the actor rollout is `percentage`. */
export interface PercentageStep {
  readonly at: string;
  readonly percentage: number;
}

/** A step of a timed rollout's rule split: from `at`, the rule `ruleId` splits by these weights. */
export interface WeightsStep {
  readonly at: string;
  readonly ruleId: string;
  readonly weights: readonly SplitWeight[];
}

export type RolloutStep = PercentageStep | WeightsStep;

/**
 * A configuration's timed rollout (rollout-plan.ts): its steps in time order, and when it was paused
 * (absent or null: it runs). The step in force is the last whose time has passed, at evaluation time.
 */
export interface RolloutPlan {
  readonly steps: readonly RolloutStep[];
  readonly pausedAt?: string | null;
}

/**
 * A flag in one environment, as `evaluateFlag` evaluates it: the seed's fields (status, rollouts, attached
 * actors and segments) plus the targeting ones. Every targeting field may be left out, so a seed flag is
 * one: a boolean flag (variants `on`/`off`) with no rules and no prerequisites.
 */
export interface TargetedFlag extends EvaluableFlag {
  /** Default "boolean". */
  readonly type?: FlagType;
  /** Required for string, number and object flags; a boolean flag's are `on` (true) and `off` (false). */
  readonly variants?: readonly Variant[];
  /** Served by `enabled`, attached actors and segments and the rollouts. Boolean flags: "on". */
  readonly onVariant?: string;
  /** Served by `disabled`, when nothing else holds, and when a prerequisite fails. Boolean flags: "off". */
  readonly offVariant?: string;
  readonly rules?: readonly Rule[];
  readonly prerequisites?: readonly Prerequisite[];
  /** A timed rollout of its actor percentage and rules' weights; absent or null: none. */
  readonly rolloutPlan?: RolloutPlan | null;
}

/** A context attribute: a string, a number, a boolean or a list of strings. */
export type AttributeValue = string | number | boolean | readonly string[];

/**
 * Who and what a flag is evaluated for. `actorIds` are the seed's actors (OFREP's `targetingKey` is one
 * actor id); `attributes` are what rules read. An attribute set to null or undefined counts as missing.
 */
export interface EvaluationContext {
  readonly actorIds?: readonly string[];
  readonly attributes?: Readonly<Record<string, AttributeValue | null | undefined>>;
}

/**
 * What an evaluation looks up outside the flag. `ProjectState` has `isMember` and `flag`; the rest is
 * optional. A bare membership function is accepted as well.
 */
export interface TargetingResolver {
  /** Whether an actor is a listed member of a segment. */
  readonly isMember: SegmentMembership;
  /** A segment's conditions (rule-based membership); none when absent or empty. */
  segmentConditions?(segmentId: string): readonly Condition[] | undefined;
  /** Another flag of the same environment, for prerequisites; a missing one fails its prerequisite. */
  flag?(name: string): TargetedFlag | undefined;
  /** The evaluation time (`$now`) in milliseconds since the epoch; default Date.now. Read once per evaluation. */
  now?(): number;
  /** A uniform draw in [0, 1) for the call rollout; default Math.random. Drawn only when it decides. */
  random?(): number;
}

/** The answer of `evaluateFlag`. It never throws: a failure is reason ERROR with an errorCode. */
export interface FlagEvaluation {
  /** The variant served; null only with reason ERROR (the caller then uses its own default). */
  readonly variant: string | null;
  readonly value: VariantValue | null;
  readonly reason: TargetingReason;
  /** The rule that decided (TARGETING_MATCH or SPLIT by a rule). */
  readonly ruleId?: string;
  /** The prerequisite flag that failed (PREREQUISITE_FAILED). */
  readonly prerequisite?: string;
  readonly errorCode?: TargetingErrorCode;
  readonly errorMessage?: string;
}

/** How one actor of the context stands with a flag, whatever decided: what explain shows for each. */
export interface ActorStanding {
  readonly actorId: string;
  /** Attached to the flag directly. */
  readonly attached: boolean;
  /** The flag's attached segments the actor is a listed member of, in the flag's order. */
  readonly segments: readonly string[];
  /** The actor's bucket for this flag, 0 to 99,999: in the actor rollout when below `threshold`. */
  readonly bucket: number;
  readonly inRollout: boolean;
}

/** What `evaluateFlag` is asked for besides the answer. */
export interface DecisionOptions {
  /**
   * The decision in detail (a FlagDecision): what decided and how each actor stands. The flag's own call
   * rollout is then left out, so nothing is drawn for it and the answer is the same every time (its
   * chance is `callRolloutPercentage`); its prerequisites are evaluated as always.
   */
  readonly detail: true;
}

/**
 * The answer of `evaluateFlag` with the decision in detail (`{ detail: true }`): the same variant, value,
 * reason, ruleId, prerequisite and error, with what decided. `rule` names it: the status, a failed
 * prerequisite (`prerequisite`), an attached actor (`actorId`), a segment (`segmentId`, and `actorId` when
 * the actor is a listed member), one of the configuration's rules (`ruleIndex`, with `ruleId`), the actor
 * rollout (`actorId`, the first actor in it), or none. An attached actor or segment is named in the order
 * of the actors: the first actor attached or listed in an attached segment (the flag's order), else the
 * first attached segment whose conditions hold.
 */
export interface FlagDecision extends FlagEvaluation {
  readonly rule: ExplainedRule;
  readonly actorId: string | null;
  readonly segmentId: string | null;
  /** The index in the flag's rules of the rule that decided (rule "rule"), otherwise null. */
  readonly ruleIndex: number | null;
  /** percentageActors × 1,000 (within 0 and 100,000): buckets below it are in the actor rollout. */
  readonly threshold: number;
  /** The chance a call is on anyway when nothing decided (reason DEFAULT): percentageCalls; 0 otherwise. */
  readonly callRolloutPercentage: number;
  /** Each actor of the context, in order. */
  readonly actors: readonly ActorStanding[];
}

/**
 * An evaluation as every answer gives it (the check, OFREP, explain, the local evaluator, the OpenFeature
 * providers): `resolutionOf` maps `evaluateFlag`'s result to it, the one mapping to OpenFeature's reasons
 * and error codes. `enabled`: the variant served is not the flag's offVariant (a boolean flag: it serves
 * `on`). In error: `enabled` false, reason ERROR, variant and value null, an OpenFeature error code and why.
 */
export type Resolution =
  | {
      readonly enabled: boolean;
      readonly reason: Exclude<TargetingReason, "ERROR">;
      readonly variant: string;
      readonly value: VariantValue;
      /** The rule that decided. */
      readonly ruleId?: string;
      /** The prerequisite flag that failed. */
      readonly prerequisite?: string;
    }
  | {
      readonly enabled: false;
      readonly reason: "ERROR";
      readonly variant: null;
      readonly value: null;
      readonly errorCode: ResolutionErrorCode;
      readonly errorMessage: string;
    };
