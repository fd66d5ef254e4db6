import { Type } from "typebox";
import { PROJECT_DOCUMENT_JSON_SCHEMA, ProjectDocumentSchema } from "@flagstaff/core/schemas";
import type { ProjectDocuments } from "../../features/flags-as-code/project-document.service.js";
import { errorResponses } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";

/** Where the project document's JSON Schema is served (the document's `$schema` names it). */
export const PROJECT_DOCUMENT_SCHEMA_PATH = "/schemas/project-document.json";

/** A project's revision as an ETag. */
export const revisionTag = (revision: number) => `"r${revision}"`;

/** Flags as code (docs/flags-as-code.md): a project as one document, and the document's JSON Schema. */
export function projectDocumentRoutes(app: TypedApp, documents: ProjectDocuments): void {
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
