import { ifMatchHeader, tagged } from "./etags.js";
import type { Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type {
  ActorMembership,
  ActorMembershipListOptions,
  CreateSegmentInput,
  ListOptions,
  Page,
  Segment,
  Tagged,
  UpdateSegmentInput,
  WriteOptions,
} from "./types.js";

/** Segments of a project: project-wide, the same in every environment (only `listForFlag` depends on one). */
export class SegmentsApi {
  /** @internal */
  constructor(
    private readonly http: Transport,
    private readonly environment: string | undefined,
  ) {}

  private path(projectId: string, segmentId: string): string {
    return `/projects/${param("projectId", projectId)}/segments/${param("segmentId", segmentId)}`;
  }

  /**
   * Creates a segment (`POST /projects/{projectId}/segments`); 409 segment_exists when the name is taken.
   * With `conditions`, a context whose conditions all hold is in it too, beside its listed members.
   */
  async create(projectId: string, input: CreateSegmentInput): Promise<Segment> {
    const path = `/projects/${param("projectId", projectId)}/segments`;
    return (await this.http.request<Segment>({ method: "POST", path, body: input })).body;
  }

  /** Retrieves a segment by id (`GET /projects/{projectId}/segments/{segmentId}`). */
  async get(projectId: string, segmentId: string): Promise<Segment> {
    return (await this.http.request<Segment>({ method: "GET", path: this.path(projectId, segmentId) })).body;
  }

  /** Retrieves a segment with its ETag, for `ifMatch` on a later `update` or `delete`. */
  async getWithETag(projectId: string, segmentId: string): Promise<Tagged<Segment>> {
    const response = await this.http.request<Segment>({ method: "GET", path: this.path(projectId, segmentId) });
    return tagged(response, "the segment");
  }

  /**
   * Renames, describes, adds and removes members, and replaces the `conditions` ([]: listed members only),
   * in one transaction (`PATCH …/segments/{segmentId}`).
   * With `ifMatch`, only while the segment is still at that ETag: 412 `precondition_failed` otherwise.
   */
  async update(
    projectId: string,
    segmentId: string,
    input: UpdateSegmentInput,
    options?: WriteOptions,
  ): Promise<Segment> {
    return (await this.patch(projectId, segmentId, input, options)).body;
  }

  /** `update`, answering the segment with its new ETag. */
  async updateWithETag(
    projectId: string,
    segmentId: string,
    input: UpdateSegmentInput,
    options?: WriteOptions,
  ): Promise<Tagged<Segment>> {
    return tagged(await this.patch(projectId, segmentId, input, options), "the segment");
  }

  private patch(projectId: string, segmentId: string, input: UpdateSegmentInput, options: WriteOptions | undefined) {
    const path = this.path(projectId, segmentId);
    return this.http.request<Segment>({ method: "PATCH", path, body: input, headers: ifMatchHeader(options) });
  }

  /**
   * Deletes a segment and detaches it from every flag (`DELETE …/segments/{segmentId}`); with `ifMatch`,
   * only while the segment is still at that ETag.
   */
  async delete(projectId: string, segmentId: string, options?: WriteOptions): Promise<void> {
    const path = this.path(projectId, segmentId);
    await this.http.request<void>({ method: "DELETE", path, headers: ifMatchHeader(options) });
  }

  /**
   * Lists the segment's members, by actor id, optionally those whose id contains `q`
   * (`GET …/segments/{segmentId}/actors`); a million members page as fast as ten.
   */
  actors(projectId: string, segmentId: string, options: ActorMembershipListOptions = {}): PageList<ActorMembership> {
    return new PageList(async (page) => {
      const path = `${this.path(projectId, segmentId)}/actors`;
      const query = { q: options.q, ...pageQuery(page) };
      return (await this.http.request<Page<ActorMembership>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /** Lists the project's segments by name (`GET /projects/{projectId}/segments`). */
  list(projectId: string, options: ListOptions = {}): PageList<Segment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/segments`;
      return (await this.http.request<Page<Segment>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /** Lists the segments attached to a flag in the client's environment (`GET …/flags/{flagName}/segments`). */
  listForFlag(projectId: string, flagName: string, options: ListOptions = {}): PageList<Segment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/flags/${param("flagName", flagName)}/segments`;
      const query = { environment: this.environment, ...pageQuery(page) };
      return (await this.http.request<Page<Segment>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /** Lists the segments an actor is a member of (`GET …/actors/{actorId}/segments`). */
  listForActor(projectId: string, actorId: string, options: ListOptions = {}): PageList<Segment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/actors/${param("actorId", actorId)}/segments`;
      return (await this.http.request<Page<Segment>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }
}
