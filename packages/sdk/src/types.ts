// The API's shapes are not written out here: they are the Static types of the schemas the server validates
// and serialises with (@flagstaff/core/schemas, the same that make /openapi.json), so a change to one is a
// change to both. Imported as types only: no schema library reaches a browser bundle. What is written
// here is the client's own: options, pages as the client walks them, and answers outside the schemas.
import type {
  ChangeRequestState,
  DeliveryStatus,
  EventType,
  FlagKind,
  FlagSort,
  FlagStatus,
  UsageStep,
  VariantValue,
} from "@flagstaff/core";
import type { CreatedApiKey, FlagstaffEvent, Pagination, WebhookDelivery, WhoAmI } from "@flagstaff/core/schemas";

export type {
  AttributeValue,
  ChangeRequestState,
  ReviewDecision,
  Condition,
  ConditionOperator,
  DeliveryStatus as WebhookDeliveryStatus,
  EventType,
  FlagKind,
  FlagSort,
  FlagStatus,
  FlagType,
  StaleReason,
  UsageStep,
  GrantRole,
  JsonValue,
  Percentage,
  Prerequisite,
  ProjectRole as KeyRole,
  Rule,
  Serve,
  Split,
  SplitWeight,
  TargetingReason,
  UserRole,
  Variant,
  VariantValue,
  WebhookEventPattern,
} from "@flagstaff/core";
export type {
  Actor,
  ActorMembership,
  AuthMethods,
  AuthSession,
  CreatedPersonalKey,
  CreatePersonalKeyInput,
  CreateUserInput,
  Grant,
  LoginInput,
  Person,
  PersonalKey,
  SetOwnPasswordInput,
  UpdateKeyInput,
  UpdateUserInput,
  User,
  PutActorInput as ActorProfile,
  CopyFlagInput,
  CreatedApiKey,
  CreatedWebhook,
  CreateEnvironmentInput,
  CreateFlagInput,
  CreateKeyInput,
  CreateProjectInput,
  CreateSegmentInput,
  CreateWebhookInput,
  ConditionInput,
  Environment,
  EventActor,
  Flag,
  FlagEnvironmentConfiguration,
  FlagExplanation,
  FlagstaffEvent,
  NamedSegment,
  Pagination,
  PrerequisiteInput,
  Project,
  RuleInput,
  Segment,
  UpdateEnvironmentInput,
  UpdateFlagInput,
  UpdateSegmentInput,
  UpdateWebhookInput,
  VariantInput,
  Webhook,
  WebhookBacklog,
  WebhookDelivery,
  WhoAmI,
  OfrepBulkEvaluation,
  OfrepBulkEvaluationFailure,
  OfrepEvaluationContext,
  OfrepEvaluationFailure,
  OfrepEvaluationRequest,
  OfrepEvaluationSuccess,
  OfrepEventStreamLink,
  ProjectUsage,
  ProjectDocument,
  ApplyResult,
  PlanChange,
  PlanField,
  DocumentFlag,
  DocumentConfiguration,
  DocumentSegment,
  DocumentEnvironment,
  UsageCount,
  UsagePoint,
  UsageReport,
  UsageReportResult,
  UsageSeries,
  ChangeRequest,
  ChangeRequestPerson,
  CreateChangeRequestInput,
  NewChange,
  Review,
  ReviewInput,
  ScheduleEntry,
  UpdateChangeRequestInput,
  RolloutPlanInput,
  RolloutPlanView,
  RolloutStepInput,
} from "@flagstaff/core/schemas";

/** A person's grant as whoami names it: a project and the role there. */
export type WhoAmIGrant = NonNullable<WhoAmI["grants"]>[number];

/** A project API key, without its secret. */
export type ApiKey = Omit<CreatedApiKey, "key">;

/** Options of a flag's attached actors or a segment's members: a filter on the actor id, and the page size. */
export interface ActorMembershipListOptions extends ListOptions {
  /** Only actors whose id contains this text, ignoring case (at most 256 characters). */
  q?: string;
}

/** A flag or segment with the ETag it was read or written with, for `ifMatch` on a later write. */
export interface Tagged<T> {
  value: T;
  /** The strong entity tag, quotes included, e.g. `"flg_LPuVz_hMXHJDDuJc.7"`. */
  etag: string;
}

/** Options of a write of a flag or segment. */
export interface WriteOptions {
  /**
   * An ETag (from `getWithETag` or `updateWithETag`): the write is applied only while it is still the
   * current one, and fails with 412 `precondition_failed` otherwise, changing nothing.
   */
  ifMatch?: string;
}

/** One page of a list. */
export interface Page<T> {
  data: T[];
  pagination: Pagination;
  /** How many items match in all: only on lists that count, when asked (`flags.list` with `total: true`). */
  total?: number;
}

/** Which page to fetch: at most one of `before` and `after`, and a size of 1–100 (server default 20). */
export interface PageOptions {
  limit?: number;
  before?: string;
  after?: string;
}

/** Options of the change requests list: filters and the page size. */
export interface ChangeRequestListOptions extends ListOptions {
  /** Only requests in this state, or these states. */
  state?: ChangeRequestState | readonly ChangeRequestState[];
  /** Only requests of this environment. */
  environment?: string;
  /** Only requests by this person (usr_…) or key (key_…). */
  author?: string;
}

/** Options of a list that takes no filter: the page size used while iterating. */
export interface ListOptions {
  limit?: number;
}

/** Options of the project's flag list: case-insensitive substring filters and the page size. */
export interface FlagListOptions extends ListOptions {
  /** Only flags whose name contains this text. */
  name?: string;
  /** Only flags whose name or description contains this text. */
  q?: string;
  /** Only flags of this status. */
  status?: FlagStatus;
  /** The order (default `name`): `name`, `createdAt`, `updatedAt` or `latestCheckedAt`; a leading `-` for descending. */
  sort?: FlagSort;
  /** Each page also carries `total`, how many flags match. */
  total?: boolean;
  /** Only flags of this kind. */
  kind?: FlagKind;
  /** true: only stale flags; false: only those that are not. */
  stale?: boolean;
  /** true: only archived flags (left out otherwise). */
  archived?: boolean;
}

/** The range of a usage series: its buckets (default hour), from and to (ISO 8601; defaults in docs/usage.md). */
export interface UsageRange {
  step?: UsageStep;
  from?: string;
  to?: string;
}

/** Filters of a history list, and the page size used while iterating. */
export interface EventListOptions extends ListOptions {
  /** Event types, or prefixes such as `flag.` for every type of a kind. */
  type?: string | readonly string[];
  /** Only events of flags of this name. */
  flag?: string;
  /** Only events of this segment id. */
  segment?: string;
  /** Only events at or after this ISO time. */
  since?: string;
  /** Only events strictly before this ISO time. */
  until?: string;
  /** Only the changes made by one actor: a person's id (`usr_…`) or a key's id. */
  actor?: string;
  /**
   * Only events of this environment: its configurations' changes and its own events (project-wide events,
   * such as a segment's, are left out). The client's `environment` option does not set it.
   */
  environment?: string;
}

/**
 * The JSON body of a webhook POST: the event as the history shows it (`webhook-id` is its `id`), or a
 * `ping` sent by `webhooks.test` (its `before` and `after` are null).
 */
export interface WebhookPayload extends Omit<FlagstaffEvent, "type"> {
  type: EventType | "ping";
}

/** One delivery with the JSON body it POSTs (the same on every attempt). */
export interface WebhookDeliveryWithPayload extends WebhookDelivery {
  payload: WebhookPayload;
}

/** Options of a webhook's delivery list: a status filter, and the page size used while iterating. */
export interface DeliveryListOptions extends ListOptions {
  status?: DeliveryStatus;
}

/**
 * Context attributes of a check or an explanation, which the flag's rules read. They travel in the query
 * (`attributes[NAME]=value`), so the server reads every value as text: a number or a boolean is sent as
 * its text, a list as `attributes[NAME][]=element` for each element (a list of one stays a list). An empty
 * list cannot travel in a query: it is left out, and the server reads it as a missing attribute (the local
 * evaluator and OFREP read it as an empty list). At most 50 names, 100 values each, values of at most 1024
 * characters.
 */
export type CheckAttributes = Readonly<
  Record<string, string | number | boolean | readonly string[] | null | undefined>
>;

/** Options of `flags.check` and `flags.evaluate`. */
export interface CheckOptions {
  /** The actors to check for; the flag is on when it is on for any of them. At most 100. */
  actorIds?: readonly string[];
  /** Context attributes for the flag's rules; null and undefined ones are left out. */
  attributes?: CheckAttributes;
  /** Seconds the answer may be reused (0–86400); with `checkCache: true` the client reuses it in memory. */
  cache?: number;
}

/** Options of `flags.explain`. */
export interface ExplainOptions {
  /** The actors to explain the answer for (0–100). */
  actorIds?: readonly string[];
  /** Context attributes for the flag's rules, as in a check. */
  attributes?: CheckAttributes;
}

/**
 * What `flags.evaluate` answers: whether the flag serves anything but its offVariant, the variant it serves
 * and that variant's value. A boolean flag serves `on` (true) or `off` (false). `variant` and `value` are
 * null when the server could not evaluate the flag (a configuration it would refuse today); `enabled` is
 * then false.
 */
export interface CheckResult {
  enabled: boolean;
  variant: string | null;
  value: VariantValue | null;
}

/** Answer of `GET /healthz`. */
export interface HealthStatus {
  status: "ok";
}

/** Answer of `GET /readyz`: `unavailable` (served with 503) while the database does not answer. */
export interface ReadyStatus {
  status: "ok" | "unavailable";
}
