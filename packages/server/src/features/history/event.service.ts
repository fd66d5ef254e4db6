import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import { flagNotFound, invalid, projectNotFound } from "../../kernel/errors.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import { flagExists } from "../flags/flag.repository.js";
import { findProject } from "../projects/project.repository.js";
import { EVENT_TYPES, type EventType, type StoredEvent } from "../../write-path/domain-events.js";
import { type EventFilter, eventsBeyond, listEvents } from "./event.repository.js";
import type { HistoryQuery } from "./event.schemas.js";

/** Expands type filters (`flag.` stands for every flag type) into the types they name. */
export function expandTypes(filters: readonly string[] | undefined): EventType[] | undefined {
  if (filters === undefined || filters.length === 0) return undefined;
  const types = new Set<EventType>();
  for (const filter of filters) {
    for (const type of EVENT_TYPES)
      if (filter.endsWith(".") ? type.startsWith(filter) : type === filter) types.add(type);
  }
  return [...types];
}

/** ISO timestamps in the one stored form (UTC, milliseconds), so they compare as text with created_at. */
function normalTime(value: string | undefined, parameter: string): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw invalid(`${parameter} is not a valid time.`, [
      { path: `/query/${parameter}`, message: "must be an ISO time" },
    ]);
  }
  return new Date(ms).toISOString();
}

export type HistoryEvent = StoredEvent & { projectId: string };

/** Reads the history: who changed what, when, and from what. */
export class EventService {
  constructor(private readonly db: Kysely<Database>) {}

  private async page(filter: EventFilter, page: PageQuery): Promise<Page<HistoryEvent>> {
    const rows = await listEvents(this.db, filter, page);
    return (await assemblePage(
      page,
      rows,
      (e) => [e.id],
      (side, key) => eventsBeyond(this.db, filter, side, key),
    )) as Page<HistoryEvent>;
  }

  private filter(projectId: string, query: HistoryQuery): EventFilter {
    return {
      projectId,
      types: expandTypes(query.type),
      flagName: query.flag,
      segmentId: query.segment,
      since: normalTime(query.since, "since"),
      until: normalTime(query.until, "until"),
      ...(query.environment === undefined ? {} : { environment: query.environment }),
      ...(query.actor === undefined ? {} : { actorId: query.actor }),
    };
  }

  /**
   * A project's events. `seesWebhooks` false (keys that may not read the webhooks API) leaves webhook
   * events out, as if there were none: a `type=webhook.` filter then lists nothing.
   */
  async list(
    projectId: string,
    query: HistoryQuery,
    page: PageQuery,
    seesWebhooks: boolean,
    boundTo: string | null = null,
  ): Promise<Page<HistoryEvent>> {
    if (!(await findProject(this.db, projectId))) throw projectNotFound(projectId);
    const within = boundTo === null ? {} : { withinEnvironment: boundTo };
    return this.page({ ...this.filter(projectId, query), hideWebhooks: !seesWebhooks, ...within }, page);
  }

  /** Events of every flag that had this name, the deleted ones included; 404 when there never was one. */
  async listForFlag(
    projectId: string,
    flagName: string,
    query: HistoryQuery,
    page: PageQuery,
    boundTo: string | null = null,
  ): Promise<Page<HistoryEvent>> {
    if (!(await findProject(this.db, projectId))) throw projectNotFound(projectId);
    const everKnown =
      (await flagExists(this.db, projectId, flagName)) ||
      (await listEvents(this.db, { projectId, flagName }, { limit: 0, direction: "first" })).length > 0;
    if (!everKnown) throw flagNotFound(flagName);
    const within = boundTo === null ? {} : { withinEnvironment: boundTo };
    return this.page({ ...this.filter(projectId, { ...query, flag: flagName, segment: undefined }), ...within }, page);
  }
}
