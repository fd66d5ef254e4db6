// The second baseline: a minimal Fastify 5 app with one route carrying the check's schemas (path
// params, the query with actorIds and cache, the CheckResult response), answering {"enabled":true}
// with the check's headers but X-Request-Id, which Fastify does not add. What it costs over bare node:http is Fastify's floor; what the check costs
// over it is the check's own.
import Fastify from "fastify";
import { Type } from "typebox";
import { Limits } from "../packages/core/dist/src/schemas/index.js";

const app = Fastify({ logger: false });
const ENABLED = { enabled: true };
app.get(
  "/projects/:projectId/flags/:flagName/check",
  {
    schema: {
      params: Type.Object({ projectId: Type.String(), flagName: Type.String() }),
      querystring: Type.Object(
        {
          actorIds: Type.Optional(Type.Array(Limits.actorId, { maxItems: 100 })),
          cache: Type.Optional(Type.Number({ minimum: 0, maximum: 86400 })),
        },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ enabled: Type.Boolean() }) },
    },
  },
  (_request, reply) => {
    reply.header("cache-control", "no-store").header("x-content-type-options", "nosniff");
    return reply.send(ENABLED);
  },
);
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
process.send?.("ready");
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
