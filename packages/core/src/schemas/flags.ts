import { type Static, Type } from "typebox";
import { EVALUATION_REASONS, EXPLAINED_RULES, FLAG_STATUSES } from "../contract/enums.js";
import { SEGMENT_ID_MAX_LENGTH } from "../contract/ids.js";
import { ALLOWED_PERCENTAGES, type Percentage as AllowedPercentage } from "../evaluation.js";
import { Limits, oneOf, NullableTimestamp, Timestamp } from "./common.js";

export const FlagStatusSchema = oneOf(FLAG_STATUSES, {
  description: "enabled: on for everyone; disabled: off for everyone; conditional: on by the targeting rules",
});

const Percentage = Type.Unsafe<AllowedPercentage>(
  Type.Integer({ enum: [...ALLOWED_PERCENTAGES], description: "One of 0, 1, 2, 5, 10, 25, 50, 75, 100" }),
);
/** A percentage as a flag answers it: the document says integer; the server only ever stores an allowed one. */
const StoredPercentage = Type.Unsafe<AllowedPercentage>(Type.Integer());

const EnvironmentConfiguration = Type.Object({
  status: FlagStatusSchema,
  percentageActors: StoredPercentage,
  percentageCalls: StoredPercentage,
  statusChangedAt: Timestamp,
});
/** A flag's configuration in one environment, as the flag's `environments` shows it. */
export type FlagEnvironmentConfiguration = Static<typeof EnvironmentConfiguration>;

export const FlagSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    status: FlagStatusSchema,
    percentageActors: StoredPercentage,
    percentageCalls: StoredPercentage,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    latestCheckedAt: NullableTimestamp,
    statusChangedAt: Timestamp,
    actorsCount: Type.Integer({ minimum: 0, description: "Actors attached directly (extension)" }),
    segmentsCount: Type.Integer({ minimum: 0, description: "Segments attached (extension)" }),
    environment: Type.String({
      description:
        "The environment whose configuration the seed's fields (status, percentages, times, counts) show. Extension.",
    }),
    environments: Type.Record(Type.String(), EnvironmentConfiguration, {
      description: "The flag's configuration in every environment of the project, by environment id. Extension.",
    }),
  },
  {
    $id: "Flag",
    description: "A flag. Answers that carry one flag carry its ETag; PATCH and DELETE accept If-Match (extension)",
  },
);
/** A boolean feature flag of a project. Timestamps are ISO 8601 strings in UTC. */
export type Flag = Static<typeof FlagSchema>;

export const CreateFlagBody = Type.Object(
  { description: Type.Optional(Limits.description) },
  { additionalProperties: false },
);
/** Body of a flag's create. */
export type CreateFlagInput = Static<typeof CreateFlagBody>;

const SegmentId = Type.String({ minLength: 1, maxLength: SEGMENT_ID_MAX_LENGTH });

export const UpdateFlagBody = Type.Object(
  {
    description: Type.Optional(Limits.description),
    status: Type.Optional(FlagStatusSchema),
    percentageActors: Type.Optional(Percentage),
    percentageCalls: Type.Optional(Percentage),
    addActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to attach; at most 1,000")),
    removeActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to detach; at most 1,000")),
    addSegments: Type.Optional(Limits.idList(SegmentId, "Segment ids to attach; each must exist")),
    removeSegments: Type.Optional(Limits.idList(SegmentId, "Segment ids to detach")),
  },
  { additionalProperties: false },
);
/** Body of a flag's update: every field optional; the whole update is one transaction. */
export type UpdateFlagInput = Static<typeof UpdateFlagBody>;

export const CopyFlagBody = Type.Object(
  {
    from: Type.String({ minLength: 1, description: "The environment to copy the configuration from" }),
    to: Type.String({ minLength: 1, description: "The environment whose configuration is replaced" }),
  },
  { additionalProperties: false },
);
/** Body of a flag's copy between environments. */
export type CopyFlagInput = Static<typeof CopyFlagBody>;

const NamedSegment = Type.Object({ id: Type.String(), name: Type.String() });
/** A segment as an explanation names it. */
export type NamedSegment = Static<typeof NamedSegment>;

export const ExplanationSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: "The answer by the deterministic rules (call rollout left out)" }),
    reason: oneOf(EVALUATION_REASONS),
    rule: oneOf(EXPLAINED_RULES, {
      description: "The rule that decided: the status, an attached actor, a segment, the actor rollout, or none",
    }),
    actorId: Type.Union([Type.String(), Type.Null()], { description: "The actor that matched" }),
    segmentId: Type.Union([Type.String(), Type.Null()]),
    segment: Type.Union([NamedSegment, Type.Null()], { description: "The segment it matched through" }),
    threshold: Type.Integer({ description: "percentageActors × 1,000: buckets below it are in the actor rollout" }),
    callRolloutPercentage: Type.Integer({
      description: "When no rule holds: the percentage of calls that are on anyway (percentageCalls)",
    }),
    actors: Type.Array(
      Type.Object({
        actorId: Type.String(),
        attached: Type.Boolean(),
        segments: Type.Array(NamedSegment, { description: "Attached segments the actor is in" }),
        bucket: Type.Integer({ minimum: 0, maximum: 99_999 }),
        inRollout: Type.Boolean(),
      }),
    ),
  },
  { $id: "Explanation" },
);
/** Why a flag answers as it does for some actors: the check's rules, without the call rollout. */
export type FlagExplanation = Static<typeof ExplanationSchema>;
