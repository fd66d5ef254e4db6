import type { FeatureDeps, FeatureModule } from "../feature-module.js";
import { projectRoutes } from "./project.routes.js";
import { ProjectService } from "./project.service.js";

export function projectsModule(
  { db, work, clock }: FeatureDeps,
  environmentsMaxPerProject: number,
): FeatureModule<{ projects: ProjectService }> {
  const projects = new ProjectService(db, work, clock, environmentsMaxPerProject);
  return { services: { projects }, routes: (app) => projectRoutes(app, projects) };
}
