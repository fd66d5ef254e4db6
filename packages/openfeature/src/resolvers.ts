import type { OfrepEvaluationContext } from "@flagstaff/sdk";
import {
  ErrorCode,
  type EvaluationContext,
  type FlagMetadata,
  GeneralError,
  InvalidContextError,
  type JsonValue,
  type OpenFeatureError,
  OpenFeatureEventEmitter,
  type Provider,
  type ResolutionDetails,
  type ResolutionReason,
  TypeMismatchError,
  instantiateErrorByErrorCode,
} from "@openfeature/server-sdk";

// What both providers share: reading an OpenFeature context (its actors and attributes), turning an
// answer into OpenFeature's resolution details or errors, and the four typed resolutions, each the same
// call for its type (FlagstaffResolver).

const KNOWN_ERROR_CODES = new Set<string>(Object.values(ErrorCode));

/**
 * An answer's error code as the OpenFeature error of that code (OpenFeature's own table); anything else is
 * GENERAL. Both providers throw with it: the codes come from core's one mapping (`resolutionOf`), which
 * the server's OFREP answers and the local evaluator's evaluations are.
 */
export function errorFromCode(code: unknown, message: string): OpenFeatureError {
  return typeof code === "string" && KNOWN_ERROR_CODES.has(code)
    ? instantiateErrorByErrorCode(code as ErrorCode, message)
    : new GeneralError(message);
}

/** The actors of an evaluation context: `targetingKey` and the optional `actorIds` list, checked for type only. */
export function actorsOf(context: EvaluationContext): OfrepEvaluationContext {
  const out: OfrepEvaluationContext = {};
  const { targetingKey, actorIds } = context as { targetingKey?: unknown; actorIds?: unknown };
  if (targetingKey !== undefined) {
    if (typeof targetingKey !== "string") throw new InvalidContextError("targetingKey must be a string.");
    out.targetingKey = targetingKey;
  }
  if (actorIds !== undefined) {
    if (!Array.isArray(actorIds) || !actorIds.every((id) => typeof id === "string")) {
      throw new InvalidContextError("actorIds must be an array of strings.");
    }
    out.actorIds = [...actorIds];
  }
  return out;
}

/**
 * The context's attributes, which the flag's rules read: every member but `targetingKey` and `actorIds`.
 * A Date is sent as its ISO 8601 text (as JSON would), so `before`/`after` rules read it alike locally and
 * on the server. Undefined when there are none.
 */
export function attributesOf(context: EvaluationContext): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(context)) {
    if (name === "targetingKey" || name === "actorIds" || value === undefined) continue;
    out ??= Object.create(null) as Record<string, unknown>;
    out[name] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

/** The OpenFeature flag types a Flagstaff flag may be resolved as. */
export type ResolvedType = "boolean" | "string" | "number" | "object";

/** Whether a served value is of the type asked for (object: a JSON object or array). */
export function isOfType(value: unknown, type: ResolvedType): boolean {
  return type === "object" ? typeof value === "object" && value !== null : typeof value === type;
}

const typeOfValue = (value: unknown): string =>
  Array.isArray(value) ? "an array (object)" : typeof value === "object" ? "an object" : `a ${typeof value}`;

/** A flag that serves another type than the one asked for: TYPE_MISMATCH (the caller gets its default). */
export function typeMismatch(flagKey: string, type: string, value?: unknown): TypeMismatchError {
  const served = value === undefined ? "" : ` serves ${typeOfValue(value)} and`;
  return new TypeMismatchError(
    `Flag ${JSON.stringify(flagKey)}${served} cannot be evaluated as ${type === "object" ? "an" : "a"} ${type}.`,
  );
}

/**
 * A successful answer (OFREP's, or the local evaluator's) as OpenFeature's resolution details: its value,
 * variant and reason; a value of another type than the one asked for is TYPE_MISMATCH. Both providers
 * answer with it.
 */
export function resolved<T>(
  flagKey: string,
  type: ResolvedType,
  answer: { readonly value: unknown; readonly reason: string; readonly variant: string },
  flagMetadata: FlagMetadata,
): ResolutionDetails<T> {
  if (!isOfType(answer.value, type)) throw typeMismatch(flagKey, type, answer.value);
  return { value: answer.value as T, reason: answer.reason as ResolutionReason, variant: answer.variant, flagMetadata };
}

/**
 * An OpenFeature server provider of Flagstaff's flags: the four typed resolutions, each the provider's
 * `resolve` for its type. Evaluates a flag for the context's actors (`targetingKey`, plus the optional
 * `actorIds` list; any one enables it) and attributes (every other member); answers the value, variant and
 * reason; on any failure throws an OpenFeature error, which the OpenFeature client turns into the default
 * value with that error code (a flag of another type than the one asked for: TYPE_MISMATCH).
 */
export abstract class FlagstaffResolver implements Provider {
  /** A server provider: one evaluation per call, for one context. */
  readonly runsOn = "server" as const;
  abstract readonly metadata: { readonly name: string };
  /** The provider's events (see each provider). */
  readonly events = new OpenFeatureEventEmitter();

  /** Evaluates a boolean flag. */
  async resolveBooleanEvaluation(
    flagKey: string,
    _defaultValue: boolean,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<boolean>> {
    return this.resolve<boolean>(flagKey, "boolean", context);
  }

  /** Evaluates a string flag. */
  async resolveStringEvaluation(
    flagKey: string,
    _defaultValue: string,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<string>> {
    return this.resolve<string>(flagKey, "string", context);
  }

  /** Evaluates a number flag. */
  async resolveNumberEvaluation(
    flagKey: string,
    _defaultValue: number,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<number>> {
    return this.resolve<number>(flagKey, "number", context);
  }

  /** Evaluates an object flag (a JSON object or array). */
  async resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    _defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return this.resolve<T>(flagKey, "object", context);
  }

  /** Evaluates a flag as `type`, or throws the OpenFeature error of why it could not. */
  protected abstract resolve<T>(
    flagKey: string,
    type: ResolvedType,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> | ResolutionDetails<T>;
}
