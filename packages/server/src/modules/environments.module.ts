import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { environmentRoutes } from "../http/routes/environment.routes.js";
import { EnvironmentService } from "../features/environments/environment.service.js";

export function environmentsModule(
  { db, work, clock }: FeatureDeps,
  environmentsMaxPerProject: number,
): FeatureModule<{ environments: EnvironmentService }> {
  const environments = new EnvironmentService(db, work, clock, environmentsMaxPerProject);
  return { services: { environments }, routes: (app) => environmentRoutes(app, environments) };
}
