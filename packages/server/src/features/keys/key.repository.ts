import type { Kysely, Transaction } from "kysely";
import { beyondKey, keysetPage } from "../../db/keyset.js";
import type { ApiKeysTable, Database } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import type { Role } from "../../access/principal.js";
import type { ApiKey } from "./key.schemas.js";

type Executor = Kysely<Database> | Transaction<Database>;

const toKey = (row: Omit<ApiKeysTable, "key_hash" | "user_id">): ApiKey => ({
  id: row.id,
  name: row.name,
  role: row.role as ApiKey["role"],
  projectId: row.project_id,
  environment: row.environment_id,
  createdAt: row.created_at,
});

const COLUMNS = ["id", "name", "role", "project_id", "environment_id", "created_at"] as const;

export async function insertKey(
  trx: Transaction<Database>,
  key: ApiKey,
  hash: string,
  userId: string | null = null,
): Promise<void> {
  await trx
    .insertInto("api_keys")
    .values({
      id: key.id,
      name: key.name,
      role: key.role,
      project_id: key.projectId,
      environment_id: key.environment,
      key_hash: hash,
      created_at: key.createdAt,
      user_id: userId,
    })
    .execute();
}

/** A service key of the project, or an admin key with `projectId` null, with its hash; undefined when none. */
export async function findServiceKey(
  db: Executor,
  projectId: string | null,
  id: string,
): Promise<(ApiKey & { hash: string }) | undefined> {
  let query = db
    .selectFrom("api_keys")
    .select([...COLUMNS, "key_hash"])
    .where("id", "=", id)
    .where("user_id", "is", null);
  query = projectId === null ? query.where("role", "=", "admin") : query.where("project_id", "=", projectId);
  const row = await query.executeTakeFirst();
  return row && { ...toKey(row), hash: row.key_hash };
}

export async function setKeyName(trx: Transaction<Database>, id: string, name: string): Promise<void> {
  await trx.updateTable("api_keys").set({ name }).where("id", "=", id).execute();
}

/** Deletes a project's key; answers what it was (name and role), or undefined when there was none. */
export async function deleteKey(
  trx: Transaction<Database>,
  projectId: string,
  id: string,
): Promise<{ name: string; role: Role; environment: string | null } | undefined> {
  const row = await trx
    .deleteFrom("api_keys")
    .where("id", "=", id)
    .where("project_id", "=", projectId)
    .where("user_id", "is", null)
    .returning(["name", "role", "environment_id"])
    .executeTakeFirst();
  return row && { name: row.name, role: row.role as Role, environment: row.environment_id };
}

export async function listKeys(db: Executor, projectId: string, page: PageQuery): Promise<ApiKey[]> {
  // A project's service keys; personal keys are their people's (GET /users/me/keys).
  const query = db
    .selectFrom("api_keys")
    .select(COLUMNS)
    .where("project_id", "=", projectId)
    .where("user_id", "is", null);
  return (await keysetPage(query, ["created_at", "id"], page).execute()).map(toKey);
}

export async function keysBeyond(db: Executor, projectId: string, side: "before" | "after", key: SortKey) {
  const query = db.selectFrom("api_keys").select("id").where("project_id", "=", projectId).where("user_id", "is", null);
  return (await beyondKey(query, ["created_at", "id"], side, key).execute()).length > 0;
}

export async function hasKeyWithHash(db: Executor, hash: string): Promise<boolean> {
  return (await db.selectFrom("api_keys").select("id").where("key_hash", "=", hash).executeTakeFirst()) !== undefined;
}

export async function hasAdminKey(db: Executor): Promise<boolean> {
  const row = await db
    .selectFrom("api_keys")
    .select("id")
    .where("role", "=", "admin")
    .where("user_id", "is", null)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listAdminKeys(db: Executor): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom("api_keys")
    .select(COLUMNS)
    .where("role", "=", "admin")
    .where("user_id", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map(toKey);
}

/** Deletes an admin key; answers its name, or undefined when there was none. */
export async function deleteAdminKey(
  trx: Transaction<Database>,
  id: string,
): Promise<{ name: string; role: Role; environment: null } | undefined> {
  const row = await trx
    .deleteFrom("api_keys")
    .where("id", "=", id)
    .where("role", "=", "admin")
    .where("user_id", "is", null)
    .returning(["name", "role"])
    .executeTakeFirst();
  return row && { name: row.name, role: row.role as Role, environment: null };
}
