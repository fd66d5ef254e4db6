import type { GrantRole, UserRole } from "@flagstaff/core";
import type { Grant, User } from "@flagstaff/core/schemas";
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import type { PageQuery, SortKey } from "../../kernel/pagination.js";
import type { ApiKey } from "../keys/key.schemas.js";
import type { Project } from "../projects/project.schemas.js";

// What the people's service reads and writes: the seam between its decisions and the SQL. The Kysely
// implementation is `peopleRepository` (people.repository.ts); unit tests use an in-memory fake
// (test/unit/fakes/). Every method takes the executor it runs on: a write's methods the transaction the
// unit of work opened, so a write stays one transaction.

type Executor = Kysely<Database> | Transaction<Database>;
type Trx = Transaction<Database>;

/** A person's row as the services use it: the API's shape and what stays inside (the password's hash). */
export type UserRow = User & { readonly passwordHash: string | null };

/** A person's key as their list shows it. */
export interface PersonalKeyRow {
  readonly id: string;
  readonly name: string;
  readonly role: string;
  readonly project_id: string | null;
  readonly environment_id: string | null;
  readonly created_at: string;
}

/** What may change of a person. */
export type UserChange = Partial<{
  name: string;
  role: UserRole;
  disabled: boolean;
  passwordHash: string | null;
  lastSignInAt: string;
}>;

export interface PeopleStore {
  findUser(db: Executor, id: string): Promise<UserRow | undefined>;
  /** By e-mail, compared as stored (emailKey). */
  findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined>;
  /** Adds a person; throws a unique violation for an e-mail taken. */
  insertUser(trx: Trx, user: UserRow): Promise<void>;
  updateUser(db: Executor, id: string, values: UserChange): Promise<void>;
  /** Deletes a person with their grants, sessions, sign-in tokens and personal keys. */
  deleteUser(trx: Trx, id: string): Promise<void>;
  /** A page of people, by creation time then id (rows in the page's direction, limit + 1). */
  listUsers(db: Executor, page: PageQuery): Promise<UserRow[]>;
  usersBeyond(db: Executor, side: "before" | "after", key: SortKey): Promise<boolean>;
  /** Lifts a lockout: forgets the e-mail's failed sign-ins. */
  clearSignInFailures(db: Executor, email: string): Promise<void>;
  /** A project's grants, by e-mail. */
  listGrants(db: Executor, projectId: string): Promise<Grant[]>;
  findGrant(db: Executor, projectId: string, userId: string): Promise<{ role: string; created_at: string } | undefined>;
  /** Writes a grant: a new one, or (`exists`) a new role for one held. */
  putGrant(
    trx: Trx,
    grant: { projectId: string; userId: string; role: GrantRole; createdAt: string },
    exists: boolean,
  ): Promise<void>;
  deleteGrant(trx: Trx, projectId: string, userId: string): Promise<void>;
  /** A person's keys, oldest first. */
  listPersonalKeys(db: Executor, userId: string): Promise<PersonalKeyRow[]>;
  /** Deletes one of a person's keys; answers it, or undefined when the person has no such key. */
  deletePersonalKey(trx: Trx, userId: string, keyId: string): Promise<Omit<PersonalKeyRow, "created_at"> | undefined>;
  /** Deletes every key of a person. */
  deletePersonalKeys(trx: Trx, userId: string): Promise<void>;
  /** Stores a key by its hash (a person's: `userId`). */
  insertKey(trx: Trx, key: ApiKey, hash: string, userId: string | null): Promise<void>;
  findProject(db: Executor, projectId: string): Promise<Project | undefined>;
  /** The environment named (which must exist), or the project's default; throws the 404s. */
  resolveEnvironment(db: Executor, projectId: string, named: string | null): Promise<string>;
}
