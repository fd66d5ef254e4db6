import { Type } from "typebox";
import { ApplyResultSchema, PROJECT_DOCUMENT_JSON_SCHEMA, ProjectDocumentSchema } from "@flagstaff/core/schemas";
import { type ProjectApply, revisionTag } from "../../features/flags-as-code/project-apply.service.js";
import type { ProjectDocuments } from "../../features/flags-as-code/project-document.service.js";
import { writeContext } from "../write-context.js";
import { errorResponses } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";

/** Where the project document's JSON Schema is served (the document's `$schema` names it). */
export const PROJECT_DOCUMENT_SCHEMA_PATH = "/schemas/project-document.json";

/** The largest document apply reads: a project of 50,000 flags with their rules fits. */
const APPLY_BODY_LIMIT = 64 * 1024 * 1024;

/** Flags as code (docs/flags-as-code.md): a project as one document, and the document's JSON Schema. */
export function projectDocumentRoutes(app: TypedApp, documents: ProjectDocuments, apply: ProjectApply): void {
  app.get(
    "/projects/:projectId/export",
    {
      // Every environment's configurations: a key bound to one environment may export only while the
      // project has no other (the service says so).
      config: { access: "read" },
      schema: {
        tags: ["flags-as-code"],
        summary:
          "The whole project as one document: environments, segments and flags with every configuration (extension)",
        description:
          "Every list in a fixed order, so the same state exports the same bytes. Archived flags are left out. With members=true, each segment's listed members too. The ETag is the project's revision; with If-None-Match naming it, 304 and no body while the project has not changed.",
        params: Type.Object({ projectId: Type.String() }),
        querystring: Type.Object(
          {
            members: Type.Optional(
              Type.Boolean({ description: "true: each segment's listed members too (default false)" }),
            ),
          },
          { additionalProperties: false },
        ),
        headers: Type.Object({ "if-none-match": Type.Optional(Type.String({ maxLength: 64 })) }),
        response: {
          200: ProjectDocumentSchema,
          304: Type.Null({ description: "Not modified: the project is still at the revision If-None-Match names" }),
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const schemaUrl = `${request.protocol}://${request.host}${PROJECT_DOCUMENT_SCHEMA_PATH}`;
      const known = /^"r(\d+)"$/.exec(request.headers["if-none-match"] ?? "");
      const { document, revision } = await documents.export(request.params.projectId, {
        members: request.query.members === true,
        schemaUrl,
        boundTo: request.principal?.environment ?? null,
        ...(known ? { unchangedSince: Number(known[1]) } : {}),
      });
      reply.header("etag", revisionTag(revision));
      if (document === undefined) return reply.code(304).send(null);
      return reply.send(document);
    },
  );

  app.post(
    "/projects/:projectId/apply",
    {
      // Every change needs the right its own route needs (a protected environment's, an environment's
      // settings: a project admin): the service checks each. It reaches every environment: never a bound key.
      config: { access: "write", projectWide: "apply a project's document" },
      bodyLimit: APPLY_BODY_LIMIT,
      schema: {
        tags: ["flags-as-code"],
        summary: "Take the project to a document: the plan, and (unless dryRun) its changes in one write (extension)",
        description:
          "Plans, object by object, what takes the project to the document (environments' settings, segments, flags' definitions and each environment's configurations) and makes it in one write, each change recorded as its own event under one request id. Flags and segments the document lacks are deleted only with prune=true. Where an environment requires approvals, its configurations' changes open one change request instead. With dryRun=true, the plan only: nothing changes. If-Match with the revision export answered refuses (412) a project that moved since.",
        params: Type.Object({ projectId: Type.String() }),
        querystring: Type.Object(
          {
            dryRun: Type.Optional(Type.Boolean({ description: "true: answer the plan and change nothing" })),
            prune: Type.Optional(
              Type.Boolean({ description: "true: delete the flags and segments the document lacks (default false)" }),
            ),
          },
          { additionalProperties: false },
        ),
        headers: Type.Object({ "if-match": Type.Optional(Type.String({ maxLength: 200 })) }),
        body: ProjectDocumentSchema,
        response: {
          200: ApplyResultSchema,
          ...errorResponses(400, 401, 403, 404, 409, 412, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const result = await apply.apply(writeContext(request), request.params.projectId, request.body, {
        dryRun: request.query.dryRun === true,
        prune: request.query.prune === true,
        ...(request.headers["if-match"] === undefined ? {} : { ifMatch: request.headers["if-match"] }),
      });
      reply.header("etag", revisionTag(result.revision));
      return reply.send(result);
    },
  );

  app.get(
    PROJECT_DOCUMENT_SCHEMA_PATH,
    {
      config: { access: "public" },
      schema: {
        tags: ["flags-as-code"],
        summary: "The JSON Schema of a project's document, for editors (extension)",
        security: [],
        response: {
          200: {
            description: "A JSON Schema (draft-07)",
            content: { "application/schema+json": { schema: Type.Object({}, { additionalProperties: true }) } },
          },
        },
      },
    },
    async (_request, reply) => reply.type("application/schema+json").send(PROJECT_DOCUMENT_JSON_SCHEMA),
  );
}
