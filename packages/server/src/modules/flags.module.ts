import type { CheckRecorder } from "../features/evaluation/check-recorder.js";
import { FlagExplainer } from "../features/evaluation/explain.js";
import { FlagListings } from "../features/evaluation/flag-listing.js";
import type { Snapshot } from "../features/evaluation/snapshot.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { FlagCopier } from "../features/flags/flag-copy.js";
import { flagRoutes } from "../http/routes/flag.routes.js";
import { FlagService } from "../features/flags/flag.service.js";

export interface FlagsModuleDeps extends FeatureDeps {
  readonly recorder: CheckRecorder;
  readonly snapshot: Snapshot;
}

/** The flag writes, and the reads answered from the snapshot (listings, explanations). */
export function flagsModule({ db, work, clock, recorder, snapshot }: FlagsModuleDeps): FeatureModule<{
  flags: FlagService;
}> {
  const flags = new FlagService(db, work, recorder, clock);
  const copier = new FlagCopier(work, recorder, clock);
  const explainer = new FlagExplainer(db, snapshot, clock);
  const listings = new FlagListings(db, snapshot, recorder, clock);
  return { services: { flags }, routes: (app) => flagRoutes(app, { flags, copier, explainer, listings }) };
}
