import {
  type AttributeValue,
  evaluateFlag,
  type FlagState,
  type ProjectState,
  type Resolution,
  resolutionOf,
  type TargetingResolver,
} from "@flagstaff/core";
import type { Clock, RandomSource } from "../../kernel/clock.js";
import { environmentNotFound, flagNotFound, projectNotFound } from "../../kernel/errors.js";
import type { Snapshot } from "./snapshot.js";

const NO_ACTORS: readonly string[] = [];

/** A check's context attributes, as the query (`attributes[NAME]=value`) or OFREP's context gives them. */
export type Attributes = Readonly<Record<string, AttributeValue | null | undefined>>;

/**
 * What counts evaluations (features/usage's UsageCounter): each one answered, by variant (null: an
 * error), and the answers OFREP's bulk evaluation reuses, many at once.
 */
export interface EvaluationCounter {
  count(environment: string, flagId: string, variant: string | null, at: number): void;
  countMany(
    environment: string,
    flagIds: readonly string[],
    variants: readonly (string | null)[],
    times: number,
    at: number,
  ): void;
  /** Runs `fn` before every write of the counts. */
  beforeFlush(fn: () => void): void;
}

/** What a check answers: core's resolution of the evaluation, and whether the flag is typed. */
export interface CheckOutcome {
  /** Whether the flag is on, why, the variant it serves with its value, or the error (core's resolutionOf). */
  readonly resolution: Resolution;
  /** Whether the flag is of another type than boolean (its check answer names the variant and value). */
  readonly typed: boolean;
}

/**
 * Answers checks from the snapshot alone: no database I/O, no await. Each takes the environment to
 * evaluate in: the one a key is bound to, or null for the project's default.
 */
export class Checker {
  /** One resolver per environment's state: what the engine looks up (segments, prerequisites, the clock). */
  private readonly resolvers = new WeakMap<ProjectState, TargetingResolver>();
  /**
   * The outcomes of boolean flags and of typed ones, one per resolution: core's resolutionOf answers one
   * shared object per compiled answer, so that a check allocates no answer.
   */
  private readonly outcomes = [new WeakMap<Resolution, CheckOutcome>(), new WeakMap<Resolution, CheckOutcome>()];
  /** The context of the evaluation under way (see resolution). */
  private readonly context: { actorIds: readonly string[]; attributes: Attributes | undefined } = {
    actorIds: NO_ACTORS,
    attributes: undefined,
  };

  constructor(
    private readonly snapshot: Snapshot,
    private readonly usage: EvaluationCounter,
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

  /** Evaluates one flag of an environment's state for a context (core's one engine and its one mapping). */
  private resolution(
    state: ProjectState,
    flag: FlagState,
    actorIds: readonly string[],
    attributes: Attributes | undefined,
  ): Resolution {
    // The engine keeps nothing of a context past its evaluation: one context object serves every check.
    const context = this.context;
    context.actorIds = actorIds;
    context.attributes = attributes;
    try {
      return resolutionOf(flag, evaluateFlag(flag, context, this.resolverOf(state)));
    } finally {
      context.actorIds = NO_ACTORS;
      context.attributes = undefined;
    }
  }

  /** The outcome of a resolution for a boolean flag, or for a typed one. */
  private outcome(resolution: Resolution, typed: boolean): CheckOutcome {
    const outcomes = this.outcomes[typed ? 1 : 0] as WeakMap<Resolution, CheckOutcome>;
    let outcome = outcomes.get(resolution);
    if (outcome === undefined) {
      outcome = Object.freeze({ resolution, typed });
      outcomes.set(resolution, outcome);
    }
    return outcome;
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
    const resolution = this.resolution(state, flag, actorIds ?? NO_ACTORS, attributes);
    this.usage.count(id, flag.id, resolution.variant, this.clock.now());
    return this.outcome(resolution, flag.type !== "boolean");
  }

  /** Whether the project exists and has the flag in that environment. */
  has(projectId: string, environment: string | null, flagName: string): boolean {
    return this.snapshot.projects.get(projectId)?.state(environment)?.flagsByName.has(flagName) === true;
  }

  /**
   * Evaluates one flag of an environment's state (Snapshot.environmentState) for a context, noting it as
   * checked: OFREP's bulk answer, for the flags a context decides.
   */
  resolve(
    state: ProjectState,
    environment: string,
    flag: FlagState,
    actorIds: readonly string[],
    attributes: Attributes | undefined,
  ): Resolution {
    const resolution = this.resolution(state, flag, actorIds, attributes);
    this.usage.count(environment, flag.id, resolution.variant, this.clock.now());
    return resolution;
  }

  /** Runs `fn` before every usage flush: what holds counts of its own adds them first. */
  beforeUsageFlush(fn: () => void): void {
    this.usage.beforeFlush(fn);
  }

  /**
   * Counts `times` evaluations of flags whose answers were reused rather than evaluated (OFREP's bulk
   * answer), each answering its entry of `variants` (null: an error), and notes them as checked `now`.
   */
  countReused(
    environment: string,
    flagIds: readonly string[],
    variants: readonly (string | null)[],
    times: number,
    now: number,
  ): void {
    this.usage.countMany(environment, flagIds, variants, times, now);
  }

  /**
   * The version of an environment's evaluation state: it moves whenever any of its flags may answer
   * differently, and only then. Undefined for a project or environment that does not exist.
   */
  evaluationVersionOf(projectId: string, environment: string | null): number | undefined {
    return this.snapshot.projects.get(projectId)?.state(environment)?.evaluationVersion;
  }
}
