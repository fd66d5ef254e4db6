import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { isUnavailableError } from "../db/database.js";
import { AppError, type ErrorCode, type FieldError } from "../errors.js";

const TITLES: Record<ErrorCode, string> = {
  invalid_request: "Invalid request",
  unauthorized: "Unauthorized",
  forbidden: "Forbidden",
  project_not_found: "Project not found",
  flag_not_found: "Flag not found",
  segment_not_found: "Segment not found",
  key_not_found: "API key not found",
  actor_not_found: "Actor not found",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  project_exists: "Project already exists",
  flag_exists: "Flag already exists",
  segment_exists: "Segment already exists",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  rate_limited: "Too many requests",
  unavailable: "Service unavailable",
  internal: "Internal server error",
};

/** Sends an AppError as RFC 9457 problem details. */
export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  const body = {
    type: `urn:flagstaff:problem:${error.code}`,
    title: TITLES[error.code],
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.errors ? { errors: error.errors } : {}),
  };
  if (error.status === 401) reply.header("www-authenticate", 'Bearer realm="flagstaff"');
  // A string payload is sent as it is, bypassing the route's response serializers.
  return reply.code(error.status).type("application/problem+json").send(JSON.stringify(body));
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

const PART_PREFIX: Record<string, string> = { body: "", querystring: "/query", params: "/params", headers: "/headers" };

function fieldErrors(validation: AjvError[], context: string): FieldError[] {
  const prefix = PART_PREFIX[context] ?? "";
  return validation.map((e) => {
    if (e.keyword === "additionalProperties") {
      const name = String(e.params.additionalProperty);
      return { path: `${prefix}${e.instancePath}/${name}`, message: "is not a known field" };
    }
    if (e.keyword === "required") {
      return { path: `${prefix}${e.instancePath}/${String(e.params.missingProperty)}`, message: "is required" };
    }
    let message = e.message ?? "is invalid";
    if (e.keyword === "enum" && Array.isArray(e.params.allowedValues)) {
      message = `must be one of ${e.params.allowedValues.join(", ")}`;
    }
    return { path: `${prefix}${e.instancePath}` || "/", message };
  });
}

/** Maps anything thrown by a route, a hook or Fastify itself onto an AppError. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    const errors = fieldErrors(fe.validation, fe.validationContext ?? "body");
    const where = fe.validationContext === "querystring" ? "query string" : (fe.validationContext ?? "body");
    const first = errors[0];
    return new AppError(
      400,
      "invalid_request",
      first ? `The ${where} is invalid: ${first.path} ${first.message}.` : `The ${where} is invalid.`,
      errors,
    );
  }
  switch (fe.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError(
        415,
        "unsupported_media_type",
        "Send request bodies as JSON with Content-Type: application/json.",
      );
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError(413, "payload_too_large", "The request body is larger than 1 MiB.");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError(400, "invalid_request", "The request body is not valid JSON.");
  }
  if (error instanceof SyntaxError && fe.statusCode === 400) {
    return new AppError(400, "invalid_request", "The request body is not valid JSON.");
  }
  if (isUnavailableError(error)) {
    return new AppError(503, "unavailable", "The database is unreachable. Try again shortly.");
  }
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return new AppError(413, "payload_too_large", "The request body is larger than 1 MiB.");
    if (fe.statusCode === 415) return new AppError(415, "unsupported_media_type", "Send request bodies as JSON.");
    return new AppError(400, "invalid_request", fe.message || "The request is invalid.");
  }
  return new AppError(500, "internal", "Something went wrong on our side; it has been logged.");
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = toAppError(error);
  if (appError.status >= 500) request.log.error({ err: error }, "request failed");
  return sendProblem(reply, appError);
}
