import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type {
  ChangeRequest,
  ChangeRequestListOptions,
  CreateChangeRequestInput,
  Page,
  ReviewInput,
  ScheduleEntry,
  UpdateChangeRequestInput,
} from "./types.js";

/**
 * A project's change requests (docs/change-requests.md): reviewed, optionally scheduled changes to flags'
 * configurations in one environment, applied together; and the project's schedule.
 */
export class ChangeRequestsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private base(projectId: string): string {
    return `/projects/${param("projectId", projectId)}/change-requests`;
  }

  private path(projectId: string, id: string, action = ""): string {
    return `${this.base(projectId)}/${param("changeRequestId", id)}${action}`;
  }

  /** Lists the project's change requests, newest first, filtered by state, environment and author. */
  list(projectId: string, options: ChangeRequestListOptions = {}): PageList<ChangeRequest> {
    const filters = {
      state: options.state === undefined ? undefined : [options.state].flat().join(","),
      environment: options.environment,
      author: options.author,
    };
    return new PageList(async (page) => {
      const query = { ...pageQuery(page), ...filters };
      return (await this.http.request<Page<ChangeRequest>>({ method: "GET", path: this.base(projectId), query })).body;
    }, options.limit);
  }

  /** Opens a change request; its changes are checked now as their PATCH would be. */
  async create(projectId: string, input: CreateChangeRequestInput): Promise<ChangeRequest> {
    return (await this.http.request<ChangeRequest>({ method: "POST", path: this.base(projectId), body: input })).body;
  }

  /** A change request with each change's diff against the flag now; 404 change_request_not_found. */
  async get(projectId: string, id: string): Promise<ChangeRequest> {
    return (await this.http.request<ChangeRequest>({ method: "GET", path: this.path(projectId, id) })).body;
  }

  /** Changes your own request: its reviews are cleared. */
  async update(projectId: string, id: string, input: UpdateChangeRequestInput): Promise<ChangeRequest> {
    return (await this.http.request<ChangeRequest>({ method: "PATCH", path: this.path(projectId, id), body: input }))
      .body;
  }

  /** Approves or rejects a request (people only). */
  async review(projectId: string, id: string, input: ReviewInput): Promise<ChangeRequest> {
    const path = this.path(projectId, id, "/reviews");
    return (await this.http.request<ChangeRequest>({ method: "POST", path, body: input })).body;
  }

  /**
   * Applies a request now; one that is not approved only with a project admin's `override`. 409
   * change_request_conflict when a flag moved since (nothing applied; the request is then in conflict).
   */
  async apply(projectId: string, id: string, override?: { reason: string }): Promise<ChangeRequest> {
    const path = this.path(projectId, id, "/apply");
    const body = override === undefined ? {} : { override };
    return (await this.http.request<ChangeRequest>({ method: "POST", path, body })).body;
  }

  /** Cancels a request (its author or a project admin). */
  async cancel(projectId: string, id: string): Promise<ChangeRequest> {
    const path = this.path(projectId, id, "/cancel");
    return (await this.http.request<ChangeRequest>({ method: "POST", path, body: {} })).body;
  }

  /** What is due, soonest first: scheduled change requests and timed rollout steps (`GET /projects/{p}/schedule`). */
  async schedule(projectId: string, environment?: string): Promise<ScheduleEntry[]> {
    const path = `/projects/${param("projectId", projectId)}/schedule`;
    return (await this.http.request<{ data: ScheduleEntry[] }>({ method: "GET", path, query: { environment } })).body
      .data;
  }
}
