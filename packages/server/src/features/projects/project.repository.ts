import type { Kysely, SelectQueryBuilder, Transaction } from "kysely";
import { beyondKey, keysetPage } from "../../db/keyset.js";
import type { Database, ProjectsTable } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import type { Project } from "./project.schemas.js";

type Executor = Kysely<Database> | Transaction<Database>;

const toProject = (row: ProjectsTable): Project => ({ id: row.id, name: row.name, createdAt: row.created_at });

export async function findProject(db: Executor, id: string): Promise<Project | undefined> {
  const row = await db.selectFrom("projects").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toProject(row);
}

export async function insertProject(trx: Transaction<Database>, project: Project): Promise<void> {
  await trx
    .insertInto("projects")
    .values({ id: project.id, name: project.name, created_at: project.createdAt })
    .execute();
}

export async function deleteProject(trx: Transaction<Database>, id: string): Promise<boolean> {
  const result = await trx.deleteFrom("projects").where("id", "=", id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Projects by id; with `grantedTo`, only those the person holds a grant on. */
export async function listProjects(db: Executor, page: PageQuery, grantedTo?: string): Promise<Project[]> {
  const rows = await keysetPage(visible(db.selectFrom("projects").selectAll(), grantedTo), ["id"], page).execute();
  return rows.map(toProject);
}

export async function projectsBeyond(
  db: Executor,
  side: "before" | "after",
  key: SortKey,
  grantedTo?: string,
): Promise<boolean> {
  return (
    (await beyondKey(visible(db.selectFrom("projects").select("id"), grantedTo), ["id"], side, key).execute()).length >
    0
  );
}

function visible<Q extends SelectQueryBuilder<Database, "projects", any>>(query: Q, grantedTo: string | undefined): Q {
  if (grantedTo === undefined) return query;
  return query.where((eb) =>
    eb.exists(
      eb
        .selectFrom("project_grants")
        .select("project_grants.project_id")
        .whereRef("project_grants.project_id", "=", "projects.id")
        .where("project_grants.user_id", "=", grantedTo),
    ),
  ) as Q;
}
