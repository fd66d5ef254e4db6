// Writes with If-Match, and answers with their ETag (flags and segments).
import { FlagstaffError } from "./errors.js";
import type { TransportResponse } from "./http.js";
import type { Tagged, WriteOptions } from "./types.js";

/** The `if-match` header of a write, when an ETag is given. */
export const ifMatchHeader = (options: WriteOptions | undefined): Record<string, string> | undefined =>
  options?.ifMatch === undefined ? undefined : { "if-match": options.ifMatch };

/** The answer's body with its ETag; a server that sends none is an invalid response for these calls. */
export function tagged<T>(response: TransportResponse<T>, what: string): Tagged<T> {
  const etag = response.headers.get("etag");
  if (etag === null || etag === "") {
    throw new FlagstaffError({
      status: response.status,
      code: "invalid_response",
      detail: `The server answered ${what} without an ETag header.`,
    });
  }
  return { value: response.body, etag };
}
