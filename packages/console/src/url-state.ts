// A list's page, search and filters live in the URL's query, so that Back (from a flag, say) returns to
// the very page and filters, and a link to a filtered list can be shared.
import { useEffect, useMemo, useState } from "react";

export type QueryChanges = Record<string, string | undefined>;

/**
 * The current query string's parameters, and a function that changes some of them (an empty or undefined
 * value removes one). `push` makes the change a new history entry (a page turned, a filter chosen); without
 * it the entry is replaced (each key typed in a search box is not a step back).
 */
export function useUrlQuery(): [URLSearchParams, (changes: QueryChanges, push?: boolean) => void] {
  const [search, setSearch] = useState(() => window.location.search);
  useEffect(() => {
    const update = () => setSearch(window.location.search);
    window.addEventListener("popstate", update);
    return () => window.removeEventListener("popstate", update);
  }, []);
  const params = useMemo(() => new URLSearchParams(search), [search]);
  const change = (changes: QueryChanges, push = false) => {
    const next = new URLSearchParams(window.location.search);
    for (const [name, value] of Object.entries(changes)) {
      if (value === undefined || value === "") next.delete(name);
      else next.set(name, value);
    }
    const query = next.toString();
    const url = `${window.location.pathname}${query ? `?${query}` : ""}`;
    if (url === `${window.location.pathname}${window.location.search}`) return;
    if (push) window.history.pushState(null, "", url);
    else window.history.replaceState(null, "", url);
    setSearch(window.location.search);
  };
  return [params, change];
}

/** A parameter's value if it is one of `allowed`, else the fallback (a hand-edited URL cannot break the page). */
export function oneOf<T extends string>(value: string | null, allowed: readonly T[], fallback: T): T {
  return value !== null && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}
