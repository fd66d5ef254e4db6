import { FlagstaffError } from "./errors.js";
import type { Page, PageOptions } from "./types.js";

/**
 * A list: `for await` over it yields every item across pages (following `pagination.after` until it is
 * null), and `page()` fetches one page with its cursors. Nothing is fetched until one of them is used.
 */
export class PageList<T> implements AsyncIterable<T> {
  /** Creates a list over a function that fetches one page; `limit` is the default page size. */
  constructor(
    private readonly fetchPage: (options: PageOptions) => Promise<Page<T>>,
    private readonly limit?: number,
  ) {}

  /** Fetches one page: the first without cursors, else the one after `after` or before `before`. */
  page(options: PageOptions = {}): Promise<Page<T>> {
    return this.fetchPage({ limit: options.limit ?? this.limit, before: options.before, after: options.after });
  }

  /** Iterates over the pages, from the first (or from the one after `after`) to the last. */
  async *pages(options: { after?: string } = {}): AsyncGenerator<Page<T>, void, undefined> {
    let after = options.after;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.page({ after });
      yield page;
      const next = page.pagination.after;
      if (next === null || next === undefined) return;
      if (seen.has(next)) {
        throw new FlagstaffError({
          status: 0,
          code: "invalid_response",
          detail: `The server answered the cursor ${next} twice; stopping instead of looping.`,
        });
      }
      seen.add(next);
      after = next;
    }
  }

  /** Iterates over every item of every page, in the list's order. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Collects every item of every page into an array. */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
