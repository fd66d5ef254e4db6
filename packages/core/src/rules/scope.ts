import { MATCHED_CHARACTERS_MAX } from "../contract/limits.js";
import type { TargetingResolver } from "./types.js";

// What one evaluation carries while its conditions are decided (the context, the resolver, the clock read
// once, the characters matched so far), its number, and the two errors an evaluation may meet there.

/** What one evaluation's conditions read: the context, and through the resolver segments and the clock. */
export interface Scope {
  readonly attributes: Readonly<Record<string, unknown>> | undefined;
  readonly actorIds: readonly string[];
  readonly resolver: TargetingResolver;
  /** `$now`, in milliseconds; NaN until a condition first reads it (so the clock is read once at most). */
  now: number;
  /** This evaluation's number (nextEvaluation), which stamps the attributes it has read. */
  readonly evaluation: number;
  /** Characters matched against patterns so far in this evaluation (bounded by MATCHED_CHARACTERS_MAX). */
  matched: number;
}

/** A configuration the validator refuses, met while evaluating: the evaluation answers ERROR / PARSE_ERROR. */
export class ConfigurationError extends Error {}

/** An evaluation that matched more than MATCHED_CHARACTERS_MAX characters: it answers ERROR / GENERAL. */
export class MatchingBudgetExceeded extends Error {
  constructor() {
    super(
      `the evaluation matched more than ${MATCHED_CHARACTERS_MAX.toLocaleString("en-US")} characters against patterns (matches): its context's values are too long for this flag's patterns`,
    );
  }
}

/** The number of the evaluation that reads the context next; 0 stamps no evaluation. */
let evaluations = 1;

/** A fresh number for a new evaluation's Scope. */
export const nextEvaluation = (): number => evaluations++;
