/** Time and randomness are injected so that timestamps and call rollouts are testable. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A uniform draw in [0, 1). */
export type RandomSource = () => number;

/** ISO 8601, UTC, millisecond precision: the one timestamp format of the API and the database. */
export const isoTime = (ms: number): string => new Date(ms).toISOString();
