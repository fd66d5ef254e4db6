import type { ResolutionErrorCode } from "../contract/enums.js";
import type { FlagEvaluation, Resolution, TargetedFlag } from "./types.js";

// The one mapping from an evaluation (`evaluateFlag`'s result) to the answer every door gives: the check
// and OFREP (the server), explain, the SDK's local evaluator and, through those two, both OpenFeature
// providers. An engine's answer is made with its resolution (compile.ts, `withResolution`), held under a
// symbol that is not enumerable (JSON, spreads and deep comparisons do not see it), so that mapping one
// costs a property read and allocates nothing.

const RESOLUTION: unique symbol = Symbol("resolution");

/** An answer that carries its resolution. */
type Resolved = FlagEvaluation & { readonly [RESOLUTION]?: Resolution };

/** The resolution of an evaluation, `offVariant` the key of the variant that counts as off (null: none). */
function resolve(result: FlagEvaluation, offVariant: string | null): Resolution {
  if (result.reason === "ERROR" || result.variant === null || result.value === null) {
    return {
      enabled: false,
      reason: "ERROR",
      variant: null,
      value: null,
      errorCode: result.errorCode ?? "GENERAL",
      errorMessage: result.errorMessage ?? "the flag could not be evaluated",
    };
  }
  return {
    enabled: result.variant !== offVariant,
    reason: result.reason,
    variant: result.variant,
    value: result.value,
    ...(result.ruleId === undefined ? {} : { ruleId: result.ruleId }),
    ...(result.prerequisite === undefined ? {} : { prerequisite: result.prerequisite }),
  };
}

/**
 * An answer of the engine made with its resolution, both frozen (compile.ts makes every answer so):
 * `offVariant` is the key of the flag's offVariant, against which `enabled` is told.
 */
export function withResolution(answer: FlagEvaluation, offVariant: string | null): FlagEvaluation {
  Object.defineProperty(answer, RESOLUTION, { value: Object.freeze(resolve(answer, offVariant)) });
  return Object.freeze(answer);
}

/** Gives `copy` (an answer with more fields, as a FlagDecision) the resolution of the answer it copies. */
export function resolvedAs<T extends FlagEvaluation>(copy: T, answer: FlagEvaluation): T {
  const resolution = (answer as Resolved)[RESOLUTION];
  if (resolution !== undefined) Object.defineProperty(copy, RESOLUTION, { value: resolution });
  return copy;
}

/**
 * What an evaluation of `flag` answers: `enabled` (the variant is not the flag's offVariant), the reason,
 * the variant and its value, the rule that decided or the prerequisite that failed; in error, the
 * OpenFeature error code (PARSE_ERROR, GENERAL) and why. The one mapping from `evaluateFlag`'s result to
 * OpenFeature's reasons and error codes: the check, OFREP, explain and the SDK's local evaluator answer
 * with it. An answer of the engine maps to a shared frozen object.
 */
export function resolutionOf(flag: TargetedFlag, result: FlagEvaluation): Resolution {
  return (result as Resolved)[RESOLUTION] ?? resolve(result, flag.offVariant ?? "off");
}

/**
 * An answer for an evaluation that could not be made at all: no such flag (FLAG_NOT_FOUND), a context the
 * service refuses (INVALID_CONTEXT), no state yet (PROVIDER_NOT_READY), in the shape of `resolutionOf`'s.
 */
export function failedResolution(errorCode: ResolutionErrorCode, errorMessage: string): Resolution {
  return { enabled: false, reason: "ERROR", variant: null, value: null, errorCode, errorMessage };
}
