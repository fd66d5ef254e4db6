import { environmentRepository } from "../features/environments/environment.repository.js";
import { type ApplyWrites, ProjectApply } from "../features/flags-as-code/project-apply.service.js";
import { FlagdDocuments } from "../features/flags-as-code/flagd-document.js";
import { ProjectDocuments } from "../features/flags-as-code/project-document.service.js";
import { flagdRoutes } from "../http/routes/flagd.routes.js";
import { projectDocumentRoutes } from "../http/routes/project-document.routes.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";

/** Flags as code: a project as one document, exported and applied (apply writes through each feature's own writes). */
export function flagsAsCodeModule(
  deps: FeatureDeps & { postgres: boolean; writes: Omit<ApplyWrites, "environmentStore"> },
): FeatureModule<{ documents: ProjectDocuments; apply: ProjectApply }> {
  const documents = new ProjectDocuments(deps.db, deps.postgres);
  const apply = new ProjectApply(deps.db, deps.work, { ...deps.writes, environmentStore: environmentRepository });
  const flagd = new FlagdDocuments(deps.db, deps.postgres);
  return {
    services: { documents, apply },
    routes: (app) => {
      projectDocumentRoutes(app, documents, apply);
      flagdRoutes(app, flagd);
    },
  };
}
