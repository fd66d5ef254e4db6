import type { Grant } from "@flagstaff/core/schemas";
import type { EnvironmentStore } from "../../../src/features/environments/environment.store.js";
import { emailKey } from "../../../src/features/people/people.repository.js";
import type { PeopleStore, PersonalKeyRow, UserRow } from "../../../src/features/people/people.store.js";
import type { PageQuery, SortKey } from "../../../src/kernel/pagination.js";
import {
  anyBeyond,
  compare,
  type Executor,
  type KeyRow,
  keysetSlice,
  type MemoryTables,
  type Trx,
  uniqueViolation,
} from "./memory-tables.js";

// The people's store over the in-memory tables (see memory-stores.ts).

const userKey = (user: UserRow): SortKey => [user.createdAt, user.id];

const keyRow = (k: KeyRow): PersonalKeyRow => ({
  id: k.id,
  name: k.name,
  role: k.role,
  project_id: k.project_id,
  environment_id: k.environment_id,
  created_at: k.created_at,
});

/** The people's store over `owner.tables` (read anew at each call: a rollback replaces them). */
export function memoryPeopleStore(owner: { tables: MemoryTables }, environments: EnvironmentStore): PeopleStore {
  const usersByEmail = (email: string): UserRow | undefined => {
    for (const user of owner.tables.users.values()) if (user.email === email) return user;
    return undefined;
  };
  return {
    findProject: environments.findProject,
    resolveEnvironment: environments.resolveEnvironment,
    findUser: async (_db: Executor, id: string) => owner.tables.users.get(id),
    findUserByEmail: async (_db: Executor, email: string) => usersByEmail(emailKey(email)),
    insertUser: async (_trx: Trx, user: UserRow) => {
      if (owner.tables.users.has(user.id)) throw uniqueViolation("users.id");
      if (usersByEmail(user.email)) throw uniqueViolation("users.email");
      owner.tables.users.set(user.id, { ...user });
    },
    updateUser: async (_db: Executor, id: string, values) => {
      const user = owner.tables.users.get(id);
      if (!user) return;
      owner.tables.users.set(id, {
        ...user,
        ...(values.name === undefined ? {} : { name: values.name }),
        ...(values.role === undefined ? {} : { role: values.role }),
        ...(values.disabled === undefined ? {} : { disabled: values.disabled }),
        ...(values.passwordHash === undefined
          ? {}
          : { passwordHash: values.passwordHash, hasPassword: values.passwordHash !== null }),
        ...(values.lastSignInAt === undefined ? {} : { lastSignInAt: values.lastSignInAt }),
      });
    },
    deleteUser: async (_trx: Trx, id: string) => {
      // What goes with the person on the database (ON DELETE CASCADE): grants and keys.
      owner.tables.users.delete(id);
      for (const [key, grant] of owner.tables.grants) if (grant.user_id === id) owner.tables.grants.delete(key);
      owner.tables.keys = owner.tables.keys.filter((k) => k.user_id !== id);
    },
    listUsers: async (_db: Executor, page: PageQuery) =>
      keysetSlice([...owner.tables.users.values()], userKey, [false, false], page),
    usersBeyond: async (_db: Executor, side: "before" | "after", key: SortKey) =>
      anyBeyond([...owner.tables.users.values()], userKey, [false, false], side, key),
    clearSignInFailures: async (_db: Executor, email: string) => {
      owner.tables.signInFailures.delete(email);
    },
    listGrants: async (_db: Executor, projectId: string): Promise<Grant[]> =>
      [...owner.tables.grants.values()]
        .filter((g) => g.project_id === projectId)
        .flatMap((g) => {
          const user = owner.tables.users.get(g.user_id);
          return user
            ? [
                {
                  userId: user.id,
                  email: user.email,
                  name: user.name,
                  role: g.role as Grant["role"],
                  createdAt: g.created_at,
                },
              ]
            : [];
        })
        .sort((a, b) => compare(a.email, b.email)),
    findGrant: async (_db: Executor, projectId: string, userId: string) => {
      const grant = owner.tables.grants.get(`${projectId} ${userId}`);
      return grant && { role: grant.role, created_at: grant.created_at };
    },
    putGrant: async (_trx: Trx, grant, exists) => {
      const key = `${grant.projectId} ${grant.userId}`;
      const held = owner.tables.grants.get(key);
      if (exists) {
        if (held) held.role = grant.role;
        return;
      }
      if (held) throw uniqueViolation("project_grants.project_id, project_grants.user_id");
      owner.tables.grants.set(key, {
        project_id: grant.projectId,
        user_id: grant.userId,
        role: grant.role,
        created_at: grant.createdAt,
      });
    },
    deleteGrant: async (_trx: Trx, projectId: string, userId: string) => {
      owner.tables.grants.delete(`${projectId} ${userId}`);
    },
    listPersonalKeys: async (_db: Executor, userId: string) =>
      owner.tables.keys
        .filter((k) => k.user_id === userId)
        .sort((a, b) => compare(a.created_at, b.created_at) || compare(a.id, b.id))
        .map((k) => keyRow(k)),
    deletePersonalKey: async (_trx: Trx, userId: string, keyId: string) => {
      const key = owner.tables.keys.find((k) => k.id === keyId && k.user_id === userId);
      if (!key) return undefined;
      owner.tables.keys = owner.tables.keys.filter((k) => k !== key);
      const { created_at: _, ...row } = keyRow(key);
      return row;
    },
    deletePersonalKeys: async (_trx: Trx, userId: string) => {
      owner.tables.keys = owner.tables.keys.filter((k) => k.user_id !== userId);
    },
    insertKey: async (_trx: Trx, key, hash, userId) => {
      if (owner.tables.keys.some((k) => k.id === key.id || k.key_hash === hash)) throw uniqueViolation("api_keys");
      owner.tables.keys.push({
        id: key.id,
        name: key.name,
        role: key.role,
        project_id: key.projectId,
        environment_id: key.environment,
        key_hash: hash,
        created_at: key.createdAt,
        user_id: userId,
      });
    },
  };
}
