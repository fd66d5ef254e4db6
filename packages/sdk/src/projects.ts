import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import { tagged } from "./etags.js";
import type { CreateProjectInput, ListOptions, Page, Project, ProjectDocument, Tagged } from "./types.js";

/** Projects (admin key, except `get`, which a read key of the project may use). */
export class ProjectsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** Creates a project (`POST /projects`); 409 project_exists when the id is taken. */
  async create(input: CreateProjectInput): Promise<Project> {
    return (await this.http.request<Project>({ method: "POST", path: "/projects", body: input })).body;
  }

  /** Retrieves a project (`GET /projects/{projectId}`). */
  async get(projectId: string): Promise<Project> {
    const path = `/projects/${param("projectId", projectId)}`;
    return (await this.http.request<Project>({ method: "GET", path })).body;
  }

  /** Lists every project by id (`GET /projects`): iterate it, or call `.page()`. */
  list(options: ListOptions = {}): PageList<Project> {
    return new PageList(
      async (page) =>
        (await this.http.request<Page<Project>>({ method: "GET", path: "/projects", query: pageQuery(page) })).body,
      options.limit,
    );
  }

  /**
   * The whole project as one document (`GET /projects/{projectId}/export`, docs/flags-as-code.md): its
   * environments, segments (with their listed members when `members`) and flags with each environment's
   * configuration, in a fixed order; with its ETag, the project's revision. A key bound to one environment
   * may export only a project that has no other.
   */
  async export(projectId: string, options: { members?: boolean } = {}): Promise<Tagged<ProjectDocument>> {
    const path = `/projects/${param("projectId", projectId)}/export`;
    const query = { members: options.members ? "true" : undefined };
    return tagged(await this.http.request<ProjectDocument>({ method: "GET", path, query }), "the project");
  }

  /** Deletes a project with everything in it, keys included (`DELETE /projects/{projectId}`). */
  async delete(projectId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: `/projects/${param("projectId", projectId)}` });
  }
}
