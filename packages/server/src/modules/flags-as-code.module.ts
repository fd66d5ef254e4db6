import { ProjectDocuments } from "../features/flags-as-code/project-document.service.js";
import { projectDocumentRoutes } from "../http/routes/project-document.routes.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";

/** Flags as code: a project as one document. */
export function flagsAsCodeModule(deps: FeatureDeps & { postgres: boolean }): FeatureModule<{
  documents: ProjectDocuments;
}> {
  const documents = new ProjectDocuments(deps.db, deps.postgres);
  return { services: { documents }, routes: (app) => projectDocumentRoutes(app, documents) };
}
