import { compareText } from "@flagstaff/core";
import {
  type DocumentConfiguration,
  type DocumentFlag,
  PROJECT_DOCUMENT_VERSION,
  type ProjectDocument,
} from "@flagstaff/core/schemas";
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import { AppError, projectNotFound } from "../../kernel/errors.js";
import type { Flag } from "../flags/flag.schemas.js";
import {
  readEnvironments,
  readFlagsIn,
  readLinks,
  readProject,
  readRevision,
  readSegmentMembers,
  readSegments,
} from "./project-document.repository.js";

/** A project's document with the revision it is of (its ETag); no document when it is still `unchangedSince`'s. */
export interface RevisedDocument {
  readonly document: ProjectDocument | undefined;
  readonly revision: number;
}

const sorted = (values: readonly string[] | undefined) => [...(values ?? [])].sort(compareText);

/** A flag's configuration in one environment as the document holds it. */
function configurationOf(flag: Flag, actors: string[] | undefined, segments: string[] | undefined) {
  const configuration: DocumentConfiguration = {
    status: flag.status,
    percentageActors: flag.percentageActors,
    percentageCalls: flag.percentageCalls,
    onVariant: flag.onVariant,
    offVariant: flag.offVariant,
    rules: flag.rules as DocumentConfiguration["rules"],
    prerequisites: flag.prerequisites as DocumentConfiguration["prerequisites"],
    ...(flag.plan === null
      ? {}
      : {
          rolloutPlan: {
            steps: flag.plan.steps as NonNullable<DocumentConfiguration["rolloutPlan"]>["steps"],
            ...(flag.plan.pausedAt ? { pausedAt: flag.plan.pausedAt } : {}),
          },
        }),
    actors: sorted(actors),
    segments: sorted(segments),
  };
  return configuration;
}

/** The project's document, read in the caller's transaction (export's, or apply's to plan from). */
export async function documentIn(
  trx: Transaction<Database>,
  projectId: string,
  project: { id: string; name: string },
  environments: Awaited<ReturnType<typeof readEnvironments>>,
  options: { members: boolean; schemaUrl?: string },
): Promise<ProjectDocument> {
  const segments = await readSegments(trx, projectId);
  const members = options.members ? await readSegmentMembers(trx, projectId) : undefined;
  const links = await readLinks(trx, projectId);
  const flags = new Map<string, DocumentFlag>();
  for (const environment of environments) {
    for (const flag of await readFlagsIn(trx, projectId, environment.id)) {
      let entry = flags.get(flag.name);
      if (entry === undefined) {
        entry = {
          name: flag.name,
          description: flag.description,
          type: flag.type,
          variants: flag.variants as DocumentFlag["variants"],
          kind: flag.kind,
          permanent: flag.permanent,
          environments: {},
        };
        flags.set(flag.name, entry);
      }
      entry.environments[environment.id] = configurationOf(
        flag,
        links.actors.get(flag.configId),
        links.segments.get(flag.configId),
      );
    }
  }
  const document: ProjectDocument = {
    ...(options.schemaUrl === undefined ? {} : { $schema: options.schemaUrl }),
    version: PROJECT_DOCUMENT_VERSION,
    project: { id: project.id, name: project.name },
    environments: environments.map((e) => ({
      id: e.id,
      name: e.name,
      description: e.description,
      default: Number(e.is_default) === 1,
      protected: Number(e.protected) === 1,
      requiredApprovals: Number(e.required_approvals),
      allowSelfApproval: Number(e.allow_self_approval) === 1,
    })),
    segments: [...segments]
      .sort((a, b) => compareText(a.id, b.id))
      .map((s) => ({
        id: s.id,
        name: s.name,
        description: s.description,
        conditions: s.conditions as ProjectDocument["segments"][number]["conditions"],
        ...(members === undefined ? {} : { members: sorted(members.get(s.id)) }),
      })),
    flags: [...flags.values()].sort((a, b) => compareText(a.name, b.name)),
  };
  return document;
}

/**
 * A project as one document (docs/flags-as-code.md): its environments in their order, its segments by id
 * (with their listed members when asked), its flags not archived by name, each with its configuration in
 * every environment; every list in a fixed order, so that the same state exports the same bytes. Read in
 * one transaction (repeatable read on PostgreSQL): one revision's state, and that revision.
 */
export class ProjectDocuments {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly postgres: boolean,
  ) {}

  async export(
    projectId: string,
    options: { members: boolean; schemaUrl?: string; boundTo: string | null; unchangedSince?: number },
  ): Promise<RevisedDocument> {
    const read = this.postgres ? this.db.transaction().setIsolationLevel("repeatable read") : this.db.transaction();
    return read.execute(async (trx) => {
      const project = await readProject(trx, projectId);
      if (!project) throw projectNotFound(projectId);
      const revision = await readRevision(trx, projectId);
      const environments = await readEnvironments(trx, projectId);
      // The document holds every environment's configurations: a key bound to one may not read the others.
      if (options.boundTo !== null && environments.length > 1) {
        throw new AppError(
          403,
          "forbidden",
          `Exporting project "${projectId}" reaches every environment, and this key is bound to environment "${options.boundTo}": use a key bound to no environment.`,
        );
      }
      // Asked with the revision it has: nothing more to read (a poller's If-None-Match).
      if (options.unchangedSince === revision) return { document: undefined, revision };
      const document = await documentIn(trx, projectId, project, environments, options);
      return { document, revision };
    });
  }
}
