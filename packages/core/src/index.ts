export {
  actorBucket,
  BUCKET_COUNT,
  crc32Utf8,
  flagBucket,
  inActorRollout,
  inCallRollout,
  inFlagRollout,
  type RolloutFlag,
  rolloutThreshold,
} from "./rules/bucketing.js";
export {
  type ActorExplanation,
  ALLOWED_PERCENTAGES,
  type Evaluation,
  type EvaluableFlag,
  evaluate,
  type Explanation,
  explain,
  isEnabledForActor,
  isEnabledForSegment,
  isTargeted,
  type Percentage,
  type ProjectResolver,
  type SegmentMembership,
} from "./evaluation.js";
export { API_ERROR_CODES, type ApiErrorCode } from "./api-errors.js";
export {
  BOOLEAN_TARGETING,
  compareText,
  defaultVariants,
  type FlagChangeFields,
  type FlagInput,
  type FlagJSON,
  type FlagTargeting,
  pickTargeting,
  TARGETING_FIELDS,
  READABLE_STATE_FORMATS,
  variantsOf,
  type FlagState,
  isProjectChange,
  type ProjectChange,
  ProjectState,
  type ProjectStateJSON,
  STATE_FORMAT,
  PLANNED_STATE_FORMAT,
} from "./project-state.js";
export * from "./contract/index.js";
export * from "./rules/index.js";
