import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import { tagged } from "./etags.js";
import type { ApplyResult, CreateProjectInput, ListOptions, Page, Project, ProjectDocument, Tagged } from "./types.js";

/** Options of `projects.apply`. */
export interface ApplyOptions {
  /** Answer the plan only; nothing changes. */
  dryRun?: boolean;
  /** Delete the flags and segments the document lacks (default: keep them). */
  prune?: boolean;
  /** The project's revision the document was made from (export's ETag): 412 when the project moved since. */
  ifMatch?: string;
}

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

  /**
   * Takes the project to a document (`POST /projects/{projectId}/apply`, docs/flags-as-code.md): answers the
   * plan, object by object, and (unless `dryRun`) makes it in one write. Where an environment requires
   * approvals, its configurations' changes open a change request instead (`changeRequests`). Reaches every
   * environment: a key bound to one may not.
   */
  async apply(projectId: string, document: ProjectDocument, options: ApplyOptions = {}): Promise<ApplyResult> {
    const path = `/projects/${param("projectId", projectId)}/apply`;
    const query = { dryRun: options.dryRun ? "true" : undefined, prune: options.prune ? "true" : undefined };
    const headers = options.ifMatch === undefined ? undefined : { "if-match": options.ifMatch };
    return (
      await this.http.request<ApplyResult>({
        method: "POST",
        path,
        query,
        body: document,
        ...(headers ? { headers } : {}),
      })
    ).body;
  }

  /** Deletes a project with everything in it, keys included (`DELETE /projects/{projectId}`). */
  async delete(projectId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: `/projects/${param("projectId", projectId)}` });
  }
}
