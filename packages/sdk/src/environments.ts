import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type { CreateEnvironmentInput, Environment, ListOptions, Page, UpdateEnvironmentInput } from "./types.js";

/**
 * Environments of a project (development, staging, production…): each holds its own configuration of every
 * flag. Any key of the project lists and reads them; only an admin key creates, changes and deletes them.
 */
export class EnvironmentsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(projectId: string, environmentId: string): string {
    return `/projects/${param("projectId", projectId)}/environments/${param("environmentId", environmentId)}`;
  }

  /** Lists the project's environments in their order (`GET /projects/{projectId}/environments`). */
  list(projectId: string, options: ListOptions = {}): PageList<Environment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/environments`;
      return (await this.http.request<Page<Environment>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /** Retrieves an environment (`GET …/environments/{environmentId}`); 404 environment_not_found. */
  async get(projectId: string, environmentId: string): Promise<Environment> {
    return (await this.http.request<Environment>({ method: "GET", path: this.path(projectId, environmentId) })).body;
  }

  /**
   * Creates an environment (`POST /projects/{projectId}/environments`): every flag starts disabled in it,
   * or as in `copyFrom`. 409 `environment_exists` when the id is taken, `environment_limit` past the most
   * a project may have; 404 `environment_not_found` for an unknown `copyFrom`.
   */
  async create(projectId: string, input: CreateEnvironmentInput): Promise<Environment> {
    const path = `/projects/${param("projectId", projectId)}/environments`;
    return (await this.http.request<Environment>({ method: "POST", path, body: input })).body;
  }

  /** Renames or describes an environment, or makes it the default with `default: true` (`PATCH …/environments/{environmentId}`). */
  async update(projectId: string, environmentId: string, input: UpdateEnvironmentInput): Promise<Environment> {
    const path = this.path(projectId, environmentId);
    return (await this.http.request<Environment>({ method: "PATCH", path, body: input })).body;
  }

  /**
   * Deletes an environment with its flag configurations, and revokes the keys bound to it
   * (`DELETE …/environments/{environmentId}`). 409 `environment_is_default` for the default one: make
   * another the default first.
   */
  async delete(projectId: string, environmentId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: this.path(projectId, environmentId) });
  }
}
