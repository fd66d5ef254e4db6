import type { UsageStep } from "@flagstaff/core";

// Bucket arithmetic of usage (docs/usage.md): buckets are UTC minutes, hours and days, named by their start.

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export const STEP_MS: Record<UsageStep, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };

/** The start of the bucket of `step` that holds `at`. */
export const floorTo = (at: number, stepMs: number): number => at - (((at % stepMs) + stepMs) % stepMs);

/** The end of the bucket of `step` that holds `at` (itself when it is a bucket's start). */
export const ceilTo = (at: number, stepMs: number): number => {
  const floor = floorTo(at, stepMs);
  return floor === at ? at : floor + stepMs;
};
