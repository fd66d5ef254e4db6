import { FlagstaffError } from "./errors.js";
import type { QueryValue } from "./http.js";
import type { PageOptions } from "./types.js";

/** Percent-encodes one path parameter, refusing values no URL path can carry (fetch would resolve "." and ".."). */
export function param(name: string, value: string): string {
  if (typeof value !== "string" || value === "" || value === "." || value === "..") {
    throw new FlagstaffError({
      status: 0,
      code: "invalid_argument",
      detail: `${name} ${JSON.stringify(value)} cannot be sent as a path parameter.`,
    });
  }
  try {
    return encodeURIComponent(value);
  } catch (error) {
    throw new FlagstaffError({
      status: 0,
      code: "invalid_argument",
      detail: `${name} is not well-formed Unicode.`,
      cause: error,
    });
  }
}

/** A page's query parameters. */
export const pageQuery = (options: PageOptions): Record<string, QueryValue> => ({
  limit: options.limit,
  before: options.before,
  after: options.after,
});
