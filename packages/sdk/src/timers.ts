/**
 * The time and the timers the local evaluator and its stream reader use. By default the global ones
 * (`systemTimers`); a test passes a manual clock, so that reconnection delays and timeouts pass at once.
 */
export interface Timers {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once, after `ms`; answers a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** `Date.now`, `setTimeout` and `clearTimeout`. */
export const systemTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
