import { Type } from "typebox";
import { ActorParams, errorResponses, PageOf, PageQuery } from "../../http/schemas.js";
import type { TypedApp } from "../../http/typed-app.js";
import { writeContext } from "../../http/write-context.js";
import { toPageQuery } from "../../pagination.js";
import { conditionalResourceRoutes } from "../../http/conditional-writes.js";
import { entityTag } from "../../http/preconditions.js";
import { Limits, MAX_ACTORS, MembersQuery } from "../../http/schemas.js";
import {
  CreateFlagBody,
  CreateFlagParams,
  FlagParams,
  type FlagSort,
  ListFlagsQuery,
  UpdateFlagBody,
} from "./flag.schemas.js";

export { ExplanationSchema } from "./flag.schemas.js";
import type { FlagService } from "./flag.service.js";

const Flag = Type.Ref("Flag");

/** A page of flags; `total` only when the request asked for it (`total=true`). */
const FlagPage = Type.Object({
  ...PageOf(Flag).properties,
  total: Type.Optional(Type.Integer({ minimum: 0, description: "How many flags match, on every page. Extension." })),
});

const ExplainQuery = Type.Object(
  {
    actorIds: Type.Optional(
      Type.Array(Limits.actorId, {
        maxItems: MAX_ACTORS,
        description: `Actors to explain for, repeated; at most ${MAX_ACTORS}`,
      }),
    ),
  },
  { additionalProperties: false },
);

export function flagRoutes(app: TypedApp, flags: FlagService): void {
  app.get(
    "/projects/:projectId/flags",
    {
      config: { access: "read" },
      schema: {
        tags: ["flags"],
        summary: "List flags of a project, ordered by name (or by sort), filtered by name, q and status",
        params: Type.Object({ projectId: Type.String() }),
        querystring: ListFlagsQuery,
        response: { 200: FlagPage, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { name, q, status, sort, total, ...page } = request.query;
      return flags.list(request.params.projectId, { name, q, status }, page, sort as FlagSort | undefined, total);
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
        .header("etag", entityTag(flag.id, flag.revision))
        .send(flag);
    },
  );

  conditionalResourceRoutes(app, {
    path: "/projects/:projectId/flags/:flagName",
    noun: "flag",
    params: FlagParams,
    entity: Flag,
    updateBody: UpdateFlagBody,
    summaries: {
      update: "Update a flag: fields, attached actors, attached segments; all in one transaction",
      delete: "Delete a flag with its actor and segment links",
    },
    get: (params) => flags.get(params.projectId, params.flagName),
    update: (context, params, body, ifMatch) => flags.update(context, params.projectId, params.flagName, body, ifMatch),
    delete: (context, params, ifMatch) => flags.delete(context, params.projectId, params.flagName, ifMatch),
  });

  app.get(
    "/projects/:projectId/flags/:flagName/explain",
    {
      config: { access: "read" },
      schema: {
        tags: ["flags", "evaluation"],
        summary:
          "Explain a flag's answer for some actors: the rule that decided it and each actor's standing (extension)",
        description:
          "Evaluated like the check, from the same in-memory state, but it records no check and draws nothing: " +
          "`enabled` leaves out the call rollout, whose chance is `callRolloutPercentage` when no other rule holds.",
        params: FlagParams,
        querystring: ExplainQuery,
        response: { 200: Type.Ref("Explanation"), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => flags.explain(request.params.projectId, request.params.flagName, request.query.actorIds ?? []),
  );

  app.get(
    "/projects/:projectId/flags/:flagName/actors",
    {
      config: { access: "read" },
      schema: {
        tags: ["flags", "actors"],
        summary: "List the actors attached to a flag, by actor id, optionally searched (extension)",
        params: FlagParams,
        querystring: MembersQuery,
        response: { 200: PageOf(Type.Ref("Membership")), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { q, ...page } = request.query;
      return flags.listActors(request.params.projectId, request.params.flagName, q, toPageQuery(page, 1));
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
