import type { PeopleState } from "../access/people-state.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { keyRoutes } from "../http/routes/key.routes.js";
import { KeyService } from "../features/keys/key.service.js";

/** `people` is the snapshot's, read by the key routes; app.ts runs `keys.ensureAdminKey` at start. */
export function keysModule({ db, work, clock }: FeatureDeps, people: PeopleState): FeatureModule<{ keys: KeyService }> {
  const keys = new KeyService(db, work, clock);
  return { services: { keys }, routes: (app) => keyRoutes(app, keys, people) };
}
