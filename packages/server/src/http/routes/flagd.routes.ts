import { FLAGD_SCHEMA_URL } from "@flagstaff/core/flagd";
import { Type } from "typebox";
import { type FlagdDocuments, flagdTag } from "../../features/flags-as-code/flagd-document.js";
import { requestEnvironment } from "../environment.js";
import { errorResponses } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";

/** flagd's format (docs/flagd.md): an environment's flags as flagd flag definitions, for flagd's HTTP sync. */
export function flagdRoutes(app: TypedApp, flagd: FlagdDocuments): void {
  app.get(
    "/projects/:projectId/flagd.json",
    {
      // One environment's configurations: a key bound to an environment reads its own only (the auth hook
      // refuses another named one).
      config: { access: "read" },
      schema: {
        tags: ["flags-as-code"],
        summary: "An environment's flags as flagd flag definitions, for flagd's HTTP sync (extension)",
        description:
          "The environment's flags (not archived) in flagd's format (https://flagd.dev/schema/v0/flags.json): state, variants, defaultVariant and JsonLogic targeting that follows Flagstaff's order of evaluation, segments and prerequisite flags as shared $evaluators. docs/flagd.md says what maps to what and what has no flagd equivalent. The ETag follows the project's revision; with If-None-Match naming it, 304 and no body while the project has not changed.",
        params: Type.Object({ projectId: Type.String() }),
        querystring: Type.Object(
          {
            environment: Type.Optional(
              Type.String({
                minLength: 1,
                description:
                  "The environment; default the key's, or the project's default environment for a key bound to none",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        headers: Type.Object({ "if-none-match": Type.Optional(Type.String({ maxLength: 200 })) }),
        response: {
          200: Type.Object(
            {
              $schema: Type.String(),
              $evaluators: Type.Optional(Type.Object({}, { additionalProperties: true })),
              flags: Type.Object({}, { additionalProperties: true }),
            },
            { additionalProperties: true, description: "A flagd flag-definition file" },
          ),
          304: Type.Null({ description: "Not modified: the project is still at the revision If-None-Match names" }),
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const tag = request.headers["if-none-match"];
      const { document, revision, environment } = await flagd.export(request.params.projectId, {
        environment: requestEnvironment(request),
        ...(tag === undefined ? {} : { unchangedSince: tag }),
      });
      reply.header("etag", flagdTag(revision, environment));
      if (document === undefined) return reply.code(304).send(null);
      return reply.send({ ...document, $schema: document.$schema ?? FLAGD_SCHEMA_URL });
    },
  );
}
