import type { FastifyRequest } from "fastify";
import { AppError } from "../kernel/errors.js";
import type { EventActor, WriteContext } from "../write-path/domain-events.js";

/**
 * The caller and request a write is recorded under: the person (by session or personal key) with their
 * name and e-mail as they are now, or the service key (id, name, role); and the request's id.
 */
export function writeContext(request: FastifyRequest): WriteContext {
  const principal = request.principal;
  // Every writing route requires a key or a session; reaching here without one is a wiring mistake, not a client's.
  if (!principal) throw new AppError(500, "internal", "A write reached its route without a key.");
  const person = request.person;
  const actor: EventActor =
    person && principal.via !== undefined
      ? {
          type: "user",
          id: person.id,
          email: person.email,
          name: person.name,
          via: principal.via,
          ...(principal.via === "key" ? { keyId: principal.keyId, keyName: principal.keyName } : {}),
        }
      : { type: "key", keyId: principal.keyId, keyName: principal.keyName, role: principal.role };
  return {
    actor,
    requestId: request.id,
    mayConfigureProtected: request.projectRole === "admin",
    boundTo: principal.environment,
  };
}
