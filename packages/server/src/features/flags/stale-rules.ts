import { FLAG_KINDS, type FlagKind, type StaleReason, USAGE_ERROR_VARIANT } from "@flagstaff/core";
import { DEFAULT_LIFETIME_DAYS, DEFAULT_STALE_AFTER_DAYS } from "../../kernel/config.js";

// The stale rules (docs/lifecycle.md), as pure decisions over what is known of a flag: the job that
// applies them (features/lifecycle/stale-detection.ts) and a flag's PATCH (its kind or permanence changed) both ask here.

export interface StaleSettings {
  /** The unused and one-variant rules' window. */
  readonly staleAfterMs: number;
  /** Each kind's expected lifetime; 0: none (permanent). */
  readonly lifetimeMs: Readonly<Record<FlagKind, number>>;
}

/** The settings' defaults (kernel/config.ts reads them from the environment). */
export const DEFAULT_STALE_SETTINGS: StaleSettings = {
  staleAfterMs: DEFAULT_STALE_AFTER_DAYS * 86_400_000,
  lifetimeMs: Object.fromEntries(FLAG_KINDS.map((kind) => [kind, DEFAULT_LIFETIME_DAYS[kind] * 86_400_000])) as Record<
    FlagKind,
    number
  >,
};

/** What the rules read of a flag. */
export interface FlagFacts {
  readonly kind: FlagKind;
  readonly permanent: boolean;
  readonly createdAt: number;
  /** When any environment last evaluated it; null: never. */
  readonly lastEvaluatedAt: number | null;
  /** Evaluations in the window by variant, every environment added up. */
  readonly variants: ReadonlyMap<string, number> | undefined;
  /** Whether it was evaluated on the window's first day (UTC): one variant must have held the whole window. */
  readonly evaluatedAtWindowStart: boolean;
  /** Whether a flag not archived names it as a prerequisite: evaluated with that flag, never unused. */
  readonly prerequisiteOfAnother: boolean;
}

export interface Staleness {
  readonly reason: StaleReason;
  readonly detail: string;
}

const DAY_MS = 86_400_000;
const days = (ms: number) => Math.floor(ms / DAY_MS);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Whether a flag outlived its kind's expected lifetime (never, for a permanent flag or a kind without one). */
export function outlived(
  facts: Pick<FlagFacts, "kind" | "permanent" | "createdAt">,
  now: number,
  settings: StaleSettings,
): Staleness | null {
  const lifetime = settings.lifetimeMs[facts.kind];
  if (facts.permanent || lifetime <= 0 || now - facts.createdAt <= lifetime) return null;
  return {
    reason: "lifetime",
    detail: `a ${facts.kind} flag ${plural(days(now - facts.createdAt), "day")} old; ${facts.kind} flags are expected to live ${plural(days(lifetime), "day")}`,
  };
}

/**
 * Why a flag is stale, or null. Unused first (its code can go), then one variant (its code can keep that
 * branch only), then its lifetime. A permanent flag is never stale. A flag younger than the window is
 * neither unused nor one-variant: it has not had the time to be. One variant applies only to kinds with an
 * expected lifetime: an operational flag, a kill switch or a permission answering one way for months is
 * doing its job.
 */
export function staleness(facts: FlagFacts, now: number, settings: StaleSettings): Staleness | null {
  if (facts.permanent) return null;
  const window = settings.staleAfterMs;
  const windowDays = plural(days(window), "day");
  // A prerequisite is evaluated with the flags that name it, not by its own name: its counts say nothing.
  if (now - facts.createdAt >= window && !facts.prerequisiteOfAnother) {
    if (facts.lastEvaluatedAt === null || now - facts.lastEvaluatedAt >= window) {
      return {
        reason: "unused",
        detail:
          facts.lastEvaluatedAt === null
            ? `never evaluated in any environment since it was created ${plural(days(now - facts.createdAt), "day")} ago`
            : `not evaluated in any environment for ${windowDays}`,
      };
    }
    const served = [...(facts.variants ?? new Map<string, number>())].filter(
      ([variant, count]) => variant !== USAGE_ERROR_VARIANT && count > 0,
    );
    if (settings.lifetimeMs[facts.kind] > 0 && facts.evaluatedAtWindowStart && served.length === 1) {
      return {
        reason: "one-variant",
        detail: `every evaluation in every environment answered "${(served[0] as [string, number])[0]}" for ${windowDays}`,
      };
    }
  }
  return outlived(facts, now, settings);
}
