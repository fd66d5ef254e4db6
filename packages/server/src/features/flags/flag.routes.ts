import { Type } from "typebox";
import { ActorParams, errorResponses, PageOf, PageQuery } from "../../http/schemas.js";
import type { TypedApp } from "../../http/typed-app.js";
import { writeContext } from "../../http/write-context.js";
import { toPageQuery } from "../../pagination.js";
import { conditionalResourceRoutes } from "../../http/conditional-writes.js";
import { entityTag } from "../../http/preconditions.js";
import { Limits, MAX_ACTORS, MembersQuery } from "../../http/schemas.js";
import { CreateFlagBody, CreateFlagParams, FlagParams, ListFlagsQuery, UpdateFlagBody } from "./flag.schemas.js";
import type { FlagService } from "./flag.service.js";

const Flag = Type.Ref("Flag");

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

const NamedSegment = Type.Object({ id: Type.String(), name: Type.String() });

export const ExplanationSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: "The answer by the deterministic rules (call rollout left out)" }),
    reason: Type.Union(["DISABLED", "STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT"].map((r) => Type.Literal(r))),
    rule: Type.Union(
      ["status", "actor", "segment", "actor_rollout", "none"].map((r) => Type.Literal(r)),
      {
        description: "The rule that decided: the status, an attached actor, a segment, the actor rollout, or none",
      },
    ),
    actorId: Type.Union([Type.String(), Type.Null()], { description: "The actor that matched" }),
    segmentId: Type.Union([Type.String(), Type.Null()]),
    segment: Type.Union([NamedSegment, Type.Null()], { description: "The segment it matched through" }),
    threshold: Type.Integer({ description: "percentageActors × 1,000: buckets below it are in the actor rollout" }),
    callRolloutPercentage: Type.Integer({
      description: "When no rule holds: the percentage of calls that are on anyway (percentageCalls)",
    }),
    actors: Type.Array(
      Type.Object({
        actorId: Type.String(),
        attached: Type.Boolean(),
        segments: Type.Array(NamedSegment, { description: "Attached segments the actor is in" }),
        bucket: Type.Integer({ minimum: 0, maximum: 99_999 }),
        inRollout: Type.Boolean(),
      }),
    ),
  },
  { $id: "Explanation" },
);

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
        .header("etag", entityTag(flag.id, flag.revision))
        .send(flag);
    },
  );

  conditionalResourceRoutes(app, {
    path: "/projects/:projectId/flags/:flagName",
    tags: ["flags"],
    noun: "flag",
    params: FlagParams,
    entity: Flag,
    updateBody: UpdateFlagBody,
    summaries: {
      get: "Retrieve a flag (with its ETag)",
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
