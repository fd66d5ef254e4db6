import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** An incoming X-Request-Id is kept when it looks like an id (so logs can follow a request across services). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;

/** The id that names a request in logs, in the history and in its X-Request-Id answer header. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const incoming = headers["x-request-id"];
  return typeof incoming === "string" && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
