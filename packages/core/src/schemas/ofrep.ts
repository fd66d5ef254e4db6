import { Type } from "typebox";
import type { ResolutionErrorCode, TargetingReason } from "../contract/enums.js";
import { TARGETING_REASONS } from "../contract/enums.js";
import { MAX_ACTORS } from "../contract/limits.js";
import type { Resolution } from "../rules/types.js";
import { Limits, oneOf } from "./common.js";

// Shapes of the OpenFeature Remote Evaluation Protocol (OFREP) v1, as the server answers them and the SDK
// (`client.ofrep`) and the remote OpenFeature provider send and read them.

/**
 * The evaluation context: `targetingKey` is the actor; `actorIds` optionally adds more actors (any one
 * enabled enables the flag, as in a check). Its other members are attributes, which rules read.
 */
export const OfrepContext = Type.Object(
  {
    targetingKey: Type.Optional(Limits.actorId),
    actorIds: Type.Optional(Type.Array(Limits.actorId, { maxItems: MAX_ACTORS })),
  },
  { additionalProperties: true },
);

/** OFREP request bodies carry `context`; fields a future protocol version adds are tolerated. */
export const OfrepRequest = Type.Object({ context: Type.Optional(OfrepContext) }, { additionalProperties: true });

export const OfrepEvaluation = Type.Object(
  {
    key: Type.String(),
    value: Type.Unknown({ description: "The variant's value, of the flag's type (boolean, string, number or object)" }),
    reason: oneOf(
      TARGETING_REASONS.filter((r) => r !== "ERROR"),
      { description: "OpenFeature resolution reason" },
    ),
    variant: Type.String({ description: "The variant's key (boolean flags: on or off)" }),
    metadata: Type.Object({}, { additionalProperties: true }),
  },
  { $id: "OfrepEvaluation" },
);

export const OfrepFailure = Type.Object(
  {
    key: Type.String(),
    errorCode: Type.String({ description: "FLAG_NOT_FOUND, PARSE_ERROR, INVALID_CONTEXT or GENERAL" }),
    errorDetails: Type.String(),
  },
  { $id: "OfrepFailure" },
);

/** OFREP's 500: a general error, with no code. */
export const OfrepServerFailure = Type.Object({ errorDetails: Type.String() });

/**
 * A change-notification connection (OFREP ADR-0008). Flagstaff advertises one `sse` stream, as `endpoint`
 * with only `requestUri`: the provider joins it to the origin of its configured base URL.
 */
export const OfrepEventStream = Type.Object(
  {
    type: Type.String({ description: "`sse`; providers ignore types they do not know" }),
    url: Type.Optional(Type.String({ format: "uri" })),
    endpoint: Type.Optional(
      Type.Object({
        origin: Type.Optional(Type.String({ format: "uri" })),
        requestUri: Type.String({
          pattern: "^/",
          description: "Path and query of the event stream, a short-lived token in it: treat it as a secret",
        }),
      }),
    ),
    inactivityDelaySec: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { $id: "OfrepEventStream" },
);

export const OfrepBulk = Type.Object(
  {
    flags: Type.Array(Type.Union([Type.Ref("OfrepEvaluation"), Type.Ref("OfrepFailure")])),
    eventStreams: Type.Optional(
      Type.Array(Type.Ref("OfrepEventStream"), {
        description:
          "Where to hear of changes: GET /ofrep/v1/event-stream with a stream token. A provider that follows " +
          "it refetches on each refetchEvaluation message instead of polling.",
      }),
    ),
  },
  { $id: "OfrepBulk" },
);

export const OfrepBulkFailure = Type.Object(
  { errorCode: Type.String(), errorDetails: Type.String() },
  { $id: "OfrepBulkFailure" },
);

export const OfrepConfiguration = Type.Object({
  name: Type.String(),
  capabilities: Type.Object({
    cacheInvalidation: Type.Object({
      polling: Type.Object({ enabled: Type.Boolean(), minPollingIntervalMs: Type.Number() }),
    }),
    flagEvaluation: Type.Object({ supportedTypes: Type.Array(Type.String()) }),
  }),
});

// The schemas' types, written out: TypeBox reads neither an object open to more members nor a Ref.

/** OfrepContext: the actor, more actors, and any other member an attribute rules read. */
export interface OfrepEvaluationContext {
  targetingKey?: string;
  actorIds?: string[];
  [attribute: string]: unknown;
}

/** OfrepRequest: what OFREP's evaluations are sent. */
export interface OfrepEvaluationRequest {
  context?: OfrepEvaluationContext;
}

/** OfrepEvaluation: a flag evaluated (the single evaluation's 200, or one flag of the bulk one). */
export interface OfrepEvaluationSuccess {
  key: string;
  value: unknown;
  reason: Exclude<TargetingReason, "ERROR">;
  variant: string;
  metadata: Record<string, unknown>;
}

/** OfrepFailure: a flag that could not be evaluated (the single evaluation's 400 and 404, or in the bulk list). */
export interface OfrepEvaluationFailure {
  key: string;
  errorCode: ResolutionErrorCode | (string & {});
  errorDetails: string;
}

/** OfrepEventStream: where to hear when to evaluate again. */
export interface OfrepEventStreamLink {
  type: string;
  url?: string;
  endpoint?: { origin?: string; requestUri: string };
  inactivityDelaySec?: number;
}

/** OfrepBulk: every flag of the key's project, evaluated. */
export interface OfrepBulkEvaluation {
  flags: (OfrepEvaluationSuccess | OfrepEvaluationFailure)[];
  eventStreams?: OfrepEventStreamLink[];
}

/** OfrepBulkFailure: a bulk evaluation refused as a whole (its 400). */
export interface OfrepBulkEvaluationFailure {
  errorCode: ResolutionErrorCode | (string & {});
  errorDetails: string;
}

/**
 * An evaluation as OFREP answers it (the single evaluation, and each flag of the bulk one), from core's
 * resolution of it: a success, or a failure with its OpenFeature error code.
 */
export function ofrepResult(key: string, resolution: Resolution): OfrepEvaluationSuccess | OfrepEvaluationFailure {
  if (resolution.reason === "ERROR") {
    return { key, errorCode: resolution.errorCode, errorDetails: resolution.errorMessage };
  }
  return { key, value: resolution.value, reason: resolution.reason, variant: resolution.variant, metadata: {} };
}
