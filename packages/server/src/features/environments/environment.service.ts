import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { AppError, environmentNotFound, invalid, projectNotFound } from "../../kernel/errors.js";
import { refuseBeyond } from "../../access/environment-scope.js";
import { encodeCursor, type Page, type PageQuery } from "../../kernel/pagination.js";
import type { WorkOutcome, Writes } from "../../write-path/unit-of-work.js";
import type { DomainEvent, EnvironmentRecord, WriteContext } from "../../write-path/domain-events.js";
import { keyRevoked } from "../../write-path/domain-events.js";
import { environmentRepository } from "./environment.repository.js";
import type { EnvironmentStore, PlacedEnvironment } from "./environment.store.js";
import type { CreateEnvironmentInput, Environment, UpdateEnvironmentInput } from "./environment.schemas.js";

const environmentExists = (id: string) =>
  new AppError(409, "environment_exists", `Environment "${id}" already exists in this project.`);

const record = (environment: Environment): EnvironmentRecord => ({
  id: environment.id,
  name: environment.name,
  description: environment.description,
  default: environment.default,
  protected: environment.protected,
  requiredApprovals: environment.requiredApprovals,
  allowSelfApproval: environment.allowSelfApproval,
});

const target = (environment: Environment) =>
  ({ kind: "environment", id: environment.id, name: environment.name }) as const;

/**
 * A project's environments: each holds its own configuration of every flag. A project always has one
 * default environment, which cannot be deleted; deleting another deletes its configurations and revokes
 * the keys bound to it, in one write.
 */
export class EnvironmentService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: Writes,
    private readonly clock: Clock,
    private readonly maxPerProject: number,
    private readonly store: EnvironmentStore = environmentRepository,
  ) {}

  /** A page of the project's environments in their order (see pageOf). */
  async list(projectId: string, page: PageQuery): Promise<Page<Environment>> {
    if (!(await this.store.findProject(this.db, projectId))) throw projectNotFound(projectId);
    return pageOf(await this.store.listPlacedEnvironments(this.db, projectId), page);
  }

  async get(projectId: string, id: string): Promise<Environment> {
    const environment = await this.store.findEnvironment(this.db, projectId, id);
    if (environment) return environment;
    if (!(await this.store.findProject(this.db, projectId))) throw projectNotFound(projectId);
    throw environmentNotFound(id);
  }

  async create(context: WriteContext, projectId: string, input: CreateEnvironmentInput): Promise<Environment> {
    try {
      return await this.work.write(context, projectId, async (trx) => {
        if (!(await this.store.findProject(trx, projectId))) throw projectNotFound(projectId);
        if (await this.store.findEnvironment(trx, projectId, input.id)) throw environmentExists(input.id);
        if (input.copyFrom !== undefined && !(await this.store.findEnvironment(trx, projectId, input.copyFrom)))
          throw environmentNotFound(input.copyFrom);
        if ((await this.store.countEnvironments(trx, projectId)) >= this.maxPerProject) {
          throw new AppError(
            409,
            "environment_limit",
            `Project "${projectId}" has ${this.maxPerProject} environments, the most it may have (ENVIRONMENTS_MAX_PER_PROJECT).`,
          );
        }
        const now = isoTime(this.clock.now());
        const environment: Environment = {
          id: input.id,
          projectId,
          name: input.name,
          description: input.description ?? "",
          default: false,
          protected: input.protected ?? false,
          requiredApprovals: input.requiredApprovals ?? 0,
          allowSelfApproval: input.allowSelfApproval ?? false,
          createdAt: now,
          updatedAt: now,
        };
        await this.store.insertEnvironment(trx, environment);
        await this.store.insertEnvironmentConfigurations(trx, projectId, environment.id, input.copyFrom, now);
        return {
          result: environment,
          events: [
            {
              type: "environment.created",
              projectId,
              environment: environment.id,
              target: target(environment),
              before: null,
              after: { ...record(environment), copyFrom: input.copyFrom ?? null },
            },
          ],
        };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw environmentExists(input.id);
      throw error;
    }
  }

  /**
   * Renames or describes an environment, protects it, moves it in the project's order (`position`), or
   * makes it the default (the previous default stops being it). A caller bound to an environment changes
   * its own only, and never moves the default nor reorders (mayReach).
   */
  async update(
    context: WriteContext,
    projectId: string,
    id: string,
    input: UpdateEnvironmentInput,
  ): Promise<Environment> {
    return this.work.write(context, projectId, (trx) => this.updateIn(trx, context, projectId, id, input));
  }

  /** An environment's change inside a write's transaction (its own route, or an applied project document). */
  async updateIn(
    trx: Transaction<Database>,
    context: WriteContext,
    projectId: string,
    id: string,
    input: UpdateEnvironmentInput,
  ): Promise<WorkOutcome<Environment>> {
    refuseBeyond(context.boundTo, id);
    const current = await this.store.findEnvironment(trx, projectId, id);
    if (!current) {
      if (!(await this.store.findProject(trx, projectId))) throw projectNotFound(projectId);
      throw environmentNotFound(id);
    }
    const next: Environment = {
      ...current,
      name: input.name ?? current.name,
      description: input.description ?? current.description,
      default: current.default || input.default === true,
      protected: input.protected ?? current.protected,
      requiredApprovals: input.requiredApprovals ?? current.requiredApprovals,
      allowSelfApproval: input.allowSelfApproval ?? current.allowSelfApproval,
    };
    // A move: its place in the project's order, from 1, before and after.
    let moved: { from: number; to: number; order: string[] } | undefined;
    if (input.position !== undefined) {
      const order = (await this.store.listEnvironments(trx, projectId)).map((e) => e.id);
      if (input.position > order.length) {
        throw invalid(
          `Project "${projectId}" has ${order.length} environments: position must be 1 to ${order.length}.`,
          [{ path: "/position", message: `must be at most ${order.length}, the number of environments` }],
        );
      }
      const from = order.indexOf(id) + 1;
      if (from !== input.position) {
        // Its place and every other's change: what a key bound to one environment may not do.
        refuseBeyond(context.boundTo, null, "reorder the project's environments");
        order.splice(from - 1, 1);
        order.splice(input.position - 1, 0, id);
        moved = { from, to: input.position, order };
      }
    }
    const changed =
      next.name !== current.name ||
      next.description !== current.description ||
      next.default !== current.default ||
      next.protected !== current.protected ||
      next.requiredApprovals !== current.requiredApprovals ||
      next.allowSelfApproval !== current.allowSelfApproval ||
      moved !== undefined;
    if (!changed) return { result: current, events: [] };
    const now = isoTime(this.clock.now());
    next.updatedAt = now;
    const events: DomainEvent[] = [];
    if (moved) await this.store.reorderEnvironments(trx, projectId, moved.order);
    if (next.default && !current.default) {
      // The previous default changes too, and every key bound to none follows the new one.
      refuseBeyond(context.boundTo, null, "make an environment the default");
      const previous = (await this.store.listEnvironments(trx, projectId)).find((e) => e.default);
      await this.store.clearDefault(trx, projectId, now);
      if (previous) {
        const after = { ...previous, default: false, updatedAt: now };
        events.push({
          type: "environment.updated",
          projectId,
          environment: previous.id,
          target: target(previous),
          before: record(previous),
          after: record(after),
        });
      }
    }
    await this.store.saveEnvironment(trx, next);
    events.push({
      type: "environment.updated",
      projectId,
      environment: next.id,
      target: target(next),
      before: moved ? { ...record(current), position: moved.from } : record(current),
      after: moved ? { ...record(next), position: moved.to } : record(next),
    });
    return { result: next, events };
  }

  /**
   * Deletes an environment: its configurations of every flag, and the keys bound to it (each revoked, as
   * its own event). The default environment cannot be deleted: make another the default first. A caller
   * bound to an environment deletes its own only (mayReach).
   */
  async delete(context: WriteContext, projectId: string, id: string): Promise<void> {
    refuseBeyond(context.boundTo, id);
    await this.work.write(context, projectId, async (trx) => {
      const environment = await this.store.findEnvironment(trx, projectId, id);
      if (!environment) {
        if (!(await this.store.findProject(trx, projectId))) throw projectNotFound(projectId);
        throw environmentNotFound(id);
      }
      if (environment.default) {
        throw new AppError(
          409,
          "environment_is_default",
          `Environment "${id}" is the project's default: make another environment the default (PATCH it with {"default": true}), then delete this one.`,
        );
      }
      const keys = await this.store.keysOf(trx, projectId, id);
      await this.store.deleteKeysOf(trx, projectId, id);
      await this.store.deleteEnvironment(trx, projectId, id);
      const events: DomainEvent[] = keys.map((key) =>
        keyRevoked(projectId, { id: key.id, name: key.name, role: key.role as "write", environment: id }),
      );
      events.push({
        type: "environment.deleted",
        projectId,
        environment: id,
        target: target(environment),
        before: record(environment),
        after: null,
      });
      return { result: undefined, events };
    });
  }
}

/**
 * A page of a project's environments, held whole (there are few), in their order. A cursor is the
 * position of the environment it names, not its id: a walk then goes on from the right place even when
 * that environment is deleted meanwhile, and so sees every environment that exists throughout it once.
 */
function pageOf(all: readonly PlacedEnvironment[], page: PageQuery): Page<Environment> {
  let from = 0;
  let to = Math.min(all.length, page.limit);
  if (page.direction !== "first") {
    const at = cursorPosition(page.key[0], page.direction);
    // The first environment past the cursor's position (all.length when none is).
    const past = all.findIndex((e) => e.position > at);
    const start = past === -1 ? all.length : past;
    if (page.direction === "after") {
      from = start;
      to = Math.min(all.length, start + page.limit);
    } else {
      // Before: strictly before the position (the environment there, if it still exists, is left out).
      const end = all.findIndex((e) => e.position >= at);
      to = end === -1 ? all.length : end;
      from = Math.max(0, to - page.limit);
    }
  }
  const data = all.slice(from, to);
  const first = data[0];
  const last = data[data.length - 1];
  return {
    data: data.map((e) => e.environment),
    pagination: {
      before: first && from > 0 ? encodeCursor([String(first.position)]) : null,
      after: last && to < all.length ? encodeCursor([String(last.position)]) : null,
    },
  };
}

/** A cursor's position; a cursor that holds none was not issued by this list (400). */
function cursorPosition(key: string | undefined, parameter: "after" | "before"): number {
  if (key === undefined || !/^[0-9]{1,15}$/.test(key)) {
    throw invalid(`The ${parameter} cursor is not one this service issued.`, [
      { path: `/query/${parameter}`, message: "must be a cursor from a previous page's pagination" },
    ]);
  }
  return Number(key);
}
