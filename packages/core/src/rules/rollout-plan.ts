import { ALLOWED_PERCENTAGES_SET } from "../contract/limits.js";
import type {
  PercentageStep,
  RolloutPlan,
  RolloutStep,
  Rule,
  SplitWeight,
  TargetedFlag,
  WeightsStep,
} from "./types.js";
import { parseInstant } from "./values.js";

// Timed rollouts (docs/targeting.md, "Timed rollouts"): a configuration's plan steps its actor percentage,
// and a rule's split weights, at set times. The step in force is the last whose time has passed, read from
// the evaluation's clock on the server and in every SDK alike: no job applies it, so no instance can miss
// it, and every evaluator agrees at every instant. A paused plan reads its time as the moment it was paused.

export const isWeightsStep = (step: RolloutStep): step is WeightsStep => "ruleId" in step;

/** The instant a plan reads: now, or the moment it was paused when that is earlier. */
export function planTime(plan: RolloutPlan, now: number): number {
  if (plan.pausedAt === undefined || plan.pausedAt === null) return now;
  const paused = parseInstant(plan.pausedAt);
  return Number.isNaN(paused) ? now : Math.min(now, paused);
}

/** What of a plan is in force at an instant: the percentage (undefined: the configuration's own) and each rule's weights. */
export interface StepsInForce {
  /** Index in `steps` of the percentage step in force; -1 when none has passed. */
  readonly percentageStep: number;
  /** Index in `steps` of each rule's weights step in force (rules with none passed are absent). */
  readonly weightSteps: ReadonlyMap<string, number>;
  /** Index of the last step passed, any kind; -1 when none. */
  readonly last: number;
}

/** The steps in force at `time` (a plan's steps are in time order: the validator requires it). */
export function stepsInForce(plan: RolloutPlan, time: number): StepsInForce {
  let percentageStep = -1;
  let last = -1;
  const weightSteps = new Map<string, number>();
  plan.steps.forEach((step, index) => {
    if (!(parseInstant(step.at) <= time)) return;
    last = index;
    if (isWeightsStep(step)) weightSteps.set(step.ruleId, index);
    else percentageStep = index;
  });
  return { percentageStep, weightSteps, last };
}

/** The instants at which a plan's answers may change (each step's time), for caches that hold answers. */
export function planInstants(plan: RolloutPlan | null | undefined): number[] {
  if (!plan || (plan.pausedAt !== undefined && plan.pausedAt !== null)) return [];
  return plan.steps.map((step) => parseInstant(step.at)).filter((t) => !Number.isNaN(t));
}

interface ViewCache {
  readonly plan: RolloutPlan;
  readonly rules: TargetedFlag["rules"];
  readonly percentageActors: number;
  /** Each step's instant, in the steps' order (the validator keeps them in time order). */
  readonly times: readonly number[];
  readonly pausedAt: number;
  /** The flag with its first n steps passed, by n (index 0: the flag itself). */
  readonly views: (TargetedFlag | undefined)[];
  /** The last view answered, and the instants between which it holds: most evaluations fall there. */
  last: TargetedFlag;
  from: number;
  until: number;
}

const viewCaches = new WeakMap<TargetedFlag, ViewCache>();

function cacheOf(flag: TargetedFlag, plan: RolloutPlan): ViewCache {
  let cache = viewCaches.get(flag);
  if (
    cache === undefined ||
    cache.plan !== plan ||
    cache.rules !== flag.rules ||
    cache.percentageActors !== flag.percentageActors
  ) {
    const paused = plan.pausedAt === undefined || plan.pausedAt === null ? Number.NaN : parseInstant(plan.pausedAt);
    cache = {
      plan,
      rules: flag.rules,
      percentageActors: flag.percentageActors,
      times: plan.steps.map((step) => parseInstant(step.at)),
      pausedAt: paused,
      views: [flag],
      last: flag,
      // An empty window: the first evaluation finds its own.
      from: Number.POSITIVE_INFINITY,
      until: Number.NEGATIVE_INFINITY,
    };
    viewCaches.set(flag, cache);
  }
  return cache;
}

/**
 * The flag as its plan has it at `now`: the flag itself while no step has passed, otherwise a view of it
 * whose actor percentage and rules' weights are the steps' in force (everything else read from the flag,
 * live). The steps passed are the first n (they are in time order), so there is one view per n, made
 * once: evaluation compiles it once, like any flag. The last view and the instants between which it
 * holds are kept, so an evaluation between two steps costs two comparisons.
 */
export function planView(flag: TargetedFlag, now: number): TargetedFlag {
  const plan = flag.rolloutPlan;
  if (plan === undefined || plan === null || plan.steps.length === 0) return flag;
  const cache = cacheOf(flag, plan);
  const time = Number.isNaN(cache.pausedAt) ? now : Math.min(now, cache.pausedAt);
  if (time >= cache.from && time < cache.until) return cache.last;
  const times = cache.times;
  let passed = 0;
  while (passed < times.length && (times[passed] as number) <= time) passed++;
  let view = cache.views[passed];
  if (view === undefined) {
    view = makeView(flag, plan, passed);
    cache.views[passed] = view;
  }
  cache.last = view;
  cache.from = passed === 0 ? Number.NEGATIVE_INFINITY : (times[passed - 1] as number);
  cache.until = passed === times.length ? Number.POSITIVE_INFINITY : (times[passed] as number);
  return view;
}

/** The flag with the first `passed` steps of its plan in force. */
function makeView(flag: TargetedFlag, plan: RolloutPlan, passed: number): TargetedFlag {
  let percentage = flag.percentageActors;
  const weights = new Map<string, readonly SplitWeight[]>();
  for (let i = 0; i < passed; i++) {
    const step = plan.steps[i] as RolloutStep;
    if (isWeightsStep(step)) weights.set(step.ruleId, step.weights);
    else percentage = step.percentage;
  }
  const properties: PropertyDescriptorMap = {
    percentageActors: { value: percentage, enumerable: true },
    // A view has no plan of its own: evaluating it again is evaluating it.
    rolloutPlan: { value: null, enumerable: true },
  };
  if (weights.size > 0 && flag.rules !== undefined) {
    const rules: Rule[] = flag.rules.map((rule) => {
      const stepped = weights.get(rule.id);
      if (stepped === undefined || !("split" in rule.serve)) return rule;
      return { ...rule, serve: { split: { ...rule.serve.split, weights: stepped } } };
    });
    properties.rules = { value: rules, enumerable: true };
  }
  return Object.create(flag, properties) as TargetedFlag;
}

/** Whether a percentage is one a plan may step to (the seed's allowed percentages). */
export const isAllowedPercentage = (value: unknown): boolean =>
  typeof value === "number" && ALLOWED_PERCENTAGES_SET.has(value);

/** What a plan has in force at an instant, as the API shows it beside the plan. */
export interface PlanStanding {
  /** The index of the last step passed; -1: none yet. */
  readonly current: number;
  /** The actor percentage in force: the last percentage step's, or the configuration's own. */
  readonly percentageActors: number;
  /** When the next step takes effect (ms since the epoch); null when none is to come, or the plan is paused. */
  readonly nextAt: number | null;
}

/** Where a plan stands at `now` for a configuration whose own actor percentage is `percentageActors`. */
export function planStanding(plan: RolloutPlan, percentageActors: number, now: number): PlanStanding {
  const time = planTime(plan, now);
  const { percentageStep, last } = stepsInForce(plan, time);
  const step = percentageStep === -1 ? undefined : (plan.steps[percentageStep] as PercentageStep);
  const paused = plan.pausedAt !== undefined && plan.pausedAt !== null;
  const next = paused ? undefined : plan.steps.find((s) => parseInstant(s.at) > time);
  return {
    current: last,
    percentageActors: step === undefined ? percentageActors : step.percentage,
    nextAt: next === undefined ? null : parseInstant(next.at),
  };
}

/**
 * A plan set by a PATCH, from the plan it replaces: paused at `now` when asked to pause (kept paused
 * where it was), resumed with the steps still to come moved later by the time it was paused (so a pause
 * delays the rest of the plan rather than skipping it), or as it was when the PATCH says neither.
 */
export function nextPlan(
  input: { readonly steps: readonly RolloutStep[]; readonly paused?: boolean },
  previous: RolloutPlan | null,
  now: number,
): RolloutPlan {
  const wasPaused = previous?.pausedAt !== undefined && previous?.pausedAt !== null;
  const pause = input.paused ?? wasPaused;
  if (pause) {
    const pausedAt = wasPaused ? (previous?.pausedAt as string) : new Date(now).toISOString();
    return { steps: input.steps, pausedAt };
  }
  if (!wasPaused) return { steps: input.steps, pausedAt: null };
  const pausedAt = parseInstant(previous?.pausedAt as string);
  const delay = Math.max(0, now - pausedAt);
  return {
    steps: input.steps.map((step) => {
      const at = parseInstant(step.at);
      return at > pausedAt ? { ...step, at: new Date(at + delay).toISOString() } : step;
    }),
    pausedAt: null,
  };
}
