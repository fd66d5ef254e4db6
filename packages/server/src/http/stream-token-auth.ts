import type { FastifyRequest } from "fastify";
import type { Principal } from "../access/principal.js";

// Stream tokens stand for a key where a client cannot send headers (a browser's EventSource): the token
// a route that takes one (`config.streamToken`) reads from `?token=`, and what checks it (StreamTokens).

/** Checks tokens that stand for a key (stream tokens); answers the key's principal or undefined. */
export interface TokenVerifier {
  verify(token: string): Principal | undefined;
}

/** The `token` query parameter of a route that takes one, when the request sends no key header. */
export function presentedToken(request: FastifyRequest): string | undefined {
  if (!request.routeOptions.config.streamToken) return undefined;
  if (request.headers.authorization !== undefined || request.headers["x-api-key"] !== undefined) return undefined;
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof token === "string" ? token : undefined;
}
