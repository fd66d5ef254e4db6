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
  created_at: string;
}

export interface FlagsTable {
  id: string;
  project_id: string;
  name: string;
  description: string;
  status: string;
  percentage_actors: number;
  percentage_calls: number;
  created_at: string;
  updated_at: string;
  latest_checked_at: string | null;
  status_changed_at: string;
  /** Moves with every change of the flag; its ETag is made of it. */
  revision: Generated<number>;
  /** Exact counts of attached actors and segments, kept by the writes that change them. */
  actors_count: Generated<number>;
  segments_count: Generated<number>;
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
}

export interface ActorsTable {
  project_id: string;
  actor_id: string;
  name: string | null;
  image_url: string | null;
  created_at: string;
}

export interface FlagActorsTable {
  flag_id: string;
  project_id: string;
  actor_id: string;
  created_at: string;
}

export interface FlagSegmentsTable {
  flag_id: string;
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
  segments: SegmentsTable;
  actors: ActorsTable;
  flag_actors: FlagActorsTable;
  flag_segments: FlagSegmentsTable;
  segment_actors: SegmentActorsTable;
}
