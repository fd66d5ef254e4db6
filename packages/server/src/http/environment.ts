import type { FastifyRequest } from "fastify";
import type { EnvironmentScope } from "../access/environment-scope.js";

/**
 * The environment a request acts on, before it is resolved against the project: the one it names (the
 * `environment` query parameter), else its key's, else null for the project's default. The auth hook has
 * already refused a bound key that names another (`refuseOtherEnvironment`).
 */
export function requestEnvironment(request: FastifyRequest): string | null {
  const named = (request.query as { environment?: unknown } | undefined)?.environment;
  if (typeof named === "string") return named;
  return request.principal?.environment ?? null;
}

/** The caller's environment scope, as services receive it (see access/environment-scope.ts). */
export const environmentScope = (request: FastifyRequest): EnvironmentScope => ({
  environment: requestEnvironment(request),
  ownOnly: (request.principal?.environment ?? null) !== null,
});
