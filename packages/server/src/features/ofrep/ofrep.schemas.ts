import { MAX_ACTORS, TARGETING_REASONS } from "@flagstaff/core";
import { oneOf } from "@flagstaff/core/schemas";
import { Type } from "typebox";
import { Limits } from "@flagstaff/core/schemas";

// Shapes of the OpenFeature Remote Evaluation Protocol (OFREP) v1.

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
