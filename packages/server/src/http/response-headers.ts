import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * Headers every answer carries, as one flat list of names and values. `nosniff`, so no browser reads a
 * JSON answer as a script or a page; `X-Request-Id`, naming the request as the logs and the history do;
 * and `Cache-Control` (`no-store` on every operation that takes a key, so no shared or browser cache
 * keeps an answer, a created key's secret above all; a check that asks for `cache` sets its own). The
 * global hook below sets them on every Fastify answer; the node:http adapter writes the same list.
 */
export function commonHeaders(requestId: string, cacheControl: string | undefined): string[] {
  const headers = ["x-content-type-options", "nosniff", "x-request-id", requestId];
  if (cacheControl !== undefined) headers.push("cache-control", cacheControl);
  return headers;
}

/** The global onRequest hook that sets commonHeaders on every answer Fastify gives. */
export function setResponseHeaders(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const keyed = request.routeOptions.config.access !== "public";
  const headers = commonHeaders(request.id, keyed ? "no-store" : undefined);
  for (let i = 0; i < headers.length; i += 2) reply.header(headers[i] as string, headers[i + 1]);
  done();
}
