// The API's closed sets of words, as `as const` lists (for schemas and checks) and their union types.

/** A flag's status: on for everyone, off for everyone, or on by its targeting rules. */
export const FLAG_STATUSES = ["enabled", "disabled", "conditional"] as const;
export type FlagStatus = (typeof FLAG_STATUSES)[number];

/** The orders of a project's flag list; each also descending with a leading "-". */
export const FLAG_SORTS = ["name", "createdAt", "updatedAt", "latestCheckedAt"] as const;
export type FlagSort = (typeof FLAG_SORTS)[number] | `-${(typeof FLAG_SORTS)[number]}`;

/**
 * Why an evaluation came out as it did; the names follow OpenFeature's resolution reasons.
 * DISABLED: status disabled. STATIC: status enabled. TARGETING_MATCH: an actor is attached directly or
 * through a segment. SPLIT: an actor or the call fell in a percentage rollout. DEFAULT: conditional, no rule held.
 */
export const EVALUATION_REASONS = ["DISABLED", "STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT"] as const;
export type EvaluationReason = (typeof EVALUATION_REASONS)[number];

/**
 * The rule an explanation names: the status, an attached actor, a segment, the actor rollout, none, one of
 * the configuration's rules, or a failed prerequisite.
 */
export const EXPLAINED_RULES = ["status", "actor", "segment", "actor_rollout", "none", "rule", "prerequisite"] as const;
export type ExplainedRule = (typeof EXPLAINED_RULES)[number];

/** The roles of a project's keys. */
export const PROJECT_ROLES = ["write", "read", "check"] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/** Every role a key can hold; admin keys belong to no project. */
export const KEY_ROLES = ["admin", ...PROJECT_ROLES] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

/** A person's role: `admin` may do everything, people included; a `member` only what project grants give. */
export const USER_ROLES = ["admin", "member"] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** The roles a project grant gives a person: `admin` of the project (keys, webhooks, access), `write`, `read`. */
export const GRANT_ROLES = ["admin", "write", "read"] as const;
export type GrantRole = (typeof GRANT_ROLES)[number];

/** Every kind of event a write can produce; the history filters by these and by their prefixes. */
export const EVENT_TYPES = [
  "project.created",
  "project.deleted",
  "key.created",
  "key.updated",
  "key.revoked",
  "flag.created",
  "flag.updated",
  "flag.deleted",
  "flag.archived",
  "flag.restored",
  "flag.stale",
  "segment.created",
  "segment.updated",
  "segment.deleted",
  "actor.updated",
  "webhook.created",
  "webhook.updated",
  "webhook.deleted",
  "environment.created",
  "environment.updated",
  "environment.deleted",
  "user.created",
  "user.updated",
  "user.deleted",
  "access.granted",
  "access.revoked",
  "change_request.created",
  "change_request.updated",
  "change_request.reviewed",
  "change_request.applied",
  "change_request.overridden",
  "change_request.cancelled",
  "change_request.conflict",
  "change_request.failed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What an event is about. */
export const TARGET_KINDS = [
  "project",
  "key",
  "flag",
  "segment",
  "actor",
  "webhook",
  "environment",
  "user",
  "access",
  "change_request",
] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** A history type filter: an event type, or a prefix such as `flag.` for every type of a kind. */
export const EVENT_TYPE_FILTERS = [...EVENT_TYPES, ...TARGET_KINDS.map((k) => `${k}.` as const)] as const;
export type EventTypeFilter = (typeof EVENT_TYPE_FILTERS)[number];

/** What a webhook may subscribe to: an event type, every type of a kind (`flag.*`), or everything (`*`). */
export const EVENT_PATTERNS = ["*", ...TARGET_KINDS.map((k) => `${k}.*` as const), ...EVENT_TYPES] as const;
export type WebhookEventPattern = (typeof EVENT_PATTERNS)[number];

/** The state of a webhook delivery: not sent yet or waiting for a retry, answered 2xx, or given up. */
export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The type of a flag's values, set at creation and fixed; boolean flags serve `on` (true) and `off` (false). */
export const FLAG_TYPES = ["boolean", "string", "number", "object"] as const;
export type FlagType = (typeof FLAG_TYPES)[number];

/**
 * A rule condition's operators (docs/targeting.md describes each). Strings: in, not_in, starts_with,
 * ends_with, contains, matches (RE2). Numbers: eq, gt, gte, lt, lte. SemVer 2.0: semver_*. Instants:
 * before, after. The attribute is set: present. Segments (no attribute): in_segment, not_in_segment.
 */
export const CONDITION_OPERATORS = [
  "in",
  "not_in",
  "starts_with",
  "ends_with",
  "contains",
  "matches",
  "eq",
  "gt",
  "gte",
  "lt",
  "lte",
  "semver_eq",
  "semver_gt",
  "semver_gte",
  "semver_lt",
  "semver_lte",
  "before",
  "after",
  "present",
  "in_segment",
  "not_in_segment",
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/**
 * Why a targeted evaluation (`evaluateFlag`) came out as it did: the seed's reasons, plus OpenFeature's
 * ERROR, plus PREREQUISITE_FAILED (a prerequisite flag did not serve one of its listed variants). The
 * seed's `evaluate` keeps answering only EVALUATION_REASONS.
 */
export const TARGETING_REASONS = [...EVALUATION_REASONS, "PREREQUISITE_FAILED", "ERROR"] as const;
export type TargetingReason = (typeof TARGETING_REASONS)[number];

/**
 * The OpenFeature error codes an evaluation can answer with reason ERROR: PARSE_ERROR when the flag's
 * configuration (or a segment's conditions) is one the validator refuses; GENERAL when the resolver threw.
 */
export const TARGETING_ERROR_CODES = ["PARSE_ERROR", "GENERAL"] as const;
export type TargetingErrorCode = (typeof TARGETING_ERROR_CODES)[number];

/**
 * The OpenFeature error codes an answer may carry (the check's and OFREP's, the local evaluator's, the
 * OpenFeature providers'): an evaluation's own (TARGETING_ERROR_CODES), and FLAG_NOT_FOUND (no such flag),
 * INVALID_CONTEXT (a context the service refuses) and PROVIDER_NOT_READY (no state to evaluate from yet).
 */
export const RESOLUTION_ERROR_CODES = [
  "FLAG_NOT_FOUND",
  "PROVIDER_NOT_READY",
  "INVALID_CONTEXT",
  ...TARGETING_ERROR_CODES,
] as const;
export type ResolutionErrorCode = (typeof RESOLUTION_ERROR_CODES)[number];

/** A change request's states (docs/change-requests.md). */
export const CHANGE_REQUEST_STATES = [
  "open",
  "approved",
  "rejected",
  "scheduled",
  "applied",
  "cancelled",
  "conflict",
  "failed",
] as const;
export type ChangeRequestState = (typeof CHANGE_REQUEST_STATES)[number];

/** What a reviewer decides of a change request. */
export const REVIEW_DECISIONS = ["approve", "reject"] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

/**
 * What a flag is for (docs/lifecycle.md): each kind has an expected lifetime (release and experiment 40
 * days, the others none, by default; settings), past which the flag is stale.
 */
export const FLAG_KINDS = ["release", "experiment", "operational", "kill-switch", "permission"] as const;
export type FlagKind = (typeof FLAG_KINDS)[number];

/**
 * Why a flag is stale: it outlived its kind's expected lifetime; nothing evaluated it in any environment
 * for the stale window (30 days); or every evaluation in every environment was answered with one variant
 * for that window.
 */
export const STALE_REASONS = ["unused", "one-variant", "lifetime"] as const;
export type StaleReason = (typeof STALE_REASONS)[number];

/** The buckets of a usage series. */
export const USAGE_STEPS = ["minute", "hour", "day"] as const;
export type UsageStep = (typeof USAGE_STEPS)[number];
