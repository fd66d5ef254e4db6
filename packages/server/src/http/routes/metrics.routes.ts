import { Type } from "typebox";
import { errorResponses } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";
import type { Metrics } from "../../features/metrics/metrics.js";

export function metricsRoutes(app: TypedApp, metrics: Metrics, isPublic: boolean): void {
  app.get(
    "/metrics",
    {
      config: { access: isPublic ? "public" : "admin" },
      schema: {
        tags: ["operations"],
        summary: "Prometheus metrics (admin key, unless METRICS_PUBLIC=true)",
        ...(isPublic ? { security: [] } : {}),
        response: {
          200: {
            description: "Prometheus text exposition format",
            content: { "text/plain": { schema: Type.String() } },
          },
          ...errorResponses(400, 401, 403, 429, 500),
        },
      },
    },
    async (_request, reply) => {
      const body = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(body);
    },
  );
}
