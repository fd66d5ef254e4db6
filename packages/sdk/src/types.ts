import type { FlagStatus, Percentage } from "@flagstaff/core";

/** A flag's status and the allowed percentages, as the evaluation rules define them. */
export type { FlagStatus, Percentage } from "@flagstaff/core";

/** The role of a project API key. */
export type KeyRole = "write" | "read" | "check";

/** A boolean feature flag of a project. Timestamps are ISO 8601 strings in UTC. */
export interface Flag {
  id: string;
  projectId: string;
  name: string;
  description: string;
  status: FlagStatus;
  percentageActors: Percentage;
  percentageCalls: Percentage;
  createdAt: string;
  updatedAt: string;
  latestCheckedAt: string | null;
  statusChangedAt: string;
  /** How many actors are attached directly (exact). */
  actorsCount: number;
  /** How many segments are attached. */
  segmentsCount: number;
}

/** Anything identified by a free-form actor id, typically a user. */
export interface Actor {
  actorId: string;
  name: string | null;
  imageURL: string | null;
  createdAt: string;
}

/** A named list of actors; `latestActors` holds the 10 most recently added, newest first. */
export interface Segment {
  id: string;
  name: string;
  description: string;
  createdAt: string;
  latestActors: Actor[];
  /** How many members the segment has (exact, as cheap for a million as for ten). */
  actorsCount: number;
}

/** An actor attached to a flag, or a member of a segment, and when it was added. */
export interface ActorMembership {
  actorId: string;
  addedAt: string;
}

/** Options of a flag's attached actors or a segment's members: a filter on the actor id, and the page size. */
export interface ActorMembershipListOptions extends ListOptions {
  /** Only actors whose id contains this text, ignoring case (at most 256 characters). */
  q?: string;
}

/** A segment as `explain` names it. */
export interface NamedSegment {
  id: string;
  name: string;
}

/** Why a flag answers as it does for some actors (`flags.explain`): the check's rules, without the call rollout. */
export interface FlagExplanation {
  /** The answer by the deterministic rules (the call rollout left out). */
  enabled: boolean;
  /** As OpenFeature names it. */
  reason: "DISABLED" | "STATIC" | "TARGETING_MATCH" | "SPLIT" | "DEFAULT";
  /** The rule that decided: the status, an attached actor, a segment, the actor rollout, or none. */
  rule: "status" | "actor" | "segment" | "actor_rollout" | "none";
  /** The actor that matched, or null. */
  actorId: string | null;
  /** The id of the segment it matched through, or null. */
  segmentId: string | null;
  /** The segment it matched through, or null. */
  segment: NamedSegment | null;
  /** `percentageActors` × 1,000: buckets below it are in the actor rollout. */
  threshold: number;
  /** When no rule holds, the percentage of calls that are on anyway (`percentageCalls`); 0 otherwise. */
  callRolloutPercentage: number;
  /** Per actor asked about. */
  actors: {
    actorId: string;
    /** Attached to the flag directly. */
    attached: boolean;
    /** The flag's attached segments the actor is in. */
    segments: NamedSegment[];
    /** 0–99,999: in the actor rollout when below `threshold`. */
    bucket: number;
    inRollout: boolean;
  }[];
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

/** Answer of `whoami()`: the key the client uses. */
export interface WhoAmI {
  keyId: string;
  name: string;
  role: KeyRole | "admin";
  /** The key's project; null for an admin key. */
  projectId: string | null;
}

/** A project: the container of flags, segments, actors and project keys. */
export interface Project {
  id: string;
  name: string;
  createdAt: string;
}

/** A project API key, without its secret. */
export interface ApiKey {
  id: string;
  name: string;
  role: KeyRole;
  projectId: string;
  createdAt: string;
}

/** A project API key as answered by the create call: the only time the secret `key` is shown. */
export interface CreatedApiKey extends ApiKey {
  key: string;
}

/** The cursors of a page; `before` is null on the first page, `after` on the last. */
export interface Pagination {
  before: string | null;
  after: string | null;
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
}

/** The orders of the project's flag list. */
export type FlagSort =
  | "name"
  | "-name"
  | "createdAt"
  | "-createdAt"
  | "updatedAt"
  | "-updatedAt"
  | "latestCheckedAt"
  | "-latestCheckedAt";

/** Kinds of event the history records. */
export type EventType =
  | "project.created"
  | "project.deleted"
  | "key.created"
  | "key.revoked"
  | "flag.created"
  | "flag.updated"
  | "flag.deleted"
  | "segment.created"
  | "segment.updated"
  | "segment.deleted"
  | "actor.updated"
  | "webhook.created"
  | "webhook.updated"
  | "webhook.deleted";

/** Who made a write: a key (with its name then), or the service itself. */
export type EventActor = { keyId: string; keyName: string; role: KeyRole | "admin" } | { system: string };

/** One entry of a project's history: who changed what, when, and from what. */
export interface FlagstaffEvent {
  /** `evt_` and a ULID: ids sort by time. */
  id: string;
  type: EventType;
  projectId: string;
  createdAt: string;
  actor: EventActor;
  target: { kind: "project" | "key" | "flag" | "segment" | "actor" | "webhook"; id: string; name: string };
  /** The target's state before the write; null for a create. */
  before: Record<string, unknown> | null;
  /** The state after; null for a delete. Updates add the ids added and removed (`addedActors`, …). */
  after: Record<string, unknown> | null;
  requestId: string | null;
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
}

/** What a webhook may subscribe to: an event type, every type of a kind (`flag.*`), or `*` for everything. */
export type WebhookEventPattern =
  | "*"
  | "project.*"
  | "key.*"
  | "flag.*"
  | "segment.*"
  | "actor.*"
  | "webhook.*"
  | EventType;

/** A webhook of a project, without its secret: where the project's events are POSTed. */
export interface Webhook {
  /** `wh_` and a ULID. */
  id: string;
  projectId: string;
  /** The http(s) URL that receives the POSTs, as the server normalised it. */
  url: string;
  /** The event patterns it receives. */
  events: WebhookEventPattern[];
  description: string;
  /** false when turned off, by a person or by the service after failing for a whole retry window. */
  enabled: boolean;
  /** Why the service turned it off; null when enabled or turned off by a person. */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A webhook as answered by the create call: the only time its signing `secret` (`whsec_…`) is shown. */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

/** The state of a delivery: not sent yet or waiting for a retry, answered 2xx, or given up. */
export type WebhookDeliveryStatus = "pending" | "succeeded" | "failed";

/** One event's delivery to one webhook: its attempts and how the last one went. */
export interface WebhookDelivery {
  /** `dlv_` and a ULID. */
  id: string;
  webhookId: string;
  /** The event's id: the `webhook-id` header, the same on every attempt (the receiver's idempotency key). */
  eventId: string;
  /** An event type, or `ping` for `webhooks.test`. */
  eventType: EventType | "ping";
  status: WebhookDeliveryStatus;
  attempts: number;
  /** When the next attempt is due; null once finished. */
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  /** The HTTP status of the last attempt; null when it got none (refused, timeout, unsafe target). */
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  createdAt: string;
  finishedAt: string | null;
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
  status?: WebhookDeliveryStatus;
}

/** Body of `webhooks.create`. */
export interface CreateWebhookInput {
  /** http or https; loopback, private and link-local addresses are refused unless the server allows them. */
  url: string;
  /** Event patterns, 1–50 and unique (default `["*"]`). */
  events?: WebhookEventPattern[];
  /** At most 1,024 characters (default ""). */
  description?: string;
  /** Default true. */
  enabled?: boolean;
}

/** Body of `webhooks.update`: every field optional; `enabled: true` turns a disabled webhook back on. */
export interface UpdateWebhookInput {
  url?: string;
  events?: WebhookEventPattern[];
  description?: string;
  enabled?: boolean;
}

/** Body of `projects.create`. */
export interface CreateProjectInput {
  id: string;
  name: string;
}

/** Body of `keys.create`. */
export interface CreateKeyInput {
  role: KeyRole;
  name: string;
}

/** Body of `flags.create`. */
export interface CreateFlagInput {
  description?: string;
}

/** Body of `flags.update`: every field optional; the whole update is one transaction. */
export interface UpdateFlagInput {
  description?: string;
  status?: FlagStatus;
  percentageActors?: Percentage;
  percentageCalls?: Percentage;
  addActors?: string[];
  removeActors?: string[];
  addSegments?: string[];
  removeSegments?: string[];
}

/** Body of `segments.create`. */
export interface CreateSegmentInput {
  name: string;
  description?: string;
}

/** Body of `segments.update`: every field optional. */
export interface UpdateSegmentInput {
  name?: string;
  description?: string;
  addActors?: string[];
  removeActors?: string[];
}

/** Body of `actors.put`: it replaces the profile, so a field left out becomes null. */
export interface ActorProfile {
  name?: string | null;
  imageURL?: string | null;
}

/** Options of `flags.check`. */
export interface CheckOptions {
  /** The actors to check for; the flag is on when it is on for any of them. At most 100. */
  actorIds?: readonly string[];
  /** Seconds the answer may be reused (0–86400); with `checkCache: true` the client reuses it in memory. */
  cache?: number;
}

/** Answer of `GET /healthz`. */
export interface HealthStatus {
  status: "ok";
}

/** Answer of `GET /readyz`: `unavailable` (served with 503) while the database does not answer. */
export interface ReadyStatus {
  status: "ok" | "unavailable";
}
