import type { Generated } from "kysely";

// Timestamps are ISO 8601 UTC text with milliseconds in both dialects: they sort as text, compare the
// same way on SQLite and PostgreSQL, and need no conversion on the way out.

export interface ProjectsTable {
  id: string;
  name: string;
  created_at: string;
}

/** One row per change stream: a project's id, or "" for the global stream (admin keys). */
export interface FeedStreamsTable {
  stream: string;
  version: number;
}

/** The change log replicas replay to keep their evaluation snapshots in step. */
export interface FeedChangesTable {
  stream: string;
  version: number;
  change: string;
  created_at: string;
  /** The instance that wrote it (null for change sets written before this column existed). */
  origin: string | null;
}

export interface ApiKeysTable {
  id: string;
  /** null for admin keys, which reach every project. */
  project_id: string | null;
  role: string;
  name: string;
  key_hash: string;
  /** The environment the key acts on; null: none in particular (admin keys, unbound write keys). */
  environment_id: string | null;
  created_at: string;
  /** A personal key's person; null for service keys. */
  user_id: Generated<string | null>;
}

/** A person who signs in. */
export interface UsersTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  name: string;
  /** admin or member */
  role: string;
  disabled: Generated<number>;
  /** scrypt, self-describing (see passwords.ts); null: no password sign-in. */
  password_hash: string | null;
  created_at: string;
  last_sign_in_at: string | null;
}

/**
 * Failed sign-ins in a row for one e-mail (normalised, as stored in users; a person's or not), counted
 * before each password is checked; deleted by a success.
 */
export interface SignInFailuresTable {
  email: string;
  failures: number;
  /** The lock's end; null: not locked. */
  locked_until: string | null;
  last_attempt_at: string;
}

/** What a member may do on a project. */
export interface ProjectGrantsTable {
  project_id: string;
  user_id: string;
  /** admin, write or read */
  role: string;
  created_at: string;
}

/** A signed-in browser; the cookie holds the id, this table only its SHA-256. */
export interface SessionsTable {
  id_hash: string;
  user_id: string;
  created_at: string;
  last_seen_at: string;
  /** The absolute end; the idle end is last_seen_at plus the idle timeout. */
  expires_at: string;
}

/** A one-time sign-in link, or a single sign-on attempt in flight; each used once. */
export interface SignInTokensTable {
  id_hash: string;
  kind: string;
  user_id: string | null;
  data: string | null;
  expires_at: string;
}

/** A flag's definition: what it is in every environment of its project. */
export interface FlagsTable {
  id: string;
  project_id: string;
  name: string;
  description: string;
  created_at: string;
  /** boolean, string, number or object; fixed at creation. */
  type: Generated<string>;
  /** JSON: the variants of a flag that is not boolean; null for a boolean flag. */
  variants: string | null;
  /** release, experiment, operational, kill-switch or permission. */
  kind: Generated<string>;
  /** 1: meant to stay, never stale. */
  permanent: Generated<number>;
  /** Why the stale rules found it stale (unused, one-variant, lifetime); null: not stale. */
  stale_reason: string | null;
  stale_since: string | null;
  /** When it was archived; null: it is not. */
  archived_at: string | null;
}

/** Evaluations of one configuration that answered one variant in one bucket (docs/usage.md). */
export interface FlagUsageTable {
  config_id: string;
  flag_id: string;
  /** minute, hour or day. */
  granularity: string;
  /** The bucket's start. */
  bucket_at: string;
  variant: string;
  count: number | string;
}

/** The ids of SDKs' usage reports recorded, so that one sent again is not counted twice. */
export interface UsageReportsTable {
  id: string;
  received_at: string;
}

/** The roll-ups' progress: one row (id 1). */
export interface UsageRollupsTable {
  id: number;
  /** Hours before this are rolled up from minutes (null: none yet). */
  hours_until: string | null;
  /** Days before this are rolled up from hours (null: none yet). */
  days_until: string | null;
}

/** A project's environment; exactly one per project has is_default = 1. */
export interface EnvironmentsTable {
  project_id: string;
  id: string;
  name: string;
  description: string;
  is_default: number;
  /** 1: only project admins change its configurations. */
  protected: Generated<number>;
  /** The list's order. */
  position: number;
  /** Approvals a change request needs here; above 0, direct configuration changes are refused. */
  required_approvals: Generated<number>;
  /** 1: a change request's author may approve it. */
  allow_self_approval: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** A flag's configuration in one environment. */
export interface FlagConfigsTable {
  /** `<flag id>@<environment id>`: the owner of the configuration's actor and segment links. */
  config_id: string;
  flag_id: string;
  environment_id: string;
  status: string;
  percentage_actors: number;
  percentage_calls: number;
  /** Moves with every change of the configuration or of the flag's definition. */
  updated_at: string;
  latest_checked_at: string | null;
  status_changed_at: string;
  /** Moves with every change of the configuration or of the flag's definition; its ETag is made of it. */
  revision: number;
  /** Exact counts of attached actors and segments, kept by the writes that change them. */
  actors_count: number;
  segments_count: number;
  /** The variants served; null for a boolean flag (on and off). */
  on_variant: string | null;
  off_variant: string | null;
  /** JSON arrays; null: none. */
  rules: string | null;
  prerequisites: string | null;
  /** JSON: the timed rollout plan (steps, pausedAt); null: none. */
  rollout_plan: Generated<string | null>;
}

export interface SegmentsTable {
  id: string;
  project_id: string;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
  /** Next value of segment_actors.seq, so "most recently added" has a total order. */
  next_actor_seq: Generated<number>;
  /** Moves with every change of the segment (members included); its ETag is made of it. */
  revision: Generated<number>;
  /** Exact member count, kept by the writes that change membership. */
  actors_count: Generated<number>;
  /** JSON array of conditions (rule-based membership); null: listed members only. */
  conditions: string | null;
}

export interface ActorsTable {
  project_id: string;
  actor_id: string;
  name: string | null;
  image_url: string | null;
  created_at: string;
}

export interface FlagActorsTable {
  config_id: string;
  project_id: string;
  actor_id: string;
  created_at: string;
}

export interface FlagSegmentsTable {
  config_id: string;
  segment_id: string;
  created_at: string;
}

export interface SegmentActorsTable {
  segment_id: string;
  project_id: string;
  actor_id: string;
  seq: number;
  added_at: string;
}

/** The history: one row per event, kept until HISTORY_RETENTION_DAYS (forever by default). JSON as text. */
export interface EventsTable {
  id: string;
  project_id: string | null;
  type: string;
  target_kind: string;
  target_id: string;
  target_name: string;
  actor: string;
  before: string | null;
  after: string | null;
  request_id: string | null;
  /** The environment of a configuration's change or of an environment's event. */
  environment_id: string | null;
  created_at: string;
  /** Who made it, for `?actor=`: a person's id (usr_…) or a key's id; null for the service itself. */
  actor_id: Generated<string | null>;
  /** Why the write was made, as its caller said (a flag's PATCH `comment`); null without one. */
  comment: Generated<string | null>;
  /** The change request a write applied; null for every other write. */
  change_request_id: Generated<string | null>;
}

/** A change request (see migration 011); JSON as text. */
export interface ChangeRequestsTable {
  id: string;
  project_id: string;
  environment_id: string;
  title: string;
  description: string;
  state: string;
  author: string;
  author_id: string | null;
  changes: string;
  scheduled_at: string | null;
  applied_at: string | null;
  applied_by: string | null;
  override_reason: string | null;
  failure_reason: string | null;
  attempts: Generated<number>;
  next_attempt_at: string | null;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

/** A person's review of a change request: their latest decision. */
export interface ChangeRequestReviewsTable {
  change_request_id: string;
  reviewer_id: string;
  reviewer: string;
  decision: string;
  comment: string | null;
  created_at: string;
}

export interface WebhooksTable {
  id: string;
  project_id: string;
  url: string;
  events: string;
  description: string;
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  lease_until: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  created_at: string;
  finished_at: string | null;
}

export interface Database {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  events: EventsTable;
  projects: ProjectsTable;
  feed_streams: FeedStreamsTable;
  feed_changes: FeedChangesTable;
  api_keys: ApiKeysTable;
  flags: FlagsTable;
  environments: EnvironmentsTable;
  flag_configs: FlagConfigsTable;
  flag_usage: FlagUsageTable;
  usage_rollups: UsageRollupsTable;
  usage_reports: UsageReportsTable;
  segments: SegmentsTable;
  actors: ActorsTable;
  flag_actors: FlagActorsTable;
  flag_segments: FlagSegmentsTable;
  segment_actors: SegmentActorsTable;
  users: UsersTable;
  project_grants: ProjectGrantsTable;
  sessions: SessionsTable;
  sign_in_tokens: SignInTokensTable;
  sign_in_failures: SignInFailuresTable;
  change_requests: ChangeRequestsTable;
  change_request_reviews: ChangeRequestReviewsTable;
}
