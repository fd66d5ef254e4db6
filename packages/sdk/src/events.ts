import type { QueryValue, Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type { EventListOptions, FlagstaffEvent, Page } from "./types.js";

const typeQuery = (type: EventListOptions["type"]): QueryValue =>
  type === undefined ? undefined : typeof type === "string" ? [type] : type;

/** A project's history (read key): who changed what, when, and from what; newest first. */
export class EventsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** Lists a project's events, newest first, with optional filters (`GET /projects/{projectId}/events`). */
  list(projectId: string, options: EventListOptions = {}): PageList<FlagstaffEvent> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/events`;
      const query = {
        type: typeQuery(options.type),
        flag: options.flag,
        segment: options.segment,
        since: options.since,
        until: options.until,
        actor: options.actor,
        environment: options.environment,
        ...pageQuery(page),
      };
      return (await this.http.request<Page<FlagstaffEvent>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /**
   * Lists the events of every flag that had this name, newest first, deletes and re-creates included
   * (`GET /projects/{projectId}/flags/{flagName}/events`); `target.id` tells the flags apart.
   */
  listForFlag(
    projectId: string,
    flagName: string,
    options: Omit<EventListOptions, "flag" | "segment"> = {},
  ): PageList<FlagstaffEvent> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/flags/${param("flagName", flagName)}/events`;
      const { since, until, environment } = options;
      const query = { type: typeQuery(options.type), since, until, environment, ...pageQuery(page) };
      return (await this.http.request<Page<FlagstaffEvent>>({ method: "GET", path, query })).body;
    }, options.limit);
  }
}
