import type { OfrepBulkEvaluation, OfrepEvaluationContext, OfrepEvaluationSuccess } from "@flagstaff/core/schemas";
import { FlagstaffError } from "./errors.js";
import type { Transport, TransportResponse } from "./http.js";
import { param } from "./params.js";

// OFREP, the OpenFeature Remote Evaluation Protocol (docs/api.md, "OpenFeature"): evaluations that answer
// OpenFeature's value, variant and reason, with a project key of any role. Its shapes are
// @flagstaff/core/schemas' (OfrepRequest, OfrepEvaluation, OfrepFailure, OfrepBulk), as the server's.

/** What `evaluateAll` answers: the project's flags evaluated, with the answer's ETag; or, on a 304, only the ETag. */
export type OfrepBulkAnswer =
  | (OfrepBulkEvaluation & { readonly notModified: false; readonly etag: string | undefined })
  | { readonly notModified: true; readonly etag: string | undefined };

/** Options of `evaluateAll`. */
export interface OfrepBulkOptions {
  /** The ETag of an earlier answer: while no flag's answer may have changed, the server answers 304 (`notModified`). */
  ifNoneMatch?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** OFREP's failure bodies carry an OpenFeature error code; the service's problem details do not. */
const isOfrepFailure = (_status: number, body: unknown) => isRecord(body) && typeof body.errorCode === "string";

/**
 * An OFREP answer that is not the success asked for, as a FlagstaffError: an OFREP failure (400, 404) has
 * its OpenFeature error code as `code` (FLAG_NOT_FOUND, INVALID_CONTEXT, PARSE_ERROR, GENERAL) and its body
 * as `body`; another answer (a 2xx other than `expected`) is `invalid_response`, its body in `body`.
 */
function failure(response: TransportResponse<unknown>, method: string, url: string, expected: number): FlagstaffError {
  const { status, body } = response;
  if (isRecord(body) && typeof body.errorCode === "string") {
    return new FlagstaffError({
      status,
      code: body.errorCode,
      detail: typeof body.errorDetails === "string" ? body.errorDetails : `${method} ${url} answered ${status}.`,
      method,
      url,
      body,
    });
  }
  return new FlagstaffError({
    status,
    code: "invalid_response",
    detail: `${method} ${url} answered ${status}, not ${expected}.`,
    method,
    url,
    body,
  });
}

/**
 * OFREP's evaluations with the client's key (a project key: the project and environment are the key's).
 * `timeoutMs` covers the whole answer, body included. An OFREP failure throws a FlagstaffError whose
 * `code` is the OpenFeature error code and `body` OFREP's failure; the service's own refusals (401, 403,
 * 413, 415, 429) throw as every call does, with their problem details; OFREP's 500 is `http_error`, its
 * `{errorDetails}` in `body`.
 */
export class OfrepApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /**
   * Evaluates one flag (`POST /ofrep/v1/evaluate/flags/{flagKey}`) for a context: `targetingKey` is the
   * actor, `actorIds` adds more, every other member is an attribute the flag's rules read. Answers the
   * value, variant and reason (the check's); an unknown flag throws 404 `FLAG_NOT_FOUND`, a context the
   * server refuses 400 `INVALID_CONTEXT`, a flag that cannot be evaluated 400 with its code.
   */
  async evaluate(flagKey: string, context: OfrepEvaluationContext = {}): Promise<OfrepEvaluationSuccess> {
    const path = `/ofrep/v1/evaluate/flags/${param("flagKey", flagKey)}`;
    const response = await this.http.request<unknown>({
      method: "POST",
      path,
      body: { context },
      timeoutCoversBody: true,
      accept: isOfrepFailure,
    });
    if (response.status !== 200) throw failure(response, "POST", response.url, 200);
    return response.body as OfrepEvaluationSuccess;
  }

  /**
   * Evaluates every flag of the key's project (`POST /ofrep/v1/evaluate/flags`) for a context: each flag's
   * success or failure, the event stream to hear of changes on (`eventStreams`), and the answer's ETag.
   * With `ifNoneMatch` set to an earlier ETag, answers `{notModified: true}` while nothing changed. A
   * context the server refuses throws 400 `INVALID_CONTEXT`.
   */
  async evaluateAll(context: OfrepEvaluationContext = {}, options: OfrepBulkOptions = {}): Promise<OfrepBulkAnswer> {
    const response = await this.http.request<unknown>({
      method: "POST",
      path: "/ofrep/v1/evaluate/flags",
      body: { context },
      timeoutCoversBody: true,
      ...(options.ifNoneMatch === undefined ? {} : { headers: { "if-none-match": options.ifNoneMatch } }),
      accept: (status, body) => status === 304 || isOfrepFailure(status, body),
    });
    const etag = response.headers.get("etag") ?? undefined;
    if (response.status === 304) return { notModified: true, etag };
    if (response.status !== 200) throw failure(response, "POST", response.url, 200);
    return { ...(response.body as OfrepBulkEvaluation), notModified: false, etag };
  }
}
