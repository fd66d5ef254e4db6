import type { Kysely, Transaction } from "kysely";
import { beyondKey, keysetPage } from "../../db/keyset.js";
import type { Database, ProjectsTable } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../pagination.js";
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

export async function listProjects(db: Executor, page: PageQuery): Promise<Project[]> {
  const rows = await keysetPage(db.selectFrom("projects").selectAll(), ["id"], page).execute();
  return rows.map(toProject);
}

export async function projectsBeyond(db: Executor, side: "before" | "after", key: SortKey): Promise<boolean> {
  return (await beyondKey(db.selectFrom("projects").select("id"), ["id"], side, key).execute()).length > 0;
}
