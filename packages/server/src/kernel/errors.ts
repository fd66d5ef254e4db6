import type { ApiErrorCode } from "@flagstaff/core";

/** Every machine-readable error code the API answers with (the list lives in @flagstaff/core). */
export type ErrorCode = ApiErrorCode;

export interface FieldError {
  /** JSON Pointer to the offending value, e.g. `/percentageActors` or `/query/limit`. */
  readonly path: string;
  readonly message: string;
}

/** The one error type services throw; the HTTP layer turns it into RFC 9457 problem details. */
export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: readonly FieldError[],
  ) {
    super(detail);
  }
}

export const invalid = (detail: string, errors?: readonly FieldError[]) =>
  new AppError(400, "invalid_request", detail, errors);
export const projectNotFound = (projectId: string) =>
  new AppError(404, "project_not_found", `Project "${projectId}" does not exist.`);
export const flagNotFound = (name: string) => new AppError(404, "flag_not_found", `Flag "${name}" does not exist.`);
export const segmentNotFound = (id: string) =>
  new AppError(404, "segment_not_found", `Segment "${id}" does not exist.`);
export const environmentNotFound = (id: string) =>
  new AppError(404, "environment_not_found", `Environment "${id}" does not exist in this project.`);
export const unavailable = () =>
  new AppError(503, "unavailable", "The database is unreachable; nothing was changed. Try again shortly.");
export const busy = (detail = "The server is busy; nothing was changed. Try again shortly.") =>
  new AppError(503, "busy", detail);
