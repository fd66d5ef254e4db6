import {
  type AttributeValue,
  type EvaluationReason,
  evaluate,
  evaluateFlag,
  type FlagEvaluation,
  type FlagState,
  type ProjectState,
  type TargetingReason,
  type TargetingResolver,
  type VariantValue,
} from "@flagstaff/core";
import type { Clock, RandomSource } from "../../clock.js";
import { environmentNotFound, flagNotFound, projectNotFound } from "../../errors.js";
import type { CheckRecorder } from "./check-recorder.js";
import type { Snapshot } from "./snapshot.js";

const NO_ACTORS: readonly string[] = [];

/** A check's context attributes, as the query (`attributes[NAME]=value`) or OFREP's context gives them. */
export type Attributes = Readonly<Record<string, AttributeValue | null | undefined>>;

/** What a check answers: whether the flag is on, why, and the variant it serves with its value. */
export interface CheckOutcome {
  /** Whether it serves anything but its offVariant (boolean flags: whether it serves `on`). */
  readonly enabled: boolean;
  readonly reason: TargetingReason;
  /** Null only with reason ERROR. */
  readonly variant: string | null;
  readonly value: VariantValue | null;
  /** Whether the flag is of another type than boolean (its check answer names the variant and value). */
  readonly typed: boolean;
  readonly errorCode?: string;
  readonly errorMessage?: string;
}

// The seed's answers, made once: a boolean flag with no rules is evaluated by `evaluate`, allocation-free.
const SEED_OUTCOMES = Object.fromEntries(
  (["DISABLED", "STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT"] as const).map((reason) => {
    const enabled = reason === "STATIC" || reason === "TARGETING_MATCH" || reason === "SPLIT";
    return [reason, Object.freeze({ enabled, reason, variant: enabled ? "on" : "off", value: enabled, typed: false })];
  }),
) as Record<EvaluationReason, CheckOutcome>;

/**
 * Whether the seed's `evaluate` answers for this flag exactly as the targeting engine would: a boolean
 * flag with no rules and no prerequisites, none of whose attached segments has conditions.
 */
function isSeedFlag(flag: FlagState, state: ProjectState): boolean {
  if (flag.type !== "boolean" || flag.rules.length > 0 || flag.prerequisites.length > 0) return false;
  if (state.conditionsBySegment.size === 0) return true;
  for (const segmentId of flag.segments) if (state.conditionsBySegment.has(segmentId)) return false;
  return true;
}

/** The check's outcome of an engine evaluation. */
function outcomeOf(flag: FlagState, result: FlagEvaluation): CheckOutcome {
  const typed = flag.type !== "boolean";
  if (result.variant === null) {
    return {
      enabled: false,
      reason: result.reason,
      variant: null,
      value: null,
      typed,
      errorCode: result.errorCode ?? "GENERAL",
      errorMessage: result.errorMessage ?? "the flag could not be evaluated",
    };
  }
  return {
    enabled: result.variant !== flag.offVariant,
    reason: result.reason,
    variant: result.variant,
    value: result.value,
    typed,
  };
}

/**
 * Answers checks from the snapshot alone: no database I/O, no await. Each takes the environment to
 * evaluate in: the one a key is bound to, or null for the project's default.
 */
export class Checker {
  /** One resolver per environment's state: what the engine looks up (segments, prerequisites, the clock). */
  private readonly resolvers = new WeakMap<ProjectState, TargetingResolver>();

  constructor(
    private readonly snapshot: Snapshot,
    private readonly recorder: CheckRecorder,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  private resolverOf(state: ProjectState): TargetingResolver {
    let resolver = this.resolvers.get(state);
    if (resolver === undefined) {
      resolver = {
        isMember: state.isMember,
        segmentConditions: (id) => state.segmentConditions(id),
        flag: (name) => state.flag(name),
        now: () => this.clock.now(),
        random: this.random,
      };
      this.resolvers.set(state, resolver);
    }
    return resolver;
  }

  /** Evaluates one flag of an environment's state for a context. */
  private outcome(
    state: ProjectState,
    flag: FlagState,
    actorIds: readonly string[],
    attributes: Attributes | undefined,
  ): CheckOutcome {
    if (isSeedFlag(flag, state)) return SEED_OUTCOMES[evaluate(flag, actorIds, state.isMember, this.random).reason];
    return outcomeOf(flag, evaluateFlag(flag, { actorIds, attributes }, this.resolverOf(state)));
  }

  check(
    projectId: string,
    environment: string | null,
    flagName: string,
    actorIds: readonly string[] | undefined,
    attributes?: Attributes,
  ): CheckOutcome {
    // Snapshot.environmentState spelled out: the check allocates nothing, not even its answer's pair.
    const project = this.snapshot.projects.get(projectId);
    if (!project) throw projectNotFound(projectId);
    const id = environment ?? project.defaultEnvironment;
    const state = project.environments.get(id);
    if (!state) throw environmentNotFound(id);
    const flag = state.flagsByName.get(flagName);
    if (!flag) throw flagNotFound(flagName);
    this.recorder.note(id, flag.id, this.clock.now());
    return this.outcome(state, flag, actorIds ?? NO_ACTORS, attributes);
  }

  /** Whether the project exists and has the flag in that environment. */
  has(projectId: string, environment: string | null, flagName: string): boolean {
    return this.snapshot.projects.get(projectId)?.state(environment)?.flagsByName.has(flagName) === true;
  }

  /** Evaluates every flag of a project's environment, in name order (OFREP bulk evaluation). */
  checkAll(
    projectId: string,
    environment: string | null,
    actorIds: readonly string[],
    attributes?: Attributes,
  ): { name: string; evaluation: CheckOutcome }[] {
    const { state, environment: id } = this.snapshot.environmentState(projectId, environment);
    const now = this.clock.now();
    const out: { name: string; evaluation: CheckOutcome }[] = [];
    for (const name of state.flagNamesInOrder()) {
      const flag = state.flagsByName.get(name);
      if (!flag) continue;
      this.recorder.note(id, flag.id, now);
      out.push({ name, evaluation: this.outcome(state, flag, actorIds, attributes) });
    }
    return out;
  }

  /**
   * The version of an environment's evaluation state: it moves whenever any of its flags may answer
   * differently, and only then. Undefined for a project or environment that does not exist.
   */
  evaluationVersionOf(projectId: string, environment: string | null): number | undefined {
    return this.snapshot.projects.get(projectId)?.state(environment)?.evaluationVersion;
  }
}
