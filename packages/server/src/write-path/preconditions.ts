import { AppError } from "../kernel/errors.js";

/**
 * Optimistic concurrency for flags and segments. Each carries a revision that moves with every change;
 * its entity tag names the resource and the revision, so a tag of a deleted and re-created namesake
 * never matches. PATCH and DELETE honour If-Match (RFC 9110 §13.1.1): when none of the listed tags is the
 * current one (strong comparison; `*` matches any), the write is refused with 412 and changes nothing.
 */
export function entityTag(id: string, revision: number): string {
  return `"${id}.${revision}"`;
}

/** Throws 412 unless the If-Match header (when given) lists the current tag. */
export function requireMatch(ifMatch: string | undefined, current: string, what: string): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(",").map((tag) => tag.trim());
  if (tags.includes("*") || tags.includes(current)) return;
  throw new AppError(
    412,
    "precondition_failed",
    `${what} changed since you read it (If-Match ${ifMatch}, now ${current}); nothing was changed. Read it again and retry.`,
  );
}
