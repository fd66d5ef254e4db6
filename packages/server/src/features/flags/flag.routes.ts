import { Type } from "typebox";
import { ActorParams, errorResponses, NoContent, PageOf, PageQuery } from "../../http/schemas.js";
import type { TypedApp } from "../../http/typed-app.js";
import { writeContext } from "../../http/write-context.js";
import { toPageQuery } from "../../pagination.js";
import { CreateFlagBody, CreateFlagParams, FlagParams, ListFlagsQuery, UpdateFlagBody } from "./flag.schemas.js";
import type { FlagService } from "./flag.service.js";

const Flag = Type.Ref("Flag");

export function flagRoutes(app: TypedApp, flags: FlagService): void {
  app.get(
    "/projects/:projectId/flags",
    {
      config: { access: "read" },
      schema: {
        tags: ["flags"],
        summary: "List flags of a project, ordered by name",
        params: Type.Object({ projectId: Type.String() }),
        querystring: ListFlagsQuery,
        response: { 200: PageOf(Flag), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { name, q, ...page } = request.query;
      return flags.list(request.params.projectId, { name, q }, toPageQuery(page, 1));
    },
  );

  app.post(
    "/projects/:projectId/flags/:flagName",
    {
      config: { access: "write" },
      schema: {
        tags: ["flags"],
        summary: "Create a flag (status disabled, both percentages 0)",
        params: CreateFlagParams,
        body: CreateFlagBody,
        response: { 201: Flag, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const { projectId, flagName } = request.params;
      const flag = await flags.create(writeContext(request), projectId, flagName, request.body ?? {});
      return reply
        .code(201)
        .header("location", `/projects/${encodeURIComponent(projectId)}/flags/${encodeURIComponent(flagName)}`)
        .send(flag);
    },
  );

  app.get(
    "/projects/:projectId/flags/:flagName",
    {
      config: { access: "read" },
      schema: {
        tags: ["flags"],
        summary: "Retrieve a flag",
        params: FlagParams,
        response: { 200: Flag, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => flags.get(request.params.projectId, request.params.flagName),
  );

  app.patch(
    "/projects/:projectId/flags/:flagName",
    {
      config: { access: "write" },
      schema: {
        tags: ["flags"],
        summary: "Update a flag: fields, attached actors, attached segments; all in one transaction",
        params: FlagParams,
        body: UpdateFlagBody,
        response: { 200: Flag, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request) =>
      flags.update(writeContext(request), request.params.projectId, request.params.flagName, request.body ?? {}),
  );

  app.delete(
    "/projects/:projectId/flags/:flagName",
    {
      config: { access: "write" },
      schema: {
        tags: ["flags"],
        summary: "Delete a flag with its actor and segment links",
        params: FlagParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await flags.delete(writeContext(request), request.params.projectId, request.params.flagName);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/projects/:projectId/actors/:actorId/flags",
    {
      config: { access: "read" },
      schema: {
        tags: ["actors", "flags"],
        summary: "List flags enabled for an actor (random call rollout excluded)",
        params: ActorParams,
        querystring: PageQuery,
        response: { 200: PageOf(Flag), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) =>
      flags.listForActor(request.params.projectId, request.params.actorId, toPageQuery(request.query, 1)),
  );

  app.get(
    "/projects/:projectId/segments/:segmentId/flags",
    {
      config: { access: "read" },
      schema: {
        tags: ["segments", "flags"],
        summary: "List flags enabled for a segment: enabled, or conditional with the segment attached",
        params: Type.Object({ projectId: Type.String(), segmentId: Type.String() }),
        querystring: PageQuery,
        response: { 200: PageOf(Flag), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) =>
      flags.listForSegment(request.params.projectId, request.params.segmentId, toPageQuery(request.query, 1)),
  );
}
