import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import type { Database, EnvironmentsTable } from "../../db/schema.js";
import { environmentNotFound, projectNotFound } from "../../kernel/errors.js";
import { findProject } from "../projects/project.repository.js";
import { insertEnvironmentConfigurations } from "../../db/flag-configs.js";
import type { Environment } from "./environment.schemas.js";
import type { EnvironmentStore, PlacedEnvironment } from "./environment.store.js";

export type { PlacedEnvironment };

type Executor = Kysely<Database> | Transaction<Database>;

export const toEnvironment = (row: Selectable<EnvironmentsTable>): Environment => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  description: row.description,
  default: Number(row.is_default) === 1,
  protected: Number(row.protected) === 1,
  requiredApprovals: Number(row.required_approvals ?? 0),
  allowSelfApproval: Number(row.allow_self_approval ?? 0) === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** A project's environments in their order (the first created first); few per project, so read whole. */
export async function listEnvironments(db: Executor, projectId: string): Promise<Environment[]> {
  return (await listPlacedEnvironments(db, projectId)).map((placed) => placed.environment);
}

/** A project's environments in their order, with their positions (what the list's cursors hold). */
export async function listPlacedEnvironments(db: Executor, projectId: string): Promise<PlacedEnvironment[]> {
  const rows = await db
    .selectFrom("environments")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("position")
    .execute();
  return rows.map((row) => ({ environment: toEnvironment(row), position: Number(row.position) }));
}

export async function findEnvironment(db: Executor, projectId: string, id: string): Promise<Environment | undefined> {
  const row = await db
    .selectFrom("environments")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && toEnvironment(row);
}

/**
 * The id of the environment a request acts on: the one named (which must exist), or the project's
 * default. Throws the 404 of an unknown project or environment.
 */
export async function resolveEnvironment(db: Executor, projectId: string, named: string | null): Promise<string> {
  const rows = await db
    .selectFrom("environments")
    .select(["id", "is_default"])
    .where("project_id", "=", projectId)
    .where((eb) => (named === null ? eb("is_default", "=", 1) : eb("id", "=", named)))
    .execute();
  const row = rows[0];
  if (row) return row.id;
  if (named === null || !(await db.selectFrom("projects").select("id").where("id", "=", projectId).executeTakeFirst()))
    throw projectNotFound(projectId);
  throw environmentNotFound(named);
}

export async function insertEnvironment(trx: Transaction<Database>, environment: Environment): Promise<void> {
  const next = await trx
    .selectFrom("environments")
    .select(sql<number | string | null>`max(position)`.as("last"))
    .where("project_id", "=", environment.projectId)
    .executeTakeFirst();
  await trx
    .insertInto("environments")
    .values({
      project_id: environment.projectId,
      id: environment.id,
      name: environment.name,
      description: environment.description,
      is_default: environment.default ? 1 : 0,
      protected: environment.protected ? 1 : 0,
      required_approvals: environment.requiredApprovals,
      allow_self_approval: environment.allowSelfApproval ? 1 : 0,
      position: Number(next?.last ?? 0) + 1,
      created_at: environment.createdAt,
      updated_at: environment.updatedAt,
    })
    .execute();
}

export async function saveEnvironment(trx: Transaction<Database>, environment: Environment): Promise<void> {
  await trx
    .updateTable("environments")
    .set({
      name: environment.name,
      description: environment.description,
      is_default: environment.default ? 1 : 0,
      protected: environment.protected ? 1 : 0,
      required_approvals: environment.requiredApprovals,
      allow_self_approval: environment.allowSelfApproval ? 1 : 0,
      updated_at: environment.updatedAt,
    })
    .where("project_id", "=", environment.projectId)
    .where("id", "=", environment.id)
    .execute();
}

/**
 * Puts a project's environments in this order (every one of them, by id): each gets a position past the
 * highest it has now, so the unique index on (project, position) never sees two at one place meanwhile.
 */
export async function reorderEnvironments(
  trx: Transaction<Database>,
  projectId: string,
  ids: readonly string[],
): Promise<void> {
  const top = await trx
    .selectFrom("environments")
    .select(sql<number | string | null>`max(position)`.as("last"))
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  const base = Number(top?.last ?? 0);
  for (const [index, id] of ids.entries()) {
    await trx
      .updateTable("environments")
      .set({ position: base + 1 + index })
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .execute();
  }
}

/** Makes no environment of the project the default (the caller then makes one so, in the same transaction). */
export async function clearDefault(trx: Transaction<Database>, projectId: string, at: string): Promise<void> {
  await trx
    .updateTable("environments")
    .set({ is_default: 0, updated_at: at })
    .where("project_id", "=", projectId)
    .where("is_default", "=", 1)
    .execute();
}

/** Deletes an environment with its flags' configurations (and, by cascade, their actor and segment links). */
export async function deleteEnvironment(trx: Transaction<Database>, projectId: string, id: string): Promise<void> {
  await trx
    .deleteFrom("flag_configs")
    .where("environment_id", "=", id)
    .where("flag_id", "in", (eb) => eb.selectFrom("flags").select("id").where("project_id", "=", projectId))
    .execute();
  // Its change requests go with it (their events stay in the history); their reviews with them.
  await trx
    .deleteFrom("change_requests")
    .where("project_id", "=", projectId)
    .where("environment_id", "=", id)
    .execute();
  await trx.deleteFrom("environments").where("project_id", "=", projectId).where("id", "=", id).execute();
}

export async function countEnvironments(db: Executor, projectId: string): Promise<number> {
  const row = await db
    .selectFrom("environments")
    .select((eb) => eb.fn.countAll<number | string | bigint>().as("count"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The keys bound to an environment (deleting it revokes them). */
export async function keysOf(db: Executor, projectId: string, environment: string) {
  return db
    .selectFrom("api_keys")
    .select(["id", "name", "role"])
    .where("project_id", "=", projectId)
    .where("environment_id", "=", environment)
    .execute();
}

/** Deletes the keys bound to an environment (deleting it revokes them). */
export async function deleteKeysOf(trx: Transaction<Database>, projectId: string, environment: string): Promise<void> {
  await trx
    .deleteFrom("api_keys")
    .where("project_id", "=", projectId)
    .where("environment_id", "=", environment)
    .execute();
}

/** The approvals a change request needs in an environment (0 for an unknown one). */
export async function requiredApprovals(db: Executor, projectId: string, environment: string): Promise<number> {
  const row = await db
    .selectFrom("environments")
    .select("required_approvals")
    .where("project_id", "=", projectId)
    .where("id", "=", environment)
    .executeTakeFirst();
  return Number(row?.required_approvals ?? 0);
}

/** Which of these environments of the project are protected, in id order. */
export async function protectedAmong(db: Executor, projectId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom("environments")
    .select(["id", "protected"])
    .where("project_id", "=", projectId)
    .where("id", "in", ids)
    .orderBy("id")
    .execute();
  return rows.filter((row) => Number(row.protected) === 1).map((row) => row.id);
}

/** The environments' store on the database. */
export const environmentRepository: EnvironmentStore = {
  findProject,
  listEnvironments,
  listPlacedEnvironments,
  findEnvironment,
  resolveEnvironment,
  countEnvironments,
  protectedAmong,
  requiredApprovals,
  insertEnvironment,
  insertEnvironmentConfigurations,
  saveEnvironment,
  reorderEnvironments,
  clearDefault,
  keysOf,
  deleteKeysOf,
  deleteEnvironment,
};
