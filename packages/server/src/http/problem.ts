import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { classifyDatabaseError } from "../db/database.js";
import { AppError, busy, type ErrorCode, type FieldError, unavailable } from "../kernel/errors.js";

const TITLES: Record<ErrorCode, string> = {
  invalid_request: "Invalid request",
  unauthorized: "Unauthorized",
  forbidden: "Forbidden",
  project_not_found: "Project not found",
  flag_not_found: "Flag not found",
  segment_not_found: "Segment not found",
  environment_not_found: "Environment not found",
  key_not_found: "API key not found",
  actor_not_found: "Actor not found",
  webhook_not_found: "Webhook not found",
  delivery_not_found: "Delivery not found",
  user_not_found: "User not found",
  grant_not_found: "Grant not found",
  not_found: "Not found",
  method_not_allowed: "Method not allowed",
  project_exists: "Project already exists",
  flag_exists: "Flag already exists",
  segment_exists: "Segment already exists",
  environment_exists: "Environment already exists",
  environment_is_default: "The default environment cannot be deleted",
  environment_limit: "Too many environments",
  prerequisite_cycle: "Prerequisites would form a cycle or too long a chain",
  variant_in_use: "Variant in use",
  segment_in_use: "Segment in use",
  user_exists: "User already exists",
  cannot_change_self: "An admin cannot disable, demote or delete themselves",
  environment_protected: "Environment protected",
  approval_required: "Approval required",
  change_request_not_found: "Change request not found",
  change_request_state: "The change request cannot do that in its state",
  change_request_conflict: "A flag changed since the change request was made",
  flag_archived: "The flag is archived",
  flag_not_archived: "The flag is not archived",
  flag_in_use: "Another flag depends on this one",
  cross_site_request: "Cross-site request refused",
  invalid_credentials: "Invalid credentials",
  too_many_attempts: "Too many sign-in attempts",
  precondition_failed: "Precondition failed",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  request_timeout: "Request timeout",
  rate_limited: "Too many requests",
  unavailable: "Service unavailable",
  busy: "Server busy",
  internal: "Internal server error",
};

/** How long a client should wait before retrying a 503, in seconds: long enough for a pool to drain. */
export const RETRY_AFTER_SECONDS = 1;

/** An AppError as an RFC 9457 problem details document. */
export function problemBody(error: AppError): string {
  return JSON.stringify({
    type: `urn:flagstaff:problem:${error.code}`,
    title: TITLES[error.code],
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.errors ? { errors: error.errors } : {}),
  });
}

/** Sends an AppError as RFC 9457 problem details. */
export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.status === 401) reply.header("www-authenticate", 'Bearer realm="flagstaff"');
  if (error.status === 503 && !reply.hasHeader("retry-after")) reply.header("retry-after", RETRY_AFTER_SECONDS);
  // Refused before its body arrived (a 401 or 413 on the headers alone): the connection cannot be reused
  // until the rest is read, which a slow or hostile client may never send, so it is closed instead.
  if (!reply.request.raw.complete) reply.header("connection", "close");
  // A string payload is sent as it is, bypassing the route's response serializers.
  return reply.code(error.status).type("application/problem+json").send(problemBody(error));
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { description?: string };
}

const PART_PREFIX: Record<string, string> = { body: "", querystring: "/query", params: "/params", headers: "/headers" };
const PART_NAME: Record<string, string> = {
  body: "body",
  querystring: "query string",
  params: "path",
  headers: "headers",
};

/** Ajv's message, except that a failed pattern is explained by the field's description when it has one. */
function messageOf(e: AjvError): string {
  if (e.keyword === "pattern" && e.parentSchema?.description) return `must be ${e.parentSchema.description}`;
  return e.message ?? "is invalid";
}

/**
 * A value that matches none of a union's alternatives makes Ajv report every alternative's failure and
 * then the union's; one message per value reads better: the nearest miss (a length, a pattern), else
 * the allowed constants, else the allowed types.
 */
function collapseUnions(errors: AjvError[]): AjvError[] {
  const unionPaths = new Set(errors.filter((e) => e.keyword === "anyOf").map((e) => e.instancePath));
  if (unionPaths.size === 0) return errors;
  const out = errors.filter((e) => !unionPaths.has(e.instancePath));
  for (const path of unionPaths) {
    const branch = errors.filter((e) => e.instancePath === path && e.keyword !== "anyOf");
    const specific = branch.find((e) => e.keyword !== "type" && e.keyword !== "const");
    const consts = branch.filter((e) => e.keyword === "const").map((e) => String(e.params.allowedValue));
    const types = branch.filter((e) => e.keyword === "type").map((e) => String(e.params.type));
    let message = "is invalid";
    if (specific) message = messageOf(specific);
    else if (consts.length > 0) message = `must be one of ${consts.join(", ")}`;
    else if (types.length > 0) message = `must be ${[...new Set(types)].join(" or ")}`;
    out.push({ instancePath: path, keyword: "union", message, params: {} });
  }
  return out;
}

function fieldErrors(validation: AjvError[], context: string): FieldError[] {
  const prefix = PART_PREFIX[context] ?? "";
  return collapseUnions(validation).map((e) => {
    if (e.keyword === "additionalProperties") {
      const name = String(e.params.additionalProperty);
      return { path: `${prefix}${e.instancePath}/${name}`, message: "is not a known field" };
    }
    if (e.keyword === "required") {
      return { path: `${prefix}${e.instancePath}/${String(e.params.missingProperty)}`, message: "is required" };
    }
    let message = messageOf(e);
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
    const where = PART_NAME[fe.validationContext ?? "body"] ?? "request";
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
  switch (classifyDatabaseError(error)) {
    case "busy":
      return busy();
    case "unavailable":
      return unavailable();
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
