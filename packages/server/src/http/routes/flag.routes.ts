import { Type } from "typebox";
import {
  ActorParams,
  EnvironmentPageQuery,
  EnvironmentQuery,
  EnvironmentQuerySchema,
  IfMatchHeaders,
  PageOf,
  PageQuerySchema,
} from "../../kernel/schemas.js";
import { errorResponses, pageRead } from "../schemas.js";
import { environmentScope } from "../environment.js";
import { refuseOtherEnvironment } from "../../access/environment-scope.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { toPageQuery } from "../../kernel/pagination.js";
import { conditionalResourceRoutes } from "../conditional-writes.js";
import { Limits } from "@flagstaff/core/schemas";
import { MAX_ACTORS } from "@flagstaff/core";
import {
  type Flag as FlagEntity,
  CopyFlagBody,
  CreateFlagBody,
  CreateFlagParams,
  FlagParams,
  type FlagSort,
  ListFlagsQuery,
  UpdateFlagBody,
} from "../../features/flags/flag.schemas.js";

export { ExplanationSchema } from "../../features/flags/flag.schemas.js";
import { refuseMixedAttributes } from "../querystring.js";
import { CheckQuery } from "./check.routes.js";
import type { FlagExplainer } from "../../features/evaluation/explain.js";
import type { FlagListings } from "../../features/evaluation/flag-listing.js";
import type { FlagCopier } from "../../features/flags/flag-copy.js";
import type { FlagArchiver } from "../../features/flags/flag-archive.js";
import { flagTag } from "../../features/flags/flag-presenter.js";
import type { FlagService } from "../../features/flags/flag.service.js";

/** What the flag routes answer with: the flag's service, its copy, and the read model's explanation and lists. */
export interface FlagRouteDeps {
  readonly flags: FlagService;
  readonly copier: FlagCopier;
  readonly archiver: FlagArchiver;
  readonly explainer: FlagExplainer;
  readonly listings: FlagListings<FlagEntity>;
}

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
    attributes: CheckQuery.properties.attributes,
    ...EnvironmentQuerySchema,
  },
  { additionalProperties: false },
);

const FlagActorsQuery = Type.Object(
  {
    ...PageQuerySchema,
    ...EnvironmentQuerySchema,
    q: Type.Optional(Type.String({ maxLength: 256, description: "Case-insensitive substring of the actor id" })),
  },
  { additionalProperties: false },
);

export function flagRoutes(app: TypedApp, { flags, copier, archiver, explainer, listings }: FlagRouteDeps): void {
  app.get(
    "/projects/:projectId/flags",
    {
      config: { access: "read" },
      schema: {
        tags: ["flags"],
        summary:
          "List flags of a project, ordered by name (or by sort), filtered by name, q, status, kind and stale; archived flags only with archived=true",
        params: Type.Object({ projectId: Type.String() }),
        querystring: ListFlagsQuery,
        response: { 200: FlagPage, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { name, q, status, kind, stale, archived, sort, total, environment: _environment, ...page } = request.query;
      const scope = environmentScope(request);
      const filter = { name, q, status, kind, stale, archived };
      return flags.list(request.params.projectId, scope, filter, page, sort as FlagSort | undefined, total);
    },
  );

  app.post(
    "/projects/:projectId/flags/:flagName",
    {
      config: { access: "write" },
      schema: {
        tags: ["flags"],
        summary: "Create a flag (status disabled, both percentages 0, in every environment)",
        params: CreateFlagParams,
        querystring: EnvironmentQuery,
        body: CreateFlagBody,
        response: { 201: Flag, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const { projectId, flagName } = request.params;
      const scope = environmentScope(request);
      const flag = await flags.create(writeContext(request), projectId, scope, flagName, request.body ?? {});
      return reply
        .code(201)
        .header("location", `/projects/${encodeURIComponent(projectId)}/flags/${encodeURIComponent(flagName)}`)
        .header("etag", flagTag(flag))
        .send(flag);
    },
  );

  conditionalResourceRoutes<typeof FlagParams, typeof UpdateFlagBody, FlagEntity>(app, {
    path: "/projects/:projectId/flags/:flagName",
    noun: "flag",
    params: FlagParams,
    entity: Flag,
    updateBody: UpdateFlagBody,
    // prerequisite_cycle (a cycle or a chain deeper than 5) and variant_in_use.
    updateErrors: [409],
    summaries: {
      update: "Update a flag: fields, attached actors, attached segments; all in one transaction",
      delete: "Delete a flag with its actor and segment links, in every environment",
    },
    deleteDescription:
      "With If-Match, only when the flag's configuration in the environment acted on still has that ETag; 412 " +
      "otherwise (extension). A key bound to an environment may delete a flag only while the project has no " +
      "other environment (403 otherwise): deleting a flag deletes its configuration in every environment. " +
      "While an environment is protected, only the project's admins may (403 environment_protected).",
    query: EnvironmentQuery,
    tag: flagTag,
    get: (params, request) => flags.get(params.projectId, environmentScope(request), params.flagName),
    update: (context, params, body, ifMatch, request) =>
      flags.update(context, params.projectId, environmentScope(request), params.flagName, body, ifMatch),
    delete: (context, params, ifMatch, request) =>
      flags.delete(context, params.projectId, environmentScope(request), params.flagName, ifMatch),
  });

  app.post(
    "/projects/:projectId/flags/:flagName/copy",
    {
      config: { access: "write" },
      schema: {
        tags: ["flags", "environments"],
        summary: "Copy a flag's configuration from one environment to another (extension)",
        description:
          "Replaces the target environment's status, percentages, attached actors and attached segments with the " +
          "source's, in one write recorded as one flag.updated event (in the target environment, with copiedFrom). " +
          "With If-Match, only when the target's configuration still has that ETag; 412 otherwise. A key bound to " +
          "an environment may copy only within it, which is nothing: 403. Variants served, rules and prerequisites " +
          "are copied too; prerequisites that would form a cycle or a chain deeper than 5 in the target: 409 " +
          "prerequisite_cycle.",
        params: FlagParams,
        headers: IfMatchHeaders,
        body: CopyFlagBody,
        response: { 200: Flag, ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const { projectId, flagName } = request.params;
      const principal = request.principal;
      refuseOtherEnvironment(principal, request.body.from);
      refuseOtherEnvironment(principal, request.body.to);
      const scope = { environment: request.body.to, ownOnly: environmentScope(request).ownOnly };
      const ifMatch = request.headers["if-match"];
      const flag = await copier.copy(writeContext(request), projectId, scope, flagName, request.body, ifMatch);
      return reply.header("etag", flagTag(flag)).send(flag);
    },
  );

  for (const [action, summary, description] of [
    [
      "archive",
      "Archive a flag: evaluated as not found everywhere, left out of lists, its history and name kept (extension)",
      "One write with one flag.archived event. Refused 409 flag_archived when it is archived already, and 409 flag_in_use while another flag names it as a prerequisite. Like a delete it reaches every environment: a key bound to one may only while the project has no other (403), and protected environments need a project admin.",
    ],
    [
      "restore",
      "Restore an archived flag, as it was in every environment (extension)",
      "One write with one flag.restored event; 409 flag_not_archived when it is not archived. Same rights as archiving.",
    ],
  ] as const) {
    app.post(
      `/projects/:projectId/flags/:flagName/${action}`,
      {
        config: { access: "write" },
        schema: {
          tags: ["flags"],
          summary,
          description,
          params: FlagParams,
          querystring: EnvironmentQuery,
          headers: IfMatchHeaders,
          response: { 200: Flag, ...errorResponses(400, 401, 403, 404, 409, 412, 429, 500, 503) },
        },
      },
      async (request, reply) => {
        const { projectId, flagName } = request.params;
        const ifMatch = request.headers["if-match"];
        const act = action === "archive" ? archiver.archive.bind(archiver) : archiver.restore.bind(archiver);
        const flag = await act(writeContext(request), projectId, environmentScope(request), flagName, ifMatch);
        return reply.header("etag", flagTag(flag)).send(flag);
      },
    );
  }

  app.get(
    "/projects/:projectId/flags/:flagName/explain",
    {
      config: { access: "read" },
      preValidation: refuseMixedAttributes,
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
    async (request) =>
      explainer.explain(
        request.params.projectId,
        environmentScope(request),
        request.params.flagName,
        request.query.actorIds ?? [],
        request.query.attributes,
      ),
  );

  app.get(
    "/projects/:projectId/flags/:flagName/actors",
    pageRead({
      tags: ["flags", "actors"],
      summary: "List the actors attached to a flag, by actor id, optionally searched (extension)",
      params: FlagParams,
      querystring: FlagActorsQuery,
      item: Type.Ref("Membership"),
    }),
    async (request) => {
      const { q, environment: _environment, ...page } = request.query;
      const { projectId, flagName } = request.params;
      return flags.listActors(projectId, environmentScope(request), flagName, q, toPageQuery(page, 1));
    },
  );

  app.get(
    "/projects/:projectId/actors/:actorId/flags",
    pageRead({
      tags: ["actors", "flags"],
      summary: "List flags enabled for an actor (random call rollout excluded)",
      params: ActorParams,
      querystring: EnvironmentPageQuery,
      item: Flag,
    }),
    async (request) => {
      const { environment: _environment, ...page } = request.query;
      const { projectId, actorId } = request.params;
      return listings.listForActor(projectId, environmentScope(request), actorId, toPageQuery(page, 1));
    },
  );

  app.get(
    "/projects/:projectId/segments/:segmentId/flags",
    pageRead({
      tags: ["segments", "flags"],
      summary: "List flags enabled for a segment: enabled, or conditional with the segment attached",
      params: Type.Object({ projectId: Type.String(), segmentId: Type.String() }),
      querystring: EnvironmentPageQuery,
      item: Flag,
    }),
    async (request) => {
      const { environment: _environment, ...page } = request.query;
      const { projectId, segmentId } = request.params;
      return listings.listForSegment(projectId, environmentScope(request), segmentId, toPageQuery(page, 1));
    },
  );
}
