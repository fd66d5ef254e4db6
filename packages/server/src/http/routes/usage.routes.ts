import { Type } from "typebox";
import { FLAG_NAME_MAX_LENGTH, USAGE_FLAGS_MAX } from "@flagstaff/core";
import {
  ProjectUsageSchema,
  UsageQuerySchema,
  UsageReportBody,
  UsageReportResultSchema,
  UsageSeriesSchema,
} from "@flagstaff/core/schemas";
import { EnvironmentQuerySchema } from "../../kernel/schemas.js";
import type { UsageService } from "../../features/usage/usage.service.js";
import { FlagParams } from "../../features/flags/flag.schemas.js";
import { environmentScope, requestEnvironment } from "../environment.js";
import { errorResponses } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";

const SeriesQuery = Type.Object({ ...UsageQuerySchema, ...EnvironmentQuerySchema }, { additionalProperties: false });

const FlagsUsageQuery = Type.Object(
  {
    ...UsageQuerySchema,
    ...EnvironmentQuerySchema,
    flags: Type.Array(Type.String({ minLength: 1, maxLength: FLAG_NAME_MAX_LENGTH }), {
      minItems: 1,
      maxItems: USAGE_FLAGS_MAX,
      description: `Flag names, repeated; at most ${USAGE_FLAGS_MAX}. Names the environment does not have are left out`,
    }),
  },
  { additionalProperties: false },
);

/** Usage (docs/usage.md): SDKs' reports of their local evaluations, and the series the console draws. */
export function usageRoutes(app: TypedApp, usage: UsageService): void {
  app.post(
    "/projects/:projectId/usage",
    {
      // Every SDK reports once a minute: one line each would drown the log.
      // Read or more: what the SDK's local evaluator holds. Not a check key, which sits in web pages:
      // anyone could forge counts with it (and keep a flag from ever looking unused).
      config: { access: "read", requestLogging: false },
      schema: {
        tags: ["usage"],
        summary: "Report evaluations made in the SDK (local evaluation), per flag, variant and minute (extension)",
        description:
          "Counts are added to the environment's usage in one transaction, in the key's environment (or the one named). Counts of flags the environment does not have, of minutes older than the minutes kept (48 hours) or more than 5 minutes ahead are dropped and counted in `dropped`. A report with an `id` already recorded is not counted again (`duplicate: true`). The SDKs report every 60 seconds, with a read key.",
        params: Type.Object({ projectId: Type.String() }),
        querystring: Type.Object(EnvironmentQuerySchema, { additionalProperties: false }),
        body: UsageReportBody,
        response: {
          200: UsageReportResultSchema,
          ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request) => usage.report(request.params.projectId, requestEnvironment(request), request.body),
  );

  app.get(
    "/projects/:projectId/flags/:flagName/usage",
    {
      config: { access: "read" },
      schema: {
        tags: ["usage", "flags"],
        summary: "A flag's evaluations over time in an environment, per variant (extension)",
        description:
          "Every bucket from `from` to `to` (at most 1,500), evaluations by variant: the server's checks and OFREP answers and what SDKs reported. Written every USAGE_FLUSH_INTERVAL_MS (10 s).",
        params: FlagParams,
        querystring: SeriesQuery,
        response: { 200: UsageSeriesSchema, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { environment: _environment, ...query } = request.query;
      const { projectId, flagName } = request.params;
      return usage.series(projectId, environmentScope(request), flagName, query);
    },
  );

  app.get(
    "/projects/:projectId/usage",
    {
      config: { access: "read" },
      schema: {
        tags: ["usage", "flags"],
        summary: "Several flags' evaluations over time, every variant added up: the flag list's sparklines (extension)",
        params: Type.Object({ projectId: Type.String() }),
        querystring: FlagsUsageQuery,
        response: { 200: ProjectUsageSchema, ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const { environment: _environment, flags, ...query } = request.query;
      return usage.ofFlags(request.params.projectId, environmentScope(request), flags, query);
    },
  );
}
