/**
 * What an attempt's answer means for its delivery: done, failed for good (and whether that says the webhook
 * is dead), or tried again later. Pure: time and randomness come in as arguments.
 */

/** The longest wait between two attempts, however many failed. */
export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;

export interface RetryPolicy {
  /** The first retry's delay; each next one doubles, up to MAX_RETRY_DELAY_MS, with jitter. */
  readonly retryBaseMs: number;
  /** How long after it was queued a delivery is retried before it is marked failed. */
  readonly retryWindowMs: number;
  /** A uniform draw in [0, 1), for the jitter. */
  readonly random: () => number;
}

/** The delivery an attempt was for, as far as the policy cares. */
export interface AttemptedDelivery {
  readonly eventType: string;
  /** When it was queued (ISO 8601): its retry window starts then. */
  readonly createdAt: string;
  /** Attempts so far, this one included. */
  readonly attempts: number;
}

export type Verdict =
  | { readonly status: "succeeded" }
  /** `deadWebhook`: the webhook may have failed for a whole window (see `disabledReason`); pings never say so. */
  | { readonly status: "failed"; readonly deadWebhook: boolean }
  | { readonly status: "retrying"; readonly nextAttemptAt: number };

/** The delay after the n-th failed attempt: base × 2^(n−1), at most an hour, jittered to 50–100 %. */
export function retryDelay(policy: RetryPolicy, attempts: number): number {
  const full = Math.min(MAX_RETRY_DELAY_MS, policy.retryBaseMs * 2 ** Math.min(30, attempts - 1));
  return Math.round(full * (0.5 + policy.random() / 2));
}

/** Judges an attempt made at `now`; `failed` is whether it failed (any error, a non-2xx answer included). */
export function judgeAttempt(policy: RetryPolicy, delivery: AttemptedDelivery, failed: boolean, now: number): Verdict {
  if (!failed) return { status: "succeeded" };
  const deadline = Date.parse(delivery.createdAt) + policy.retryWindowMs;
  // A ping is tried once: it answers "does the receiver work now?".
  if (delivery.eventType === "ping") return { status: "failed", deadWebhook: false };
  if (now >= deadline) return { status: "failed", deadWebhook: true };
  return { status: "retrying", nextAttemptAt: Math.min(now + retryDelay(policy, delivery.attempts), deadline) };
}

/** A retry window in words: "24 hours", "90 minutes", "2 seconds". */
export function describeWindow(ms: number): string {
  const [value, unit] =
    ms >= 7_200_000 ? [ms / 3_600_000, "hours"] : ms >= 120_000 ? [ms / 60_000, "minutes"] : [ms / 1000, "seconds"];
  return `${Math.round(value * 10) / 10} ${unit}`;
}

/** Why the service turned a webhook off, as its `disabledReason` says. */
export function disabledReason(retryWindowMs: number, lastError: string | undefined): string {
  return `Every delivery failed for ${describeWindow(retryWindowMs)} (last attempt: ${lastError ?? "failed"}); turned off by the service. Set enabled to true to turn it back on.`;
}
