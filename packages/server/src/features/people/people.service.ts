import type {
  CreatedPersonalKey,
  CreatePersonalKeyInput,
  CreateUserInput,
  Grant,
  PersonalKey,
  SetOwnPasswordInput,
  UpdateUserInput,
  User,
} from "@flagstaff/core/schemas";
import type { GrantRole } from "@flagstaff/core";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { AppError, invalid, projectNotFound } from "../../kernel/errors.js";
import { RANK, roleOn } from "../../access/roles.js";
import { hashApiKey, newApiKey, newKeyId, newUserId } from "../../kernel/ids.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import type { Writes } from "../../write-path/unit-of-work.js";
import { GLOBAL_STREAM } from "../../write-path/changes.js";
import type { Principal } from "../../access/principal.js";
import { type DomainEvent, SIGN_IN, type UserRecord, type WriteContext } from "../../write-path/domain-events.js";
import { keyRevoked } from "../../write-path/domain-events.js";
import { hashPassword } from "./passwords.js";
import type { PeopleState } from "../../access/people-state.js";
import { emailKey, peopleRepository, publicUser } from "./people.repository.js";
import type { PeopleStore, UserRow } from "./people.store.js";
import type { Sessions } from "./sessions.js";

export const userNotFound = (id: string) => new AppError(404, "user_not_found", `User "${id}" does not exist.`);

const userRecord = (user: User): UserRecord => ({
  email: user.email,
  name: user.name,
  role: user.role,
  disabled: user.disabled,
  hasPassword: user.hasPassword,
});

const userTarget = (user: User) => ({ kind: "user" as const, id: user.id, name: user.email });

/** The person a write is made by, when it is a person's. */
const actingPerson = (context: WriteContext) => (context.actor.type === "user" ? context.actor.id : undefined);

/**
 * People, their project grants and their personal keys. Every change is a write on the global stream (so
 * every instance's snapshot learns it) with its event; the project's own stream never carries people,
 * because it is sent to SDKs.
 */
export class PeopleService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: Writes,
    private readonly clock: Clock,
    private readonly people: PeopleState,
    private readonly sessions: Pick<Sessions, "endAll" | "endOthers">,
    private readonly store: PeopleStore = peopleRepository,
  ) {}

  async list(page: PageQuery): Promise<Page<User>> {
    const rows = await this.store.listUsers(this.db, page);
    const result = await assemblePage(
      page,
      rows,
      (u) => [u.createdAt, u.id],
      (side, key) => this.store.usersBeyond(this.db, side, key),
    );
    return { ...result, data: result.data.map(publicUser) };
  }

  async get(id: string): Promise<User> {
    const user = await this.store.findUser(this.db, id);
    if (!user) throw userNotFound(id);
    return publicUser(user);
  }

  async create(context: WriteContext, input: CreateUserInput): Promise<User> {
    // Hashed before the transaction: scrypt takes ~100 ms, and no lock need wait for it.
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    try {
      return await this.work.write(context, GLOBAL_STREAM, async (trx) => {
        const email = emailKey(input.email);
        if (await this.store.findUserByEmail(trx, email)) throw userExists(email);
        const now = this.clock.now();
        const row: UserRow = {
          id: newUserId(now),
          email,
          name: input.name,
          role: input.role ?? "member",
          disabled: false,
          createdAt: isoTime(now),
          lastSignInAt: null,
          hasPassword: passwordHash !== null,
          passwordHash,
        };
        await this.store.insertUser(trx, row);
        // A password set by an admin lifts a lockout the e-mail may have from before the person existed.
        if (passwordHash !== null) await this.store.clearSignInFailures(trx, email);
        const user = publicUser(row);
        return {
          result: user,
          events: [
            { type: "user.created", projectId: null, target: userTarget(user), before: null, after: userRecord(user) },
          ],
        };
      });
    } catch (error) {
      // Two creates of one e-mail at once: the database's unique index decides.
      if (isUniqueViolation(error)) throw userExists(emailKey(input.email));
      throw error;
    }
  }

  /**
   * Changes a person. A new password, a removed one or `disabled: true` signs them out everywhere; being
   * disabled also revokes their personal keys. An admin cannot disable, demote or delete themselves.
   */
  async update(context: WriteContext, id: string, input: UpdateUserInput): Promise<User> {
    if (actingPerson(context) === id && (input.disabled === true || input.role === "member")) throw cannotChangeSelf();
    const passwordHash =
      input.password === undefined ? undefined : input.password === null ? null : await hashPassword(input.password);
    return this.work.write(context, GLOBAL_STREAM, async (trx, hooks) => {
      const before = await this.store.findUser(trx, id);
      if (!before) throw userNotFound(id);
      await this.store.updateUser(trx, id, {
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.role === undefined ? {} : { role: input.role }),
        ...(input.disabled === undefined ? {} : { disabled: input.disabled }),
        ...(passwordHash === undefined ? {} : { passwordHash }),
      });
      // A new password also lifts a lockout: the admin who set it vouches for the person.
      if (passwordHash !== undefined) await this.store.clearSignInFailures(trx, before.email);
      const after: User = {
        ...publicUser(before),
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.role === undefined ? {} : { role: input.role }),
        ...(input.disabled === undefined ? {} : { disabled: input.disabled }),
        ...(passwordHash === undefined ? {} : { hasPassword: passwordHash !== null }),
      };
      const events: DomainEvent[] = [];
      const signOut = passwordHash !== undefined || (input.disabled === true && !before.disabled);
      if (signOut) await this.sessions.endAll(id, { trx, hooks });
      if (input.disabled === true && !before.disabled) events.push(...(await this.revokeKeysOf(trx, id)));
      const changed =
        JSON.stringify(userRecord(after)) !== JSON.stringify(userRecord(before)) || passwordHash !== undefined;
      // A write with no event changes nothing (the unit of work rolls it back): a password set to the
      // same shape still counts, since the hash is new.
      if (changed) {
        events.unshift({
          type: "user.updated",
          projectId: null,
          target: userTarget(after),
          before: userRecord(before),
          after: userRecord(after),
        });
      }
      return { result: after, events };
    });
  }

  /**
   * A person sets or changes their own password, in a session (`PUT /users/me/password`). When they have
   * one, `checkCurrent` checks the current password as a sign-in would (counted against the lockout) and
   * answers the hash it matched. Every other session of theirs ends (and its streams); `session`, the hash
   * of the one making the change, stays signed in.
   */
  async setOwnPassword(
    context: WriteContext,
    userId: string,
    session: string,
    input: SetOwnPasswordInput,
    checkCurrent: (email: string, currentPassword: string) => Promise<string>,
  ): Promise<User> {
    const user = await this.store.findUser(this.db, userId);
    if (!user) throw userNotFound(userId);
    let basis: string | null = null;
    if (user.passwordHash !== null) {
      if (input.currentPassword === undefined) {
        throw invalid("You have a password: give the current one to change it.", [
          { path: "/currentPassword", message: "is required: you have a password" },
        ]);
      }
      basis = await checkCurrent(user.email, input.currentPassword);
    }
    // Hashed before the transaction: scrypt takes ~100 ms, and no lock need wait for it.
    const passwordHash = await hashPassword(input.newPassword);
    return this.work.write(context, GLOBAL_STREAM, async (trx, hooks) => {
      const before = await this.store.findUser(trx, userId);
      if (!before) throw userNotFound(userId);
      // Set or removed meanwhile (by an admin, or another browser of theirs): what was checked is stale.
      if (before.passwordHash !== basis) {
        throw new AppError(
          412,
          "precondition_failed",
          "Your password was set or changed meanwhile: read your page again, then give the current one.",
        );
      }
      await this.store.updateUser(trx, userId, { passwordHash });
      await this.store.clearSignInFailures(trx, before.email);
      await this.sessions.endOthers(userId, session, { trx, hooks });
      const after: User = { ...publicUser(before), hasPassword: true };
      return {
        result: after,
        events: [
          {
            type: "user.updated",
            projectId: null,
            target: userTarget(after),
            before: userRecord(publicUser(before)),
            after: userRecord(after),
          },
        ],
      };
    });
  }

  async delete(context: WriteContext, id: string): Promise<void> {
    if (actingPerson(context) === id) throw cannotChangeSelf();
    await this.work.write(context, GLOBAL_STREAM, async (trx) => {
      const before = await this.store.findUser(trx, id);
      if (!before) throw userNotFound(id);
      const keys = await this.revokeKeysOf(trx, id);
      await this.store.deleteUser(trx, id);
      const user = publicUser(before);
      return {
        result: undefined,
        events: [
          ...keys,
          { type: "user.deleted", projectId: null, target: userTarget(user), before: userRecord(user), after: null },
        ],
      };
    });
  }

  /** Deletes a person's keys; answers their key.revoked events. */
  private async revokeKeysOf(trx: Transaction<Database>, userId: string): Promise<DomainEvent[]> {
    const keys = await this.store.listPersonalKeys(trx, userId);
    await this.store.deletePersonalKeys(trx, userId);
    return keys.map((key) =>
      keyRevoked(key.project_id, {
        id: key.id,
        name: key.name,
        role: key.role as PersonalKey["role"],
        environment: key.environment_id,
      }),
    );
  }

  /**
   * The person a single sign-on vouches for: found by e-mail, or added (a member, or an admin by the role
   * claim) at their first sign-in; with a role claim configured, their role follows it at each sign-in.
   * Answers undefined for a disabled person.
   */
  async signedInByProvider(email: string, name: string, admin: boolean | undefined): Promise<User | undefined> {
    const existing = await this.store.findUserByEmail(this.db, email);
    let user: User;
    if (!existing) {
      try {
        user = await this.create(SIGN_IN, { email, name, role: admin === true ? "admin" : "member" });
      } catch (error) {
        // Two first sign-ins at once: the other one added the person.
        if (!(error instanceof AppError && error.code === "user_exists")) throw error;
        return this.signedInByProvider(email, name, admin);
      }
    } else {
      if (existing.disabled) return undefined;
      const role = admin === undefined ? existing.role : admin ? "admin" : "member";
      user = role === existing.role ? publicUser(existing) : await this.update(SIGN_IN, existing.id, { role });
    }
    const now = isoTime(this.clock.now());
    await this.store.updateUser(this.db, user.id, { lastSignInAt: now });
    return { ...user, lastSignInAt: now };
  }

  // Grants ------------------------------------------------------------------------------------------

  async listGrants(projectId: string): Promise<{ data: Grant[] }> {
    if (!(await this.store.findProject(this.db, projectId))) throw projectNotFound(projectId);
    return { data: await this.store.listGrants(this.db, projectId) };
  }

  async grant(context: WriteContext, projectId: string, userId: string, role: GrantRole): Promise<Grant> {
    return this.work.write(context, GLOBAL_STREAM, async (trx) => {
      if (!(await this.store.findProject(trx, projectId))) throw projectNotFound(projectId);
      const user = await this.store.findUser(trx, userId);
      if (!user) throw userNotFound(userId);
      const existing = await this.store.findGrant(trx, projectId, userId);
      const createdAt = existing?.created_at ?? isoTime(this.clock.now());
      const grant: Grant = { userId, email: user.email, name: user.name, role, createdAt };
      if (existing?.role === role) return { result: grant, events: [] };
      await this.store.putGrant(trx, { projectId, userId, role, createdAt }, existing !== undefined);
      return {
        result: grant,
        events: [
          {
            type: "access.granted",
            projectId,
            target: { kind: "access", id: userId, name: user.email },
            before: existing ? { role: existing.role as GrantRole } : null,
            after: { role },
          },
        ],
      };
    });
  }

  async revokeGrant(context: WriteContext, projectId: string, userId: string): Promise<void> {
    await this.work.write(context, GLOBAL_STREAM, async (trx) => {
      if (!(await this.store.findProject(trx, projectId))) throw projectNotFound(projectId);
      const existing = await this.store.findGrant(trx, projectId, userId);
      if (!existing) {
        throw new AppError(404, "grant_not_found", `User "${userId}" holds no grant on project "${projectId}".`);
      }
      const user = await this.store.findUser(trx, userId);
      await this.store.deleteGrant(trx, projectId, userId);
      return {
        result: undefined,
        events: [
          {
            type: "access.revoked",
            projectId,
            target: { kind: "access", id: userId, name: user?.email ?? userId },
            before: { role: existing.role as GrantRole },
            after: null,
          },
        ],
      };
    });
  }

  // Personal keys ----------------------------------------------------------------------------------

  /** A person's new key, never above what they hold now: on its project, or (with none) as an admin. */
  async createKey(
    context: WriteContext,
    principal: Principal,
    input: CreatePersonalKeyInput,
  ): Promise<CreatedPersonalKey> {
    const userId = principal.userId as string;
    const role = input.role ?? "read";
    if (input.environment !== undefined && input.project === undefined) {
      throw new AppError(400, "invalid_request", "A key bound to an environment names its project too.", [
        { path: "/environment", message: "needs project" },
      ]);
    }
    // As for service keys: a key that only reads or checks is bound to one environment.
    if (input.environment === null && role !== "admin" && role !== "write") {
      throw new AppError(
        400,
        "invalid_request",
        `A ${role} key is bound to one environment: it cannot have environment null.`,
        [{ path: "/environment", message: "must name an environment for check and read keys" }],
      );
    }
    if (input.project !== undefined) {
      const held = roleOn(principal, input.project, this.people);
      if (held === undefined) throw projectNotFound(input.project);
      if (RANK[held] < RANK[role]) {
        throw new AppError(
          403,
          "forbidden",
          `You hold ${held} on project "${input.project}": a key cannot hold ${role}.`,
        );
      }
    } else if (role === "admin" && this.people.person(userId)?.role !== "admin") {
      throw new AppError(403, "forbidden", "Only an admin's key of no project may hold admin.");
    }
    return this.work.write(context, GLOBAL_STREAM, async (trx) => {
      const projectId = input.project ?? null;
      if (projectId !== null && !(await this.store.findProject(trx, projectId))) throw projectNotFound(projectId);
      const environment =
        projectId === null || input.environment === null
          ? null
          : await this.store.resolveEnvironment(trx, projectId, input.environment ?? null);
      const secret = newApiKey();
      const hash = hashApiKey(secret);
      const now = this.clock.now();
      const key: PersonalKey = {
        id: newKeyId(now),
        name: input.name,
        role,
        projectId,
        environment,
        userId,
        createdAt: isoTime(now),
      };
      await this.store.insertKey(trx, { ...key, role }, hash, userId);
      return {
        result: { ...key, key: secret },
        events: [
          {
            type: "key.created",
            projectId,
            target: { kind: "key", id: key.id, name: key.name },
            before: null,
            after: { id: key.id, name: key.name, role, environment, userId },
            unpublished: { keyHash: hash },
          },
        ],
      };
    });
  }

  async listKeys(userId: string): Promise<{ data: PersonalKey[] }> {
    const rows = await this.store.listPersonalKeys(this.db, userId);
    return {
      data: rows.map((r) => ({
        id: r.id,
        name: r.name,
        role: r.role as PersonalKey["role"],
        projectId: r.project_id,
        environment: r.environment_id,
        userId,
        createdAt: r.created_at,
      })),
    };
  }

  async revokeKey(context: WriteContext, userId: string, keyId: string): Promise<void> {
    await this.work.write(context, GLOBAL_STREAM, async (trx) => {
      const deleted = await this.store.deletePersonalKey(trx, userId, keyId);
      if (!deleted) throw new AppError(404, "key_not_found", `You have no key "${keyId}".`);
      return {
        result: undefined,
        events: [
          keyRevoked(deleted.project_id, {
            id: deleted.id,
            name: deleted.name,
            role: deleted.role as PersonalKey["role"],
            environment: deleted.environment_id,
          }),
        ],
      };
    });
  }
}

const userExists = (email: string) => new AppError(409, "user_exists", `A user with e-mail "${email}" exists already.`);
const cannotChangeSelf = () =>
  new AppError(
    409,
    "cannot_change_self",
    "You cannot disable, demote or delete yourself: another admin (or an admin key) must.",
  );
