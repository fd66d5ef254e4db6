// What the list pages share: whole lists read page by page for the pickers.
import type { Page } from "@flagstaff/sdk";
import { PAGE_MAX } from "./contract.js";

/** Every item of a list, read PAGE_MAX at a time, up to `maxPages` pages. */
export async function allPages<T>(
  load: (page: { limit: number; after?: string }) => Promise<Page<T>>,
  maxPages = 20,
): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await load({ limit: PAGE_MAX, after });
    out.push(...page.data);
    if (!page.pagination.after) break;
    after = page.pagination.after;
  }
  return out;
}
