import type { ApiErrorCode } from "@flagstaff/core";
/** One offending value of a validation error: where (`/field`, `/query/name`, `/params/name`) and why. */
export interface FieldError {
  path: string;
  message: string;
}

/** An RFC 9457 problem details object as the server sends it. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/**
 * Codes the server sends (switch on `FlagstaffError.code`), plus the client's own:
 * `network_error` (no answer could be obtained), `timeout` (no answer within `timeoutMs`),
 * `http_error` (a non-2xx answer that is not problem details, e.g. from a proxy),
 * `invalid_response` (a 2xx answer that is not the expected JSON) and
 * `invalid_argument` (a path parameter that cannot be sent, such as "" or "..").
 */
export type FlagstaffErrorCode =
  | ApiErrorCode
  | "network_error"
  | "timeout"
  | "http_error"
  | "invalid_response"
  | "invalid_argument"
  | (string & {});

/** What a FlagstaffError is made of. */
export interface FlagstaffErrorInit {
  status: number;
  code: FlagstaffErrorCode;
  detail: string;
  problem?: ProblemDetails;
  errors?: FieldError[];
  method?: string;
  url?: string;
  cause?: unknown;
  /** Seconds the server asked to wait before trying again (its `Retry-After` header). */
  retryAfterSeconds?: number;
  /** The answer's body when it is not problem details. */
  body?: unknown;
}

const BRAND = Symbol.for("@flagstaff/sdk/FlagstaffError");

/** Every failure of the client: a non-2xx answer (with its problem details) or a transport failure (`status` 0). */
export class FlagstaffError extends Error {
  /** The HTTP status, or 0 when no answer was obtained (network error, timeout, invalid argument). */
  readonly status: number;
  /** The problem's machine-readable code, or the client's own code for transport failures. */
  readonly code: FlagstaffErrorCode;
  /** A sentence for humans; do not parse it. */
  readonly detail: string;
  /** The whole problem details object, when the server sent one. */
  readonly problem: ProblemDetails | undefined;
  /** Field errors of a validation error; empty otherwise. */
  readonly errors: FieldError[];
  /** The request's method, when the error comes from a request. */
  readonly method: string | undefined;
  /** The request's URL, when the error comes from a request. */
  readonly url: string | undefined;
  /**
   * Seconds the server asked to wait before trying again, from the answer's `Retry-After` header (seconds
   * or an HTTP date): on 429 `too_many_attempts` (sign-in, one's own password), `rate_limited` and 503.
   * Undefined when it said nothing.
   */
  readonly retryAfterSeconds: number | undefined;
  /**
   * The answer's body when it is not problem details: OFREP's failure (`{key, errorCode, errorDetails}`),
   * a proxy's page, any JSON (parsed) or text (as it came). Undefined for problem details (see `problem`),
   * an empty body and failures without an answer.
   */
  readonly body: unknown;

  /** Creates an error; the message reads `<status> <code>: <detail>`. */
  constructor(init: FlagstaffErrorInit) {
    super(`${init.status === 0 ? "" : `${init.status} `}${init.code}: ${init.detail}`, { cause: init.cause });
    this.name = "FlagstaffError";
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.problem = init.problem;
    this.errors = init.errors ?? init.problem?.errors ?? [];
    this.method = init.method;
    this.url = init.url;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.body = init.body;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for a FlagstaffError, even one made by another copy of this package. */
  static is(value: unknown): value is FlagstaffError {
    return value instanceof FlagstaffError || (typeof value === "object" && value !== null && BRAND in value);
  }
}

/** Type guard: true for a FlagstaffError, optionally only for one with the given code. */
export function isFlagstaffError(value: unknown, code?: FlagstaffErrorCode): value is FlagstaffError {
  return FlagstaffError.is(value) && (code === undefined || value.code === code);
}

/** True when a value looks like RFC 9457 problem details with a code. */
export function isProblemDetails(value: unknown): value is ProblemDetails {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === "string" && typeof v.status === "number";
}
