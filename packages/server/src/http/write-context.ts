import type { FastifyRequest } from "fastify";
import { AppError } from "../errors.js";
import type { WriteContext } from "../features/history/domain-events.js";

/** The caller and request a write is recorded under: the request's key (id, name, role) and its id. */
export function writeContext(request: FastifyRequest): WriteContext {
  const principal = request.principal;
  // Every writing route requires a key; reaching here without one is a wiring mistake, not a client's.
  if (!principal) throw new AppError(500, "internal", "A write reached its route without a key.");
  return {
    actor: { keyId: principal.keyId, keyName: principal.keyName, role: principal.role },
    requestId: request.id,
  };
}
