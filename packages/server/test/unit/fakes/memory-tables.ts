import type { Project } from "@flagstaff/core/schemas";
import type { Kysely, Selectable, Transaction } from "kysely";
import type { Database, EnvironmentsTable, FlagConfigsTable, FlagsTable } from "../../../src/db/schema.js";
import type { UserRow } from "../../../src/features/people/people.store.js";
import type { PageQuery, SortKey } from "../../../src/kernel/pagination.js";

// The in-memory tables the fake stores (memory-stores.ts, memory-people.ts) share, shaped as the
// database's, and what the fakes need to answer as SQL does: unique violations, byte order, keyset pages.

export type Executor = Kysely<Database> | Transaction<Database>;
export type Trx = Transaction<Database>;

export type EnvironmentRow = Selectable<EnvironmentsTable>;
export type FlagDefinition = Selectable<FlagsTable>;
export type ConfigRow = Selectable<FlagConfigsTable>;
export interface KeyRow {
  id: string;
  name: string;
  role: string;
  project_id: string | null;
  environment_id: string | null;
  key_hash: string;
  created_at: string;
  user_id: string | null;
}

/** The tables, as plain data: a write's rollback puts back a copy taken before it (structuredClone). */
export interface MemoryTables {
  projects: Map<string, Project>;
  environments: EnvironmentRow[];
  flags: Map<string, FlagDefinition>;
  configs: Map<string, ConfigRow>;
  /** By configuration id: actor id → when attached. */
  flagActors: Map<string, Map<string, string>>;
  /** By configuration id: segment id → when attached. */
  flagSegments: Map<string, Map<string, string>>;
  /** By project id: segment id → name. */
  segments: Map<string, Map<string, string>>;
  /** By project id: actor id → when first seen. */
  actors: Map<string, Map<string, string>>;
  keys: KeyRow[];
  users: Map<string, UserRow>;
  /** By `${projectId} ${userId}`. */
  grants: Map<string, { project_id: string; user_id: string; role: string; created_at: string }>;
  /** E-mails with failed sign-ins counted. */
  signInFailures: Set<string>;
}

export const emptyTables = (): MemoryTables => ({
  projects: new Map(),
  environments: [],
  flags: new Map(),
  configs: new Map(),
  flagActors: new Map(),
  flagSegments: new Map(),
  segments: new Map(),
  actors: new Map(),
  keys: [],
  users: new Map(),
  grants: new Map(),
  signInFailures: new Set(),
});

/** What the databases throw for a row that breaks a unique index (isUniqueViolation knows it). */
export function uniqueViolation(what: string): Error {
  return Object.assign(new Error(`UNIQUE constraint failed: ${what}`), { code: "SQLITE_CONSTRAINT_UNIQUE" });
}

/** Strings in the databases' order (byte order: SQLite's, and PostgreSQL's with the C collation). */
export const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Keyset pagination over items in memory, as db/keyset.ts's keysetPage does in SQL: the items strictly past
 * the page's key, in the page's direction (backward for `before`), `limit + 1` of them.
 */
export function keysetSlice<T>(
  items: readonly T[],
  keyOf: (item: T) => SortKey,
  descending: readonly boolean[],
  page: PageQuery,
): T[] {
  const backward = page.direction === "before";
  const order = (a: SortKey, b: SortKey) => {
    for (const [i, down] of descending.entries()) {
      const c = compare(a[i] ?? "", b[i] ?? "");
      if (c !== 0) return down !== backward ? -c : c;
    }
    return 0;
  };
  const sorted = [...items].sort((a, b) => order(keyOf(a), keyOf(b)));
  const past = page.direction === "first" ? sorted : sorted.filter((item) => order(keyOf(item), page.key) > 0);
  return past.slice(0, page.limit + 1);
}

/** Whether an item lies strictly before or after `key` in the order (beyondKey). */
export function anyBeyond<T>(
  items: readonly T[],
  keyOf: (item: T) => SortKey,
  descending: readonly boolean[],
  side: "before" | "after",
  key: SortKey,
): boolean {
  return keysetSlice(items, keyOf, descending, { direction: side, key, limit: 0 }).length > 0;
}

export const likeText = (text: string, part: string) => text.toLowerCase().includes(part.toLowerCase());
