import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { actorRoutes } from "../http/routes/actor.routes.js";
import { ActorService } from "../features/actors/actor.service.js";

export function actorsModule({ db, work, clock }: FeatureDeps): FeatureModule<{ actors: ActorService }> {
  const actors = new ActorService(db, work, clock);
  return { services: { actors }, routes: (app) => actorRoutes(app, actors) };
}
