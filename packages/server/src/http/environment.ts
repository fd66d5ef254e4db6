import type { FastifyRequest } from "fastify";
import { AppError } from "../errors.js";
import type { Principal } from "../features/evaluation/snapshot.js";

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

/**
 * The environment a request acts on (`requestEnvironment`), and whether its key sees that one only: a key
 * bound to an environment never reads another's configuration, not even in a flag's `environments`.
 */
export interface EnvironmentScope {
  readonly environment: string | null;
  readonly ownOnly: boolean;
}

export const environmentScope = (request: FastifyRequest): EnvironmentScope => ({
  environment: requestEnvironment(request),
  ownOnly: (request.principal?.environment ?? null) !== null,
});

/** Whether a key may read or change an environment's configuration: its own, or any when it is bound to none. */
export const mayUseEnvironment = (principal: Principal | undefined, environment: string): boolean =>
  principal === undefined || principal.environment === null || principal.environment === environment;

/** The 403 of a key bound to one environment that names another. */
export function otherEnvironment(principal: Principal, environment: string): AppError {
  return new AppError(
    403,
    "forbidden",
    `This key is bound to environment "${principal.environment}" and may not act on "${environment}".`,
  );
}

/** Throws the 403 of a bound key that names another environment. */
export function refuseOtherEnvironment(principal: Principal | undefined, environment: string): void {
  if (principal && !mayUseEnvironment(principal, environment)) throw otherEnvironment(principal, environment);
}
