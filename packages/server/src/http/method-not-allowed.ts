import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { AppError } from "../kernel/errors.js";
import { sendProblem } from "./problem.js";

const METHODS: HTTPMethod[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/**
 * Fastify answers 404 for a known path with an unknown method; the API answers 405 with `Allow`.
 * A second router, fed by every route as it is added, tells which methods a path does take.
 */
export function installMethodNotAllowed(app: FastifyInstance): void {
  const routes = FindMyWay();
  app.addHook("onRoute", (route) => {
    // The catch-all OPTIONS route that answers CORS preflights is no operation of any path.
    if (route.url === "*") return;
    for (const method of ([] as string[]).concat(route.method)) {
      if (!routes.hasRoute(method as HTTPMethod, route.url)) routes.on(method as HTTPMethod, route.url, () => {});
    }
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?", 1)[0] ?? "/";
    const allowed = METHODS.filter((m) => routes.find(m, path) !== null);
    if (allowed.length > 0) {
      reply.header("allow", allowed.join(", "));
      return sendProblem(
        reply,
        new AppError(405, "method_not_allowed", `${request.method} is not allowed here; use ${allowed.join(", ")}.`),
      );
    }
    return sendProblem(reply, new AppError(404, "not_found", `No operation at ${request.method} ${path}.`));
  });
}
