// How the commands read lists: whole, the most the API serves a page at a time; or only the first items,
// as many as --limit says.
import type { Context, OptionSpec } from "./command.js";

/** The most items the API serves in one page (its `limit` is 1–100): whole lists are read this many at a time. */
export const PAGE_MAX = 100;

/** How many items a command that prints the first of a long list prints unless --limit says. */
const DEFAULT_COUNT = 50;

/** The --limit option of such a command: "How many events to print (default 50)". */
export function limitOption(what: string): OptionSpec {
  return { type: "string", value: "<n>", description: `How many ${what} to print (default ${DEFAULT_COUNT})` };
}

/** How many items --limit asks for: a whole number, at least 1. */
export function limitOf(ctx: Context): number {
  const count = ctx.integer("limit") ?? DEFAULT_COUNT;
  if (count < 1) throw ctx.usage("--limit must be at least 1.");
  return count;
}

/** The first `count` items of a list, read in pages of `count` (at most PAGE_MAX): `list` is given the page size. */
export async function firstItems<T>(count: number, list: (limit: number) => AsyncIterable<T>): Promise<T[]> {
  const rows: T[] = [];
  for await (const item of list(Math.min(count, PAGE_MAX))) {
    rows.push(item);
    if (rows.length >= count) break;
  }
  return rows;
}
