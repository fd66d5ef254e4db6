import { Type } from "typebox";
import type { TypedApp } from "../typed-app.js";

export function healthRoutes(app: TypedApp, ping: () => Promise<boolean>): void {
  app.get(
    "/healthz",
    {
      config: { access: "public" },
      schema: {
        tags: ["operations"],
        summary: "Liveness: the process answers (no key needed)",
        security: [],
        response: { 200: Type.Object({ status: Type.Literal("ok") }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      config: { access: "public" },
      schema: {
        tags: ["operations"],
        summary: "Readiness: 200 while the database answers, 503 otherwise (no key needed)",
        security: [],
        response: {
          200: Type.Object({ status: Type.Literal("ok") }),
          503: Type.Object({ status: Type.Literal("unavailable") }),
        },
      },
    },
    async (_request, reply) => {
      if (await ping()) return { status: "ok" as const };
      return reply.code(503).send({ status: "unavailable" as const });
    },
  );
}
