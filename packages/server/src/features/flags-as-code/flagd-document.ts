import { type FlagdDocument, toFlagd } from "@flagstaff/core/flagd";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import { environmentNotFound, projectNotFound } from "../../kernel/errors.js";
import { documentIn } from "./project-document.service.js";
import { readEnvironments, readProject, readRevision } from "./project-document.repository.js";

// One environment of a project as flagd flag definitions (docs/flagd.md): the project's document for that
// environment, with its segments' members, written by core's `toFlagd`. Its ETag is the project's
// revision (with the environment), so that flagd's HTTP sync polls it for a 304.

/** A flagd file with the revision and environment it is of; no file when it is still `unchangedSince`'s. */
export interface RevisedFlagd {
  readonly document: FlagdDocument | undefined;
  readonly revision: number;
  readonly environment: string;
}

/** The ETag of an environment's flagd file at a revision. */
export const flagdTag = (revision: number, environment: string) => `"flagd-r${revision}-${environment}"`;

export class FlagdDocuments {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly postgres: boolean,
  ) {}

  /**
   * The environment's flags (not archived) as flagd definitions; `environment` null: the project's default.
   * A key bound to another environment has been refused before (the request's environment scope).
   */
  async export(
    projectId: string,
    options: { environment: string | null; unchangedSince?: string },
  ): Promise<RevisedFlagd> {
    const read = this.postgres ? this.db.transaction().setIsolationLevel("repeatable read") : this.db.transaction();
    return read.execute(async (trx) => {
      const project = await readProject(trx, projectId);
      if (!project) throw projectNotFound(projectId);
      const environments = await readEnvironments(trx, projectId);
      const environment =
        options.environment === null
          ? environments.find((e) => Number(e.is_default) === 1)
          : environments.find((e) => e.id === options.environment);
      if (environment === undefined) throw environmentNotFound(options.environment ?? "(default)");
      const revision = await readRevision(trx, projectId);
      // Asked with the tag it has: nothing more to read (flagd's HTTP sync polling).
      if (options.unchangedSince === flagdTag(revision, environment.id)) {
        return { document: undefined, revision, environment: environment.id };
      }
      const document = await documentIn(trx, projectId, project, [environment], { members: true });
      return { document: toFlagd(document, environment.id), revision, environment: environment.id };
    });
  }
}
