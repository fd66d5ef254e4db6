import type { CheckRecorder } from "../evaluation/check-recorder.js";
import { FlagExplainer } from "../evaluation/explain.js";
import { FlagListings } from "../evaluation/flag-listing.js";
import type { Snapshot } from "../evaluation/snapshot.js";
import type { FeatureDeps, FeatureModule } from "../feature-module.js";
import { FlagCopier } from "./flag-copy.js";
import { flagRoutes } from "./flag.routes.js";
import { FlagService } from "./flag.service.js";

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
