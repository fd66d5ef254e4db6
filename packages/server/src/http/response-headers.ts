import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * Headers every answer carries. `nosniff`, so no browser reads a JSON answer as a script or a page; and
 * `Cache-Control: no-store` on every operation that takes a key, so no shared or browser cache keeps an
 * answer (a created key's secret above all). A check that asks for `cache` sets its own header.
 */
export function setResponseHeaders(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header("x-content-type-options", "nosniff");
  if (request.routeOptions.config.access !== "public") reply.header("cache-control", "no-store");
  done();
}
