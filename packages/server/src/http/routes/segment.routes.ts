import { Type } from "typebox";
import { requestEnvironment } from "../environment.js";
import { ActorParams, EnvironmentPageQuery, PageQuery, ProjectParams } from "../../kernel/schemas.js";
import { errorResponses, pageRead } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { toPageQuery } from "../../kernel/pagination.js";
import { conditionalResourceRoutes } from "../conditional-writes.js";
import { entityTag } from "../../write-path/preconditions.js";
import { MembersQuery } from "../../kernel/schemas.js";
import { CreateSegmentBody, SegmentParams, UpdateSegmentBody } from "../../features/segments/segment.schemas.js";
import type { SegmentService } from "../../features/segments/segment.service.js";

const Segment = Type.Ref("Segment");

export function segmentRoutes(app: TypedApp, segments: SegmentService): void {
  app.get(
    "/projects/:projectId/segments",
    pageRead({
      tags: ["segments"],
      summary: "List segments of a project, ordered by name",
      params: ProjectParams,
      querystring: PageQuery,
      item: Segment,
    }),
    async (request) => segments.list(request.params.projectId, toPageQuery(request.query, 1)),
  );

  app.post(
    "/projects/:projectId/segments",
    {
      config: { access: "write" },
      schema: {
        tags: ["segments"],
        summary: "Create a segment",
        params: ProjectParams,
        body: CreateSegmentBody,
        response: { 201: Segment, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const segment = await segments.create(writeContext(request), projectId, request.body);
      return reply
        .code(201)
        .header("location", `/projects/${encodeURIComponent(projectId)}/segments/${encodeURIComponent(segment.id)}`)
        .header("etag", entityTag(segment.id, segment.revision))
        .send(segment);
    },
  );

  conditionalResourceRoutes(app, {
    path: "/projects/:projectId/segments/:segmentId",
    noun: "segment",
    params: SegmentParams,
    entity: Segment,
    updateBody: UpdateSegmentBody,
    summaries: {
      update: "Update a segment: name, description, members; all in one transaction",
      delete: "Delete a segment and detach it from every flag (extension)",
    },
    deleteDescription:
      "With If-Match, only when the segment still has that ETag; 412 otherwise. A segment that rules name " +
      "(in_segment, not_in_segment, in any environment) is in use: 409 segment_in_use, naming where.",
    updateErrors: [409],
    deleteErrors: [409],
    get: (params) => segments.get(params.projectId, params.segmentId),
    update: (context, params, body, ifMatch) =>
      segments.update(context, params.projectId, params.segmentId, body, ifMatch),
    delete: (context, params, ifMatch) => segments.delete(context, params.projectId, params.segmentId, ifMatch),
  });

  app.get(
    "/projects/:projectId/segments/:segmentId/actors",
    pageRead({
      tags: ["segments", "actors"],
      summary: "List a segment's members, by actor id, optionally searched (extension)",
      params: SegmentParams,
      querystring: MembersQuery,
      item: Type.Ref("Membership"),
    }),
    async (request) => {
      const { q, ...page } = request.query;
      return segments.listActors(request.params.projectId, request.params.segmentId, q, toPageQuery(page, 1));
    },
  );

  app.get(
    "/projects/:projectId/flags/:flagName/segments",
    pageRead({
      tags: ["segments", "flags"],
      summary: "List segments attached to a flag (in the environment of the key, or of `environment`)",
      params: Type.Object({ projectId: Type.String(), flagName: Type.String() }),
      querystring: EnvironmentPageQuery,
      item: Segment,
    }),
    async (request) => {
      const { environment: _environment, ...page } = request.query;
      const { projectId, flagName } = request.params;
      return segments.listForFlag(projectId, requestEnvironment(request), flagName, toPageQuery(page, 1));
    },
  );

  app.get(
    "/projects/:projectId/actors/:actorId/segments",
    pageRead({
      tags: ["segments", "actors"],
      summary: "List segments an actor has been added to",
      params: ActorParams,
      querystring: PageQuery,
      item: Segment,
    }),
    async (request) =>
      segments.listForActor(request.params.projectId, request.params.actorId, toPageQuery(request.query, 1)),
  );
}
