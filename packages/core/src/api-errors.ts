/** Every machine-readable `code` the API answers in its problem details; shared by the server and clients. */
export const API_ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "forbidden",
  "project_not_found",
  "flag_not_found",
  "segment_not_found",
  "key_not_found",
  "actor_not_found",
  "webhook_not_found",
  "delivery_not_found",
  "not_found",
  "method_not_allowed",
  "project_exists",
  "flag_exists",
  "segment_exists",
  "precondition_failed",
  "payload_too_large",
  "unsupported_media_type",
  "request_timeout",
  "rate_limited",
  "unavailable",
  "busy",
  "internal",
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];
