import { type GrantRole, normalizeEmail, type UserRole } from "@flagstaff/core";
import type { Grant, User } from "@flagstaff/core/schemas";
import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import { beyondKey, keysetPage } from "../../db/keyset.js";
import type { Database, UsersTable } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import { insertKey } from "../keys/key.repository.js";
import { environmentRepository } from "../environments/environment.repository.js";
import { findProject } from "../projects/project.repository.js";
import type { PeopleStore, UserChange, UserRow } from "./people.store.js";

type Executor = Kysely<Database> | Transaction<Database>;

export type { UserRow };

const USER_COLUMNS = [
  "id",
  "email",
  "name",
  "role",
  "disabled",
  "password_hash",
  "created_at",
  "last_sign_in_at",
] as const;

const toUser = (row: Pick<Selectable<UsersTable>, (typeof USER_COLUMNS)[number]>): UserRow => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role as UserRole,
  disabled: Number(row.disabled) === 1,
  createdAt: row.created_at,
  lastSignInAt: row.last_sign_in_at,
  hasPassword: row.password_hash !== null,
  passwordHash: row.password_hash,
});

/** The API's form of a person: nothing of the password but whether there is one. */
export const publicUser = ({ passwordHash, ...user }: UserRow): User => user;

export async function findUser(db: Executor, id: string): Promise<UserRow | undefined> {
  const row = await db.selectFrom("users").select(USER_COLUMNS).where("id", "=", id).executeTakeFirst();
  return row && toUser(row);
}

/** An e-mail as it is stored and compared (the contract's one rule: A–Z lower-cased, nothing else). */
export const emailKey = (email: string): string => normalizeEmail(email);

/** By e-mail, compared as stored (emailKey). */
export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  const row = await db.selectFrom("users").select(USER_COLUMNS).where("email", "=", emailKey(email)).executeTakeFirst();
  return row && toUser(row);
}

export async function insertUser(trx: Transaction<Database>, user: UserRow): Promise<void> {
  await trx
    .insertInto("users")
    .values({
      id: user.id,
      email: user.email,
      name: user.name,
      role: user.role,
      disabled: user.disabled ? 1 : 0,
      password_hash: user.passwordHash,
      created_at: user.createdAt,
      last_sign_in_at: user.lastSignInAt,
    })
    .execute();
}

export async function updateUser(db: Executor, id: string, values: UserChange): Promise<void> {
  const set = {
    ...(values.name === undefined ? {} : { name: values.name }),
    ...(values.role === undefined ? {} : { role: values.role }),
    ...(values.disabled === undefined ? {} : { disabled: values.disabled ? 1 : 0 }),
    ...(values.passwordHash === undefined ? {} : { password_hash: values.passwordHash }),
    ...(values.lastSignInAt === undefined ? {} : { last_sign_in_at: values.lastSignInAt }),
  };
  // Nothing to change (a PATCH with {}): no statement, since SQL has no empty SET.
  if (Object.keys(set).length === 0) return;
  await db.updateTable("users").set(set).where("id", "=", id).execute();
}

export async function deleteUser(trx: Transaction<Database>, id: string): Promise<void> {
  // Grants, sessions, sign-in tokens and personal keys go with the person (ON DELETE CASCADE).
  await trx.deleteFrom("users").where("id", "=", id).execute();
}

export async function listUsers(db: Executor, page: PageQuery): Promise<UserRow[]> {
  const query = db.selectFrom("users").select(USER_COLUMNS);
  return (await keysetPage(query, ["created_at", "id"], page).execute()).map(toUser);
}

export async function usersBeyond(db: Executor, side: "before" | "after", key: SortKey): Promise<boolean> {
  const query = db.selectFrom("users").select("id");
  return (await beyondKey(query, ["created_at", "id"], side, key).execute()).length > 0;
}

export async function listGrants(db: Executor, projectId: string): Promise<Grant[]> {
  const rows = await db
    .selectFrom("project_grants")
    .innerJoin("users", "users.id", "project_grants.user_id")
    .select(["users.id", "users.email", "users.name", "project_grants.role", "project_grants.created_at"])
    .where("project_grants.project_id", "=", projectId)
    .orderBy("users.email")
    .execute();
  return rows.map((r) => ({
    userId: r.id,
    email: r.email,
    name: r.name,
    role: r.role as GrantRole,
    createdAt: r.created_at,
  }));
}

export async function findGrant(db: Executor, projectId: string, userId: string) {
  return db
    .selectFrom("project_grants")
    .select(["role", "created_at"])
    .where("project_id", "=", projectId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
}

export async function putGrant(
  trx: Transaction<Database>,
  grant: { projectId: string; userId: string; role: GrantRole; createdAt: string },
  exists: boolean,
): Promise<void> {
  if (exists) {
    await trx
      .updateTable("project_grants")
      .set({ role: grant.role })
      .where("project_id", "=", grant.projectId)
      .where("user_id", "=", grant.userId)
      .execute();
  } else {
    await trx
      .insertInto("project_grants")
      .values({ project_id: grant.projectId, user_id: grant.userId, role: grant.role, created_at: grant.createdAt })
      .execute();
  }
}

export async function deleteGrant(trx: Transaction<Database>, projectId: string, userId: string): Promise<void> {
  await trx.deleteFrom("project_grants").where("project_id", "=", projectId).where("user_id", "=", userId).execute();
}

/** A person's keys, oldest first. */
export async function listPersonalKeys(db: Executor, userId: string) {
  return db
    .selectFrom("api_keys")
    .select(["id", "name", "role", "project_id", "environment_id", "created_at"])
    .where("user_id", "=", userId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** Deletes one of a person's keys; answers it, or undefined when the person has no such key. */
export async function deletePersonalKey(trx: Transaction<Database>, userId: string, keyId: string) {
  return trx
    .deleteFrom("api_keys")
    .where("id", "=", keyId)
    .where("user_id", "=", userId)
    .returning(["id", "name", "role", "project_id", "environment_id"])
    .executeTakeFirst();
}

/** Deletes every key of a person (disabling them revokes their keys). */
export async function deletePersonalKeys(trx: Transaction<Database>, userId: string): Promise<void> {
  await trx.deleteFrom("api_keys").where("user_id", "=", userId).execute();
}

/** From this many failures in a row on, an e-mail is locked until `until`; steps ordered by `atLeast`, highest first. */
export interface LockStep {
  readonly atLeast: number;
  readonly until: string;
}

/**
 * Counts a sign-in attempt for an e-mail (as emailKey stores it), before its password is checked, in one
 * statement: parallel attempts, on one instance or many, are counted one after another by the database,
 * and each sees the count and the lock the ones before it left. An e-mail locked at `now` is not counted.
 * Answers the count including this attempt, or undefined when the e-mail is locked.
 */
export async function countSignInAttempt(
  db: Executor,
  email: string,
  now: string,
  steps: readonly LockStep[],
): Promise<number | undefined> {
  const lockAt = (count: number) => steps.find((step) => count >= step.atLeast)?.until ?? null;
  const counted = sql<number>`sign_in_failures.failures + 1`;
  const lockEnd =
    steps.length === 0
      ? sql<string | null>`null`
      : sql<string | null>`case ${sql.join(
          steps.map((step) => sql`when ${counted} >= ${step.atLeast} then ${step.until}`),
          sql` `,
        )} else null end`;
  const row = await db
    .insertInto("sign_in_failures")
    .values({ email, failures: 1, locked_until: lockAt(1), last_attempt_at: now })
    .onConflict((conflict) =>
      conflict
        .column("email")
        .doUpdateSet({ failures: counted, locked_until: lockEnd, last_attempt_at: now })
        .where((eb) =>
          eb.or([eb("sign_in_failures.locked_until", "is", null), eb("sign_in_failures.locked_until", "<=", now)]),
        ),
    )
    .returning("failures")
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.failures);
}

/** When an e-mail's lock ends; undefined when it has no failures counted. */
export async function signInLockEnd(db: Executor, email: string): Promise<string | null | undefined> {
  const row = await db
    .selectFrom("sign_in_failures")
    .select("locked_until")
    .where("email", "=", email)
    .executeTakeFirst();
  return row?.locked_until;
}

/** Forgets an e-mail's failures (a success, or a new password): it may sign in at once. */
export async function clearSignInFailures(db: Executor, email: string): Promise<void> {
  await db.deleteFrom("sign_in_failures").where("email", "=", email).execute();
}

/** The people's store on the database. */
export const peopleRepository: PeopleStore = {
  findUser,
  findUserByEmail,
  insertUser,
  updateUser,
  deleteUser,
  listUsers,
  usersBeyond,
  clearSignInFailures,
  listGrants,
  findGrant,
  putGrant,
  deleteGrant,
  listPersonalKeys,
  deletePersonalKey,
  deletePersonalKeys,
  insertKey,
  findProject,
  resolveEnvironment: environmentRepository.resolveEnvironment,
};
