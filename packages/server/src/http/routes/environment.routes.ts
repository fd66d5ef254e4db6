import { Type } from "typebox";
import { errorResponses, pageRead } from "../schemas.js";
import { NoContent, PageQuery, ProjectParams } from "../../kernel/schemas.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { toPageQuery } from "../../kernel/pagination.js";
import {
  CreateEnvironmentBody,
  EnvironmentSchema,
  UpdateEnvironmentBody,
} from "../../features/environments/environment.schemas.js";
import type { EnvironmentService } from "../../features/environments/environment.service.js";

const Environment = Type.Ref("Environment");
const EnvironmentParams = Type.Object({ projectId: Type.String(), environmentId: Type.String() });

/**
 * A project's environments. Any key of the project lists and reads them (a key bound to one still sees
 * which exist); admins of the project create, change and delete them, as they do keys. A key bound to an
 * environment changes or deletes its own only, and creates none (see mayReach).
 */
export function environmentRoutes(app: TypedApp, environments: EnvironmentService): void {
  app.addSchema(EnvironmentSchema);

  app.get(
    "/projects/:projectId/environments",
    pageRead({
      tags: ["environments"],
      summary: "List a project's environments, in their order (extension)",
      params: ProjectParams,
      querystring: PageQuery,
      item: Environment,
    }),
    async (request) => environments.list(request.params.projectId, toPageQuery(request.query, 1)),
  );

  app.post(
    "/projects/:projectId/environments",
    {
      config: { access: "admin", projectWide: "create environments" },
      schema: {
        tags: ["environments"],
        summary: "Create an environment (extension; admin)",
        description:
          "Every flag starts disabled in it, with nothing attached, or with copyFrom as a copy of that environment's " +
          "configuration of every flag (status, percentages, attached actors and segments). 409 environment_limit " +
          "past ENVIRONMENTS_MAX_PER_PROJECT (20 by default).",
        params: ProjectParams,
        body: CreateEnvironmentBody,
        response: { 201: Environment, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const environment = await environments.create(writeContext(request), projectId, request.body);
      return reply
        .code(201)
        .header(
          "location",
          `/projects/${encodeURIComponent(projectId)}/environments/${encodeURIComponent(environment.id)}`,
        )
        .send(environment);
    },
  );

  app.get(
    "/projects/:projectId/environments/:environmentId",
    {
      config: { access: "read" },
      schema: {
        tags: ["environments"],
        summary: "Retrieve an environment (extension)",
        params: EnvironmentParams,
        response: { 200: Environment, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => environments.get(request.params.projectId, request.params.environmentId),
  );

  app.patch(
    "/projects/:projectId/environments/:environmentId",
    {
      config: { access: "admin" },
      schema: {
        tags: ["environments"],
        summary: "Rename, describe, protect or move an environment, or make it the default (extension; admin)",
        description:
          "position moves it to that place in the project's order (1 for the first). A key bound to an " +
          "environment changes that one only, and never makes one the default nor moves one (403): see " +
          "docs/environments.md.",
        params: EnvironmentParams,
        body: UpdateEnvironmentBody,
        response: { 200: Environment, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request) =>
      environments.update(
        writeContext(request),
        request.params.projectId,
        request.params.environmentId,
        request.body ?? {},
      ),
  );

  app.delete(
    "/projects/:projectId/environments/:environmentId",
    {
      config: { access: "admin" },
      schema: {
        tags: ["environments"],
        summary: "Delete an environment with its flag configurations; revokes the keys bound to it (extension; admin)",
        description:
          "The default environment cannot be deleted (409 environment_is_default): make another the default first. " +
          "A key bound to an environment deletes that one only (403 otherwise).",
        params: EnvironmentParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await environments.delete(writeContext(request), request.params.projectId, request.params.environmentId);
      return reply.code(204).send(null);
    },
  );
}
