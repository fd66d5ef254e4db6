import { type Static, Type } from "typebox";
import { EXPLAINED_RULES, FLAG_KINDS, FLAG_STATUSES, STALE_REASONS, TARGETING_REASONS } from "../contract/enums.js";
import { SEGMENT_ID_MAX_LENGTH } from "../contract/ids.js";
import { ALLOWED_PERCENTAGES, type Percentage as AllowedPercentage } from "../evaluation.js";
import { Limits, oneOf, NullableTimestamp, Timestamp } from "./common.js";
import {
  FlagTypeSchema,
  PrerequisiteSchema,
  RuleSchema,
  SplitWeightsSchema,
  TargetingKey,
  VariantSchema,
  VariantsSchema,
} from "./targeting.js";
import { COMMENT_MAX_LENGTH, PREREQUISITES_MAX, ROLLOUT_STEPS_MAX, RULES_MAX } from "../contract/limits.js";

const KIND_DESCRIPTION =
  "What the flag is for: release and experiment flags are expected to live 40 days (settings), operational, kill-switch and permission flags for ever";
export const FlagKindSchema = oneOf(FLAG_KINDS, { description: KIND_DESCRIPTION });
export const StaleReasonSchema = oneOf(STALE_REASONS, {
  description:
    "unused: not evaluated in any environment for the stale window (30 days); one-variant: one variant answered every evaluation in every environment for that window; lifetime: older than its kind's expected lifetime",
});

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

const StepTime = { ...Timestamp, description: "When the step takes effect (ISO 8601)" };

/** A timed rollout's step: the actor percentage from a time, or a rule's split weights from a time. */
export const RolloutStepSchema = Type.Union(
  [
    Type.Object({ at: StepTime, percentage: Percentage }, { additionalProperties: false }),
    Type.Object(
      {
        at: StepTime,
        ruleId: TargetingKey,
        weights: { ...SplitWeightsSchema, description: "The rule's split weights from then on, summing to 100" },
      },
      { additionalProperties: false },
    ),
  ],
  {
    description: "{at, percentage}: the actor rollout from then on; {at, ruleId, weights}: a rule's split from then on",
  },
);
export type RolloutStepInput = Static<typeof RolloutStepSchema>;

const RolloutSteps = Type.Array(RolloutStepSchema, {
  minItems: 1,
  maxItems: ROLLOUT_STEPS_MAX,
  description: "In time order; the step in force is the last whose time has passed",
});

/** A timed rollout as a PATCH sets it. */
export const RolloutPlanBody = Type.Object(
  {
    steps: RolloutSteps,
    paused: Type.Optional(
      Type.Boolean({
        description:
          "true freezes the step in force now; false resumes, moving the steps still to come later by the time it was paused. Left out: as it is",
      }),
    ),
  },
  { additionalProperties: false },
);
export type RolloutPlanInput = Static<typeof RolloutPlanBody>;

/** A timed rollout as a flag answers it: its steps, whether it is paused, and what is in force now. */
export const RolloutPlanSchema = Type.Object({
  steps: RolloutSteps,
  paused: Type.Boolean(),
  pausedAt: NullableTimestamp,
  current: Type.Integer({
    minimum: -1,
    description: "The index of the last step whose time has passed (of the paused time, when paused); -1: none yet",
  }),
  percentageActors: Type.Integer({
    description: "The actor percentage in force now (the configuration's own percentageActors until a step sets one)",
  }),
  nextAt: Type.Union([Timestamp, Type.Null()], {
    description: "When the next step takes effect; null: none to come, or paused",
  }),
});
export type RolloutPlanView = Static<typeof RolloutPlanSchema>;

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
    type: FlagTypeSchema,
    variants: Type.Array(VariantSchema, {
      description: "The flag's variants (a boolean flag's: on = true, off = false). Extension.",
    }),
    onVariant: Type.String({
      description: "In `environment`: the variant enabled, targeting and rollouts serve. Extension.",
    }),
    offVariant: Type.String({
      description: "In `environment`: the variant disabled, the default and a failed prerequisite serve. Extension.",
    }),
    rules: Type.Array(RuleSchema, { description: "In `environment`: the ordered rules. Extension." }),
    prerequisites: Type.Array(PrerequisiteSchema, { description: "In `environment`: the prerequisites. Extension." }),
    rolloutPlan: Type.Optional({
      ...RolloutPlanSchema,
      description:
        "In `environment`: the timed rollout of the actor percentage and of rules' split weights; absent: none. Extension.",
    }),
    kind: oneOf(FLAG_KINDS, { description: `${KIND_DESCRIPTION}. Extension.` }),
    permanent: Type.Boolean({ description: "Marked to stay: never stale. Extension." }),
    stale: Type.Boolean({
      description: "Whether the flag should be removed from code (staleReason says why). Extension.",
    }),
    staleReason: Type.Union([StaleReasonSchema, Type.Null()], {
      description: "Why it is stale; null: it is not. Extension.",
    }),
    staleSince: Type.Union([Timestamp, Type.Null()], { description: "When it was found stale. Extension." }),
    archived: Type.Boolean({
      description: "Archived: evaluated as not found, left out of lists, its name kept. Extension.",
    }),
    archivedAt: NullableTimestamp,
  },
  {
    $id: "Flag",
    description: "A flag. Answers that carry one flag carry its ETag; PATCH and DELETE accept If-Match (extension)",
  },
);
/** A boolean feature flag of a project. Timestamps are ISO 8601 strings in UTC. */
export type Flag = Static<typeof FlagSchema>;

const kindField = (description: string) => Type.Optional(oneOf(FLAG_KINDS, { description }));
const permanentField = (description: string) => Type.Optional(Type.Boolean({ description }));

export const CreateFlagBody = Type.Object(
  {
    description: Type.Optional(Limits.description),
    kind: kindField(`${KIND_DESCRIPTION}. Default release`),
    permanent: permanentField("true: the flag is meant to stay, and is never found stale. Default false"),
    type: Type.Optional(FlagTypeSchema),
    variants: Type.Optional(VariantsSchema),
    onVariant: Type.Optional({
      ...TargetingKey,
      description: "In every environment; default the first variant (boolean: on)",
    }),
    offVariant: Type.Optional({
      ...TargetingKey,
      description: "In every environment; default the second variant (boolean: off)",
    }),
  },
  { additionalProperties: false },
);
/** Body of a flag's create. */
export type CreateFlagInput = Static<typeof CreateFlagBody>;

const SegmentId = Type.String({ minLength: 1, maxLength: SEGMENT_ID_MAX_LENGTH });

export const UpdateFlagBody = Type.Object(
  {
    description: Type.Optional(Limits.description),
    kind: kindField("What the flag is for (its definition's: every environment's). Extension."),
    permanent: permanentField("Marks the flag to stay (never stale), or not. Extension."),
    status: Type.Optional(FlagStatusSchema),
    percentageActors: Type.Optional(Percentage),
    percentageCalls: Type.Optional(Percentage),
    addActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to attach; at most 1,000")),
    removeActors: Type.Optional(Limits.idList(Limits.actorId, "Actor ids to detach; at most 1,000")),
    addSegments: Type.Optional(Limits.idList(SegmentId, "Segment ids to attach; each must exist")),
    removeSegments: Type.Optional(Limits.idList(SegmentId, "Segment ids to detach")),
    variants: Type.Optional({
      ...VariantsSchema,
      description:
        "Replaces the flag's variants (in every environment; not for boolean flags). A key still served or named anywhere cannot be removed.",
    }),
    onVariant: Type.Optional(TargetingKey),
    offVariant: Type.Optional(TargetingKey),
    rules: Type.Optional(
      Type.Array(RuleSchema, {
        maxItems: RULES_MAX,
        description: "Replaces the rules, in order; the first that holds decides",
      }),
    ),
    prerequisites: Type.Optional(
      Type.Array(PrerequisiteSchema, { maxItems: PREREQUISITES_MAX, description: "Replaces the prerequisites" }),
    ),
    rolloutPlan: Type.Optional(
      Type.Union([RolloutPlanBody, Type.Null()], {
        description:
          "Sets the configuration's timed rollout (its steps replace the plan's), pauses or resumes it; null removes it. Extension.",
      }),
    ),
    comment: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: COMMENT_MAX_LENGTH,
        description:
          "Why the change is made: recorded with the change's history event (and its webhook). A PATCH that changes nothing records nothing. Extension.",
      }),
    ),
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
    reason: oneOf(TARGETING_REASONS),
    rule: oneOf(EXPLAINED_RULES, {
      description:
        "What decided: the status, an attached actor, a segment, a rule of the configuration, a failed prerequisite, the actor rollout, or none",
    }),
    variant: Type.Union([Type.String(), Type.Null()], { description: "The variant served. Extension." }),
    value: Type.Unknown({ description: "The variant's value. Extension." }),
    matchedRule: Type.Union(
      [
        Type.Object({
          index: Type.Integer({ minimum: 0 }),
          id: Type.String(),
          description: Type.Optional(Type.String()),
          conditions: Type.Array(Type.Unknown(), { description: "The rule's conditions: all of them held" }),
        }),
        Type.Null(),
      ],
      { description: "The configuration's rule that decided (rule = rule). Extension." },
    ),
    prerequisite: Type.Union([Type.String(), Type.Null()], {
      description: "The prerequisite flag that failed (rule = prerequisite). Extension.",
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
