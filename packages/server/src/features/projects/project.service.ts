import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { AppError, projectNotFound } from "../../errors.js";
import { assemblePage, type Page, type PageQuery } from "../../pagination.js";
import { deleteChangeLog } from "../evaluation/feed.repository.js";
import type { WriteContext } from "../history/domain-events.js";
import { deleteProjectEvents } from "../history/event.repository.js";
import type { UnitOfWork } from "../../write-path/unit-of-work.js";
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
