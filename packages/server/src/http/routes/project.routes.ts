import { Type } from "typebox";
import { errorResponses } from "../schemas.js";
import { NoContent, PageOf, PageQuery, ProjectParams } from "../../kernel/schemas.js";
import { toPageQuery } from "../../kernel/pagination.js";
import { CreateProjectBody } from "../../features/projects/project.schemas.js";
import type { ProjectService } from "../../features/projects/project.service.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";

export function projectRoutes(app: TypedApp, projects: ProjectService): void {
  app.post(
    "/projects",
    {
      config: { access: "admin" },
      schema: {
        tags: ["projects"],
        summary: "Create a project (extension; admin)",
        body: CreateProjectBody,
        response: { 201: Type.Ref("Project"), ...errorResponses(400, 401, 403, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const project = await projects.create(writeContext(request), request.body);
      return reply
        .code(201)
        .header("location", `/projects/${encodeURIComponent(project.id)}`)
        .send(project);
    },
  );

  app.get(
    "/projects",
    {
      config: { access: "listing" },
      schema: {
        tags: ["projects"],
        summary: "List projects, ordered by id (extension; admin, or a person: the projects granted to them)",
        querystring: PageQuery,
        response: { 200: PageOf(Type.Ref("Project")), ...errorResponses(400, 401, 403, 429, 500, 503) },
      },
    },
    async (request) => {
      // An admin (key or person) sees every project; a member only those granted to them.
      const person = request.person;
      const member = person !== undefined && person.role !== "admin";
      return projects.list(toPageQuery(request.query, 1), member ? person.id : undefined);
    },
  );

  app.get(
    "/projects/:projectId",
    {
      config: { access: "read" },
      schema: {
        tags: ["projects"],
        summary: "Retrieve a project (extension)",
        params: ProjectParams,
        response: { 200: Type.Ref("Project"), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => projects.get(request.params.projectId),
  );

  app.delete(
    "/projects/:projectId",
    {
      config: { access: "admin", projectWide: "delete the project" },
      schema: {
        tags: ["projects"],
        summary: "Delete a project and everything in it (extension; admin)",
        params: ProjectParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await projects.delete(writeContext(request), request.params.projectId);
      return reply.code(204).send(null);
    },
  );
}
