import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { AppError, projectNotFound } from "../../errors.js";
import { assemblePage, type Page, type PageQuery } from "../../pagination.js";
import type { WriteContext } from "../history/domain-events.js";
import type { UnitOfWork } from "../history/unit-of-work.js";
import * as repo from "./project.repository.js";
import type { CreateProjectInput, Project } from "./project.schemas.js";

const projectExists = (id: string) => new AppError(409, "project_exists", `Project "${id}" already exists.`);

export class ProjectService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async create(context: WriteContext, input: CreateProjectInput): Promise<Project> {
    try {
      return await this.work.write(context, input.id, async (trx) => {
        if (await repo.findProject(trx, input.id)) throw projectExists(input.id);
        const project: Project = { id: input.id, name: input.name, createdAt: isoTime(this.clock.now()) };
        await repo.insertProject(trx, project);
        return {
          result: project,
          events: [
            {
              type: "project.created",
              projectId: project.id,
              target: { kind: "project", id: project.id, name: project.name },
              before: null,
              after: { id: project.id, name: project.name },
            },
          ],
          changes: [{ kind: "project.created", projectId: project.id }],
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

  async list(page: PageQuery): Promise<Page<Project>> {
    const rows = await repo.listProjects(this.db, page);
    return assemblePage(
      page,
      rows,
      (p) => [p.id],
      (side, key) => repo.projectsBeyond(this.db, side, key),
    );
  }

  /** Deletes a project and everything in it: flags, segments, actors, keys. */
  async delete(context: WriteContext, id: string): Promise<void> {
    await this.work.write(context, id, async (trx) => {
      const project = await repo.findProject(trx, id);
      if (!project || !(await repo.deleteProject(trx, id))) throw projectNotFound(id);
      return {
        result: undefined,
        events: [
          {
            type: "project.deleted",
            projectId: id,
            target: { kind: "project", id, name: project.name },
            before: { id, name: project.name },
            after: null,
          },
        ],
        changes: [{ kind: "project.deleted", projectId: id }],
      };
    });
  }
}
