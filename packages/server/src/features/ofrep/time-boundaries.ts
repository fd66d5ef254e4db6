import { type Condition, type ProjectState, parseInstant, planInstants } from "@flagstaff/core";

/**
 * The instants at which a rule on `$now` (a time window: `$now after X`, `$now before Y`) starts or stops
 * holding, in an environment's state: its flags' rules and the project's segment conditions; and the
 * times of its flags' timed rollout steps. An answer can
 * change with time alone only as the clock crosses one of them, so the OFREP bulk answer's ETag counts how
 * many have passed: a client revalidating with If-None-Match gets a fresh answer once one passes, and 304s
 * otherwise. `before X` stops holding at X; `after X` starts holding just after X (X + 1 ms).
 */
function boundariesOf(state: ProjectState): readonly number[] {
  const instants: number[] = [];
  const read = (conditions: readonly Condition[]) => {
    for (const c of conditions) {
      if (c.attribute !== "$now" || (c.operator !== "before" && c.operator !== "after")) continue;
      for (const value of c.values) {
        const t = typeof value === "string" ? parseInstant(value) : Number.NaN;
        if (!Number.isNaN(t)) instants.push(c.operator === "before" ? t : t + 1);
      }
    }
  };
  for (const flag of state.flagsById.values()) {
    for (const rule of flag.rules) read(rule.conditions);
    // A timed rollout's steps: its answers change as each step's time passes.
    for (const t of planInstants(flag.rolloutPlan)) instants.push(t);
  }
  for (const conditions of state.conditionsBySegment.values()) read(conditions);
  return instants.sort((a, b) => a - b);
}

/** Computed once per state and evaluation version: a change of rules moves the version. */
const cache = new WeakMap<ProjectState, { version: number; boundaries: readonly number[] }>();

/** How many of the state's `$now` boundaries are at or before `now` (0 when no rule reads `$now`). */
export function boundariesPassed(state: ProjectState, now: number): number {
  let entry = cache.get(state);
  if (entry === undefined || entry.version !== state.evaluationVersion) {
    entry = { version: state.evaluationVersion, boundaries: boundariesOf(state) };
    cache.set(state, entry);
  }
  const boundaries = entry.boundaries;
  let low = 0;
  let high = boundaries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((boundaries[mid] as number) <= now) low = mid + 1;
    else high = mid;
  }
  return low;
}
