import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { projectRoutes } from "../http/routes/project.routes.js";
import { ProjectService } from "../features/projects/project.service.js";
import { insertEnvironment } from "../features/environments/environment.repository.js";

export function projectsModule(
  { db, work, clock }: FeatureDeps,
  environmentsMaxPerProject: number,
): FeatureModule<{ projects: ProjectService }> {
  const projects = new ProjectService(db, work, clock, insertEnvironment, environmentsMaxPerProject);
  return { services: { projects }, routes: (app) => projectRoutes(app, projects) };
}
