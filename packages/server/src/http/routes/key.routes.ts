import { Type } from "typebox";
import { errorResponses, pageRead } from "../schemas.js";
import { NoContent, PageQuery, ProjectParams } from "../../kernel/schemas.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { toPageQuery } from "../../kernel/pagination.js";
import { AppError } from "../../kernel/errors.js";
import { CreateKeyBody, UpdateKeyBody, WhoAmISchema } from "../../features/keys/key.schemas.js";
import type { KeyService } from "../../features/keys/key.service.js";
import type { PeopleState } from "../../access/people-state.js";

export function keyRoutes(app: TypedApp, keys: KeyService, people: PeopleState): void {
  app.addSchema(WhoAmISchema);
  app.get(
    "/whoami",
    {
      config: { access: "identify" },
      schema: {
        tags: ["keys"],
        summary: "The key this request is made with: its id, name, role and project (extension; any key)",
        description: "Answered from memory. Lets a client (the web console) tell what a key may do before using it.",
        response: { 200: Type.Ref("WhoAmI"), ...errorResponses(400, 401, 429, 500) },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (!principal) throw new AppError(500, "internal", "An identified route was reached without a key.");
      const base = {
        keyId: principal.keyId,
        name: principal.keyName,
        role: principal.role,
        projectId: principal.projectId,
        environment: principal.environment,
      };
      const person = request.person;
      if (!person || principal.via === undefined) return base;
      const grants = [...people.grantsOf(person.id)].map(([projectId, role]) => ({ projectId, role }));
      const most = grants.some((g) => g.role !== "read") ? "write" : "read";
      return {
        ...base,
        ...(principal.via === "session" ? { role: person.role === "admin" ? "admin" : most } : {}),
        via: principal.via,
        user: { id: person.id, email: person.email, name: person.name, role: person.role },
        grants,
      };
    },
  );

  app.post(
    "/projects/:projectId/keys",
    {
      // A person makes keys in a session, never with a personal key (see mintsKey).
      config: { access: "admin", mintsKey: true },
      schema: {
        tags: ["keys"],
        summary: "Create an API key for a project (extension; admin)",
        description:
          "The secret `key` is in this answer only; the service stores just its SHA-256 hash. A person makes " +
          "keys signed in to the console: a personal key is refused (403). A key made by a person is the " +
          "project's: it outlives them (revoke it when they leave), and the history's key.created names them.",
        params: ProjectParams,
        body: CreateKeyBody,
        response: { 201: Type.Ref("CreatedApiKey"), ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await keys.create(writeContext(request), request.params.projectId, request.body)),
  );

  app.get(
    "/projects/:projectId/keys",
    pageRead({
      tags: ["keys"],
      summary: "List a project's API keys, oldest first, without secrets (extension; admin)",
      params: ProjectParams,
      querystring: PageQuery,
      item: Type.Ref("ApiKey"),
      access: "admin",
    }),
    async (request) => keys.list(request.params.projectId, toPageQuery(request.query, 2)),
  );

  app.delete(
    "/projects/:projectId/keys/:keyId",
    {
      config: { access: "admin" },
      schema: {
        tags: ["keys"],
        summary: "Revoke an API key (extension; admin)",
        description: "A key bound to an environment revokes keys bound to that environment only (403 otherwise).",
        params: Type.Object({ projectId: Type.String(), keyId: Type.String() }),
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await keys.revoke(writeContext(request), request.params.projectId, request.params.keyId);
      return reply.code(204).send(null);
    },
  );

  app.patch(
    "/projects/:projectId/keys/:keyId",
    {
      config: { access: "admin" },
      schema: {
        tags: ["keys"],
        summary: "Rename an API key (extension; admin)",
        description:
          "Its name only: the secret, role and environment never change. Recorded as key.updated; later changes made with it name it so.",
        params: Type.Object({ projectId: Type.String(), keyId: Type.String() }),
        body: UpdateKeyBody,
        response: { 200: Type.Ref("ApiKey"), ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request) =>
      keys.rename(writeContext(request), request.params.projectId, request.params.keyId, request.body ?? {}),
  );
}
