import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { DEFAULT_ENVIRONMENT_ID, DEFAULT_ENVIRONMENT_NAME, DEFAULT_MAX_ENVIRONMENTS } from "@flagstaff/core";
import { AppError, invalid, projectNotFound } from "../../kernel/errors.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import { deleteChangeLog } from "../../write-path/change-log.js";
import type { WriteContext } from "../../write-path/domain-events.js";
import { deleteProjectEvents } from "../../write-path/event-log.js";
import type { UnitOfWork } from "../../write-path/unit-of-work.js";
import * as repo from "./project.repository.js";
import type { CreateProjectInput, Project } from "./project.schemas.js";
import type { Environment } from "@flagstaff/core/schemas";

const projectExists = (id: string) => new AppError(409, "project_exists", `Project "${id}" already exists.`);

/**
 * Stores one of a new project's environments, in the project's transaction: the environments feature's
 * insert, which the projects module hands in. Projects sit below environments (which look their project
 * up), so this is the one thing of environments a project's creation needs, named here.
 */
export type InsertEnvironment = (trx: Transaction<Database>, environment: Environment) => Promise<void>;

export class ProjectService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly clock: Clock,
    private readonly insertEnvironment: InsertEnvironment,
    private readonly maxEnvironments: number = DEFAULT_MAX_ENVIRONMENTS,
  ) {}

  /**
   * Creates a project with its environments: those the input names (the first the default), or one,
   * production. Its environments are created with it, recorded with it (no environment events of their own).
   */
  async create(context: WriteContext, input: CreateProjectInput): Promise<Project> {
    const named = input.environments ?? [{ id: DEFAULT_ENVIRONMENT_ID, name: DEFAULT_ENVIRONMENT_NAME }];
    if (named.length > this.maxEnvironments) {
      throw new AppError(
        400,
        "invalid_request",
        `A project may have at most ${this.maxEnvironments} environments (ENVIRONMENTS_MAX_PER_PROJECT).`,
        [{ path: "/environments", message: `must have at most ${this.maxEnvironments} items` }],
      );
    }
    const seen = new Set<string>();
    const twice = named.findIndex((e) => seen.size === seen.add(e.id).size);
    if (twice >= 0) {
      throw invalid("Each environment of a project needs its own id.", [
        { path: `/environments/${twice}/id`, message: `"${named[twice]?.id}" is named twice` },
      ]);
    }
    try {
      return await this.work.write(context, input.id, async (trx) => {
        if (await repo.findProject(trx, input.id)) throw projectExists(input.id);
        const now = isoTime(this.clock.now());
        const project: Project = { id: input.id, name: input.name, createdAt: now };
        await repo.insertProject(trx, project);
        for (const [index, environment] of named.entries()) {
          await this.insertEnvironment(trx, {
            id: environment.id,
            projectId: project.id,
            name: environment.name,
            description: environment.description ?? "",
            default: index === 0,
            protected: environment.protected ?? false,
            requiredApprovals: 0,
            allowSelfApproval: false,
            createdAt: now,
            updatedAt: now,
          });
        }
        return {
          result: project,
          events: [
            {
              type: "project.created",
              projectId: project.id,
              target: { kind: "project", id: project.id, name: project.name },
              before: null,
              after: { id: project.id, name: project.name },
              unpublished: { environments: named.map((e) => e.id) },
            },
          ],
        };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw projectExists(input.id);
      throw error;
    }
  }

  async get(id: string): Promise<Project> {
    const project = await repo.findProject(this.db, id);
    if (!project) throw projectNotFound(id);
    return project;
  }

  /** Every project; with `grantedTo` (a member), only the projects granted to that person. */
  async list(page: PageQuery, grantedTo?: string): Promise<Page<Project>> {
    const rows = await repo.listProjects(this.db, page, grantedTo);
    return assemblePage(
      page,
      rows,
      (p) => [p.id],
      (side, key) => repo.projectsBeyond(this.db, side, key, grantedTo),
    );
  }

  /**
   * Deletes a project and everything in it: flags, segments, actors, keys, webhooks and their deliveries
   * (by the foreign keys' cascades), and, in the same transaction, its history and its change log. A
   * project created again under this id starts with nothing of the old one: its keys read no old event,
   * and a stream resumed across the delete gets a fresh snapshot (see ProjectStreams.open). The stream's
   * version is kept, so its ids go on growing. The `project.deleted` event itself is kept apart from any
   * project's history, with the admin keys' events (no project): it names the project's id and name only.
   */
  async delete(context: WriteContext, id: string): Promise<void> {
    await this.work.write(context, id, async (trx) => {
      const project = await repo.findProject(trx, id);
      if (!project || !(await repo.deleteProject(trx, id))) throw projectNotFound(id);
      await deleteProjectEvents(trx, id);
      await deleteChangeLog(trx, id);
      return {
        result: undefined,
        events: [
          {
            type: "project.deleted",
            projectId: null,
            target: { kind: "project", id, name: project.name },
            before: { id, name: project.name },
            after: null,
          },
        ],
      };
    });
  }
}
