import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { AppError, invalid, projectNotFound } from "../../kernel/errors.js";
import { refuseBeyond } from "../../access/environment-scope.js";
import { resolveEnvironment } from "../environments/environment.repository.js";
import { hashApiKey, newApiKey, newKeyId } from "../../kernel/ids.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import { GLOBAL_STREAM } from "../../write-path/changes.js";
import { type DomainEvent, keyRevoked, keyState, STARTUP, type WriteContext } from "../../write-path/domain-events.js";
import type { UnitOfWork } from "../../write-path/unit-of-work.js";
import { findProject } from "../projects/project.repository.js";
import * as repo from "./key.repository.js";
import type { ApiKey, CreatedApiKey, CreateKeyInput, UpdateKeyInput } from "./key.schemas.js";

/** A key's creation; its hash goes along unpublished, for the snapshot that authenticates with it. */
const keyCreated = (projectId: string | null, key: ApiKey, keyHash: string): DomainEvent => ({
  type: "key.created",
  projectId,
  target: { kind: "key", id: key.id, name: key.name },
  before: null,
  after: keyState(key),
  unpublished: { keyHash },
});

export class KeyService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a project key bound to `input.environment`, or to the project's default environment when it
   * names none. Only a write key may be bound to no environment (`environment: null`). A caller bound to
   * an environment makes keys of its own environment only (mayReach).
   */
  async create(context: WriteContext, projectId: string, input: CreateKeyInput): Promise<CreatedApiKey> {
    if (input.environment === null && input.role !== "write") {
      throw invalid(`A ${input.role} key is bound to one environment: it cannot have environment null.`, [
        { path: "/environment", message: "must name an environment for check and read keys" },
      ]);
    }
    // Before the environment is looked up: a bound caller learns nothing of the others.
    if (input.environment !== undefined) refuseBeyond(context.boundTo, input.environment, "make a key bound to none");
    return this.work.write(context, projectId, async (trx) => {
      // Before anything else: a key bound to no environment would otherwise meet the missing project only
      // at the foreign key.
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const environment =
        input.environment === null ? null : await resolveEnvironment(trx, projectId, input.environment ?? null);
      refuseBeyond(context.boundTo, environment, "make a key bound to none");
      const secret = newApiKey();
      const hash = hashApiKey(secret);
      const now = this.clock.now();
      const key: ApiKey = {
        id: newKeyId(now),
        name: input.name,
        role: input.role,
        projectId,
        environment,
        createdAt: isoTime(now),
      };
      await repo.insertKey(trx, key, hash);
      return {
        result: { ...key, role: input.role, projectId, key: secret },
        events: [keyCreated(projectId, key, hash)],
      };
    });
  }

  async list(projectId: string, page: PageQuery): Promise<Page<ApiKey>> {
    if (!(await findProject(this.db, projectId))) throw projectNotFound(projectId);
    const rows = await repo.listKeys(this.db, projectId, page);
    return assemblePage(
      page,
      rows,
      (k) => [k.createdAt, k.id],
      (side, key) => repo.keysBeyond(this.db, projectId, side, key),
    );
  }

  /**
   * Renames a key of the project (`projectId`), or an admin key (`projectId` null: the recovery command's
   * path). The history records it; every instance names the key's later changes so. The same name
   * changes nothing.
   */
  async rename(context: WriteContext, projectId: string | null, keyId: string, input: UpdateKeyInput): Promise<ApiKey> {
    return this.work.write(context, projectId ?? GLOBAL_STREAM, async (trx) => {
      if (projectId !== null && !(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const key = await repo.findServiceKey(trx, projectId, keyId);
      if (!key) {
        throw new AppError(
          404,
          "key_not_found",
          projectId === null ? `No admin key "${keyId}".` : `Key "${keyId}" does not exist in project "${projectId}".`,
        );
      }
      // A caller bound to an environment renames keys of its own environment only (mayReach).
      refuseBeyond(context.boundTo, key.environment, "rename a key bound to none");
      const { hash, ...before } = key;
      const name = input.name ?? before.name;
      const after = { ...before, name };
      if (name === before.name) return { result: before, events: [] };
      await repo.setKeyName(trx, keyId, name);
      return {
        result: after,
        events: [
          {
            type: "key.updated",
            projectId,
            target: { kind: "key", id: keyId, name },
            before: keyState(before),
            after: keyState(after),
            unpublished: { keyHash: hash },
          },
        ],
      };
    });
  }

  /**
   * Revokes a key; every instance stops accepting it as soon as the change reaches it. A caller bound to an
   * environment revokes keys of its own environment only (mayReach): refused, the delete rolls back.
   */
  async revoke(context: WriteContext, projectId: string, keyId: string): Promise<void> {
    await this.work.write(context, projectId, async (trx) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const deleted = await repo.deleteKey(trx, projectId, keyId);
      if (!deleted) {
        throw new AppError(404, "key_not_found", `Key "${keyId}" does not exist in project "${projectId}".`);
      }
      refuseBeyond(context.boundTo, deleted.environment, "revoke a key bound to none");
      return {
        result: undefined,
        events: [keyRevoked(projectId, { id: keyId, ...deleted })],
      };
    });
  }

  /**
   * Makes sure an admin key exists at start. With ADMIN_API_KEY, that exact key is registered (by hash).
   * Without it, and with no admin key stored, a new key is created and returned so it can be shown once.
   */
  async ensureAdminKey(configured: string | undefined): Promise<string | undefined> {
    return this.work.write(STARTUP, GLOBAL_STREAM, async (trx) => {
      if (configured !== undefined) {
        if (await repo.hasKeyWithHash(trx, hashApiKey(configured))) return { result: undefined, events: [] };
        const { event } = await this.insertAdminKey(trx, "ADMIN_API_KEY", configured);
        return { result: undefined, events: [event] };
      }
      if (await repo.hasAdminKey(trx)) return { result: undefined, events: [] };
      const secret = newApiKey();
      const { event } = await this.insertAdminKey(trx, "generated at first start", secret);
      return { result: secret, events: [event] };
    });
  }

  /** Creates an admin key (the recovery command's path: admin keys cannot be made over the API). */
  async createAdminKey(context: WriteContext, name: string): Promise<ApiKey & { key: string }> {
    return this.work.write(context, GLOBAL_STREAM, async (trx) => {
      const secret = newApiKey();
      const { key, event } = await this.insertAdminKey(trx, name, secret);
      return { result: { ...key, key: secret }, events: [event] };
    });
  }

  async listAdminKeys(): Promise<ApiKey[]> {
    return repo.listAdminKeys(this.db);
  }

  /** Revokes an admin key; every instance stops accepting it as soon as the change reaches it. */
  async revokeAdminKey(context: WriteContext, keyId: string): Promise<void> {
    await this.work.write(context, GLOBAL_STREAM, async (trx) => {
      const deleted = await repo.deleteAdminKey(trx, keyId);
      if (!deleted) throw new AppError(404, "key_not_found", `No admin key "${keyId}".`);
      return {
        result: undefined,
        events: [keyRevoked(null, { id: keyId, ...deleted })],
      };
    });
  }

  private async insertAdminKey(trx: Transaction<Database>, name: string, secret: string) {
    const hash = hashApiKey(secret);
    const now = this.clock.now();
    const key: ApiKey = {
      id: newKeyId(now),
      name,
      role: "admin",
      projectId: null,
      environment: null,
      createdAt: isoTime(now),
    };
    await repo.insertKey(trx, key, hash);
    return { key, event: keyCreated(null, key, hash) };
  }
}
