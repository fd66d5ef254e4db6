// Tests wait for conditions, never for fixed times: a sleep long enough on a quiet machine is too short
// under load, and wasted time everywhere else.
import { setTimeout as delay } from "node:timers/promises";

export interface WaitOptions<T> {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** The pause between two probes (default 20 ms). */
  intervalMs?: number;
  /** Whether an answer is the one waited for (default: it is truthy). */
  until?: (value: T) => boolean;
  /** Stops the wait at once, failing with the signal's reason (a process that exited, a cancelled test). */
  signal?: AbortSignal;
}

function show(value: unknown): string {
  if (typeof value === "string") return value.length > 300 ? `${value.slice(0, 300)}…` : value;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * Probes until an answer is the one waited for, and answers it. A probe that throws counts as "not yet"
 * (a server not listening yet, a request that timed out under load). Past the deadline this throws,
 * naming what it waited for and the last answer or error seen.
 */
export async function waitFor<T>(
  what: string | (() => string),
  probe: () => T | Promise<T>,
  options: WaitOptions<T> = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 20, until = (value: T) => Boolean(value), signal } = options;
  const deadline = performance.now() + timeoutMs;
  let seen = "(no answer yet)";
  for (;;) {
    signal?.throwIfAborted();
    try {
      const value = await probe();
      if (until(value)) return value;
      seen = show(value);
    } catch (error) {
      signal?.throwIfAborted();
      seen = `error: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (performance.now() >= deadline) {
      const description = typeof what === "string" ? what : what();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}; last seen: ${seen}`);
    }
    await delay(intervalMs, undefined, { signal }).catch(() => signal?.throwIfAborted());
  }
}

/**
 * Waits until `probe` answers `expected`, at most `timeoutMs` after `since` (default: now), and answers how
 * long after `since` that was: how long a change took to reach a replica, or a server to recover.
 */
export async function timeUntil<T>(
  what: string,
  expected: T,
  probe: () => Promise<T>,
  timeoutMs: number,
  since = performance.now(),
): Promise<number> {
  await waitFor(`${what} to answer ${show(expected)} (within ${timeoutMs} ms of the start)`, probe, {
    until: (seen) => seen === expected,
    timeoutMs: Math.max(0, timeoutMs - (performance.now() - since)),
    intervalMs: 10,
  });
  return performance.now() - since;
}

/** Settles like `promise`, or rejects after `ms` naming `what`; the promise itself goes on. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const controller = new AbortController();
  const expired = delay(ms, undefined, { signal: controller.signal }).then(() => {
    throw new Error(`${what} did not finish within ${ms} ms`);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    controller.abort();
    expired.catch(() => {});
  }
}
