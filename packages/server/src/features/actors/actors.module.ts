import type { FeatureDeps, FeatureModule } from "../feature-module.js";
import { actorRoutes } from "./actor.routes.js";
import { ActorService } from "./actor.service.js";

export function actorsModule({ db, work, clock }: FeatureDeps): FeatureModule<{ actors: ActorService }> {
  const actors = new ActorService(db, work, clock);
  return { services: { actors }, routes: (app) => actorRoutes(app, actors) };
}
