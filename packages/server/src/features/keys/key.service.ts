import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import type { Database } from "../../db/schema.js";
import { AppError, projectNotFound } from "../../errors.js";
import { hashApiKey, newApiKey, newKeyId } from "../../ids.js";
import { assemblePage, type Page, type PageQuery } from "../../pagination.js";
import type { ChangeFeed } from "../evaluation/change-feed.js";
import { type Change, GLOBAL_STREAM } from "../evaluation/changes.js";
import { findProject } from "../projects/project.repository.js";
import * as repo from "./key.repository.js";
import type { ApiKey, CreatedApiKey, CreateKeyInput } from "./key.schemas.js";

export class KeyService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
  ) {}

  async create(projectId: string, input: CreateKeyInput): Promise<CreatedApiKey> {
    return this.feed.write(projectId, async (trx) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const secret = newApiKey();
      const hash = hashApiKey(secret);
      const now = this.clock.now();
      const key: ApiKey = { id: newKeyId(now), name: input.name, role: input.role, projectId, createdAt: isoTime(now) };
      await repo.insertKey(trx, key, hash);
      return {
        result: { ...key, role: input.role, projectId, key: secret },
        changes: [{ kind: "key.created", id: key.id, hash, role: key.role, projectId }],
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

  /** Revokes a key; every instance stops accepting it as soon as the change reaches it. */
  async revoke(projectId: string, keyId: string): Promise<void> {
    await this.feed.write(projectId, async (trx) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      if (!(await repo.deleteKey(trx, projectId, keyId))) {
        throw new AppError(404, "key_not_found", `Key "${keyId}" does not exist in project "${projectId}".`);
      }
      return { result: undefined, changes: [{ kind: "key.deleted", id: keyId }] };
    });
  }

  /**
   * Makes sure an admin key exists at start. With ADMIN_API_KEY, that exact key is registered (by hash).
   * Without it, and with no admin key stored, a new key is created and returned so it can be shown once.
   */
  async ensureAdminKey(configured: string | undefined): Promise<string | undefined> {
    return this.feed.write(GLOBAL_STREAM, async (trx) => {
      if (configured !== undefined) {
        if (await repo.hasKeyWithHash(trx, hashApiKey(configured))) return { result: undefined, changes: [] };
        const { change } = await this.insertAdminKey(trx, "ADMIN_API_KEY", configured);
        return { result: undefined, changes: [change] };
      }
      if (await repo.hasAdminKey(trx)) return { result: undefined, changes: [] };
      const secret = newApiKey();
      const { change } = await this.insertAdminKey(trx, "generated at first start", secret);
      return { result: secret, changes: [change] };
    });
  }

  /** Creates an admin key (the CLI's recovery path: admin keys cannot be made over the API). */
  async createAdminKey(name: string): Promise<ApiKey & { key: string }> {
    return this.feed.write(GLOBAL_STREAM, async (trx) => {
      const secret = newApiKey();
      const { key, change } = await this.insertAdminKey(trx, name, secret);
      return { result: { ...key, key: secret }, changes: [change] };
    });
  }

  async listAdminKeys(): Promise<ApiKey[]> {
    return repo.listAdminKeys(this.db);
  }

  /** Revokes an admin key; every instance stops accepting it as soon as the change reaches it. */
  async revokeAdminKey(keyId: string): Promise<void> {
    await this.feed.write(GLOBAL_STREAM, async (trx) => {
      if (!(await repo.deleteAdminKey(trx, keyId))) {
        throw new AppError(404, "key_not_found", `No admin key "${keyId}".`);
      }
      return { result: undefined, changes: [{ kind: "key.deleted", id: keyId }] };
    });
  }

  private async insertAdminKey(trx: Transaction<Database>, name: string, secret: string) {
    const hash = hashApiKey(secret);
    const now = this.clock.now();
    const key: ApiKey = { id: newKeyId(now), name, role: "admin", projectId: null, createdAt: isoTime(now) };
    await repo.insertKey(trx, key, hash);
    const change: Change = { kind: "key.created", id: key.id, hash, role: "admin", projectId: null };
    return { key, change };
  }
}
