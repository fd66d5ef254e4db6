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

/** The rule an explanation names: the status, an attached actor, a segment, the actor rollout, or none. */
export const EXPLAINED_RULES = ["status", "actor", "segment", "actor_rollout", "none"] as const;
export type ExplainedRule = (typeof EXPLAINED_RULES)[number];

/** The roles of a project's keys. */
export const PROJECT_ROLES = ["write", "read", "check"] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/** Every role a key can hold; admin keys belong to no project. */
export const KEY_ROLES = ["admin", ...PROJECT_ROLES] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

/** Every kind of event a write can produce; the history filters by these and by their prefixes. */
export const EVENT_TYPES = [
  "project.created",
  "project.deleted",
  "key.created",
  "key.revoked",
  "flag.created",
  "flag.updated",
  "flag.deleted",
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
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What an event is about. */
export const TARGET_KINDS = ["project", "key", "flag", "segment", "actor", "webhook", "environment"] as const;
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
