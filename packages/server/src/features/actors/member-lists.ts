import { type Kysely, sql, type Transaction } from "kysely";
import { beyondKey, keysetPage } from "../../db/keyset.js";
import type { Database } from "../../db/schema.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";

type Executor = Kysely<Database> | Transaction<Database>;

/** One actor attached to a flag, or a member of a segment, and since when. */
export interface Membership {
  readonly actorId: string;
  readonly addedAt: string;
}

/** Where a list's rows live: the actors attached to a flag, or the members of a segment. */
const SOURCES = {
  flag: { table: "flag_actors", owner: "config_id", added: "created_at" },
  segment: { table: "segment_actors", owner: "segment_id", added: "added_at" },
} as const;

/** `%`, `_` and `\` match themselves in a search, not as LIKE wildcards. */
const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

// The two tables differ only in names, which Kysely cannot type generically: the queries are built
// untyped over the literal names above.
function membersQuery(db: Executor, kind: keyof typeof SOURCES, ownerId: string, q: string | undefined) {
  const source = SOURCES[kind];
  let query = (db as Kysely<any>).selectFrom(source.table).where(source.owner, "=", ownerId);
  if (q !== undefined && q !== "") {
    query = query.where(sql<boolean>`lower(actor_id) like ${likePattern(q)} escape '\\'`);
  }
  return query;
}

/**
 * A page of a flag's attached actors or a segment's members, ordered by actor id, optionally only those
 * whose id contains `q` (case-insensitive). Each page is a range scan of the (owner, actor_id) primary key,
 * so a segment of a million members pages as fast as one of ten.
 */
export async function listMembers(
  db: Executor,
  kind: keyof typeof SOURCES,
  ownerId: string,
  q: string | undefined,
  page: PageQuery,
): Promise<Page<Membership>> {
  const source = SOURCES[kind];
  const rows = await keysetPage(
    membersQuery(db, kind, ownerId, q).select(["actor_id", `${source.added} as added_at`]),
    ["actor_id"],
    page,
  ).execute();
  const items: Membership[] = rows.map((r: { actor_id: string; added_at: string }) => ({
    actorId: r.actor_id,
    addedAt: r.added_at,
  }));
  return assemblePage(
    page,
    items,
    (m) => [m.actorId],
    async (side, key) =>
      (await beyondKey(membersQuery(db, kind, ownerId, q).select("actor_id"), ["actor_id"], side, key).execute())
        .length > 0,
  );
}
