import type { PageQuery } from "../../kernel/pagination.js";

/** Index of the first name strictly greater than `key` in an ascending list. */
function firstAfter(names: readonly string[], key: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((names[mid] as string) <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first name not less than `key` in an ascending list. */
function firstAtOrAfter(names: readonly string[], key: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((names[mid] as string) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Keyset pagination over an in-memory sorted list of names: up to `limit + 1` matching names in the
 * page's direction (ascending for first/after, descending for before), as `assemblePage` expects.
 */
export function pageOfNames(names: readonly string[], page: PageQuery, matches: (name: string) => boolean): string[] {
  const out: string[] = [];
  const want = page.limit + 1;
  if (page.direction === "before") {
    for (let i = firstAtOrAfter(names, page.key[0] as string) - 1; i >= 0 && out.length < want; i--) {
      if (matches(names[i] as string)) out.push(names[i] as string);
    }
    return out;
  }
  const start = page.direction === "after" ? firstAfter(names, page.key[0] as string) : 0;
  for (let i = start; i < names.length && out.length < want; i++) {
    if (matches(names[i] as string)) out.push(names[i] as string);
  }
  return out;
}

/** Whether any matching name lies strictly before or after `key`. */
export function anyNameBeyond(
  names: readonly string[],
  side: "before" | "after",
  key: string,
  matches: (name: string) => boolean,
): boolean {
  if (side === "after") {
    for (let i = firstAfter(names, key); i < names.length; i++) if (matches(names[i] as string)) return true;
    return false;
  }
  for (let i = firstAtOrAfter(names, key) - 1; i >= 0; i--) if (matches(names[i] as string)) return true;
  return false;
}
